//! A rate-limited job's schedule in the HTML report: the text report's summary
//! (late I/Os, how far behind, the stalls) and, per direction, the usual latency
//! percentiles beside those counted from each I/O's due time.

use super::svg::escape;
use crate::model::{JobReport, ScheduleReport};
use crate::report::text::schedule::{summary, DIRECTIONS};
use crate::units::format_value;
use std::fmt::Write;

pub(super) fn section(out: &mut String, job: &JobReport, s: &ScheduleReport) {
    let _ = write!(out, "<h3>Rate schedule</h3><p>{}</p>", escape(&summary(s)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DirReport, LatSummary};

    fn p99(ns: u64) -> LatSummary {
        LatSummary {
            max_ns: ns,
            samples: 100,
            percentiles: vec![(99.0, ns)],
            ..Default::default()
        }
    }

    #[test]
    fn each_direction_shows_the_usual_percentiles_beside_those_from_the_due_times() {
        let mut job = JobReport::default();
        job.dirs[1] = DirReport {
            clat: Some(p99(823_000)),
            ..Default::default()
        };
        let s = ScheduleReport {
            ios: 100,
            late_ios: 30,
            corrected: [None, Some(p99(1_400_000_000)), None],
            ..Default::default()
        };
        let mut out = String::new();
        section(&mut out, &job, &s);
        assert!(out.contains("<p>ios=100, late=30 (30.00%)"), "{out}");
        assert!(out.contains("<th>write percentile</th>"), "{out}");
        assert!(!out.contains("read percentile"), "{out}");
        let row = format!(
            "<tr><td>99</td><td>{}</td><td>{}</td></tr>",
            format_value(823_000.0, "ns"),
            format_value(1.4e9, "ns")
        );
        assert!(out.contains(&row), "{out}");
    }
}
