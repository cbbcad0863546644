//! `pagecache-under-direct-io` (seed 000): a direct-I/O job ran while its
//! target had pages in the page cache: every direct write also had to invalidate
//! the cached pages in its range, and every direct read first had the kernel write
//! back the range's dirty pages. Also (Info) when invalidate=1
//! dropped pages before the job: the state a run without the purge would have
//! measured. A process is blamed only when one was seen opening the target; a
//! file the run created and the job writes, with no other opener seen, gets an
//! Info: its filesystem cached pages of the job's own writes (btrfs does when
//! direct writes extend a file).

use super::{bytes_text, seconds_at};
use crate::model::{
    CacheGuard, Finding, JobSeries, Observations, Opener, RunReport, Severity, TargetObservation,
    TargetOpen,
};

const CODE: &str = "pagecache-under-direct-io";

pub(super) fn pagecache_under_direct_io(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for series in report.observations.jobs.iter().filter(|s| s.direct) {
        // Without a device the page cache is where the data lives (no-device names that).
        let on_a_device = |path: &&String| {
            super::stack_of(report, path).is_none_or(|s| s.top_has_no_device().is_none())
        };
        for path in series.targets.iter().filter(on_a_device) {
            let guard = report
                .observations
                .cache_guards
                .iter()
                .find(|g| g.job == series.name && &g.path == path);
            // On files the purge is ordinary hygiene (iolens' own layout leaves them cached);
            // on a device it erases state someone else created (seed 000).
            let device = report
                .observations
                .targets
                .iter()
                .any(|t| &t.path == path && t.is_block_device);
            findings.extend(guard.filter(|_| device).and_then(purged_before));
            findings.extend(cached_during(report, series, path, guard));
        }
    }
    findings
}

/// Info: iolens' own purge changed the cache state the run started from.
fn purged_before(guard: &CacheGuard) -> Option<Finding> {
    let before = guard.pages_before.filter(|&p| p > 0 && guard.purged)?;
    Some(Finding {
        code: CODE.into(),
        severity: Severity::Info,
        title: format!(
            "invalidate=1 dropped {before} cached pages of {} before job '{}'",
            guard.path, guard.job
        ),
        evidence: vec![format!(
            "{before} pages cached before the job, {} after the purge",
            guard.pages_after.map_or("unknown".into(), |p| p.to_string())
        )],
        advice: "something read the target through the page cache before the run; run with invalidate=0 to measure the state as you found it".into(),
        at_ns: Some(guard.t_ns),
    })
}

/// Warning: pages were cached while the job's direct I/O ran.
fn cached_during(
    report: &RunReport,
    series: &JobSeries,
    path: &str,
    guard: Option<&CacheGuard>,
) -> Option<Finding> {
    let obs = &report.observations;
    let target = obs.targets.iter().find(|t| t.path == path)?;
    let at_start = guard.and_then(|g| g.pages_after).unwrap_or(0);
    let (from, to) = series.active_span()?;
    // Sample `from` precedes the first I/O and may predate the guard's purge
    // (the sampler starts first); the guard's own count covers the start.
    let from = from + 1;
    let pages = |i: usize| target.cache_series.get(i).copied().flatten();
    let cached = |i: usize| pages(i).map(|p| p.cached);
    let appeared = first_growth((from..=to).map(|i| (i, cached(i))), at_start);
    let max = (from..=to)
        .filter_map(cached)
        .max()
        .unwrap_or(0)
        .max(at_start);
    if max == 0 {
        return None;
    }
    let max_dirty = (from..=to)
        .filter_map(pages)
        .map(|p| p.dirty)
        .max()
        .unwrap_or(0);
    let page = obs.page_size_bytes.max(1);
    let cached_line = format!(
        "up to {max} pages ({}) of {path} were cached while the job ran",
        bytes_text(max * page)
    );
    let other_seen = other_opener_seen(obs, path, from, to);
    let wrote = series.intervals.iter().any(|v| v.ios[1] > 0);
    let made_by_the_run = target.created || obs.layouts.iter().any(|l| l.path == path);
    if !target.is_block_device && wrote && made_by_the_run && !other_seen {
        let at_ns = appeared.map(|(i, _, _)| obs.t_ns[i]);
        return Some(own_writes_cached(
            report,
            series,
            path,
            max,
            cached_line,
            at_ns,
        ));
    }
    let mut evidence = vec![cached_line];
    if at_start > 0 {
        evidence.push(format!(
            "{at_start} pages were already cached at the job's first I/O"
        ));
    }
    if let Some((i, before, now)) = appeared {
        let mut line = format!(
            "pages appeared at {:.1} s ({}): {now} pages",
            seconds_at(obs, i),
            running_jobs(report, i)
        );
        if before > 0 {
            line.push_str(&format!(", up from {before}"));
        }
        evidence.push(line);
        evidence.extend(who(obs, target, i, to));
    }
    let cause = if at_start > 0 && !series.invalidate {
        "invalidate=0 left pages that were there before the run".to_string()
    } else if other_seen {
        "another process seen with the target open read it through the page cache".into()
    } else if report.environment.udev_running && target.is_block_device {
        "udevd runs: it reads a block device with blkid (through the page cache) after a writer closes it".into()
    } else {
        format!("unknown: {max} pages appeared in the target's cache while no other opener of it was seen")
    };
    evidence.push(format!("probable cause: {cause}"));
    Some(Finding {
        code: CODE.into(),
        severity: Severity::Warning,
        title: format!(
            "direct-I/O job '{}' ran while {path} had {max} pages in the page cache",
            series.name
        ),
        evidence,
        advice: advice(series, max_dirty),
        // When the pages appeared: already there at the guard's check, or first seen later.
        at_ns: if at_start > 0 {
            guard.map(|g| g.t_ns)
        } else {
            appeared.map(|(i, _, _)| obs.t_ns[i])
        },
    })
}

/// Another process was seen opening `path` (fanotify) or holding it open (a
/// /proc scan) from the interval before sample `from` to sample `to`.
fn other_opener_seen(obs: &Observations, path: &str, from: usize, to: usize) -> bool {
    let since = from
        .checked_sub(1)
        .map_or(0, |p| obs.t_ns[p].saturating_sub(obs.interval_ns));
    let during = since..=obs.t_ns[to];
    obs.target_opens
        .iter()
        .any(|o| o.path == path && during.contains(&o.t_ns))
        || obs
            .opener_scans
            .iter()
            .any(|s| s.path == path && during.contains(&s.t_ns) && !s.openers.is_empty())
}

/// Info: pages of a file the run created, cached while only the job wrote it.
fn own_writes_cached(
    report: &RunReport,
    series: &JobSeries,
    path: &str,
    max: u64,
    cached_line: String,
    at_ns: Option<u64>,
) -> Finding {
    let fs = report
        .environment
        .filesystems
        .iter()
        .find(|f| f.target == path)
        .map_or("the filesystem", |f| f.fs_type.as_str());
    Finding {
        code: CODE.into(),
        severity: Severity::Info,
        title: format!(
            "{fs} cached {max} pages of {path}, written by direct-I/O job '{}' itself",
            series.name
        ),
        evidence: vec![
            cached_line,
            format!("iolens made {path} in this run and the job wrote it; no other opener of it was seen"),
        ],
        advice: "nothing to fix: some filesystems (btrfs) cache pages of direct writes that extend a file, and those pages are part of what the job measured".into(),
        at_ns,
    }
}

/// The first sample whose cached pages exceed the count before it (`start`
/// before the first): (sample, pages before, pages then). Unread samples are skipped.
fn first_growth(
    samples: impl Iterator<Item = (usize, Option<u64>)>,
    start: u64,
) -> Option<(usize, u64, u64)> {
    let mut before = start;
    for (i, cached) in samples {
        let Some(now) = cached else { continue };
        if now > before {
            return Some((i, before, now));
        }
        before = now;
    }
    None
}

/// "job 'w'" or "jobs 'a', 'b'": the jobs doing I/O in the interval that ends at sample `i`.
fn running_jobs(report: &RunReport, i: usize) -> String {
    let names: Vec<String> = report
        .observations
        .jobs
        .iter()
        .filter(|j| j.active_span().is_some_and(|(a, b)| a < i && i <= b))
        .map(|j| format!("'{}'", j.name))
        .collect();
    match names.len() {
        0 => "no job doing I/O".into(),
        1 => format!("job {}", names[0]),
        _ => format!("jobs {}", names.join(", ")),
    }
}

/// Processes shown by name in the evidence; the rest are counted.
const OPENERS_SHOWN: usize = 4;

/// Evidence naming who opened `target` around sample `i`, where new pages
/// were first seen (fanotify), and who had it open then (the /proc scan made
/// at that sample or, rate-limited, later in the job, up to sample `to`); when
/// nobody was seen, that the reader was gone and how to catch it. Nothing when
/// neither was watched (a report from before they existed).
fn who(obs: &Observations, target: &TargetObservation, i: usize, to: usize) -> Vec<String> {
    let path = &target.path;
    let since = i
        .checked_sub(1)
        .map_or(0, |p| obs.t_ns[p].saturating_sub(obs.interval_ns));
    let mut opened: Vec<&TargetOpen> = Vec::new();
    for open in obs.target_opens.iter().filter(|o| &o.path == path) {
        let pid = open.opener.pid;
        if (since..=obs.t_ns[i]).contains(&open.t_ns) && !opened.iter().any(|o| o.opener.pid == pid)
        {
            opened.push(open);
        }
    }
    let scan = obs
        .opener_scans
        .iter()
        .find(|s| &s.path == path && s.t_ns >= obs.t_ns[i] && s.t_ns <= obs.t_ns[to]);
    let opens_watched = obs.opens_watched.contains(path);
    if scan.is_none() && !opens_watched {
        return Vec::new();
    }
    let mut lines = named(
        opened.iter().map(|o| {
            let at = o.t_ns as f64 / 1e9;
            if o.opener.comm.is_empty() {
                format!(
                    "process {} opened {path} at {at:.2} s (it exited before it could be named)",
                    o.opener.pid
                )
            } else {
                with_cmdline(
                    format!(
                        "process {} ({}) opened {path} at {at:.2} s",
                        o.opener.pid, o.opener.comm
                    ),
                    &o.opener,
                )
            }
        }),
        opened.len(),
        "opened it",
    );
    if let Some(scan) = scan {
        let at = scan.t_ns as f64 / 1e9;
        lines.extend(named(
            scan.openers.iter().map(|o| {
                with_cmdline(
                    format!(
                        "process {} ({}) had {path} open at {at:.1} s",
                        o.pid, o.comm
                    ),
                    o,
                )
            }),
            scan.openers.len(),
            "had it open",
        ));
    }
    if lines.is_empty() {
        let mut seen = Vec::new();
        if opens_watched {
            seen.push(format!(
                "was seen opening {path} around {:.1} s",
                seconds_at(obs, i)
            ));
        }
        if let Some(scan) = scan {
            let it = if seen.is_empty() { path.as_str() } else { "it" };
            seen.push(format!("had {it} open at {:.1} s", scan.t_ns as f64 / 1e9));
        }
        let catch = if target.is_block_device {
            "to catch it, watch `udevadm monitor --udev` while the job runs (udev probes a block device with blkid each time a writer closes it), and look for a writer that closes and reopens the device"
        } else {
            "to catch it, look for a process that opens and reads the file while the job runs (an indexer, a backup, a second benchmark)"
        };
        let mut line = format!(
            "no other process {}: a reader, if there was one, had already closed it; {catch}",
            seen.join(" or ")
        );
        if !opens_watched && !target.is_block_device {
            line.push_str(" (as root, iolens also watches the file's opens with fanotify and names such a reader)");
        }
        lines.push(line);
    }
    if let Some(scan) = scan {
        if scan.unreadable > 0 {
            lines.push(format!(
                "{} processes' open files could not be read (run as root to see them)",
                scan.unreadable
            ));
        }
        if scan.truncated {
            lines.push("the scan stopped at its bound before it had seen every process".into());
        }
    }
    lines
}

/// The first `OPENERS_SHOWN` lines, then how many more processes `did`.
fn named(lines: impl Iterator<Item = String>, count: usize, did: &str) -> Vec<String> {
    let mut shown: Vec<String> = lines.take(OPENERS_SHOWN).collect();
    if count > OPENERS_SHOWN {
        shown.push(format!(
            "and {} more processes {did}",
            count - OPENERS_SHOWN
        ));
    }
    shown
}

/// `line`, then the opener's command line when there is one.
fn with_cmdline(mut line: String, opener: &Opener) -> String {
    if !opener.cmdline.is_empty() {
        line.push_str(&format!(": {}", opener.cmdline));
    }
    line
}

/// What the cached pages cost the job's direct I/O: a direct write invalidates the
/// cached pages of its range (after writing back the dirty ones); a direct read leaves
/// clean pages alone and only waits for the dirty ones of its range to be written back.
/// A job that does both gets both.
fn advice(series: &JobSeries, max_dirty: u64) -> String {
    let did = |dir: usize| series.intervals.iter().any(|v| v.ios[dir] > 0);
    let mut cost = Vec::new();
    if did(0) && max_dirty > 0 {
        cost.push(format!(
            "every direct read still goes to the device, but first waits for the dirty cached pages of its range to be written back (up to {max_dirty} were dirty): the read latencies include someone else's writeback"
        ));
    } else if did(0) {
        cost.push("direct reads go to the device and leave clean cached pages alone, so these reads measured the device; the pages only show that the target was also used through the page cache".into());
    }
    if did(1) {
        cost.push("every direct write over a cached range also invalidates those pages (extra CPU per write)".into());
    }
    cost.push(
        "find and stop the reader, or compare with a run whose target cache stays empty".into(),
    );
    cost.join("; ")
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::OpenerScan;

    fn guard(before: u64, purged: bool) -> CacheGuard {
        CacheGuard {
            job: "w".into(),
            path: TARGET.into(),
            pages_before: Some(before),
            purged,
            pages_after: Some(if purged { 0 } else { before }),
            t_ns: 300_000_000,
            ..Default::default()
        }
    }

    #[test]
    fn pages_appearing_mid_run_are_reported_with_their_time() {
        let mut report = run(30);
        add_job(&mut report, "w", true, io(0, 500));
        add_target(&mut report, |i| if i >= 12 { 192 } else { 0 });
        report.observations.cache_guards.push(guard(0, true));
        let found = pagecache_under_direct_io(&report);
        assert_eq!(codes(&found), [CODE]);
        let f = &found[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("192 pages"), "{f:?}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e == "pages appeared at 1.2 s (job 'w'): 192 pages"),
            "expected when the pages appeared, during which job and how many; saw {f:?}"
        );
        assert_eq!(f.at_ns, Some(1_200_000_000));
        let unknown = "probable cause: unknown: 192 pages appeared in the target's cache while no other opener of it was seen".to_string();
        assert!(
            f.evidence.contains(&unknown)
                && !f.evidence.iter().any(|e| e.contains("another process")),
            "expected no process blamed when none was seen, saw {f:?}"
        );
    }

    fn scan_at(sample: u64, openers: Vec<Opener>) -> OpenerScan {
        OpenerScan {
            t_ns: sample * STEP_NS,
            path: TARGET.into(),
            openers,
            ..Default::default()
        }
    }

    fn blkid() -> Opener {
        Opener {
            pid: 4182,
            comm: "blkid".into(),
            cmdline: format!("/sbin/blkid -o udev -p {TARGET}"),
        }
    }

    /// The warning's evidence for pages appearing at sample 12 of a job 'w', with `scans`.
    fn evidence_with(scans: Vec<OpenerScan>) -> Vec<String> {
        let mut report = run(30);
        add_job(&mut report, "w", true, io(0, 500));
        add_target(&mut report, |i| if i >= 12 { 25 } else { 0 });
        report.observations.opener_scans = scans;
        let found = pagecache_under_direct_io(&report);
        assert_eq!(codes(&found), [CODE], "expected the warning, saw {found:?}");
        found[0].evidence.clone()
    }

    #[test]
    fn the_process_seen_holding_the_target_when_the_pages_appeared_is_named() {
        let evidence = evidence_with(vec![scan_at(12, vec![blkid()])]);
        let named = format!(
            "process 4182 (blkid) had {TARGET} open at 1.2 s: /sbin/blkid -o udev -p {TARGET}"
        );
        assert!(
            evidence.contains(&named),
            "expected the line {named:?}, saw {evidence:?}"
        );
        assert!(
            evidence.contains(
                &"probable cause: another process seen with the target open read it through the page cache".to_string()
            ),
            "expected the process seen blamed, saw {evidence:?}"
        );
        let many = evidence_with(vec![scan_at(12, vec![blkid(); 6])]);
        let lines = many
            .iter()
            .filter(|e| e.starts_with("process 4182"))
            .count();
        assert_eq!(
            lines, OPENERS_SHOWN,
            "expected {OPENERS_SHOWN} named, saw {many:?}"
        );
        assert!(
            many.contains(&"and 2 more processes had it open".to_string()),
            "expected the rest counted, saw {many:?}"
        );
    }

    #[test]
    fn a_reader_gone_before_the_scan_is_said_to_be_gone_with_how_to_catch_it() {
        let mut scan = scan_at(12, Vec::new());
        scan.unreadable = 3;
        let evidence = evidence_with(vec![scan]);
        let gone = evidence
            .iter()
            .find(|e| e.starts_with(&format!("no other process had {TARGET} open at 1.2 s")))
            .unwrap_or_else(|| panic!("expected a line saying nobody was seen, saw {evidence:?}"));
        assert!(
            gone.contains("already closed it") && gone.contains("udevadm monitor"),
            "expected the reader gone and udevadm monitor advised, saw {gone:?}"
        );
        assert!(
            evidence
                .iter()
                .any(|e| e.starts_with("3 processes' open files could not be read")),
            "expected the unreadable processes counted, saw {evidence:?}"
        );
    }

    #[test]
    fn openers_seen_by_fanotify_around_the_moment_are_named_once_each() {
        let open = |ms: u64, pid: u32, comm: &str| TargetOpen {
            t_ns: ms * 1_000_000,
            path: TARGET.into(),
            opener: Opener {
                pid,
                comm: comm.into(),
                cmdline: if comm.is_empty() {
                    String::new()
                } else {
                    format!("{comm} {TARGET}")
                },
            },
        };
        let mut report = run(30);
        add_job(&mut report, "w", true, io(0, 500));
        add_target(&mut report, |i| if i >= 12 { 25 } else { 0 });
        let obs = &mut report.observations;
        // fanotify watches the opens of regular files only.
        obs.targets[0].is_block_device = false;
        obs.opens_watched = vec![TARGET.into()];
        // Pages first seen at sample 12 (1.2 s): opens from 1.0 s (one interval
        // before the sample before it) count; the one at 0.5 s does not.
        obs.target_opens = vec![
            open(500, 10, "early"),
            open(1_150, 4182, "blkid"),
            open(1_160, 4182, "blkid"),
            open(1_190, 4190, ""),
        ];
        let found = pagecache_under_direct_io(&report);
        let evidence = &found[0].evidence;
        let opened: Vec<&String> = evidence.iter().filter(|e| e.contains(" opened ")).collect();
        assert_eq!(
            opened,
            [
                &format!("process 4182 (blkid) opened {TARGET} at 1.15 s: blkid {TARGET}"),
                &format!("process 4190 opened {TARGET} at 1.19 s (it exited before it could be named)"),
            ],
            "expected blkid named once and the nameless opener, not the early one; saw {evidence:?}"
        );
        assert!(
            !evidence.iter().any(|e| e.contains("no other process")),
            "expected no 'nobody seen' line, saw {evidence:?}"
        );

        report.observations.target_opens.clear();
        let found = pagecache_under_direct_io(&report);
        let nobody = format!(
            "no other process was seen opening {TARGET} around 1.2 s: a reader, if there was one, had already closed it"
        );
        assert!(
            found[0]
                .evidence
                .iter()
                .any(|e| e.starts_with(&nobody) && !e.contains("as root")),
            "expected {nobody:?} without the root hint, saw {:?}",
            found[0].evidence
        );
    }

    /// A direct writer of a regular file that gains pages from sample 3 on; `created`: iolens made it.
    fn direct_writer_of_a_file(created: bool, scans: Vec<OpenerScan>) -> RunReport {
        let mut report = run(20);
        add_job(&mut report, "w", true, io(0, 500));
        add_target(&mut report, |i| if i >= 3 { 4 } else { 0 });
        let obs = &mut report.observations;
        obs.targets[0].is_block_device = false;
        obs.targets[0].created = created;
        obs.opener_scans = scans;
        report
            .environment
            .filesystems
            .push(crate::model::FilesystemInfo {
                target: TARGET.into(),
                fs_type: "btrfs".into(),
                ..Default::default()
            });
        report
    }

    #[test]
    fn pages_of_a_file_the_run_made_and_only_the_job_wrote_are_an_info() {
        let found = pagecache_under_direct_io(&direct_writer_of_a_file(true, Vec::new()));
        assert_eq!(codes(&found), [CODE], "{found:?}");
        let f = &found[0];
        assert_eq!(f.severity, Severity::Info, "{f:?}");
        assert_eq!(
            f.title,
            format!("btrfs cached 4 pages of {TARGET}, written by direct-I/O job 'w' itself")
        );
        assert!(
            !f.evidence.iter().any(|e| e.contains("another process")),
            "{f:?}"
        );
        assert_eq!(f.at_ns, Some(300_000_000));

        // The same pages with another process seen holding the file: the warning, naming it.
        let seen = pagecache_under_direct_io(&direct_writer_of_a_file(
            true,
            vec![scan_at(3, vec![blkid()])],
        ));
        assert_eq!(seen[0].severity, Severity::Warning, "{seen:?}");
        assert!(
            seen[0]
                .evidence
                .iter()
                .any(|e| e.starts_with("process 4182 (blkid)")),
            "{seen:?}"
        );
    }

    #[test]
    fn pages_of_a_file_that_was_there_before_blame_no_unseen_process() {
        let found = pagecache_under_direct_io(&direct_writer_of_a_file(
            false,
            vec![scan_at(3, Vec::new())],
        ));
        assert_eq!(found[0].severity, Severity::Warning, "{found:?}");
        let evidence = &found[0].evidence;
        assert!(
            evidence.contains(&"probable cause: unknown: 4 pages appeared in the target's cache while no other opener of it was seen".to_string())
                && !evidence.iter().any(|e| e.contains("another process")),
            "expected nobody blamed, saw {evidence:?}"
        );
    }

    #[test]
    fn a_scan_before_the_pages_appeared_or_of_another_target_names_nobody() {
        let mut other = scan_at(12, vec![blkid()]);
        other.path = "/dev/loop8".into();
        let evidence = evidence_with(vec![scan_at(5, vec![blkid()]), other]);
        assert!(
            !evidence
                .iter()
                .any(|e| e.contains("4182") || e.contains("no other process")),
            "expected no scan to be quoted, saw {evidence:?}"
        );
    }

    #[test]
    fn pages_appearing_over_those_there_at_the_start_name_every_running_job() {
        let mut report = run(30);
        add_job(&mut report, "w", true, io(0, 500));
        add_job(&mut report, "other", false, io(10, 0));
        report.observations.jobs[0].invalidate = false;
        add_target(&mut report, |i| if i >= 7 { 60 } else { 20 });
        report.observations.cache_guards.push(guard(20, false));
        let found = pagecache_under_direct_io(&report);
        let evidence = &found[0].evidence;
        let line = "pages appeared at 0.7 s (jobs 'w', 'other'): 60 pages, up from 20";
        assert!(
            evidence.iter().any(|e| e == line),
            "expected {line:?}, saw {evidence:?}"
        );
    }

    #[test]
    fn a_read_job_gets_read_advice_and_a_write_job_write_advice() {
        let advice_for = |reads: u64, writes: u64, dirty: u64| {
            let mut report = run(10);
            add_job(&mut report, "w", true, io(reads, writes));
            add_target(&mut report, |i| if i >= 3 { 64 } else { 0 });
            for p in report.observations.targets[0]
                .cache_series
                .iter_mut()
                .flatten()
            {
                p.dirty = dirty.min(p.cached);
            }
            let found = pagecache_under_direct_io(&report);
            assert_eq!(codes(&found), [CODE], "expected the warning, saw {found:?}");
            found[0].advice.clone()
        };
        let clean_read = advice_for(500, 0, 0);
        assert!(
            clean_read.contains("leave clean cached pages alone") && !clean_read.contains("write"),
            "expected a read job over clean pages to get read advice only, saw: {clean_read}"
        );
        let dirty_read = advice_for(500, 0, 5);
        assert!(
            dirty_read.contains("written back (up to 5 were dirty)")
                && !dirty_read.contains("direct write"),
            "expected a read job over dirty pages to be told of the writeback it waited for, saw: {dirty_read}"
        );
        let write = advice_for(0, 500, 5);
        assert!(
            write.contains("every direct write") && !write.contains("direct read"),
            "expected a write job to get write advice only, saw: {write}"
        );
        let mixed = advice_for(250, 250, 0);
        assert!(
            mixed.contains("direct reads go to the device") && mixed.contains("every direct write"),
            "expected a read-write job to get both, saw: {mixed}"
        );
    }

    #[test]
    fn pages_left_by_invalidate_0_are_blamed_on_it() {
        let mut report = run(10);
        add_job(&mut report, "w", true, io(0, 500));
        report.observations.jobs[0].invalidate = false;
        add_target(&mut report, |_| 48);
        report.observations.cache_guards.push(guard(48, false));
        let found = pagecache_under_direct_io(&report);
        assert_eq!(codes(&found), [CODE]);
        assert!(found[0].evidence.iter().any(|e| e.contains("invalidate=0")));
        assert_eq!(
            found[0].at_ns,
            Some(300_000_000),
            "there at the guard's check"
        );
    }

    #[test]
    fn a_purge_before_the_job_is_an_info() {
        let mut report = run(10);
        add_job(&mut report, "w", true, io(0, 500));
        add_target(&mut report, |_| 0);
        report.observations.cache_guards.push(guard(192, true));
        let found = pagecache_under_direct_io(&report);
        assert_eq!(codes(&found), [CODE]);
        assert_eq!(found[0].severity, Severity::Info);
        assert!(found[0].title.contains("dropped 192"), "{:?}", found[0]);
        assert_eq!(found[0].at_ns, Some(300_000_000));

        report.observations.targets[0].is_block_device = false;
        assert!(
            pagecache_under_direct_io(&report).is_empty(),
            "files are purged as a matter of course"
        );
    }

    #[test]
    fn silent_when_the_cache_stays_empty_or_the_job_is_buffered() {
        let mut report = run(10);
        add_job(&mut report, "w", true, io(0, 500));
        add_target(&mut report, |_| 0);
        report.observations.cache_guards.push(guard(0, true));
        assert!(pagecache_under_direct_io(&report).is_empty());

        let mut buffered = run(10);
        add_job(&mut buffered, "w", false, io(0, 500));
        add_target(&mut buffered, |_| 5000);
        assert!(pagecache_under_direct_io(&buffered).is_empty());
    }
}
