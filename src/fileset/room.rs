//! A layout larger than the room on its filesystem is refused before anything is
//! made: the bytes each file still lacks up to the end the jobs address (a file
//! already that long lacks none), summed per filesystem, against what the
//! filesystem has free. A `size=` near 2^64 would otherwise write until the disk
//! is full.

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
    available: u64,
    /// The first file lacking bytes, and how many do.
    first: &'a Path,
    files: usize,
}

/// Refuse when the files `(path, end the jobs address)` lack more bytes on a
/// filesystem than it has free. Block devices lack nothing.
pub(super) fn check<'a>(
    files: impl IntoIterator<Item = (&'a Path, u64)>,
) -> Result<(), TargetError> {
    let mut demands: HashMap<u64, Demand<'a>> = HashMap::new();
    for (path, extent) in files {
        if is_block_device(path) {
            continue;
        }
        let held = std::fs::metadata(path).map_or(0, |m| m.len());
        let lacking = extent.saturating_sub(held);
        if lacking == 0 {
            continue;
        }
        let Some(space) = space_for(path) else {
            continue;
        };
        let demand = demands.entry(space.fsid).or_insert(Demand {
            lacking: 0,
            available: space.available,
            first: path,
            files: 0,
        });
        demand.lacking = demand.lacking.saturating_add(lacking);
        demand.files += 1;
    }
    let mut short: Vec<_> = demands
        .values()
        .filter(|d| d.lacking > d.available)
        .collect();
    short.sort_by_key(|d| d.first);
    let Some(d) = short.first() else {
        return Ok(());
    };
    let others = match d.files {
        1 => String::new(),
        n => format!(" (and {} more of the jobs' files there)", n - 1),
    };
    Err(TargetError::Config(format!(
        "{}{others}: the jobs' size= needs {} more on its filesystem, which has {} free; lower size= (or filesize=, nrfiles=, offset=), or make room first",
        d.first.display(),
        amount(d.lacking),
        amount(d.available)
    )))
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

    #[test]
    fn files_that_fit_pass_and_one_too_large_is_refused_naming_the_sizes() {
        let dir = crate::testutil::scratch_dir();
        let (existing, new) = (dir.path().join("existing"), dir.path().join("new"));
        std::fs::write(&existing, vec![1u8; 8192]).unwrap();
        assert!(check([(existing.as_path(), 8192), (new.as_path(), 1 << 20)]).is_ok());
        // an existing file of the right size lacks nothing, however large the disk's need
        File::create(&new).unwrap().set_len(1 << 40).unwrap();
        assert!(check([(new.as_path(), 1 << 40)]).is_ok());
        std::fs::remove_file(&new).unwrap();
        let message = check([(existing.as_path(), 1 << 60), (new.as_path(), 1 << 60)])
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("existing (and 1 more of the jobs' files there)")
                && message.contains(&format!("needs {} bytes", (2u64 << 60) - 8192))
                && message.contains("free; lower size="),
            "expected the file, the bytes lacking, the room and size=, saw {message}"
        );
        assert!(!new.exists(), "expected nothing made");
    }
}
