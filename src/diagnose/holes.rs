//! `read-from-holes`: a job read ranges that hold no stored data, wherever
//! the hole is: a sparse file, preallocated extents never written, or a loop
//! device whose backing file has holes. Those reads return zeros from memory
//! without touching the device, so they inflate IOPS.

use crate::model::{Finding, RunReport, Severity, TargetObservation};

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
            .filter(|t| series.targets.contains(&t.path))
        {
            let Some((what, evidence, advice)) = hole_of(target) else {
                continue;
            };
            findings.push(Finding {
                code: "read-from-holes".into(),
                severity: Severity::Warning,
                title: format!(
                    "job '{}' read {}, {what}: those reads never reached the device",
                    series.name, target.path
                ),
                evidence: vec![evidence],
                advice: advice.into(),
                at_ns: None,
            });
        }
    }
    findings
}

/// (what the target is, the evidence, the fix) when reads of it can return data never stored.
fn hole_of(target: &TargetObservation) -> Option<(String, String, &'static str)> {
    const WRITE_FIRST: &str = "write the file fully first (or delete it so iolens lays it out with data) before measuring reads";
    if target.sparse {
        return Some((
            "a file with holes".into(),
            format!(
                "{} had unallocated ranges when the run started",
                target.path
            ),
            WRITE_FIRST,
        ));
    }
    if target.unwritten {
        return Some((
            "a file with preallocated extents never written".into(),
            format!(
                "{} had every block allocated, yet some were never written (unwritten extents, as fallocate leaves them): the filesystem returns zeros for them without reading the device",
                target.path
            ),
            WRITE_FIRST,
        ));
    }
    let backing = target.backing_holes.as_ref()?;
    Some((
        format!("a loop device over a file with holes ({backing})"),
        format!("the backing file {backing} had unallocated ranges when the run started: the loop device reads zeros for them without reading the disk below"),
        "write the whole device (or its backing file) first, or back the loop device with a fully allocated file",
    ))
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
    fn unwritten_extents_and_a_loops_backing_holes_are_holes_too() {
        let mut report = run(5);
        add_job(&mut report, "rr", true, io(10, 0));
        add_target(&mut report, |_| 0);
        report.observations.targets[0].unwritten = true;
        let found = read_from_holes(&report);
        assert!(found[0].title.contains("never written"), "{found:?}");
        report.observations.targets[0].unwritten = false;
        report.observations.targets[0].backing_holes = Some("/data/img".into());
        let found = read_from_holes(&report);
        assert!(found[0].evidence[0].contains("/data/img"), "{found:?}");
    }

    #[test]
    fn silent_on_an_allocated_file() {
        let mut report = run(5);
        add_job(&mut report, "rr", false, io(10, 0));
        add_target(&mut report, |_| 0);
        assert!(read_from_holes(&report).is_empty());
    }
}
