//! The pre-run page-cache drop: before a job's first I/O, count each
//! target's cached pages, drop them when the job asks (invalidate=1, the
//! default), and count again, so the report says what was there and whether
//! the purge worked. With invalidate=0 nothing is dropped but the count is
//! still recorded (seed 000: a flush at start hides pollution that a run
//! without it would have measured).

use super::pagecache::CacheProbe;
use crate::model::CacheGuard;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// A target as the guard needs it.
pub(crate) struct GuardedTarget<'a> {
    pub path: &'a Path,
    pub file: &'a Arc<File>,
    pub size: u64,
}

/// Check (and with `purge`, drop) the cache of `target`; `drop_cache` is the
/// fileset's purge (fadvise DONTNEED, or BLKFLSBUF on a block device). The
/// record is dated by `now_ns` once the check is over: the job starts then,
/// and a sample of the cache taken earlier does not count for it.
pub(crate) fn check_target(
    job: &str,
    target: GuardedTarget,
    purge: bool,
    drop_cache: impl FnOnce() -> std::io::Result<()>,
    now_ns: impl FnOnce() -> u64,
) -> CacheGuard {
    let (mut probe, _) = CacheProbe::new(target.file.clone(), target.size);
    let pages_before = probe.sample().map(|p| p.cached);
    let mut error = None;
    if purge {
        if let Err(e) = drop_cache() {
            error = Some(e.to_string());
        }
    }
    let pages_after = if purge {
        probe.sample().map(|p| p.cached)
    } else {
        pages_before
    };
    CacheGuard {
        job: job.to_string(),
        path: target.path.display().to_string(),
        t_ns: now_ns(),
        pages_before,
        purged: purge && error.is_none(),
        pages_after,
        error,
    }
}

/// A line for the user when the guard found something worth knowing, for a
/// direct-I/O job: pages left in the cache it will write around.
pub(crate) fn warning(guard: &CacheGuard, direct: bool) -> Option<String> {
    if let Some(e) = &guard.error {
        return Some(format!(
            "{}: could not drop the page cache before job '{}': {e}",
            guard.path, guard.job
        ));
    }
    let left = guard.pages_after.filter(|&p| p > 0)?;
    direct.then(|| {
        format!(
            "{}: {left} pages are in the page cache at the start of direct-I/O job '{}'{}; every direct write over cached pages pays an invalidation",
            guard.path,
            guard.job,
            if guard.purged { " even after dropping it" } else { " (invalidate=0)" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check_target` on a scratch file of `pages` cached pages; `drop_cache`
    /// gets the file.
    fn check_cached(
        pages: usize,
        purge: bool,
        drop_cache: impl FnOnce(&File) -> std::io::Result<()>,
        now_ns: u64,
    ) -> CacheGuard {
        let (dir, file, size) = crate::testutil::cached_file(pages, 9);
        file.sync_all().unwrap();
        let file = Arc::new(file);
        let path = dir.path().join("t");
        let target = GuardedTarget {
            path: &path,
            file: &file,
            size,
        };
        check_target("j", target, purge, || drop_cache(&file), || now_ns)
    }

    #[test]
    fn purge_counts_before_and_after() {
        let guard = check_cached(8, true, |file| iolens_sys::fadvise_dontneed(file, 0, 0), 5);
        assert_eq!(guard.pages_before, Some(8));
        assert_eq!(guard.pages_after, Some(0));
        assert!(guard.purged);
        assert_eq!(guard.t_ns, 5);
        assert_eq!(warning(&guard, true), None);
    }

    #[test]
    fn without_purge_the_count_is_kept_and_a_direct_job_is_warned() {
        let guard = check_cached(3, false, |_| unreachable!(), 0);
        assert_eq!(guard.pages_before, Some(3));
        assert_eq!(guard.pages_after, Some(3));
        assert!(!guard.purged);
        let w = warning(&guard, true).unwrap();
        assert!(w.contains("3 pages") && w.contains("invalidate=0"), "{w}");
        assert_eq!(warning(&guard, false), None);
    }

    #[test]
    fn a_failed_purge_is_recorded() {
        let failing = |_: &File| Err(std::io::Error::from_raw_os_error(libc::EACCES));
        let guard = check_cached(1, true, failing, 0);
        assert!(!guard.purged);
        assert_eq!(guard.pages_after, Some(1));
        assert!(warning(&guard, false).unwrap().contains("could not drop"));
    }
}
