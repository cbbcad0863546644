//! Block device counters (`/sys/block/<dev>/stat`) of the devices behind the
//! targets, diffed over the run — fio's "Disk stats" — and the mapping from a
//! target path to the whole disk that serves it.

use crate::report::model::DiskUtil;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The counters of one `/sys/block/<dev>/stat` line we report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub in_queue_ms: u64,
}

/// Parse the contents of a `/sys/block/<dev>/stat` file (11 or more fields).
pub fn parse_stat(text: &str) -> Option<DiskCounters> {
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 11 {
        return None;
    }
    Some(DiskCounters {
        read_ios: v[0],
        read_merges: v[1],
        read_sectors: v[2],
        read_ticks_ms: v[3],
        write_ios: v[4],
        write_merges: v[5],
        write_sectors: v[6],
        write_ticks_ms: v[7],
        in_flight: v[8],
        io_ticks_ms: v[9],
        in_queue_ms: v[10],
    })
}

/// Read the counters of disk `name` now.
pub fn read(name: &str) -> Option<DiskCounters> {
    parse_stat(&std::fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?)
}

/// The whole disk (not the partition) serving `path`: the device itself for a
/// block device node, else the device of the filesystem holding the file.
/// None for filesystems without a block device (tmpfs, overlay).
pub fn disk_of(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = split_dev(dev);
    let sys: PathBuf = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let disk_dir = if sys.join("partition").exists() {
        sys.parent()?.to_path_buf()
    } else {
        sys
    };
    let name = disk_dir.file_name()?.to_str()?.to_string();
    Path::new("/sys/block").join(&name).exists().then_some(name)
}

/// Linux's dev_t encoding (glibc's gnu_dev_major/minor).
fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000);
    let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
    (major, minor)
}

/// Counters of a set of disks taken at the start of a run.
pub struct DiskWatch {
    start: Vec<(String, DiskCounters)>,
}

impl DiskWatch {
    pub fn start<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Self {
        let mut names: Vec<String> = paths.into_iter().filter_map(disk_of).collect();
        names.sort();
        names.dedup();
        let start = names
            .into_iter()
            .filter_map(|n| read(&n).map(|c| (n, c)))
            .collect();
        DiskWatch { start }
    }

    /// Diff against now; `wall` is the run's duration (for utilisation).
    pub fn finish(self, wall: Duration) -> Vec<DiskUtil> {
        let wall_ms = wall.as_millis().max(1) as f64;
        self.start
            .into_iter()
            .filter_map(|(name, before)| {
                let after = read(&name)?;
                let io_ticks_ms = after.io_ticks_ms.saturating_sub(before.io_ticks_ms);
                Some(DiskUtil {
                    read_ios: after.read_ios.saturating_sub(before.read_ios),
                    write_ios: after.write_ios.saturating_sub(before.write_ios),
                    read_merges: after.read_merges.saturating_sub(before.read_merges),
                    write_merges: after.write_merges.saturating_sub(before.write_merges),
                    read_sectors: after.read_sectors.saturating_sub(before.read_sectors),
                    write_sectors: after.write_sectors.saturating_sub(before.write_sectors),
                    read_ticks_ms: after.read_ticks_ms.saturating_sub(before.read_ticks_ms),
                    write_ticks_ms: after.write_ticks_ms.saturating_sub(before.write_ticks_ms),
                    in_queue_ms: after.in_queue_ms.saturating_sub(before.in_queue_ms),
                    io_ticks_ms,
                    util_pct: (io_ticks_ms as f64 / wall_ms * 100.0).min(100.0),
                    name,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_kernel_stat_line() {
        let line = "  4207    12  379010   1544   1026   540   23088  3091   0  3800  4636  0 0 0 0  80  12\n";
        let c = parse_stat(line).unwrap();
        assert_eq!(c.read_ios, 4207);
        assert_eq!(c.read_sectors, 379010);
        assert_eq!(c.write_ios, 1026);
        assert_eq!(c.io_ticks_ms, 3800);
        assert_eq!(c.in_queue_ms, 4636);
    }

    #[test]
    fn rejects_short_or_garbled_lines() {
        assert_eq!(parse_stat("1 2 3"), None);
        assert_eq!(parse_stat("1 2 3 4 5 6 7 8 9 10 x"), None);
    }

    #[test]
    fn splits_dev_numbers_like_glibc() {
        assert_eq!(split_dev((8 << 8) | 1), (8, 1));
        assert_eq!(split_dev((259 << 8) | 3), (259, 3));
        assert_eq!(split_dev((1u64 << 44) | 5), (4096, 5));
        assert_eq!(split_dev(1u64 << 20), (0, 256));
    }

    #[test]
    fn finds_the_disk_behind_the_working_directory_when_there_is_one() {
        // On a disk-backed filesystem the name must exist in /sys/block.
        if let Some(name) = disk_of(Path::new(env!("CARGO_MANIFEST_DIR"))) {
            assert!(read(&name).is_some(), "{name} has no readable stat");
        }
    }
}
