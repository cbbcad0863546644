//! Live counters: each worker publishes its running totals here with relaxed
//! stores, and the sampler reads them every interval. One writer per
//! `LiveCounters` (its worker), so a load-then-store is exact without any
//! read-modify-write instruction; each sits on its own cache lines so workers
//! never share a line.
//!
//! The board lives in shared memory (a memory file), so a worker *process*
//! maps it too and writes its slot exactly as a worker thread does.
//!
//! Latencies also go into a coarse histogram per slot (4 buckets per power of
//! two of nanoseconds), so the progress line and the sampler can give an
//! interval's p99 from the difference of two readings.
//!
//! A worker also publishes the I/O it waits on (file, offset, start), so the
//! runner's watchdog can say where a hung worker is stuck.

use crate::model::TaskIo;
use iolens_sys::SharedRegion;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Words per worker: a multiple of 128 bytes, so a slot of a page-aligned board
/// fills cache lines of its own (and adjacent-line prefetch does not pull in a neighbour's).
const SLOT_WORDS: usize = (FINAL_IO_SET + 1).next_multiple_of(16);

/// Word indexes in a slot. The ios and bytes pairs are [read, write].
const IOS: usize = 0;
const BYTES: usize = 2;
const LAT_SUM_NS: usize = 4;
/// Largest latency since the sampler last took it.
const LAT_MAX_NS: usize = 5;
/// Time spent inside I/O calls (the call for sync engines; submit and reap for async ones).
const IN_IO_NS: usize = 6;
/// Process and kernel thread id of the worker while it runs; tid 0 before and after.
const PID: usize = 7;
const TID: usize = 8;
/// First word of the latency histogram: I/Os completed per bucket.
const LAT_BUCKETS_AT: usize = 9;
/// `CLOCK_MONOTONIC` at the zero of the worker's own clock, so another process can age its I/O.
const CLOCK_ORIGIN_NS: usize = LAT_BUCKETS_AT + LAT_BUCKETS;
/// The I/O the worker waits on: file index, offset, and start on the worker's
/// clock (0 while it waits on none; written last, so it guards the other two).
const WAITING_FILE: usize = CLOCK_ORIGIN_NS + 1;
const WAITING_OFFSET: usize = CLOCK_ORIGIN_NS + 2;
const WAITING_START_NS: usize = CLOCK_ORIGIN_NS + 3;
/// fio's flow control: the worker's `flow` weight while it runs (0 before and
/// after), and the I/Os the flow let it issue.
const FLOW_WEIGHT: usize = CLOCK_ORIGIN_NS + 4;
const FLOW_ISSUED: usize = CLOCK_ORIGIN_NS + 5;
/// The worker thread's own per-task io as it exited (read_bytes, write_bytes,
/// cancelled_write_bytes), and 1 once they are written: the sampler's last
/// read of the thread's io file may precede its last I/Os by an interval.
const FINAL_IO: usize = CLOCK_ORIGIN_NS + 6;
const FINAL_IO_SET: usize = FINAL_IO + 3;

/// Buckets below 4 ns hold one value each; above, each power of two is split in 4.
const SUB_BUCKETS: u64 = 4;
/// Latencies from 2^38 ns (about 4.6 minutes) up share the last bucket.
const LAT_TRACKED_EXP: u32 = 38;
/// 4 single-value buckets, then 4 per power of two from 2^2 to 2^37.
pub(crate) const LAT_BUCKETS: usize = (4 * (LAT_TRACKED_EXP - 1)) as usize;

type Slot = [AtomicU64; SLOT_WORDS];

/// One worker's running totals since it started (ramp included: this is what
/// the system saw, not what the report measures): a view of its slot on the board.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiveCounters<'a> {
    slot: &'a Slot,
}

/// What the sampler reads: totals, to be diffed between samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LiveTotals {
    pub ios: [u64; 2],
    pub bytes: [u64; 2],
    pub lat_sum_ns: u64,
    pub in_io_ns: u64,
    pub latencies: LatencyBuckets,
}

impl LiveTotals {
    /// What happened between `earlier` and `self`.
    pub(crate) fn since(&self, earlier: &LiveTotals) -> LiveTotals {
        LiveTotals {
            ios: [0, 1].map(|d| self.ios[d].saturating_sub(earlier.ios[d])),
            bytes: [0, 1].map(|d| self.bytes[d].saturating_sub(earlier.bytes[d])),
            lat_sum_ns: self.lat_sum_ns.saturating_sub(earlier.lat_sum_ns),
            in_io_ns: self.in_io_ns.saturating_sub(earlier.in_io_ns),
            latencies: self.latencies.since(&earlier.latencies),
        }
    }
}

impl std::ops::AddAssign<&LiveTotals> for LiveTotals {
    /// Sum the totals of several workers (a job's).
    fn add_assign(&mut self, other: &LiveTotals) {
        for d in 0..2 {
            self.ios[d] += other.ios[d];
            self.bytes[d] += other.bytes[d];
        }
        self.lat_sum_ns += other.lat_sum_ns;
        self.in_io_ns += other.in_io_ns;
        self.latencies += &other.latencies;
    }
}

/// The I/O a worker waits on, as the watchdog reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WaitingIo {
    /// Index into the worker's files.
    pub file: u32,
    pub offset: u64,
    /// When it started, on `CLOCK_MONOTONIC` (`iolens_sys::clock::monotonic_ns`).
    pub started_ns: u64,
}

/// Completed I/Os per latency bucket: coarse (a bucket spans at most a quarter
/// of its lower bound), cheap to record, enough for a live percentile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LatencyBuckets([u64; LAT_BUCKETS]);

impl Default for LatencyBuckets {
    fn default() -> Self {
        LatencyBuckets([0; LAT_BUCKETS])
    }
}

/// The bucket of a latency.
#[inline]
pub(crate) fn bucket_of(ns: u64) -> usize {
    if ns < SUB_BUCKETS {
        return ns as usize;
    }
    let ns = ns.min((1 << LAT_TRACKED_EXP) - 1);
    let exp = ns.ilog2();
    let sub = (ns >> (exp - 2)) & (SUB_BUCKETS - 1);
    (SUB_BUCKETS as usize) * (exp as usize - 1) + sub as usize
}

/// The middle of a bucket's range, nanoseconds: within 12.5 % of every latency in it.
pub(crate) fn bucket_value(bucket: usize) -> u64 {
    let bucket = bucket as u64;
    if bucket < SUB_BUCKETS {
        return bucket;
    }
    let exp = bucket / SUB_BUCKETS + 1;
    let width = 1u64 << (exp - 2);
    let low = (SUB_BUCKETS + bucket % SUB_BUCKETS) * width;
    low + width / 2
}

impl LatencyBuckets {
    /// The counts between `earlier` and `self`.
    pub(crate) fn since(&self, earlier: &LatencyBuckets) -> LatencyBuckets {
        LatencyBuckets(std::array::from_fn(|b| {
            self.0[b].saturating_sub(earlier.0[b])
        }))
    }

    /// The latency (a bucket's middle) that `percent` % of the I/Os did not
    /// exceed; None without I/Os.
    pub(crate) fn percentile_ns(&self, percent: f64) -> Option<u64> {
        let total: u64 = self.0.iter().sum();
        if total == 0 {
            return None;
        }
        // The rank of the I/O at that percentile, counting from 1.
        let rank = ((percent / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        let bucket = self.0.iter().position(|&n| {
            seen += n;
            seen >= rank
        })?;
        Some(bucket_value(bucket))
    }
}

impl std::ops::AddAssign<&LatencyBuckets> for LatencyBuckets {
    fn add_assign(&mut self, other: &LatencyBuckets) {
        for (sum, n) in self.0.iter_mut().zip(other.0) {
            *sum += n;
        }
    }
}

/// Add to a counter only its owning worker writes.
#[inline]
fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed) + by, Relaxed);
}

impl LiveCounters<'_> {
    /// The worker thread starts: publish its ids so the sampler can read its
    /// schedstat and wchan.
    pub(crate) fn worker_started(&self) {
        self.slot[PID].store(std::process::id().into(), Relaxed);
        self.slot[TID].store(iolens_sys::gettid().into(), Relaxed);
    }

    /// The worker runs as process `pid`, on its main thread (so tid = pid);
    /// called by the parent. A child that mapped the board publishes the same
    /// ids itself; this keeps its CPU watched when it could not.
    pub(crate) fn worker_process_started(&self, pid: u32) {
        self.slot[PID].store(pid.into(), Relaxed);
        self.slot[TID].store(pid.into(), Relaxed);
    }

    /// Called on the worker's own thread once its I/O is over: leave its
    /// per-task io for the sampler (see `FINAL_IO`).
    pub(crate) fn record_final_io(&self) {
        let mut text = String::new();
        if super::read_into("/proc/thread-self/io", &mut text) {
            if let Some(io) = super::task_io::parse(&text) {
                self.slot[FINAL_IO].store(io.read_bytes, Relaxed);
                self.slot[FINAL_IO + 1].store(io.write_bytes, Relaxed);
                self.slot[FINAL_IO + 2].store(io.cancelled_write_bytes, Relaxed);
                self.slot[FINAL_IO_SET].store(1, Relaxed);
            }
        }
    }

    /// The worker thread is about to exit: its ids are no longer valid.
    pub(crate) fn worker_finished(&self) {
        self.slot[TID].store(0, Relaxed);
        self.slot[WAITING_START_NS].store(0, Relaxed);
    }

    /// The worker's weight and I/Os no longer count in its flow (as in fio,
    /// once the group notices that it ended, not when it ends).
    pub(crate) fn leave_flow(&self) {
        self.set_flow(0, 0);
    }

    /// fio's flow control: the worker takes part with `weight` and has issued
    /// `issued` I/Os under it. Worker only.
    #[inline]
    pub(crate) fn set_flow(&self, weight: u64, issued: u64) {
        self.slot[FLOW_WEIGHT].store(weight, Relaxed);
        self.slot[FLOW_ISSUED].store(issued, Relaxed);
    }

    /// (weight, issued) of the worker in its flow; (0, 0) when it takes no part.
    #[inline]
    pub(crate) fn flow(&self) -> (u64, u64) {
        (
            self.slot[FLOW_WEIGHT].load(Relaxed),
            self.slot[FLOW_ISSUED].load(Relaxed),
        )
    }

    /// The worker's clock reads `worker_now_ns` now; lets `waiting_io` put its
    /// timestamps on the shared monotonic clock.
    pub(crate) fn set_clock_origin(&self, worker_now_ns: u64) {
        let origin = iolens_sys::clock::monotonic_ns().saturating_sub(worker_now_ns);
        self.slot[CLOCK_ORIGIN_NS].store(origin, Relaxed);
    }

    /// When the worker's clock read 0 (where its `ramp_time` counts from), on
    /// `CLOCK_MONOTONIC`; None before it set its clock.
    pub(crate) fn clock_origin_ns(&self) -> Option<u64> {
        Some(self.slot[CLOCK_ORIGIN_NS].load(Relaxed)).filter(|&ns| ns > 0)
    }

    /// The worker waits on the I/O at `offset` of its file `file`, started at
    /// `start_ns` of its clock. Worker only: three stores to its own cache line.
    #[inline]
    pub(crate) fn waiting_on(&self, file: u32, offset: u64, start_ns: u64) {
        self.slot[WAITING_FILE].store(file.into(), Relaxed);
        self.slot[WAITING_OFFSET].store(offset, Relaxed);
        // Never 0, which means "waits on nothing".
        self.slot[WAITING_START_NS].store(start_ns.max(1), Relaxed);
    }

    /// The worker waits on no I/O. Worker only.
    #[inline]
    pub(crate) fn waiting_on_none(&self) {
        self.slot[WAITING_START_NS].store(0, Relaxed);
    }

    /// The I/O the worker waits on, if any. Read without a lock while the worker
    /// runs, so the file and offset may belong to the I/O just after; good
    /// enough to name a hung one, which by definition does not move.
    pub(crate) fn waiting_io(&self) -> Option<WaitingIo> {
        let start_ns = self.slot[WAITING_START_NS].load(Relaxed);
        (start_ns != 0).then(|| WaitingIo {
            file: self.slot[WAITING_FILE].load(Relaxed) as u32,
            offset: self.slot[WAITING_OFFSET].load(Relaxed),
            started_ns: self.slot[CLOCK_ORIGIN_NS].load(Relaxed) + start_ns,
        })
    }

    /// One completed I/O of `bytes` in direction `dir` (0 read, 1 write). Worker only.
    #[inline]
    pub(crate) fn record_io(&self, dir: usize, bytes: u64, lat_ns: u64) {
        bump(&self.slot[IOS + dir], 1);
        bump(&self.slot[BYTES + dir], bytes);
        bump(&self.slot[LAT_SUM_NS], lat_ns);
        bump(&self.slot[LAT_BUCKETS_AT + bucket_of(lat_ns)], 1);
        // The sampler may reset the max between this load and store; the worst
        // case moves one I/O's latency into the neighbouring interval.
        let lat_max_ns = &self.slot[LAT_MAX_NS];
        if lat_ns > lat_max_ns.load(Relaxed) {
            lat_max_ns.store(lat_ns, Relaxed);
        }
    }

    /// Time spent blocked in an I/O call. Worker only.
    #[inline]
    pub(crate) fn add_in_io(&self, ns: u64) {
        bump(&self.slot[IN_IO_NS], ns);
    }

    pub(crate) fn totals(&self) -> LiveTotals {
        LiveTotals {
            ios: [0, 1].map(|d| self.slot[IOS + d].load(Relaxed)),
            bytes: [0, 1].map(|d| self.slot[BYTES + d].load(Relaxed)),
            lat_sum_ns: self.slot[LAT_SUM_NS].load(Relaxed),
            in_io_ns: self.slot[IN_IO_NS].load(Relaxed),
            latencies: LatencyBuckets(std::array::from_fn(|b| {
                self.slot[LAT_BUCKETS_AT + b].load(Relaxed)
            })),
        }
    }

    /// The largest latency since the last call, and start a new interval.
    pub(crate) fn take_max_lat_ns(&self) -> u64 {
        self.slot[LAT_MAX_NS].swap(0, Relaxed)
    }

    /// The worker thread's per-task io as it exited; None while it runs (or
    /// when its io file could not be read).
    pub(crate) fn final_io(&self) -> Option<TaskIo> {
        (self.slot[FINAL_IO_SET].load(Relaxed) == 1).then(|| TaskIo {
            read_bytes: self.slot[FINAL_IO].load(Relaxed),
            write_bytes: self.slot[FINAL_IO + 1].load(Relaxed),
            cancelled_write_bytes: self.slot[FINAL_IO + 2].load(Relaxed),
        })
    }

    /// (pid, tid) while the worker runs.
    pub(crate) fn thread(&self) -> Option<(u32, u32)> {
        // Both were stored from u32s.
        let tid = self.slot[TID].load(Relaxed) as u32;
        (tid != 0).then(|| (self.slot[PID].load(Relaxed) as u32, tid))
    }
}

/// The live counters of every worker of a run, grouped by job.
#[derive(Debug)]
pub(crate) struct LiveBoard {
    slots: Slots,
    /// Index of each job's first worker in the slots.
    job_start: Vec<usize>,
}

/// Where the slots live.
enum Slots {
    /// In a memory file that worker processes map too.
    Shared(SharedRegion),
    /// In this process only, when no memory file could be made.
    Private(Box<[CacheLines]>),
}

#[repr(align(128))]
struct CacheLines(Slot);

impl Default for CacheLines {
    fn default() -> Self {
        CacheLines(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl std::fmt::Debug for Slots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Slots::Shared(region) => write!(f, "Shared({})", region.path().display()),
            Slots::Private(lines) => write!(f, "Private({} slots)", lines.len()),
        }
    }
}

/// Where a worker process finds its counters: the parent's board and its slot there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SharedSlot {
    pub path: PathBuf,
    /// Workers on the whole board.
    pub workers: usize,
    pub index: usize,
}

impl SharedSlot {
    /// Map the parent's board; its counters are then `board.slot(self.index)`.
    pub(crate) fn attach(&self) -> std::io::Result<LiveBoard> {
        let region = SharedRegion::open(&self.path, self.workers * SLOT_WORDS)?;
        Ok(LiveBoard {
            slots: Slots::Shared(region),
            job_start: vec![0],
        })
    }
}

impl LiveBoard {
    /// One set of counters per worker; `workers_per_job` in job order. In
    /// shared memory when the system allows, else private to this process.
    pub(crate) fn new(workers_per_job: impl IntoIterator<Item = u32>) -> Self {
        let mut job_start = Vec::new();
        let mut total = 0;
        for n in workers_per_job {
            job_start.push(total);
            total += n as usize;
        }
        let slots = match SharedRegion::create("iolens-live", total * SLOT_WORDS) {
            Ok(region) => Slots::Shared(region),
            Err(_) => Slots::Private((0..total).map(|_| CacheLines::default()).collect()),
        };
        LiveBoard { slots, job_start }
    }

    /// Whether worker processes can write their counters here.
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self.slots, Slots::Shared(_))
    }

    /// What a worker process needs to map this board and find its slot.
    pub(crate) fn shared_slot(&self, job: usize, worker: u32) -> Option<SharedSlot> {
        let Slots::Shared(region) = &self.slots else {
            return None;
        };
        Some(SharedSlot {
            path: region.path(),
            workers: self.len(),
            index: self.job_start[job] + worker as usize,
        })
    }

    fn len(&self) -> usize {
        match &self.slots {
            Slots::Shared(region) => region.words().len() / SLOT_WORDS,
            Slots::Private(lines) => lines.len(),
        }
    }

    /// The counters of the board's `index`th worker (counting across jobs).
    pub(crate) fn slot(&self, index: usize) -> LiveCounters<'_> {
        let slot = match &self.slots {
            Slots::Shared(region) => &region.words().as_chunks::<SLOT_WORDS>().0[index],
            Slots::Private(lines) => &lines[index].0,
        };
        LiveCounters { slot }
    }

    pub(crate) fn worker(&self, job: usize, worker: u32) -> LiveCounters<'_> {
        self.slot(self.job_start[job] + worker as usize)
    }

    /// The counters of one job's workers.
    pub(crate) fn job(&self, job: usize) -> impl ExactSizeIterator<Item = LiveCounters<'_>> {
        let start = self.job_start[job];
        let end = self.job_start.get(job + 1).copied().unwrap_or(self.len());
        (start..end).map(|i| self.slot(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board kept in this process only, as when no memory file can be made.
    fn private_board(workers: usize) -> LiveBoard {
        LiveBoard {
            slots: Slots::Private((0..workers).map(|_| CacheLines::default()).collect()),
            job_start: vec![0],
        }
    }

    fn totals_accumulate_and_max_resets_when_taken(c: LiveCounters) {
        c.record_io(0, 4096, 100);
        c.record_io(1, 8192, 300);
        c.record_io(1, 8192, 200);
        c.add_in_io(600);
        let t = c.totals();
        assert_eq!(t.ios, [1, 2]);
        assert_eq!(t.bytes, [4096, 16384]);
        assert_eq!(t.lat_sum_ns, 600);
        assert_eq!(t.in_io_ns, 600);
        assert_eq!(c.take_max_lat_ns(), 300);
        assert_eq!(c.take_max_lat_ns(), 0);
        c.record_io(0, 512, 50);
        assert_eq!(c.totals().since(&t).ios, [1, 0]);
        assert_eq!(c.totals().since(&t).lat_sum_ns, 50);
    }

    #[test]
    fn totals_accumulate_in_shared_and_private_slots() {
        let shared = LiveBoard::new([1]);
        assert!(shared.is_shared());
        totals_accumulate_and_max_resets_when_taken(shared.worker(0, 0));
        let private = private_board(1);
        assert!(!private.is_shared());
        assert_eq!(private.shared_slot(0, 0), None);
        totals_accumulate_and_max_resets_when_taken(private.worker(0, 0));
    }

    #[test]
    fn buckets_are_contiguous_and_their_values_within_an_eighth() {
        assert_eq!((0..5).map(bucket_of).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(bucket_of(u64::MAX), LAT_BUCKETS - 1);
        let small = 1..1u64 << 20;
        assert!(small
            .clone()
            .all(|ns| bucket_of(ns + 1) - bucket_of(ns) <= 1));
        for ns in small.chain([1 << 30, 10_000_000_000, (1 << LAT_TRACKED_EXP) - 1]) {
            let value = bucket_value(bucket_of(ns)) as f64;
            assert!(
                (value - ns as f64).abs() <= ns as f64 / 8.0,
                "{ns} ≈ {value}"
            );
        }
        // Each bucket's value lies in that bucket.
        assert!((0..LAT_BUCKETS).all(|b| bucket_of(bucket_value(b)) == b));
    }

    #[test]
    fn percentiles_come_from_the_interval_between_two_readings() {
        let board = LiveBoard::new([1]);
        let c = board.worker(0, 0);
        assert_eq!(c.totals().latencies.percentile_ns(99.0), None);
        for _ in 0..1000 {
            c.record_io(0, 4096, 1_000_000);
        }
        let earlier = c.totals();
        for _ in 0..98 {
            c.record_io(0, 4096, 10_000);
        }
        c.record_io(0, 4096, 50_000);
        c.record_io(0, 4096, 2_000_000);
        let interval = c.totals().since(&earlier).latencies;
        let near = |ns: Option<u64>, want: u64| ns.is_some_and(|v| v.abs_diff(want) <= want / 8);
        assert!(near(interval.percentile_ns(50.0), 10_000));
        assert!(
            near(interval.percentile_ns(99.0), 50_000),
            "{:?}",
            interval.percentile_ns(99.0)
        );
        assert!(near(interval.percentile_ns(100.0), 2_000_000));
        let mut two = interval;
        two += &interval;
        assert_eq!(two.percentile_ns(99.0), interval.percentile_ns(99.0));
    }

    #[test]
    fn thread_ids_are_published_only_while_running() {
        let board = LiveBoard::new([1]);
        let c = board.worker(0, 0);
        assert_eq!(c.thread(), None);
        c.worker_started();
        let (pid, tid) = c.thread().unwrap();
        assert_eq!(pid, std::process::id());
        assert_eq!(tid, iolens_sys::gettid());
        assert_eq!(c.final_io(), None, "only once the thread's I/O is over");
        c.record_final_io();
        c.worker_finished();
        assert_eq!(c.thread(), None);
        assert!(c.final_io().is_some(), "its io accounting is left behind");
        c.worker_process_started(u32::MAX);
        assert_eq!(c.thread(), Some((u32::MAX, u32::MAX)));
    }

    #[test]
    fn the_waiting_io_is_dated_on_the_monotonic_clock() {
        let board = LiveBoard::new([1]);
        let c = board.worker(0, 0);
        assert_eq!(c.waiting_io(), None);
        c.set_clock_origin(5_000);
        let origin = iolens_sys::clock::monotonic_ns() - 5_000;
        c.waiting_on(3, 8192, 7_000);
        let io = c.waiting_io().unwrap();
        assert_eq!((io.file, io.offset), (3, 8192));
        // The origin was taken a moment before ours.
        assert!(io.started_ns <= origin + 7_000 && io.started_ns + 1_000_000 > origin + 7_000);
        c.waiting_on_none();
        assert_eq!(c.waiting_io(), None);
        c.waiting_on(0, 0, 0);
        assert!(c.waiting_io().is_some(), "a start at 0 still counts");
        c.worker_finished();
        assert_eq!(c.waiting_io(), None);
    }

    #[test]
    fn board_groups_workers_by_job() {
        for board in [LiveBoard::new([2, 1, 3]), {
            let mut b = private_board(6);
            b.job_start = vec![0, 2, 3];
            b
        }] {
            assert_eq!(board.job(0).len(), 2);
            assert_eq!(board.job(2).len(), 3);
            board.worker(2, 1).record_io(0, 1, 1);
            assert_eq!(board.job(2).nth(1).unwrap().totals().ios, [1, 0]);
            assert_eq!(board.job(1).next().unwrap().totals().ios, [0, 0]);
            for c in (0..6).map(|i| board.slot(i)) {
                assert_eq!(c.slot.as_ptr() as usize % 128, 0, "{board:?}");
            }
        }
    }

    #[test]
    fn an_attached_slot_writes_into_the_parents_board() {
        let parent = LiveBoard::new([1, 2]);
        let slot = parent.shared_slot(1, 1).unwrap();
        assert_eq!((slot.workers, slot.index), (3, 2));
        let child = slot.attach().unwrap();
        child.slot(slot.index).record_io(1, 4096, 10);
        assert_eq!(parent.worker(1, 1).totals().bytes, [0, 4096]);
        assert_eq!(parent.worker(1, 0).totals().bytes, [0, 0]);
    }
}
