//! `job-amplification`: storage traffic the job itself caused beyond its own
//! bytes, read from the ledger and named as the job's: reads below the page
//! cache beyond what it read (readahead, mmap read-around, read-modify-write
//! of writes that cover part of a page), and device writes beyond what
//! iolens submitted when no other process was seen writing (journal and
//! metadata the filesystem writes on the job's behalf).

use super::foreign_io::{beyond_iolens, others_wrote};
use super::{bytes_text, stack_of};
use crate::model::{Finding, JobLedger, Layer, RunReport, Severity};

/// The extra must reach this much…
const MIN_EXTRA_BYTES: u64 = 1 << 20;
/// …and this share of the job's own bytes: readahead past the end of a
/// sequential reader or a few metadata blocks stay well below it.
const EXTRA_SHARE_MIN: f64 = 0.5;
/// Device writes beyond iolens' need more: writeback of data dirtied before the window moves them.
const MIN_EXTRA_DEVICE_BYTES: u64 = 8 << 20;

pub(super) fn job_amplification(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for ledger in &report.observations.ledger {
        findings.extend(extra_reads(report, ledger));
        findings.extend(extra_device_writes(report, ledger));
    }
    findings
}

fn beyond(extra: u64, of: u64) -> bool {
    extra >= MIN_EXTRA_BYTES && extra as f64 >= EXTRA_SHARE_MIN * of as f64
}

/// Option `key` of `job` as given: its own value, else the global options'.
fn option<'a>(report: &'a RunReport, job: &str, key: &str) -> Option<&'a str> {
    let own = report.jobs.iter().filter(|j| j.name == job);
    report
        .global_options
        .iter()
        .chain(own.flat_map(|j| &j.options))
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn extra_reads(report: &RunReport, ledger: &JobLedger) -> Option<Finding> {
    let caused = ledger.caused?;
    let extra = caused.read_bytes.saturating_sub(ledger.job_read_bytes);
    if !beyond(extra, ledger.job_bytes()) {
        return None;
    }
    let (why, advice) = if ledger.job_read_bytes == 0 {
        (
            "read-modify-write: writes that cover only part of a page make the kernel read the rest of it first",
            "write whole, page-aligned blocks (bs a multiple of the page size), lay the file out and keep it cached, or use direct=1 with the device's block size",
        )
    } else if option(report, &ledger.job, "ioengine") == Some("mmap") {
        (
            "page faults read around each page touched (mmap read-around)",
            "give random mmap jobs fadvise_hint=1 (fio's default: random access advice), or use a read engine",
        )
    } else {
        (
            "readahead read ahead of the job's reads, and the job used little of it",
            "use direct=1, or fadvise_hint=1 / fadvise_hint=random for random reads so the kernel stops reading ahead",
        )
    };
    Some(Finding {
        code: "job-amplification".into(),
        severity: Severity::Warning,
        title: format!(
            "job '{}' made storage read {} beyond its own {}: {why}",
            ledger.job,
            bytes_text(extra),
            bytes_text(ledger.job_bytes())
        ),
        evidence: vec![format!(
            "the job read {} and wrote {}; its threads made storage read {} and write {} (per-task io accounting)",
            bytes_text(ledger.job_read_bytes),
            bytes_text(ledger.job_write_bytes),
            bytes_text(caused.read_bytes),
            bytes_text(caused.write_bytes)
        )],
        advice: advice.into(),
        at_ns: Some(ledger.from_ns),
    })
}

/// "ext4 mounted with data=journal": the job's filesystem options that change the data path.
fn data_path_note(report: &RunReport, job: &str) -> Option<String> {
    let series = report.observations.jobs.iter().find(|s| s.name == job)?;
    series
        .targets
        .iter()
        .filter_map(|path| stack_of(report, path))
        .flat_map(|stack| &stack.layers)
        .find_map(|l| match &l.layer {
            Layer::Filesystem {
                fs_type,
                data_path_options,
                ..
            } if !data_path_options.is_empty() => Some(format!(
                "{fs_type} mounted with {}",
                data_path_options.join(",")
            )),
            _ => None,
        })
}

fn extra_device_writes(report: &RunReport, ledger: &JobLedger) -> Option<Finding> {
    let (_, extra) = beyond_iolens(ledger)?;
    let device = ledger.top_layer()?;
    // Another writer explains it: foreign-io names that.
    if ledger.job_write_bytes == 0
        || extra < MIN_EXTRA_DEVICE_BYTES
        || (extra as f64) < EXTRA_SHARE_MIN * ledger.job_write_bytes as f64
        || others_wrote(report, extra)
    {
        return None;
    }
    let journal = data_path_note(report, &ledger.job).map_or(String::new(), |n| format!(" ({n})"));
    Some(Finding {
        code: "job-amplification".into(),
        severity: Severity::Warning,
        title: format!(
            "{} wrote {} beyond the {} iolens submitted while job '{}' ran, and no other process was seen writing: filesystem work on the job's behalf (journal, metadata){journal}",
            device.device,
            bytes_text(extra),
            bytes_text(ledger.iolens_caused.map_or(0, |c| c.write_bytes)),
            ledger.job
        ),
        evidence: vec![format!(
            "{} ({}) wrote {} in {} flushes while the job wrote {}",
            device.device,
            device.via,
            bytes_text(device.write_bytes),
            device.flush_ios,
            bytes_text(ledger.job_write_bytes)
        )],
        advice: "count it as part of the cost of these writes; fewer syncs (fsync=N larger) or a filesystem without data journalling write less".into(),
        at_ns: Some(ledger.from_ns),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::{LayerTraffic, ProcessIo, TargetStack, TaskIo};

    /// A job that read `read` and wrote `written`, caused `caused`; its device wrote `device_written`.
    fn job(read: u64, written: u64, caused: TaskIo, device_written: u64) -> RunReport {
        let mut report = run(20);
        add_job(&mut report, "j", false, io(1, 1));
        report.observations.ledger.push(JobLedger {
            job: "j".into(),
            job_read_bytes: read,
            job_write_bytes: written,
            caused: Some(caused),
            iolens_caused: Some(caused),
            layers: vec![LayerTraffic {
                device: "loop7".into(),
                via: format!("holds {TARGET}"),
                read_bytes: caused.read_bytes,
                write_bytes: device_written,
                flush_ios: 40,
                ..Default::default()
            }],
            ..Default::default()
        });
        report
    }

    fn io_of(read_bytes: u64, write_bytes: u64) -> TaskIo {
        TaskIo {
            read_bytes,
            write_bytes,
            ..Default::default()
        }
    }

    #[test]
    fn partial_page_writes_that_read_are_read_modify_write() {
        let found = job_amplification(&job(0, 1536 << 10, io_of(3 << 20, 1536 << 10), 0));
        assert_eq!(codes(&found), ["job-amplification"]);
        assert!(found[0].title.contains("read-modify-write"), "{found:?}");
    }

    #[test]
    fn random_mmap_reads_that_read_around_are_named() {
        let mut report = job(4 << 20, 0, io_of(54 << 20, 0), 0);
        report.jobs[0]
            .options
            .push(("ioengine".into(), "mmap".into()));
        let found = job_amplification(&report);
        assert!(found[0].title.contains("read-around"), "{found:?}");
    }

    #[test]
    fn journal_writes_are_the_jobs_own_unless_another_writer_was_seen() {
        let mut report = job(0, 32 << 20, io_of(0, 32 << 20), 96 << 20);
        report.environment.stacks = vec![TargetStack::of(
            TARGET,
            vec![(
                0,
                Layer::filesystem("ext4", "/mnt", "/dev/loop7", &["data=journal"]),
            )],
        )];
        let found = job_amplification(&report);
        assert_eq!(codes(&found), ["job-amplification"]);
        assert!(
            found[0].title.contains("(ext4 mounted with data=journal)"),
            "{found:?}"
        );
        report.observations.other_processes = vec![ProcessIo {
            pid: 9,
            comm: "dd".into(),
            write_bytes: 64 << 20,
            ..Default::default()
        }];
        assert!(job_amplification(&report).is_empty());
    }

    #[test]
    fn silent_when_the_job_caused_what_it_asked_for() {
        let exact = job(64 << 20, 64 << 20, io_of(64 << 20, 64 << 20), 65 << 20);
        assert!(job_amplification(&exact).is_empty());
        // A sequential reader's readahead past its end is noise.
        let ahead = job(64 << 20, 0, io_of(66 << 20, 0), 0);
        assert!(job_amplification(&ahead).is_empty());
    }
}
