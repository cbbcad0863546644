//! The page cache of one target: `cachestat(2)` where the kernel has it (6.5+,
//! files and block devices alike), else `mincore(2)` over a read-only mapping
//! (cached pages only), else nothing, with a note saying so.

use crate::model::{CacheMethod, CachePages};
use iolens_sys::{cachestat, Mapping};
use std::fs::File;
use std::sync::Arc;

/// Counts a target's cached pages on demand.
pub(crate) struct CacheProbe {
    file: Arc<File>,
    method: CacheMethod,
    /// Held for mincore only; maps the whole target once.
    mapping: Option<Mapping>,
    scratch: Vec<u8>,
}

impl CacheProbe {
    /// Pick the best method that works on `file` of `size` bytes. The note
    /// explains a fallback or why the cache cannot be watched.
    pub(crate) fn new(file: Arc<File>, size: u64) -> (Self, Option<String>) {
        let mut probe = CacheProbe {
            file,
            method: CacheMethod::Cachestat,
            mapping: None,
            scratch: Vec::new(),
        };
        let cachestat_error = match cachestat(&*probe.file, 0, 0) {
            Ok(_) => return (probe, None),
            Err(e) => e,
        };
        match Mapping::whole(&probe.file, size, false) {
            Ok(map) => {
                probe.method = CacheMethod::Mincore;
                probe.mapping = Some(map);
                let note = format!("cachestat failed ({cachestat_error}); counting cached pages with mincore (no dirty/writeback/evicted counts)");
                (probe, Some(note))
            }
            Err(map_error) => {
                probe.method = CacheMethod::Unavailable;
                let note = format!("page cache not watched: cachestat failed ({cachestat_error}) and the target cannot be mapped for mincore ({map_error})");
                (probe, Some(note))
            }
        }
    }

    pub(crate) fn method(&self) -> CacheMethod {
        self.method
    }

    /// The target's pages now; None when the method failed this time.
    pub(crate) fn sample(&mut self) -> Option<CachePages> {
        match self.method {
            CacheMethod::Cachestat => cachestat(&*self.file, 0, 0).ok().map(|c| CachePages {
                cached: c.cache,
                dirty: c.dirty,
                writeback: c.writeback,
                evicted: c.evicted,
                recently_evicted: c.recently_evicted,
            }),
            CacheMethod::Mincore => {
                let map = self.mapping.as_ref()?;
                let cached = map.resident_pages(&mut self.scratch).ok()?;
                Some(CachePages {
                    cached,
                    ..Default::default()
                })
            }
            CacheMethod::Unavailable => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_written_pages_of_a_file() {
        let (_dir, file, len) = crate::testutil::cached_file(4, 3);
        let (mut probe, note) = CacheProbe::new(Arc::new(file), len);
        if let Some(note) = &note {
            eprintln!("{note}");
        }
        assert_ne!(probe.method(), CacheMethod::Unavailable, "{note:?}");
        assert_eq!(probe.sample().unwrap().cached, 4);
    }
}
