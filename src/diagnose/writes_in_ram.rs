//! `writes-left-in-ram`: the write-side twin of `served-from-cache`. A
//! buffered writer "wrote" its bytes into the page cache; when the job ended
//! most of them were still dirty and the device had received little: the
//! number measured memory, not the device.

use super::bytes_text;
use crate::model::{Finding, RunReport, Severity};

/// Below this a job wrote too little for a share to mean anything.
const MIN_JOB_BYTES: u64 = 16 << 20;
/// The device received less than this share of the job's writes…
const DEVICE_SHARE_MAX: f64 = 0.5;
/// …and at least this share was still dirty at the job's end.
const DIRTY_SHARE_MIN: f64 = 0.25;

pub(super) fn writes_left_in_ram(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let mut findings = Vec::new();
    for ledger in &obs.ledger {
        let buffered = obs.jobs.iter().any(|s| s.name == ledger.job && !s.direct);
        let written = ledger.job_write_bytes;
        let (Some(device), Some(dirty)) = (ledger.top_layer(), ledger.dirty_at_end_bytes) else {
            continue;
        };
        if !buffered
            || written < MIN_JOB_BYTES
            || device.write_bytes as f64 >= DEVICE_SHARE_MAX * written as f64
            || (dirty as f64) < DIRTY_SHARE_MIN * written as f64
        {
            continue;
        }
        findings.push(Finding {
            code: "writes-left-in-ram".into(),
            severity: Severity::Warning,
            title: format!(
                "job '{}' wrote {} but {} received only {}: {} were still dirty in the page cache when it ended; this measured memory",
                ledger.job,
                bytes_text(written),
                device.device,
                bytes_text(device.write_bytes),
                bytes_text(dirty)
            ),
            evidence: vec![
                format!(
                    "{} ({}) wrote {} while the job ran",
                    device.device,
                    device.via,
                    bytes_text(device.write_bytes)
                ),
                format!(
                    "dirty or under writeback in the job's targets at its end: {}",
                    bytes_text(dirty)
                ),
            ],
            advice: "count the flush in the time with end_fsync=1 (or fsync_on_close=1, fsync=N), write more than the dirty limits hold (vm.dirty_bytes / dirty_ratio), or bypass the cache with direct=1".into(),
            at_ns: None,
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::{JobLedger, LayerTraffic};

    /// A buffered writer of 512 MiB whose device received `device_written` and left `dirty`.
    fn writer(direct: bool, device_written: u64, dirty: u64) -> RunReport {
        let mut report = run(20);
        add_job(&mut report, "w", direct, io(0, 100));
        report.observations.ledger.push(JobLedger {
            job: "w".into(),
            job_write_bytes: 512 << 20,
            dirty_at_end_bytes: Some(dirty),
            layers: vec![LayerTraffic {
                device: "loop7".into(),
                via: "holds /mnt/f".into(),
                write_bytes: device_written,
                ..Default::default()
            }],
            ..Default::default()
        });
        report
    }

    #[test]
    fn writes_that_stayed_dirty_are_named() {
        let found = writes_left_in_ram(&writer(false, 56 << 10, 500 << 20));
        assert_eq!(codes(&found), ["writes-left-in-ram"]);
        assert!(
            found[0]
                .title
                .contains("wrote 512.0 MiB but loop7 received only 56 KiB"),
            "{:?}",
            found[0]
        );
    }

    #[test]
    fn silent_when_the_device_got_the_bytes_or_the_job_was_direct() {
        assert!(writes_left_in_ram(&writer(false, 500 << 20, 12 << 20)).is_empty());
        assert!(writes_left_in_ram(&writer(true, 56 << 10, 500 << 20)).is_empty());
        // Written back but not yet counted: little dirty left.
        assert!(writes_left_in_ram(&writer(false, 56 << 10, 1 << 20)).is_empty());
    }
}
