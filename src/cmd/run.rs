//! `iolens run`: job files and fio-style options in, a report out.

use super::history::HistoryFlags;
use super::output::{self, Destination, Format};
use super::progress::{self, EtaMode};
use super::show_jobs;
use super::{compare, quick, repeat, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::cli::{error_line, order_run_words, RunArgs, RunFlags};
use crate::fileset::TargetError;
use crate::job::front::{expr, jobfile, lenient};
use crate::job::{self, LayeredJob};
use crate::observe::sampler::{SecondHook, DEFAULT_INTERVAL};
use crate::report::html;
use crate::report::model::{Observations, RunReport};
use crate::report::timeline;
use crate::runner::status::StatusReports;
use crate::runner::{self, control, GroupProgress, RunOutcome, RunRequest};
use crate::units::{self, TimeUnit};
use clap::Parser;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// iolens' own flags, taken out of the fio-style option list.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ToolFlags {
    formats: Vec<Format>,
    output: Option<PathBuf>,
    allow_device_write: bool,
    /// `--section=NAME` (repeatable): run only these job-file sections.
    sections: Vec<String>,
    /// `--fio-compat=lenient`: fio's silent readings instead of errors, with warnings.
    lenient: bool,
    /// `--parse-only`: print the resolved jobs and stop.
    parse_only: bool,
    /// `--cmdhelp[=OPTION]`: `Some("")` lists every option.
    cmdhelp: Option<String>,
    /// `--status-interval`: print an interim report this often while running.
    status_interval: Option<Duration>,
    /// Measured repetitions (`--repeat N`); 1 is a plain run.
    repeat: u32,
    /// Unmeasured runs before them (`--warmup K`).
    warmup: u32,
    /// History id to compare the result with.
    compare_with: Option<i64>,
    history: HistoryFlags,
    /// `--observe-interval`: how often the sampler records the system.
    observe_interval: Duration,
    /// `--timeline`: a line per second on stderr while running.
    timeline: bool,
    /// `--eta`: when to draw live progress on stderr.
    eta: EtaMode,
    /// `--html FILE`: also write the self-contained HTML report there.
    html: Option<PathBuf>,
    /// `--io-timeout`: an I/O in flight longer than this fails its job.
    io_timeout: Option<Duration>,
}

impl Default for ToolFlags {
    fn default() -> Self {
        Self {
            formats: vec![Format::Normal],
            output: None,
            allow_device_write: false,
            sections: Vec::new(),
            lenient: false,
            parse_only: false,
            cmdhelp: None,
            status_interval: None,
            repeat: 1,
            warmup: 0,
            compare_with: None,
            history: HistoryFlags::default(),
            observe_interval: DEFAULT_INTERVAL,
            timeline: false,
            eta: EtaMode::Auto,
            html: None,
            io_timeout: None,
        }
    }
}

fn parse_number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}={v}: expected a whole number"))
}

/// The sampler's interval must leave it cheap (< 1% of a core at 100 ms) and meaningful.
const MIN_OBSERVE_INTERVAL: Duration = Duration::from_millis(10);

fn parse_observe_interval(value: &str) -> Result<Duration, String> {
    match units::parse_time(value, TimeUnit::Seconds) {
        Ok(d) if d >= MIN_OBSERVE_INTERVAL => Ok(d),
        Ok(_) => Err(format!(
            "--observe-interval={value}: too short (at least 10ms; the default is 100ms)"
        )),
        Err(e) => Err(format!(
            "--observe-interval={value}: {e} (give a time such as 100ms or 1s)"
        )),
    }
}

/// `iolens run`'s flags and words, parsed by the one clap definition in `cli.rs`.
#[derive(Debug, clap::Parser)]
#[command(no_binary_name = true)]
struct RunLine {
    #[command(flatten)]
    run: RunArgs,
}

/// Parse `iolens run`'s words (quick, show-jobs and the fio shim build or get them
/// as a list): iolens' own flags out, job options and files in the order given.
pub(super) fn split_tool_flags(args: &[String]) -> Result<(ToolFlags, Vec<String>), String> {
    let line = RunLine::try_parse_from(order_run_words(args)).map_err(|e| error_line(&e))?;
    Ok((tool_flags(&line.run.flags)?, line.run.args))
}

/// Check and convert the flags clap parsed.
fn tool_flags(given: &RunFlags) -> Result<ToolFlags, String> {
    let mut flags = ToolFlags::default();
    if let Some(v) = &given.repeat {
        flags.repeat = parse_number("--repeat", v)?;
        if flags.repeat == 0 {
            return Err("--repeat=0: give at least one repetition".into());
        }
    }
    if let Some(v) = &given.warmup {
        flags.warmup = parse_number("--warmup", v)?;
    }
    if let Some(v) = &given.compare_with {
        flags.compare_with = Some(parse_number("--compare-with", v)?);
    }
    flags.html.clone_from(&given.html);
    flags.history = HistoryFlags {
        db: given.db.db.clone(),
        enabled: !given.no_history,
    };
    flags.sections.clone_from(&given.section);
    if let Some(mode) = &given.fio_compat {
        flags.lenient = match mode.as_str() {
            "lenient" => true,
            "strict" => false,
            _ => return Err(format!("--fio-compat={mode}: use strict or lenient")),
        };
    }
    flags.parse_only = given.parse_only;
    flags.cmdhelp.clone_from(&given.cmdhelp);
    if given.minimal {
        flags.formats = vec![Format::Terse];
    }
    if let Some(v) = &given.output_format {
        flags.formats = output::parse_formats(v)?;
    }
    if let Some(v) = &given.output {
        if v.is_empty() {
            return Err("--output= needs a file name (e.g. --output=result.json)".into());
        }
        flags.output = Some(PathBuf::from(v));
    }
    if let Some(v) = &given.eta {
        flags.eta = EtaMode::parse(v)?;
    }
    if let Some(v) = &given.status_interval {
        flags.status_interval = Some(parse_status_interval(v)?);
    }
    flags.allow_device_write = given.allow_destructive;
    if let Some(v) = &given.observe_interval {
        flags.observe_interval = parse_observe_interval(v)?;
    }
    if let Some(v) = &given.io_timeout {
        flags.io_timeout = Some(parse_io_timeout(v)?);
    }
    flags.timeline = given.timeline;
    Ok(flags)
}

/// `--io-timeout`: a positive duration, in seconds without a unit.
fn parse_io_timeout(value: &str) -> Result<Duration, String> {
    match units::parse_time(value, TimeUnit::Seconds) {
        Ok(timeout) if !timeout.is_zero() => Ok(timeout),
        Ok(_) => Err("--io-timeout=0: give a positive time (e.g. --io-timeout=30s), or leave it out for none".into()),
        Err(e) => Err(format!("--io-timeout={value}: {e} (e.g. --io-timeout=30s)")),
    }
}

/// fio's `--status-interval`: a duration, in seconds without a unit.
fn parse_status_interval(value: &str) -> Result<Duration, String> {
    match units::parse_time(value, TimeUnit::Seconds) {
        Ok(interval) if !interval.is_zero() => Ok(interval),
        Ok(_) => {
            Err("--status-interval=0: give a positive interval, e.g. --status-interval=1".into())
        }
        Err(e) => Err(format!(
            "--status-interval={value}: {e} (e.g. --status-interval=1 or 500ms)"
        )),
    }
}

/// `iolens run`; `command_line` is what the user typed after `run`, for the report.
pub fn run_command(args: &RunArgs, command_line: &[String]) -> i32 {
    match tool_flags(&args.flags) {
        Ok(flags) => execute(&flags, &args.args, command_line),
        Err(e) => usage_error(&e),
    }
}

/// `fio ARGS…` through the shim: the same parse as `iolens run ARGS…` (clap prints
/// its own help and errors).
pub fn run_words(words: &[String]) -> i32 {
    match RunLine::try_parse_from(order_run_words(words)) {
        Ok(line) => run_command(&line.run, words),
        Err(e) => e.exit(),
    }
}

pub(super) fn usage_error(message: &str) -> i32 {
    eprintln!("iolens: {message}");
    EXIT_USAGE
}

/// Jobs ready to run: as given (with their layers, for the report and show-jobs) and resolved.
pub(super) struct LoadedJobs {
    pub layered: Vec<LayeredJob>,
    pub specs: Vec<job::spec::JobSpec>,
}

/// Command-line options and job files → resolved jobs; warnings go to stderr.
pub(super) fn load_jobs(flags: &ToolFlags, job_args: &[String]) -> Result<LoadedJobs, String> {
    let line = job::parse_command_line(job_args).map_err(|e| e.to_string())?;
    let env = |name: &str| std::env::var(name).ok();
    let cx = jobfile::Context {
        system: expr::SystemValues::of_this_machine(),
        missing_env: match flags.lenient {
            true => expr::MissingEnv::Empty,
            false => expr::MissingEnv::Error,
        },
        env: &env,
    };
    let (mut layered, mut warnings) =
        jobfile::assemble(&line.global, &line.jobs, &line.files, &flags.sections, &cx)
            .map_err(|e| e.to_string())?;
    if flags.lenient {
        warnings.extend(lenient::relax(&mut layered));
    }
    let resolved = job::resolve_layered(&layered).map_err(|e| e.to_string())?;
    for w in warnings.iter().chain(&resolved.warnings) {
        eprintln!("iolens: warning: {w}");
    }
    Ok(LoadedJobs {
        layered,
        specs: resolved.jobs,
    })
}

/// Jobs parsed and resolved once, to be run as often as asked.
pub(super) struct JobSet {
    specs: Vec<job::spec::JobSpec>,
    command_line: Vec<String>,
    allow_device_write: bool,
    observe_interval: Duration,
    timeline: bool,
    eta: EtaMode,
    io_timeout: Option<Duration>,
}

impl JobSet {
    /// Load job files and options; on error, the exit code (message printed).
    pub(super) fn load(
        flags: &ToolFlags,
        job_args: &[String],
        command_line: &[String],
    ) -> Result<JobSet, i32> {
        let loaded = load_jobs(flags, job_args).map_err(|e| usage_error(&e))?;
        Ok(JobSet {
            specs: loaded.specs,
            command_line: command_line.to_vec(),
            allow_device_write: flags.allow_device_write,
            observe_interval: flags.observe_interval,
            timeline: flags.timeline,
            eta: flags.eta,
            io_timeout: flags.io_timeout,
        })
    }
}

/// Ctrl-C handling for a command that runs jobs.
pub(super) fn stop_flag() -> Result<std::sync::Arc<AtomicBool>, i32> {
    control::install_stop_handler().map_err(|e| {
        eprintln!("iolens: cannot install the Ctrl-C handler: {e}");
        EXIT_RUN_FAILED
    })
}

/// One full run of the job set; on error, the exit code (message printed).
pub(super) fn run_once(
    jobs: &JobSet,
    stop: &AtomicBool,
    status: Option<StatusReports>,
) -> Result<RunOutcome, i32> {
    let progress = progress::live_progress(jobs.eta);
    let request = RunRequest {
        jobs: &jobs.specs,
        command_line: jobs.command_line.clone(),
        allow_device_write: jobs.allow_device_write,
        observe_interval: jobs.observe_interval,
        on_second: jobs.timeline.then_some(print_timeline as SecondHook),
        stop,
        status,
        progress: progress.as_ref().map(|p| p as &dyn GroupProgress),
        io_timeout: jobs.io_timeout,
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

/// `--timeline`: stderr, so a JSON report on stdout stays valid.
fn print_timeline(obs: &Observations, from: usize) {
    if from == 0 {
        eprintln!("{}", timeline::HEADER);
    }
    eprintln!("{}", timeline::line(obs, from));
}

/// Write rendered output to `--output` or stdout.
pub(super) fn emit(rendered: &str, output: Option<&Path>) -> Result<(), i32> {
    Destination::open(output)
        .and_then(|mut d| d.write(rendered))
        .map_err(|e| {
            eprintln!("iolens: cannot write the report: {e}");
            EXIT_RUN_FAILED
        })
}

/// 1 when the run was interrupted or a job failed (each said on stderr), 128 + the
/// signal when one stopped it, else 0.
pub(super) fn run_status(report: &RunReport) -> i32 {
    let mut code = EXIT_OK;
    if report.interrupted {
        eprintln!("iolens: interrupted: the results are partial");
        code = EXIT_RUN_FAILED;
    }
    // Stopped by SIGINT/SIGTERM: the shell's 130/143, after the partial report.
    if let Some(sig) = control::received_signal() {
        code = 128 + sig;
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
    if let Some(option) = &flags.cmdhelp {
        return Ok(show_jobs::cmdhelp(option));
    }
    if flags.parse_only {
        let loaded = load_jobs(flags, job_args).map_err(|e| usage_error(&e))?;
        return Ok(show_jobs::print(&show_jobs::render(&loaded.layered, false)));
    }
    let jobs = JobSet::load(flags, job_args, command_line)?;
    let stop = stop_flag()?;
    if flags.repeat > 1 || flags.warmup > 0 {
        let options = repeat::Options {
            repetitions: flags.repeat,
            warmup: flags.warmup,
            formats: &flags.formats,
            output: flags.output.as_deref(),
            history: &flags.history,
            compare_with: flags.compare_with,
            html: flags.html.as_deref(),
        };
        return repeat::run_repeated(&jobs, &options, &stop);
    }
    // Opened before the run: interim reports (--status-interval) and the final one share it.
    let destination = RefCell::new(Destination::open(flags.output.as_deref()).map_err(|e| {
        eprintln!("iolens: cannot create the report file: {e}");
        EXIT_RUN_FAILED
    })?);
    // A failed interim report is not worth stopping the run for; the final write reports errors.
    let print_status = |report: &RunReport| {
        let _ = destination
            .borrow_mut()
            .write(&output::render_status(report, &flags.formats));
    };
    let status = flags.status_interval.map(|interval| StatusReports {
        interval,
        on_report: &print_status,
    });
    let outcome = run_once(&jobs, &stop, status)?;
    let rendered = output::render(&outcome.report, &flags.formats);
    destination.borrow_mut().write(&rendered).map_err(|e| {
        eprintln!("iolens: cannot write the report: {e}");
        EXIT_RUN_FAILED
    })?;
    if let Some(path) = &flags.html {
        quick::write_html(path, &html::render_run(&outcome.report))?;
    }
    let code = run_status(&outcome.report);
    let reports = [outcome.report];
    flags.history.record(&reports);
    if let Some(id) = flags.compare_with {
        compare::against_history(id, &reports, &flags.history, None)?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::strings;

    #[test]
    fn repeat_and_history_flags_take_both_spellings() {
        let (flags, rest) = split_tool_flags(&strings(&[
            "--repeat",
            "5",
            "--warmup=1",
            "--name=a",
            "--compare-with=12",
            "--html",
            "r.html",
            "--db",
            "h.db",
            "--no-history",
        ]))
        .unwrap();
        assert_eq!((flags.repeat, flags.warmup), (5, 1));
        assert_eq!(flags.compare_with, Some(12));
        assert_eq!(flags.html, Some(PathBuf::from("r.html")));
        assert_eq!(flags.history.db, Some(PathBuf::from("h.db")));
        assert!(!flags.history.enabled);
        assert_eq!(rest, strings(&["--name=a"]));
        assert!(split_tool_flags(&strings(&["--repeat=0"])).is_err());
        assert!(split_tool_flags(&strings(&["--repeat=x"])).is_err());
        assert!(split_tool_flags(&strings(&["--warmup"])).is_err());
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
        assert_eq!(flags.status_interval, None);
    }

    #[test]
    fn fio_reporting_flags() {
        let (flags, rest) = split_tool_flags(&strings(&[
            "--minimal",
            "--eta=never",
            "--status-interval=2",
            "--name=a",
        ]))
        .unwrap();
        assert_eq!(flags.formats, vec![Format::Terse]);
        assert_eq!(flags.eta, EtaMode::Never);
        assert_eq!(flags.status_interval, Some(Duration::from_secs(2)));
        assert_eq!(rest, strings(&["--name=a"]));
        let (flags, _) = split_tool_flags(&strings(&["--status-interval=250ms"])).unwrap();
        assert_eq!(flags.status_interval, Some(Duration::from_millis(250)));
        for bad in ["--eta=maybe", "--status-interval=0", "--status-interval=x"] {
            let err = split_tool_flags(&strings(&[bad])).unwrap_err();
            assert!(err.starts_with(bad.split('=').next().unwrap()), "{err}");
        }
    }

    #[test]
    fn job_file_flags_are_taken_out_too() {
        let (flags, rest) = split_tool_flags(&strings(&[
            "a.fio",
            "--section=x",
            "--section=y",
            "--fio-compat=lenient",
            "--parse-only",
            "--cmdhelp=bs",
        ]))
        .unwrap();
        assert_eq!(flags.sections, strings(&["x", "y"]));
        assert!(flags.lenient && flags.parse_only);
        assert_eq!(flags.cmdhelp.as_deref(), Some("bs"));
        assert_eq!(rest, strings(&["a.fio"]));
        assert!(split_tool_flags(&strings(&["--fio-compat=loose"])).is_err());
    }

    #[test]
    fn io_timeout_is_off_by_default_and_positive() {
        assert_eq!(split_tool_flags(&[]).unwrap().0.io_timeout, None);
        let (flags, _) = split_tool_flags(&strings(&["--io-timeout=2"])).unwrap();
        assert_eq!(flags.io_timeout, Some(Duration::from_secs(2)));
        let (flags, _) = split_tool_flags(&strings(&["--io-timeout=500ms"])).unwrap();
        assert_eq!(flags.io_timeout, Some(Duration::from_millis(500)));
        assert!(split_tool_flags(&strings(&["--io-timeout=0"])).is_err());
        assert!(split_tool_flags(&strings(&["--io-timeout=soon"])).is_err());
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
}
