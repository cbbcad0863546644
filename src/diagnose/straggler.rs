//! `straggler`: on a run on several ranks, a rank whose throughput or end lies
//! far from the others' (the MAD outliers `--repeat` uses for runs) and at least
//! `MIN_GAP` away from the median: the cluster's total waits for it, so the
//! total describes that rank more than the storage.

use crate::model::{ClusterReport, Finding, RankRun, Severity};
use crate::stats::summary::{mad_outliers, median};

/// Past the ±5–8 % that identical runs differ by.
const MIN_GAP: f64 = 0.10;

pub fn straggler(report: &crate::model::RunReport) -> Vec<Finding> {
    let Some(cluster) = &report.cluster else {
        return Vec::new();
    };
    let named = stragglers(cluster);
    if named.is_empty() {
        return Vec::new();
    }
    let (rate_median, end_median) = medians(cluster);
    named
        .into_iter()
        .map(|i| finding(cluster, &cluster.ranks[i], rate_median, end_median))
        .collect()
}

/// The ranks' median throughput and median time from the barrier to their end.
fn medians(cluster: &ClusterReport) -> (f64, f64) {
    let (rates, ends) = rates_and_ends(cluster);
    (median(&rates), median(&ends))
}

fn rates_and_ends(cluster: &ClusterReport) -> (Vec<f64>, Vec<f64>) {
    let rates = cluster.ranks.iter().map(RankRun::bytes_per_sec).collect();
    let ends = cluster.ranks.iter().map(|r| r.busy_ns() as f64).collect();
    (rates, ends)
}

/// The stragglers among the cluster's ranks (indices into its ranks, ascending).
pub fn stragglers(cluster: &ClusterReport) -> Vec<usize> {
    if cluster.ranks.is_empty() {
        return Vec::new();
    }
    let (rates, ends) = rates_and_ends(cluster);
    let (rate_median, end_median) = (median(&rates), median(&ends));
    let slow: Vec<usize> = mad_outliers(&rates)
        .into_iter()
        .filter(|&i| rates[i] < rate_median * (1.0 - MIN_GAP))
        .collect();
    let late: Vec<usize> = mad_outliers(&ends)
        .into_iter()
        .filter(|&i| ends[i] > end_median * (1.0 + MIN_GAP))
        .collect();
    let mut named: Vec<usize> = slow.iter().chain(&late).copied().collect();
    named.sort_unstable();
    named.dedup();
    named
}

fn finding(cluster: &ClusterReport, rank: &RankRun, rate_median: f64, end_median: f64) -> Finding {
    let mb = |bytes_per_sec: f64| bytes_per_sec / 1e6;
    Finding {
        code: "straggler".into(),
        severity: Severity::Warning,
        title: format!(
            "rank {} on {} is a straggler: {:.1} MB/s against a median of {:.1} MB/s, ended {:.0} ms after the first rank",
            rank.rank,
            rank.hostname,
            mb(rank.bytes_per_sec()),
            mb(rate_median),
            rank.lag_ns() as f64 / 1e6
        ),
        evidence: vec![
            format!(
                "rank {}: {:.3} s from the barrier to its last worker's end; the median rank {:.3} s",
                rank.rank,
                rank.busy_ns() as f64 / 1e9,
                end_median / 1e9
            ),
            format!(
                "all ranks: {:.1} MB/s until the last end, {:.1} MB/s while all were active",
                mb(cluster.bytes_per_sec()),
                mb(cluster.all_active_bytes_per_sec())
            ),
        ],
        advice: format!(
            "look at {} (its device or mount, network link, CPU and other load there), or give its rank less work; until then quote the all-active figure",
            rank.hostname
        ),
        at_ns: None,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::{DirReport, JobReport, RankGroup, RunReport};

    /// A rank that moved `mb` MB in `end_ms` ms, the first rank of its group ending at `first_ms`.
    fn rank(rank: u32, mb: u64, end_ms: u64, first_ms: u64) -> RankRun {
        let mut total = JobReport::default();
        total.dirs[0] = DirReport {
            io_bytes: mb * 1_000_000,
            total_ios: mb * 250,
            ..Default::default()
        };
        RankRun {
            rank,
            hostname: format!("h{rank}"),
            groups: vec![RankGroup {
                end_ns: end_ms * 1_000_000,
                first_end_ns: first_ms * 1_000_000,
                ..Default::default()
            }],
            total: Some(total),
            ..Default::default()
        }
    }

    fn run(ranks: Vec<RankRun>) -> RunReport {
        RunReport {
            cluster: Some(Box::new(ClusterReport {
                ranks,
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    /// Four ranks of 100 MB each, ending `ends_ms` after the barrier; the first ended at 1 s.
    pub(in crate::diagnose) fn four_ending_at(ends_ms: [u64; 4]) -> RunReport {
        run((0..)
            .zip(ends_ms)
            .map(|(r, end)| rank(r, 100, end, 1000))
            .collect())
    }

    #[test]
    fn a_rank_far_slower_than_the_others_is_named() {
        let found = straggler(&four_ending_at([1000, 1010, 1005, 4000]));
        let titles: Vec<&str> = found.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(found.len(), 1, "expected one straggler, saw {titles:?}");
        assert!(
            titles[0].starts_with("rank 3 on h3 is a straggler: 25.0 MB/s")
                && titles[0].ends_with("ended 3000 ms after the first rank"),
            "expected rank 3 named with its rate and lag, saw {titles:?}"
        );
    }

    #[test]
    fn ranks_within_run_to_run_noise_and_single_hosts_are_silent() {
        let close = four_ending_at([1000, 1000, 1000, 1060]);
        let titles: Vec<String> = straggler(&close).into_iter().map(|f| f.title).collect();
        assert!(
            titles.is_empty(),
            "expected no finding for a 6% gap, saw {titles:?}"
        );
        let alone = straggler(&RunReport::default());
        assert!(
            alone.is_empty(),
            "expected nothing without ranks, saw {alone:?}"
        );
    }
}
