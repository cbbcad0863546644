//! Subcommands: the only place that prints results and maps errors to exit codes.

mod ab;
mod compare;
mod doctor;
mod history;
mod output;
mod progress;
pub mod quick;
mod repeat;
pub mod run;
pub mod shim;
pub mod show_jobs;

use crate::cli::{Cli, Command, DbArgs, QuickArgs};
use crate::store::Filter;
use history::{HistoryFlags, HistoryQuery};

/// Exit codes: 0 ok, 1 the run failed (I/O error), 2 usage or configuration error.
pub const EXIT_OK: i32 = 0;
pub const EXIT_RUN_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

pub fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Some(Command::Run(args)) => {
            let typed: Vec<String> = std::env::args().skip(2).collect();
            run::run_command(&args, &typed)
        }
        Some(Command::Compare { a, b, html, db }) => {
            compare::compare_command(&a, &b, html.as_deref(), &history_at(db))
        }
        Some(Command::Ab {
            a,
            b,
            pairs,
            db,
            no_history,
        }) => {
            let history = HistoryFlags {
                enabled: !no_history,
                ..history_at(db)
            };
            ab::ab_command(&a, &b, pairs, &history)
        }
        Some(Command::History {
            target,
            job,
            since,
            trend,
            db,
        }) => {
            let since = since.map(|s| history::parse_since(&s, history::now_unix_ms()));
            let since_unix_ms = match since.transpose() {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("iolens: {e}");
                    return EXIT_USAGE;
                }
            };
            let query = HistoryQuery {
                filter: Filter {
                    target,
                    job,
                    since_unix_ms,
                },
                trend,
            };
            history::history_command(&history_at(db), &query)
        }
        Some(Command::Show {
            id,
            output_format,
            db,
        }) => history::show_command(&history_at(db), id, &output_format),
        Some(Command::Worker) => worker_process(),
        Some(Command::ShowJobs { args }) => show_jobs::show_jobs_command(&args),
        Some(Command::InstallFioShim { dir, force }) => shim::install(&dir, force),
        Some(Command::Doctor { target }) => doctor::doctor_command(&target),
        Some(Command::Quick(args)) => quick::quick_command(&args),
        Some(Command::Report { id, html, db }) => {
            history::report_command(&history_at(db), id, &html)
        }
        None => quick::quick_command(&QuickArgs::default()),
    }
}

fn history_at(db: DbArgs) -> HistoryFlags {
    HistoryFlags {
        db: db.db,
        ..HistoryFlags::default()
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
