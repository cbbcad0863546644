//! `iolens run`: fio-style options in, a report out.

use super::output::{self, Format};
use super::{EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::fileset::TargetError;
use crate::job;
use crate::observe::sampler::DEFAULT_INTERVAL;
use crate::runner::{self, control, RunRequest};
use crate::units::{parse_time, TimeUnit};
use std::path::PathBuf;
use std::time::Duration;

/// iolens' own flags, taken out of the fio-style option list.
#[derive(Debug, PartialEq, Eq)]
struct ToolFlags {
    formats: Vec<Format>,
    output: Option<PathBuf>,
    allow_device_write: bool,
    observe_interval: Duration,
}

/// The sampler's interval must leave it cheap (< 1% of a core at 100 ms) and meaningful.
const MIN_OBSERVE_INTERVAL: Duration = Duration::from_millis(10);

fn parse_observe_interval(value: &str) -> Result<Duration, String> {
    match parse_time(value, TimeUnit::Seconds) {
        Ok(d) if d >= MIN_OBSERVE_INTERVAL => Ok(d),
        Ok(_) => Err(format!(
            "--observe-interval={value}: too short (at least 10ms; the default is 100ms)"
        )),
        Err(e) => Err(format!(
            "--observe-interval={value}: {e} (give a time such as 100ms or 1s)"
        )),
    }
}

/// Separate iolens' own flags from the job options.
fn split_tool_flags(args: &[String]) -> Result<(ToolFlags, Vec<String>), String> {
    let mut flags = ToolFlags {
        formats: vec![Format::Normal],
        output: None,
        allow_device_write: false,
        observe_interval: DEFAULT_INTERVAL,
    };
    let mut job_args = Vec::new();
    for arg in args {
        if let Some(v) = arg.strip_prefix("--output-format=") {
            flags.formats = output::parse_formats(v)?;
        } else if let Some(v) = arg.strip_prefix("--output=") {
            if v.is_empty() {
                return Err("--output= needs a file name (e.g. --output=result.json)".into());
            }
            flags.output = Some(PathBuf::from(v));
        } else if arg == "--allow-device-write" {
            flags.allow_device_write = true;
        } else if let Some(v) = arg.strip_prefix("--observe-interval=") {
            flags.observe_interval = parse_observe_interval(v)?;
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
    let flags = ToolFlags {
        formats: vec![Format::Normal],
        output: None,
        allow_device_write: false,
        observe_interval: DEFAULT_INTERVAL,
    };
    execute(&flags, &args, &[])
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

fn execute(flags: &ToolFlags, job_args: &[String], command_line: &[String]) -> i32 {
    let (global, raw_jobs) = match job::parse_fio_args(job_args) {
        Ok(p) => p,
        Err(e) => return usage_error(&e.to_string()),
    };
    let resolved = match job::resolve(&global, &raw_jobs) {
        Ok(r) => r,
        Err(e) => return usage_error(&e.to_string()),
    };
    for w in &resolved.warnings {
        eprintln!("iolens: warning: {w}");
    }
    let stop = match control::install_stop_handler() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iolens: cannot install the Ctrl-C handler: {e}");
            return EXIT_RUN_FAILED;
        }
    };
    let request = RunRequest {
        jobs: &resolved.jobs,
        job_options: &raw_jobs.iter().map(given_options).collect::<Vec<_>>(),
        global_options: given_options(&global),
        command_line: command_line.to_vec(),
        allow_device_write: flags.allow_device_write,
        observe_interval: flags.observe_interval,
        stop: &stop,
    };
    let outcome = match runner::run(&request) {
        Ok(o) => o,
        Err(e @ TargetError::Config(_)) => return usage_error(&e.to_string()),
        Err(e) => {
            eprintln!("iolens: {e}");
            return EXIT_RUN_FAILED;
        }
    };
    for w in &outcome.warnings {
        eprintln!("iolens: warning: {w}");
    }
    let rendered = output::render(&outcome.report, &flags.formats);
    let written = match &flags.output {
        Some(path) => {
            std::fs::write(path, rendered).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => output::write_stdout(&rendered).map_err(|e| format!("stdout: {e}")),
    };
    if let Err(e) = written {
        eprintln!("iolens: cannot write the report: {e}");
        return EXIT_RUN_FAILED;
    }
    let mut code = EXIT_OK;
    if outcome.report.interrupted {
        eprintln!("iolens: interrupted: the results are partial");
        code = EXIT_RUN_FAILED;
    }
    for j in outcome.report.jobs.iter().filter(|j| j.error.is_some()) {
        eprintln!(
            "iolens: job '{}': {}",
            j.name,
            j.error.as_deref().unwrap_or("")
        );
        code = EXIT_RUN_FAILED;
    }
    code
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
            "--observe-interval=250ms",
            "--bs=4k",
        ]))
        .unwrap();
        assert_eq!(flags.observe_interval, Duration::from_millis(250));
        assert_eq!(flags.formats, vec![Format::FioJson]);
        assert_eq!(flags.output, Some(PathBuf::from("r.json")));
        assert!(flags.allow_device_write);
        assert_eq!(rest, strings(&["--name=a", "--bs=4k"]));
    }

    #[test]
    fn observe_interval_defaults_and_rejects_nonsense() {
        let (flags, _) = split_tool_flags(&[]).unwrap();
        assert_eq!(flags.observe_interval, DEFAULT_INTERVAL);
        assert_eq!(parse_observe_interval("1").unwrap(), Duration::from_secs(1));
        assert!(parse_observe_interval("1ms")
            .unwrap_err()
            .contains("too short"));
        assert!(parse_observe_interval("fast")
            .unwrap_err()
            .contains("100ms"));
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
