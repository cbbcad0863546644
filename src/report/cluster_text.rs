//! A run on several ranks in the normal text: one line per rank (its host,
//! MB/s, IOPS, latency percentiles from its merged histograms, when it ended and
//! how far behind the first rank), the cluster's totals and the spread.

use crate::model::{ClusterReport, RankRun};
use crate::stats::summary::{median, sample_stddev};
use crate::units::format_value;
use std::fmt::{self, Write};

/// The ranks' table, or nothing for a run on one host.
pub fn write_ranks(out: &mut String, cluster: &ClusterReport) -> fmt::Result {
    let hosts = {
        let mut names: Vec<&str> = cluster.ranks.iter().map(|r| r.hostname.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    };
    writeln!(
        out,
        "\nRanks: {} on {hosts} host(s); all: {:.1} MB/s from the barrier to the last end, {:.1} MB/s while all were active; barrier skew {}",
        cluster.ranks.len(),
        cluster.bytes_per_sec() / 1e6,
        cluster.all_active_bytes_per_sec() / 1e6,
        format_value(cluster.barrier_skew_ns() as f64, "ns"),
    )?;
    writeln!(
        out,
        "  {:>5} {:<16} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "rank", "host", "MB/s", "IOPS", "p50", "p99", "max", "end (s)", "lag (ms)"
    )?;
    for rank in &cluster.ranks {
        write_rank(out, rank)?;
    }
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
    let cv = if mean > 0.0 {
        sample_stddev(&rates, mean) / mean * 100.0
    } else {
        0.0
    };
    let (rate_lo, rate_hi) = lo_hi(&rates);
    let (end_lo, end_hi) = lo_hi(&ends);
    writeln!(
        out,
        "  spread: MB/s min {rate_lo:.1} median {:.1} max {rate_hi:.1} (CV {cv:.1}%); ends {end_lo:.3}-{end_hi:.3} s",
        median(&rates)
    )?;
    // each host's disks, from its first rank: never summed across hosts
    for rank in cluster.ranks.iter().filter(|r| !r.report.disks.is_empty()) {
        writeln!(out, "  disks of {} (rank {}):", rank.hostname, rank.rank)?;
        for disk in &rank.report.disks {
            super::text::write_disk(out, disk)?;
        }
    }
    Ok(())
}

fn lo_hi(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    (if lo.is_finite() { lo } else { 0.0 }, hi)
}

fn write_rank(out: &mut String, rank: &RankRun) -> fmt::Result {
    let lat = rank
        .main_dir()
        .and_then(|d| d.clat.as_ref().or(d.lat.as_ref()));
    let pct = |p: f64| {
        lat.and_then(|l| l.percentiles.iter().find(|(q, _)| *q == p))
            .map_or("-".to_string(), |(_, ns)| format_value(*ns as f64, "ns"))
    };
    let max = lat.map_or("-".to_string(), |l| format_value(l.max_ns as f64, "ns"));
    writeln!(
        out,
        "  {:>5} {:<16} {:>10.1} {:>10.0} {:>10} {:>10} {:>10} {:>9.3} {:>9.1}",
        rank.rank,
        rank.hostname,
        rank.bytes_per_sec() / 1e6,
        crate::model::cluster::per_sec(rank.ios(), rank.busy_ns()),
        pct(50.0),
        pct(99.0),
        max,
        rank.busy_ns() as f64 / 1e9,
        rank.lag_ns() as f64 / 1e6,
    )
}
