//! `tool-bound`: the workers were on a CPU nearly all the time, so the result
//! is the speed of the submitting CPU (iolens plus the kernel's I/O path), not
//! of the device.

use crate::model::{Finding, RunReport, Severity};

/// Share of each worker's runtime on a CPU above which the CPU is the limit.
const BUSY_SHARE: f64 = 0.95;

pub(super) fn tool_bound(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for job in &report.jobs {
        let touches_storage = report
            .observations
            .jobs
            .iter()
            .any(|s| s.name == job.name && !s.targets.is_empty());
        let worker_ns = job.runtime_ns as f64 * f64::from(job.workers.max(1));
        if !touches_storage || worker_ns == 0.0 {
            continue;
        }
        let usr = job.cpu.usr_ns as f64 / worker_ns;
        let sys = job.cpu.sys_ns as f64 / worker_ns;
        if usr + sys < BUSY_SHARE {
            continue;
        }
        let side = if usr > sys {
            "mostly in iolens itself (user time): the tool, not the device, set the pace"
        } else {
            "mostly in the kernel (system time): the I/O path's CPU cost, not the device, set the pace"
        };
        findings.push(Finding {
            code: "tool-bound".into(),
            severity: Severity::Warning,
            title: format!(
                "job '{}' was CPU-bound: its workers were on a CPU {:.0}% of the time",
                job.name,
                (usr + sys) * 100.0
            ),
            evidence: vec![
                format!("usr {:.0}%, sys {:.0}% of each worker's runtime", usr * 100.0, sys * 100.0),
                side.into(),
            ],
            advice: "the device may be faster than this: add workers (numjobs) or queue depth (an async engine with iodepth > 1), or compare with the null engine's floor".into(),
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
    fn a_worker_always_on_cpu_is_tool_bound() {
        let mut report = run(11);
        add_job(&mut report, "rr", true, io(1000, 0));
        let job = &mut report.jobs[0];
        job.cpu.usr_ns = job.runtime_ns * 7 / 10;
        job.cpu.sys_ns = job.runtime_ns * 29 / 100;
        let found = tool_bound(&report);
        assert_eq!(codes(&found), ["tool-bound"]);
        assert!(
            found[0].evidence[1].contains("iolens itself"),
            "{:?}",
            found[0]
        );
    }

    #[test]
    fn silent_while_workers_wait_for_the_device_or_do_no_io() {
        let mut report = run(11);
        add_job(&mut report, "rr", true, io(1000, 0));
        report.jobs[0].cpu.sys_ns = report.jobs[0].runtime_ns / 3;
        assert!(tool_bound(&report).is_empty());

        let mut null = run(11);
        add_job(&mut null, "null", false, io(1000, 0));
        null.observations.jobs[0].targets.clear();
        null.jobs[0].cpu.usr_ns = null.jobs[0].runtime_ns;
        assert!(
            tool_bound(&null).is_empty(),
            "the null engine is CPU-bound by design"
        );
    }
}
