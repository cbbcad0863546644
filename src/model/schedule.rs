//! A rate-limited job's schedule as it was kept: how far behind their due times
//! its I/Os started, the stalls in which nothing could be issued though I/Os were
//! due, and the latencies counted from each I/O's due time (the "corrected" view).

use super::{DirReport, LatSummary};
use serde::{Deserialize, Serialize};

/// A stall: I/Os were due, and none could be issued for `len_ns`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stall {
    /// When the first of the missed I/Os was due, ns after the measured time began.
    pub at_ns: u64,
    pub len_ns: u64,
    /// The I/Os that fell due during the stall at the rate asked.
    pub missed_ios: u64,
}

/// How a rate-limited job kept its schedule (absent for jobs without a rate).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScheduleReport {
    /// The rate-limited I/Os issued.
    pub ios: u64,
    /// Of them, those that started late: more than two intervals at the rate
    /// and more than 1 ms after their due time.
    pub late_ios: u64,
    /// The most an I/O started behind its due time, when it was due (ns after the
    /// measured time began) and the I/Os then due and not yet issued.
    pub max_behind_ns: u64,
    pub max_behind_at_ns: u64,
    pub max_behind_ios: u64,
    /// The I/Os due and not issued when the last one went out: the rate missed at the end.
    pub end_behind_ios: u64,
    /// The longest stalls, longest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<Stall>,
    /// Per second of the measured time, the most I/Os due and not yet issued (the
    /// rate-limited workers' sum); up to the last second with a late I/O.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behind_per_second: Vec<u64>,
    /// [read, write, trim]: latency from each I/O's due time to its completion.
    pub corrected: [Option<LatSummary>; 3],
}

impl LatSummary {
    /// The value at percentile `pct`, when it was among those recorded.
    pub(crate) fn at_percentile(&self, pct: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(p, _)| *p == pct)
            .map(|&(_, v)| v)
    }
}

impl DirReport {
    /// The latency whose percentiles were recorded: the total latency with
    /// `lat_percentiles`, else the completion latency (fio's default).
    pub(crate) fn latency_with_percentiles(&self) -> Option<&LatSummary> {
        [&self.lat, &self.clat]
            .into_iter()
            .flatten()
            .find(|summary| !summary.percentiles.is_empty())
    }
}
