//! `iolens run`: fio-style options in, a report out.

use super::history::HistoryFlags;
use super::output::{self, Format};
use super::{compare, repeat, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::fileset::TargetError;
use crate::job;
use crate::report::model::RunReport;
use crate::runner::{self, control, RunOutcome, RunRequest};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// iolens' own flags, taken out of the fio-style option list.
#[derive(Debug, PartialEq, Eq)]
struct ToolFlags {
    formats: Vec<Format>,
    output: Option<PathBuf>,
    allow_device_write: bool,
    /// Measured repetitions (`--repeat N`); 1 is a plain run.
    repeat: u32,
    /// Unmeasured runs before them (`--warmup K`).
    warmup: u32,
    /// History id to compare the result with.
    compare_with: Option<i64>,
    history: HistoryFlags,
}

impl Default for ToolFlags {
    fn default() -> Self {
        ToolFlags {
            formats: vec![Format::Normal],
            output: None,
            allow_device_write: false,
            repeat: 1,
            warmup: 0,
            compare_with: None,
            history: HistoryFlags::default(),
        }
    }
}

/// The value of `--flag=V` or `--flag V` when `arg` is that flag.
fn flag_value<'a>(
    flag: &str,
    arg: &'a str,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Option<Result<&'a str, String>> {
    let tail = arg.strip_prefix(flag)?;
    if let Some(v) = tail.strip_prefix('=') {
        return Some(Ok(v));
    }
    if !tail.is_empty() {
        return None;
    }
    Some(
        rest.next()
            .map(String::as_str)
            .ok_or_else(|| format!("{flag} needs a value")),
    )
}

fn parse_number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}={v}: expected a whole number"))
}

/// Separate iolens' own flags from the job options.
fn split_tool_flags(args: &[String]) -> Result<(ToolFlags, Vec<String>), String> {
    let mut flags = ToolFlags::default();
    let mut job_args = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if let Some(v) = flag_value("--repeat", arg, &mut args) {
            flags.repeat = parse_number("--repeat", v?)?;
            if flags.repeat == 0 {
                return Err("--repeat=0: give at least one repetition".into());
            }
        } else if let Some(v) = flag_value("--warmup", arg, &mut args) {
            flags.warmup = parse_number("--warmup", v?)?;
        } else if let Some(v) = flag_value("--compare-with", arg, &mut args) {
            flags.compare_with = Some(parse_number("--compare-with", v?)?);
        } else if let Some(v) = flag_value("--db", arg, &mut args) {
            flags.history.db = Some(PathBuf::from(v?));
        } else if arg == "--no-history" {
            flags.history.enabled = false;
        } else if let Some(v) = arg.strip_prefix("--output-format=") {
            flags.formats = output::parse_formats(v)?;
        } else if let Some(v) = arg.strip_prefix("--output=") {
            if v.is_empty() {
                return Err("--output= needs a file name (e.g. --output=result.json)".into());
            }
            flags.output = Some(PathBuf::from(v));
        } else if arg == "--allow-device-write" {
            flags.allow_device_write = true;
        } else {
            job_args.push(arg.clone());
        }
    }
    Ok((flags, job_args))
}

pub fn run_command(args: &[String]) -> i32 {
    let (flags, job_args) = match split_tool_flags(args) {
        Ok(v) => v,
        Err(e) => return usage_error(&e),
    };
    execute(&flags, &job_args, args)
}

/// The main job: a short default workload on a temporary file in the current directory.
pub fn run_default() -> i32 {
    let target = match tempfile::Builder::new()
        .prefix(".iolens-default-")
        .tempfile_in(".")
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("iolens: cannot create a temporary target in the current directory: {e} (run from a writable directory)");
            return EXIT_USAGE;
        }
    };
    let args = default_job_args(&target.path().display().to_string());
    eprintln!(
        "iolens: no job given; running the default workload on a temporary 256 MiB file in the current directory (see `iolens run --help`)"
    );
    execute(&ToolFlags::default(), &args, &[])
}

/// Sequential and random, read and write, each for 2 seconds with direct I/O.
fn default_job_args(filename: &str) -> Vec<String> {
    let global = [
        format!("--filename={filename}"),
        "--size=256m".into(),
        "--direct=1".into(),
        "--runtime=2".into(),
        "--time_based".into(),
        "--ioengine=io_uring".into(),
        "--stonewall".into(),
    ];
    let jobs = [
        [
            "--name=seq-read-1m-qd8",
            "--rw=read",
            "--bs=1m",
            "--iodepth=8",
        ],
        [
            "--name=rand-read-4k-qd32",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=32",
        ],
        [
            "--name=seq-write-1m-qd8",
            "--rw=write",
            "--bs=1m",
            "--iodepth=8",
        ],
        [
            "--name=rand-write-4k-qd32",
            "--rw=randwrite",
            "--bs=4k",
            "--iodepth=32",
        ],
    ];
    global
        .into_iter()
        .chain(jobs.iter().flatten().map(|s| s.to_string()))
        .collect()
}

/// The options of a job as the user gave them, for the report.
fn given_options(raw: &job::RawJob) -> Vec<(String, String)> {
    raw.options()
        .iter()
        .map(|o| (o.def.name.to_string(), o.value.clone()))
        .collect()
}

fn usage_error(message: &str) -> i32 {
    eprintln!("iolens: {message}");
    EXIT_USAGE
}

/// Jobs parsed and resolved once, to be run as often as asked.
pub(super) struct JobSet {
    resolved: job::Resolved,
    job_options: Vec<Vec<(String, String)>>,
    global_options: Vec<(String, String)>,
    command_line: Vec<String>,
    allow_device_write: bool,
}

/// Parse and resolve fio-style job options; on error, the exit code (message printed).
pub(super) fn load_jobs(
    job_args: &[String],
    command_line: &[String],
    allow_device_write: bool,
) -> Result<JobSet, i32> {
    let (global, raw_jobs) =
        job::parse_fio_args(job_args).map_err(|e| usage_error(&e.to_string()))?;
    let resolved = job::resolve(&global, &raw_jobs).map_err(|e| usage_error(&e.to_string()))?;
    for w in &resolved.warnings {
        eprintln!("iolens: warning: {w}");
    }
    Ok(JobSet {
        resolved,
        job_options: raw_jobs.iter().map(given_options).collect(),
        global_options: given_options(&global),
        command_line: command_line.to_vec(),
        allow_device_write,
    })
}

/// Ctrl-C handling for a command that runs jobs.
pub(super) fn stop_flag() -> Result<std::sync::Arc<AtomicBool>, i32> {
    control::install_stop_handler().map_err(|e| {
        eprintln!("iolens: cannot install the Ctrl-C handler: {e}");
        EXIT_RUN_FAILED
    })
}

/// One full run of the job set; on error, the exit code (message printed).
pub(super) fn run_once(jobs: &JobSet, stop: &AtomicBool) -> Result<RunOutcome, i32> {
    let request = RunRequest {
        jobs: &jobs.resolved.jobs,
        job_options: &jobs.job_options,
        global_options: jobs.global_options.clone(),
        command_line: jobs.command_line.clone(),
        allow_device_write: jobs.allow_device_write,
        stop,
    };
    let outcome = match runner::run(&request) {
        Ok(o) => o,
        Err(e @ TargetError::Config(_)) => return Err(usage_error(&e.to_string())),
        Err(e) => {
            eprintln!("iolens: {e}");
            return Err(EXIT_RUN_FAILED);
        }
    };
    for w in &outcome.warnings {
        eprintln!("iolens: warning: {w}");
    }
    Ok(outcome)
}

/// Write rendered output to `--output` or stdout.
pub(super) fn emit(rendered: &str, output: Option<&std::path::Path>) -> Result<(), i32> {
    let written = match output {
        Some(path) => {
            std::fs::write(path, rendered).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => output::write_stdout(rendered).map_err(|e| format!("stdout: {e}")),
    };
    written.map_err(|e| {
        eprintln!("iolens: cannot write the report: {e}");
        EXIT_RUN_FAILED
    })
}

/// 1 when the run was interrupted or a job failed (each said on stderr), else 0.
pub(super) fn run_status(report: &RunReport) -> i32 {
    let mut code = EXIT_OK;
    if report.interrupted {
        eprintln!("iolens: interrupted: the results are partial");
        code = EXIT_RUN_FAILED;
    }
    for j in report.jobs.iter().filter(|j| j.error.is_some()) {
        eprintln!(
            "iolens: job '{}': {}",
            j.name,
            j.error.as_deref().unwrap_or("")
        );
        code = EXIT_RUN_FAILED;
    }
    code
}

fn execute(flags: &ToolFlags, job_args: &[String], command_line: &[String]) -> i32 {
    match run_and_report(flags, job_args, command_line) {
        Ok(code) | Err(code) => code,
    }
}

fn run_and_report(
    flags: &ToolFlags,
    job_args: &[String],
    command_line: &[String],
) -> Result<i32, i32> {
    let jobs = load_jobs(job_args, command_line, flags.allow_device_write)?;
    let stop = stop_flag()?;
    if flags.repeat > 1 || flags.warmup > 0 {
        let options = repeat::Options {
            repetitions: flags.repeat,
            warmup: flags.warmup,
            formats: &flags.formats,
            output: flags.output.as_deref(),
            history: &flags.history,
            compare_with: flags.compare_with,
        };
        return repeat::run_repeated(&jobs, &options, &stop);
    }
    let outcome = run_once(&jobs, &stop)?;
    emit(
        &output::render(&outcome.report, &flags.formats),
        flags.output.as_deref(),
    )?;
    let code = run_status(&outcome.report);
    let reports = [outcome.report];
    flags.history.record(&reports);
    if let Some(id) = flags.compare_with {
        compare::against_history(id, &reports, &flags.history)?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tool_flags_are_taken_out_of_the_job_options() {
        let (flags, rest) = split_tool_flags(&strings(&[
            "--output-format=json",
            "--name=a",
            "--allow-device-write",
            "--output=r.json",
            "--bs=4k",
        ]))
        .unwrap();
        assert_eq!(flags.formats, vec![Format::FioJson]);
        assert_eq!(flags.output, Some(PathBuf::from("r.json")));
        assert!(flags.allow_device_write);
        assert_eq!(rest, strings(&["--name=a", "--bs=4k"]));
    }

    #[test]
    fn repeat_and_history_flags_take_both_spellings() {
        let (flags, rest) = split_tool_flags(&strings(&[
            "--repeat",
            "5",
            "--warmup=1",
            "--name=a",
            "--compare-with=12",
            "--db",
            "h.db",
            "--no-history",
        ]))
        .unwrap();
        assert_eq!((flags.repeat, flags.warmup), (5, 1));
        assert_eq!(flags.compare_with, Some(12));
        assert_eq!(flags.history.db, Some(PathBuf::from("h.db")));
        assert!(!flags.history.enabled);
        assert_eq!(rest, strings(&["--name=a"]));
        assert!(split_tool_flags(&strings(&["--repeat=0"])).is_err());
        assert!(split_tool_flags(&strings(&["--repeat=x"])).is_err());
        assert!(split_tool_flags(&strings(&["--warmup"])).is_err());
    }

    #[test]
    fn default_workload_parses_and_resolves() {
        let args = default_job_args("target/x");
        let (global, jobs) = job::parse_fio_args(&args).unwrap();
        let resolved = job::resolve(&global, &jobs).unwrap();
        assert_eq!(resolved.jobs.len(), 4);
        assert!(resolved
            .jobs
            .iter()
            .all(|j| j.exec.stonewall && j.io.direct));
    }
}
