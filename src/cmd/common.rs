//! What the subcommands share: one error type, the history flags, jobs loaded
//! once and run as often as asked, and writing what they produce (reports,
//! tables, HTML pages). Subcommands use each other only through this file.

use super::comparison;
use super::output::{self, Destination};
use super::progress;
use super::{EXIT_FINDING, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::cli::{self, DbArgs, EtaMode, FioCompat, Format, RunArgs, RunFlags};
use crate::cluster;
use crate::diagnose::diagnose;
use crate::fileset::{self, TargetError};
use crate::job::front::{expr, jobfile, lenient};
use crate::job::{self, LayeredJob, RawJob};
use crate::model::{Finding, Observations, RunReport, Severity};
use crate::observe::sampler::{SecondHook, DEFAULT_INTERVAL};
use crate::report::{self, text::timeline, Document};
use crate::runner::ranks::{ClusterLink, SeriesRun};
use crate::runner::status::StatusReports;
use crate::runner::{self, stop_signal, GroupProgress, RunOutcome, RunRequest};
use crate::series::repetitions;
use crate::store::{self, Store};
use std::cell::RefCell;
use std::convert::Infallible;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Why a subcommand stopped: one line for stderr and the exit code. Returned up
/// to `cmd::dispatch`, which prints it once.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct CmdError {
    /// Who says it: "iolens", or "iolens doctor" and the like.
    program: &'static str,
    message: String,
    code: i32,
}

impl CmdError {
    /// A usage or configuration error (exit 2): the command line or a job is wrong.
    pub(super) fn usage(message: impl Into<String>) -> Self {
        Self::with_code(EXIT_USAGE, message)
    }

    /// The work failed (exit 1): an I/O error, a file that cannot be written.
    pub(super) fn run_failed(message: impl Into<String>) -> Self {
        Self::with_code(EXIT_RUN_FAILED, message)
    }

    fn with_code(code: i32, message: impl Into<String>) -> Self {
        CmdError {
            program: "iolens",
            message: message.into(),
            code,
        }
    }

    /// The same error said by `program` instead of "iolens".
    pub(super) fn said_by(self, program: &'static str) -> Self {
        CmdError { program, ..self }
    }

    /// The exit code for it.
    /// What went wrong, without who says it.
    pub(super) fn message(&self) -> &str {
        &self.message
    }

    pub(super) fn code(&self) -> i32 {
        self.code
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.program, self.message)
    }
}

/// Where runs are remembered: `--db PATH` / `IOLENS_DB` / the data directory; `--no-history` skips it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HistoryFlags {
    pub db: Option<PathBuf>,
    pub enabled: bool,
    /// Say on stderr where the run was saved (not when started as `fio`).
    pub announce: bool,
}

impl Default for HistoryFlags {
    fn default() -> Self {
        HistoryFlags {
            db: None,
            enabled: true,
            announce: true,
        }
    }
}

impl HistoryFlags {
    /// From a subcommand's `--db` and `--no-history`.
    pub(super) fn new(db: &DbArgs, no_history: bool) -> Self {
        HistoryFlags {
            db: db.db.clone(),
            enabled: !no_history,
            announce: true,
        }
    }

    /// From run's flags: `--db`, `--no-history`, and silent about the history when
    /// iolens' notes stay off stderr (started as `fio`).
    pub(super) fn for_run(flags: &RunFlags) -> Self {
        HistoryFlags {
            announce: flags.notes_on_stderr(),
            ..Self::new(&flags.db, flags.no_history)
        }
    }

    /// The line a command that stores its runs by default opens with, `program`
    /// saying it: where they go and how to see them. None when nothing is stored
    /// (`--no-history`) or nothing said (started as `fio`).
    pub(super) fn where_stored(&self, program: &str) -> Option<String> {
        if !self.enabled || !self.announce {
            return None;
        }
        Some(match store::resolve_path(self.db.as_deref()) {
            Ok(path) => format!(
                "{program}: results are stored in {} (see `iolens history`; --no-history to skip)",
                path.display()
            ),
            Err(e) => format!("{program}: results cannot be stored: {e}"),
        })
    }

    /// Say `where_stored` on stderr.
    pub(super) fn say_where_stored(&self, program: &str) {
        if let Some(line) = self.where_stored(program) {
            eprintln!("{line}");
        }
    }

    pub(super) fn open(&self) -> Result<Store, HistoryError> {
        let path = store::resolve_path(self.db.as_deref())?;
        Store::open(&path).map_err(|source| HistoryError::Open { path, source })
    }

    /// Store `reports` as one batch unless `--no-history`. The run already
    /// succeeded, so a history problem is a warning, not a failure.
    pub(super) fn record(&self, reports: &[RunReport]) {
        if !self.enabled || reports.is_empty() {
            return;
        }
        let stored = self.open().and_then(|mut store| {
            let first = store.insert(&reports[0], None)?;
            for r in &reports[1..] {
                store.insert(r, Some(first))?;
            }
            Ok(first)
        });
        match stored {
            _ if !self.announce => {}
            Ok(id) => {
                eprintln!("iolens: saved in the history as run {id} (see `iolens show {id}`)")
            }
            Err(e) => eprintln!("iolens: warning: not saved in the history: {e}"),
        }
    }
}

/// The rows a listing could read; each damaged run it skipped is named on stderr.
pub(super) fn skipping_damaged<T>(read: crate::store::Read<T>) -> Vec<T> {
    for damaged in &read.damaged {
        eprintln!("iolens: {damaged}: skipped");
    }
    read.items
}

/// Why the history could not be opened or queried.
#[derive(Debug, thiserror::Error)]
pub(super) enum HistoryError {
    /// No database path, or a query on the open database failed.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The database could not be opened.
    #[error("{}: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: store::StoreError,
    },
}

/// `iolens run`'s words given as a list (to `fio`, to show-jobs) parsed by clap and
/// handed to `then`; clap's `--help` is printed instead (exit 0).
pub(super) fn with_run_args(
    words: &[String],
    then: impl FnOnce(RunArgs) -> Result<i32, CmdError>,
) -> Result<i32, CmdError> {
    match cli::parse_run_line(words) {
        Ok(run) => then(run),
        Err(e) if e.use_stderr() => Err(CmdError::usage(cli::error_line(&e))),
        Err(help) => {
            help.print()
                .map_err(|e| CmdError::run_failed(format!("stdout: {e}")))?;
            Ok(EXIT_OK)
        }
    }
}

/// Jobs ready to run: as given (with their layers, for the report and show-jobs) and resolved.
pub(super) struct LoadedJobs {
    pub layered: Vec<LayeredJob>,
    pub specs: Vec<job::spec::JobSpec>,
}

/// Command-line options and job files → resolved jobs; warnings go to stderr (when
/// iolens' notes do: not when started as `fio`).
pub(super) fn load_jobs(flags: &RunFlags, job_args: &[String]) -> Result<LoadedJobs, CmdError> {
    let lenient = flags.fio_compat == Some(FioCompat::Lenient);
    let line = job::parse_command_line(job_args).map_err(|e| CmdError::usage(e.to_string()))?;
    // ${RANK} and the like, from the launcher's variables
    let launch = cluster::Launch::of_this_process();
    let env = |name: &str| cluster::variable(name, launch).or_else(|| std::env::var(name).ok());
    let cx = jobfile::Context {
        system: expr::SystemValues::of_this_machine(),
        missing_env: match lenient {
            true => expr::MissingEnv::Empty,
            false => expr::MissingEnv::Error,
        },
        env: &env,
    };
    let (mut layered, mut warnings) =
        jobfile::assemble(&line.global, &line.jobs, &line.files, &flags.section, &cx)
            .map_err(|e| CmdError::usage(e.to_string()))?;
    if lenient {
        warnings.extend(lenient::relax(&mut layered));
    }
    let mut resolved = if flags.parse_only && layered.is_empty() && line.files.is_empty() {
        // fio's --parse-only reads options given before any job into its defaults and
        // stops there: they are checked (and traced) as a job of their own, and no job is shown.
        let defaults = RawJob::new("global", line.global.origin.clone());
        job::resolve(&defaults, std::slice::from_ref(&line.global))
    } else {
        job::resolve_layered(&layered)
    }
    .map_err(|e| CmdError::usage(e.to_string()))?;
    job::spec::place_state_files(&mut resolved.jobs, flags.aux_path.as_deref());
    // fio refuses them while parsing, so --parse-only does too
    if flags.readonly {
        fileset::refuse_writing_jobs(&resolved.jobs).map_err(|e| CmdError::usage(e.to_string()))?;
    }
    let mut all_warnings = warnings.iter().chain(&resolved.warnings);
    if flags.warnings_fatal {
        if let Some(first) = all_warnings.next() {
            return Err(CmdError::usage(format!(
                "{first} (--warnings-fatal: a warning about the jobs is an error)"
            )));
        }
    }
    if flags.notes_on_stderr() {
        for w in all_warnings {
            eprintln!("iolens: warning: {w}");
        }
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
    readonly: bool,
    observe_interval: Duration,
    timeline: bool,
    eta: EtaMode,
    io_timeout: Option<Duration>,
    /// The run's warnings go to stderr (`RunFlags::notes_on_stderr`).
    notes: bool,
}

impl JobSet {
    /// Load job files and options with run's flags; `command_line` is kept for the report.
    pub(super) fn load(
        flags: &RunFlags,
        job_args: &[String],
        command_line: &[String],
    ) -> Result<JobSet, CmdError> {
        let loaded = load_jobs(flags, job_args)?;
        Ok(JobSet {
            specs: loaded.specs,
            command_line: command_line.to_vec(),
            allow_device_write: flags.allow_destructive,
            readonly: flags.readonly,
            observe_interval: flags.observe_interval.unwrap_or(DEFAULT_INTERVAL),
            timeline: flags.timeline,
            eta: flags.eta.unwrap_or_default(),
            io_timeout: flags.io_timeout,
            notes: flags.notes_on_stderr(),
        })
    }

    /// The jobs, resolved.
    pub(super) fn specs(&self) -> &[job::spec::JobSpec] {
        &self.specs
    }

    /// Run as `rank` of a run on several ranks: generated file names carry it.
    pub(super) fn place_on_rank(&mut self, rank: u32) {
        for spec in &mut self.specs {
            spec.target.rank = Some(rank);
        }
    }
}

/// Ctrl-C handling for a command that runs jobs.
pub(super) fn stop_flag() -> Result<Arc<AtomicBool>, CmdError> {
    stop_signal::install_stop_handler(true)
        .map_err(|e| CmdError::run_failed(format!("cannot install the Ctrl-C handler: {e}")))
}

/// One full run of the job set, its findings judged; `series`: which run of
/// `--warmup`/`--repeat` it is. A run whose stuck worker threads are left behind
/// (they cannot be joined) does not return: its partial outcome goes to
/// `on_abandoned`, whose code the process exits with; without one it exits 1
/// without a report.
pub(super) fn run_once(
    jobs: &JobSet,
    stop: &AtomicBool,
    status: Option<StatusReports>,
    on_abandoned: Option<&dyn Fn(RunOutcome) -> i32>,
    cluster: Option<(&dyn ClusterLink, &Path)>,
    series: Option<SeriesRun>,
) -> Result<RunOutcome, CmdError> {
    let left_behind = |outcome: RunOutcome| -> Infallible {
        let code = match on_abandoned {
            Some(hand_on) => {
                let outcome = judged(outcome);
                say_warnings(jobs, &outcome.warnings);
                hand_on(outcome)
            }
            None => {
                eprintln!("iolens: watchdog: stuck worker threads did not come back; exiting without a report");
                EXIT_RUN_FAILED
            }
        };
        std::process::exit(code)
    };
    let progress = progress::live_progress(jobs.eta);
    let request = RunRequest {
        jobs: &jobs.specs,
        command_line: jobs.command_line.clone(),
        allow_device_write: jobs.allow_device_write,
        readonly: jobs.readonly,
        observe_interval: jobs.observe_interval,
        on_second: jobs.timeline.then_some(print_timeline as SecondHook),
        stop,
        status,
        progress: progress.as_ref().map(|p| p as &dyn GroupProgress),
        io_timeout: jobs.io_timeout,
        cluster: cluster.map(|(link, _)| link),
        rank_file: cluster.map(|(_, file)| file),
        series,
    };
    let outcome = runner::run(&request, &left_behind).map_err(|e| match e {
        TargetError::Config(_) => CmdError::usage(e.to_string()),
        _ => CmdError::run_failed(e.to_string()),
    })?;
    let outcome = judged(outcome);
    say_warnings(jobs, &outcome.warnings);
    Ok(outcome)
}

/// The outcome with its report's findings.
fn judged(mut outcome: RunOutcome) -> RunOutcome {
    outcome.report.findings = diagnose(&outcome.report);
    outcome
}

/// The run's warnings on stderr, when the job set's notes go there.
fn say_warnings(jobs: &JobSet, warnings: &[String]) {
    for w in warnings.iter().filter(|_| jobs.notes) {
        eprintln!("iolens: warning: {w}");
    }
}

/// `--timeline`: stderr, so a JSON report on stdout stays valid.
fn print_timeline(obs: &Observations, from: usize) {
    if from == 0 {
        eprintln!("{}", timeline::HEADER);
    }
    eprintln!("{}", timeline::line(obs, from));
}

/// 1 when the run was interrupted or a job failed (each said on stderr), 128 + the
/// signal when one stopped it, else 0.
pub(super) fn run_status(report: &RunReport) -> i32 {
    let mut code = EXIT_OK;
    if report.interrupted {
        eprintln!("iolens: interrupted: the results are partial");
        code = EXIT_RUN_FAILED;
    }
    // Stopped by SIGINT/SIGTERM/SIGHUP: the shell's 130/143/129, after the partial report.
    if let Some(sig) = stop_signal::received_signal() {
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

/// `--fail-on`: a run that worked (`code` 0) exits `EXIT_FINDING` when one of
/// `findings` is at least `threshold` severe; any other code stays.
pub(super) fn fail_on<'a>(
    code: i32,
    threshold: Option<Severity>,
    findings: impl IntoIterator<Item = &'a Finding>,
) -> i32 {
    let Some(threshold) = threshold else {
        return code;
    };
    let fired: Vec<&str> = findings
        .into_iter()
        .filter(|f| f.severity >= threshold)
        .map(|f| f.code.as_str())
        .collect();
    if code != EXIT_OK || fired.is_empty() {
        return code;
    }
    eprintln!(
        "iolens: exit {EXIT_FINDING}: --fail-on={} and the findings {} fired",
        threshold.name(),
        fired.join(", ")
    );
    EXIT_FINDING
}

/// The exit code of work finished on a way out that does not return to
/// `cmd::dispatch` (a run left with stuck workers), its error said as dispatch would.
pub(super) fn said_code(result: Result<i32, CmdError>) -> i32 {
    result.unwrap_or_else(|e| {
        eprintln!("{e}");
        e.code()
    })
}

/// Where the report goes (`--output FILE`, else stdout), opened before the run.
pub(super) fn open_report(path: Option<&Path>) -> Result<Destination, CmdError> {
    Destination::open(path)
        .map_err(|e| CmdError::run_failed(format!("cannot create the report file: {e}")))
}

/// Write a rendered report where it goes.
pub(super) fn emit(to: &mut Destination, rendered: &str) -> Result<(), CmdError> {
    to.write(rendered)
        .map_err(|e| CmdError::run_failed(format!("cannot write the report: {e}")))
}

/// Text that is not a run's report (lists, tables, help) on stdout; exit 0 once written.
pub(super) fn print(text: &str) -> Result<i32, CmdError> {
    output::write_stdout(text).map_err(|e| CmdError::run_failed(format!("stdout: {e}")))?;
    Ok(EXIT_OK)
}

/// Write a rendered HTML report, saying where it went.
pub(super) fn write_html(path: &Path, html: &str) -> Result<(), CmdError> {
    std::fs::write(path, html)
        .map_err(|e| CmdError::run_failed(format!("cannot write {}: {e}", path.display())))?;
    eprintln!("iolens: HTML report written to {}", path.display());
    Ok(())
}

const FIO_FORMATS_REFUSED: &str =
    "--repeat writes normal or iolens-json output (fio's formats have no place for repetitions)";

/// `--repeat N [--warmup K]` of run and quick.
pub(super) struct Repetitions<'a> {
    pub repetitions: u32,
    pub warmup: u32,
    pub formats: &'a [Format],
    pub output: Option<&'a Path>,
    pub history: &'a HistoryFlags,
    pub compare_with: Option<i64>,
    /// `--html FILE`: the repetitions and their statistics as an HTML report; with
    /// `compare_with`, the comparison page with the repetitions' charts.
    pub html: Option<&'a Path>,
    /// `--fail-on`: a finding of any repetition, or of the statistics, counts.
    pub fail_on: Option<Severity>,
    pub quiet_findings: bool,
}

impl Repetitions<'_> {
    /// fio's formats have no place for repetitions.
    pub(super) fn refuse_fio_formats(&self) -> Result<(), CmdError> {
        if self
            .formats
            .iter()
            .any(|f| !matches!(f, Format::Normal | Format::IolensJson))
        {
            return Err(CmdError::usage(FIO_FORMATS_REFUSED));
        }
        Ok(())
    }
}

/// Every run of `--warmup K --repeat N` in order, each a full run (on several
/// ranks, a run of every rank together); the measured runs' reports and the
/// worst exit code. On one host a failed run ends the series; ranks, which meet
/// at every group's barrier, all run the whole series unless stopped. Only the
/// first rank says which run starts. `on_abandoned` gets the run whose stuck
/// workers were left behind, the measured reports before it and its partial
/// outcome (see `run_once`).
pub(super) fn run_series(
    jobs: &JobSet,
    o: &Repetitions,
    stop: &AtomicBool,
    cluster: Option<(&dyn ClusterLink, &Path)>,
    on_abandoned: Option<&dyn Fn(SeriesRun, Vec<RunReport>, RunOutcome) -> i32>,
) -> Result<(Vec<RunReport>, i32), CmdError> {
    // a rank runs its one plain run here too, untagged
    let series = o.warmup > 0 || o.repetitions > 1;
    let reports = RefCell::new(Vec::with_capacity(o.repetitions as usize));
    let mut code = EXIT_OK;
    for run in SeriesRun::all(o.warmup, o.repetitions) {
        if cluster.is_none_or(|(link, _)| link.rank().rank == 0) {
            eprintln!("iolens: {run}");
        }
        let so_far = &reports;
        let abandoned = on_abandoned
            .map(|hand_on| move |outcome: RunOutcome| hand_on(run, so_far.take(), outcome));
        let outcome = run_once(
            jobs,
            stop,
            None,
            abandoned.as_ref().map(|f| f as &dyn Fn(RunOutcome) -> i32),
            cluster,
            series.then_some(run),
        )?;
        let status = run_status(&outcome.report);
        code = code.max(status);
        if !run.warmup {
            reports.borrow_mut().push(outcome.report);
        }
        let ends_series = match cluster {
            None => status != EXIT_OK,
            Some(_) => stop_signal::stop_requested(stop),
        };
        if ends_series {
            break;
        }
    }
    Ok((reports.into_inner(), code))
}

/// The whole job set N times, each a full run; the table (or JSON with every
/// repetition) and the findings. The exit code is the worst run's. A run whose
/// stuck workers are left behind is reported with the repetitions before it,
/// partial and marked, and the process exits 1.
pub(super) fn run_repeated(
    jobs: &JobSet,
    o: &Repetitions,
    stop: &AtomicBool,
    cluster: Option<(&dyn ClusterLink, &Path)>,
) -> Result<i32, CmdError> {
    let on_abandoned = |run: SeriesRun, mut reports: Vec<RunReport>, outcome: RunOutcome| {
        let code = run_status(&outcome.report);
        if run.warmup {
            eprintln!("iolens: {run} was left with stuck workers: no repetition was measured");
        } else {
            reports.push(outcome.report);
        }
        said_code(report_repeated(reports, o, code))
    };
    let (reports, code) = run_series(jobs, o, stop, cluster, Some(&on_abandoned))?;
    report_repeated(reports, o, code)
}

/// The repetitions' statistics written, stored and judged; `code`: the worst run's.
fn report_repeated(reports: Vec<RunReport>, o: &Repetitions, code: i32) -> Result<i32, CmdError> {
    if reports.is_empty() {
        return Ok(code);
    }
    o.history.record(&reports);
    let result = repetitions::build(reports, o.warmup);
    let document = Document::Repeat(&result);
    let rendered = report::render_each(&document, o.formats)
        .ok_or_else(|| CmdError::usage(FIO_FORMATS_REFUSED))?;
    emit(&mut open_report(o.output)?, &rendered)?;
    output::print_findings_summary(&result.findings, o.formats, o.quiet_findings);
    match (o.html, o.compare_with) {
        (Some(path), None) => {
            let page =
                report::render(&document, Format::Html).expect("a --repeat has an HTML page");
            write_html(path, &page)?;
        }
        // With a baseline the page is the comparison, with the repetitions' charts.
        (html, Some(id)) => {
            comparison::against_history(id, &result.repetitions, o.history, html, Some(&result))?
        }
        (None, None) => {}
    }
    let every_finding = result.repetitions.iter().flat_map(|r| &r.findings);
    Ok(fail_on(
        code,
        o.fail_on,
        every_finding.chain(&result.findings),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_error_reads_as_the_store_said_it_after_the_database() {
        let open = HistoryError::Open {
            path: "h.db".into(),
            source: store::StoreError::Io {
                path: "d".into(),
                source: std::io::Error::from_raw_os_error(13),
            },
        };
        assert_eq!(
            open.to_string(),
            "h.db: history database: d: Permission denied (os error 13)"
        );
        let unplaced = HistoryError::from(store::StoreError::NoLocation);
        assert_eq!(
            unplaced.to_string(),
            "no history database: set --db PATH, IOLENS_DB, XDG_DATA_HOME or HOME"
        );
    }

    #[test]
    fn an_error_is_one_line_by_its_program_with_its_exit_code() {
        let usage = CmdError::usage("--pairs 0: give at least one pair");
        assert_eq!(
            (usage.to_string().as_str(), usage.code()),
            ("iolens: --pairs 0: give at least one pair", EXIT_USAGE),
            "expected a usage error to print as iolens' one line and exit 2"
        );
        let failed = CmdError::run_failed("/x: ENOENT").said_by("iolens doctor");
        assert_eq!(
            (failed.to_string().as_str(), failed.code()),
            ("iolens doctor: /x: ENOENT", EXIT_RUN_FAILED),
            "expected a failure said by a subcommand to name it and exit 1"
        );
    }

    #[test]
    fn fail_on_turns_a_clean_exit_into_3_at_its_severity_or_worse() {
        let finding = |severity| Finding {
            code: "x".into(),
            severity,
            title: String::new(),
            evidence: Vec::new(),
            advice: String::new(),
            at_ns: None,
        };
        let info = [finding(Severity::Info)];
        let warning = [finding(Severity::Info), finding(Severity::Warning)];
        let cases = [
            (EXIT_OK, None, &warning[..], EXIT_OK, "no --fail-on"),
            (
                EXIT_OK,
                Some(Severity::Warning),
                &info[..],
                EXIT_OK,
                "info under warning",
            ),
            (
                EXIT_OK,
                Some(Severity::Warning),
                &warning[..],
                EXIT_FINDING,
                "a warning",
            ),
            (
                EXIT_OK,
                Some(Severity::Info),
                &info[..],
                EXIT_FINDING,
                "info under info",
            ),
            (
                EXIT_OK,
                Some(Severity::Info),
                &[][..],
                EXIT_OK,
                "no findings",
            ),
            (
                EXIT_RUN_FAILED,
                Some(Severity::Info),
                &warning[..],
                EXIT_RUN_FAILED,
                "a failed run",
            ),
        ];
        for (code, threshold, findings, expected, case) in cases {
            assert_eq!(
                fail_on(code, threshold, findings),
                expected,
                "{case}: expected exit {expected} from exit {code}, --fail-on {threshold:?}"
            );
        }
    }

    #[test]
    fn the_history_line_names_the_database_and_the_history_command_unless_nothing_is_stored() {
        let stored = HistoryFlags::new(
            &DbArgs {
                db: Some(PathBuf::from("/h/history.db")),
            },
            false,
        );
        assert_eq!(
            stored.where_stored("iolens quick").as_deref(),
            Some(
                "iolens quick: results are stored in /h/history.db \
                 (see `iolens history`; --no-history to skip)"
            )
        );
        let skipped = HistoryFlags {
            enabled: false,
            ..stored.clone()
        };
        let as_fio = HistoryFlags {
            announce: false,
            ..stored
        };
        assert_eq!(
            (
                skipped.where_stored("iolens"),
                as_fio.where_stored("iolens")
            ),
            (None, None),
            "expected nothing said with --no-history, nor when started as `fio`"
        );
    }

    #[test]
    fn history_flags_follow_db_and_no_history() {
        let db = DbArgs {
            db: Some(PathBuf::from("h.db")),
        };
        assert_eq!(
            HistoryFlags::new(&db, true),
            HistoryFlags {
                db: Some(PathBuf::from("h.db")),
                enabled: false,
                announce: true,
            },
            "expected --no-history to turn recording off and --db to be kept"
        );
        assert!(HistoryFlags::new(&DbArgs::default(), false).enabled);
    }
}
