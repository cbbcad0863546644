//! Create and lay out files with real data before they are read, so a
//! benchmark never "reads" holes (which return zeros without touching the device).

use super::anchor::{reopen_path, Anchor};
use super::{Progress, Step, TargetError};
use crate::job::spec::Fallocate;
use crate::units::{human_bytes, ByteUnits};
use iolens_sys::fd::{self, Allocate};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// What `ensure` found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LayoutOutcome {
    pub created: bool,
    pub is_block_device: bool,
    /// The first `extent` bytes contain holes.
    pub sparse: bool,
    /// Why `fallocate=` could not reserve the blocks; the file then grows as it is
    /// written (fio goes on too).
    pub preallocation_failed: Option<String>,
    /// What `ensure` wrote with data; None when it wrote nothing.
    pub written: Option<Written>,
    /// How far a layout got when the run was asked to stop during it.
    pub stopped: Option<String>,
}

/// Bytes `from..to` of a file written by the layout, then dropped from the
/// page cache again (as fio does after laying out a file), so the first
/// buffered read of them is not served from memory. Pages cached before
/// iolens touched the file stay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    pub from: u64,
    pub to: u64,
    /// Why dropping the written pages from the page cache failed, if it did.
    pub drop_error: Option<String>,
    /// The file lives in RAM (tmpfs, ramfs): its pages stay, nothing was dropped.
    pub in_memory: bool,
}

const LAYOUT_CHUNK: usize = 1 << 20;
/// A layout syncs what it wrote every this many bytes, so that no one flush
/// (the sync at its end) takes long: a rank of a run on several hosts is taken
/// as hung when it stays silent for long (runner/alive.rs).
const SYNC_EVERY: u64 = 256 << 20;

/// What the jobs using one path need of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LayoutRequest {
    /// Bytes the jobs address.
    pub extent: u64,
    /// Write the missing bytes with data (the jobs read them).
    pub fill: bool,
    pub fallocate: Fallocate,
}

/// Make the file `anchor` resolved `path` to hold at least `extent` bytes:
/// reserve the missing blocks as `fallocate` says, then with `fill` write them
/// with random data (and sync). `progress` hears of each chunk written.
pub(super) fn ensure(
    path: &Path,
    anchor: &Anchor,
    request: &LayoutRequest,
    progress: &dyn Progress,
) -> Result<LayoutOutcome, TargetError> {
    let LayoutRequest { extent, fill, .. } = *request;
    let io_err = |what, e| TargetError::io(path, what, e);
    let m = anchor.file.metadata().map_err(|e| io_err("stat", e))?;
    if m.file_type().is_block_device() {
        let size = fd::blk_size_bytes(&*anchor.file)
            .map_err(|e| io_err("read device size (BLKGETSIZE64)", e))?;
        if extent > size {
            return Err(TargetError::Config(format!(
                "{}: the jobs address {extent} bytes but the device holds {size} (lower size= or offset=)",
                path.display()
            )));
        }
        return Ok(LayoutOutcome {
            created: false,
            is_block_device: true,
            sparse: false,
            preallocation_failed: None,
            written: None,
            stopped: None,
        });
    }
    if !m.file_type().is_file() {
        return Err(TargetError::Config(format!(
            "{}: not a regular file or block device (give a file or a device as filename=)",
            path.display()
        )));
    }
    let created = anchor.created;
    let current = m.len();
    // Long enough already: nothing to write, so the file is not opened for writing
    // (a read-only file or filesystem serves reads, as with fio's --readonly)
    if current >= extent {
        return Ok(LayoutOutcome {
            created,
            is_block_device: false,
            sparse: has_holes(&m, extent),
            preallocation_failed: None,
            written: None,
            stopped: None,
        });
    }
    let mut file = OpenOptions::new()
        .write(true)
        .open(reopen_path(&anchor.file))
        .map_err(|e| io_err("open for the layout", e))?;
    let preallocation_failed = preallocate(&file, request.fallocate, current, extent)
        .err()
        .map(|e| format!("{}: preallocating failed (fallocate=): {e}", path.display()));
    let mut written = None;
    if fill {
        let on = path.to_string_lossy();
        let told = |done| {
            progress.step(Step {
                doing: "laying out",
                on: &on,
                done,
                total: extent - current,
            })
        };
        let stop_asked = || progress.stop_asked();
        let laid = write_random(&mut file, current, extent, &told, &stop_asked)
            .map_err(|e| io_err("lay out", e))?;
        if laid < extent - current {
            // No job runs after a stop: the file stays as far as it got.
            return Ok(LayoutOutcome {
                created,
                is_block_device: false,
                sparse: false,
                preallocation_failed,
                written: None,
                stopped: Some(format!(
                    "{}: the layout stopped with the run ({} of {} written; the file is left so)",
                    path.display(),
                    human_bytes(laid, ByteUnits::BToTib),
                    human_bytes(extent - current, ByteUnits::BToTib)
                )),
            });
        }
        // Synced above, so the pages are clean and can be dropped, unless they are the file.
        let in_memory = fd::in_memory_fs(&file).unwrap_or(false);
        let dropped = if in_memory {
            Ok(())
        } else {
            fd::fadvise_dontneed(&file, current, extent - current)
        };
        written = Some(Written {
            from: current,
            to: extent,
            drop_error: dropped.err().map(|e| e.to_string()),
            in_memory,
        });
    }
    let sparse = if fill || !created {
        let m = file.metadata().map_err(|e| io_err("stat", e))?;
        has_holes(&m, extent)
    } else {
        false
    };
    Ok(LayoutOutcome {
        created,
        is_block_device: false,
        sparse,
        preallocation_failed,
        written,
        stopped: None,
    })
}

/// The first `extent` bytes of a regular file are not all allocated.
pub(crate) fn has_holes(meta: &std::fs::Metadata, extent: u64) -> bool {
    // st_blocks counts 512-byte units actually allocated.
    meta.file_type().is_file() && meta.blocks() * 512 < extent.min(meta.len())
}

/// A file with every block allocated whose reads still return no stored data
/// somewhere in its first `extent` bytes: preallocated (unwritten) extents,
/// which read as zeros without touching the device, like holes.
pub(crate) fn has_unwritten_extents(path: &Path, extent: u64) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    let end = extent.min(meta.len());
    meta.file_type().is_file()
        && !has_holes(&meta, extent)
        && fd::next_hole(&file, 0).is_ok_and(|hole| hole < end)
}

/// Reserve `from..to` of a file the way fio's `fallocate=` says.
fn preallocate(file: &File, mode: Fallocate, from: u64, to: u64) -> std::io::Result<()> {
    match mode {
        Fallocate::None => Ok(()),
        Fallocate::Truncate => file.set_len(to),
        Fallocate::Posix => fd::allocate(file, Allocate::Posix, from, to - from),
        // fio documents native as falling back to none, silently, when the call fails
        // (no fallocate in the filesystem, or no space for all of it at once).
        Fallocate::Native => fd::allocate(file, Allocate::Extend, from, to - from).or(Ok(())),
        Fallocate::Keep => fd::allocate(file, Allocate::KeepSize, from, to - from),
    }
}

/// Write random data over `from..to`, then sync; `written` hears of the bytes
/// written so far before each chunk, and once `stop` says so no more are
/// written. The bytes written.
fn write_random(
    file: &mut File,
    from: u64,
    to: u64,
    written: &dyn Fn(u64),
    stop: &dyn Fn() -> bool,
) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(from ^ to);
    let mut chunk = vec![0u8; LAYOUT_CHUNK];
    file.seek(SeekFrom::Start(from))?;
    let mut pos = from;
    while pos < to {
        if pos > from && (pos - from).is_multiple_of(SYNC_EVERY) {
            file.sync_data()?;
        }
        if stop() {
            break;
        }
        written(pos - from);
        let n = (to - pos).min(LAYOUT_CHUNK as u64) as usize;
        rng.fill_bytes(&mut chunk[..n]);
        file.write_all(&chunk[..n])?;
        pos += n as u64;
    }
    file.sync_all()?;
    Ok(pos - from)
}

#[cfg(test)]
mod tests {
    use super::super::anchor::resolve;
    use super::*;

    fn ensure_quietly(path: &Path, request: &LayoutRequest) -> Result<LayoutOutcome, TargetError> {
        ensure(path, &resolve(path, None, true)?, request, &())
    }

    /// Records every step it hears of.
    #[derive(Default)]
    struct Steps(std::cell::RefCell<Vec<(String, u64, u64)>>);

    impl Progress for Steps {
        fn step(&self, step: Step<'_>) {
            self.0.borrow_mut().push((
                format!("{} {}", step.doing, step.on),
                step.done,
                step.total,
            ));
        }
    }

    #[test]
    fn a_layout_tells_its_progress_before_every_chunk() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("f");
        let steps = Steps::default();
        let anchor = resolve(&p, None, true).unwrap();
        ensure(
            &p,
            &anchor,
            &request(3 << 20, true, Fallocate::None),
            &steps,
        )
        .unwrap();
        let doing = format!("laying out {}", p.display());
        assert_eq!(
            steps.0.into_inner(),
            [
                (doing.clone(), 0, 3 << 20),
                (doing.clone(), 1 << 20, 3 << 20),
                (doing, 2 << 20, 3 << 20)
            ],
            "expected one step per 1 MiB chunk, with the bytes done before it"
        );
    }

    /// Asks the layout to stop once it has heard of `after` steps.
    struct StopAfter(std::cell::Cell<u32>, u32);

    impl Progress for StopAfter {
        fn step(&self, _: Step<'_>) {
            self.0.set(self.0.get() + 1);
        }
        fn stop_asked(&self) -> bool {
            self.0.get() >= self.1
        }
    }

    #[test]
    fn a_layout_asked_to_stop_writes_no_further_chunk_and_says_how_far_it_got() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("f");
        let anchor = resolve(&p, None, true).unwrap();
        let stop = StopAfter(std::cell::Cell::new(0), 2);
        let outcome = ensure(&p, &anchor, &request(8 << 20, true, Fallocate::None), &stop).unwrap();
        let stopped = outcome.stopped.expect("the layout stopped");
        assert!(
            stopped.contains("the layout stopped with the run (2.0 MiB of 8.0 MiB written"),
            "{stopped}"
        );
        assert_eq!(outcome.written, None);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 2 << 20);
    }

    fn request(extent: u64, fill: bool, fallocate: Fallocate) -> LayoutRequest {
        LayoutRequest {
            extent,
            fill,
            fallocate,
        }
    }

    #[test]
    fn creates_and_fills_a_new_file_without_holes() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("f");
        let out = ensure_quietly(&p, &request(3 << 20, true, Fallocate::Native)).unwrap();
        assert!(out.created && !out.sparse && !out.is_block_device);
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), 3 << 20);
        assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 100);
    }

    /// Cached pages of `path` (cachestat, else mincore); None where neither works.
    fn cached_pages(path: &Path) -> Option<u64> {
        use crate::observe::pagecache::CacheProbe;
        let file = std::sync::Arc::new(File::open(path).unwrap());
        let size = file.metadata().unwrap().len();
        let (mut probe, note) = CacheProbe::new(file, size);
        if let Some(note) = note {
            eprintln!("{note}");
        }
        probe.sample().map(|p| p.cached)
    }

    #[test]
    fn a_new_file_leaves_the_page_cache_after_its_layout() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("f");
        let out = ensure_quietly(&p, &request(8 << 20, true, Fallocate::Native)).unwrap();
        assert_eq!(
            out.written,
            Some(Written {
                from: 0,
                to: 8 << 20,
                drop_error: None,
                in_memory: false,
            }),
            "expected the whole file written and dropped"
        );
        let Some(cached) = cached_pages(&p) else {
            eprintln!("skipped: the page cache cannot be counted here");
            return;
        };
        assert_eq!(
            cached, 0,
            "expected none of the 2048 pages the layout wrote to stay cached, saw {cached}"
        );
    }

    #[test]
    fn extending_a_file_keeps_the_pages_cached_before() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("f");
        let page = iolens_sys::page_size() as u64;
        {
            let mut f = File::create(&p).unwrap();
            f.write_all(&vec![1u8; 4 << 20]).unwrap();
            f.sync_all().unwrap();
        }
        let Some(before) = cached_pages(&p) else {
            eprintln!("skipped: the page cache cannot be counted here");
            return;
        };
        let out = ensure_quietly(&p, &request(8 << 20, true, Fallocate::Native)).unwrap();
        assert_eq!(
            out.written.as_ref().map(|w| (w.from, w.to)),
            Some((4 << 20, 8 << 20)),
            "expected only the missing 4 MiB written, saw {:?}",
            out.written
        );
        let after = cached_pages(&p).unwrap();
        assert_eq!(
            after, before,
            "expected the {before} pages cached before the layout to stay and the {} written to go, saw {after}",
            (4 << 20) / page
        );
        let unchanged = ensure_quietly(&p, &request(8 << 20, true, Fallocate::Native)).unwrap();
        assert_eq!(
            unchanged.written, None,
            "expected nothing written the second time"
        );
    }

    #[test]
    fn reports_holes_in_an_existing_sparse_file() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("sparse");
        File::create(&p).unwrap().set_len(8 << 20).unwrap();
        let out = ensure_quietly(&p, &request(8 << 20, true, Fallocate::Native)).unwrap();
        assert!(!out.created);
        assert!(out.sparse);
    }

    /// (length, allocated bytes) of a file, as fio 3.33 leaves a new file of a 1 MiB
    /// write job under each `fallocate=` mode.
    #[test]
    fn fallocate_modes_shape_a_new_file_as_fio_does() {
        let dir = crate::testutil::scratch_dir();
        for (mode, len, allocated) in [
            (Fallocate::None, 0, false),
            (Fallocate::Native, 1 << 20, true),
            (Fallocate::Posix, 1 << 20, true),
            (Fallocate::Keep, 0, true),
            (Fallocate::Truncate, 1 << 20, false),
        ] {
            let p = dir.path().join(format!("{mode:?}"));
            let out = ensure_quietly(&p, &request(1 << 20, false, mode)).unwrap();
            assert!(out.created);
            let meta = std::fs::metadata(&p).unwrap();
            assert_eq!(meta.len(), len, "{mode:?}");
            assert_eq!(meta.blocks() * 512 >= 1 << 20, allocated, "{mode:?}");
        }
    }
}
