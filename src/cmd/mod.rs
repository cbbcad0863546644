//! Subcommands: the only place that prints results and maps errors to exit codes.
//! One file per subcommand; what several of them share lives in the shared modules
//! (`common`, `comparison`, `output`, `progress`), and a subcommand never uses
//! another (the test below holds that).

mod ab;
mod common;
mod compare;
mod comparison;
mod completions;
mod doctor;
mod history;
mod manpages;
mod merge;
mod output;
mod progress;
mod quick;
mod run;
mod shim;
mod show_jobs;

use crate::cli::{Cli, Command, DbArgs, QuickArgs, RunArgs};
use crate::debug::{self, DebugRequest};
use crate::store::Filter;
use common::{CmdError, HistoryFlags};
use history::HistoryQuery;
pub use shim::invoked_as_fio;

/// Exit codes: 0 ok, 1 the run failed (I/O error), 2 usage or configuration error,
/// 3 the run worked but a finding at `--fail-on`'s severity fired.
pub(crate) const EXIT_OK: i32 = 0;
pub(crate) const EXIT_RUN_FAILED: i32 = 1;
pub(crate) const EXIT_USAGE: i32 = 2;
pub(crate) const EXIT_FINDING: i32 = 3;

/// The process's words (its name, then its arguments) as text; an argument that is not
/// UTF-8 is named in one line on stderr, exit 2.
pub fn command_line_words() -> Vec<String> {
    crate::cli::text_words(std::env::args_os()).unwrap_or_else(|e| {
        eprintln!("iolens: {e}");
        std::process::exit(EXIT_USAGE);
    })
}

/// The command line (`command_line_words`); a usage error is one line on stderr and exit 2
/// (like every other error), `--help` and `--version` print and exit 0.
pub fn parse_command_line(words: &[String]) -> Cli {
    crate::cli::parse(words).unwrap_or_else(|e| {
        if e.use_stderr() {
            eprintln!("iolens: {}", crate::cli::error_line(&e));
            std::process::exit(EXIT_USAGE);
        }
        e.exit()
    })
}

/// Run the subcommand parsed from `words` (`command_line_words`); the exit code, its
/// error (if any) printed here, once.
pub fn dispatch(cli: Cli, words: &[String]) -> i32 {
    exit_code(subcommand(cli, words))
}

/// Invoked as `fio`: `--version` answers like fio; everything else is `iolens run ARGS…`.
pub fn run_as_fio(args: &[String]) -> i32 {
    exit_code(fio(args))
}

fn exit_code(result: Result<i32, CmdError>) -> i32 {
    result.unwrap_or_else(|e| {
        eprintln!("{e}");
        e.code()
    })
}

fn subcommand(cli: Cli, words: &[String]) -> Result<i32, CmdError> {
    match cli.command {
        Some(Command::Run(args)) => run_line(&args, words.get(2..).unwrap_or_default()),
        Some(Command::Compare {
            a,
            b,
            html,
            allow_interrupted,
            pair,
            db,
        }) => compare::compare_command(
            [&a, &b],
            html.as_deref(),
            allow_interrupted,
            &pair,
            &history_at(&db),
        ),
        Some(Command::Ab {
            a,
            b,
            pairs,
            db,
            no_history,
        }) => ab::ab_command(&a, &b, pairs, &HistoryFlags::new(&db, no_history)),
        Some(Command::History {
            target,
            job,
            since,
            trend,
            with_interrupted,
            db,
        }) => {
            let since = since.map(|s| history::parse_since(&s, history::now_unix_ms()));
            let query = HistoryQuery {
                filter: Filter {
                    target,
                    job,
                    since_unix_ms: since
                        .transpose()
                        .map_err(|e| CmdError::usage(e.to_string()))?,
                },
                trend,
                with_interrupted,
            };
            history::history_command(&history_at(&db), &query)
        }
        Some(Command::Show {
            id,
            output_format,
            db,
        }) => history::show_command(&history_at(&db), id, &output_format),
        Some(Command::Merge { dir, output_format }) => merge::merge_command(&dir, &output_format),
        Some(Command::Worker) => worker_process(),
        Some(Command::ShowJobs { args }) => show_jobs::show_jobs_command(&args),
        Some(Command::InstallFioShim { dir, force }) => shim::install(&dir, force),
        Some(Command::Doctor { target }) => doctor::doctor_command(&target),
        Some(Command::Quick(args)) => quick::quick_command(&args),
        Some(Command::Report { id, html, db }) => {
            history::report_command(&history_at(&db), id, &html)
        }
        Some(Command::Completions { shell }) => completions::completions_command(shell),
        Some(Command::Manpages { dir }) => manpages::manpages_command(&dir),
        None => quick::quick_command(&QuickArgs::default()),
    }
}

/// `iolens run` and `fio`: `--cmdhelp` and `--parse-only` print, otherwise the jobs run;
/// `command_line` (the words after `run`) goes into the report.
fn run_line(args: &RunArgs, command_line: &[String]) -> Result<i32, CmdError> {
    let flags = &args.flags;
    if flags.version {
        return common::print(&format!("{}\n", shim::fio_version()));
    }
    if let Some(option) = &flags.cmdhelp {
        return show_jobs::cmdhelp(option);
    }
    if let Some(engine) = &flags.enghelp {
        return show_jobs::enghelp(engine);
    }
    if let Some(path) = &flags.inflate_log {
        return shim::inflate_log(path);
    }
    shim::refuse_fio_only_flags(&args.args)?;
    if flags.notes_on_stderr() {
        for note in flags.ignored_fio_flags() {
            eprintln!("iolens: warning: {note}");
        }
    }
    if flags.showcmd {
        return show_jobs::showcmd(args);
    }
    if flags.merge_blktrace_only {
        return show_jobs::check_only(args);
    }
    match args.flags.debug {
        Some(DebugRequest::Help) => return common::print(&format!("{}\n", debug::help_list())),
        Some(DebugRequest::Trace(types)) => debug::enable(types),
        None => {}
    }
    if args.flags.parse_only {
        return show_jobs::parse_only(args);
    }
    run::run_command(args, command_line)
}

fn fio(args: &[String]) -> Result<i32, CmdError> {
    if shim::asks_for_version(args) {
        println!("{}", shim::fio_version());
        return Ok(EXIT_OK);
    }
    common::with_run_args(args, |mut run| {
        run.flags.started_as_fio = true;
        run_line(&run, args)
    })
}

fn history_at(db: &DbArgs) -> HistoryFlags {
    HistoryFlags::new(db, false)
}

/// A worker process: its I/O errors travel inside its result (exit 0);
/// it fails only when it cannot run its task at all.
fn worker_process() -> Result<i32, CmdError> {
    crate::runner::process::serve_worker()
        .map_err(|e| CmdError::run_failed(e.to_string()).said_by("iolens worker process"))?;
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    /// Each subcommand's file, by module name.
    const SUBCOMMANDS: &[(&str, &str)] = &[
        ("ab", include_str!("ab.rs")),
        ("compare", include_str!("compare.rs")),
        ("completions", include_str!("completions.rs")),
        ("doctor", include_str!("doctor.rs")),
        ("history", include_str!("history.rs")),
        ("manpages", include_str!("manpages.rs")),
        ("merge", include_str!("merge.rs")),
        ("quick", include_str!("quick.rs")),
        ("run", include_str!("run.rs")),
        ("shim", include_str!("shim.rs")),
        ("show_jobs", include_str!("show_jobs.rs")),
    ];

    /// What subcommands share; these use no subcommand either.
    const SHARED: &[(&str, &str)] = &[
        ("common", include_str!("common.rs")),
        ("comparison", include_str!("comparison.rs")),
        ("output", include_str!("output.rs")),
        ("progress", include_str!("progress.rs")),
    ];

    /// True when `source` names `module` as a whole path segment (`super::run::x`
    /// or `use super::{run, …}` count, `super::runner` does not).
    fn names(source: &str, module: &str) -> bool {
        let segment = |rest: &str| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let direct = ["super::", "cmd::"].iter().any(|prefix| {
            let path = format!("{prefix}{module}");
            source
                .match_indices(&path)
                .any(|(at, _)| segment(&source[at + path.len()..]))
        });
        let grouped = source
            .split("super::{")
            .skip(1)
            .filter_map(|rest| rest.split('}').next())
            .any(|list| {
                list.split(',').any(|item| {
                    let item = item.trim();
                    item == module || item.starts_with(&format!("{module}::"))
                })
            });
        direct || grouped
    }

    #[test]
    fn no_subcommand_uses_another() {
        for (file, source) in SUBCOMMANDS.iter().chain(SHARED) {
            for (other, _) in SUBCOMMANDS.iter().filter(|(other, _)| other != file) {
                assert!(
                    !names(source, other),
                    "expected cmd/{file}.rs not to use the subcommand `{other}` \
                     (share through cmd/common.rs instead), but it names it"
                );
            }
        }
    }

    #[test]
    fn every_module_is_a_subcommand_or_shared() {
        let declared: Vec<&str> = include_str!("mod.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
            .collect();
        let mut known: Vec<&str> = SUBCOMMANDS.iter().chain(SHARED).map(|(m, _)| *m).collect();
        known.sort_unstable();
        assert_eq!(
            declared, known,
            "expected every module of cmd/ (left) to be listed as a subcommand or shared (right)"
        );
    }

    #[test]
    fn the_check_sees_every_way_to_name_a_sibling() {
        for (source, module) in [
            ("use super::run::run_once;", "run"),
            ("use super::{compare, EXIT_OK};", "compare"),
            ("use super::{output::Format, run::JobSet};", "run"),
            ("super::quick::write_html(x)", "quick"),
            ("crate::cmd::run::emit(x)", "run"),
        ] {
            assert!(
                names(source, module),
                "expected `{source}` to count as using {module}"
            );
        }
        for source in [
            "use super::common::run_once;",
            "use crate::runner::run;",
            "use super::*;",
            "use super::{runner, EXIT_OK};",
        ] {
            assert!(
                !names(source, "run"),
                "expected `{source}` not to count as using run"
            );
        }
    }
}
