//! A rate-limited job's schedule in the HTML report: the text report's summary
//! (late I/Os, how far behind, the stalls), the I/Os behind per second over the
//! job's time and, per direction, the usual latency percentiles beside those
//! counted from each I/O's due time.

use super::escape::escape;
use super::svg::{self, Axis, Frame, Series};
use crate::model::{JobReport, ScheduleReport, DIRECTIONS};
use crate::report::text::schedule::summary;
use crate::units::format_value;
use std::fmt::Write;

/// The schedule of job `index` (its charts' ids are `chart-job-{index}-…`).
pub(super) fn section(out: &mut String, index: usize, job: &JobReport, s: &ScheduleReport) {
    let _ = write!(out, "<h3>Rate schedule</h3><p>{}</p>", escape(&summary(s)));
    if !s.behind_per_second.is_empty() {
        behind_chart(out, index, job, s);
    }
    let shown = DIRECTIONS.iter().zip(&s.corrected).zip(&job.dirs);
    for ((name, corrected), dir) in shown {
        let Some(corrected) = corrected else {
            continue;
        };
        let usual = dir.latency_with_percentiles();
        let _ = write!(
            out,
            "<table><tr><th>{name} percentile</th><th>from when it went out</th><th>from when it was due</th></tr>"
        );
        for &(pct, ns) in &corrected.percentiles {
            let from_issue = usual
                .and_then(|u| u.at_percentile(pct))
                .map_or("-".into(), |v| format_value(v as f64, "ns"));
            let _ = write!(
                out,
                "<tr><td>{pct}</td><td>{from_issue}</td><td>{}</td></tr>",
                format_value(ns as f64, "ns")
            );
        }
        out.push_str("</table>");
    }
    out.push_str("<p class=\"note\">Counted from when each I/O went out, the latencies leave out the waits of the I/Os that were due during a stall (coordinated omission); counted from their due times, they include them.</p>");
}

/// The I/Os due and not issued, the most of each second, over the job's time.
fn behind_chart(out: &mut String, index: usize, job: &JobReport, s: &ScheduleReport) {
    let seconds = s
        .behind_per_second
        .len()
        .max(job.runtime_ns.div_ceil(1_000_000_000) as usize);
    let behind = |second: usize| s.behind_per_second.get(second).copied().unwrap_or(0);
    let points = (0..seconds)
        .map(|second| (second as f64, behind(second) as f64))
        .collect();
    out.push_str(&svg::line_chart(
        &Frame {
            id: format!("chart-job-{index}-behind"),
            title: "I/Os behind the rate schedule (the most in each second)".into(),
            x: Axis::linear("seconds of the job"),
            y: Axis::count("I/Os due, not issued"),
        },
        &[Series {
            label: "behind".into(),
            points,
        }],
        &[],
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DirReport;
    use crate::testutil::p99_summary;

    #[test]
    fn each_direction_shows_the_usual_percentiles_beside_those_from_the_due_times() {
        let mut job = JobReport::default();
        job.dirs[1] = DirReport {
            clat: Some(p99_summary(823_000)),
            ..Default::default()
        };
        let s = ScheduleReport {
            ios: 100,
            late_ios: 30,
            corrected: [None, Some(p99_summary(1_400_000_000)), None],
            ..Default::default()
        };
        let mut out = String::new();
        section(&mut out, 0, &job, &s);
        assert!(!out.contains("chart-job-0-behind"), "{out}");
        assert!(out.contains("<p>ios=100, late=30 (30.00%)"), "{out}");
        assert!(out.contains("<th>write percentile</th>"), "{out}");
        assert!(!out.contains("read percentile"), "{out}");
        let row = format!(
            "<tr><td>99</td><td>{}</td><td>{}</td></tr>",
            format_value(823_000.0, "ns"),
            format_value(1.4e9, "ns")
        );
        assert!(out.contains(&row), "{out}");
        let behind = ScheduleReport {
            behind_per_second: vec![0, 200, 300],
            ..s
        };
        let mut out = String::new();
        section(&mut out, 3, &job, &behind);
        assert!(out.contains("id=\"chart-job-3-behind\""), "{out}");
    }
}
