//! What reached the device compared with what the job moved:
//! `served-from-cache` (seed 003: buffered reads answered by the page cache;
//! a verify read-back is a check, not a read the job measures, and is left out)
//! and `direct-io-not-honoured` (direct=1, yet the device saw far less).

use super::bytes_text;
use crate::model::{DeviceCounters, Finding, JobSeries, Layer, RunReport, Severity};

/// Below this a job moved too little for a share to mean anything.
const MIN_JOB_BYTES: u64 = 4 << 20;
/// Share of reads served from cache worth a warning; run-to-run noise and
/// readahead move it by a few points, a warm cache by 50–99 (lab seed 003).
const CACHE_SHARE_WARNING: f64 = 0.25;
/// A direct job whose device saw less than this share of its bytes.
const DIRECT_SHARE_MIN: f64 = 0.5;

/// Bytes a direction of I/O moved on the busiest device between samples
/// `from` and `to`; None without device series.
fn device_bytes(
    report: &RunReport,
    from: usize,
    to: usize,
    sectors: fn(&DeviceCounters) -> u64,
) -> Option<u64> {
    report
        .observations
        .devices
        .iter()
        .filter_map(|d| {
            let (a, b) = (d.counter_series.get(from)?, d.counter_series.get(to)?);
            Some(sectors(b).saturating_sub(sectors(a)) * 512)
        })
        .max()
}

/// Bytes all jobs moved in direction `dir` during intervals `from+1..=to`
/// (every job: they share the devices).
fn job_bytes(report: &RunReport, from: usize, to: usize, dir: usize) -> u64 {
    report
        .observations
        .jobs
        .iter()
        .flat_map(|s| s.intervals.get(from + 1..=to).unwrap_or(&[]))
        .map(|i| i.bytes[dir])
        .sum()
}

/// Bytes the verify read-backs of the jobs active during `from..=to` read: a
/// job's writes read back to check them (from the cache where they still sat,
/// as fio's read-back reads them), not reads the job measures.
fn read_back_bytes(report: &RunReport, from: usize, to: usize) -> u64 {
    let overlaps = |s: &&JobSeries| s.active_span().is_some_and(|(a, b)| a <= to && b >= from);
    report
        .observations
        .jobs
        .iter()
        .filter(overlaps)
        .flat_map(|s| report.verify.iter().filter(move |v| v.job == s.name))
        .map(|v| v.read_back_bytes)
        .sum()
}

fn span(report: &RunReport, series: &JobSeries) -> Option<(usize, usize)> {
    series
        .measured_span(&report.observations.t_ns)
        .filter(|(from, to)| to > from)
}

pub(super) fn served_from_cache(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for series in report.observations.jobs.iter().filter(|s| !s.direct) {
        let Some((from, to)) = span(report, series) else {
            continue;
        };
        let read = job_bytes(report, from, to, 0).saturating_sub(read_back_bytes(report, from, to));
        if read < MIN_JOB_BYTES {
            continue;
        }
        let device = device_bytes(report, from, to, |c| c.read_sectors);
        let cached = cached_at_start(report, series).min(read);
        // Two witnesses: the device read less than the job, or the target's
        // cache already held what the job read. The device's count also holds
        // other processes' reads of it (a busy machine can read more than the
        // job did), so a warm cache is seen even when the device is busy.
        let device_share = device.map(|d| 1.0 - d as f64 / read as f64);
        let cache_share = cached as f64 / read as f64;
        if device.is_none() && cached == 0 {
            continue;
        }
        let share = device_share.unwrap_or(0.0).max(cache_share);
        if share < CACHE_SHARE_WARNING {
            continue;
        }
        let mut evidence = Vec::new();
        if let Some(device) = device {
            evidence.push(format!(
                "the job read {} while the device read {}",
                bytes_text(read),
                bytes_text(device)
            ));
        }
        if cached > 0 {
            let kept = if series.invalidate {
                ""
            } else {
                " (invalidate=0 kept it)"
            };
            evidence.push(format!(
                "the page cache held {} of the job's targets when it started{kept}",
                bytes_text(cached)
            ));
        }
        findings.push(Finding {
            code: "served-from-cache".into(),
            severity: Severity::Warning,
            title: format!(
                "{:.0}% of the reads of job '{}' never reached the device: this measured the page cache",
                share * 100.0,
                series.name
            ),
            evidence,
            advice: cache_advice(series),
            at_ns: None,
        });
    }
    findings
}

/// What to change to measure the device, never an option the job already set:
/// a job that kept the cache it found is told to drop it; one that dropped it
/// (`invalidate=1`, also before each pass) read again what it had cached itself.
fn cache_advice(series: &JobSeries) -> String {
    if series.invalidate {
        "the page cache was dropped before the job and before each of its passes, so the job read pages it had cached itself (random reads with norandommap, a file smaller than memory read again, or another process reading it): to measure the device use direct=1, or a file larger than memory".into()
    } else {
        "the job kept the pages it found in the page cache: to measure the device run with invalidate=1 (the default) or direct=1; this run measured cache hits".into()
    }
}

/// Bytes of the job's targets that were in the page cache when it started
/// and stayed there (its cache guards found them and did not drop them).
fn cached_at_start(report: &RunReport, series: &JobSeries) -> u64 {
    let page = report.observations.page_size_bytes.max(1);
    report
        .observations
        .cache_guards
        .iter()
        .filter(|g| g.job == series.name && series.targets.contains(&g.path))
        .filter_map(|g| g.pages_after)
        .sum::<u64>()
        * page
}

pub(super) fn direct_io_not_honoured(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for series in report.observations.jobs.iter().filter(|s| s.direct) {
        let Some((from, to)) = span(report, series) else {
            continue;
        };
        // Reads of holes never reach the device by design (read-from-holes
        // names them): then only the writes can show a cache in the way.
        let reads_holes = report.observations.targets.iter().any(|t| {
            (t.sparse || t.unwritten || t.backing_holes.is_some())
                && series.targets.contains(&t.path)
        });
        let (moved, device) = if reads_holes {
            (
                job_bytes(report, from, to, 1),
                device_bytes(report, from, to, |c| c.write_sectors),
            )
        } else {
            (
                job_bytes(report, from, to, 0) + job_bytes(report, from, to, 1),
                device_bytes(report, from, to, |c| c.read_sectors + c.write_sectors),
            )
        };
        let Some(device) = device else {
            continue;
        };
        if moved < MIN_JOB_BYTES || device as f64 >= DIRECT_SHARE_MIN * moved as f64 {
            continue;
        }
        findings.push(Finding {
            code: "direct-io-not-honoured".into(),
            severity: Severity::Warning,
            title: format!(
                "direct-I/O job '{}' moved {} but the device saw only {}",
                series.name,
                bytes_text(moved),
                bytes_text(device)
            ),
            evidence: std::iter::once(format!(
                "{:.0}% of the job's bytes reached the device",
                device as f64 / moved as f64 * 100.0
            ))
            .chain(caching_layers(report, series))
            .collect(),
            advice: "the filesystem or a layer below (loop device without direct-io, FUSE, network fs) caches despite O_DIRECT; benchmark the device itself, or a filesystem that honours direct I/O".into(),
            at_ns: None,
        });
    }
    findings
}

/// The layers of the job's stacks that can serve O_DIRECT through a cache:
/// data journalling, compression (btrfs falls back to buffered I/O for
/// compressed extents), a FUSE or network filesystem, a loop device without
/// direct I/O.
fn caching_layers(report: &RunReport, series: &JobSeries) -> Vec<String> {
    let mut found = Vec::new();
    for stack in series
        .targets
        .iter()
        .filter_map(|path| super::stack_of(report, path))
    {
        for layer in &stack.layers {
            let said = match &layer.layer {
                Layer::Filesystem {
                    fs_type,
                    data_path_options,
                    ..
                } => data_path_options
                    .iter()
                    .find(|o| *o == "data=journal" || o.starts_with("compress"))
                    .map(|o| format!("{fs_type} is mounted with {o}: its data goes through the page cache or is rewritten before it reaches the device")),
                Layer::Fuse { fs_type, .. } | Layer::Network { fs_type, .. } => Some(format!(
                    "{fs_type} decides itself whether O_DIRECT bypasses its caches"
                )),
                Layer::Loop {
                    name,
                    direct_io: false,
                    ..
                } => Some(format!("{name} has no direct I/O: it uses its backing file's page cache")),
                _ => None,
            };
            found.extend(said.map(|s| format!("in the stack of {}: {s}", stack.target)));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::CacheGuard;

    /// A device that reads `read_sectors` and writes `write_sectors` per interval.
    fn device(report: &mut RunReport, read_sectors: u64, write_sectors: u64) {
        add_device(report, |i| DeviceCounters {
            read_sectors: i as u64 * read_sectors,
            write_sectors: i as u64 * write_sectors,
            ..Default::default()
        });
    }

    #[test]
    fn a_warm_cache_is_named() {
        let mut report = run(20);
        add_job(&mut report, "rr", false, io(1000, 0));
        // 1000 × 4 KiB = 8000 sectors per interval; the device read 3 %.
        device(&mut report, 240, 0);
        let found = served_from_cache(&report);
        assert_eq!(codes(&found), ["served-from-cache"]);
        assert!(
            found[0].title.starts_with("97% of the reads"),
            "{:?}",
            found[0]
        );
    }

    #[test]
    fn the_ramps_reads_are_not_the_jobs() {
        let mut report = run(20);
        add_job(&mut report, "rr", false, io(1000, 0));
        // The first 5 s read from the device (a cold cache warming), the rest from the cache.
        add_device(&mut report, |i| DeviceCounters {
            read_sectors: i.min(5) as u64 * 8000,
            ..Default::default()
        });
        ramp_until(&mut report, 0, 5);
        let found = served_from_cache(&report);
        assert_eq!(codes(&found), ["served-from-cache"]);
        // 14 measured intervals × 1000 × 4 KiB, not the 19 the sampler saw.
        assert_eq!(
            found[0].evidence[0],
            format!(
                "the job read {} while the device read 0 KiB",
                bytes_text(14 * 1000 * 4096)
            )
        );
    }

    /// The guard of job `job` on the fixture's target found `pages` cached and kept them.
    fn cached_before(report: &mut RunReport, job: &str, pages: u64) {
        report.observations.cache_guards.push(CacheGuard {
            job: job.into(),
            path: TARGET.into(),
            pages_before: Some(pages),
            pages_after: Some(pages),
            ..Default::default()
        });
    }

    #[test]
    fn a_warm_cache_is_named_even_when_others_keep_the_device_busy() {
        let mut report = run(20);
        add_job(&mut report, "rr", false, io(1000, 0));
        report.observations.jobs[0].invalidate = false;
        // Other processes read twice what the job read from the same device.
        device(&mut report, 16000, 0);
        // 19 intervals × 1000 × 4 KiB, all cached before the job started.
        cached_before(&mut report, "rr", 19_000);
        let found = served_from_cache(&report);
        assert_eq!(codes(&found), ["served-from-cache"]);
        assert!(
            found[0].title.starts_with("100% of the reads")
                && found[0].evidence[1].contains("invalidate=0 kept it"),
            "expected the cache witness to carry the finding, saw {:?}",
            found[0]
        );

        // The same busy device after a guard that dropped the cache: nothing to say.
        let mut cold = run(20);
        add_job(&mut cold, "rr", false, io(1000, 0));
        device(&mut cold, 16000, 0);
        cached_before(&mut cold, "rr", 0);
        assert!(served_from_cache(&cold).is_empty());
    }

    #[test]
    fn a_verify_read_back_from_the_cache_is_no_cached_measurement() {
        let mut report = run(20);
        add_job(&mut report, "w", false, io(1000, 1000));
        // the writes sat in the cache: the device read none of the read-back
        device(&mut report, 0, 8000);
        assert_eq!(codes(&served_from_cache(&report)), ["served-from-cache"]);
        report.verify.push(crate::model::VerifyReport {
            job: "w".into(),
            read_back_bytes: 19 * 1000 * 4096,
            ..Default::default()
        });
        assert!(
            served_from_cache(&report).is_empty(),
            "expected the read-back left out of the job's reads"
        );
    }

    #[test]
    fn the_advice_never_suggests_what_the_job_set() {
        for invalidate in [true, false] {
            let mut report = run(20);
            add_job(&mut report, "rr", false, io(1000, 0));
            report.observations.jobs[0].invalidate = invalidate;
            device(&mut report, 240, 0);
            let found = served_from_cache(&report);
            assert_eq!(codes(&found), ["served-from-cache"]);
            let advice = &found[0].advice;
            let set = format!("invalidate={}", u8::from(invalidate));
            assert!(
                !advice.contains(&set) && !advice.contains("direct=0"),
                "the job ran with {set}, buffered; the advice suggests one of them: {advice}"
            );
            assert!(advice.contains("direct=1"), "{advice}");
        }
    }

    #[test]
    fn a_cold_buffered_read_is_silent() {
        let mut report = run(20);
        add_job(&mut report, "rr", false, io(1000, 0));
        // Readahead may read a little more than asked, or slightly less within noise.
        device(&mut report, 7600, 0);
        assert!(served_from_cache(&report).is_empty());
        assert!(direct_io_not_honoured(&report).is_empty());
    }

    #[test]
    fn direct_io_the_device_never_saw() {
        let mut report = run(20);
        add_job(&mut report, "w", true, io(0, 1000));
        device(&mut report, 0, 100);
        let found = direct_io_not_honoured(&report);
        assert_eq!(codes(&found), ["direct-io-not-honoured"]);
        assert!(
            served_from_cache(&report).is_empty(),
            "direct jobs read no cache"
        );
        // The stack names the layer that caches.
        report.environment.stacks = vec![crate::model::TargetStack::of(
            TARGET,
            vec![(
                0,
                Layer::filesystem("ext4", "/mnt", "/dev/loop7", &["data=journal"]),
            )],
        )];
        let found = direct_io_not_honoured(&report);
        assert!(
            found[0].evidence[1].contains("ext4 is mounted with data=journal"),
            "{found:?}"
        );

        let mut honest = run(20);
        add_job(&mut honest, "w", true, io(0, 1000));
        device(&mut honest, 0, 8000);
        assert!(direct_io_not_honoured(&honest).is_empty());
    }

    #[test]
    fn direct_reads_of_holes_are_left_to_read_from_holes() {
        let mut report = run(20);
        add_job(&mut report, "rr", true, io(1000, 0));
        add_target(&mut report, |_| 0);
        report.observations.targets[0].sparse = true;
        device(&mut report, 0, 0);
        assert!(
            direct_io_not_honoured(&report).is_empty(),
            "holes read as zeros without the device; one finding (read-from-holes) names that"
        );

        // Writes to the same sparse file still must reach the device.
        let mut writer = run(20);
        add_job(&mut writer, "w", true, io(0, 1000));
        add_target(&mut writer, |_| 0);
        writer.observations.targets[0].sparse = true;
        device(&mut writer, 0, 100);
        assert_eq!(
            codes(&direct_io_not_honoured(&writer)),
            ["direct-io-not-honoured"]
        );
    }

    #[test]
    fn no_device_series_no_claim() {
        let mut report = run(20);
        add_job(&mut report, "rr", false, io(1000, 0));
        assert!(served_from_cache(&report).is_empty());
    }
}
