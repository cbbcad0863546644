//! `pagecache-under-direct-io` (seed 000): a direct-I/O job ran while its
//! target had pages in the page cache: every direct write also had to invalidate
//! the cached pages in its range, and every direct read first had the kernel write
//! back the range's dirty pages. Also (Info) when invalidate=1
//! dropped pages before the job: the state a run without the purge would have
//! measured.

use super::{bytes_text, seconds_at};
use crate::model::{CacheGuard, Finding, JobSeries, RunReport, Severity};

const CODE: &str = "pagecache-under-direct-io";

pub fn pagecache_under_direct_io(report: &RunReport) -> Vec<Finding> {
    let mut findings = Vec::new();
    for series in report.observations.jobs.iter().filter(|s| s.direct) {
        for path in &series.targets {
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
    let first_seen = (from..=to).find(|&i| cached(i).is_some_and(|c| c > 0));
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
    let mut evidence = vec![format!(
        "up to {max} pages ({}) of {path} were cached while the job ran",
        bytes_text(max * page)
    )];
    if at_start > 0 {
        evidence.push(format!(
            "{at_start} pages were already cached at the job's first I/O"
        ));
    } else if let Some(i) = first_seen {
        evidence.push(format!(
            "the cache was empty at the start; pages first seen at t={:.1} s",
            seconds_at(obs, i)
        ));
    }
    let cause = if at_start > 0 && !series.invalidate {
        "invalidate=0 left pages that were there before the run".to_string()
    } else if report.environment.udev_running {
        "udevd runs: it reads a block device with blkid (through the page cache) after a writer closes it".into()
    } else {
        "another process read the target through the page cache".into()
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
            first_seen.map(|i| obs.t_ns[i])
        },
    })
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
        assert!(f.evidence.iter().any(|e| e.contains("t=1.2 s")), "{f:?}");
        assert_eq!(f.at_ns, Some(1_200_000_000));
        assert!(
            f.evidence.iter().any(|e| e.contains("another process")),
            "{f:?}"
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
