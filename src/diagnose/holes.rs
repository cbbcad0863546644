//! `read-from-holes`: a job read a file with unallocated ranges; those reads
//! return zeros from memory without touching the device, so they inflate IOPS.

use crate::model::{Finding, RunReport, Severity};

pub fn read_from_holes(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let mut findings = Vec::new();
    for series in &obs.jobs {
        // The live series can miss a job too short for the sampler to see
        // between two ticks; the job's own totals cannot.
        let seen_live: u64 = series.intervals.iter().map(|i| i.bytes[0]).sum();
        let reported: u64 = report
            .jobs
            .iter()
            .filter(|j| j.name == series.name)
            .map(|j| j.dirs[0].io_bytes)
            .sum();
        if seen_live.max(reported) == 0 {
            continue;
        }
        for target in obs
            .targets
            .iter()
            .filter(|t| t.sparse && series.targets.contains(&t.path))
        {
            findings.push(Finding {
                code: "read-from-holes".into(),
                severity: Severity::Warning,
                title: format!(
                    "job '{}' read {}, a file with holes: those reads never reached the device",
                    series.name, target.path
                ),
                evidence: vec![format!(
                    "{} had unallocated ranges when the run started",
                    target.path
                )],
                advice: "write the file fully first (or delete it so iolens lays it out with data) before measuring reads".into(),
                at_ns: None,
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;

    #[test]
    fn reading_a_sparse_target_is_flagged_and_writing_it_is_not() {
        let mut report = run(5);
        add_job(&mut report, "rr", false, io(10, 0));
        add_target(&mut report, |_| 0);
        report.observations.targets[0].sparse = true;
        assert_eq!(codes(&read_from_holes(&report)), ["read-from-holes"]);

        let mut writer = run(5);
        add_job(&mut writer, "w", false, io(0, 10));
        add_target(&mut writer, |_| 0);
        writer.observations.targets[0].sparse = true;
        assert!(read_from_holes(&writer).is_empty());
    }

    #[test]
    fn a_read_too_short_for_the_sampler_is_flagged_from_the_job_totals() {
        let mut report = run(5);
        add_job(&mut report, "rr", false, io(10, 0));
        add_target(&mut report, |_| 0);
        report.observations.targets[0].sparse = true;
        report.observations.jobs[0]
            .intervals
            .iter_mut()
            .for_each(|i| *i = Default::default());
        assert_eq!(codes(&read_from_holes(&report)), ["read-from-holes"]);
    }

    #[test]
    fn silent_on_an_allocated_file() {
        let mut report = run(5);
        add_job(&mut report, "rr", false, io(10, 0));
        add_target(&mut report, |_| 0);
        assert!(read_from_holes(&report).is_empty());
    }
}
