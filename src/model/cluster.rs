//! A run on several ranks (MPI): each rank's own report and every rank merged.

use super::{DirReport, JobReport, RunReport};
use serde::{Deserialize, Serialize};

/// The cluster's part of the first rank's report (whose jobs are every rank's
/// workers together).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ClusterReport {
    /// One per rank, in rank order.
    pub ranks: Vec<RankRun>,
    /// Every worker of every rank in one entry (fio's "All clients"), with its group.
    pub all_clients: RunReport,
    /// Each observed host and the ranks that ran on it, rank 0's first (whose
    /// observations are the report's; another host's are in its observer's
    /// `report`); empty in a report merged from rank files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_hosts: Vec<ObservedHost>,
}

/// A host whose first rank's sampler watched it, and the ranks that ran on it:
/// its host-level findings weigh what they moved, not all ranks'.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ObservedHost {
    pub hostname: String,
    /// The rank whose sampler watched it.
    pub observer: u32,
    /// The ranks on it, in rank order.
    pub ranks: Vec<u32>,
    /// Their jobs, their workers merged as one process's.
    pub jobs: Vec<JobReport>,
}

/// One rank's run, as that rank alone would report it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct RankRun {
    pub rank: u32,
    /// Its rank among the ranks on its host.
    pub local_rank: u32,
    pub hostname: String,
    /// Each group (stonewall) as this rank saw it.
    pub groups: Vec<RankGroup>,
    /// Its report; its `disks` are its host's, on the host's first rank only.
    pub report: RunReport,
    /// Every worker of the rank in one entry (merged histograms); None without workers.
    pub total: Option<JobReport>,
}

impl RankRun {
    /// Bytes the rank moved, every direction.
    pub(crate) fn bytes(&self) -> u64 {
        self.total
            .as_ref()
            .map_or(0, |t| t.dirs.iter().map(|d| d.io_bytes).sum())
    }

    /// I/Os the rank did, every direction.
    pub(crate) fn ios(&self) -> u64 {
        self.total
            .as_ref()
            .map_or(0, |t| t.dirs.iter().map(|d| d.total_ios).sum())
    }

    /// How long its groups ran, from each barrier to its last worker's end.
    pub(crate) fn busy_ns(&self) -> u64 {
        self.groups.iter().map(|g| g.end_ns).sum()
    }

    /// How far it ended behind the first rank to end, over its groups.
    pub(crate) fn lag_ns(&self) -> u64 {
        self.groups
            .iter()
            .map(|g| g.end_ns.saturating_sub(g.first_end_ns))
            .sum()
    }

    /// Bytes per second over its busy time.
    pub(crate) fn bytes_per_sec(&self) -> f64 {
        per_sec(self.bytes(), self.busy_ns())
    }

    /// The direction with the most I/Os, whose latencies stand for the rank's.
    pub(crate) fn main_dir(&self) -> Option<&DirReport> {
        let total = self.total.as_ref()?;
        total
            .dirs
            .iter()
            .filter(|d| d.total_ios > 0)
            .max_by_key(|d| d.total_ios)
    }
}

/// `count` per second over `ns` (0 over no time).
pub(crate) fn per_sec(count: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        count as f64 / (ns as f64 / 1e9)
    }
}

impl ClusterReport {
    /// Rank 0's host, which the report's own observations are of.
    pub(crate) fn first_host(&self) -> Option<&ObservedHost> {
        self.observed_hosts.iter().find(|h| h.observer == 0)
    }

    /// Each host's disks, once: the ranks that sampled their host's (the host's
    /// first rank), each with its host's name. Never one disk's counters added
    /// across hosts.
    pub(crate) fn host_disks(&self) -> impl Iterator<Item = &RankRun> {
        self.ranks.iter().filter(|r| !r.report.disks.is_empty())
    }

    /// Every rank's bytes over the time from the barrier to the last rank's end
    /// (IOR's figure), summed over the groups.
    pub(crate) fn bytes_per_sec(&self) -> f64 {
        let bytes = self.ranks.iter().map(RankRun::bytes).sum();
        let groups = self.ranks.iter().map(|r| r.groups.len()).max().unwrap_or(0);
        let last_ends: u64 = (0..groups)
            .map(|g| {
                let ends = self.ranks.iter().filter_map(|r| r.groups.get(g));
                ends.map(|e| e.end_ns).max().unwrap_or(0)
            })
            .sum();
        per_sec(bytes, last_ends)
    }

    /// What the ranks moved while all of them were active (until the first rank
    /// ended), per second: each rank's bytes then over the time it read them.
    pub(crate) fn all_active_bytes_per_sec(&self) -> f64 {
        self.ranks
            .iter()
            .flat_map(|r| &r.groups)
            .map(|g| per_sec(g.active_bytes.iter().sum(), g.active_ns))
            .sum()
    }

    /// The barrier's skew: the spread of the ranks' start times of each group on
    /// one host's clock (ranks on other hosts read other clocks, so only hosts
    /// with several ranks count), the largest over groups and hosts, ns.
    pub(crate) fn barrier_skew_ns(&self) -> u64 {
        let mut skew = 0;
        for host in self.ranks.iter().map(|r| &r.hostname) {
            let on_host: Vec<&RankRun> =
                self.ranks.iter().filter(|r| &r.hostname == host).collect();
            let groups = on_host.iter().map(|r| r.groups.len()).min().unwrap_or(0);
            for g in 0..groups {
                let starts = on_host.iter().map(|r| r.groups[g].start_unix_ns);
                let (lo, hi) = starts.fold((u64::MAX, 0), |(lo, hi), s| (lo.min(s), hi.max(s)));
                skew = skew.max(hi.saturating_sub(lo));
            }
        }
        skew
    }
}

/// One group on one rank. Times are ns after the group's start on this rank,
/// the moment the cluster barrier let it go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RankGroup {
    /// When the barrier let the group go, ns since the Unix epoch (this host's clock).
    pub start_unix_ns: u64,
    /// When this rank's workers had all ended.
    pub end_ns: u64,
    /// When the first rank's workers had all ended, as that rank said.
    pub first_end_ns: u64,
    /// When this rank heard of that end and read its counters: the all-active window.
    pub active_ns: u64,
    /// What the rank had moved then (read, write; ramp time included).
    pub active_bytes: [u64; 2],
    pub active_ios: [u64; 2],
}
