//! `--repeat`: the compact table of the statistics over the repetitions,
//! which repetitions had which finding, then the findings: each repetition
//! finding in full once, and those over the repetitions (made in
//! `series::repetitions`).

use super::findings;
use crate::model::{Finding, RepeatReport, RunReport};
use crate::series::repetitions;
use crate::units::{format_value, run_numbers};
use std::fmt::Write;

/// The compact table: per job a line per metric, then the findings.
pub(in crate::report) fn render_table(r: &RepeatReport) -> String {
    let mut out = format!("{} measured repetitions", r.repetitions.len());
    if r.warmup > 0 {
        let _ = write!(out, " after {} unmeasured warm-up run(s)", r.warmup);
    }
    out.push('\n');
    for line in partial_runs(r) {
        let _ = writeln!(out, "  {line}");
    }
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
    let occurrences = repetitions::occurrences(r);
    if !occurrences.is_empty() {
        out.push_str("\nfindings of the repetitions\n");
    }
    for o in &occurrences {
        let _ = writeln!(out, "  {}", occurrence_line(o));
    }
    // Each repetition finding in full once, then those over the repetitions.
    let findings: Vec<Finding> = occurrences
        .iter()
        .flat_map(|o| findings::first_reported(r, o))
        .chain(&r.findings)
        .cloned()
        .collect();
    out.push_str(&findings::render(&findings));
    out
}

/// A line per repetition that did not run whole (interrupted, or a job failed),
/// saying why: its numbers are in the statistics as measured.
pub(crate) fn partial_runs(r: &RepeatReport) -> Vec<String> {
    (1..)
        .zip(&r.repetitions)
        .filter_map(|(n, rep)| partial_run(&format!("repetition #{n}"), rep))
        .collect()
}

/// "`name`: interrupted, its results are partial; job 'x': why" when the run
/// did not run whole; None when it did.
pub(crate) fn partial_run(name: &str, run: &RunReport) -> Option<String> {
    let failed = run.jobs.iter().filter(|j| j.error.is_some());
    if !run.interrupted && failed.clone().next().is_none() {
        return None;
    }
    let mut line = format!(
        "{name}: {}",
        if run.interrupted {
            "interrupted, its results are partial"
        } else {
            "a job failed"
        }
    );
    for j in failed {
        let _ = write!(
            line,
            "; job '{}': {}",
            j.name,
            j.error.as_deref().unwrap_or("")
        );
    }
    Some(line)
}

/// "pagecache-under-direct-io in repetitions #2, #4 — those are the slow cluster
/// of job 'rr'": the repetitions that had a finding (text and HTML say it alike).
pub(crate) fn occurrence_line(o: &repetitions::Occurrence) -> String {
    let mut line = format!("{} in repetitions {}", o.code, run_numbers(&o.runs));
    for (job, label) in &o.splits {
        let _ = write!(line, " — those are the {label} cluster of job '{job}'");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::repetitions::build;
    use crate::testutil::run_report;

    #[test]
    fn the_repetitions_with_each_finding_are_named_with_the_cluster_they_mark() {
        let values = [2400.0, 3800.0, 2410.0, 3790.0, 2395.0, 3805.0];
        let reps = values.map(|v| {
            let mut r = run_report(&[("rr", v)]);
            if v < 3000.0 {
                r.findings
                    .push(crate::testutil::finding("pagecache-under-direct-io"));
            }
            r
        });
        let table = render_table(&build(reps.to_vec(), 0));
        let line = "  pagecache-under-direct-io in repetitions #1, #3, #5 — those are the slow cluster of job 'rr'\n";
        assert!(
            table.contains(line),
            "expected the line {line:?}, got:\n{table}"
        );
        let full =
            "\nFindings:\n  [WARNING] pagecache-under-direct-io (pagecache-under-direct-io)\n";
        assert!(
            table.contains(full)
                && table.matches("[WARNING] pagecache-under-direct-io").count() == 1,
            "expected the repetitions' finding in full once in the findings block, got:\n{table}"
        );
    }

    #[test]
    fn a_partial_repetition_is_marked_with_why() {
        let mut reps = [100.0, 110.0].map(|v| run_report(&[("rr", v)]));
        reps[1].interrupted = true;
        reps[1].jobs[0].error = Some("worker 0: left behind, stuck in the kernel".into());
        let table = render_table(&build(reps.to_vec(), 0));
        let line = "2 measured repetitions\n  repetition #2: interrupted, its results are partial; job 'rr': worker 0: left behind, stuck in the kernel\n";
        assert!(
            table.starts_with(line),
            "expected the table to open with {line:?}, got:\n{table}"
        );
    }

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
