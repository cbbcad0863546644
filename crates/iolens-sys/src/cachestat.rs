//! `cachestat(2)` (Linux 6.5): how much of a file range is in the page cache.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Same number on x86_64 and aarch64 (the unified syscall table).
const SYS_CACHESTAT: libc::c_long = 451;

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct RawCachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// Page counts of a file range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStat {
    /// Pages in the page cache.
    pub cache: u64,
    /// Cached pages not yet written back.
    pub dirty: u64,
    /// Pages being written back now.
    pub writeback: u64,
    /// Pages that were cached and have been evicted.
    pub evicted: u64,
    /// Evicted pages that would likely still be cached with a bit more memory.
    pub recently_evicted: u64,
}

/// Cache state of `len` bytes from `offset` (`len` 0 = to the end of the file).
/// Fails with ENOSYS on kernels before 6.5.
pub fn cachestat(fd: impl AsFd, offset: u64, len: u64) -> io::Result<CacheStat> {
    let range = CachestatRange { off: offset, len };
    let mut raw = RawCachestat::default();
    // SAFETY: the kernel reads one cachestat_range and writes one struct cachestat, both
    // #[repr(C)] with the layout of include/uapi/linux/mman.h; the fd is borrowed and open.
    let ret = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            fd.as_fd().as_raw_fd(),
            &range as *const CachestatRange,
            &mut raw as *mut RawCachestat,
            0,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(CacheStat {
        cache: raw.nr_cache,
        dirty: raw.nr_dirty,
        writeback: raw.nr_writeback,
        evicted: raw.nr_evicted,
        recently_evicted: raw.nr_recently_evicted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fd::fadvise_dontneed;
    use crate::test_support::scratch_file;
    use std::os::unix::fs::FileExt;

    /// False (after printing why) on kernels before 6.5.
    fn kernel_has_cachestat(file: &std::fs::File) -> bool {
        match cachestat(file, 0, 0) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                eprintln!("skipped: kernel has no cachestat");
                false
            }
            other => other.map(|_| true).unwrap(),
        }
    }

    #[test]
    fn written_pages_are_cached_then_dropped() {
        let (_dir, file) = scratch_file(0);
        if !kernel_has_cachestat(&file) {
            return;
        }
        file.write_all_at(&vec![7u8; 64 * 1024], 0).unwrap();
        let stat = cachestat(&file, 0, 0).unwrap();
        let pages = (64 * 1024 / crate::os::page_size()) as u64;
        assert_eq!(stat.cache, pages);
        assert!(stat.dirty + stat.writeback <= pages);

        file.sync_all().unwrap();
        fadvise_dontneed(&file, 0, 0).unwrap();
        let after = cachestat(&file, 0, 0).unwrap();
        assert_eq!(after.cache, 0, "{after:?}");
        assert_eq!(after.dirty, 0);
    }

    #[test]
    fn range_limits_the_count() {
        let (_dir, file) = scratch_file(0);
        file.write_all_at(&vec![1u8; 16 * 4096], 0).unwrap();
        if !kernel_has_cachestat(&file) {
            return;
        }
        let first_page = cachestat(&file, 0, 1).unwrap();
        assert_eq!(first_page.cache, 1);
    }
}
