//! iolens: a storage I/O benchmark that watches the system while it runs.
//! See docs/ARCHITECTURE.md for how the pieces fit.
#![forbid(unsafe_code)]

// First: its printing macros replace std's in every module below.
#[macro_use]
mod console;

mod cli;
mod cluster;
mod cmd;
mod debug;
mod diagnose;
mod engine;
mod errno;
mod fileset;
mod io_unit;
mod iolog;
mod job;
mod model;
mod observe;
mod report;
mod runner;
mod series;
mod stats;
mod store;
mod units;
mod workload;

#[cfg(test)]
mod layering;
#[cfg(test)]
mod testutil;

// The facade: all that the binary, the integration tests and the fuzz targets use;
// everything else is private to the crate, so the dead-code lint sees all of it.
pub mod fuzzing;
pub use cmd::{command_line_words, dispatch, invoked_as_fio, parse_command_line, run_as_fio};
pub use units::format_value;

/// The names of the engines that move data (every row of the engine table but
/// the file and directory operations), for the tests that try each one.
pub fn data_engines() -> impl Iterator<Item = &'static str> {
    job::spec::EngineKind::ALL
        .iter()
        .filter(|row| row.file_op.is_none())
        .map(|row| row.name)
}
