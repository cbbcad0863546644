//! Whether a block device, or one of its partitions, is in use: mounted in any
//! mount namespace (a container's, a service's private /tmp, not only ours),
//! active as swap, or held by a device stacked on it (device-mapper, md).

use crate::observe::diskstats::split_dev;
use crate::observe::environment::parse_mounts;
use std::collections::HashSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// A device node's number as mountinfo writes it ("major:minor").
type DevNumber = String;

/// One block device to look for: the whole device or a partition of it.
struct Member {
    /// "the device" or "its partition /dev/sdb1".
    what: String,
    /// Its sysfs name (sdb1), for its holders.
    name: String,
    number: DevNumber,
}

/// How the device at `path` (or one of its partitions) is in use, if it is.
pub(crate) fn device_in_use(path: &Path) -> Option<String> {
    let members = members_of(path)?;
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let mounted = mounted_members(&members);
    members.iter().find_map(|member| {
        if let Some(place) = mounted.iter().find(|m| m.number == member.number) {
            return Some(format!(
                "{} is mounted on {}",
                member.what,
                place.describe()
            ));
        }
        if swaps_list(&swaps, &member.number) {
            return Some(format!("{} is in use as swap", member.what));
        }
        let holders = holders(&member.name);
        (!holders.is_empty()).then(|| {
            format!(
                "{} is held by {} (device-mapper, LVM or md RAID)",
                member.what,
                holders.join(", ")
            )
        })
    })
}

/// The device and its partitions (sdX1, nvme0n1p1, loop0p1 …), from sysfs.
fn members_of(path: &Path) -> Option<Vec<Member>> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let name = canonical.file_name()?.to_str()?.to_string();
    let sys = Path::new("/sys/class/block");
    let number = |dev: &str| {
        std::fs::read_to_string(sys.join(dev).join("dev"))
            .ok()
            .map(|n| n.trim().to_string())
    };
    let mut members = vec![Member {
        what: "the device".to_string(),
        number: number(&name).or_else(|| node_number(&canonical))?,
        name: name.clone(),
    }];
    let mut partitions: Vec<String> = std::fs::read_dir(sys.join(&name))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(&name) && sys.join(n).join("partition").exists())
        .collect();
    partitions.sort();
    members.extend(partitions.into_iter().filter_map(|part| {
        Some(Member {
            what: format!("its partition /dev/{part}"),
            number: number(&part)?,
            name: part,
        })
    }));
    Some(members)
}

/// The "major:minor" of a block device node.
fn node_number(node: &Path) -> Option<DevNumber> {
    let meta = std::fs::metadata(node).ok()?;
    meta.file_type().is_block_device().then(|| {
        let (major, minor) = split_dev(meta.rdev());
        format!("{major}:{minor}")
    })
}

/// Where one member is mounted, and in whose namespace.
#[derive(Debug, PartialEq)]
struct Mounted {
    number: DevNumber,
    mount_point: String,
    /// None: our own namespace; else a process living in the other one.
    seen_by: Option<(u32, String)>,
}

impl Mounted {
    fn describe(&self) -> String {
        match &self.seen_by {
            None => self.mount_point.clone(),
            Some((pid, comm)) => format!(
                "{} in another mount namespace (that of process {pid}, {comm})",
                self.mount_point
            ),
        }
    }
}

/// The mounts of `members` in every mount namespace of the machine: ours
/// first, then one process's mountinfo for each other namespace.
fn mounted_members(members: &[Member]) -> Vec<Mounted> {
    let numbers: HashSet<&str> = members.iter().map(|m| m.number.as_str()).collect();
    let ns_of = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
    let mut seen = HashSet::new();
    seen.extend(ns_of("self"));
    let mut found = mounts_in(
        &std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
        &numbers,
        None,
    );
    let pids = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok());
    for pid in pids {
        // A process that ended meanwhile, or one we may not look into, is skipped.
        let Some(ns) = ns_of(&pid.to_string()) else {
            continue;
        };
        if !seen.insert(ns) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")) else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        found.extend(mounts_in(
            &text,
            &numbers,
            Some((pid, comm.trim().to_string())),
        ));
    }
    found
}

/// The mounts in one namespace's mountinfo whose device is one of `numbers`:
/// by the mount's device number, or by its source node's (btrfs reports an
/// anonymous device number of its own for each mount).
fn mounts_in(
    mountinfo: &str,
    numbers: &HashSet<&str>,
    seen_by: Option<(u32, String)>,
) -> Vec<Mounted> {
    parse_mounts(mountinfo)
        .filter_map(|(number, mount)| {
            let number = if numbers.contains(number) {
                number.to_string()
            } else {
                node_number(Path::new(&mount.source)).filter(|n| numbers.contains(n.as_str()))?
            };
            Some(Mounted {
                number,
                mount_point: mount.mount_point,
                seen_by: seen_by.clone(),
            })
        })
        .collect()
}

/// Whether /proc/swaps lists the device numbered `number`.
fn swaps_list(swaps: &str, number: &str) -> bool {
    swaps
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .any(|source| node_number(Path::new(source)).is_some_and(|n| n == number))
}

/// Devices stacked on `dev` (its /sys holders: dm-*, md*).
fn holders(dev: &str) -> Vec<String> {
    let dir = Path::new("/sys/class/block").join(dev).join("holders");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 253:1 / / rw,relatime - ext4 /dev/vda rw
40 22 7:3 / /mnt/with\\040space rw,relatime - squashfs /dev/loop3 ro
41 22 0:52 / /srv rw,relatime - btrfs /dev/nonexistent-node rw
";

    #[test]
    fn a_mount_is_found_by_its_device_number_in_any_namespace() {
        let numbers: HashSet<&str> = ["7:3"].into();
        let found = mounts_in(MOUNTINFO, &numbers, Some((4242, "sh".into())));
        assert_eq!(
            found,
            vec![Mounted {
                number: "7:3".into(),
                mount_point: "/mnt/with space".into(),
                seen_by: Some((4242, "sh".into())),
            }]
        );
        assert_eq!(
            found[0].describe(),
            "/mnt/with space in another mount namespace (that of process 4242, sh)"
        );
        let none: HashSet<&str> = ["7:9"].into();
        assert!(mounts_in(MOUNTINFO, &none, None).is_empty());
    }

    #[test]
    fn our_own_mounts_name_only_the_mount_point() {
        let numbers: HashSet<&str> = ["253:1"].into();
        let found = mounts_in(MOUNTINFO, &numbers, None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].describe(), "/");
    }
}
