//! What a worker hands back (and publishes for `--status-interval`): its
//! measurements and its first error. Shared by the worker, the status slots,
//! the worker processes and the collector, so none of them imports another.

use super::error_tally::ErrorTally;
use super::logs::IoLog;
use crate::job::spec::DDIRS;
use crate::model::{SteadyStateReport, VerifyReport};
use crate::observe::live::LiveTotals;
use crate::stats::{RateSeries, WorkerStats};
use iolens_sys::os::Rusage;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The first I/O error of a worker, with where it happened.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct IoFailure {
    pub message: String,
    pub errno: i32,
}

/// What a worker measured.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct WorkerResult {
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
    /// `--debug=io`: the file holding the worker's trace lines.
    #[serde(default)]
    pub io_trace: Option<std::path::PathBuf>,
    /// Left behind, stuck in the kernel: it never answered, and what it did is
    /// what its live counters say.
    #[serde(default)]
    pub left_behind: bool,
    /// The thread that ran it (a worker process's own pid): fio's `pid=`.
    #[serde(default)]
    pub tid: u32,
}

impl WorkerResult {
    /// Nothing measured yet.
    pub(crate) fn empty() -> Self {
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
            io_trace: None,
            left_behind: false,
            tid: 0,
        }
    }

    /// What a worker that never answered had done, as its live counters say:
    /// its I/Os and bytes (no latencies: those live in the worker's own stats).
    pub(super) fn from_live(
        totals: &LiveTotals,
        tid: u32,
        ran: Duration,
        error: IoFailure,
    ) -> Self {
        let mut result = Self::failed(error);
        result.tid = tid;
        for (dir, stats) in result.stats.dirs.iter_mut().take(2).enumerate() {
            stats.ios = totals.ios[dir];
            stats.bytes = totals.bytes[dir];
        }
        result.runtime_ns = ran.as_nanos() as u64;
        result.left_behind = true;
        result
    }

    pub(super) fn failed(error: IoFailure) -> Self {
        WorkerResult {
            error: Some(error),
            ..Self::empty()
        }
    }
}
