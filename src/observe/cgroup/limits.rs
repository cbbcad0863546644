//! The limits a group lives under: each read from the group and every
//! ancestor up to its hierarchy's mount point, the tightest kept (a limit
//! on a parent caps its children too). v1: `memory.limit_in_bytes`,
//! `memory.memsw.limit_in_bytes`, `blkio.throttle.*_device`,
//! `cpu.cfs_quota_us`/`cfs_period_us`, `cpuset.effective_cpus` (kept when
//! fewer than the machine's online CPUs); v2:
//! `memory.max`/`high`/`swap.max`, `io.max`, `cpu.max`, `cpuset.cpus.effective`.

use crate::model::{CgroupDir, CgroupLimits, CgroupPlace, CgroupVersion, IoLimit};
use std::path::{Path, PathBuf};

/// One of the four limits of an `IoLimit`.
type Field = fn(&mut IoLimit) -> &mut Option<u64>;

/// v1 writes "unlimited" as the largest page-aligned counter (9223372036854771712
/// with 4 KiB pages); anything this large is no limit.
const V1_UNLIMITED: u64 = 1 << 62;

/// A memory or swap limit: v2 "max" and v1's huge value are None.
pub(crate) fn parse_bytes_limit(text: &str) -> Option<u64> {
    let value: u64 = text.trim().parse().ok()?;
    (value < V1_UNLIMITED).then_some(value)
}

/// v2 `cpu.max` ("50000 100000"; "max 100000": no quota) → (quota, period) µs.
pub(crate) fn parse_cpu_max(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace();
    let quota = fields.next()?.parse().ok()?;
    let period = fields.next().map_or(Some(100_000), |p| p.parse().ok())?;
    Some((quota, period))
}

/// v1 `cpu.cfs_quota_us` (-1: no quota) and `cpu.cfs_period_us` → (quota, period) µs.
pub(crate) fn parse_cfs(quota: &str, period: &str) -> Option<(u64, u64)> {
    let quota: i64 = quota.trim().parse().ok()?;
    let period: u64 = period.trim().parse().ok()?;
    (quota > 0).then_some((quota as u64, period))
}

/// Fold `line`'s limits into `limits` (keyed by "maj:min"), keeping the tightest.
fn tighten(limits: &mut Vec<IoLimit>, device: &str, field: Field, value: u64) {
    let index = match limits.iter().position(|l| l.device == device) {
        Some(i) => i,
        None => {
            limits.push(IoLimit {
                device: device.to_string(),
                ..Default::default()
            });
            limits.len() - 1
        }
    };
    let slot = field(&mut limits[index]);
    *slot = Some(slot.map_or(value, |old| old.min(value)));
}

/// v2 `io.max` lines ("8:0 rbps=max wbps=1048576 riops=max wiops=120") into `limits`.
pub(crate) fn parse_io_max(text: &str, limits: &mut Vec<IoLimit>) {
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(device) = fields.next() else {
            continue;
        };
        for pair in fields {
            let Some((key, value)) = pair.split_once('=') else {
                continue;
            };
            let field: Field = match key {
                "rbps" => |l| &mut l.read_bytes_per_sec,
                "wbps" => |l| &mut l.write_bytes_per_sec,
                "riops" => |l| &mut l.read_iops,
                "wiops" => |l| &mut l.write_iops,
                _ => continue,
            };
            if let Ok(value) = value.parse() {
                tighten(limits, device, field, value);
            }
        }
    }
}

/// The v1 throttle files, each with the field of `IoLimit` it sets.
const V1_THROTTLE: [(&str, Field); 4] = [
    ("blkio.throttle.read_bps_device", |l| {
        &mut l.read_bytes_per_sec
    }),
    ("blkio.throttle.write_bps_device", |l| {
        &mut l.write_bytes_per_sec
    }),
    ("blkio.throttle.read_iops_device", |l| &mut l.read_iops),
    ("blkio.throttle.write_iops_device", |l| &mut l.write_iops),
];

/// One v1 `blkio.throttle.*_device` file ("7:3 10485760" per line) into `limits`.
pub(crate) fn parse_throttle_device(text: &str, field: Field, limits: &mut Vec<IoLimit>) {
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        if let (Some(device), Some(Ok(value))) = (fields.next(), fields.next().map(str::parse)) {
            tighten(limits, device, field, value);
        }
    }
}

/// The group's directory and each ancestor's, up to the mount point.
fn up_the_tree(group: &CgroupDir) -> Vec<PathBuf> {
    let top = Path::new(&group.mount_point);
    let mut dirs = Vec::new();
    let mut dir = Some(Path::new(&group.dir));
    while let Some(d) = dir {
        dirs.push(d.to_path_buf());
        if d == top || !d.starts_with(top) {
            break;
        }
        dir = d.parent();
    }
    dirs
}

fn read_file(dir: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(file)).ok()
}

/// The tightest byte limit in `file` over the group and its ancestors.
fn tightest_bytes(group: &CgroupDir, file: &str) -> Option<u64> {
    up_the_tree(group)
        .iter()
        .filter_map(|d| parse_bytes_limit(&read_file(d, file)?))
        .min()
}

/// (name, "maj:min") of each of `devices` (kernel names) under `root`'s /sys/class/block.
pub(crate) fn device_numbers(root: &Path, devices: &[String]) -> Vec<(String, String)> {
    devices
        .iter()
        .filter_map(|name| {
            let dev = read_file(&root.join("sys/class/block").join(name), "dev")?;
            Some((name.clone(), dev.trim().to_string()))
        })
        .collect()
}

/// The limits that apply to `place`, with `root` the filesystem root; the io
/// limits only on `devices` (kernel names of the devices behind the targets).
pub(crate) fn read(place: &CgroupPlace, root: &Path, devices: &[String]) -> CgroupLimits {
    let mut limits = CgroupLimits::default();
    if let Some(memory) = &place.memory {
        limits.memory_max_bytes = match memory.version {
            CgroupVersion::V1 => tightest_bytes(memory, "memory.limit_in_bytes"),
            CgroupVersion::V2 => tightest_bytes(memory, "memory.max"),
        };
        match memory.version {
            CgroupVersion::V1 => {
                let with_swap = tightest_bytes(memory, "memory.memsw.limit_in_bytes");
                limits.swap_max_bytes = with_swap
                    .zip(limits.memory_max_bytes)
                    .map(|(both, memory)| both.saturating_sub(memory));
            }
            CgroupVersion::V2 => {
                limits.memory_high_bytes = tightest_bytes(memory, "memory.high");
                limits.swap_max_bytes = tightest_bytes(memory, "memory.swap.max");
            }
        }
    }
    if let Some(io) = &place.io {
        limits.io = io_limits(io, root, devices);
    }
    if let Some(cpu) = &place.cpu {
        let quota = up_the_tree(cpu)
            .iter()
            .filter_map(|d| match cpu.version {
                CgroupVersion::V1 => parse_cfs(
                    &read_file(d, "cpu.cfs_quota_us")?,
                    &read_file(d, "cpu.cfs_period_us")?,
                ),
                CgroupVersion::V2 => parse_cpu_max(&read_file(d, "cpu.max")?),
            })
            .filter(|&(_, period)| period > 0)
            .min_by(|a, b| (a.0 as f64 / a.1 as f64).total_cmp(&(b.0 as f64 / b.1 as f64)));
        (limits.cpu_quota_us, limits.cpu_period_us) = (quota.map(|q| q.0), quota.map(|q| q.1));
    }
    if let Some(cpuset) = &place.cpuset {
        let file = match cpuset.version {
            CgroupVersion::V1 => "cpuset.effective_cpus",
            CgroupVersion::V2 => "cpuset.cpus.effective",
        };
        let own = read_file(Path::new(&cpuset.dir), file).map(|t| t.trim().to_string());
        let all =
            read_file(&root.join("sys/devices/system/cpu"), "online").map(|t| t.trim().to_string());
        limits.cpuset_cpus = own.filter(|own| !own.is_empty() && Some(own) != all.as_ref());
    }
    limits
}

/// The io limits of `group` and its ancestors on `devices`, tightest kept.
fn io_limits(group: &CgroupDir, root: &Path, devices: &[String]) -> Vec<IoLimit> {
    let mut all = Vec::new();
    for dir in up_the_tree(group) {
        match group.version {
            CgroupVersion::V1 => {
                for (file, field) in V1_THROTTLE {
                    if let Some(text) = read_file(&dir, file) {
                        parse_throttle_device(&text, field, &mut all);
                    }
                }
            }
            CgroupVersion::V2 => {
                if let Some(text) = read_file(&dir, "io.max") {
                    parse_io_max(&text, &mut all);
                }
            }
        }
    }
    let numbers = device_numbers(root, devices);
    all.into_iter()
        .filter(IoLimit::is_set)
        .filter_map(|mut limit| {
            let (name, _) = numbers.iter().find(|(_, dev)| *dev == limit.device)?;
            limit.name = name.clone();
            Some(limit)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::cgroup::place_of;
    use crate::observe::cgroup::tests::fixture;

    #[test]
    fn unlimited_is_none_in_both_versions() {
        assert_eq!(parse_bytes_limit("max\n"), None);
        assert_eq!(parse_bytes_limit("9223372036854771712\n"), None);
        assert_eq!(parse_bytes_limit("134217728\n"), Some(134217728));
        assert_eq!(parse_bytes_limit("0\n"), Some(0));
    }

    #[test]
    fn reads_cpu_quotas_of_both_versions() {
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("50000 100000\n"), Some((50000, 100000)));
        assert_eq!(parse_cfs("-1\n", "100000\n"), None);
        assert_eq!(parse_cfs("25000\n", "50000\n"), Some((25000, 50000)));
    }

    #[test]
    fn reads_io_max_keeping_the_tightest_and_skipping_max() {
        let mut limits = Vec::new();
        parse_io_max(
            "8:16 rbps=2097152 wbps=max riops=max wiops=120\n",
            &mut limits,
        );
        parse_io_max(
            "8:16 rbps=1048576 wbps=max riops=max wiops=500\n",
            &mut limits,
        );
        assert_eq!(limits.len(), 1);
        let l = &limits[0];
        assert_eq!(
            (
                l.read_bytes_per_sec,
                l.write_bytes_per_sec,
                l.read_iops,
                l.write_iops
            ),
            (Some(1048576), None, None, Some(120)),
            "expected the tighter of the two lines, got {l:?}"
        );
    }

    #[test]
    fn reads_v1_throttle_files() {
        let mut limits = Vec::new();
        parse_throttle_device(
            "7:3 10485760\n8:0 5\n",
            |l| &mut l.write_bytes_per_sec,
            &mut limits,
        );
        assert_eq!(limits.len(), 2);
        assert_eq!(limits[0].write_bytes_per_sec, Some(10485760));
        assert_eq!(limits[1].device, "8:0");
    }

    fn limits_of(version: &str) -> CgroupLimits {
        let root = fixture(version);
        let text = |f: &str| std::fs::read_to_string(root.join(f)).unwrap();
        let place = place_of(&text("proc_cgroup"), &text("mountinfo"), &root);
        read(&place, &root, &["loop3".to_string()])
    }

    #[test]
    fn the_v1_fixture_tree_limits_come_from_the_group_and_its_parent() {
        let limits = limits_of("v1");
        assert_eq!(
            limits.memory_max_bytes,
            Some(128 << 20),
            "expected the parent's 128 MiB, got {limits:?}"
        );
        assert_eq!(
            limits.swap_max_bytes,
            Some(64 << 20),
            "expected memsw 192 MiB - 128 MiB"
        );
        assert_eq!(limits.memory_high_bytes, None, "v1 has no memory.high");
        assert_eq!(
            limits.io,
            vec![IoLimit {
                device: "7:3".into(),
                name: "loop3".into(),
                read_bytes_per_sec: None,
                write_bytes_per_sec: Some(10 << 20),
                read_iops: Some(500),
                write_iops: None,
            }],
            "expected loop3's limits (the parent's tighter read iops), sda's left out"
        );
        assert_eq!(
            (limits.cpu_quota_us, limits.cpu_period_us),
            (Some(50000), Some(100000))
        );
        assert_eq!(limits.cpu_quota_cpus(), Some(0.5));
        assert_eq!(
            limits.cpuset_cpus.as_deref(),
            Some("0-1"),
            "expected 2 of the 4 online CPUs, also when the whole mounted tree has only those"
        );
        assert_eq!(
            limits.dirty_threshold_bytes, None,
            "v1 has no per-group dirty limits"
        );
    }

    #[test]
    fn the_v2_fixture_tree_limits_come_from_the_group_and_its_parent() {
        let limits = limits_of("v2");
        assert_eq!(
            limits.memory_max_bytes,
            Some(256 << 20),
            "expected the parent's memory.max, got {limits:?}"
        );
        assert_eq!(limits.memory_high_bytes, Some(192 << 20));
        assert_eq!(limits.swap_max_bytes, Some(0));
        assert_eq!(
            limits.io.len(),
            1,
            "expected loop3 only, got {:?}",
            limits.io
        );
        assert_eq!(limits.io[0].read_bytes_per_sec, Some(1 << 20));
        assert_eq!(
            (limits.cpu_quota_us, limits.cpu_period_us),
            (Some(50000), Some(100000))
        );
        assert_eq!(
            limits.cpuset_cpus, None,
            "expected no cpuset: not enabled for the group"
        );
        assert!(limits.any());
    }
}
