//! `read-from-holes`: a job read ranges that hold no stored data, wherever
//! the hole is: a sparse file, preallocated extents never written, or a loop
//! device whose backing file has holes. Those reads return zeros from memory
//! without touching the device, so they inflate IOPS.

use super::bytes_text;
use crate::model::{Finding, RunReport, Severity, TargetObservation};

pub(super) fn read_from_holes(report: &RunReport) -> Vec<Finding> {
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
        findings.extend(never_written_zram(report, &series.name));
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

/// A zram device that held data for less than this share of the range a job read…
const ZRAM_STORED_SHARE_MIN: f64 = 0.5;

/// …when the job ended: reads of its pages never written return zeros without
/// touching its memory (a thin device's unwritten or discarded blocks alike).
fn never_written_zram(report: &RunReport, job: &str) -> Vec<Finding> {
    let obs = &report.observations;
    let Some(ledger) = obs.ledger.iter().find(|l| l.job == job) else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    for layer in &ledger.layers {
        let Some(zram) = layer.zram else { continue };
        let Some(target) = obs.targets.iter().find(|t| {
            t.is_block_device && t.devices.first() == Some(&layer.device) && t.used_bytes > 0
        }) else {
            continue;
        };
        if zram.orig_data_bytes as f64 >= ZRAM_STORED_SHARE_MIN * target.used_bytes as f64 {
            continue;
        }
        findings.push(Finding {
            code: "read-from-holes".into(),
            severity: Severity::Warning,
            title: format!(
                "job '{job}' read {}, where {} held data for only {} of the {} it used: reads of pages never written return zeros without touching the device's memory",
                target.path,
                layer.device,
                bytes_text(zram.orig_data_bytes),
                bytes_text(target.used_bytes)
            ),
            evidence: vec![format!(
                "{} mm_stat when the job ended: {} of data stored ({} pages of one repeated value)",
                layer.device,
                bytes_text(zram.orig_data_bytes),
                zram.same_pages
            )],
            advice: "write the whole range first (a write pass over it), then measure reads".into(),
            at_ns: Some(ledger.from_ns),
        });
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
    fn reads_of_a_zram_device_that_holds_little_are_reads_of_holes() {
        let mut report = run(5);
        add_job(&mut report, "rr", true, io(10, 0));
        add_target(&mut report, |_| 0);
        let target = &mut report.observations.targets[0];
        target.used_bytes = 256 << 20;
        target.devices = vec!["zram0".into()];
        let stored = |orig_data_bytes| crate::model::JobLedger {
            job: "rr".into(),
            layers: vec![crate::model::LayerTraffic {
                device: "zram0".into(),
                zram: Some(crate::model::ZramStat {
                    orig_data_bytes,
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        report.observations.ledger = vec![stored(0)];
        let found = read_from_holes(&report);
        assert_eq!(codes(&found), ["read-from-holes"]);
        assert!(found[0]
            .title
            .contains("held data for only 0 KiB of the 256.0 MiB"));
        report.observations.ledger = vec![stored(256 << 20)];
        assert!(read_from_holes(&report).is_empty());
    }

    #[test]
    fn silent_on_an_allocated_file() {
        let mut report = run(5);
        add_job(&mut report, "rr", false, io(10, 0));
        add_target(&mut report, |_| 0);
        assert!(read_from_holes(&report).is_empty());
    }
}
