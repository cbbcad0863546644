//! iolens: a storage I/O benchmark that watches the system while it runs.
//! See docs/ARCHITECTURE.md for how the pieces fit.
#![forbid(unsafe_code)]

// First: its printing macros replace std's in every module below.
#[macro_use]
mod console;

pub mod cli;
pub mod cluster;
pub mod cmd;
pub mod debug;
pub mod diagnose;
pub mod engine;
pub mod errno;
pub mod fileset;
pub mod iolog;
pub mod job;
pub mod model;
pub mod observe;
pub mod report;
pub mod runner;
pub mod series;
pub mod stats;
pub mod store;
pub mod units;
pub mod workload;

#[cfg(test)]
mod layering;
#[cfg(test)]
mod testutil;
