//! `cpu-starvation`: the workers were runnable but waiting for a CPU for a
//! large share of the run, so the numbers measure the scheduler (other load
//! on the machine), not the storage.

use crate::report::model::{Finding, RunReport, Severity};

/// Share of the workers' time spent waiting for a CPU worth a warning.
const DELAY_SHARE: f64 = 0.20;

pub fn cpu_starvation(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for series in &report.observations.jobs {
        let Some(job) = report.jobs.iter().find(|j| j.name == series.name) else {
            continue;
        };
        let workers: Vec<_> = report
            .observations
            .workers
            .iter()
            .filter(|w| w.job == series.name && w.tid != 0)
            .collect();
        let available = job.runtime_ns as f64 * workers.len() as f64;
        if available == 0.0 {
            continue;
        }
        let delay: u64 = workers.iter().map(|w| w.run_delay_ns).sum();
        let share = delay as f64 / available;
        if share < DELAY_SHARE {
            continue;
        }
        findings.push(Finding {
            code: "cpu-starvation".into(),
            severity: Severity::Warning,
            title: format!(
                "the workers of job '{}' waited for a CPU {:.0}% of the run",
                series.name,
                share * 100.0
            ),
            evidence: vec![format!(
                "{} worker{}, {:.2} s of run-queue delay in {:.2} s",
                workers.len(),
                if workers.len() == 1 { "" } else { "s" },
                delay as f64 / 1e9,
                job.runtime_ns as f64 / 1e9
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

    #[test]
    fn long_run_queue_waits_are_starvation() {
        let mut report = run(11);
        add_job(&mut report, "rr", true, io(100, 0));
        report.observations.workers[0].run_delay_ns = report.jobs[0].runtime_ns / 2;
        let found = cpu_starvation(&report);
        assert_eq!(codes(&found), ["cpu-starvation"]);
        assert!(found[0].title.contains("50%"), "{:?}", found[0]);
    }

    #[test]
    fn silent_with_a_little_delay() {
        let mut report = run(11);
        add_job(&mut report, "rr", true, io(100, 0));
        assert!(cpu_starvation(&report).is_empty());
    }
}
