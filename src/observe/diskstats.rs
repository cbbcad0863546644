//! Block device counters (`/sys/block/<dev>/stat`) of the devices behind the
//! targets, diffed over the run — fio's "Disk stats" — and the mapping from a
//! target path to the whole disk that serves it.

use crate::model::{DeviceCounters, DiskUtil, Layer, TargetStack};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Parse the contents of a `/sys/block/<dev>/stat` file: 11 fields, then
/// 4 of discards (4.18+) and 2 of flushes (5.5+) where the kernel has them.
pub(crate) fn parse_stat(text: &str) -> Option<DeviceCounters> {
    // No allocation: the sampler parses this every interval.
    const REQUIRED: usize = 11;
    let mut v = [0u64; 17];
    let mut fields = text.split_whitespace();
    for (i, slot) in v.iter_mut().enumerate() {
        match fields.next() {
            Some(field) => *slot = field.parse().ok()?,
            None if i >= REQUIRED => break,
            None => return None,
        }
    }
    Some(DeviceCounters {
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
        discard_ios: v[11],
        discard_merges: v[12],
        discard_sectors: v[13],
        discard_ticks_ms: v[14],
        flush_ios: v[15],
        flush_ticks_ms: v[16],
    })
}

/// Read the counters of disk `name` now.
pub(crate) fn read(name: &str) -> Option<DeviceCounters> {
    parse_stat(&std::fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?)
}

/// The whole disk (not the partition) serving `path`: the device itself for a
/// block device node, else the device of the filesystem holding the file.
/// None for filesystems without a block device (tmpfs, overlay).
pub(crate) fn disk_of(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    whole_disk(&block_dir(Path::new("/sys"), split_dev(dev))?)
}

/// Every disk whose counters show the I/O of the stack's target, with how it
/// was reached: the disk of the file's filesystem (or the device itself), then
/// through a loop device to its backing file's disk, and through
/// device-mapper/md to the disks below; a partition counts as its disk (whose
/// line follows it in the stack). Deduplicated, in the stack's order.
pub(crate) fn devices_of_stack(stack: &TargetStack) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for (i, at) in stack.layers.iter().enumerate() {
        let Some(name) = at.layer.device_name() else {
            continue;
        };
        if matches!(at.layer, Layer::Partition { .. }) || found.iter().any(|(d, _)| d == name) {
            continue;
        }
        found.push((name.to_string(), via(stack, i)));
    }
    found
}

/// How layer `i` of `stack` was reached: the nearest loop, device-mapper or
/// md device above it, or the target itself.
fn via(stack: &TargetStack, i: usize) -> String {
    let mut depth = stack.layers[i].depth;
    for above in stack.layers[..i].iter().rev() {
        if above.depth >= depth {
            continue;
        }
        depth = above.depth;
        match &above.layer {
            Layer::Loop { name, .. } => return format!("backing file of {name}"),
            Layer::DeviceMapper { name, .. } | Layer::Raid { name, .. } => {
                return format!("below {name}")
            }
            _ => {}
        }
    }
    format!("holds {}", stack.target)
}

/// The whole-disk name of a /sys block directory (a partition's parent).
fn whole_disk(sys_dir: &Path) -> Option<String> {
    let sys = std::fs::canonicalize(sys_dir).ok()?;
    let disk_dir = disk_of_partition(&sys).unwrap_or(&sys);
    let name = disk_dir.file_name()?.to_str()?.to_string();
    Path::new("/sys/block").join(&name).exists().then_some(name)
}

/// The /sys directory of block device `major:minor` below sysfs root `sys`,
/// links resolved (a partition's directory sits inside its disk's).
pub(crate) fn block_dir(sys: &Path, (major, minor): (u64, u64)) -> Option<PathBuf> {
    std::fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}"))).ok()
}

/// The disk's directory when `block_dir` (links resolved) is a partition's.
pub(crate) fn disk_of_partition(block_dir: &Path) -> Option<&Path> {
    if block_dir.join("partition").exists() {
        block_dir.parent()
    } else {
        None
    }
}

/// Linux's dev_t encoding (glibc's gnu_dev_major/minor).
pub(crate) fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000);
    let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
    (major, minor)
}

/// Counters of a set of disks taken at the start of a run.
pub(crate) struct DiskWatch {
    start: Vec<(String, DeviceCounters)>,
}

impl DiskWatch {
    pub(crate) fn start<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Self {
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
    pub(crate) fn finish(self, wall: Duration) -> Vec<DiskUtil> {
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
    fn a_stacks_devices_say_how_each_was_reached() {
        let disk = |name: &str| Layer::Disk {
            name: name.into(),
            model: None,
            rotational: None,
        };
        let stack = TargetStack::of(
            "/mnt/f",
            vec![
                (0, Layer::filesystem("btrfs", "/mnt", "/dev/loop3", &[])),
                (
                    1,
                    Layer::Loop {
                        name: "loop3".into(),
                        direct_io: true,
                        backing_file: "/data/img".into(),
                    },
                ),
                (2, Layer::filesystem("xfs", "/data", "/dev/md0", &[])),
                (
                    3,
                    Layer::Raid {
                        name: "md0".into(),
                        level: Some("raid1".into()),
                    },
                ),
                (
                    4,
                    Layer::Partition {
                        name: "sda1".into(),
                        disk: "sda".into(),
                    },
                ),
                (5, disk("sda")),
                (4, disk("sdb")),
            ],
        );
        let found = devices_of_stack(&stack);
        let found: Vec<(&str, &str)> = found.iter().map(|(d, v)| (&d[..], &v[..])).collect();
        assert_eq!(
            found,
            [
                ("loop3", "holds /mnt/f"),
                ("md0", "backing file of loop3"),
                ("sda", "below md0"),
                ("sdb", "below md0")
            ]
        );
    }

    #[test]
    fn parses_a_kernel_stat_line() {
        let line = "  4207    12  379010   1544   1026   540   23088  3091   0  3800  4636  0 0 0 0  80  12\n";
        let c = parse_stat(line).unwrap();
        assert_eq!(c.read_ios, 4207);
        assert_eq!(c.read_sectors, 379010);
        assert_eq!(c.write_ios, 1026);
        assert_eq!(c.io_ticks_ms, 3800);
        assert_eq!(c.in_queue_ms, 4636);
        assert_eq!(c.flush_ios, 80);
        assert_eq!(c.flush_ticks_ms, 12);
    }

    #[test]
    fn an_old_kernels_line_has_no_discards_or_flushes() {
        let c = parse_stat("1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        assert_eq!((c.in_queue_ms, c.discard_ios, c.flush_ios), (11, 0, 0));
        let discards = parse_stat("1 2 3 4 5 6 7 8 9 10 11 7 0 64 3\n").unwrap();
        assert_eq!((discards.discard_sectors, discards.flush_ios), (64, 0));
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
