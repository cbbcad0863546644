//! Worker processes: fio runs each worker as a process unless `thread` is set.
//!
//! The parent keeps one proxy thread per worker process, so a process worker
//! takes part in its group exactly like a thread worker: it passes the group's
//! start barrier and returns a `WorkerResult`. Parent and child talk in lines
//! over the child's stdin and stdout:
//!
//! ```text
//! parent → child   {WorkerTask as JSON}
//! child  → parent  ready                  targets opened, engine set up
//! parent → child   go                     every worker of the group is ready
//! parent → child   stop                   (only if the run is stopped early)
//! child  → parent  status {WorkerResult}  (with --status-interval: a snapshot, repeated)
//! child  → parent  {WorkerResult as JSON}
//! ```
//!
//! The child opens its own descriptors, with the flags the parent used, and
//! keeps them until it exits. An I/O error travels inside the result; a
//! child that dies or answers nonsense becomes a failed result naming its
//! exit status and last line of stderr.

use super::ctx::{task_files, OpenFile, StartSignal, TaskFile, WorkerCtx};
use super::result::{IoFailure, WorkerResult};
use super::status::StatusSlot;
use super::stop_signal;
use crate::debug::{self, DebugType};
use crate::fileset::{self, FileSet};
use crate::job::spec::JobSpec;
use crate::observe::live::{LiveBoard, LiveCounters, SharedSlot};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// The hidden subcommand a worker process runs.
pub(crate) const WORKER_SUBCOMMAND: &str = "__worker";

const READY: &str = "ready";
const GO: &str = "go";
const STOP: &str = "stop";
/// Prefix of an interim snapshot line (`--status-interval`).
const STATUS: &str = "status ";

/// How often a proxy looks at the run's stop flag to pass it on.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Everything a worker process needs to run one worker.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WorkerTask {
    pub job: JobSpec,
    pub job_index: usize,
    pub worker_index: u32,
    pub files: Vec<TaskFile>,
    pub buffer_align: usize,
    pub seed: u64,
    pub worker_number: u64,
    /// `flow`: the live-board slots of the workers in this job's flow.
    #[serde(default)]
    pub flow_members: Vec<usize>,
    /// With `--status-interval`: how often the worker publishes a snapshot.
    pub status_every: Option<Duration>,
    /// The worker's live counters in the parent's shared memory, when it has some.
    pub live: Option<SharedSlot>,
    /// `--io-timeout`.
    #[serde(default)]
    pub io_timeout: Option<Duration>,
    /// `--debug=io`: the worker traces its I/Os.
    #[serde(default)]
    pub debug_io: bool,
}

impl WorkerTask {
    pub(super) fn new(
        req: &super::RunRequest,
        files: &FileSet,
        job_index: usize,
        worker_index: u32,
        status_every: Option<Duration>,
        live: Option<SharedSlot>,
    ) -> Self {
        let job = &req.jobs[job_index];
        WorkerTask {
            job: job.clone(),
            job_index,
            worker_index,
            files: task_files(files, job_index, worker_index),
            buffer_align: files.buffer_align(job_index),
            seed: super::seed_of(job, job_index, worker_index),
            worker_number: super::worker_number(req.jobs, job_index, worker_index),
            flow_members: super::flow::member_slots(req.jobs, job_index),
            status_every,
            live,
            io_timeout: req.io_timeout,
            debug_io: debug::enabled(DebugType::Io),
        }
    }

    /// "job 'name' worker N", for messages.
    fn who(&self) -> String {
        format!("job '{}' worker {}", self.job.name, self.worker_index)
    }
}

// ---------------------------------------------------------------- parent side

/// Run `task` in a child process of this executable, on the calling (proxy) thread.
/// Once `given_up` is set (the watchdog gave up on a child stuck in the kernel,
/// which even SIGKILL does not free), stop waiting for its answer: its result is
/// then what its live counters say.
pub(super) fn run_in_process(
    task: &WorkerTask,
    start: &dyn StartSignal,
    stop: &AtomicBool,
    given_up: &AtomicBool,
    status: Option<&StatusSlot>,
    live: LiveCounters<'_>,
) -> WorkerResult {
    let program = std::env::current_exe();
    run_in_program(program, task, start, stop, given_up, status, live)
}

/// Run `task` as `program __worker`. Always passes `start` exactly once,
/// whatever happens to the child, so the rest of the group never waits for
/// a worker that is not coming.
fn run_in_program(
    program: std::io::Result<PathBuf>,
    task: &WorkerTask,
    start: &dyn StartSignal,
    stop: &AtomicBool,
    given_up: &AtomicBool,
    status: Option<&StatusSlot>,
    live: LiveCounters<'_>,
) -> WorkerResult {
    let spawned = program.and_then(|program| WorkerProcess::spawn(&program, task));
    let (mut child, stdin) = match spawned {
        Ok(spawned) => spawned,
        Err(e) => {
            start.wait();
            return WorkerResult::failed(IoFailure {
                message: format!(
                    "{}: cannot start a worker process: {}",
                    task.who(),
                    refused_start(&e)
                ),
                errno: e.raw_os_error().unwrap_or(0),
            });
        }
    };
    let ready = child.wait_ready(given_up);
    start.wait();
    if let Err(what) = ready {
        return child.fail(task, &what.to_string());
    }
    let finished = AtomicBool::new(false);
    live.worker_process_started(child.child.id());
    let started = std::time::Instant::now();
    let outcome = std::thread::scope(|scope| {
        let forwarder = std::thread::Builder::new().name("worker stop".into());
        if let Err(e) = forwarder.spawn_scoped(scope, || forward_stop(stdin, stop, &finished)) {
            return Err(Unanswered::Failed(format!(
                "cannot start a thread: {}",
                refused_start(&e)
            )));
        }
        let outcome = child.read_result(status, given_up);
        finished.store(true, Ordering::Relaxed);
        outcome
    });
    live.worker_finished();
    match outcome {
        Ok(result) => child.reap(task, result),
        // Waiting for it would hang with it: leave it (killed already, it exits
        // when the kernel lets it go) and report what it had done.
        Err(Unanswered::LeftBehind) => WorkerResult::from_live(
            &live.totals(),
            child.child.id(),
            started.elapsed(),
            IoFailure {
                message: format!("{}: left behind, stuck in the kernel", task.who()),
                errno: libc::ETIMEDOUT,
            },
        ),
        Err(Unanswered::Failed(what)) => child.fail(task, &what),
    }
}

/// Why the system refused a worker's process or thread; when it ran out of them
/// (EAGAIN), with the limits in force and what to do.
pub(super) fn refused_start(e: &std::io::Error) -> String {
    let why = crate::errno::describe(e);
    match e.raw_os_error() {
        Some(libc::EAGAIN) => format!(
            "{why} (limits: {}): lower numjobs or raise the limit",
            crate::observe::cgroup::pids::describe_limits()
        ),
        _ => why,
    }
}

/// Why a worker process gave no (valid) answer.
#[derive(Debug)]
enum Unanswered {
    Failed(String),
    /// The watchdog gave up on it while it was stuck.
    LeftBehind,
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswered::Failed(what) => f.write_str(what),
            Unanswered::LeftBehind => f.write_str("it was left behind, stuck in the kernel"),
        }
    }
}

/// Send `go`, then `stop` if the run is stopped before the child is done.
/// Returning drops `stdin`, which the child also takes as a stop.
fn forward_stop(mut stdin: ChildStdin, stop: &AtomicBool, finished: &AtomicBool) {
    if writeln!(stdin, "{GO}").is_err() {
        // The child is gone; reading its result will say why.
        return;
    }
    while !finished.load(Ordering::Relaxed) {
        if stop_signal::stop_requested(stop) {
            // Ignoring a failed write is fine: a child that cannot hear has stopped already.
            let _ = writeln!(stdin, "{STOP}");
            return;
        }
        std::thread::sleep(STOP_POLL);
    }
}

/// A running worker process and what it says.
struct WorkerProcess {
    child: Child,
    /// The lines of its stdout, read by a detached thread: a child stuck in
    /// the kernel keeps its stdout open forever, and only that thread waits with it.
    lines: Receiver<std::io::Result<String>>,
    /// The child's stderr goes to an unnamed file, not a pipe: a chatty child
    /// can then never block on a full pipe the parent does not read yet.
    stderr: File,
}

impl WorkerProcess {
    /// Start `program __worker` and send it `task`; also returns the pipe to its stdin.
    fn spawn(program: &Path, task: &WorkerTask) -> std::io::Result<(Self, ChildStdin)> {
        let stderr = tempfile::tempfile()?;
        let mut child = Command::new(program)
            .arg(WORKER_SUBCOMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr.try_clone()?)
            .spawn()?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = serde_json::to_string(task).map_err(std::io::Error::other)?;
        line.push('\n');
        // A child that died at once shows up in wait_ready, with its stderr.
        let _ = stdin.write_all(line.as_bytes());
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("worker stdout".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    if send.send(line).is_err() {
                        return;
                    }
                }
            })?;
        let process = WorkerProcess {
            child,
            lines,
            stderr,
        };
        Ok((process, stdin))
    }

    fn wait_ready(&mut self, given_up: &AtomicBool) -> Result<(), Unanswered> {
        let line = self.read_line(given_up)?;
        if line == READY {
            Ok(())
        } else {
            Err(Unanswered::Failed(format!(
                "it said {line:?} instead of {READY:?}"
            )))
        }
    }

    /// Read the final result, passing interim snapshots on to `status` on the way.
    fn read_result(
        &mut self,
        status: Option<&StatusSlot>,
        given_up: &AtomicBool,
    ) -> Result<WorkerResult, Unanswered> {
        let invalid = |what: &str, e: serde_json::Error| {
            Unanswered::Failed(format!("its {what} is not valid: {e}"))
        };
        loop {
            let line = self.read_line(given_up)?;
            let Some(snapshot) = line.strip_prefix(STATUS) else {
                return serde_json::from_str(&line).map_err(|e| invalid("result", e));
            };
            let snapshot =
                serde_json::from_str(snapshot).map_err(|e| invalid("status snapshot", e))?;
            if let Some(slot) = status {
                slot.publish(snapshot);
            }
        }
    }

    fn read_line(&mut self, given_up: &AtomicBool) -> Result<String, Unanswered> {
        loop {
            match self.lines.recv_timeout(STOP_POLL) {
                Ok(Ok(line)) => return Ok(line.trim_end().to_string()),
                Ok(Err(e)) => {
                    return Err(Unanswered::Failed(format!("reading from it failed: {e}")))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Unanswered::Failed(
                        "it exited without answering".to_string(),
                    ))
                }
                Err(RecvTimeoutError::Timeout) if given_up.load(Ordering::Relaxed) => {
                    return Err(Unanswered::LeftBehind)
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// The child answered: wait for it to exit and hand back its result.
    fn reap(mut self, task: &WorkerTask, result: WorkerResult) -> WorkerResult {
        match self.child.wait() {
            Ok(status) if status.success() => result,
            Ok(status) => self.failure(task, &format!("it {status} after answering")),
            Err(e) => self.failure(task, &format!("waiting for it failed: {e}")),
        }
    }

    /// The child misbehaved: make sure it is gone and say what happened.
    fn fail(mut self, task: &WorkerTask, what: &str) -> WorkerResult {
        // kill fails only when the child has exited already, which is what we want.
        let _ = self.child.kill();
        let status = match self.child.wait() {
            Ok(status) => status.to_string(),
            Err(e) => format!("its exit status is unknown ({e})"),
        };
        self.failure(task, &format!("{what}; {status}"))
    }

    fn failure(&mut self, task: &WorkerTask, what: &str) -> WorkerResult {
        let message = match self.last_stderr_line() {
            Some(line) => format!(
                "{}: worker process failed: {what}; its last message: {line}",
                task.who()
            ),
            None => format!("{}: worker process failed: {what}", task.who()),
        };
        WorkerResult::failed(IoFailure { message, errno: 0 })
    }

    fn last_stderr_line(&mut self) -> Option<String> {
        self.stderr.rewind().ok()?;
        let mut bytes = Vec::new();
        self.stderr.read_to_end(&mut bytes).ok()?;
        // Lossy is enough: the text is only shown to the user.
        stderr_summary(&String::from_utf8_lossy(&bytes))
    }
}

/// What a dead child's stderr says: its panic (location and message, not the
/// backtrace or the hint after it) when it panicked, else its last line.
fn stderr_summary(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let Some(start) = lines.iter().position(|l| l.contains(" panicked at ")) else {
        return lines.last().map(|l| l.to_string());
    };
    // `start` is a position in `lines`, so both slices are in bounds.
    let message = lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("note: ") && !l.starts_with("stack backtrace:"));
    let panic: Vec<&str> = std::iter::once(&lines[start])
        .chain(message)
        .copied()
        .collect();
    Some(panic.join(" "))
}

// ----------------------------------------------------------------- child side

/// Why a worker process could not run its task at all.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChildError {
    #[error("cannot read the task: {0}")]
    Task(String),
    #[error("{who}: {path}: open: {source}")]
    Open {
        who: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Its signal thread could not be started: the same limits as a refused worker.
    #[error("cannot start a thread for the stop handler: {}", refused_start(.0))]
    StopHandler(std::io::Error),
    #[error("cannot talk to the parent: {0}")]
    Pipe(#[from] std::io::Error),
}

/// Child side of `--status-interval`: send the worker's latest snapshot to
/// the parent every `every` until the worker is done.
fn relay_status(slot: &StatusSlot, every: Duration, done: &AtomicBool) {
    // the worker's end cuts the wait short: `--status-interval=1h` held its process an hour
    while stop_signal::sleep_while(every, || !done.load(Ordering::Relaxed)) {
        let Some(snapshot) = slot.latest() else {
            continue;
        };
        let Ok(json) = serde_json::to_string(&snapshot) else {
            continue;
        };
        // stdout is locked per line, so snapshots never interleave with the final result.
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{STATUS}{json}")
            .and_then(|_| out.flush())
            .is_err()
        {
            return;
        }
    }
}

/// The body of `iolens __worker`: read a task from stdin, open its targets,
/// say `ready`, wait for `go`, run, and write the result to stdout.
pub(crate) fn serve_worker() -> Result<(), ChildError> {
    // First, so that a SIGINT to the whole process group stops this worker gracefully too.
    let stop = stop_signal::install_stop_handler(false).map_err(ChildError::StopHandler)?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let mut task: WorkerTask =
        serde_json::from_str(&line).map_err(|e| ChildError::Task(e.to_string()))?;
    if task.debug_io {
        debug::enable(DebugType::Io.alone());
    }
    // The names of a file operation engine share one placeholder descriptor.
    let mut placeholder: Option<Arc<File>> = None;
    let mut files = Vec::with_capacity(task.files.len());
    for f in &task.files {
        let file = match &placeholder {
            Some(shared) if f.open_mode.names_only => shared.clone(),
            _ => fileset::open_file(&f.open_at, f.open_mode)
                .map(Arc::new)
                .map_err(|source| ChildError::Open {
                    who: task.who(),
                    path: f.path.clone(),
                    source,
                })?,
        };
        if f.open_mode.names_only {
            placeholder = Some(file.clone());
        }
        files.push(file);
    }
    iolens_sys::clock::calibrate();
    let start = ParentGo { stop: stop.clone() };
    let slot = StatusSlot::default();
    let (board, index, unshared) = attach_live(task.live.as_ref());
    let mut ctx = WorkerCtx {
        job: &task.job,
        files: OpenFile::list(std::mem::take(&mut task.files), files),
        buffer_align: task.buffer_align,
        seed: task.seed,
        worker_number: task.worker_number,
        start: &start,
        stop: &stop,
        live: board.slot(index),
        // without the parent's board the peers cannot be seen: no flow control
        flow_members: match unshared {
            None => task
                .flow_members
                .iter()
                .map(|&slot| board.slot(slot))
                .collect(),
            Some(_) => Vec::new(),
        },
        status: None,
        io_timeout: task.io_timeout,
    };
    let done = AtomicBool::new(false);
    let mut result = std::thread::scope(|scope| {
        if let Some(every) = task.status_every {
            ctx.status = Some((&slot, every));
            let (slot, done) = (&slot, &done);
            scope.spawn(move || relay_status(slot, every, done));
        }
        let result = super::run_worker(task.job.engine.kind, ctx, task.worker_index);
        done.store(true, Ordering::Relaxed);
        result
    });
    result.notes.extend(unshared);
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &result).map_err(std::io::Error::other)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// The child's live counters: its slot on the parent's board, or a private
/// board (with a note saying why) when that cannot be mapped.
fn attach_live(shared: Option<&SharedSlot>) -> (LiveBoard, usize, Option<String>) {
    let Some(shared) = shared else {
        return (LiveBoard::new([1]), 0, None);
    };
    match shared.attach() {
        Ok(board) => (board, shared.index, None),
        Err(e) => {
            let note = format!(
                "cannot map the live counters at {}: {e}; the sampler sees none of this worker's I/O",
                shared.path.display()
            );
            (LiveBoard::new([1]), 0, Some(note))
        }
    }
}

/// The child's start signal: tell the parent `ready`, wait for its `go`.
struct ParentGo {
    stop: Arc<AtomicBool>,
}

impl StartSignal for ParentGo {
    fn wait(&self) {
        let mut out = std::io::stdout().lock();
        let told = writeln!(out, "{READY}").and_then(|()| out.flush());
        drop(out);
        let mut line = String::new();
        let heard = told.and_then(|()| std::io::stdin().lock().read_line(&mut line));
        if !matches!(heard, Ok(n) if n > 0 && line.trim_end() == GO) {
            // The parent is gone or confused: run nothing and report that.
            self.stop.store(true, Ordering::Relaxed);
            return;
        }
        let stop = self.stop.clone();
        std::thread::spawn(move || watch_for_stop(&stop));
    }
}

/// Stop on the parent's `stop`, or when its end of stdin closes (it died).
fn watch_for_stop(stop: &AtomicBool) {
    for line in std::io::stdin().lock().lines() {
        match line {
            Ok(l) if l.trim_end() == STOP => break,
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    stop.store(true, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileset::OpenMode;
    use crate::job::spec::SyncMode;
    use crate::job::{front::cli_args::parse_fio_args, resolve};
    use crate::stats::{RateSeries, WorkerStats};
    use iolens_sys::os::Rusage;
    use std::sync::atomic::AtomicU32;

    /// A task for job `t` on /tmp/f with `options` added.
    fn task(options: &[&str]) -> WorkerTask {
        let args: Vec<String> = ["--name=t", "--filename=/tmp/f"]
            .iter()
            .chain(options)
            .map(|s| s.to_string())
            .collect();
        let (global, jobs) = parse_fio_args(&args).unwrap();
        let job = resolve(&global, &jobs).unwrap().jobs.remove(0);
        WorkerTask {
            job,
            job_index: 0,
            worker_index: 2,
            files: vec![TaskFile {
                path: PathBuf::from("/tmp/f"),
                open_at: PathBuf::from("/proc/1/fd/3"),
                open_mode: OpenMode {
                    write: true,
                    direct: true,
                    sync: SyncMode::Dsync,
                    names_only: false,
                },
                size: 1 << 30,
                region_start: 4096,
                region_len: 1 << 20,
            }],
            buffer_align: 4096,
            seed: 42,
            worker_number: 1,
            flow_members: Vec::new(),
            status_every: Some(Duration::from_millis(250)),
            live: None,
            io_timeout: Some(Duration::from_secs(30)),
            debug_io: true,
        }
    }

    /// Counts how often a worker passed its start signal.
    #[derive(Default)]
    struct StartCount(AtomicU32);

    impl StartSignal for StartCount {
        fn wait(&self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn run_program(program: std::io::Result<PathBuf>) -> (WorkerResult, u32) {
        let start = StartCount::default();
        let board = LiveBoard::new([1]);
        let result = run_in_program(
            program,
            &task(&[]),
            &start,
            &AtomicBool::new(false),
            &AtomicBool::new(false),
            None,
            board.worker(0, 0),
        );
        (result, start.0.load(Ordering::Relaxed))
    }

    #[test]
    fn worker_result_survives_json_with_identical_percentiles() {
        let mut stats = WorkerStats::default();
        for ns in (1..5000u64).map(|i| i * i * 37 % 9_000_000 + 80) {
            stats.dirs[0].clat.record(ns);
            stats.dirs[0].lat.record(ns + 500);
            stats.dirs[0].ios += 1;
            stats.dirs[0].bytes += 4096;
        }
        stats.dirs[1].slat.record(1234);
        stats.sync_lat.record(2_000_000);
        stats.sync_ios = 1;
        stats.depth.record_level(3, 1);
        stats.depth.record_submit(8);
        let mut rates = RateSeries::default();
        rates.push_interval(1 << 20, 256, 500_000_000);
        let result = WorkerResult {
            stats,
            rates: [rates, RateSeries::default(), RateSeries::default()],
            cpu: Rusage {
                user_ns: 10,
                system_ns: 20,
                voluntary_ctxsw: 3,
                involuntary_ctxsw: 4,
                minor_faults: 5,
                major_faults: 6,
            },
            runtime_ns: 500_000_000,
            verify_ns: 100_000_000,
            error: Some(IoFailure {
                message: "read f at offset 0: EIO".to_string(),
                errno: 5,
            }),
            tolerated: crate::runner::error_tally::ErrorTally {
                count: 2,
                first_errno: 5,
            },
            notes: vec!["a note".to_string()],
            logs: None,
            verify: None,
            steadystate: None,
            latency_depth: Some(3),
            io_trace: Some(PathBuf::from("/tmp/trace")),
            left_behind: true,
            tid: 4321,
        };

        let json = serde_json::to_string(&result).unwrap();
        assert!(!json.contains('\n'), "the protocol is line based");
        let back: WorkerResult = serde_json::from_str(&json).unwrap();

        assert_eq!(back.stats, result.stats);
        let pcts = [1.0, 50.0, 99.0, 99.99];
        assert_eq!(
            back.stats.dirs[0].clat.percentiles(&pcts),
            result.stats.dirs[0].clat.percentiles(&pcts)
        );
        assert_eq!(back.rates, result.rates);
        assert_eq!(back.cpu, result.cpu);
        assert_eq!(back.runtime_ns, result.runtime_ns);
        assert_eq!(back.verify_ns, result.verify_ns);
        assert_eq!(
            back.error.map(|e| (e.message, e.errno)),
            Some(("read f at offset 0: EIO".to_string(), 5))
        );
        assert_eq!(back.tolerated, result.tolerated);
        assert_eq!(back.notes, result.notes);
        assert_eq!(
            back.io_trace, result.io_trace,
            "expected the --debug=io trace file to travel back"
        );
        assert!(
            back.left_behind,
            "expected a worker left behind to stay marked in its rank's results"
        );
        assert_eq!(back.tid, 4321, "expected the worker's pid to travel back");
    }

    #[test]
    fn a_child_maps_its_slot_or_keeps_private_counters_with_a_note() {
        let parent = LiveBoard::new([2]);
        let shared = parent.shared_slot(0, 1).unwrap();
        let (board, index, note) = attach_live(Some(&shared));
        assert_eq!((index, note), (1, None));
        board.slot(index).record_io(0, 512, 1);
        assert_eq!(parent.worker(0, 1).totals().ios, [1, 0]);

        let gone = SharedSlot {
            path: PathBuf::from("/nonexistent/live"),
            ..shared
        };
        let (board, index, note) = attach_live(Some(&gone));
        board.slot(index).record_io(0, 512, 1);
        assert_eq!(parent.worker(0, 1).totals().ios, [1, 0]);
        assert!(note.unwrap().contains("/nonexistent/live"));
        assert_eq!(attach_live(None).2, None);
    }

    #[test]
    fn task_survives_json() {
        let sent = task(&[
            "--rw=randrw",
            "--bssplit=4k/50:64k/50",
            "--random_distribution=zipf:1.2",
            "--runtime=3",
            "--rate=1m,2m",
        ]);
        let back: WorkerTask =
            serde_json::from_str(&serde_json::to_string(&sent).unwrap()).unwrap();
        assert_eq!(back.job, sent.job);
        assert_eq!(back.files[0].open_mode, sent.files[0].open_mode);
        assert_eq!(
            (
                back.files[0].region_start,
                back.files[0].region_len,
                back.seed,
                back.debug_io
            ),
            (4096, 1 << 20, 42, true)
        );
    }

    #[test]
    fn a_child_that_dies_reports_its_exit_status_and_last_message() {
        // `sh __worker` fails: there is no script of that name.
        let (result, starts) = run_program(Ok(PathBuf::from("sh")));
        let message = result.error.unwrap().message;
        assert!(message.starts_with("job 't' worker 2: worker process failed: it exited without answering; exit status: "), "{message}");
        assert!(
            message.contains("its last message: ") && message.contains("__worker"),
            "{message}"
        );
        assert_eq!(starts, 1);
    }

    #[test]
    fn a_child_that_panicked_is_reported_by_its_panic_message_not_the_backtrace_hint() {
        let stderr = "thread 'main' panicked at crates/x/src/uring.rs:175:16:\n\
                      submission queue full: PushError\n\
                      stack backtrace:\n   0: std::panicking::begin_panic\n\
                      note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n";
        let expected = "thread 'main' panicked at crates/x/src/uring.rs:175:16: submission queue full: PushError";
        assert_eq!(stderr_summary(stderr).as_deref(), Some(expected));
        let without_backtrace =
            "thread 'w' panicked at src/a.rs:1:2:\nboom\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            stderr_summary(without_backtrace).as_deref(),
            Some("thread 'w' panicked at src/a.rs:1:2: boom")
        );
        assert_eq!(
            stderr_summary("warning: x\nlast words\n\n").as_deref(),
            Some("last words"),
            "expected the last non-empty line of a child that did not panic"
        );
        assert_eq!(
            stderr_summary("\n"),
            None,
            "expected nothing from an empty stderr"
        );
    }

    #[test]
    fn a_child_that_prints_garbage_is_a_failed_worker() {
        let (result, starts) = run_program(Ok(PathBuf::from("echo")));
        let message = result.error.unwrap().message;
        assert!(
            message.contains(r#"it said "__worker" instead of "ready""#),
            "{message}"
        );
        assert_eq!(starts, 1);
    }

    #[test]
    fn a_child_that_cannot_start_still_passes_the_start_signal() {
        let (result, starts) = run_program(Ok(PathBuf::from("/nonexistent/iolens")));
        let error = result.error.unwrap();
        assert!(
            error.message.contains("cannot start a worker process"),
            "{}",
            error.message
        );
        assert_eq!(error.errno, libc::ENOENT);
        assert_eq!(starts, 1);
        let (result, starts) = run_program(Err(std::io::Error::other("no executable")));
        assert!(result.error.unwrap().message.contains("no executable"));
        assert_eq!(starts, 1);
    }

    #[test]
    fn the_status_relay_of_a_finished_worker_ends_without_waiting_its_interval() {
        let done = AtomicBool::new(true);
        relay_status(&StatusSlot::default(), Duration::from_secs(3600), &done);
    }
}
