//! `cpu-frequency`: a cpufreq governor other than `performance` lets the
//! clock follow the load, so CPU-heavy I/O paths (small blocks, buffered I/O)
//! vary with it. The run records governors, not the frequency over time, so
//! this is an Info.

use crate::report::model::{Finding, RunReport, Severity};

pub fn cpu_frequency(report: &RunReport) -> Option<Finding> {
    let governors = &report.environment.cpufreq_governors;
    let others: Vec<&str> = governors
        .iter()
        .map(String::as_str)
        .filter(|g| *g != "performance")
        .collect();
    if others.is_empty() {
        return None;
    }
    Some(Finding {
        code: "cpu-frequency".into(),
        severity: Severity::Info,
        title: format!(
            "the CPU frequency governor is {}, not performance",
            others.join(", ")
        ),
        evidence: vec![format!("cpufreq governors in use: {}", governors.join(", "))],
        advice: "for repeatable CPU-bound results set the performance governor (cpupower frequency-set -g performance)".into(),
        at_ns: None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;

    #[test]
    fn a_powersave_governor_is_an_info() {
        let mut report = run(2);
        report.environment.cpufreq_governors = vec!["performance".into(), "powersave".into()];
        let found = cpu_frequency(&report).unwrap();
        assert_eq!(found.severity, Severity::Info);
        assert!(found.title.contains("powersave"), "{found:?}");
    }

    #[test]
    fn silent_with_performance_or_without_cpufreq() {
        let mut report = run(2);
        assert_eq!(cpu_frequency(&report), None);
        report.environment.cpufreq_governors = vec!["performance".into()];
        assert_eq!(cpu_frequency(&report), None);
    }
}
