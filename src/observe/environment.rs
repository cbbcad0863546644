//! The environment of a run, captured once before the first I/O: kernel, CPU,
//! clock and idle driver, the devices behind the targets and their queue
//! settings, each target's I/O stack, the targets' filesystems and mount
//! options, the `vm.dirty_*` settings, the run's cgroups and their limits, and
//! daemons or kernel features that change results (udev, DAMON proactive
//! reclaim, free page reporting).

use super::cgroup;
use super::cpu::parse_cpuinfo;
use super::diskstats::{devices_of_stack, split_dev};
use super::stack;
use super::tunables::{DirtyTunables, PROC_SYS_VM};
use crate::model::{DeviceInfo, Environment, FilesystemInfo};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Read a sysfs/procfs value, trimmed; None when absent or empty.
pub(crate) fn read_value(path: impl AsRef<Path>) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let value = text.trim();
    (!value.is_empty()).then(|| value.to_string())
}

fn read_number(path: impl AsRef<Path>) -> Option<u64> {
    read_value(path)?.parse().ok()
}

/// Capture the environment of a run over `targets` (paths and whether each is a block device).
pub(crate) fn capture<'a>(targets: impl IntoIterator<Item = (&'a Path, bool)>) -> Environment {
    let (cpu_model, cpu_count) = std::fs::read_to_string("/proc/cpuinfo")
        .map(|t| parse_cpuinfo(&t))
        .unwrap_or_default();
    let mut env = Environment {
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        kernel_release: read_value("/proc/sys/kernel/osrelease").unwrap_or_default(),
        cpu_model,
        cpu_count,
        cpufreq_governors: cpufreq_governors(),
        cpuidle_driver: read_value("/sys/devices/system/cpu/cpuidle/current_driver"),
        guest_halt_poll_ns: read_number("/sys/module/haltpoll/parameters/guest_halt_poll_ns"),
        clocksource: read_value("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default(),
        udev_running: Path::new("/run/udev/control").exists(),
        damon_running: damon_running(),
        page_reporting_kib: read_number("/sys/module/page_reporting/parameters/reported_kib"),
        vm_dirty: DirtyTunables::read(Path::new(PROC_SYS_VM)).settings(),
        devices: Vec::new(),
        filesystems: Vec::new(),
        stacks: Vec::new(),
        cgroup: None,
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for (path, is_block_device) in targets {
        let target = path.display().to_string();
        if env.stacks.iter().any(|s| s.target == target) {
            continue;
        }
        let stack = stack::walk(path);
        for (name, _) in devices_of_stack(&stack) {
            if !env.devices.iter().any(|d| d.name == name) {
                env.devices.push(device_info(&name));
            }
        }
        env.stacks.push(stack);
        if !is_block_device {
            if let Some(fs) = filesystem_of(path, &mountinfo) {
                env.filesystems.push(fs);
            }
        }
    }
    let devices: Vec<String> = env.devices.iter().map(|d| d.name.clone()).collect();
    env.cgroup = cgroup::capture(&devices);
    env
}

/// Distinct governors over all CPUs; empty without cpufreq (most VMs).
fn cpufreq_governors() -> Vec<String> {
    let mut governors: Vec<String> = std::fs::read_dir("/sys/devices/system/cpu")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(is_cpu_dir_name))
        .filter_map(|e| read_value(e.path().join("cpufreq/scaling_governor")))
        .collect();
    governors.sort();
    governors.dedup();
    governors
}

pub(super) fn is_cpu_dir_name(name: &str) -> bool {
    name.strip_prefix("cpu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Any kdamond running (`state` is "on").
fn damon_running() -> bool {
    std::fs::read_dir("/sys/kernel/mm/damon/admin/kdamonds")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| read_value(e.path().join("state")).as_deref() == Some("on"))
}

/// The selected choice of a sysfs list: a queue's scheduler ("none
/// [mq-deadline] kyber" → mq-deadline), zram's `comp_algorithm`.
pub(crate) fn selected_choice(text: &str) -> Option<String> {
    let text = text.trim();
    let active = text
        .split_whitespace()
        .find_map(|s| s.strip_prefix('[').and_then(|s| s.strip_suffix(']')));
    // A queue with a single choice lists it without brackets.
    active
        .or_else(|| (!text.contains(' ') && !text.is_empty()).then_some(text))
        .map(str::to_string)
}

fn device_info(name: &str) -> DeviceInfo {
    let sys = Path::new("/sys/block").join(name);
    let queue = sys.join("queue");
    let flag = |file: &str| read_number(queue.join(file)).map(|v| v != 0);
    DeviceInfo {
        name: name.to_string(),
        model: read_value(sys.join("device/model")),
        rotational: flag("rotational"),
        scheduler: read_value(queue.join("scheduler")).and_then(|s| selected_choice(&s)),
        nr_requests: read_number(queue.join("nr_requests")),
        write_cache: read_value(queue.join("write_cache")),
        logical_block_bytes: read_number(queue.join("logical_block_size")),
        physical_block_bytes: read_number(queue.join("physical_block_size")),
        stable_writes: flag("stable_writes"),
        backing_file: read_value(sys.join("loop/backing_file")),
    }
}

/// The filesystem holding `path`.
fn filesystem_of(path: &Path, mountinfo: &str) -> Option<FilesystemInfo> {
    let dev = std::fs::metadata(path).ok()?.dev();
    let canonical = std::fs::canonicalize(path).ok()?;
    let mut fs = mount_of(mountinfo, split_dev(dev), &canonical)?;
    fs.target = path.display().to_string();
    Some(fs)
}

/// The mount that holds `canonical` (a path with its links resolved), the file
/// of device `major:minor`: of the device's mounts whose mount point is a
/// prefix of the path, the longest (bind mounts of one filesystem share its
/// device). When no mount has the device (btrfs gives each subvolume a device
/// number of its own), the longest such mount point of all.
pub(crate) fn mount_of(
    mountinfo: &str,
    (major, minor): (u64, u64),
    canonical: &Path,
) -> Option<FilesystemInfo> {
    let dev = format!("{major}:{minor}");
    let (own, others): (Vec<_>, Vec<_>) = parse_mounts(mountinfo).partition(|(d, _)| *d == dev);
    let candidates = if own.is_empty() { others } else { own };
    candidates
        .into_iter()
        .map(|(_, mount)| mount)
        .filter(|m| canonical.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.len())
}

#[cfg(test)]
/// The mounts of device `major:minor` in `/proc/self/mountinfo` text
/// (`target` left empty). Octal escapes in paths (`\040` for space) are decoded.
pub(crate) fn parse_mountinfo(text: &str, major: u64, minor: u64) -> Vec<FilesystemInfo> {
    let dev = format!("{major}:{minor}");
    parse_mounts(text)
        .filter(|(d, _)| *d == dev)
        .map(|(_, mount)| mount)
        .collect()
}

/// Every mount of mountinfo text, with its device number ("major:minor").
pub(crate) fn parse_mounts(text: &str) -> impl Iterator<Item = (&str, FilesystemInfo)> {
    text.lines().filter_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        let mount: Vec<&str> = mount.split(' ').collect();
        let fs: Vec<&str> = fs.split(' ').collect();
        if fs.len() < 3 || mount.len() < 6 {
            return None;
        }
        let info = FilesystemInfo {
            target: String::new(),
            fs_type: fs[0].to_string(),
            mount_point: unescape(mount[4]),
            source: unescape(fs[1]),
            mount_options: format!("{},{}", mount[5], fs[2]),
        };
        Some((mount[2], info))
    })
}

/// Decode mountinfo's `\ooo` octal escapes.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes.get(i + 1..i + 4).filter(|_| bytes[i] == b'\\');
        match escape.and_then(|o| u8::from_str_radix(std::str::from_utf8(o).ok()?, 8).ok()) {
            Some(b) => {
                out.push(b);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
        27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
        30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n\
        51 27 7:1 / /mnt/with\\040space rw,noatime shared:5 - ext4 /dev/loop1 rw\n";

    #[test]
    fn mountinfo_finds_the_mounts_of_a_device() {
        let root = parse_mountinfo(MOUNTINFO, 254, 0);
        assert_eq!(root.len(), 1);
        assert_eq!(root[0].fs_type, "ext4");
        assert_eq!(root[0].mount_point, "/");
        assert_eq!(root[0].source, "/dev/vda");
        assert_eq!(root[0].mount_options, "rw,relatime,rw,discard");
        let loop_mount = parse_mountinfo(MOUNTINFO, 7, 1);
        assert_eq!(loop_mount[0].mount_point, "/mnt/with space");
        assert_eq!(loop_mount[0].mount_options, "rw,noatime,rw");
        assert!(parse_mountinfo(MOUNTINFO, 8, 0).is_empty());
    }

    #[test]
    fn a_file_is_on_the_longest_mount_of_its_device_or_of_all_when_none_has_it() {
        let at = |dev, path: &str| mount_of(MOUNTINFO, dev, Path::new(path)).map(|m| m.mount_point);
        assert_eq!(
            at((7, 1), "/mnt/with space/f").as_deref(),
            Some("/mnt/with space")
        );
        assert_eq!(at((254, 0), "/mnt/f").as_deref(), Some("/"));
        // A btrfs subvolume's files have a device number no mount lists.
        assert_eq!(at((0, 99), "/dev/shm/f").as_deref(), Some("/dev/shm"));
        assert_eq!(at((0, 27), "/elsewhere"), None);
    }

    #[test]
    fn scheduler_is_the_bracketed_one() {
        assert_eq!(
            selected_choice("none [mq-deadline] kyber bfq \n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(
            selected_choice("[none] mq-deadline").as_deref(),
            Some("none")
        );
        assert_eq!(selected_choice("none").as_deref(), Some("none"));
        assert_eq!(selected_choice("none kyber"), None);
        assert_eq!(selected_choice(""), None);
    }

    #[test]
    fn cpu_directories_are_told_from_others() {
        assert!(is_cpu_dir_name("cpu0") && is_cpu_dir_name("cpu127"));
        assert!(
            !is_cpu_dir_name("cpufreq") && !is_cpu_dir_name("cpuidle") && !is_cpu_dir_name("cpu")
        );
    }

    #[test]
    fn captures_this_machine() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let env = capture([(here, false)]);
        assert!(!env.kernel_release.is_empty());
        assert!(env.cpu_count >= 1);
        assert_eq!(env.tool_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(env.filesystems.len(), 1, "{:?}", env.filesystems);
        assert!(!env.filesystems[0].fs_type.is_empty());
        assert_eq!(env.stacks.len(), 1, "{:?}", env.stacks);
        assert_eq!(env.stacks[0].target, here.display().to_string());
    }
}
