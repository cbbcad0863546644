//! The optional checks a job runs on each finished I/O: verification's note of
//! completed writes, `max_latency`, the `latency_target` search, the I/O logs,
//! `--status-interval` snapshots, the `rate_min` floor and the errors the job
//! tolerates. A check the job does not ask for costs one branch per I/O; none
//! allocates per I/O. A new per-I/O job feature is a field here and a few
//! lines in `on_complete`; the hot loop only follows the `Flow` it returns.

use super::ctx::OpenFile;
use super::errors::ErrorTally;
use super::latency_target::{LatencyTarget, Step};
use super::logs::{IoLogger, LoggedIo};
use super::queue::InFlight;
use super::rate_floor::{Done, RateFloor};
use super::result::{IoFailure, WorkerResult};
use super::status::StatusSlot;
use super::verify::Verifier;
use crate::job::errors::error_kind;
use crate::job::spec::{Ddir, JobSpec, DDIRS};
use crate::stats::{RateSeries, WorkerStats};
use iolens_sys::os::{thread_rusage, Rusage};
use std::time::Duration;

/// What the checks ask of the hot loop after an I/O.
#[must_use]
#[derive(Debug)]
pub enum Flow {
    /// Carry on.
    Go,
    /// Keep at most this many I/Os in flight from now on.
    Cap(u32),
    /// Issue no more I/O; the job ends well.
    Stop,
    /// Issue no more I/O; the job failed.
    Fail(IoFailure),
}

impl Flow {
    /// `self`, then a check that fired later on the same I/O: a failure stays
    /// (fio keeps the first error), else the later word counts.
    fn then(self, later: Flow) -> Flow {
        match self {
            Flow::Fail(_) => self,
            _ => later,
        }
    }
}

/// The worker's measurements so far, for the checks that run only on measured I/O.
pub struct Measured<'m> {
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

pub struct Checks<'a> {
    job: &'a JobSpec,
    /// `verify=`: stamps written blocks and checks them; None without verification.
    pub verify: Option<Verifier>,
    /// `max_latency` per direction, ns; u64::MAX without one.
    max_latency_ns: [u64; DDIRS],
    /// `latency_target`: the depth search; None without it.
    latency_target: Option<LatencyTarget>,
    /// I/O logs; None when the job writes none.
    logs: Option<IoLogger>,
    /// The directions the job uses (the logs keep one stream each).
    used: [bool; DDIRS],
    status: Option<Status<'a>>,
    /// When the next interim result is due; never without `--status-interval`.
    next_status_ns: u64,
    /// `rate_min` / `rate_iops_min`; None without them.
    rate_floor: Option<RateFloor>,
    /// Every failed I/O, when the job tolerates errors.
    tolerated: ErrorTally,
}

impl<'a> Checks<'a> {
    /// The checks `job` asks for, for a queue of `depth` slots; measuring starts at `ramp_end_ns`.
    pub fn new(
        job: &'a JobSpec,
        verify: Option<Verifier>,
        status: Option<(&'a StatusSlot, Duration)>,
        depth: u32,
        ramp_end_ns: u64,
    ) -> Self {
        let used = job.workload.rw.directions();
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
            logs: job.logs.any().then(|| IoLogger::new(&job.logs, used)),
            used,
            next_status_ns: status.as_ref().map_or(u64::MAX, |s| s.every_ns),
            status,
            rate_floor: RateFloor::new(&job.control, ramp_end_ns),
            tolerated: ErrorTally::default(),
        }
    }

    /// Run the checks on `io`, which moved data and ended at `end_ns`;
    /// `measured` when it counts among the job's results.
    #[inline]
    pub fn on_complete(
        &mut self,
        io: &InFlight,
        end_ns: u64,
        queued: bool,
        files: &[OpenFile],
        measured: Option<Measured<'_>>,
    ) -> Flow {
        let mut flow = Flow::Go;
        if let (Ddir::Write, Some(v)) = (io.ddir, &mut self.verify) {
            v.note_completed(io.file, io.offset, io.len);
        }
        let lat_ns = end_ns - io.start_ns;
        if lat_ns > self.max_latency_ns[io.ddir.index()] {
            flow = Flow::Fail(self.too_slow(io, lat_ns, files));
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
            let failed_now = match &flow {
                Flow::Fail(f) => Some(f),
                _ => None,
            };
            self.publish_status(end_ns, &m, failed_now);
        }
        if self.rate_floor.as_ref().is_some_and(|f| f.due(end_ns)) {
            if let Some(failure) = self.check_rate_floor(end_ns, m.stats) {
                flow = flow.then(Flow::Fail(failure));
            }
        }
        flow
    }

    /// `io` failed with `errno`: Ok when the job tolerates it (`continue_on_error`),
    /// else the job's failure.
    pub fn on_failed_io(
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
        Err(IoFailure {
            message: format!(
                "{} {} at offset {} (length {}): {}",
                io.ddir.name(),
                files[io.file as usize].path.display(),
                io.offset,
                io.len,
                crate::errno::describe(&std::io::Error::from_raw_os_error(errno))
            ),
            errno,
        })
    }

    /// Ramp time is over: the logs forget what they recorded.
    pub fn at_measure_start(&mut self) {
        if self.logs.is_some() {
            self.logs = Some(IoLogger::new(&self.job.logs, self.used));
        }
    }

    /// What the checks add to the worker's result, `runtime_ns` after measuring started.
    pub fn finish(self, runtime_ns: u64, result: &mut WorkerResult) {
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
                "{} {} at offset {} (length {}) took {lat_ns} ns, over max_latency={limit} ns",
                io.ddir.name(),
                files[io.file as usize].path.display(),
                io.offset,
                io.len,
            ),
            errno: libc::ETIMEDOUT,
        }
    }

    /// Publish a copy of the results so far for an interim report; `failed_now`
    /// is a failure of this same I/O, not yet the worker's error.
    #[cold]
    fn publish_status(&mut self, now_ns: u64, m: &Measured<'_>, failed_now: Option<&IoFailure>) {
        let Some(status) = &self.status else {
            return;
        };
        self.next_status_ns = (now_ns / status.every_ns + 1) * status.every_ns;
        status.slot.publish(WorkerResult {
            stats: m.stats.clone(),
            rates: m.rates.clone(),
            cpu: thread_rusage().unwrap_or_default().since(m.cpu_at_start),
            runtime_ns: now_ns.saturating_sub(m.since_ns),
            error: m.error.as_ref().or(failed_now).cloned(),
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
        floor.check(now_ns, done).err().map(|message| IoFailure {
            message,
            errno: libc::EIO,
        })
    }
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
