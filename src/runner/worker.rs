//! The worker hot loop: generate → (pace) → queue/commit/reap → account.
//!
//! Monomorphised per engine. Per I/O it reads the clock twice (start and
//! completion; async engines once more per submitted batch), records into its
//! own histograms and touches nothing shared but one relaxed stop flag: no
//! allocation, no lock.

use super::budget::Budget;
use super::error_tally::ErrorTally;
use super::latency_target::{LatencyTarget, Step};
use super::logs::{IoLog, IoLogger, LoggedIo};
use super::rate_floor::{Done, RateFloor};
use super::status::StatusSlot;
use super::verify::{ReadBack, Verifier, VERIFY_ERRNO};
use crate::engine::{Completion, Engine, EngineSetup, IoRequest, Queued, TrimMethod};
use crate::job::spec::{error_kind, Ddir, JobSpec, RwPattern, WorkloadSpec, DDIRS};
use crate::model::{SteadyStateReport, VerifyReport};
use crate::observe::live::LiveCounters;
use crate::stats::{IntervalSampler, RateSeries, WorkerStats};
use crate::workload::buffers::BufferFiller;
use crate::workload::pacing::{Clock, MonotonicClock, Pacer};
use crate::workload::{FileRegion, IoGenerator, NextIo};
use iolens_sys::os::{thread_rusage, Rusage};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Everything one worker needs; built by the runner before the start barrier.
pub struct WorkerCtx<'a> {
    pub job: &'a JobSpec,
    pub files: Vec<Arc<File>>,
    pub file_sizes: Vec<u64>,
    pub paths: Vec<PathBuf>,
    pub regions: Vec<FileRegion>,
    pub buffer_align: usize,
    pub seed: u64,
    pub start: &'a dyn StartSignal,
    pub stop: &'a AtomicBool,
    /// Running totals the sampler reads while the worker runs.
    pub live: LiveCounters<'a>,
    /// `--status-interval`: where to publish interim results, and how often
    /// (the runner asks more often than it reports).
    pub status: Option<(&'a StatusSlot, Duration)>,
    /// `--io-timeout`: an async I/O in flight longer fails the job (ETIMEDOUT).
    pub io_timeout: Option<Duration>,
}

/// What a worker waits on, after its engine is set up, before its first I/O:
/// the group's barrier for a thread, the parent's `go` for a worker process.
pub trait StartSignal: Sync {
    fn wait(&self);
}

impl StartSignal for Barrier {
    fn wait(&self) {
        Barrier::wait(self);
    }
}

/// The first I/O error of a worker, with where it happened.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IoFailure {
    pub message: String,
    pub errno: i32,
}

/// What a worker measured.
#[derive(Clone, Serialize, Deserialize)]
pub struct WorkerResult {
    pub stats: WorkerStats,
    /// Per-interval bandwidth and IOPS samples [read, write, trim].
    pub rates: [RateSeries; DDIRS],
    pub cpu: Rusage,
    /// Measured time (ramp excluded), ns, the verify passes after the writes included.
    pub runtime_ns: u64,
    /// Of `runtime_ns`, the time of the verify passes after the writes (fio
    /// counts it as reading time); 0 without them.
    #[serde(default)]
    pub verify_ns: u64,
    pub error: Option<IoFailure>,
    /// Failed I/Os when the job tolerates some (`continue_on_error`).
    #[serde(default)]
    pub tolerated: ErrorTally,
    pub notes: Vec<String>,
    /// What the job's `write_*_log` options asked to record; None without logs.
    pub logs: Option<IoLog>,
    /// What `verify=` checked; None without verification.
    #[serde(default)]
    pub verify: Option<VerifyReport>,
    /// The steady-state check of the worker's unit, filled in by the group's
    /// supervisor (it judges, not the worker); None without `steadystate`.
    #[serde(default)]
    pub steadystate: Option<SteadyStateReport>,
    /// The depth the `latency_target` search found; None without a target.
    #[serde(default)]
    pub latency_depth: Option<u32>,
}

/// Start, submit and direction of an I/O that is in flight in an async engine.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    start_ns: u64,
    submit_ns: u64,
    ddir: Ddir,
    len: u32,
    file: u32,
    offset: u64,
}

const IDLE: InFlight = InFlight {
    start_ns: 0,
    submit_ns: 0,
    ddir: Ddir::Read,
    len: 0,
    file: 0,
    offset: 0,
};

/// Run one worker to completion with engine `E`.
pub fn run<E: Engine>(ctx: WorkerCtx) -> WorkerResult {
    let job = ctx.job;
    let depth = job.queue.depth;
    let slot_size = slot_size(&job.workload);
    let setup = EngineSetup {
        spec: &job.engine,
        files: &ctx.files,
        file_sizes: &ctx.file_sizes,
        slots: depth,
        slot_size,
        align: ctx.buffer_align,
        sync_writes: job.io.sync != crate::job::spec::SyncMode::None,
    };
    let engine = crate::fileset::advise_access(job, &ctx.files).and_then(|()| E::open(&setup));
    ctx.live.worker_started();
    // Every worker reaches the barrier, even a failed one, or the others would wait forever.
    ctx.start.wait();
    let engine = match engine {
        Ok(e) => e,
        Err(e) => {
            ctx.live.worker_finished();
            return WorkerResult::failed(IoFailure {
                message: format!(
                    "ioengine={}: setup failed: {}",
                    job.engine.kind.name(),
                    crate::errno::describe(&e)
                ),
                errno: e.raw_os_error().unwrap_or(0),
            });
        }
    };
    if !job.exec.startdelay.is_zero() {
        std::thread::sleep(job.exec.startdelay);
    }
    let live = ctx.live;
    let mut worker = Worker::new(ctx, engine, depth);
    worker.run();
    let result = worker.finish();
    live.worker_finished();
    result
}

/// How each of the job's files is trimmed; nothing for a job that does not trim.
fn trim_methods(job: &JobSpec, files: &[Arc<File>]) -> Result<Vec<TrimMethod>, IoFailure> {
    if !job.workload.rw.trims() {
        return Ok(Vec::new());
    }
    files
        .iter()
        .map(|file| TrimMethod::of(file))
        .collect::<std::io::Result<_>>()
        .map_err(|e| IoFailure {
            message: format!(
                "rw={}: cannot tell how to trim the target: {}",
                rw_name(job),
                crate::errno::describe(&e)
            ),
            errno: e.raw_os_error().unwrap_or(0),
        })
}

/// The `rw=` value of a trimming job, for messages.
fn rw_name(job: &JobSpec) -> &'static str {
    match job.workload.rw {
        RwPattern::RandTrim => "randtrim",
        RwPattern::TrimWrite => "trimwrite",
        _ => "trim",
    }
}

/// Bytes of each buffer slot: the largest block that carries data. Trims carry
/// none, except in `trimwrite`, where the write after a trim has the trim's length.
fn slot_size(w: &WorkloadSpec) -> usize {
    let [read, write, trim] = &w.bs;
    let carries_data = [
        (w.rw.reads(), read),
        (w.rw.writes(), write),
        (w.rw.writes() && w.rw.trims(), trim),
    ];
    let largest = carries_data
        .into_iter()
        .filter(|(used, _)| *used)
        .map(|(_, sizes)| sizes.max())
        .max();
    // a trim-only job still gets a (never used) slot per queue entry
    largest.unwrap_or(1) as usize
}

impl WorkerResult {
    /// Nothing measured yet.
    pub fn empty() -> Self {
        WorkerResult {
            stats: WorkerStats::default(),
            rates: Default::default(),
            cpu: Rusage::default(),
            runtime_ns: 0,
            verify_ns: 0,
            error: None,
            tolerated: ErrorTally::default(),
            notes: Vec::new(),
            logs: None,
            verify: None,
            steadystate: None,
            latency_depth: None,
        }
    }

    pub(super) fn failed(error: IoFailure) -> Self {
        WorkerResult {
            error: Some(error),
            ..Self::empty()
        }
    }
}

struct Worker<'a, E: Engine> {
    ctx: WorkerCtx<'a>,
    engine: E,
    gen: IoGenerator,
    pacer: Pacer,
    filler: BufferFiller,
    clock: MonotonicClock,
    stats: WorkerStats,
    sampler: IntervalSampler,
    free_slots: Vec<u32>,
    in_flight: Vec<InFlight>,
    in_flight_count: u32,
    /// Slots queued since the last commit.
    pending: Vec<u32>,
    completions: Vec<Completion>,
    /// Stop issuing (time/size limit reached, stop requested, or an error).
    done_issuing: bool,
    measuring: bool,
    /// The latest clock reading (start, completion or submission of an I/O).
    last_now_ns: u64,
    measure_start_ns: u64,
    end_ns: u64,
    ramp_end_ns: u64,
    cpu_at_measure_start: Rusage,
    /// Size, io_size, loops and number_ios: what may still be issued.
    budget: Budget,
    writes_since_sync: u32,
    dirty_files: Vec<bool>,
    error: Option<IoFailure>,
    /// Every failed I/O, when the job tolerates errors.
    tolerated: ErrorTally,
    used: [bool; DDIRS],
    /// How each file is trimmed; empty unless the job trims.
    trim_methods: Vec<TrimMethod>,
    /// I/O logs; None (and one branch per I/O) when the job writes none.
    logs: Option<IoLogger>,
    /// When the next interim result is due (`--status-interval`); never without one.
    next_status_ns: u64,
    /// `verify=`: stamps written blocks and checks them; None without verification.
    verify: Option<Verifier>,
    /// Time spent in verify passes after the writes, ns.
    verify_ns: u64,
    /// This pass's writes were read back (`loops`: fio verifies after each pass).
    pass_verified: bool,
    /// The job's time (`runtime`) ran out: as in fio, no verify pass follows.
    out_of_time: bool,
    /// `max_latency` per direction, ns; u64::MAX without one.
    max_latency_ns: [u64; DDIRS],
    /// `rate_min` / `rate_iops_min`; None (one branch per I/O) without them.
    rate_floor: Option<RateFloor>,
    /// `iodepth_low`: the depth a full queue drains to before it is refilled.
    refill_depth: u32,
    /// The queue filled up and is draining down to `refill_depth`.
    draining: bool,
    /// `latency_target`: the depth search; None (one branch per I/O) without it.
    latency_target: Option<LatencyTarget>,
    /// Slots kept free to cap the queue below iodepth (the latency_target search).
    reserved_slots: usize,
    /// Async engines: when the ages of the I/Os in flight are next checked.
    next_age_check_ns: u64,
    /// `--io-timeout` gave up on I/Os still in flight: the engine must never
    /// free their buffers, so it is leaked rather than dropped.
    abandoned_in_flight: bool,
}

/// How often an async worker looks for its oldest I/O in flight without
/// `--io-timeout`: often enough for the watchdog, rare enough to cost nothing.
const AGE_CHECK_EVERY: Duration = Duration::from_secs(1);

impl<'a, E: Engine> Worker<'a, E> {
    fn new(ctx: WorkerCtx<'a>, mut engine: E, depth: u32) -> Self {
        let job = ctx.job;
        let mut filler = BufferFiller::new(&job.buffers, ctx.seed);
        for slot in 0..depth {
            filler.fill(engine.buffer(slot));
        }
        let region_total: u64 = ctx.regions.iter().map(|r| r.len).sum();
        let budget = Budget::new(job, region_total);
        let gen = IoGenerator::new(&job.workload, ctx.regions.clone(), ctx.seed);
        let pacer = Pacer::new(&job.pacing, ctx.seed);
        let clock = MonotonicClock::new();
        ctx.live.set_clock_origin(clock.now_ns());
        let age_check_ns = age_check_period(ctx.io_timeout).as_nanos() as u64;
        engine.set_wait_limit(Some(age_check_period(ctx.io_timeout)));
        let ramp_end_ns = job.exec.ramp_time.as_nanos() as u64;
        let end_ns = job
            .exec
            .runtime
            .map_or(u64::MAX, |r| ramp_end_ns + r.as_nanos() as u64);
        let avg_ns = job.measure.avg_time.as_nanos() as u64;
        let expected_samples = job
            .exec
            .runtime
            .map_or(64, |r| (r.as_nanos() as u64 / avg_ns.max(1)) as usize + 2);
        let nfiles = ctx.files.len();
        let used = job.workload.rw.directions();
        let verify = job.verify.as_ref().map(|spec| {
            Verifier::new(
                spec,
                job,
                ctx.seed,
                &ctx.files,
                &ctx.paths,
                &ctx.regions,
                ctx.buffer_align,
            )
        });
        let (verify, verify_error) = match verify {
            Some(Ok(v)) => (Some(v), None),
            Some(Err(message)) => (None, Some(IoFailure { message, errno: 0 })),
            None => (None, None),
        };
        let (trim_methods, trim_error) = match trim_methods(job, &ctx.files) {
            Ok(methods) => (methods, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let setup_error = verify_error.or(trim_error);
        Worker {
            engine,
            gen,
            pacer,
            filler,
            clock,
            stats: WorkerStats::default(),
            sampler: IntervalSampler::new(avg_ns, ramp_end_ns, expected_samples),
            free_slots: (0..depth).rev().collect(),
            in_flight: vec![IDLE; depth as usize],
            in_flight_count: 0,
            pending: Vec::with_capacity(depth as usize),
            completions: Vec::with_capacity(depth as usize),
            measuring: ramp_end_ns == 0,
            last_now_ns: 0,
            measure_start_ns: 0,
            end_ns,
            ramp_end_ns,
            cpu_at_measure_start: thread_rusage().unwrap_or_default(),
            budget,
            writes_since_sync: 0,
            dirty_files: vec![false; nfiles],
            done_issuing: setup_error.is_some(),
            error: setup_error,
            tolerated: ErrorTally::default(),
            verify,
            verify_ns: 0,
            pass_verified: false,
            out_of_time: false,
            used,
            trim_methods,
            logs: job.logs.any().then(|| IoLogger::new(&job.logs, used)),
            next_status_ns: ctx
                .status
                .map_or(u64::MAX, |(_, every)| every.as_nanos() as u64),
            max_latency_ns: job
                .control
                .max_latency_ns
                .map(|ns| if ns == 0 { u64::MAX } else { ns }),
            rate_floor: RateFloor::new(&job.control, ramp_end_ns),
            refill_depth: job.queue.refill_depth,
            draining: false,
            latency_target: job
                .control
                .latency_target
                .as_ref()
                .map(|spec| LatencyTarget::new(spec, depth, 0)),
            reserved_slots: 0,
            next_age_check_ns: age_check_ns,
            abandoned_in_flight: false,
            ctx,
        }
    }

    fn run(&mut self) {
        if self.verify.as_ref().is_some_and(Verifier::only) {
            self.replay_writes_for_verify();
            return;
        }
        let batch_submit = self.ctx.job.queue.batch_submit as usize;
        loop {
            while !self.done_issuing
                && self.free_slots.len() > self.reserved_slots
                && !self.draining
            {
                if self.drain_due() {
                    break;
                }
                // The time of the last completion is fresh enough for the limits
                // and saves a clock read per I/O.
                self.check_limits(self.last_now_ns);
                if self.done_issuing {
                    break;
                }
                let Some(io) = self.next_io() else {
                    // a verify between passes pauses issuing; anything else ends it
                    self.done_issuing = !self.pass_verify_due();
                    break;
                };
                self.pace(&io);
                self.issue(io);
                if self.pending.len() >= batch_submit {
                    self.commit();
                }
            }
            if !self.pending.is_empty() {
                self.commit();
            }
            if self.free_slots.len() <= self.reserved_slots
                && self.refill_depth < self.in_flight_count
            {
                self.draining = true;
            }
            if self.in_flight_count > 0 {
                self.reap();
            } else if self.sync_due() {
                self.sync_dirty_files();
            } else if self.verify.as_ref().is_some_and(Verifier::backlog_due) {
                self.verify_backlog();
            } else if self.pass_verify_due() {
                self.pass_verified = true;
                self.verify_pass();
            } else if self.done_issuing {
                break;
            }
        }
        if self.ctx.job.io.end_fsync && self.error.is_none() {
            self.sync_dirty_files();
        }
    }

    /// A sync or a verify pass is due: the queue must drain first.
    #[inline]
    fn drain_due(&self) -> bool {
        self.sync_due()
            || self.verify.as_ref().is_some_and(Verifier::backlog_due)
            || self.pass_verify_due()
    }

    /// A pass of `loops` ended and another follows: fio reads this pass's writes
    /// back first (the last pass's are read back when the job ends). A
    /// `verify_only` replay walks every pass and reads back once, at the end.
    #[inline]
    fn pass_verify_due(&self) -> bool {
        let job = self.ctx.job;
        self.budget.pass_over()
            && !self.pass_verified
            && !job.exec.time_based
            && self.budget.passes_done() + 1 < self.budget.loops()
            && self
                .verify
                .as_ref()
                .is_some_and(|v| v.verifies_at_end() && v.reads_back_writes() && !v.only())
    }

    /// fsync=N / fdatasync=N: a sync is due.
    #[inline]
    fn sync_due(&self) -> bool {
        let io = &self.ctx.job.io;
        let every = if io.fsync > 0 { io.fsync } else { io.fdatasync };
        every > 0 && self.writes_since_sync >= every
    }

    #[inline]
    fn check_limits(&mut self, now: u64) {
        if now >= self.end_ns || self.ctx.stop.load(Ordering::Relaxed) {
            self.done_issuing = true;
            self.out_of_time |= now >= self.end_ns;
        }
        if !self.measuring && now >= self.ramp_end_ns {
            self.start_measuring(now);
        }
    }

    /// Ramp time is over: forget what was measured so far.
    fn start_measuring(&mut self, now: u64) {
        self.measuring = true;
        self.stats = WorkerStats::default();
        self.measure_start_ns = now;
        self.sampler.restart(now);
        self.cpu_at_measure_start = thread_rusage().unwrap_or_default();
        if self.logs.is_some() {
            self.logs = Some(IoLogger::new(&self.ctx.job.logs, self.used));
        }
    }

    /// The next I/O within size, loop and count limits.
    #[inline]
    fn next_io(&mut self) -> Option<NextIo> {
        // a fresh pass that yields nothing (no block fits) ends the job
        let mut restarted = false;
        loop {
            if self.budget.spent() {
                return None;
            }
            let io = if self.budget.pass_over() {
                None
            } else {
                self.gen.next()
            };
            if let Some(io) = io {
                self.budget.issued(u64::from(io.len));
                return Some(io);
            }
            if !self.budget.pass_over() {
                self.budget.regions_exhausted();
            }
            // fio reads a pass's writes back before the next pass starts
            if restarted || self.pass_verify_due() || !self.budget.next_pass() {
                return None;
            }
            self.pass_verified = false;
            self.gen.restart();
            restarted = true;
        }
    }

    #[inline]
    fn pace(&mut self, io: &NextIo) {
        if self.pacer.is_unpaced() {
            return;
        }
        // thinktime_blocks_type=issue: the pause follows the Nth issued I/O.
        let think_ns = self.pacer.think_before_issue();
        if think_ns > 0 {
            if !self.pending.is_empty() {
                self.commit();
            }
            self.think_for(think_ns);
        }
        let now = self.clock.now_ns();
        let at = self.pacer.issue_at(now, io.ddir, u64::from(io.len));
        if at > now {
            if !self.pending.is_empty() {
                self.commit();
            }
            self.clock.sleep_until_ns(at.min(self.end_ns));
        }
    }

    #[inline]
    fn issue(&mut self, io: NextIo) {
        if io.ddir == Ddir::Trim {
            self.trim(io);
            return;
        }
        // Callers issue only while more slots are free than reserved (see `run`).
        let slot = self.free_slots.pop().expect("issue() needs a free slot");
        if io.ddir == Ddir::Write {
            let buf = &mut self.engine.buffer(slot)[..io.len as usize];
            match &mut self.verify {
                Some(v) => v.prepare_write(buf, io.file, io.offset),
                None => self.filler.refresh(buf),
            }
        }
        let req = IoRequest {
            slot,
            ddir: io.ddir,
            file: io.file,
            offset: io.offset,
            len: io.len,
        };
        let start_ns = self.clock.now_ns();
        self.ctx.live.waiting_on(io.file, io.offset, start_ns);
        let queued = self.engine.queue(&req);
        let in_flight = InFlight {
            start_ns,
            submit_ns: start_ns,
            ddir: io.ddir,
            len: io.len,
            file: io.file,
            offset: io.offset,
        };
        match queued {
            Ok(Queued::Completed(result)) => {
                self.ctx.live.waiting_on_none();
                let end_ns = self.clock.now_ns();
                self.last_now_ns = end_ns;
                self.ctx.live.add_in_io(end_ns - start_ns);
                self.stats.depth.record_submit(1);
                self.stats.depth.record_level(1);
                self.stats.depth.record_complete(1);
                self.free_slots.push(slot);
                self.complete(in_flight, result, end_ns, false);
                self.think();
            }
            Ok(Queued::Queued) => {
                self.in_flight[slot as usize] = in_flight;
                self.pending.push(slot);
            }
            Err(e) => self.engine_failed("queue", e),
        }
    }

    /// Trims run alone and synchronously in every engine: what is queued is
    /// submitted and reaped first, then the range is discarded and accounted
    /// like an I/O a blocking engine completed.
    fn trim(&mut self, io: NextIo) {
        if !self.pending.is_empty() {
            self.commit();
        }
        while self.in_flight_count > 0 {
            self.reap_at_least(self.in_flight_count);
        }
        if self.done_issuing {
            return;
        }
        let file = io.file as usize;
        let method = self.trim_methods[file];
        let start_ns = self.clock.now_ns();
        let result = self
            .engine
            .trim(&self.ctx.files[file], method, io.offset, u64::from(io.len));
        let end_ns = self.clock.now_ns();
        self.last_now_ns = end_ns;
        self.ctx.live.add_in_io(end_ns - start_ns);
        let result = match result {
            Ok(()) => i64::from(io.len),
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(0);
                if let Some(why) = method.refusal(errno) {
                    return self.trim_refused(file, why, errno);
                }
                -i64::from(errno)
            }
        };
        self.stats.depth.record_submit(1);
        self.stats.depth.record_level(1);
        self.stats.depth.record_complete(1);
        let trimmed = InFlight {
            start_ns,
            submit_ns: start_ns,
            ddir: Ddir::Trim,
            len: io.len,
            file: io.file,
            offset: io.offset,
        };
        self.complete(trimmed, result, end_ns, false);
        self.think();
    }

    #[cold]
    fn trim_refused(&mut self, file: usize, why: &str, errno: i32) {
        self.fail(IoFailure {
            message: format!(
                "rw={}: {} cannot be trimmed: {why}",
                rw_name(self.ctx.job),
                self.ctx.paths[file].display()
            ),
            errno,
        });
    }

    fn commit(&mut self) {
        let before = self.clock.now_ns();
        if let Err(e) = self.engine.commit() {
            self.engine_failed("submit", e);
        }
        let now = self.clock.now_ns();
        self.last_now_ns = now;
        self.ctx.live.add_in_io(now - before);
        let n = self.pending.len() as u32;
        self.stats.depth.record_submit(n);
        for &slot in &self.pending {
            self.in_flight[slot as usize].submit_ns = now;
            self.in_flight_count += 1;
            self.stats.depth.record_level(self.in_flight_count);
        }
        self.pending.clear();
    }

    fn reap(&mut self) {
        // Wait for everything when draining or before a sync; else at least
        // iodepth_batch_complete_min, to keep the queue full.
        let min = if self.done_issuing || self.drain_due() {
            self.in_flight_count
        } else {
            self.ctx
                .job
                .queue
                .batch_complete_min
                .min(self.in_flight_count)
        };
        self.reap_at_least(min);
    }

    fn reap_at_least(&mut self, min: u32) {
        let max = self.ctx.job.engine.batch_complete_max.max(min);
        let mut completions = std::mem::take(&mut self.completions);
        let before = self.clock.now_ns();
        if let Err(e) = self.engine.reap(min, max, &mut completions) {
            self.engine_failed("reap", e);
            // The engine can no longer report completions; nothing more will arrive.
            self.in_flight_count = 0;
        }
        let now = self.clock.now_ns();
        self.last_now_ns = now;
        self.ctx.live.add_in_io(now - before);
        if !completions.is_empty() {
            self.stats.depth.record_complete(completions.len() as u32);
        }
        for c in completions.drain(..) {
            let io = std::mem::replace(&mut self.in_flight[c.slot as usize], IDLE);
            self.in_flight_count -= 1;
            self.free_slots.push(c.slot);
            self.complete(io, c.result, now, true);
        }
        self.completions = completions;
        if self.in_flight_count == 0 {
            // Else the watchdog would age an I/O that is done while the worker thinks or sleeps.
            self.ctx.live.waiting_on_none();
        }
        if now >= self.next_age_check_ns {
            self.check_in_flight_ages(now);
        }
        if self.draining && self.in_flight_count <= self.refill_depth {
            self.draining = false;
        }
        if !self.pacer.is_unpaced() {
            self.think();
        }
    }

    /// Publish the oldest I/O in flight for the watchdog and, with
    /// `--io-timeout`, give up on the job when it is older than that.
    #[cold]
    fn check_in_flight_ages(&mut self, now_ns: u64) {
        self.next_age_check_ns = now_ns + age_check_period(self.ctx.io_timeout).as_nanos() as u64;
        // Completed slots hold IDLE (length 0).
        let Some(oldest) = self
            .in_flight
            .iter()
            .filter(|io| io.len > 0)
            .min_by_key(|io| io.start_ns)
            .copied()
        else {
            self.ctx.live.waiting_on_none();
            return;
        };
        self.ctx
            .live
            .waiting_on(oldest.file, oldest.offset, oldest.start_ns);
        let Some(timeout) = self.ctx.io_timeout else {
            return;
        };
        let age_ns = now_ns.saturating_sub(oldest.start_ns);
        if age_ns <= timeout.as_nanos() as u64 {
            return;
        }
        self.fail(IoFailure {
            message: format!(
                "{} {} at offset {} (length {}) still in flight after {:.1} s, over --io-timeout={:?}",
                oldest.ddir.name(),
                self.ctx.paths[oldest.file as usize].display(),
                oldest.offset,
                oldest.len,
                age_ns as f64 / 1e9,
                timeout,
            ),
            errno: libc::ETIMEDOUT,
        });
        // Waiting for the rest could take forever: stop counting on them.
        self.in_flight_count = 0;
        self.draining = false;
        self.abandoned_in_flight = true;
    }

    /// Account one finished I/O.
    #[inline]
    fn complete(&mut self, io: InFlight, result: i64, end_ns: u64, queued: bool) {
        if result < 0 {
            self.io_failed(&io, (-result) as i32);
            return;
        }
        if io.ddir == Ddir::Write {
            self.writes_since_sync += 1;
            self.dirty_files[io.file as usize] = true;
            if let Some(v) = &mut self.verify {
                v.note_completed(io.file, io.offset, io.len);
            }
        }
        // the live board counts reads and writes only
        if io.ddir != Ddir::Trim {
            self.ctx
                .live
                .record_io(io.ddir.index(), result as u64, end_ns - io.start_ns);
        }
        if end_ns - io.start_ns > self.max_latency_ns[io.ddir.index()] {
            self.too_slow(&io, end_ns - io.start_ns);
        }
        if let Some(target) = &mut self.latency_target {
            target.record(end_ns - io.start_ns);
            if target.due(end_ns) {
                self.close_latency_window(end_ns);
            }
        }
        if !self.measuring || io.start_ns < self.measure_start_ns {
            return;
        }
        let m = &self.ctx.job.measure;
        let d = &mut self.stats.dirs[io.ddir.index()];
        d.ios += 1;
        d.bytes += result as u64;
        if (result as u64) < u64::from(io.len) {
            d.short_ios += 1;
        }
        if m.clat {
            d.clat.record(end_ns - io.submit_ns);
        }
        if m.slat && queued {
            d.slat.record(io.submit_ns - io.start_ns);
        }
        if m.lat {
            d.lat.record(end_ns - io.start_ns);
        }
        if let Some(logs) = &mut self.logs {
            logs.record(&LoggedIo {
                end_ns: end_ns - self.measure_start_ns,
                ddir: io.ddir,
                len: io.len,
                offset: io.offset,
                slat_ns: queued.then(|| io.submit_ns - io.start_ns),
                clat_ns: end_ns - io.submit_ns,
                lat_ns: end_ns - io.start_ns,
            });
        }
        if self.sampler.due(end_ns) {
            self.sampler.take(end_ns, &self.stats, self.used);
        }
        if end_ns >= self.next_status_ns {
            self.publish_status(end_ns);
        }
        if self.rate_floor.as_ref().is_some_and(|f| f.due(end_ns)) {
            self.check_rate_floor(end_ns);
        }
    }

    /// `max_latency`: the I/O counts, then the job fails as in fio (ETIMEDOUT).
    #[cold]
    fn too_slow(&mut self, io: &InFlight, lat_ns: u64) {
        let limit = self.max_latency_ns[io.ddir.index()];
        let message = format!(
            "{} {} at offset {} (length {}) took {lat_ns} ns, over max_latency={limit} ns",
            io.ddir.name(),
            self.ctx.paths[io.file as usize].display(),
            io.offset,
            io.len,
        );
        self.fail(IoFailure {
            message,
            errno: libc::ETIMEDOUT,
        });
    }

    /// `rate_min` / `rate_iops_min`: too little moved over a window fails the job (EIO, as fio).
    #[cold]
    fn check_rate_floor(&mut self, now_ns: u64) {
        let Some(floor) = &mut self.rate_floor else {
            return;
        };
        let done = self.stats.dirs.each_ref().map(|d| Done {
            bytes: d.bytes,
            ios: d.ios,
        });
        if let Err(message) = floor.check(now_ns, done) {
            self.fail(IoFailure {
                message,
                errno: libc::EIO,
            });
        }
    }

    /// `latency_target`: a window ended; cap the queue at the next depth, or
    /// end the job once the search has settled.
    #[cold]
    fn close_latency_window(&mut self, now_ns: u64) {
        let Some(target) = &mut self.latency_target else {
            return;
        };
        let depth = self.in_flight.len();
        match target.close_window(now_ns) {
            Step::Depth(next) => self.reserved_slots = depth - next as usize,
            Step::Settled(_) => self.done_issuing = true,
        }
    }

    /// Publish a copy of the results so far for an interim report.
    #[cold]
    fn publish_status(&mut self, now_ns: u64) {
        let Some((slot, every)) = self.ctx.status else {
            return;
        };
        let every = (every.as_nanos() as u64).max(1);
        self.next_status_ns = (now_ns / every + 1) * every;
        slot.publish(WorkerResult {
            stats: self.stats.clone(),
            rates: self.sampler.rates().clone(),
            cpu: thread_rusage()
                .unwrap_or_default()
                .since(&self.cpu_at_measure_start),
            runtime_ns: now_ns.saturating_sub(self.measure_start_ns),
            error: self.error.clone(),
            ..WorkerResult::empty()
        });
    }

    fn think(&mut self) {
        let ns = self.pacer.think_after_io();
        if ns > 0 {
            self.think_for(ns);
        }
    }

    fn think_for(&mut self, ns: u64) {
        let now = self.clock.now_ns();
        let until = (now + ns).min(self.end_ns);
        // thinktime_spin: the first part stands for CPU work on the data.
        let spin = self.pacer.thinktime_spin_ns();
        if spin > 0 {
            self.clock.spin_until_ns((now + spin).min(until));
        }
        self.clock.sleep_until_ns(until);
    }

    fn sync_dirty_files(&mut self) {
        let datasync = self.ctx.job.io.fsync == 0 && self.ctx.job.io.fdatasync > 0;
        for file in 0..self.dirty_files.len() {
            if !self.dirty_files[file] {
                continue;
            }
            let start = self.clock.now_ns();
            let result = self.engine.sync_file(file as u32, datasync);
            let end = self.clock.now_ns();
            match result {
                Ok(()) => {
                    self.stats.sync_ios += 1;
                    if self.measuring {
                        self.stats.sync_lat.record(end - start);
                    }
                }
                Err(e) => {
                    let what = if datasync { "fdatasync" } else { "fsync" };
                    self.fail(IoFailure {
                        message: format!(
                            "{what} {}: {}",
                            self.ctx.paths[file].display(),
                            crate::errno::describe(&e)
                        ),
                        errno: e.raw_os_error().unwrap_or(0),
                    });
                }
            }
            self.dirty_files[file] = false;
        }
        self.writes_since_sync = 0;
    }

    /// `verify_only`: walk the job's writes without issuing them, so the verify pass
    /// knows what an earlier run of the same job left in each block. Like fio's
    /// dry run, the writes count as done (bytes and I/Os, no latency, no time).
    fn replay_writes_for_verify(&mut self) {
        while let Some(io) = self.next_io() {
            if let (Ddir::Write, Some(v)) = (io.ddir, &mut self.verify) {
                v.record_write(io.file, io.offset, io.len);
                let written = &mut self.stats.dirs[Ddir::Write.index()];
                written.ios += 1;
                written.bytes += u64::from(io.len);
            }
        }
    }

    #[cold]
    fn verify_backlog(&mut self) {
        match self.with_read_back(|v, reads| v.verify_backlog(reads)) {
            None | Some(Ok(true)) => {}
            // verify_fatal: the bad block is reported when the worker finishes.
            Some(Ok(false)) => self.done_issuing = true,
            Some(Err(e)) => self.verify_read_failed(&e),
        }
    }

    /// Read back the writes logged since the last pass; fio counts the pass's
    /// time and reads as the job's reading. A job that only reads checks its
    /// regions instead, outside its measured I/O.
    #[cold]
    fn verify_pass(&mut self) {
        let start_ns = self.clock.now_ns();
        let stop = self.ctx.stop;
        let result = self.with_read_back(|v, reads| v.verify_all(stop, reads));
        if self
            .verify
            .as_ref()
            .is_some_and(Verifier::reads_back_writes)
        {
            self.verify_ns += self.clock.now_ns() - start_ns;
        }
        if let Some(Err(e)) = result {
            self.verify_read_failed(&e);
        }
    }

    /// Run `f` on the verifier with each read-back counted among the job's reads
    /// (not on the live board: the system view and its findings see the job's
    /// own I/O, and the native report counts the read-back apart).
    fn with_read_back<R>(
        &mut self,
        f: impl FnOnce(&mut Verifier, &mut ReadBack<'_, MonotonicClock>) -> R,
    ) -> Option<R> {
        let verifier = self.verify.as_mut()?;
        let measure = &self.ctx.job.measure;
        let stats = &mut self.stats.dirs[Ddir::Read.index()];
        let measuring = self.measuring;
        let mut record = |bytes: u64, ns: u64| {
            if !measuring {
                return;
            }
            stats.ios += 1;
            stats.bytes += bytes;
            if measure.clat {
                stats.clat.record(ns);
            }
            if measure.lat {
                stats.lat.record(ns);
            }
        };
        let mut reads = ReadBack {
            clock: &self.clock,
            record: &mut record,
        };
        Some(f(verifier, &mut reads))
    }

    fn verify_read_failed(&mut self, e: &std::io::Error) {
        self.fail(IoFailure {
            message: format!("verify: read-back failed: {}", crate::errno::describe(e)),
            errno: e.raw_os_error().unwrap_or(0),
        });
    }

    /// The verify pass after the job's writes (none when its time ran out, as
    /// in fio), then what verification found.
    fn verify_at_end(&mut self) -> Option<VerifyReport> {
        let stopped = self.ctx.stop.load(Ordering::Relaxed) || self.out_of_time;
        if self.verify.as_ref()?.verifies_at_end() && self.error.is_none() && !stopped {
            self.verify_pass();
        }
        let (report, error) = self.verify.take()?.finish();
        if let Some(message) = error {
            self.fail(IoFailure {
                message,
                errno: VERIFY_ERRNO,
            });
        }
        Some(report)
    }

    fn io_failed(&mut self, io: &InFlight, errno: i32) {
        let errors = &self.ctx.job.errors;
        if !errors.stops_on_every_error() {
            self.tolerated.add(errno);
            if errors.tolerates(error_kind(io.ddir == Ddir::Write, errno), errno) {
                // fio counts the failed I/O as issued, with no bytes moved.
                self.stats.dirs[io.ddir.index()].ios += 1;
                return;
            }
        }
        let message = format!(
            "{} {} at offset {} (length {}): {}",
            io.ddir.name(),
            self.ctx.paths[io.file as usize].display(),
            io.offset,
            io.len,
            crate::errno::describe(&std::io::Error::from_raw_os_error(errno))
        );
        self.fail(IoFailure { message, errno });
    }

    fn engine_failed(&mut self, what: &str, e: std::io::Error) {
        let message = format!(
            "ioengine={}: {what} failed: {}",
            self.ctx.job.engine.kind.name(),
            crate::errno::describe(&e)
        );
        self.fail(IoFailure {
            message,
            errno: e.raw_os_error().unwrap_or(0),
        });
    }

    /// Keep the first error and stop issuing (fio's default: stop the job on error).
    fn fail(&mut self, failure: IoFailure) {
        self.done_issuing = true;
        if self.error.is_none() {
            self.error = Some(failure);
        }
    }

    fn finish(mut self) -> WorkerResult {
        if !self.measuring {
            // The run ended inside ramp_time: nothing was measured.
            self.measure_start_ns = self.clock.now_ns();
        }
        // A pass that reads the job's writes back is part of its time, as in fio;
        // a read job's check of earlier writes is not.
        let io_end = self.clock.now_ns();
        let read_back = self
            .verify
            .as_ref()
            .is_some_and(Verifier::reads_back_writes);
        let verify = self.verify_at_end();
        let end = if read_back {
            self.clock.now_ns()
        } else {
            io_end
        };
        let rates = self.sampler.finish(end, &self.stats, self.used);
        let cpu = thread_rusage()
            .unwrap_or_default()
            .since(&self.cpu_at_measure_start);
        let notes = self.engine.notes();
        if self.abandoned_in_flight {
            // The kernel may still write into its buffers: they must outlive the process's use of them.
            std::mem::forget(self.engine);
        }
        WorkerResult {
            stats: self.stats,
            rates,
            cpu,
            runtime_ns: end - self.measure_start_ns,
            verify_ns: self.verify_ns,
            error: self.error,
            tolerated: self.tolerated,
            notes,
            logs: self
                .logs
                .map(|logs| logs.finish(end - self.measure_start_ns)),
            verify,
            steadystate: None,
            latency_depth: self.latency_target.as_ref().map(LatencyTarget::found_depth),
        }
    }
}

/// How often an async worker checks the ages of its I/Os in flight (and the
/// longest it waits in one reap): half the timeout, so none overshoots it by more.
fn age_check_period(io_timeout: Option<Duration>) -> Duration {
    io_timeout.map_or(AGE_CHECK_EVERY, |t| {
        (t / 2).clamp(Duration::from_millis(1), AGE_CHECK_EVERY)
    })
}
