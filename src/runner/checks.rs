//! The optional checks a job runs on each finished I/O: verification's note of
//! completed writes, `max_latency`, the `latency_target` search, the I/O logs,
//! `--status-interval` snapshots, the `rate_min` floor and the errors the job
//! tolerates. A check the job does not ask for costs one branch per I/O; none
//! allocates per I/O. A new per-I/O job feature is a field here and a few
//! lines in `on_complete`; the hot loop only follows the `Flow` it returns.

use super::ctx::OpenFile;
use super::error_tally::ErrorTally;
use super::latency_target::{LatencyTarget, Step};
use super::logs::{IoLogger, LoggedIo};
use super::queue::InFlight;
use super::rate_floor::{Done, RateFloor};
use super::result::{IoFailure, WorkerResult};
use super::status::StatusSlot;
use super::verify::{ReadData, Verifier};
use crate::debug::IoTrace;
use crate::iolog::IologWriter;
use crate::job::spec::{error_kind, Ddir, JobSpec, DDIRS};
use crate::stats::{RateSeries, WorkerStats};
use crate::workload::NextIo;
use iolens_sys::os::{thread_rusage, Rusage};
use std::time::Duration;

/// What the checks ask of the hot loop after an I/O (small, so it comes back in a register).
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// Carry on.
    Go,
    /// Keep at most this many I/Os in flight from now on.
    Cap(u32),
    /// Issue no more I/O; the job ends well.
    Stop,
    /// Issue no more I/O; the job failed: `Checks::take_failure` says why.
    Fail,
}

impl Flow {
    /// `self`, then a check that fired later on the same I/O: a failure stays
    /// (fio keeps the first error), else the later word counts.
    fn then(self, later: Flow) -> Flow {
        match self {
            Flow::Fail => self,
            _ => later,
        }
    }
}

/// The worker's measurements so far, for the checks that run only on measured I/O.
#[derive(Clone, Copy)]
pub(super) struct Measured<'m> {
    /// When measuring started (ramp time over), ns.
    pub since_ns: u64,
    pub stats: &'m WorkerStats,
    pub rates: &'m [RateSeries; DDIRS],
    /// CPU time used when measuring started.
    pub cpu_at_start: &'m Rusage,
    /// The worker's first error, if it has one.
    pub error: &'m Option<IoFailure>,
}

/// `--status-interval`: where the worker publishes a copy of its results, and when next.
struct Status<'a> {
    slot: &'a StatusSlot,
    every_ns: u64,
}

pub(super) struct Checks<'a> {
    job: &'a JobSpec,
    /// `verify=`: stamps written blocks and checks them; None without verification.
    pub verify: Option<Verifier>,
    /// `max_latency` per direction, ns; u64::MAX without one.
    max_latency_ns: [u64; DDIRS],
    /// `latency_target`: the depth search; None without it.
    latency_target: Option<LatencyTarget>,
    /// I/O logs; None when the job writes none.
    logs: Option<IoLogger>,
    status: Option<Status<'a>>,
    /// When the next interim result is due; never without `--status-interval`.
    next_status_ns: u64,
    /// `rate_min` / `rate_iops_min`; None without them.
    rate_floor: Option<RateFloor>,
    /// Every failed I/O, when the job tolerates errors.
    tolerated: ErrorTally,
    /// Why the last `Flow::Fail` failed, until the worker takes it.
    failure: Option<IoFailure>,
    /// `write_iolog`: the issued I/Os, logged at issue; None without it.
    pub iolog: Option<IologWriter>,
    /// `--debug=io`: fio's lines per I/O; None unless traced.
    pub io_trace: Option<IoTrace>,
}

impl<'a> Checks<'a> {
    /// The checks `job` asks for, for a queue of `depth` slots; measuring starts at `ramp_end_ns`.
    pub(super) fn new(
        job: &'a JobSpec,
        verify: Option<Verifier>,
        status: Option<(&'a StatusSlot, Duration)>,
        depth: u32,
        ramp_end_ns: u64,
    ) -> Self {
        let status = status.map(|(slot, every)| Status {
            slot,
            every_ns: (every.as_nanos() as u64).max(1),
        });
        Checks {
            job,
            verify,
            max_latency_ns: job
                .control
                .max_latency_ns
                .map(|ns| if ns == 0 { u64::MAX } else { ns }),
            latency_target: job
                .control
                .latency_target
                .as_ref()
                .map(|spec| LatencyTarget::new(spec, depth, 0)),
            logs: job.logs.any().then(|| {
                IoLogger::new(&job.logs, job.exec.sched.ioprio).with_runtime(job.exec.runtime)
            }),
            next_status_ns: status.as_ref().map_or(u64::MAX, |s| s.every_ns),
            status,
            rate_floor: RateFloor::new(&job.control, ramp_end_ns),
            tolerated: ErrorTally::default(),
            failure: None,
            iolog: None,
            io_trace: None,
        }
    }

    /// `io` is about to be issued at `now_ns` (`write_iolog`).
    #[inline(always)]
    pub(super) fn on_issue(&mut self, io: &NextIo, now_ns: impl FnOnce() -> u64) {
        if let Some(log) = &mut self.iolog {
            log.io(now_ns(), io.file, io.ddir, io.offset, io.len);
        }
        if let Some(trace) = &mut self.io_trace {
            trace.issued(io.ddir.index(), io.file, io.offset, io.len);
        }
    }

    /// Run the checks on `io`, which moved data and ended at `end_ns`;
    /// `measured` when it counts among the job's results; `data` gives the
    /// buffer of a read (called only by a verify read-back). Inlined into the
    /// hot loop: without the checks a job asks for, it is a few compares.
    #[inline(always)]
    pub(super) fn on_complete<'b>(
        &mut self,
        io: &InFlight,
        end_ns: u64,
        queued: bool,
        files: &[OpenFile],
        measured: Option<Measured<'_>>,
        data: impl FnOnce() -> Option<ReadData<'b>>,
    ) -> Flow {
        let mut flow = Flow::Go;
        if let Some(trace) = &mut self.io_trace {
            trace.completed(io.ddir.index(), io.file, io.offset, io.len);
        }
        match (io.ddir, &mut self.verify) {
            (Ddir::Write, Some(v)) => v.note_completed(io.file, io.offset, io.len),
            (Ddir::Read, Some(v)) => v.read_completed(io.file, io.offset, io.len, data),
            _ => {}
        }
        let lat_ns = end_ns - io.start_ns;
        if lat_ns > self.max_latency_ns[io.ddir.index()] {
            flow = self.fail(flow, self.too_slow(io, lat_ns, files));
        }
        if let Some(target) = &mut self.latency_target {
            target.record(lat_ns);
            if target.due(end_ns) {
                flow = flow.then(close_latency_window(target, end_ns));
            }
        }
        let Some(m) = measured else {
            return flow;
        };
        if let Some(logs) = &mut self.logs {
            logs.record(&LoggedIo {
                end_ns: end_ns - m.since_ns,
                ddir: io.ddir,
                len: io.len,
                offset: io.offset,
                slat_ns: queued.then(|| io.submit_ns - io.start_ns),
                clat_ns: end_ns - io.submit_ns,
                lat_ns,
            });
        }
        if end_ns >= self.next_status_ns {
            self.publish_status(end_ns, m);
        }
        if self.rate_floor.as_ref().is_some_and(|f| f.due(end_ns)) {
            if let Some(failure) = self.check_rate_floor(end_ns, m.stats) {
                flow = self.fail(flow, failure);
            }
        }
        flow
    }

    /// Why the checks answered `Flow::Fail`.
    #[cold]
    pub(super) fn take_failure(&mut self) -> IoFailure {
        self.failure
            .take()
            .expect("take_failure follows a Flow::Fail")
    }

    /// `flow`, then `failure` found on the same I/O: the first failure stays.
    #[cold]
    fn fail(&mut self, flow: Flow, failure: IoFailure) -> Flow {
        if flow != Flow::Fail {
            self.failure = Some(failure);
        }
        Flow::Fail
    }

    /// `io` failed with `errno`: Ok when the job tolerates it (`continue_on_error`),
    /// else the job's failure.
    pub(super) fn on_failed_io(
        &mut self,
        io: &InFlight,
        errno: i32,
        files: &[OpenFile],
    ) -> Result<(), IoFailure> {
        let errors = &self.job.errors;
        if !errors.stops_on_every_error() {
            self.tolerated.add(errno);
            if errors.tolerates(error_kind(io.ddir == Ddir::Write, errno), errno) {
                return Ok(());
            }
        }
        let engine = &self.job.engine;
        let what = match engine.kind.def().file_op {
            Some(op) => format!(
                "ioengine={}: {} {}",
                engine.kind.name(),
                op.call(engine.stat_type),
                files[io.file as usize].path.display()
            ),
            None => describe_io(io, files),
        };
        let what = match &self.verify {
            Some(v) if v.reading_back() => format!("verify: read-back failed: {what}"),
            _ => what,
        };
        Err(IoFailure {
            message: format!(
                "{what}: {}",
                crate::errno::describe(&std::io::Error::from_raw_os_error(errno))
            ),
            errno,
        })
    }

    /// Ramp time is over: the logs forget what they recorded.
    pub(super) fn at_measure_start(&mut self) {
        if self.logs.is_some() {
            let logger = IoLogger::new(&self.job.logs, self.job.exec.sched.ioprio);
            self.logs = Some(logger.with_runtime(self.job.exec.runtime));
        }
    }

    /// What the checks add to the worker's result, `runtime_ns` after measuring started
    /// and at `end_ns` on the worker's clock.
    /// A failure to write the `write_iolog` file becomes the job's error, unless it has one.
    pub(super) fn finish(self, runtime_ns: u64, end_ns: u64, result: &mut WorkerResult) {
        if let Some(Err(message)) = self.iolog.map(|log| log.finish(end_ns)) {
            result.error.get_or_insert(IoFailure { message, errno: 0 });
        }
        match self.io_trace.map(IoTrace::finish) {
            Some(Ok(path)) => result.io_trace = Some(path),
            Some(Err(e)) => {
                result.error.get_or_insert(IoFailure {
                    message: e.to_string(),
                    errno: 0,
                });
            }
            None => {}
        }
        result.tolerated = self.tolerated;
        result.logs = self.logs.map(|logs| logs.finish(runtime_ns));
        result.latency_depth = self.latency_target.as_ref().map(LatencyTarget::found_depth);
    }

    /// `max_latency`: the I/O counts, then the job fails as in fio (ETIMEDOUT).
    #[cold]
    fn too_slow(&self, io: &InFlight, lat_ns: u64, files: &[OpenFile]) -> IoFailure {
        let limit = self.max_latency_ns[io.ddir.index()];
        IoFailure {
            message: format!(
                "{} took {lat_ns} ns, over max_latency={limit} ns",
                describe_io(io, files)
            ),
            errno: libc::ETIMEDOUT,
        }
    }

    /// Publish a copy of the results so far for an interim report (with a
    /// failure of this same I/O, not yet the worker's error).
    #[cold]
    fn publish_status(&mut self, now_ns: u64, m: Measured<'_>) {
        let Some(status) = &self.status else {
            return;
        };
        self.next_status_ns = (now_ns / status.every_ns + 1) * status.every_ns;
        status.slot.publish(WorkerResult {
            stats: m.stats.clone(),
            rates: m.rates.clone(),
            cpu: thread_rusage().unwrap_or_default().since(m.cpu_at_start),
            runtime_ns: now_ns.saturating_sub(m.since_ns),
            error: m.error.as_ref().or(self.failure.as_ref()).cloned(),
            ..WorkerResult::empty()
        });
    }

    /// `rate_min` / `rate_iops_min`: too little moved over a window fails the job (EIO, as fio).
    #[cold]
    fn check_rate_floor(&mut self, now_ns: u64, stats: &WorkerStats) -> Option<IoFailure> {
        let floor = self.rate_floor.as_mut()?;
        let done = stats.dirs.each_ref().map(|d| Done {
            bytes: d.bytes,
            ios: d.ios,
        });
        floor.check(now_ns, done).err().map(|missed| IoFailure {
            message: missed.to_string(),
            errno: libc::EIO,
        })
    }
}

/// An I/O in messages: "read /data/f at offset 8192 (length 4096)".
pub(super) fn describe_io(io: &InFlight, files: &[OpenFile]) -> String {
    format!(
        "{} {} at offset {} (length {})",
        io.ddir.name(),
        files[io.file as usize].path.display(),
        io.offset,
        io.len
    )
}

/// `latency_target`: a window ended; cap the queue at the next depth, or end
/// the job once the search has settled.
#[cold]
fn close_latency_window(target: &mut LatencyTarget, now_ns: u64) -> Flow {
    match target.close_window(now_ns) {
        Step::Depth(next) => Flow::Cap(next),
        Step::Settled(_) => Flow::Stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::job_spec;
    use crate::workload::FileRegion;
    use std::path::PathBuf;
    use std::sync::Arc;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    fn job(options: &[&str]) -> JobSpec {
        let args: Vec<&str> = ["--name=t", "--filename=/data/f", "--size=1m"]
            .into_iter()
            .chain(options.iter().copied())
            .collect();
        job_spec(&args)
    }

    /// One file, named /data/f in messages (the handle is /dev/null: nothing is read or written).
    fn files() -> Vec<OpenFile> {
        vec![OpenFile {
            file: Arc::new(std::fs::File::open("/dev/null").expect("open /dev/null")),
            size: 1 << 20,
            path: PathBuf::from("/data/f"),
            region: FileRegion::new(0, 0, 1 << 20),
        }]
    }

    /// A 4 KiB I/O of `ddir` at offset 8192 started at `start_ns`, submitted at once.
    fn io(ddir: Ddir, start_ns: u64) -> InFlight {
        InFlight {
            start_ns,
            submit_ns: start_ns,
            ddir,
            len: 4096,
            file: 0,
            offset: 8192,
            ioprio: 0,
        }
    }

    /// The worker's measurements: none yet, measuring since 0, no error so far.
    struct Seen {
        stats: WorkerStats,
        rates: [RateSeries; DDIRS],
        cpu: Rusage,
        error: Option<IoFailure>,
    }

    impl Seen {
        fn new() -> Self {
            Seen {
                stats: WorkerStats::default(),
                rates: Default::default(),
                cpu: Rusage::default(),
                error: None,
            }
        }

        fn measured(&self) -> Option<Measured<'_>> {
            Some(Measured {
                since_ns: 0,
                stats: &self.stats,
                rates: &self.rates,
                cpu_at_start: &self.cpu,
                error: &self.error,
            })
        }
    }

    /// The checks' word on a read started at 0 that ended at `end_ns`, measured or not.
    fn read_until(checks: &mut Checks<'_>, end_ns: u64, seen: Option<&Seen>) -> Flow {
        let measured = seen.and_then(Seen::measured);
        checks.on_complete(
            &io(Ddir::Read, 0),
            end_ns,
            false,
            &files(),
            measured,
            || None,
        )
    }

    /// Why the checks failed the job on a read that ended at `end_ns`.
    fn failed_read(checks: &mut Checks<'_>, end_ns: u64, seen: &Seen) -> IoFailure {
        let flow = read_until(checks, end_ns, Some(seen));
        assert_eq!(
            flow,
            Flow::Fail,
            "expected the job to fail at {end_ns} ns, saw {flow:?}"
        );
        checks.take_failure()
    }

    #[test]
    fn a_job_without_checks_lets_every_io_go() {
        let job = job(&[]);
        let mut checks = Checks::new(&job, None, None, 1, 0);
        let seen = Seen::new();
        let flow = read_until(&mut checks, 10 * MS, Some(&seen));
        assert!(matches!(flow, Flow::Go), "expected Go, saw {flow:?}");
    }

    #[test]
    fn max_latency_fails_the_first_slower_io_with_etimedout() {
        let job = job(&["--max_latency=1ms"]);
        let mut checks = Checks::new(&job, None, None, 1, 0);
        let seen = Seen::new();
        let fast = read_until(&mut checks, MS, None);
        assert!(
            matches!(fast, Flow::Go),
            "expected an I/O of exactly 1 ms to pass, saw {fast:?}"
        );
        let slow = failed_read(&mut checks, MS + 1, &seen);
        assert_eq!(
            slow.errno,
            libc::ETIMEDOUT,
            "expected ETIMEDOUT, saw {slow:?}"
        );
        assert_eq!(
            slow.message, "read /data/f at offset 8192 (length 4096) took 1000001 ns, over max_latency=1000000 ns",
            "expected the message to name the file, offset, latency and limit"
        );
    }

    #[test]
    fn latency_target_caps_the_queue_when_a_window_ends() {
        let job = job(&[
            "--ioengine=libaio",
            "--iodepth=8",
            "--latency_target=100us",
            "--latency_window=1ms",
        ]);
        let mut checks = Checks::new(&job, None, None, 8, 0);
        for i in 1..20 {
            let flow = checks.on_complete(
                &io(Ddir::Read, i * 10 * US),
                i * 10 * US + 30 * US,
                true,
                &files(),
                None,
                || None,
            );
            assert!(
                matches!(flow, Flow::Go),
                "expected Go inside the first window, saw {flow:?}"
            );
        }
        let flow = checks.on_complete(
            &io(Ddir::Read, MS - 30 * US),
            MS,
            true,
            &files(),
            None,
            || None,
        );
        assert!(
            matches!(flow, Flow::Cap(2)),
            "expected a window met at depth 1 to try depth 2, saw {flow:?}"
        );
        let mut result = WorkerResult::empty();
        checks.finish(MS, MS, &mut result);
        assert_eq!(
            result.latency_depth,
            Some(1),
            "expected depth 1 found so far, saw {:?}",
            result.latency_depth
        );
    }

    #[test]
    fn the_first_failure_of_an_io_stays_when_a_later_check_fails_it_too() {
        let job = job(&[
            "--max_latency=1ms",
            "--rate_iops_min=100",
            "--rate_cycle=500",
        ]);
        let mut checks = Checks::new(&job, None, None, 1, 0);
        let seen = Seen::new();
        let settling = read_until(&mut checks, MS, Some(&seen));
        assert_eq!(settling, Flow::Go, "expected Go in the settling period");
        // 2 s after it started: over max_latency, and the rate floor's first window is empty
        let both = failed_read(&mut checks, 2_000 * MS, &seen);
        assert!(
            both.message.contains("over max_latency"),
            "expected max_latency's failure, found first, to stay, saw {:?}",
            both.message
        );
        assert!(
            Flow::Stop.then(Flow::Fail) == Flow::Fail,
            "expected a later failure to outrank a stop"
        );
        assert!(
            Flow::Fail.then(Flow::Cap(3)) == Flow::Fail,
            "expected a failure to outrank a later cap"
        );
        assert!(
            Flow::Go.then(Flow::Cap(3)) == Flow::Cap(3),
            "expected a cap after Go"
        );
    }

    #[test]
    fn tolerated_errors_are_counted_and_others_fail_the_job() {
        let job = job(&["--continue_on_error=read"]);
        let mut checks = Checks::new(&job, None, None, 1, 0);
        let read = checks.on_failed_io(&io(Ddir::Read, 0), libc::EIO, &files());
        assert!(
            read.is_ok(),
            "expected a read EIO to be tolerated, saw {read:?}"
        );
        let write = checks
            .on_failed_io(&io(Ddir::Write, 0), libc::EIO, &files())
            .expect_err("expected a write EIO to fail the job under continue_on_error=read");
        assert_eq!(
            write.errno,
            libc::EIO,
            "expected the failure to carry EIO, saw {write:?}"
        );
        assert!(
            write
                .message
                .starts_with("write /data/f at offset 8192 (length 4096): EIO"),
            "expected the message to name the direction, file and errno, saw {:?}",
            write.message
        );
        let mut result = WorkerResult::empty();
        checks.finish(0, 0, &mut result);
        assert_eq!(
            (result.tolerated.count, result.tolerated.first_errno),
            (2, libc::EIO),
            "expected both failures tallied, the first EIO kept, saw {:?}",
            result.tolerated
        );
    }

    #[test]
    fn without_continue_on_error_nothing_is_tallied() {
        let job = job(&[]);
        let mut checks = Checks::new(&job, None, None, 1, 0);
        let err = checks.on_failed_io(&io(Ddir::Read, 0), libc::EIO, &files());
        assert!(
            err.is_err(),
            "expected a read EIO to fail the job, saw {err:?}"
        );
        let mut result = WorkerResult::empty();
        checks.finish(0, 0, &mut result);
        assert_eq!(
            result.tolerated.count, 0,
            "expected no tally, saw {:?}",
            result.tolerated
        );
    }

    #[test]
    fn status_is_published_once_per_interval_from_measured_ios() {
        let job = job(&[]);
        let slot = StatusSlot::default();
        let every = Duration::from_millis(100);
        let mut checks = Checks::new(&job, None, Some((&slot, every)), 1, 0);
        let seen = Seen::new();
        // (completion time, measured, the runtime of the latest snapshot after it)
        let steps = [
            (50, true, None),
            (120, false, None),
            (130, true, Some(130)),
            (190, true, Some(130)),
            (200, true, Some(200)),
        ];
        for (end_ms, measured, expected_ms) in steps {
            let flow = read_until(&mut checks, end_ms * MS, measured.then_some(&seen));
            assert!(matches!(flow, Flow::Go), "expected Go, saw {flow:?}");
            let runtime = slot.latest().map(|r| r.runtime_ns);
            assert_eq!(
                runtime,
                expected_ms.map(|ms| ms * MS),
                "after a {} I/O at {end_ms} ms with snapshots due every 100 ms, \
                 expected the latest snapshot at {expected_ms:?} ms, saw {runtime:?} ns",
                if measured { "measured" } else { "ramp" }
            );
        }
    }

    #[test]
    fn a_status_snapshot_carries_the_failure_of_the_same_io() {
        let job = job(&["--max_latency=1ms"]);
        let slot = StatusSlot::default();
        let mut checks = Checks::new(&job, None, Some((&slot, Duration::from_millis(100))), 1, 0);
        let seen = Seen::new();
        let flow = read_until(&mut checks, 100 * MS, Some(&seen));
        assert!(
            flow == Flow::Fail,
            "expected the slow I/O to fail the job, saw {flow:?}"
        );
        let errno = slot.latest().and_then(|r| r.error).map(|e| e.errno);
        assert_eq!(
            errno,
            Some(libc::ETIMEDOUT),
            "expected the snapshot to carry ETIMEDOUT, saw {errno:?}"
        );
    }

    #[test]
    fn rate_iops_min_fails_a_window_below_the_floor() {
        let job = job(&["--rate_iops_min=100", "--rate_cycle=500"]);
        let mut checks = Checks::new(&job, None, None, 1, 0);
        let seen = Seen::new();
        let settling = read_until(&mut checks, 2_000 * MS, Some(&seen));
        assert!(
            matches!(settling, Flow::Go),
            "expected the settling period not to be judged, saw {settling:?}"
        );
        let unmeasured = read_until(&mut checks, 2_500 * MS, None);
        assert!(
            matches!(unmeasured, Flow::Go),
            "expected no judgement from an unmeasured I/O, saw {unmeasured:?}"
        );
        let slow = failed_read(&mut checks, 2_500 * MS, &seen);
        assert_eq!(slow.errno, libc::EIO, "expected EIO as fio, saw {slow:?}");
        assert!(
            slow.message.contains("rate_iops_min=100 not met"),
            "expected the message to name rate_iops_min, saw {:?}",
            slow.message
        );
    }
}
