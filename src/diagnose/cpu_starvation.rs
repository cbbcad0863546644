//! `cpu-starvation`: the workers were runnable but waiting for a CPU for a
//! large share of the run, so the numbers measure the scheduler (other load
//! on the machine), not the storage. A wait the cgroup's CPU quota explains
//! is `cgroup-cpu-quota`'s, not blamed on other processes here.

use super::cgroup_cpu::quota_explains_wait;
use crate::model::{Finding, RunReport, Severity};

/// CPU wait (percent of the workers' time) worth a warning.
const WAIT_PCT: f64 = 20.0;

pub(super) fn cpu_starvation(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for series in &report.observations.jobs {
        let Some(wait) = series.cpu_wait.filter(|w| w.pct >= WAIT_PCT) else {
            continue;
        };
        if quota_explains_wait(report, series) {
            continue;
        }
        findings.push(Finding {
            code: "cpu-starvation".into(),
            severity: Severity::Warning,
            title: format!(
                "the workers of job '{}' waited for a CPU {:.1}% of their time",
                series.name, wait.pct
            ),
            evidence: vec![format!(
                "{} worker{}: {}",
                series.workers,
                if series.workers == 1 { "" } else { "s" },
                wait.describe()
            )],
            advice: "other processes competed for the CPUs (or there are more workers than CPUs); run on a quieter machine, fewer workers, or pin with cpus_allowed".into(),
            at_ns: None,
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::CpuWait;

    /// Job "rr" whose one worker waited `delay_per_interval` in each 100 ms interval.
    fn waiting(delay_per_interval: u64) -> RunReport {
        let mut report = run(11);
        let mut each = io(100, 0);
        each.run_delay_ns = delay_per_interval;
        add_job(&mut report, "rr", true, each);
        let obs = &mut report.observations;
        obs.jobs[0].cpu_wait = CpuWait::of(&obs.jobs[0], &obs.t_ns);
        report
    }

    #[test]
    fn long_run_queue_waits_are_starvation() {
        let report = waiting(STEP_NS / 2);
        let found = cpu_starvation(&report);
        assert_eq!(codes(&found), ["cpu-starvation"]);
        assert!(
            found[0].title.contains("50.0%"),
            "expected 50 ms of every 100 ms as 50.0%, saw {:?}",
            found[0]
        );
    }

    #[test]
    fn silent_with_a_little_delay() {
        let found = cpu_starvation(&waiting(STEP_NS / 100));
        assert!(found.is_empty(), "expected no finding at 1%, saw {found:?}");
    }

    /// The finding and the system block print one number for one run.
    #[test]
    fn the_finding_and_the_system_block_agree() {
        let report = waiting(STEP_NS * 26 / 100);
        let found = cpu_starvation(&report);
        let title = &found[0].title;
        let mut system = String::new();
        crate::report::text::system::write_system(&mut system, &report).unwrap();
        let printed = |text: &str| {
            let at = text.find('%').unwrap();
            let start = text[..at].rfind(' ').unwrap() + 1;
            text[start..at].to_string()
        };
        let line = system
            .lines()
            .find(|l| l.contains("CPU wait"))
            .unwrap_or_else(|| panic!("expected a CPU wait in\n{system}"));
        assert_eq!(
            printed(title),
            "26.0",
            "expected 26 ms of every 100 ms in the finding, saw {title}"
        );
        assert_eq!(
            printed(&line[line.find("CPU wait").unwrap()..]),
            printed(title),
            "expected the system block's CPU wait to be the finding's, saw {line:?} and {title:?}"
        );
    }
}
