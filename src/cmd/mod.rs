//! Subcommands: the only place that prints results and maps errors to exit codes.

mod output;
pub mod run;
pub mod shim;
pub mod show_jobs;

use crate::cli::{Cli, Command};

/// Exit codes: 0 ok, 1 the run failed (I/O error), 2 usage or configuration error.
pub const EXIT_OK: i32 = 0;
pub const EXIT_RUN_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

pub fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Some(Command::Run { args }) => run::run_command(&args),
        Some(Command::Worker) => worker_process(),
        Some(Command::ShowJobs { args }) => show_jobs::show_jobs_command(&args),
        Some(Command::InstallFioShim { dir, force }) => shim::install(&dir, force),
        None => run::run_default(),
    }
}

/// A worker process: its I/O errors travel inside its result (exit 0);
/// it fails only when it cannot run its task at all.
fn worker_process() -> i32 {
    match crate::runner::process::serve_worker() {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("iolens worker process: {e}");
            EXIT_RUN_FAILED
        }
    }
}
