//! Create and lay out files with real data before they are read, so a
//! benchmark never "reads" holes (which return zeros without touching the device).

use super::TargetError;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// What `ensure` found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutOutcome {
    pub created: bool,
    pub is_block_device: bool,
    /// The first `extent` bytes contain holes.
    pub sparse: bool,
}

const LAYOUT_CHUNK: usize = 1 << 20;

/// Make `path` hold at least `extent` bytes. With `fill`, new bytes are
/// written with random data (and synced); otherwise the file is only extended.
pub fn ensure(path: &Path, extent: u64, fill: bool) -> Result<LayoutOutcome, TargetError> {
    let io_err = |what, e| TargetError::io(path, what, e);
    let meta = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err("stat", e)),
    };
    if let Some(m) = &meta {
        if m.file_type().is_block_device() {
            let f = File::open(path).map_err(|e| io_err("open", e))?;
            let size = iolens_sys::fd::blk_size_bytes(&f)
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
            });
        }
        if !m.file_type().is_file() {
            return Err(TargetError::Config(format!(
                "{}: not a regular file or block device (give a file or a device as filename=)",
                path.display()
            )));
        }
    }
    let created = meta.is_none();
    let current = meta.as_ref().map_or(0, |m| m.len());
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| io_err("create", e))?;
    if current < extent {
        if fill {
            write_random(&mut file, current, extent).map_err(|e| io_err("lay out", e))?;
        } else {
            file.set_len(extent).map_err(|e| io_err("extend", e))?;
        }
    }
    let sparse = if fill || meta.is_some() {
        let m = file.metadata().map_err(|e| io_err("stat", e))?;
        has_holes(&m, extent)
    } else {
        false
    };
    Ok(LayoutOutcome {
        created,
        is_block_device: false,
        sparse,
    })
}

/// The first `extent` bytes of a regular file are not all allocated.
pub fn has_holes(meta: &std::fs::Metadata, extent: u64) -> bool {
    // st_blocks counts 512-byte units actually allocated.
    meta.file_type().is_file() && meta.blocks() * 512 < extent.min(meta.len())
}

fn write_random(file: &mut File, from: u64, to: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(from ^ to);
    let mut chunk = vec![0u8; LAYOUT_CHUNK];
    file.seek(SeekFrom::Start(from))?;
    let mut pos = from;
    while pos < to {
        let n = (to - pos).min(LAYOUT_CHUNK as u64) as usize;
        rng.fill_bytes(&mut chunk[..n]);
        file.write_all(&chunk[..n])?;
        pos += n as u64;
    }
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_and_fills_a_new_file_without_holes() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("f");
        let out = ensure(&p, 3 << 20, true).unwrap();
        assert!(out.created && !out.sparse && !out.is_block_device);
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), 3 << 20);
        assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 100);
    }

    #[test]
    fn reports_holes_in_an_existing_sparse_file() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("sparse");
        File::create(&p).unwrap().set_len(8 << 20).unwrap();
        let out = ensure(&p, 8 << 20, true).unwrap();
        assert!(!out.created);
        assert!(out.sparse);
    }

    #[test]
    fn extends_without_writing_when_not_filling() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("w");
        let out = ensure(&p, 1 << 20, false).unwrap();
        assert!(out.created);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
    }
}
