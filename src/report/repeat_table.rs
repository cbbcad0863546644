//! `--repeat`: the compact table of the statistics over the repetitions,
//! then their findings (made in `diagnose::repetitions`).

use crate::model::RepeatReport;
use crate::units::{format_value, run_numbers};
use std::fmt::Write;

/// The compact table: per job a line per metric, then the findings.
pub fn render_table(r: &RepeatReport) -> String {
    let mut out = format!("{} measured repetitions", r.repetitions.len());
    if r.warmup > 0 {
        let _ = write!(out, " after {} unmeasured warm-up run(s)", r.warmup);
    }
    out.push('\n');
    let mut current_job = None;
    for s in &r.summary {
        if current_job != Some(&s.job) {
            let _ = writeln!(
                out,
                "\njob '{}'\n  {:<11} {:>14} {:>14} {:>14} {:>7}  {:<31} outliers",
                s.job, "metric", "median", "min", "max", "CV", "95% CI of median"
            );
            current_job = Some(&s.job);
        }
        let _ = writeln!(
            out,
            "  {:<11} {:>14} {:>14} {:>14} {:>6.1}%  {:<31} {}",
            s.metric,
            format_value(s.stats.median, &s.unit),
            format_value(s.stats.min, &s.unit),
            format_value(s.stats.max, &s.unit),
            s.stats.cv_pct,
            format!(
                "[{}, {}]",
                format_value(s.stats.median_ci95.0, &s.unit),
                format_value(s.stats.median_ci95.1, &s.unit)
            ),
            if s.stats.outliers.is_empty() {
                "-".to_string()
            } else {
                run_numbers(&s.stats.outliers)
            }
        );
    }
    out.push_str(&super::findings_text::render(&r.findings));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::repetitions::build;
    use crate::testutil::run_report;

    #[test]
    fn the_table_has_a_line_per_metric_under_each_job() {
        let reps = [100.0, 110.0, 90.0].map(|v| run_report(&[("rr", v)]));
        let table = render_table(&build(reps.to_vec(), 1));
        assert!(
            table.contains("3 measured repetitions after 1 unmeasured"),
            "expected the repetitions and warm-up counted, got:\n{table}"
        );
        assert!(
            table.contains("job 'rr'") && table.contains("clat_p99"),
            "expected job 'rr' and its clat_p99 line, got:\n{table}"
        );
    }
}
