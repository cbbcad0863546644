//! The stuck-I/O watchdog: the group's supervising thread asks it, a few
//! times a second, whether the group overran its plan. An I/O that never
//! completes (a hung device) must not hang the tool forever.
//!
//! Two steps. When the group overshoots its planned time by a margin (or a
//! worker waits on one I/O longer than `--io-timeout`, or a minute for a job
//! with no time limit), it says on stderr which worker is stuck, in which
//! kernel function, on which file and offset. One margin later (at once for
//! `--io-timeout`) it stops the group: the partial report is written, the
//! stuck workers' jobs fail with ETIMEDOUT, stuck worker processes are killed.
//! A worker process that even SIGKILL does not free (a request its filesystem
//! never answers) is left behind after a grace period: the report then has its
//! live counters, and names its wait channel, file and offset.

use super::group_control::GroupControl;
use super::look_clock::LookClock;
use super::result::{IoFailure, WorkerResult};
use crate::fileset::FileSet;
use crate::job::spec::JobSpec;
use crate::observe::live::{LiveBoard, WaitingIo};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The least a group may overshoot its plan before it counts as stuck.
const MIN_MARGIN: Duration = Duration::from_secs(10);
/// A job bound by size, not time, has no plan to overshoot: one I/O this old is hung.
pub(super) const SIZE_BOUND_HANG: Duration = Duration::from_secs(60);

/// One worker of the group as the watchdog sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WorkerView {
    /// Position of its job in the group, and its index in the job.
    pub job: usize,
    pub worker: u32,
    pub finished: bool,
    /// An async engine's worker enforces `--io-timeout` itself, with a better message.
    pub enforces_io_timeout: bool,
    /// The I/O it waits on, and for how long.
    pub waiting: Option<(WaitingIo, Duration)>,
}

/// What the supervisor should do now.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Fine,
    /// Say which workers are stuck (on stderr), and why the watchdog looks.
    Warn(Vec<WorkerView>, String),
    /// Stop the group; these workers are stuck and will not come back by themselves.
    Stop(Vec<WorkerView>, String),
}

pub(super) struct Watchdog {
    /// The longest the group should run: startdelay + ramp + runtime; None
    /// when a job of it is bound by size only.
    planned: Option<Duration>,
    margin: Duration,
    /// The longest one I/O may take: `--io-timeout`, or the size-bound hang limit.
    io_limit: Option<Duration>,
    /// The user's `--io-timeout` set `io_limit`: stop at once, no warning first.
    io_limit_is_timeout: bool,
    /// When the warning was given (time since the group started).
    warned_at: Option<Duration>,
    stopped: bool,
}

impl Watchdog {
    pub(super) fn new(jobs: &[&JobSpec], io_timeout: Option<Duration>) -> Self {
        let planned = jobs
            .iter()
            .map(|j| {
                let e = &j.exec;
                e.runtime.map(|r| e.startdelay + e.ramp_time + r)
            })
            .try_fold(Duration::ZERO, |longest, plan| plan.map(|p| longest.max(p)));
        let io_limit = io_timeout.or(planned.is_none().then_some(SIZE_BOUND_HANG));
        Watchdog {
            planned,
            margin: planned.map_or(MIN_MARGIN, |p| (p / 2).max(MIN_MARGIN)),
            io_limit,
            io_limit_is_timeout: io_timeout.is_some(),
            warned_at: None,
            stopped: false,
        }
    }

    /// How long other ranks wait for a rank that has not ended the group: past the
    /// point where that rank's own watchdog warns (one margin) and stops it (two).
    pub(super) fn cluster_deadline(&self) -> Option<Duration> {
        self.planned.map(|p| p + 3 * self.margin)
    }

    /// Look at the group `elapsed` after its start.
    pub(super) fn check(&mut self, elapsed: Duration, workers: &[WorkerView]) -> Verdict {
        if self.stopped {
            return Verdict::Fine;
        }
        let running = || workers.iter().filter(|w| !w.finished);
        if let Some(warned_at) = self.warned_at {
            if elapsed < warned_at + self.margin {
                return Verdict::Fine;
            }
            self.stopped = true;
            let why = format!(
                "still running {:.0} s after that warning",
                self.margin.as_secs_f64()
            );
            return Verdict::Stop(running().copied().collect(), why);
        }
        if let Some(limit) = self.io_limit {
            let hung: Vec<WorkerView> = running()
                .filter(|w| !(self.io_limit_is_timeout && w.enforces_io_timeout))
                .filter(|w| w.waiting.is_some_and(|(_, age)| age > limit))
                .copied()
                .collect();
            if !hung.is_empty() {
                let why = format!(
                    "an I/O has been in flight for over {:.0} s",
                    limit.as_secs_f64()
                );
                if self.io_limit_is_timeout {
                    self.stopped = true;
                    return Verdict::Stop(hung, format!("{why} (--io-timeout)"));
                }
                self.warned_at = Some(elapsed);
                return Verdict::Warn(hung, why);
            }
        }
        match self.planned {
            Some(planned) if elapsed > planned + self.margin && running().next().is_some() => {
                self.warned_at = Some(elapsed);
                let why = format!(
                    "the group was planned to take {:.0} s and has run {:.0} s",
                    planned.as_secs_f64(),
                    elapsed.as_secs_f64()
                );
                Verdict::Warn(running().copied().collect(), why)
            }
            _ => Verdict::Fine,
        }
    }
}

/// How often the supervisor consults the watchdog.
const CHECK_EVERY: Duration = Duration::from_millis(250);
/// After a stop, how long stuck workers get to come back before the process gives
/// up on them; then once more for the proxies of the processes left behind to return.
const GRACE: Duration = Duration::from_secs(5);

/// `Watchdog::cluster_deadline` of the group `group` (indices into `jobs`).
pub(super) fn cluster_deadline(
    jobs: &[JobSpec],
    group: &[usize],
    io_timeout: Option<Duration>,
) -> Option<Duration> {
    let group_jobs: Vec<&JobSpec> = group.iter().map(|&j| &jobs[j]).collect();
    Watchdog::new(&group_jobs, io_timeout).cluster_deadline()
}

/// The watchdog wired to a running group: reads the workers' live slots,
/// names the stuck ones on stderr, stops the group and kills stuck processes.
pub(super) struct GroupWatch<'a> {
    dog: Watchdog,
    board: &'a LiveBoard,
    files: &'a FileSet,
    /// The group's jobs (indices into `jobs`).
    group: &'a [usize],
    jobs: &'a [JobSpec],
    started: Instant,
    /// The group's time less the time this process was stopped.
    clock: LookClock,
    last_check: Duration,
    /// Why each stuck worker (job index, worker) was given up on.
    stuck: Vec<(usize, u32, String)>,
    stopped_at: Option<Instant>,
    /// Set once the grace is over: the proxies of stuck worker processes stop waiting.
    given_up: &'a AtomicBool,
    /// Workers still running a grace after that are threads: leave them behind.
    leave_threads: bool,
}

impl<'a> GroupWatch<'a> {
    pub(super) fn new(
        jobs: &'a [JobSpec],
        group: &'a [usize],
        board: &'a LiveBoard,
        files: &'a FileSet,
        io_timeout: Option<Duration>,
        given_up: &'a AtomicBool,
        started: Instant,
    ) -> Self {
        let group_jobs: Vec<&JobSpec> = group.iter().map(|&j| &jobs[j]).collect();
        GroupWatch {
            dog: Watchdog::new(&group_jobs, io_timeout),
            board,
            files,
            group,
            jobs,
            started,
            clock: LookClock::default(),
            last_check: Duration::ZERO,
            stuck: Vec::new(),
            stopped_at: None,
            given_up,
            leave_threads: false,
        }
    }

    /// Called by the supervising thread every few milliseconds, at `now`, with
    /// which workers have finished (by group position, then worker).
    pub(super) fn look(&mut self, now: Instant, finished: &[Vec<bool>], control: &GroupControl) {
        // After this process was stopped (SIGSTOP, a suspended machine) its workers
        // were too: the time is not theirs, and the I/Os in flight are looked at
        // again once they could end.
        let Some(elapsed) = self.clock.at(now.saturating_duration_since(self.started)) else {
            return;
        };
        if elapsed < self.last_check + CHECK_EVERY {
            return;
        }
        self.last_check = elapsed;
        if let Some(at) = self.stopped_at {
            let waiting = finished.iter().flatten().any(|f| !f);
            let since_stop = now.saturating_duration_since(at);
            if waiting && since_stop > GRACE && !self.given_up.swap(true, Ordering::Relaxed) {
                crate::console::warn(format_args!(
                    "watchdog: stuck workers did not come back; the report has what they had done"
                ));
            }
            // A thread cannot be taken back: the run is finished without it.
            self.leave_threads = waiting && since_stop > 2 * GRACE;
            return;
        }
        let now_ns = iolens_sys::clock::monotonic_ns();
        let views: Vec<WorkerView> = self
            .group
            .iter()
            .zip(finished)
            .enumerate()
            .flat_map(|(position, (&j, done))| {
                done.iter()
                    .enumerate()
                    .map(move |(w, &finished)| (position, j, w as u32, finished))
            })
            .map(|(position, j, worker, finished)| WorkerView {
                job: position,
                worker,
                finished,
                enforces_io_timeout: self.jobs[j].engine.kind.is_async(),
                waiting: self.board.worker(j, worker).waiting_io().map(|io| {
                    (
                        io,
                        Duration::from_nanos(now_ns.saturating_sub(io.started_ns)),
                    )
                }),
            })
            .collect();
        match self.dog.check(elapsed, &views) {
            Verdict::Fine => {}
            Verdict::Warn(stuck, why) => {
                crate::console::warn(format_args!("watchdog: {why}; these workers look stuck:"));
                for w in &stuck {
                    crate::console::warn(format_args!("watchdog:   {}", self.describe(w)));
                }
            }
            Verdict::Stop(stuck, why) => {
                crate::console::warn(format_args!(
                    "watchdog: {why}; stopping the run with a partial report"
                ));
                control.stop_group();
                for w in &stuck {
                    let description = self.describe(w);
                    crate::console::warn(format_args!("watchdog:   {description}"));
                    let j = self.group[w.job];
                    self.kill_if_process(j, w.worker);
                    self.stuck
                        .push((j, w.worker, format!("watchdog: {why}; {description}")));
                }
                self.stopped_at = Some(now);
            }
        }
    }

    /// "job 'a' worker 0 (pid 12, tid 13): in wchan percpu_rwsem_wait, write on /mnt/f at offset 4096 for 12.0 s"
    fn describe(&self, w: &WorkerView) -> String {
        let j = self.group[w.job];
        let live = self.board.worker(j, w.worker);
        let mut text = format!("job '{}' worker {}", self.jobs[j].name, w.worker);
        if let Some((pid, tid)) = live.thread() {
            let wchan = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/wchan"))
                .ok()
                .and_then(|t| crate::observe::wchan::parse(&t).map(str::to_string))
                .unwrap_or_else(|| "running".to_string());
            text += &format!(" (pid {pid}, tid {tid}): in {wchan}");
        }
        match w.waiting {
            Some((io, age)) => {
                let worker_files = &self.files.workers[j][w.worker as usize].files;
                let path = worker_files.get(io.file as usize).map_or_else(
                    || format!("file #{}", io.file),
                    |f| self.files.targets[f.target].path.display().to_string(),
                );
                text += &format!(
                    ", waiting on {path} at offset {} for {:.1} s",
                    io.offset,
                    age.as_secs_f64()
                );
            }
            None => text += ", not waiting on an I/O",
        }
        text
    }

    fn kill_if_process(&self, job: usize, worker: u32) {
        if self.jobs[job].exec.thread {
            return;
        }
        if let Some((pid, _)) = self.board.worker(job, worker).thread() {
            if pid != std::process::id() {
                // It may have exited meanwhile; nothing else to do then.
                let _ = iolens_sys::os::kill_process(pid);
            }
        }
    }

    /// The workers still running are threads stuck in the kernel: stop waiting for them.
    pub(super) fn leaves_threads_behind(&self) -> bool {
        self.leave_threads
    }

    pub(super) fn stopped(&self) -> bool {
        self.stopped_at.is_some()
    }

    /// The group's results with each stuck worker's failure named by the watchdog.
    pub(super) fn mark_stuck(&self, results: &mut [Vec<WorkerResult>]) {
        for (j, worker, message) in &self.stuck {
            let Some(position) = self.group.iter().position(|g| g == j) else {
                continue;
            };
            if let Some(result) = results[position].get_mut(*worker as usize) {
                result.error = Some(IoFailure {
                    message: message.clone(),
                    errno: libc::ETIMEDOUT,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{front::cli_args::parse_fio_args, resolve};

    fn job(options: &[&str]) -> JobSpec {
        let args: Vec<String> = ["--name=t", "--filename=/tmp/f", "--size=1m"]
            .iter()
            .chain(options)
            .map(|s| s.to_string())
            .collect();
        let (global, jobs) = parse_fio_args(&args).unwrap();
        resolve(&global, &jobs).unwrap().jobs.remove(0)
    }

    fn worker(finished: bool, waiting_s: Option<u64>) -> WorkerView {
        WorkerView {
            job: 0,
            worker: 1,
            finished,
            enforces_io_timeout: false,
            waiting: waiting_s.map(|s| {
                let io = WaitingIo {
                    file: 0,
                    offset: 4096,
                    started_ns: 1,
                };
                (io, Duration::from_secs(s))
            }),
        }
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn a_timed_group_is_warned_about_after_a_margin_then_stopped() {
        let jobs = [
            job(&["--runtime=30", "--ramp_time=5", "--time_based"]),
            job(&["--runtime=10", "--startdelay=2"]),
        ];
        let mut dog = Watchdog::new(&jobs.iter().collect::<Vec<_>>(), None);
        // Planned 35 s, margin half of that.
        let stuck = [worker(false, Some(40)), worker(true, None)];
        assert_eq!(dog.check(S(52), &stuck), Verdict::Fine);
        let Verdict::Warn(warned, _) = dog.check(S(53), &stuck) else {
            panic!("no warning")
        };
        assert_eq!(warned, [stuck[0]], "finished workers are not stuck");
        assert_eq!(dog.check(S(70), &stuck), Verdict::Fine);
        assert!(matches!(dog.check(S(71), &stuck), Verdict::Stop(w, _) if w == [stuck[0]]));
        assert_eq!(dog.check(S(200), &stuck), Verdict::Fine, "stops once");
    }

    #[test]
    fn a_short_run_gets_at_least_ten_seconds_and_a_finished_one_none() {
        let jobs = [job(&["--runtime=1"])];
        let mut dog = Watchdog::new(&jobs.iter().collect::<Vec<_>>(), None);
        assert_eq!(dog.check(S(10), &[worker(false, None)]), Verdict::Fine);
        assert_eq!(dog.check(S(12), &[worker(true, None)]), Verdict::Fine);
        assert!(matches!(
            dog.check(S(12), &[worker(false, None)]),
            Verdict::Warn(..)
        ));
    }

    #[test]
    fn a_size_bound_job_is_stuck_when_one_io_takes_a_minute() {
        let jobs = [job(&["--runtime=10"]), job(&[])];
        let mut dog = Watchdog::new(&jobs.iter().collect::<Vec<_>>(), None);
        assert_eq!(
            dog.check(S(3600), &[worker(false, Some(59))]),
            Verdict::Fine
        );
        assert!(matches!(
            dog.check(S(3600), &[worker(false, Some(61))]),
            Verdict::Warn(..)
        ));
        assert!(matches!(
            dog.check(S(3610), &[worker(false, Some(71))]),
            Verdict::Stop(..)
        ));
    }

    #[test]
    fn io_timeout_stops_at_once() {
        let jobs = [job(&["--runtime=100"])];
        let mut dog = Watchdog::new(&jobs.iter().collect::<Vec<_>>(), Some(S(2)));
        assert_eq!(dog.check(S(5), &[worker(false, Some(2))]), Verdict::Fine);
        assert_eq!(dog.check(S(5), &[worker(true, Some(9))]), Verdict::Fine);
        let async_worker = WorkerView {
            enforces_io_timeout: true,
            ..worker(false, Some(3))
        };
        assert_eq!(dog.check(S(5), &[async_worker]), Verdict::Fine);
        assert!(matches!(
            dog.check(S(5), &[worker(false, Some(3))]),
            Verdict::Stop(..)
        ));
    }
}
