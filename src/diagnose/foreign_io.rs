//! `foreign-io`: the device holding a job's targets moved more than iolens
//! caused there (the ledger: the device's bytes in the job's window minus
//! what every iolens thread made storage read and write). Every read below
//! the page cache is accounted to the thread that submitted it, so reads
//! beyond iolens' are somebody else's; writes beyond iolens' while iolens
//! wrote are its own filesystem work (journal, metadata: `job-amplification`)
//! unless another writer was seen. The processes seen doing that much I/O
//! are named; when none was, the finding says so instead of guessing.

use super::bytes_text;
use crate::model::{Finding, JobLedger, ProcessIo, RunReport, Severity};

/// The traffic iolens did not cause must reach this share of the device's
/// (iolens' own is accounted exactly, so a quiet device shows next to none)…
const FOREIGN_SHARE_MIN: f64 = 0.1;
/// …and this much, above a quiet system's own logging and metadata.
const MIN_FOREIGN_BYTES: u64 = 8 << 20;
/// The other processes seen must account for this share of the gap to be named as its cause.
const EXPLAINED_SHARE_MIN: f64 = 0.25;
/// Processes named in the evidence.
const NAMED: usize = 3;

/// Bytes the job's device moved beyond what iolens caused in its window; None
/// where the ledger lacks what iolens caused or the device.
pub(super) fn beyond_iolens(ledger: &JobLedger) -> Option<(u64, u64)> {
    let device = ledger.top_layer()?;
    let caused = ledger.iolens_caused?;
    Some((
        device.read_bytes.saturating_sub(caused.read_bytes),
        device.write_bytes.saturating_sub(caused.write_bytes),
    ))
}

fn moved(p: &ProcessIo) -> u64 {
    p.read_bytes + p.write_bytes
}

/// Other processes were seen writing at least a quarter of `beyond` bytes.
pub(super) fn others_wrote(report: &RunReport, beyond: u64) -> bool {
    let wrote: u64 = report
        .observations
        .other_processes
        .iter()
        .map(|p| p.write_bytes)
        .sum();
    wrote as f64 >= EXPLAINED_SHARE_MIN * beyond as f64
}

pub(super) fn foreign_io(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let others: u64 = obs.other_processes.iter().map(moved).sum();
    let mut findings: Vec<Finding> = Vec::new();
    let mut named_devices: Vec<&str> = Vec::new();
    for ledger in &obs.ledger {
        let (Some(device), Some((read, written))) = (ledger.top_layer(), beyond_iolens(ledger))
        else {
            continue;
        };
        let caused = ledger.iolens_caused.unwrap_or_default();
        let foreign_writes = if caused.write_bytes > 0 && !others_wrote(report, written) {
            0
        } else {
            written
        };
        let foreign = read + foreign_writes;
        if named_devices.contains(&device.device.as_str())
            || foreign < MIN_FOREIGN_BYTES
            || (foreign as f64) < FOREIGN_SHARE_MIN * device.moved_bytes() as f64
        {
            continue;
        }
        let explained = others as f64 >= EXPLAINED_SHARE_MIN * foreign as f64;
        named_devices.push(&device.device);
        // Their I/O is on any device: those whose reads and writes match the
        // gap's first (a writer for written bytes, a reader for read ones).
        let fits = |p: &ProcessIo| p.read_bytes.min(read) + p.write_bytes.min(foreign_writes);
        let mut suspects: Vec<&ProcessIo> = obs.other_processes.iter().collect();
        suspects.sort_by_key(|p| std::cmp::Reverse((fits(p), moved(p))));
        let explained = explained && suspects.first().is_some_and(|p| fits(p) > 0);
        let mut evidence = vec![format!(
            "{} ({}) read {} and wrote {} while job '{}' ran; iolens made it read {} and write {}",
            device.device,
            device.via,
            bytes_text(device.read_bytes),
            bytes_text(device.write_bytes),
            ledger.job,
            bytes_text(caused.read_bytes),
            bytes_text(caused.write_bytes)
        )];
        evidence.extend(suspects.iter().take(NAMED).map(|p| {
            format!(
                "{} (pid {}{}) read {}, wrote {} during the run (its I/O on any device)",
                if p.comm.is_empty() { "?" } else { &p.comm },
                p.pid,
                if p.cmdline.is_empty() {
                    String::new()
                } else {
                    format!(": {}", p.cmdline)
                },
                bytes_text(p.read_bytes),
                bytes_text(p.write_bytes)
            )
        }));
        let who = match suspects.first().filter(|_| explained) {
            Some(busiest) => format!(
                "other processes used it, the busiest {} (pid {})",
                busiest.comm, busiest.pid
            ),
            None => {
                evidence.push("no other process was seen moving that much in the scans every two seconds: a short-lived one between scans, a kernel thread working for another, or writeback of data dirtied before the run".into());
                "iolens did not cause it and no other process was seen doing that much".into()
            }
        };
        findings.push(Finding {
            code: "foreign-io".into(),
            severity: Severity::Warning,
            title: format!(
                "{} of the {} {} moved while job '{}' ran was not iolens' ({:.0}%): {who}",
                bytes_text(foreign),
                bytes_text(device.moved_bytes()),
                device.device,
                ledger.job,
                foreign as f64 * 100.0 / device.moved_bytes().max(1) as f64,
            ),
            evidence,
            advice: "stop the other users of the device or benchmark one nothing else uses; repeat the run to see how much they move the result".into(),
            at_ns: Some(ledger.from_ns),
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::{LayerTraffic, TaskIo};

    /// A direct reader that caused `caused_read`; its device read `device_read`
    /// and wrote `device_written`; `others` the other processes seen.
    fn reader(device_read: u64, device_written: u64, others: Vec<ProcessIo>) -> RunReport {
        let mut report = run(20);
        add_job(&mut report, "rr", true, io(1000, 0));
        let caused = TaskIo {
            read_bytes: 100 << 20,
            ..Default::default()
        };
        report.observations.ledger.push(JobLedger {
            job: "rr".into(),
            job_read_bytes: 100 << 20,
            caused: Some(caused),
            iolens_caused: Some(caused),
            layers: vec![LayerTraffic {
                device: "loop7".into(),
                via: "holds /mnt/f".into(),
                read_bytes: device_read,
                write_bytes: device_written,
                ..Default::default()
            }],
            ..Default::default()
        });
        report.observations.other_processes = others;
        report
    }

    fn dd(write_bytes: u64) -> ProcessIo {
        ProcessIo {
            pid: 4242,
            comm: "dd".into(),
            cmdline: "dd if=/dev/zero of=/mnt/g oflag=direct".into(),
            write_bytes,
            ..Default::default()
        }
    }

    #[test]
    fn a_neighbour_with_a_quarter_of_the_traffic_is_named() {
        let found = foreign_io(&reader(100 << 20, 34 << 20, vec![dd(34 << 20)]));
        assert_eq!(codes(&found), ["foreign-io"]);
        assert!(
            found[0].title.contains("the busiest dd (pid 4242)"),
            "{:?}",
            found[0]
        );
        assert!(
            found[0].evidence[1].contains("oflag=direct"),
            "{:?}",
            found[0]
        );
    }

    #[test]
    fn a_gap_nobody_was_seen_causing_is_not_blamed_on_a_process() {
        for others in [vec![], vec![dd(1 << 20)]] {
            let found = foreign_io(&reader(100 << 20, 64 << 20, others));
            assert_eq!(codes(&found), ["foreign-io"]);
            assert!(
                found[0]
                    .title
                    .ends_with("no other process was seen doing that much"),
                "{found:?}"
            );
        }
    }

    #[test]
    fn writes_beyond_a_writing_run_are_its_own_unless_another_writer_was_seen() {
        let mut report = reader(100 << 20, 64 << 20, vec![]);
        let ledger = &mut report.observations.ledger[0];
        let wrote = Some(TaskIo {
            read_bytes: 100 << 20,
            write_bytes: 16 << 20,
            ..Default::default()
        });
        (ledger.caused, ledger.iolens_caused) = (wrote, wrote);
        assert!(foreign_io(&report).is_empty(), "journal and metadata");
        report.observations.other_processes = vec![dd(48 << 20)];
        assert_eq!(codes(&foreign_io(&report)), ["foreign-io"]);
    }

    #[test]
    fn the_process_whose_io_matches_the_gap_is_named_first() {
        let tar = ProcessIo {
            pid: 7,
            comm: "tar".into(),
            read_bytes: 512 << 20,
            ..Default::default()
        };
        let found = foreign_io(&reader(100 << 20, 34 << 20, vec![tar, dd(34 << 20)]));
        assert!(
            found[0].title.contains("the busiest dd (pid 4242)"),
            "{found:?}"
        );
    }

    #[test]
    fn silent_when_the_device_did_what_iolens_caused() {
        assert!(foreign_io(&reader(101 << 20, 2 << 20, vec![dd(64 << 20)])).is_empty());
    }
}
