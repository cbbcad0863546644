//! A run on several ranks (MPI): each rank's own report and every rank merged.

use super::RunReport;
use serde::{Deserialize, Serialize};

/// The cluster's part of the first rank's report (whose jobs are every rank's
/// workers together).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClusterReport {
    /// One per rank, in rank order.
    pub ranks: Vec<RankRun>,
    /// Every worker of every rank in one entry (fio's "All clients"), with its group.
    pub all_clients: RunReport,
}

/// One rank's run, as that rank alone would report it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RankRun {
    pub rank: u32,
    /// Its rank among the ranks on its host.
    pub local_rank: u32,
    pub hostname: String,
    /// When the cluster barrier let each group go on this rank, ns since the Unix epoch.
    pub group_starts_unix_ns: Vec<u64>,
    pub report: RunReport,
}
