//! Room on the filesystem, judged before anything is made: the bytes each file
//! still lacks up to the end the jobs address (a file already that long lacks
//! none), summed per filesystem. What iolens itself writes before the jobs (the
//! layout that read, trim and overwrite jobs need) must fit in the free space,
//! and the jobs' own writes in the filesystem's whole size: a `size=` near 2^64
//! would otherwise write until the disk is full. Writes that fit the filesystem
//! but not its free space are a workload fio runs until ENOSPC (filling a
//! filesystem can be the point), so they only get a warning.

use super::plan::is_block_device;
use super::TargetError;
use iolens_sys::fd;
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

/// What the files on one filesystem still need of it.
struct Demand<'a> {
    /// Bytes the files lack.
    lacking: u64,
    /// Of those, the bytes iolens lays out before the jobs start.
    laid_out: u64,
    space: fd::FsSpace,
    /// The first file lacking bytes, and how many do.
    first: &'a Path,
    files: usize,
}

/// One file the jobs address: its path, the end they address, and whether
/// iolens lays it out (writes it) before the jobs start.
pub(super) struct Addressed<'a> {
    pub path: &'a Path,
    pub extent: u64,
    pub laid_out: bool,
}

/// Refuse a layout larger than the free space, or writes larger than the whole
/// filesystem; the warnings for writes that will end at ENOSPC. Block devices
/// lack nothing.
pub(super) fn check<'a>(
    files: impl IntoIterator<Item = Addressed<'a>>,
) -> Result<Vec<String>, TargetError> {
    let mut demands: HashMap<u64, Demand<'a>> = HashMap::new();
    for file in files {
        if is_block_device(file.path) {
            continue;
        }
        let held = std::fs::metadata(file.path).map_or(0, |m| m.len());
        let lacking = file.extent.saturating_sub(held);
        if lacking == 0 {
            continue;
        }
        // A filesystem that reports no size (many FUSE ones) cannot be judged.
        let Some(space) = space_for(file.path).filter(|space| space.total > 0) else {
            continue;
        };
        let demand = demands.entry(space.fsid).or_insert(Demand {
            lacking: 0,
            laid_out: 0,
            space,
            first: file.path,
            files: 0,
        });
        demand.lacking = demand.lacking.saturating_add(lacking);
        if file.laid_out {
            demand.laid_out = demand.laid_out.saturating_add(lacking);
        }
        demand.files += 1;
    }
    let mut demands: Vec<_> = demands.into_values().collect();
    demands.sort_by_key(|d| d.first);
    let mut warnings = Vec::new();
    for d in &demands {
        let others = match d.files {
            1 => String::new(),
            n => format!(" (and {} more of the jobs' files there)", n - 1),
        };
        let at = format!("{}{others}", d.first.display());
        let fix = "lower size= (or filesize=, nrfiles=, offset=), or make room first";
        if d.laid_out > d.space.available {
            return Err(TargetError::Config(format!(
                "{at}: the jobs' size= needs {} more on its filesystem, laid out before they start, which has {} free; {fix}",
                amount(d.laid_out),
                amount(d.space.available)
            )));
        }
        if d.lacking > d.space.total {
            return Err(TargetError::Config(format!(
                "{at}: the jobs' size= needs {} more, more than its whole filesystem holds ({}); {fix}",
                amount(d.lacking),
                amount(d.space.total)
            )));
        }
        if d.lacking > d.space.available {
            warnings.push(format!(
                "{at}: the jobs write up to {} more than its filesystem has free ({}): they will stop at ENOSPC, as fio's would",
                amount(d.lacking - d.space.available),
                amount(d.space.available)
            ));
        }
    }
    Ok(warnings)
}

/// The room on the filesystem `path` is (or will be) on: its own, or that of the
/// nearest directory above it that exists. None when none can be asked.
fn space_for(path: &Path) -> Option<fd::FsSpace> {
    let at = path
        .ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .find(|p| p.exists())?;
    fd::fs_space(File::open(at).ok()?).ok()
}

/// Bytes, and the same in GiB.
fn amount(bytes: u64) -> String {
    format!(
        "{bytes} bytes ({:.1} GiB)",
        bytes as f64 / f64::from(1u32 << 30)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &Path, extent: u64, laid_out: bool) -> Addressed<'_> {
        Addressed {
            path,
            extent,
            laid_out,
        }
    }

    #[test]
    fn layouts_must_fit_the_free_space_and_writes_the_filesystem() {
        let dir = crate::testutil::scratch_dir();
        let (existing, new) = (dir.path().join("existing"), dir.path().join("new"));
        std::fs::write(&existing, vec![1u8; 8192]).unwrap();
        let (existing, new) = (existing.as_path(), new.as_path());
        assert_eq!(
            check([file(existing, 8192, true), file(new, 1 << 20, true)]).unwrap(),
            Vec::<String>::new()
        );
        // an existing file of the right size lacks nothing, however large the disk's need
        File::create(new).unwrap().set_len(1 << 40).unwrap();
        assert!(check([file(new, 1 << 40, true)]).is_ok());
        std::fs::remove_file(new).unwrap();
        let space = space_for(existing).unwrap();
        let laid_out = check([file(existing, 1 << 60, true), file(new, 1 << 60, true)])
            .unwrap_err()
            .to_string();
        assert!(
            laid_out.contains("existing (and 1 more of the jobs' files there)")
                && laid_out.contains(&format!("needs {} bytes", (2u64 << 60) - 8192))
                && laid_out.contains("free; lower size="),
            "expected the file, the bytes lacking, the room and size=, saw {laid_out}"
        );
        let written = check([file(new, 1 << 60, false)]).unwrap_err().to_string();
        assert!(
            written.contains("more than its whole filesystem holds"),
            "{written}"
        );
        // Writes that fit the filesystem but not its free space: a warning only.
        if space.available < space.total {
            let beyond_free = space.available + (space.total - space.available) / 2;
            let warned = check([file(new, beyond_free, false)]).unwrap();
            assert!(
                warned.len() == 1 && warned[0].contains("will stop at ENOSPC"),
                "{warned:?}"
            );
        }
        assert!(!new.exists(), "expected nothing made");
    }
}
