//! Two results side by side: per job and headline metric the change from A to B
//! with its confidence interval and a verdict. The text and the HTML comparison
//! both render these rows.

use crate::model::metrics::{cpu_ns_per_mib, job_values, values_of, Metric};
use crate::model::RunReport;
use crate::stats::significance::{compare, Direction};

/// One side of a comparison: its label and its repetitions (one or more runs).
pub(crate) struct Side {
    pub label: String,
    pub runs: Vec<RunReport>,
}

/// One job's metric on both sides.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricChange {
    pub job: String,
    pub metric: Metric,
    pub mean_a: f64,
    pub mean_b: f64,
    pub change_pct: f64,
    /// 95 % confidence interval of the change; None without repetitions on both sides.
    pub ci95_pct: Option<(f64, f64)>,
    pub verdict: &'static str,
}

impl MetricChange {
    /// The interval as printed, "[-12.3 %, +4.5 %]", or "-" without one. A bound
    /// above −100 % that one decimal would round to −100.0 gets more decimals,
    /// so no printed interval seems to reach a loss of everything.
    pub(crate) fn ci_text(&self) -> String {
        self.ci95_pct.map_or("-".into(), |(lo, hi)| {
            format!("[{} %, {} %]", bound_text(lo), bound_text(hi))
        })
    }
}

fn bound_text(pct: f64) -> String {
    (1..=6)
        .map(|decimals| format!("{pct:+.decimals$}"))
        .find(|text| pct <= -100.0 || text.parse::<f64>().is_ok_and(|v| v > -100.0))
        .unwrap_or_else(|| format!("{pct:+e}"))
}

/// Every metric of every job both sides ran, in A's job order.
pub(crate) fn metric_changes(a: &Side, b: &Side) -> Vec<MetricChange> {
    let mut changes = Vec::new();
    let names = a.runs[0].jobs.iter().map(|j| j.name.as_str());
    for name in names.filter(|n| b.runs[0].jobs.iter().any(|j| j.name == *n)) {
        for metric in Metric::ALL {
            let (Some(va), Some(vb)) = (
                values_of(&a.runs, name, metric),
                values_of(&b.runs, name, metric),
            ) else {
                continue;
            };
            let c = compare(&va, &vb);
            changes.push(MetricChange {
                job: name.to_string(),
                metric,
                mean_a: mean(&va),
                mean_b: mean(&vb),
                change_pct: c.change_pct,
                ci95_pct: c.ci95_pct,
                verdict: verdict(metric, c.direction),
            });
        }
    }
    changes
}

/// One job's CPU cost on both sides (means over each side's runs), nanoseconds:
/// shown with the ratio even for single runs, where buffered against direct
/// I/O differ most (seed 001).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CpuCost {
    pub job: String,
    /// CPU per MiB moved, (A, B).
    pub per_mib: (f64, f64),
    /// CPU per completed I/O, (A, B).
    pub per_io: (f64, f64),
}

/// The CPU cost of every job both sides ran and moved data in, in A's job order.
pub(crate) fn cpu_costs(a: &Side, b: &Side) -> Vec<CpuCost> {
    let both = |name: &str, value: &dyn Fn(&crate::model::JobReport) -> Option<f64>| {
        Some((
            mean(&job_values(&a.runs, name, value)?),
            mean(&job_values(&b.runs, name, value)?),
        ))
    };
    a.runs[0]
        .jobs
        .iter()
        .filter_map(|job| {
            Some(CpuCost {
                job: job.name.clone(),
                per_mib: both(&job.name, &cpu_ns_per_mib)?,
                per_io: both(&job.name, &|j| Metric::CpuPerIo.of(j))?,
            })
        })
        .collect()
}

/// Why a comparison of single runs has no verdicts.
pub(crate) const NO_VERDICT: &str = "no verdict is possible without repetitions on both sides: the noise of a single run is unknown (use --repeat N, or `iolens ab`)";

/// Without repetitions on both sides the noise is unknown, so no verdict is possible.
pub(crate) fn verdicts_possible(a: &Side, b: &Side) -> bool {
    a.runs.len() >= 2 && b.runs.len() >= 2
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// B against A, in words that say which is better.
fn verdict(metric: Metric, direction: Direction) -> &'static str {
    let better = match direction {
        Direction::Increase => metric.higher_is_better(),
        Direction::Decrease => !metric.higher_is_better(),
        Direction::NoChange => return "no significant difference",
        Direction::Undecidable => return "no verdict (single run)",
    };
    match (metric, better) {
        (Metric::CpuPerIo, true) => "B uses less CPU",
        (Metric::CpuPerIo, false) => "B uses more CPU",
        (_, true) => "B faster",
        (_, false) => "B slower",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::run_report;

    fn side(iops: &[f64]) -> Side {
        Side {
            label: "s".into(),
            runs: iops.iter().map(|&v| run_report(&[("rr", v)])).collect(),
        }
    }

    #[test]
    fn an_interval_near_minus_100_percent_does_not_print_as_minus_100() {
        let change = |lo: f64, hi: f64| MetricChange {
            job: "j".into(),
            metric: Metric::Iops,
            mean_a: 1.0,
            mean_b: 1.0,
            change_pct: 0.0,
            ci95_pct: Some((lo, hi)),
            verdict: "",
        };
        assert_eq!(change(-12.34, 4.56).ci_text(), "[-12.3 %, +4.6 %]");
        assert_eq!(
            change(-99.97, 15.0).ci_text(),
            "[-99.97 %, +15.0 %]",
            "expected a bound above -100 % never to print as -100.0"
        );
        assert_eq!(
            MetricChange {
                ci95_pct: None,
                ..change(0.0, 0.0)
            }
            .ci_text(),
            "-"
        );
    }

    #[test]
    fn cpu_costs_are_means_over_each_sides_runs_for_jobs_on_both_sides() {
        let runs = |sys_ms: &[u64]| Side {
            label: "s".into(),
            runs: sys_ms
                .iter()
                .map(|&ms| {
                    let mut r = run_report(&[("rr", 256.0), ("only", 256.0)]);
                    r.jobs[0].cpu.sys_ns = ms * 1_000_000;
                    r.jobs[0].cpu.cpu_ns_per_io = ms as f64;
                    r
                })
                .collect(),
        };
        let mut b = runs(&[1, 3]);
        for r in &mut b.runs {
            r.jobs.truncate(1);
        }
        assert_eq!(
            cpu_costs(&runs(&[4]), &b),
            [CpuCost {
                job: "rr".into(),
                per_mib: (4e6, 2e6),
                per_io: (4.0, 2.0),
            }],
            "expected job rr's means (1 MiB moved per run) and no row for a job only A ran"
        );
    }

    #[test]
    fn a_clear_gain_has_a_verdict_and_single_runs_have_none() {
        let (a, b) = (side(&[100.0, 102.0, 98.0]), side(&[150.0, 149.0, 151.0]));
        assert!(verdicts_possible(&a, &b));
        let iops = metric_changes(&a, &b)
            .into_iter()
            .find(|c| c.metric == Metric::Iops)
            .unwrap();
        assert_eq!((iops.job.as_str(), iops.verdict), ("rr", "B faster"));
        assert!((iops.change_pct - 50.0).abs() < 1e-9 && iops.ci95_pct.is_some());

        let (a, b) = (side(&[100.0]), side(&[150.0]));
        assert!(!verdicts_possible(&a, &b));
        assert!(metric_changes(&a, &b)
            .iter()
            .all(|c| c.verdict == "no verdict (single run)"));
    }
}
