//! `compressible-data`: a compressing device (zram) stored far less than the
//! job wrote, because the job's buffers were zeros, a repeated pattern or
//! compressible: the device did not store the data as written, so the number
//! is not what real data would get. Read from the ledger's zram row.

use super::bytes_text;
use crate::model::{Finding, RunReport, Severity};

/// Below this a job wrote too little to judge.
const MIN_JOB_BYTES: u64 = 16 << 20;
/// The device stored less than this share of the data it holds: zeros store
/// at 0 %, `buffer_compress_percentage=80` at about 20 %; the default
/// buffers (random, reused between writes) measured at 50–55 % on zram.
const STORED_SHARE_MAX: f64 = 0.25;

pub(super) fn compressible_data(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for ledger in &report.observations.ledger {
        if ledger.job_write_bytes < MIN_JOB_BYTES {
            continue;
        }
        for layer in &ledger.layers {
            let Some(zram) = layer.zram.filter(|z| z.orig_data_bytes > 0) else {
                continue;
            };
            let stored = zram.compr_data_bytes;
            if stored as f64 >= STORED_SHARE_MAX * zram.orig_data_bytes as f64 {
                continue;
            }
            let buffers = report
                .observations
                .jobs
                .iter()
                .find(|s| s.name == ledger.job)
                .map_or("unknown", |s| s.buffers.as_str());
            findings.push(Finding {
                code: "compressible-data".into(),
                severity: Severity::Warning,
                title: format!(
                    "{} stored {} for the {} of data it holds: job '{}' wrote data that compresses away, so the device did not store it as written",
                    layer.device,
                    bytes_text(stored),
                    bytes_text(zram.orig_data_bytes),
                    ledger.job
                ),
                evidence: vec![
                    format!(
                        "{} mm_stat at the job's end: {} of data, {} after compression, {} pages of one repeated value (no memory), {} pages that did not compress",
                        layer.device,
                        bytes_text(zram.orig_data_bytes),
                        bytes_text(stored),
                        zram.same_pages,
                        zram.huge_pages
                    ),
                    format!("the job's write buffers: {buffers}"),
                ],
                advice: "write data like the real workload's: refill_buffers=1 for incompressible data, or buffer_compress_percentage=N for data that compresses as yours does; never zero_buffers on a compressing device".into(),
                at_ns: Some(ledger.from_ns),
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::{JobLedger, LayerTraffic, ZramStat};

    fn zram_write(compressed: u64, zero_buffers: bool) -> RunReport {
        let mut report = run(20);
        add_job(&mut report, "w", true, io(0, 100));
        if zero_buffers {
            report.observations.jobs[0].buffers = "zero_buffers".into();
        }
        report.observations.ledger.push(JobLedger {
            job: "w".into(),
            job_write_bytes: 256 << 20,
            layers: vec![LayerTraffic {
                device: "zram0".into(),
                via: "holds /dev/zram0".into(),
                write_bytes: 256 << 20,
                zram: Some(ZramStat {
                    orig_data_bytes: 256 << 20,
                    compr_data_bytes: compressed,
                    same_pages: if compressed == 0 { 65536 } else { 0 },
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        });
        report
    }

    #[test]
    fn zeros_on_zram_are_named_with_the_buffer_option() {
        let found = compressible_data(&zram_write(0, true));
        assert_eq!(codes(&found), ["compressible-data"]);
        assert!(found[0].evidence[0].contains("65536 pages of one repeated value"));
        assert!(
            found[0].evidence[1].ends_with(": zero_buffers"),
            "{found:?}"
        );
    }

    #[test]
    fn random_data_on_zram_is_stored_as_written() {
        assert!(compressible_data(&zram_write(255 << 20, false)).is_empty());
    }
}
