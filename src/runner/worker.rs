//! The worker hot loop: generate → (pace) → queue/commit/reap → account.
//!
//! Monomorphised per engine. Per I/O it reads the clock twice (start and
//! completion; async engines once more per submitted batch), records into its
//! own histograms and touches nothing shared but one relaxed stop flag: no
//! allocation, no lock.

mod drained;
mod gates;
mod pass_breaks;
mod replay;
mod setup;
#[cfg(test)]
mod tests;
mod trim;

use super::budget::Budget;
use super::checks::{describe_io, Checks, Flow, Measured};
use super::ctx::{handles, WorkerCtx};
use super::flow::FlowControl;
use super::queue::{InFlight, Queue};
use super::result::{IoFailure, WorkerResult};
use super::verify::{ReadData, Verifier};
use crate::engine::{Completion, Engine, EngineSetup, IoRequest, Queued, TrimMethod};
use crate::fileset::FileLocks;
use crate::job::spec::{Ddir, JobSpec, DDIRS};
use crate::stats::{IntervalSampler, Sampling, WorkerStats};
use crate::workload::buffers::BufferFiller;
use crate::workload::pacing::{Clock, MonotonicClock};
use crate::workload::{IoGenerator, NextIo};
use gates::IssueGates;
use iolens_sys::os::{thread_rusage, Rusage};
use pass_breaks::PassBreaks;
use replay::Replayer;
use setup::Extras;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Run one worker to completion with engine `E`.
pub(crate) fn run<E: Engine>(ctx: WorkerCtx) -> WorkerResult {
    run_on::<E, _>(ctx, MonotonicClock::new)
}

/// [`run`] on the clock `start_clock` makes once the worker may start (after
/// `startdelay`): its time 0 is where `ramp_time` and `runtime` count from.
fn run_on<E: Engine, C: Clock>(
    mut ctx: WorkerCtx,
    start_clock: impl FnOnce() -> C,
) -> WorkerResult {
    let job = ctx.job;
    let queue = Queue::for_job(job);
    let slot_size = slot_size(job);
    let handles = handles(&ctx.files);
    let file_sizes: Vec<u64> = ctx.files.iter().map(|f| f.size).collect();
    let paths: Vec<_> = ctx.files.iter().map(|f| f.path.clone()).collect();
    let setup = EngineSetup {
        spec: &job.engine,
        files: &handles,
        paths: &paths,
        file_sizes: &file_sizes,
        slots: queue.depth(),
        slot_size,
        align: ctx.buffer_align,
        sync_writes: job.io.sync != crate::job::spec::SyncMode::None,
        advice: crate::fileset::access_advice(job),
    };
    let engine = crate::fileset::advise_access(job, &handles)
        .and_then(|()| E::open(&setup))
        .and_then(|engine| Ok((engine, FileLocks::open(FileLocks::mode_of(job), &paths)?)));
    ctx.live.worker_started();
    // its weight counts in the flow before any worker of the group starts
    let members = std::mem::take(&mut ctx.flow_members);
    let flow = job
        .pacing
        .flow
        .map(|spec| FlowControl::join(&spec, ctx.live, members));
    // Every worker reaches the barrier, even a failed one, or the others would wait forever.
    ctx.start.wait();
    let (engine, locks) = match engine {
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
    // a stop during the delay ends it: the worker then issues nothing
    super::stop_signal::sleep_while(job.exec.startdelay, || !ctx.stop.load(Ordering::Relaxed));
    let live = ctx.live;
    let gates = IssueGates::new(job, ctx.seed, locks, flow);
    let mut worker = Worker::new(ctx, engine, queue, gates, start_clock());
    worker.run();
    let result = worker.finish();
    live.record_final_io();
    live.worker_finished();
    result
}

/// Bytes of each buffer slot: the largest block that carries data. Trims carry
/// none, except in a generated `trimwrite`, where the write after a trim has the
/// trim's length; a replayed log's writes have their own (fio's t0038: 2 GiB trims
/// beside 4 KiB writes at iodepth=128).
fn slot_size(job: &JobSpec) -> usize {
    let w = &job.workload;
    let [read, write, trim] = &w.bs;
    let replayed = job.iolog.replay.is_some();
    let carries_data = [
        (w.rw.reads(), read),
        (w.rw.writes(), write),
        (w.rw.writes() && w.rw.trims() && !replayed, trim),
    ];
    let largest = carries_data
        .into_iter()
        .filter(|(used, _)| *used)
        .map(|(_, sizes)| sizes.max())
        .max();
    // a trim-only job still gets a (never used) slot per queue entry
    largest.unwrap_or(1) as usize
}

/// One worker's state; `C` is its time, real in a run and fake in the harness
/// tests, so what the loop decides at each moment is tested without sleeping.
struct Worker<'a, E: Engine, C: Clock> {
    ctx: WorkerCtx<'a>,
    engine: E,
    gen: IoGenerator,
    /// What acts before an I/O goes out: pacing, flow, lockfile, cmdprio.
    gates: IssueGates<'a>,
    filler: BufferFiller,
    clock: C,
    stats: WorkerStats,
    sampler: IntervalSampler,
    queue: Queue,
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
    used: [bool; DDIRS],
    /// How each file is trimmed; empty unless the job trims.
    trim_methods: Vec<TrimMethod>,
    /// The optional per-I/O checks (verify, logs, status, limits, tolerated errors).
    checks: Checks<'a>,
    /// Time spent in verify passes after the writes, ns.
    verify_ns: u64,
    /// The work between passes already done after this one (`loops`).
    pass_breaks: PassBreaks,
    /// The job's time (`runtime`) ran out: as in fio, no verify pass follows.
    out_of_time: bool,
    /// `read_iolog`: the log the I/Os come from; None for generated I/O.
    replay: Option<Replayer<'a>>,
    /// Async engines: when the ages of the I/Os in flight are next checked.
    next_age_check_ns: u64,
    /// `--io-timeout` gave up on I/Os still in flight: the engine must never
    /// free their buffers, so it is leaked rather than dropped.
    abandoned_in_flight: bool,
}

/// How often an async worker looks for its oldest I/O in flight without
/// `--io-timeout`: often enough for the watchdog, rare enough to cost nothing.
const AGE_CHECK_EVERY: Duration = Duration::from_secs(1);

impl<'a, E: Engine, C: Clock> Worker<'a, E, C> {
    fn new(
        ctx: WorkerCtx<'a>,
        mut engine: E,
        queue: Queue,
        gates: IssueGates<'a>,
        clock: C,
    ) -> Self {
        let job = ctx.job;
        let depth = queue.depth();
        let mut filler = BufferFiller::new(&job.buffers, job.workload.rw.reads(), ctx.seed);
        for slot in 0..depth {
            filler.fill(engine.buffer(slot));
        }
        let region_total: u64 = ctx.files.iter().map(|f| f.region.len).sum();
        let mut budget = Budget::new(job, region_total);
        let regions = ctx.files.iter().map(|f| f.region).collect();
        ctx.live.set_clock_origin(clock.now_ns());
        let age_check_ns = age_check_period(ctx.io_timeout).as_nanos() as u64;
        engine.set_wait_limit(Some(age_check_period(ctx.io_timeout)));
        let ramp_end_ns = job.exec.ramp_time.as_nanos() as u64;
        let extras = Extras::prepare(&ctx, depth, ramp_end_ns, &clock);
        if let Some(writes) = extras.replayed_writes {
            budget.cap_ios(writes);
        }
        let mut gen = IoGenerator::new(&job.workload, regions, extras.seed);
        gen.seed_offsets_as_fio(&job.workload, ctx.worker_number);
        let end_ns = job
            .exec
            .runtime
            .map_or(u64::MAX, |r| ramp_end_ns + r.as_nanos() as u64);
        let logs = &job.logs;
        let bw_sampling = Sampling::of(logs.bw.is_some(), logs, job.measure.avg_time);
        let iops_sampling = Sampling::of(logs.iops.is_some(), logs, job.measure.avg_time);
        let planned_ns = job.exec.runtime.map(|r| r.as_nanos() as u64);
        let nfiles = ctx.files.len();
        let used = job.workload.rw.directions();
        Worker {
            engine,
            gen,
            filler,
            clock,
            stats: gates.fresh_stats(),
            sampler: IntervalSampler::new(bw_sampling, iops_sampling, ramp_end_ns, planned_ns),
            queue,
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
            done_issuing: extras.error.is_some(),
            error: extras.error,
            checks: extras.checks,
            verify_ns: 0,
            pass_breaks: PassBreaks::default(),
            out_of_time: false,
            used,
            trim_methods: extras.trim_methods,
            replay: extras.replay,
            next_age_check_ns: age_check_ns,
            abandoned_in_flight: false,
            gates,
            ctx,
        }
    }

    fn run(&mut self) {
        if self.checks.verify.as_ref().is_some_and(Verifier::only) {
            self.replay_writes_for_verify();
            return;
        }
        let batch_submit = self.ctx.job.queue.batch_submit as usize;
        loop {
            while !self.done_issuing && self.queue.has_room() {
                if self.drain_due() {
                    break;
                }
                // The time of the last completion is fresh enough for the limits
                // and saves a clock read per I/O.
                self.check_limits(self.last_now_ns);
                if self.done_issuing || !self.flow_admits() {
                    break;
                }
                let trim = self.checks.verify.as_mut().and_then(Verifier::next_trim);
                let Some(io) = trim.or_else(|| self.next_io()) else {
                    // a verify or emptying between passes, or a replayed sync, pauses issuing;
                    // anything else ends it
                    self.done_issuing =
                        !(self.pass_break_due().is_some() || self.replay_sync_due());
                    break;
                };
                self.pace(&io);
                self.wait_out_overlap(&io);
                self.issue(io);
                if self.queue.pending() >= batch_submit {
                    self.commit();
                }
            }
            self.commit_pending();
            self.queue.drain_if_full();
            if self.queue.in_flight() > 0 {
                self.reap();
            } else if self.sync_due() {
                self.sync_dirty_files(true);
            } else if self
                .checks
                .verify
                .as_ref()
                .is_some_and(Verifier::backlog_due)
            {
                self.verify_backlog();
            } else if let Some(due) = self.pass_break_due() {
                self.take_pass_break(due);
            } else if self.done_issuing {
                break;
            }
        }
        if self.ctx.job.io.end_fsync && self.error.is_none() {
            self.sync_dirty_files(false);
        }
    }

    // always (also `next_io`, `issue`): with the verify read-back as a second caller
    // the hot loop stopped inlining them, about 80 more instructions per I/O (null engine)
    #[inline(always)]
    fn check_limits(&mut self, now: u64) {
        if now >= self.end_ns || self.ctx.stop.load(Ordering::Relaxed) {
            self.done_issuing = true;
            self.out_of_time |= now >= self.end_ns;
        }
        if !self.measuring && now >= self.ramp_end_ns {
            self.start_measuring(now);
        }
    }

    /// Submit what is queued, if anything is: before the worker waits (pacing, a
    /// replayed I/O's time, an overlap) or reaps, so no queued I/O waits with it.
    #[inline(always)]
    fn commit_pending(&mut self) {
        if self.queue.pending() > 0 {
            self.commit();
        }
    }

    /// Submit what is queued and wait until nothing is in flight.
    fn quiesce(&mut self) {
        self.commit_pending();
        while self.queue.in_flight() > 0 {
            self.reap_at_least(self.queue.in_flight());
        }
    }

    /// Ramp time is over: forget what was measured so far.
    fn start_measuring(&mut self, now: u64) {
        self.measuring = true;
        self.stats = self.gates.fresh_stats();
        self.measure_start_ns = now;
        self.sampler.restart(now);
        self.cpu_at_measure_start = thread_rusage().unwrap_or_default();
        self.checks.at_measure_start();
    }

    /// The next I/O within size, loop and count limits.
    #[inline(always)]
    fn next_io(&mut self) -> Option<NextIo> {
        if self.replay.is_some() {
            return self.next_replayed();
        }
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
            if restarted || self.pass_break_due().is_some() || !self.budget.next_pass() {
                return None;
            }
            self.pass_breaks.new_pass();
            self.pass_begins();
            self.gen.restart();
            restarted = true;
        }
    }

    #[inline(always)]
    fn issue(&mut self, io: NextIo) {
        let clock = &self.clock;
        self.checks.on_issue(&io, || clock.now_ns());
        if io.ddir == Ddir::Trim {
            self.trim(io);
            return;
        }
        // Callers issue only while the queue has room (see `run`).
        let slot = self.queue.take();
        if io.ddir == Ddir::Write {
            let buf = &mut self.engine.buffer(slot)[..io.len as usize];
            match &mut self.checks.verify {
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
        let ioprio = self.pick_ioprio(&io);
        if let Err(e) = self.gates.locks.lock(io.file, io.ddir) {
            self.queue.release(slot);
            return self.lock_failed(e);
        }
        let start_ns = self.clock.now_ns();
        self.ctx.live.waiting_on(io.file, io.offset, start_ns);
        let queued = self.engine.queue(&req);
        if let Err(e) = self.gates.locks.unlock(io.file) {
            self.lock_failed(e);
        }
        let in_flight = InFlight {
            start_ns,
            submit_ns: start_ns,
            ddir: io.ddir,
            len: io.len,
            file: io.file,
            offset: io.offset,
            ioprio,
        };
        match queued {
            Ok(Queued::Completed(result)) => {
                self.ctx.live.waiting_on_none();
                let end_ns = self.clock.now_ns();
                self.last_now_ns = end_ns;
                self.ctx.live.add_in_io(end_ns - start_ns);
                self.stats.depth.record_submit(1);
                self.stats.depth.record_level(1, 1);
                self.stats.depth.record_complete(1);
                self.queue.release(slot);
                self.complete(in_flight, Some(slot), result, end_ns, false);
                self.after_inline_io(&in_flight, result, end_ns);
            }
            Ok(Queued::Queued) => {
                self.queue.queued(slot, in_flight);
                self.note_queued(slot, &in_flight);
            }
            Err(e) => self.engine_failed("queue", e),
        }
    }

    fn commit(&mut self) {
        let before = self.clock.now_ns();
        if let Err(e) = self.engine.commit() {
            self.engine_failed("submit", e);
        }
        let now = self.clock.now_ns();
        self.last_now_ns = now;
        self.ctx.live.add_in_io(now - before);
        self.queue.submitted(now, &mut self.stats.depth);
    }

    fn reap(&mut self) {
        // Wait for everything when draining or before a sync; else at least
        // iodepth_batch_complete_min, to keep the queue full.
        let min = if self.done_issuing || self.drain_due() {
            self.queue.in_flight()
        } else {
            self.ctx
                .job
                .queue
                .batch_complete_min
                .min(self.queue.in_flight())
        };
        self.reap_at_least(min);
    }

    fn reap_at_least(&mut self, min: u32) {
        let max = self.ctx.job.queue.batch_complete_max.max(min);
        let mut completions = std::mem::take(&mut self.completions);
        let before = self.clock.now_ns();
        if let Err(e) = self.engine.reap(min, max, &mut completions) {
            self.engine_failed("reap", e);
            // The engine can no longer report completions; nothing more will arrive.
            self.queue.forget_in_flight();
        }
        let now = self.clock.now_ns();
        self.last_now_ns = now;
        self.ctx.live.add_in_io(now - before);
        if !completions.is_empty() {
            self.stats.depth.record_complete(completions.len() as u32);
        }
        self.note_reaped(&completions, now);
        for c in completions.drain(..) {
            let io = self.queue.completed(c.slot);
            self.complete(io, Some(c.slot), c.result, now, true);
        }
        self.completions = completions;
        if self.queue.in_flight() == 0 {
            // Else the watchdog would age an I/O that is done while the worker thinks or sleeps.
            self.ctx.live.waiting_on_none();
        }
        if now >= self.next_age_check_ns {
            self.check_in_flight_ages(now);
        }
        self.queue.refill_if_drained();
        if !self.gates.pacer.is_unpaced() {
            self.think();
        }
    }

    /// Publish the oldest I/O in flight for the watchdog and, with
    /// `--io-timeout`, give up on the job when it is older than that.
    #[cold]
    fn check_in_flight_ages(&mut self, now_ns: u64) {
        self.next_age_check_ns = now_ns + age_check_period(self.ctx.io_timeout).as_nanos() as u64;
        let Some(oldest) = self.queue.oldest() else {
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
                "{} still in flight after {:.1} s, over --io-timeout={:?}",
                describe_io(&oldest, &self.ctx.files),
                age_ns as f64 / 1e9,
                timeout,
            ),
            errno: libc::ETIMEDOUT,
        });
        // Waiting for the rest could take forever: stop counting on them.
        self.queue.forget_in_flight();
        self.abandoned_in_flight = true;
    }

    /// Account one finished I/O (its buffer in `slot`; none for a trim), then
    /// follow what the job's checks make of it.
    #[inline]
    fn complete(
        &mut self,
        io: InFlight,
        slot: Option<u32>,
        result: i64,
        end_ns: u64,
        queued: bool,
    ) {
        if result < 0 {
            self.io_failed(&io, (-result) as i32);
            return;
        }
        if io.ddir == Ddir::Write {
            self.writes_since_sync += 1;
            self.dirty_files[io.file as usize] = true;
        }
        // the live board counts reads and writes only
        if io.ddir != Ddir::Trim {
            self.ctx
                .live
                .record_io(io.ddir.index(), result as u64, end_ns - io.start_ns);
        }
        // Two calls, so that each inlined copy of the checks knows whether the I/O was measured.
        let flow = if self.measuring && io.start_ns >= self.measure_start_ns {
            self.account(&io, result as u64, end_ns, queued);
            let measured = Measured {
                since_ns: self.measure_start_ns,
                stats: &self.stats,
                rates: self.sampler.rates(),
                cpu_at_start: &self.cpu_at_measure_start,
                error: &self.error,
            };
            let data = read_data(&mut self.engine, slot, io.len, result);
            self.checks
                .on_complete(&io, end_ns, queued, &self.ctx.files, Some(measured), data)
        } else {
            let data = read_data(&mut self.engine, slot, io.len, result);
            self.checks
                .on_complete(&io, end_ns, queued, &self.ctx.files, None, data)
        };
        if flow != Flow::Go {
            self.follow(flow);
        }
    }

    /// Do what the checks asked after an I/O.
    #[cold]
    fn follow(&mut self, flow: Flow) {
        match flow {
            Flow::Go => {}
            Flow::Cap(depth) => self.queue.cap(depth),
            Flow::Stop => self.done_issuing = true,
            Flow::Fail => {
                let failure = self.checks.take_failure();
                self.fail(failure);
            }
        }
    }

    /// Count a measured I/O that moved `bytes` in the job's results.
    #[inline]
    fn account(&mut self, io: &InFlight, bytes: u64, end_ns: u64, queued: bool) {
        let m = &self.ctx.job.measure;
        let d = &mut self.stats.dirs[io.ddir.index()];
        d.ios += 1;
        d.bytes += bytes;
        if bytes < u64::from(io.len) {
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
        // fio keeps one latency per priority: the total one with lat_percentiles
        let prio_ns = if m.lat_percentiles {
            end_ns - io.start_ns
        } else {
            end_ns - io.submit_ns
        };
        d.record_prio(io.ioprio, prio_ns);
        self.sampler
            .record_io(io.ddir.index(), bytes, end_ns - io.submit_ns);
        if self.sampler.due(end_ns) {
            self.sampler.take(end_ns, &self.stats, self.used);
        }
    }

    fn io_failed(&mut self, io: &InFlight, errno: i32) {
        match self.checks.on_failed_io(io, errno, &self.ctx.files) {
            // fio counts the failed I/O as issued, with no bytes moved.
            Ok(()) => self.stats.dirs[io.ddir.index()].ios += 1,
            Err(failure) => self.fail(failure),
        }
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
            .checks
            .verify
            .as_ref()
            .is_some_and(Verifier::reads_back_writes);
        let state_note = self.checks.verify.as_ref().and_then(Verifier::save_state);
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
        let mut notes = self.engine.notes();
        notes.extend(state_note);
        if self.abandoned_in_flight {
            // The kernel may still write into its buffers: they must outlive the process's use of them.
            std::mem::forget(self.engine);
        }
        let runtime_ns = end - self.measure_start_ns;
        let mut result = WorkerResult {
            stats: self.stats,
            rates,
            cpu,
            runtime_ns,
            verify_ns: self.verify_ns,
            error: self.error,
            notes,
            verify,
            ..WorkerResult::empty()
        };
        self.checks.finish(runtime_ns, end, &mut result);
        result
    }
}

/// The buffer of a finished I/O of `len` bytes in `slot` that moved `got`, for
/// a check that reads the data; taken only when a check calls for it.
fn read_data<'e, E: Engine>(
    engine: &'e mut E,
    slot: Option<u32>,
    len: u32,
    got: i64,
) -> impl FnOnce() -> Option<ReadData<'e>> {
    move || {
        let buf = engine.buffer(slot?).get_mut(..len as usize)?;
        Some(ReadData {
            buf,
            got: got as usize,
        })
    }
}

/// How often an async worker checks the ages of its I/Os in flight (and the
/// longest it waits in one reap): half the timeout, so none overshoots it by more.
fn age_check_period(io_timeout: Option<Duration>) -> Duration {
    io_timeout.map_or(AGE_CHECK_EVERY, |t| {
        (t / 2).clamp(Duration::from_millis(1), AGE_CHECK_EVERY)
    })
}
