//! A run on several ranks (hosts), as the runner sees it: the cluster barrier
//! before every group, and every rank's worker results gathered to the first
//! rank, where they are merged by the code that merges workers (`collect`).
//! The link that carries them is `cluster::MpiLink`; the runner knows only
//! `ClusterLink`, so everything here runs (and is tested) without MPI.

use super::collect;
use super::result::WorkerResult;
use super::RunRequest;
use crate::model::{ClusterReport, RankRun};
use serde::{Deserialize, Serialize};

/// The other ranks of the run.
pub trait ClusterLink {
    /// Which rank this process is.
    fn rank(&self) -> &RankId;
    /// Returns once every rank has called it (each before the same group).
    fn barrier(&self);
    /// Every rank hands in its bytes; the first rank gets every rank's, in rank
    /// order, the others None.
    fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>>;
}

/// A rank: its number, its number on its host, and its host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankId {
    pub rank: u32,
    pub local_rank: u32,
    pub hostname: String,
}

/// What a rank sends to the first rank when its groups are done.
#[derive(Clone, Serialize, Deserialize)]
pub struct RankResults {
    pub id: RankId,
    /// When the cluster barrier let each group go on this rank, ns since the Unix epoch.
    pub group_starts_unix_ns: Vec<u64>,
    /// Per job, its workers' results (as `collect` takes them).
    pub results: Vec<Vec<WorkerResult>>,
}

impl RankResults {
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("worker results have only string keys")
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<RankResults, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("a rank's results do not read: {e}"))
    }
}

/// fio's name for the entry of every client merged.
pub const ALL_CLIENTS: &str = "All clients";

/// The ranks' results merged: each job's workers of every rank (in rank order),
/// as one process running all of them would hold them, and the cluster's part
/// of the report: each rank's own report and the "All clients" entry.
pub(super) fn merge(
    req: &RunRequest,
    ranks: &[RankResults],
    started_unix_ms: u64,
) -> (Vec<Vec<WorkerResult>>, ClusterReport) {
    let jobs = ranks.iter().map(|r| r.results.len()).max().unwrap_or(0);
    let merged: Vec<Vec<WorkerResult>> = (0..jobs)
        .map(|j| {
            ranks
                .iter()
                .flat_map(|r| r.results.get(j).into_iter().flatten().cloned())
                .collect()
        })
        .collect();
    let cluster = ClusterReport {
        ranks: ranks
            .iter()
            .map(|r| RankRun {
                rank: r.id.rank,
                local_rank: r.id.local_rank,
                hostname: r.id.hostname.clone(),
                group_starts_unix_ns: r.group_starts_unix_ns.clone(),
                report: collect::report(req, &r.results, Vec::new(), started_unix_ms),
            })
            .collect(),
        all_clients: collect::one_entry(req, &merged, ALL_CLIENTS),
    };
    (merged, cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{parse_fio_args, resolve};
    use crate::runner::RunRequest;
    use crate::stats::LatHistogram;
    use proptest::prelude::*;
    use std::sync::atomic::AtomicBool;

    /// A worker that did `ios` reads of 4 KiB, with latencies from `lats`, in `runtime_ns`.
    fn worker(lats: &[u64], runtime_ns: u64) -> WorkerResult {
        let mut w = WorkerResult::empty();
        let read = &mut w.stats.dirs[0];
        read.ios = lats.len() as u64;
        read.bytes = 4096 * lats.len() as u64;
        let mut hist = LatHistogram::new();
        lats.iter().for_each(|&ns| hist.record(ns));
        read.clat = hist.clone();
        read.lat = hist;
        w.runtime_ns = runtime_ns;
        w
    }

    fn request<'a>(jobs: &'a [crate::job::spec::JobSpec], stop: &'a AtomicBool) -> RunRequest<'a> {
        RunRequest {
            jobs,
            command_line: Vec::new(),
            allow_device_write: false,
            readonly: false,
            observe_interval: std::time::Duration::from_millis(100),
            on_second: None,
            stop,
            status: None,
            progress: None,
            io_timeout: None,
            cluster: None,
        }
    }

    proptest! {
        /// Per-rank results, sent as bytes and merged on the first rank, report what one
        /// process running every rank's workers reports: bytes, I/Os and percentiles
        /// from the merged histograms.
        #[test]
        fn merged_ranks_equal_one_process_doing_the_same_work(
            workers in prop::collection::vec(
                (prop::collection::vec(1_000u64..50_000_000, 1..40), 1_000_000u64..3_000_000_000),
                1..12,
            ),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        ) {
            let args: Vec<String> = ["--name=m", "--ioengine=null", "--size=1m", "--group_reporting"]
                .iter().map(|s| s.to_string()).collect();
            let (global, jobs) = parse_fio_args(&args).unwrap();
            let specs = resolve(&global, &jobs).unwrap().jobs;
            let stop = AtomicBool::new(false);
            let req = request(&specs, &stop);
            let all: Vec<WorkerResult> = workers.iter().map(|(l, t)| worker(l, *t)).collect();
            let mut bounds: Vec<usize> = cuts.iter().map(|c| c.index(all.len() + 1)).collect();
            bounds.extend([0, all.len()]);
            bounds.sort_unstable();
            let ranks: Vec<RankResults> = bounds
                .windows(2)
                .enumerate()
                .map(|(rank, w)| RankResults {
                    id: RankId { rank: rank as u32, local_rank: 0, hostname: format!("h{rank}") },
                    group_starts_unix_ns: vec![0],
                    results: vec![all[w[0]..w[1]].to_vec()],
                })
                .map(|r| RankResults::from_bytes(&r.to_bytes()).unwrap())
                .collect();
            let (merged, cluster) = merge(&req, &ranks, 0);
            let one = collect::report(&req, std::slice::from_ref(&all), Vec::new(), 0);
            let together = collect::report(&req, &merged, Vec::new(), 0);
            let (a, b) = (&together.jobs[0].dirs[0], &one.jobs[0].dirs[0]);
            prop_assert_eq!(a.io_bytes, b.io_bytes, "expected the merged bytes of one process");
            prop_assert_eq!(a.total_ios, b.total_ios, "expected the merged I/Os of one process");
            prop_assert_eq!(&a.clat, &b.clat, "expected the percentiles of one process's histogram");
            prop_assert_eq!(together.jobs[0].runtime_ns, one.jobs[0].runtime_ns);
            let all_clients = &cluster.all_clients.jobs[0];
            prop_assert_eq!(&all_clients.name, ALL_CLIENTS);
            prop_assert_eq!(&all_clients.dirs[0].clat, &b.clat, "expected All clients to hold one process's percentiles");
            prop_assert_eq!(all_clients.dirs[0].io_bytes, b.io_bytes);
            let per_rank: u64 = cluster.ranks.iter()
                .flat_map(|r| &r.report.jobs)
                .map(|j| j.dirs[0].io_bytes)
                .sum();
            prop_assert_eq!(per_rank, b.io_bytes, "expected the ranks' bytes to sum to the whole");
        }
    }
}
