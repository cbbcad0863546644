//! `straggler`: on a run on several ranks, a rank whose throughput or end lies
//! far from the others' (the MAD outliers `--repeat` uses for runs) and at least
//! `MIN_GAP` away from the median: the cluster's total waits for it, so the
//! total describes that rank more than the storage.

use crate::model::{ClusterReport, Finding, RankRun, Severity};
use crate::stats::summary::{mad_outliers, median};

/// Past the ±5–8 % that identical runs differ by.
const MIN_GAP: f64 = 0.10;

pub(crate) fn straggler(report: &crate::model::RunReport) -> Vec<Finding> {
    let Some(cluster) = &report.cluster else {
        return Vec::new();
    };
    let (rates, ends) = rates_and_ends(cluster);
    let (rate_median, end_median) = (median(&rates), median(&ends));
    outliers(&rates, &ends)
        .into_iter()
        .map(|i| finding(cluster, &cluster.ranks[i], rate_median, end_median))
        .collect()
}

/// The stragglers' places in `cluster.ranks`, in rank order (what the
/// `straggler` findings name; the HTML report marks them).
pub(crate) fn stragglers(cluster: &ClusterReport) -> Vec<usize> {
    if cluster.ranks.is_empty() {
        return Vec::new();
    }
    let (rates, ends) = rates_and_ends(cluster);
    outliers(&rates, &ends)
}

/// The ranks' bytes per second and their ends from the barrier, ns.
fn rates_and_ends(cluster: &ClusterReport) -> (Vec<f64>, Vec<f64>) {
    let rates = cluster.ranks.iter().map(RankRun::bytes_per_sec).collect();
    let ends = cluster.ranks.iter().map(|r| r.busy_ns() as f64).collect();
    (rates, ends)
}

/// The slow ranks and the late ones, each once, in order.
fn outliers(rates: &[f64], ends: &[f64]) -> Vec<usize> {
    let (rate_median, end_median) = (median(rates), median(ends));
    let slow = mad_outliers(rates)
        .into_iter()
        .filter(|&i| rates[i] < rate_median * (1.0 - MIN_GAP));
    let late = mad_outliers(ends)
        .into_iter()
        .filter(|&i| ends[i] > end_median * (1.0 + MIN_GAP));
    let mut named: Vec<usize> = slow.chain(late).collect();
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
mod tests {
    use super::*;
    use crate::model::RunReport;

    use crate::testutil::four_ranks_ending_at;

    #[test]
    fn a_rank_far_slower_than_the_others_is_named() {
        let found = straggler(&four_ranks_ending_at([1000, 1010, 1005, 4000]));
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
        let close = four_ranks_ending_at([1000, 1000, 1000, 1060]);
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
