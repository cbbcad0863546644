//! Two results compared as text, for `compare`, `ab` and `--compare-with`: which
//! conditions differ between the sides (`comparability`, which the HTML page
//! shows too), per job and metric the change with its confidence interval and a
//! verdict, the CPU cost of both sides, and each side's findings.

use super::findings;
use crate::model::RunReport;
use crate::series::fingerprint::{comparable_path, job_configuration};
use crate::series::metric_changes::{
    cpu_costs, metric_changes, verdicts_possible, Side, NO_VERDICT,
};
use crate::units::format_value;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The comparison of A with B: the sides, what differs between them, the metric
/// changes, the CPU cost and the findings.
pub(in crate::report) fn render(a: &Side, b: &Side) -> String {
    let mut out = format!(
        "A: {} ({} run{})\nB: {} ({} run{})\n",
        a.label,
        a.runs.len(),
        plural(a.runs.len()),
        b.label,
        b.runs.len(),
        plural(b.runs.len())
    );
    out.push_str(&comparability(&a.runs[0], &b.runs[0]));
    let _ = writeln!(
        out,
        "\n{:<16} {:<11} {:>14} {:>14} {:>9}  {:<20} verdict",
        "job", "metric", "A mean", "B mean", "change", "95% CI"
    );
    for c in metric_changes(a, b) {
        let ci = c.ci_text();
        let _ = writeln!(
            out,
            "{:<16} {:<11} {:>14} {:>14} {:>+8.1}%  {:<20} {}",
            c.job,
            c.metric.name(),
            format_value(c.mean_a, c.metric.unit()),
            format_value(c.mean_b, c.metric.unit()),
            c.change_pct,
            ci,
            c.verdict
        );
    }
    if !verdicts_possible(a, b) {
        let _ = writeln!(out, "\n{NO_VERDICT}");
    }
    let costs = cpu_costs(a, b);
    if !costs.is_empty() {
        let _ = writeln!(
            out,
            "\nCPU cost (user+sys CPU time{}; B/A):",
            if a.runs.len() + b.runs.len() > 2 {
                ", means over each side's runs"
            } else {
                ""
            }
        );
    }
    for c in &costs {
        let _ = writeln!(
            out,
            "  job {}: CPU per MiB {} → {} ({}), CPU per I/O {} → {} ({})",
            c.job,
            format_value(c.per_mib.0, "ns"),
            format_value(c.per_mib.1, "ns"),
            ratio_text(c.per_mib),
            format_value(c.per_io.0, "ns"),
            format_value(c.per_io.1, "ns"),
            ratio_text(c.per_io),
        );
    }
    out.push_str(&findings::render_comparison(a, b));
    out
}

/// B/A as "x0.17"; "x-" when A used no measurable CPU.
fn ratio_text((a, b): (f64, f64)) -> String {
    if a > 0.0 {
        format!("x{:.2}", b / a)
    } else {
        "x-".into()
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A report as JSON with the environment's running counters reduced to the
/// condition they show: free page reporting's KiB handed back grows through the
/// machine's life, so only whether it is on can differ between two runs.
fn comparable_json(report: &RunReport) -> Value {
    let mut value = serde_json::to_value(report).expect("RunReport serializes to JSON");
    if let Some(kib) = value.pointer_mut("/environment/page_reporting_kib") {
        if kib.is_number() {
            *kib = Value::Bool(true);
        }
    }
    value
}

/// What differs between the two sides' conditions: the recorded environment,
/// the iolens version, each job's options and the command line.
pub(crate) fn comparability(a: &RunReport, b: &RunReport) -> String {
    let mut differences = Vec::new();
    if a.tool_version != b.tool_version {
        differences.push(format!(
            "iolens version: {} vs {}",
            a.tool_version, b.tool_version
        ));
    }
    let (va, vb) = (comparable_json(a), comparable_json(b));
    let env_recorded = va.get("environment").is_some() || vb.get("environment").is_some();
    if env_recorded {
        differences.extend(leaf_differences(
            "environment",
            va.get("environment"),
            vb.get("environment"),
        ));
    }
    // A temporary target's random name is not a difference; its directory is.
    let options = |r: &RunReport| -> BTreeMap<String, BTreeMap<String, String>> {
        r.jobs
            .iter()
            .map(|j| (j.name.clone(), job_configuration(r, j)))
            .collect()
    };
    let (oa, ob) = (options(a), options(b));
    for (job, opts_a) in &oa {
        let Some(opts_b) = ob.get(job) else {
            differences.push(format!("job '{job}' only in A"));
            continue;
        };
        for key in opts_a
            .keys()
            .chain(opts_b.keys().filter(|k| !opts_a.contains_key(*k)))
        {
            let (x, y) = (opts_a.get(key), opts_b.get(key));
            if x != y {
                differences.push(format!(
                    "job '{job}' option {key}: {} vs {}",
                    x.map_or("(not set)", String::as_str),
                    y.map_or("(not set)", String::as_str)
                ));
            }
        }
    }
    differences.extend(
        ob.keys()
            .filter(|j| !oa.contains_key(*j))
            .map(|j| format!("job '{j}' only in B")),
    );
    let mut out = String::new();
    if differences.is_empty() {
        out.push_str("comparability: same iolens version and job options");
        out.push_str(if env_recorded {
            ", same recorded environment\n"
        } else {
            " (no environment recorded to compare)\n"
        });
    } else {
        out.push_str("warning: not like for like; these differ between A and B:\n");
        for d in &differences {
            let _ = writeln!(out, "  - {d}");
        }
    }
    if a.command_line != b.command_line {
        let _ = writeln!(
            out,
            "note: command lines differ: `{}` vs `{}`",
            a.command_line.join(" "),
            b.command_line.join(" ")
        );
    }
    out
}

/// "path: x vs y" for every scalar leaf that differs (or exists on one side only).
fn leaf_differences(path: &str, a: Option<&Value>, b: Option<&Value>) -> Vec<String> {
    let mut la = BTreeMap::new();
    let mut lb = BTreeMap::new();
    if let Some(a) = a {
        scalar_leaves(path, a, &mut la);
    }
    if let Some(b) = b {
        scalar_leaves(path, b, &mut lb);
    }
    let mut keys: Vec<&String> = la.keys().chain(lb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| la.get(*k) != lb.get(*k))
        .map(|k| {
            let show = |m: &BTreeMap<String, String>| m.get(k).cloned().unwrap_or("(none)".into());
            format!("{k}: {} vs {}", show(&la), show(&lb))
        })
        .collect()
}

fn scalar_leaves(path: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                scalar_leaves(&format!("{path}.{k}"), v, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                scalar_leaves(&format!("{path}[{i}]"), item, out);
            }
        }
        // A temporary target (in the environment's mounts, say) by its directory only.
        Value::String(s) => {
            out.insert(path.to_string(), comparable_path(s));
        }
        other => {
            out.insert(path.to_string(), other.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::run_report;

    fn side(label: &str, iops: &[f64]) -> Side {
        Side {
            label: label.into(),
            runs: iops.iter().map(|&v| run_report(&[("rr", v)])).collect(),
        }
    }

    #[test]
    fn a_clear_gain_is_faster_and_lower_latency_too() {
        let text = render(
            &side("a.json", &[100.0, 102.0, 98.0]),
            &side("b.json", &[150.0, 149.0, 151.0]),
        );
        let line = |metric: &str| {
            text.lines()
                .find(|l| l.starts_with("rr") && l.contains(metric))
                .unwrap_or_else(|| panic!("no {metric} line in:\n{text}"))
                .to_string()
        };
        assert!(
            line("iops").contains("+50.0%") && line("iops").ends_with("B faster"),
            "{text}"
        );
        assert!(line("clat_mean").ends_with("B faster"), "{text}");
        assert!(
            text.contains("comparability: same iolens version and job options"),
            "{text}"
        );
        assert!(!text.contains("no verdict"), "{text}");
    }

    #[test]
    fn single_runs_get_no_verdict() {
        let text = render(&side("a", &[100.0]), &side("b", &[150.0]));
        assert!(text.contains("no verdict (single run)"), "{text}");
        assert!(
            text.contains("no verdict is possible without repetitions"),
            "{text}"
        );
    }

    #[test]
    fn single_runs_show_cpu_per_mib_and_per_io_with_the_ratio_and_the_findings() {
        let with_cpu = |cpu_ms: u64, code: &str| {
            let mut r = run_report(&[("rr", 256.0)]);
            r.jobs[0].cpu.sys_ns = cpu_ms * 1_000_000;
            r.jobs[0].cpu.cpu_ns_per_io = (cpu_ms * 1_000_000) as f64 / 256.0;
            r.findings = vec![crate::testutil::finding(code)];
            Side {
                label: format!("{code}.json"),
                runs: vec![r],
            }
        };
        let text = render(
            &with_cpu(4, "served-from-cache"),
            &with_cpu(1, "cpu-starvation"),
        );
        let line = "  job rr: CPU per MiB 4.00 ms → 1.00 ms (x0.25), CPU per I/O 15.62 µs → 3.91 µs (x0.25)";
        assert!(
            text.contains("\nCPU cost (user+sys CPU time; B/A):\n") && text.contains(line),
            "expected the CPU cost block with {line:?} for single runs, got:\n{text}"
        );
        assert!(
            text.contains("Findings of A (served-from-cache.json):")
                && text.contains("  served-from-cache: only A had it\n")
                && text.contains("  cpu-starvation: only B had it\n"),
            "expected each side's findings and those of one side only, got:\n{text}"
        );
        let idle = render(&with_cpu(0, "x"), &with_cpu(1, "x"));
        assert!(
            idle.contains("CPU per MiB 0.0 ns → 1.00 ms (x-)"),
            "expected no ratio when A used no measurable CPU, got:\n{idle}"
        );
    }

    #[test]
    fn differing_options_and_environment_are_listed() {
        let a = run_report(&[("rr", 1.0)]);
        let mut b = a.clone();
        b.jobs[0].options[1].1 = "io_uring".into();
        b.tool_version = "9.9.9".into();
        let text = comparability(&a, &b);
        assert!(text.starts_with("warning: not like for like"), "{text}");
        assert!(text.contains("iolens version: 0.1.0 vs 9.9.9"), "{text}");
        assert!(
            text.contains("job 'rr' option ioengine: psync vs io_uring"),
            "{text}"
        );

        let mut quick_a = a.clone();
        quick_a.jobs[0].options.retain(|(k, _)| k != "filename");
        quick_a.global_options = vec![("filename".into(), "/d/.iolens-quick-3m0CGM".into())];
        let mut quick_b = quick_a.clone();
        quick_b.global_options[0].1 = "/d/.iolens-quick-Zx81Qa".into();
        let same = comparability(&quick_a, &quick_b);
        assert!(
            !same.contains("iolens-quick"),
            "expected two temporary files in one directory not to be a difference, got:\n{same}"
        );
        let mount = |target: &str| serde_json::json!({"filesystems": [{"target": target}]});
        assert_eq!(
            leaf_differences(
                "environment",
                Some(&mount("/d/.iolens-quick-3m0CGM")),
                Some(&mount("/d/.iolens-quick-Zx81Qa"))
            ),
            Vec::<String>::new(),
            "expected a temporary target in the environment not to be a difference"
        );

        let mut reporting_a = a.clone();
        reporting_a.environment.page_reporting_kib = Some(1024);
        let mut reporting_b = reporting_a.clone();
        reporting_b.environment.page_reporting_kib = Some(8192);
        let counters = comparability(&reporting_a, &reporting_b);
        assert!(
            !counters.contains("page_reporting"),
            "expected page reporting's growing counter not to be a difference, got:\n{counters}"
        );
        reporting_b.environment.page_reporting_kib = None;
        let switched = comparability(&reporting_a, &reporting_b);
        assert!(
            switched.contains("environment.page_reporting_kib"),
            "expected page reporting turned off to be a difference, got:\n{switched}"
        );

        let env = |kernel: &str| serde_json::json!({"kernel": kernel, "dirty_ratio": 20});
        assert_eq!(
            leaf_differences("environment", Some(&env("6.1")), Some(&env("6.8"))),
            vec!["environment.kernel: 6.1 vs 6.8"]
        );
    }
}
