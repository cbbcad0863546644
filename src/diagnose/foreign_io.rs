//! `foreign-io`: a device behind the targets moved much more data during the
//! run than all of iolens' jobs together, so other processes used it too.

use super::bytes_text;
use crate::model::{Finding, RunReport, Severity};

/// The device's bytes must exceed the jobs' by this factor…
const FACTOR: f64 = 1.5;
/// …plus this much, which covers filesystem metadata and a quiet system's own logging.
const SLACK_BYTES: u64 = 16 << 20;

pub fn foreign_io(report: &RunReport) -> Vec<Finding> {
    let measured: u64 = report
        .jobs
        .iter()
        .flat_map(|j| &j.dirs)
        .map(|d| d.io_bytes)
        .sum();
    // The live series also count ramp_time I/O, which the device saw but the
    // measured totals leave out; without it every ramped run would look foreign.
    let seen_live: u64 = report
        .observations
        .jobs
        .iter()
        .flat_map(|j| &j.intervals)
        .map(|i| i.bytes.iter().sum::<u64>())
        .sum();
    let issued = measured.max(seen_live);
    let mut findings = Vec::new();
    for device in &report.observations.devices {
        let (Some(first), Some(last)) =
            (device.counter_series.first(), device.counter_series.last())
        else {
            continue;
        };
        let sectors = |c: &crate::model::DeviceCounters| c.read_sectors + c.write_sectors;
        let moved = sectors(last).saturating_sub(sectors(first)) * 512;
        if (moved as f64) <= FACTOR * issued as f64 + SLACK_BYTES as f64 {
            continue;
        }
        findings.push(Finding {
            code: "foreign-io".into(),
            severity: Severity::Warning,
            title: format!(
                "{} moved {} during the run, iolens only {}: other processes used the device",
                device.name,
                bytes_text(moved),
                bytes_text(issued)
            ),
            evidence: vec![format!(
                "{} ({}): read {}, wrote {}",
                device.name,
                device.via,
                bytes_text(last.read_sectors.saturating_sub(first.read_sectors) * 512),
                bytes_text(last.write_sectors.saturating_sub(first.write_sectors) * 512)
            )],
            advice: "stop the other users of the device (iotop shows them) or benchmark a device nothing else uses; repeat the run to see how much it varies".into(),
            at_ns: None,
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::DeviceCounters;

    #[test]
    fn a_device_busier_than_the_job_is_flagged() {
        let mut report = run(20);
        add_job(&mut report, "rr", true, io(1000, 0));
        add_device(&mut report, |i| DeviceCounters {
            read_sectors: i as u64 * 8000,
            write_sectors: i as u64 * 40_000,
            ..Default::default()
        });
        let found = foreign_io(&report);
        assert_eq!(codes(&found), ["foreign-io"]);
        assert!(found[0].evidence[0].contains("wrote"), "{:?}", found[0]);
    }

    #[test]
    fn ramp_io_seen_by_the_live_counters_is_not_foreign() {
        let mut report = run(20);
        add_job(&mut report, "rr", true, io(1000, 0));
        // Measured totals exclude a ramp that moved as much again as the job.
        for dir in &mut report.jobs[0].dirs {
            dir.io_bytes /= 2;
        }
        let live: u64 = report.observations.jobs[0]
            .intervals
            .iter()
            .map(|i| i.bytes[0])
            .sum();
        add_device(&mut report, |i| DeviceCounters {
            read_sectors: i as u64 * (live / 19 / 512),
            ..Default::default()
        });
        assert!(foreign_io(&report).is_empty());
    }

    #[test]
    fn silent_when_the_device_saw_about_what_the_job_did() {
        let mut report = run(20);
        add_job(&mut report, "rr", true, io(1000, 0));
        add_device(&mut report, |i| DeviceCounters {
            read_sectors: i as u64 * 8100,
            write_sectors: i as u64 * 16,
            ..Default::default()
        });
        assert!(foreign_io(&report).is_empty());
    }
}
