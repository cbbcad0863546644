//! A run on several ranks in the normal text: one line per rank (its host,
//! MB/s, IOPS, latency percentiles from its merged histograms, when it ended and
//! how far behind the first rank), the cluster's totals and the spread. The
//! figures are worked out here for the HTML report too (`report::html::cluster`).

use crate::model::cluster::per_sec;
use crate::model::{ClusterReport, RankRun};
use crate::stats::summary::{median, sample_stddev};
use crate::units::format_value;
use std::fmt::{self, Write};

/// The ranks' table, or nothing for a run on one host.
pub(crate) fn write_ranks(out: &mut String, cluster: &ClusterReport) -> fmt::Result {
    writeln!(
        out,
        "\nRanks: {} on {} host(s); all: {}",
        cluster.ranks.len(),
        hosts(cluster),
        totals_line(cluster)
    )?;
    let line = |c: &[String; 9]| {
        format!(
            "  {:>5} {:<16} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        )
    };
    writeln!(out, "{}", line(&RANK_COLUMNS.map(String::from)))?;
    for rank in &cluster.ranks {
        writeln!(out, "{}", line(&rank_cells(rank)))?;
    }
    writeln!(out, "  spread: {}", Spread::of(cluster))?;
    // each host's disks, from its first rank: never summed across hosts
    for rank in cluster.host_disks() {
        writeln!(out, "  disks of {} (rank {}):", rank.hostname, rank.rank)?;
        for disk in &rank.report.disks {
            super::write_disk(out, disk)?;
        }
    }
    Ok(())
}

/// How many hosts the ranks ran on.
pub(in crate::report) fn hosts(cluster: &ClusterReport) -> usize {
    let mut names: Vec<&str> = cluster.ranks.iter().map(|r| r.hostname.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// The cluster's figures: over the last end, while all were active, the barrier's skew.
fn totals_line(cluster: &ClusterReport) -> String {
    format!(
        "{:.1} MB/s from the barrier to the last end, {:.1} MB/s while all were active; barrier skew {}",
        cluster.bytes_per_sec() / 1e6,
        cluster.all_active_bytes_per_sec() / 1e6,
        format_value(cluster.barrier_skew_ns() as f64, "ns"),
    )
}

/// The per-rank table's columns.
pub(in crate::report) const RANK_COLUMNS: [&str; 9] = [
    "rank", "host", "MB/s", "IOPS", "p50", "p99", "max", "end (s)", "lag (ms)",
];

/// One rank's row: its number and host, MB/s and IOPS over its busy time, the
/// latencies of its main direction (completion, else total; "-" when not
/// measured), its end after the barrier and its lag behind the first rank to
/// end, over its groups.
pub(in crate::report) fn rank_cells(rank: &RankRun) -> [String; 9] {
    let lat = rank
        .main_dir()
        .and_then(|d| d.clat.as_ref().or(d.lat.as_ref()));
    let pct = |p: f64| {
        lat.and_then(|l| l.percentiles.iter().find(|(q, _)| *q == p))
            .map_or("-".to_string(), |(_, ns)| format_value(*ns as f64, "ns"))
    };
    [
        rank.rank.to_string(),
        rank.hostname.clone(),
        format!("{:.1}", rank.bytes_per_sec() / 1e6),
        format!("{:.0}", per_sec(rank.ios(), rank.busy_ns())),
        pct(50.0),
        pct(99.0),
        lat.map_or("-".to_string(), |l| format_value(l.max_ns as f64, "ns")),
        format!("{:.3}", rank.busy_ns() as f64 / 1e9),
        format!("{:.1}", rank.lag_ns() as f64 / 1e6),
    ]
}

/// How far apart the ranks are: their MB/s and their ends.
pub(in crate::report) struct Spread {
    rate_lo: f64,
    rate_median: f64,
    rate_hi: f64,
    /// Coefficient of variation of the MB/s, percent.
    cv_pct: f64,
    end_lo: f64,
    end_hi: f64,
}

impl Spread {
    pub(crate) fn of(cluster: &ClusterReport) -> Spread {
        let rates: Vec<f64> = cluster
            .ranks
            .iter()
            .map(|r| r.bytes_per_sec() / 1e6)
            .collect();
        let ends: Vec<f64> = cluster
            .ranks
            .iter()
            .map(|r| r.busy_ns() as f64 / 1e9)
            .collect();
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        let cv_pct = if mean > 0.0 {
            sample_stddev(&rates, mean) / mean * 100.0
        } else {
            0.0
        };
        let (rate_lo, rate_hi) = lo_hi(&rates);
        let (end_lo, end_hi) = lo_hi(&ends);
        Spread {
            rate_lo,
            rate_median: median(&rates),
            rate_hi,
            cv_pct,
            end_lo,
            end_hi,
        }
    }
}

impl fmt::Display for Spread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MB/s min {:.1} median {:.1} max {:.1} (CV {:.1}%); ends {:.3}-{:.3} s",
            self.rate_lo, self.rate_median, self.rate_hi, self.cv_pct, self.end_lo, self.end_hi
        )
    }
}

fn lo_hi(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    (if lo.is_finite() { lo } else { 0.0 }, hi)
}
