//! Live counters: each worker publishes its running totals here with relaxed
//! stores, and the sampler reads them every interval. One writer per
//! `LiveCounters` (its worker), so a load-then-store is exact without any
//! read-modify-write instruction; each sits on its own cache lines so workers
//! never share a line.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// One worker's running totals since it started (ramp included: this is what
/// the system saw, not what the report measures).
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct LiveCounters {
    /// [read, write]
    ios: [AtomicU64; 2],
    bytes: [AtomicU64; 2],
    lat_sum_ns: AtomicU64,
    /// Largest latency since the sampler last took it.
    lat_max_ns: AtomicU64,
    /// Time spent inside I/O calls (the call for sync engines; submit and reap for async ones).
    in_io_ns: AtomicU64,
    /// Process and kernel thread id of the worker while it runs; tid 0 before and after.
    pid: AtomicU32,
    tid: AtomicU32,
}

/// What the sampler reads: totals, to be diffed between samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveTotals {
    pub ios: [u64; 2],
    pub bytes: [u64; 2],
    pub lat_sum_ns: u64,
    pub in_io_ns: u64,
}

impl LiveTotals {
    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &LiveTotals) -> LiveTotals {
        LiveTotals {
            ios: [0, 1].map(|d| self.ios[d].saturating_sub(earlier.ios[d])),
            bytes: [0, 1].map(|d| self.bytes[d].saturating_sub(earlier.bytes[d])),
            lat_sum_ns: self.lat_sum_ns.saturating_sub(earlier.lat_sum_ns),
            in_io_ns: self.in_io_ns.saturating_sub(earlier.in_io_ns),
        }
    }
}

/// Add to a counter only its owning worker writes.
#[inline]
fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed) + by, Relaxed);
}

impl LiveCounters {
    /// The worker thread starts: publish its ids so the sampler can read its
    /// schedstat and wchan.
    pub fn worker_started(&self) {
        self.pid.store(std::process::id(), Relaxed);
        self.tid.store(iolens_sys::gettid(), Relaxed);
    }

    /// The worker runs as process `pid`, on its main thread (so tid = pid);
    /// called by the parent. Its I/O counters stay in the child and read zero here.
    pub fn worker_process_started(&self, pid: u32) {
        self.pid.store(pid, Relaxed);
        self.tid.store(pid, Relaxed);
    }

    /// The worker thread is about to exit: its ids are no longer valid.
    pub fn worker_finished(&self) {
        self.tid.store(0, Relaxed);
    }

    /// One completed I/O of `bytes` in direction `dir` (0 read, 1 write). Worker only.
    #[inline]
    pub fn record_io(&self, dir: usize, bytes: u64, lat_ns: u64) {
        bump(&self.ios[dir], 1);
        bump(&self.bytes[dir], bytes);
        bump(&self.lat_sum_ns, lat_ns);
        // The sampler may reset the max between this load and store; the worst
        // case moves one I/O's latency into the neighbouring interval.
        if lat_ns > self.lat_max_ns.load(Relaxed) {
            self.lat_max_ns.store(lat_ns, Relaxed);
        }
    }

    /// Time spent blocked in an I/O call. Worker only.
    #[inline]
    pub fn add_in_io(&self, ns: u64) {
        bump(&self.in_io_ns, ns);
    }

    pub fn totals(&self) -> LiveTotals {
        LiveTotals {
            ios: [0, 1].map(|d| self.ios[d].load(Relaxed)),
            bytes: [0, 1].map(|d| self.bytes[d].load(Relaxed)),
            lat_sum_ns: self.lat_sum_ns.load(Relaxed),
            in_io_ns: self.in_io_ns.load(Relaxed),
        }
    }

    /// The largest latency since the last call, and start a new interval.
    pub fn take_max_lat_ns(&self) -> u64 {
        self.lat_max_ns.swap(0, Relaxed)
    }

    /// (pid, tid) while the worker runs.
    pub fn thread(&self) -> Option<(u32, u32)> {
        let tid = self.tid.load(Relaxed);
        (tid != 0).then(|| (self.pid.load(Relaxed), tid))
    }
}

/// The live counters of every worker of a run, grouped by job.
#[derive(Debug)]
pub struct LiveBoard {
    counters: Vec<LiveCounters>,
    /// Index of each job's first worker in `counters`.
    job_start: Vec<usize>,
}

impl LiveBoard {
    /// One set of counters per worker; `workers_per_job` in job order.
    pub fn new(workers_per_job: impl IntoIterator<Item = u32>) -> Self {
        let mut job_start = Vec::new();
        let mut total = 0;
        for n in workers_per_job {
            job_start.push(total);
            total += n as usize;
        }
        LiveBoard {
            counters: (0..total).map(|_| LiveCounters::default()).collect(),
            job_start,
        }
    }

    pub fn worker(&self, job: usize, worker: u32) -> &LiveCounters {
        &self.counters[self.job_start[job] + worker as usize]
    }

    /// The counters of one job's workers.
    pub fn job(&self, job: usize) -> &[LiveCounters] {
        let start = self.job_start[job];
        let end = self
            .job_start
            .get(job + 1)
            .copied()
            .unwrap_or(self.counters.len());
        &self.counters[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_accumulate_and_max_resets_when_taken() {
        let c = LiveCounters::default();
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
    fn thread_ids_are_published_only_while_running() {
        let c = LiveCounters::default();
        assert_eq!(c.thread(), None);
        c.worker_started();
        let (pid, tid) = c.thread().unwrap();
        assert_eq!(pid, std::process::id());
        assert_eq!(tid, iolens_sys::gettid());
        c.worker_finished();
        assert_eq!(c.thread(), None);
    }

    #[test]
    fn board_groups_workers_by_job() {
        let board = LiveBoard::new([2, 1, 3]);
        assert_eq!(board.job(0).len(), 2);
        assert_eq!(board.job(2).len(), 3);
        board.worker(2, 1).record_io(0, 1, 1);
        assert_eq!(board.job(2)[1].totals().ios, [1, 0]);
        assert_eq!(board.job(1)[0].totals().ios, [0, 0]);
        assert_eq!(std::mem::align_of::<LiveCounters>(), 128);
    }
}
