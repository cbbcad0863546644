//! A run on several ranks in the HTML report: the cluster's figures, a row per
//! rank, a bar per rank's MB/s with the stragglers marked, and each host's disks
//! once (from the host's first rank). The figures are the text report's
//! (`report::text::cluster`); the stragglers are those the `straggler` finding names.

use super::escape::{escape, row};
use super::svg::{self, Axis, BarGroup, Frame};
use crate::diagnose::straggler::stragglers;
use crate::model::{ClusterReport, DiskUtil};
use crate::report::text::cluster::{hosts, rank_cells, Spread, RANK_COLUMNS};
use crate::units::format_value;
use std::fmt::Write;

/// The section, `id="cluster"`.
pub(super) fn section(out: &mut String, cluster: &ClusterReport) {
    let slow = stragglers(cluster);
    let _ = write!(
        out,
        "<h2 id=\"cluster\">Ranks</h2><p>{} ranks on {} host(s); every rank's workers together are the jobs above. Per rank: MB/s and IOPS from the barrier to its end, its latencies, its end and its lag behind the first rank to end.</p><table class=\"kv\">",
        cluster.ranks.len(),
        hosts(cluster)
    );
    let figures = [
        (
            "all ranks, from the barrier to the last end",
            format!("{:.1} MB/s", cluster.bytes_per_sec() / 1e6),
        ),
        (
            "all ranks, while all were active (until the first end)",
            format!("{:.1} MB/s", cluster.all_active_bytes_per_sec() / 1e6),
        ),
        (
            "barrier skew (ranks on one host)",
            format_value(cluster.barrier_skew_ns() as f64, "ns"),
        ),
        ("spread", Spread::of(cluster).to_string()),
    ];
    for (name, value) in figures {
        row(out, name, &value);
    }
    out.push_str("</table><table id=\"ranks\"><tr>");
    for column in RANK_COLUMNS {
        let _ = write!(out, "<th>{}</th>", escape(column));
    }
    out.push_str("<th></th></tr>");
    for (i, rank) in cluster.ranks.iter().enumerate() {
        let straggler = slow.contains(&i);
        out.push_str(if straggler {
            "<tr class=\"straggler\">"
        } else {
            "<tr>"
        });
        for cell in rank_cells(rank) {
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        let note = if straggler { "straggler" } else { "" };
        let _ = write!(out, "<td>{note}</td></tr>");
    }
    out.push_str("</table>");
    let groups: Vec<BarGroup> = cluster
        .ranks
        .iter()
        .enumerate()
        .map(|(i, rank)| BarGroup {
            label: rank.rank.to_string(),
            values: vec![Some(rank.bytes_per_sec() / 1e6)],
            mark: slow.contains(&i).then(|| "straggler".to_string()),
        })
        .collect();
    out.push_str(&svg::grouped_bars(
        &Frame {
            id: "chart-cluster-mbs".into(),
            title: "MB/s per rank, from the barrier to its end (stragglers marked)".into(),
            x: Axis::linear("rank"),
            y: Axis::linear("MB/s"),
        },
        &["MB/s"],
        &groups,
        |v| format!("{v:.1}"),
    ));
    for rank in cluster.host_disks() {
        let _ = write!(
            out,
            "<h3>Disks of {} (sampled by rank {})</h3>",
            escape(&rank.hostname),
            rank.rank
        );
        disks(out, &rank.report.disks);
    }
}

/// A host's disks with fio's figures: I/Os, merges, ticks, time in queue, utilization.
fn disks(out: &mut String, disks: &[DiskUtil]) {
    out.push_str("<table class=\"disks\"><tr><th>disk</th><th>read I/Os</th><th>write I/Os</th><th>read merges</th><th>write merges</th><th>read ticks (ms)</th><th>write ticks (ms)</th><th>in queue (ms)</th><th>util</th></tr>");
    for d in disks {
        let _ = write!(out, "<tr><td>{}</td>", escape(&d.name));
        for counter in d.fio_counters() {
            let _ = write!(out, "<td>{counter}</td>");
        }
        let _ = write!(out, "<td>{:.2} %</td></tr>", d.util_pct);
    }
    out.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use crate::model::DiskUtil;
    use crate::report::html::render_run;
    use crate::testutil::four_ranks_ending_at;

    /// The page's text from `from` to the next `<h2`.
    fn part<'a>(page: &'a str, from: &str) -> &'a str {
        let at = page
            .find(from)
            .unwrap_or_else(|| panic!("expected {from} in the page, saw {page}"));
        let rest = &page[at..];
        &rest[..rest[1..].find("<h2").map_or(rest.len(), |end| end + 1)]
    }

    #[test]
    fn the_ranks_section_has_every_rank_the_straggler_marked_and_each_hosts_disks_once() {
        // rank 3 ends at 4 s, the others near 1 s: the straggler finding's rank
        let mut report = four_ranks_ending_at([1000, 1010, 1005, 4000]);
        let cluster = report.cluster.as_mut().unwrap();
        for (rank, disk) in [(0, "vda"), (2, "nvme0n1")] {
            cluster.ranks[rank].report.disks = vec![DiskUtil {
                name: disk.into(),
                read_ios: 4242,
                ..Default::default()
            }];
        }
        let page = render_run(&report);
        let section = part(&page, "<h2 id=\"cluster\">");
        for (rank, mb_per_sec) in [(0, "100.0"), (1, "99.0"), (2, "99.5"), (3, "25.0")] {
            let row = format!("<td>{rank}</td><td>h{rank}</td><td>{mb_per_sec}</td>");
            assert!(
                section.contains(&row),
                "expected rank {rank}'s row ({row}) in {section}"
            );
        }
        let marked: Vec<&str> = section
            .split("<tr class=\"straggler\"><td>")
            .skip(1)
            .map(|row| &row[..1])
            .collect();
        assert_eq!(
            marked,
            ["3"],
            "expected rank 3's row alone marked, saw {marked:?} in {section}"
        );
        assert!(
            section.contains("<rect class=\"mark\" data-group=\"3\"")
                && section.matches("class=\"mark\"").count() == 1,
            "expected rank 3's bar alone marked in the chart, saw {section}"
        );
        for figure in [
            "<td>all ranks, from the barrier to the last end</td><td>",
            "<td>spread</td><td>MB/s min 25.0 median 99.3 max 100.0",
        ] {
            assert!(
                section.contains(figure),
                "expected the cluster's figure {figure} in {section}"
            );
        }
        for (host, disk) in [("h0", "vda"), ("h2", "nvme0n1")] {
            let heading = format!("<h3>Disks of {host} (sampled by rank {})</h3>", &host[1..]);
            let seen = (
                section.matches(&heading).count(),
                section.matches(&format!("<td>{disk}</td>")).count(),
            );
            assert_eq!(
                seen,
                (1, 1),
                "expected {host}'s heading and disk {disk} once each, saw {seen:?} in {section}"
            );
        }
        let alone = render_run(&Default::default());
        assert!(
            !alone.contains("id=\"cluster\""),
            "expected no ranks section in the report of a run on one host, saw {alone}"
        );
    }
}
