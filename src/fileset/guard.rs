//! The destructive-write guard: iolens never writes to a block device that
//! holds a filesystem, a partition table, LVM or RAID metadata, or that is in
//! use (mounted, a mounted partition, swap, or held by device-mapper/md), unless told to.

use super::TargetError;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// (byte offset, magic bytes, what it means)
const SIGNATURES: &[(usize, &[u8], &str)] = &[
    (
        510,
        &[0x55, 0xAA],
        "a partition table (MBR/DOS boot sector)",
    ),
    (512, b"EFI PART", "a GPT partition table"),
    (1080, &[0x53, 0xEF], "an ext2/3/4 filesystem"),
    (0, b"XFSB", "an XFS filesystem"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (4086, b"SWAPSPACE2", "swap space"),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (82, b"FAT32   ", "a FAT32 filesystem"),
    (54, b"FAT", "a FAT filesystem"),
    (536, b"LVM2 001", "an LVM physical volume"),
    (
        4096,
        &[0xfc, 0x4e, 0x2b, 0xa9],
        "an md RAID member (superblock 1.2)",
    ),
    (
        0,
        &[0xfc, 0x4e, 0x2b, 0xa9],
        "an md RAID member (superblock 1.1)",
    ),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
];

/// How many bytes the signature check reads from the start of the device.
pub(super) const PROBE_LEN: usize = 68 * 1024;

/// What a device's first bytes say it holds, if anything.
pub(super) fn detect_signature(head: &[u8]) -> Option<&'static str> {
    SIGNATURES.iter().find_map(|(off, magic, what)| {
        head.get(*off..off + magic.len())
            .filter(|bytes| bytes == magic)
            .map(|_| *what)
    })
}

/// What `--allow-destructive` and `allow_mounted_write=1` lift.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct GuardOverrides {
    /// `--allow-destructive` (alias `--allow-device-write`): write whatever the device holds.
    pub destructive: bool,
    /// fio's `allow_mounted_write=1`: write even when the device is in use.
    pub mounted: bool,
}

/// Refuse to write to a device that is in use or holds recognisable data.
pub(crate) fn check_device_is_free_to_overwrite(
    path: &Path,
    allow: GuardOverrides,
) -> Result<(), TargetError> {
    if allow.destructive {
        return Ok(());
    }
    let refuse = |why: &str, flag: &str| {
        TargetError::Config(format!(
            "{}: {why}; writing would destroy it (pass {flag} to write anyway)",
            path.display()
        ))
    };
    if !allow.mounted {
        if let Some(use_) = device_in_use(path) {
            return Err(refuse(
                &use_,
                "--allow-destructive, or allow_mounted_write=1",
            ));
        }
    }
    match read_signature(path).map_err(|e| TargetError::io(path, "read its first bytes", e))? {
        Some(what) => Err(refuse(
            &format!("the device holds {what}"),
            "--allow-destructive",
        )),
        None => Ok(()),
    }
}

/// What the first bytes of the device at `path` say it holds. Read with
/// O_DIRECT: a buffered read would leave the device's first pages in the page
/// cache, and a direct-I/O run with invalidate=0 would then start polluted by
/// iolens itself (seed 000).
pub(crate) fn read_signature(path: &Path) -> std::io::Result<Option<&'static str>> {
    let mut head = iolens_sys::buf::AlignedBuf::new(PROBE_LEN, 4096)?;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(iolens_sys::open_flags::DIRECT)
        .open(path)?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(detect_signature(&head[..got]))
}

/// The mount point of the device at `path`, from /proc/self/mounts.
pub(crate) fn mounted_at(path: &Path) -> Option<String> {
    let node = std::fs::canonicalize(path).ok()?;
    mount_point(&std::fs::read_to_string("/proc/self/mounts").ok()?, &node)
}

/// How the device (or one of its partitions) is in use, if it is.
fn device_in_use(path: &Path) -> Option<String> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let name = canonical.file_name()?.to_str()?.to_string();
    let sys = Path::new("/sys/class/block").join(&name);
    // The device itself and each of its partitions (sdX1, nvme0n1p1, loop0p1 …).
    let mut devices = vec![name.clone()];
    if let Ok(entries) = std::fs::read_dir(&sys) {
        devices.extend(
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(&name) && Path::new("/sys/class/block").join(n).exists()),
        );
    }
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    devices.iter().find_map(|dev| {
        let node = Path::new("/dev").join(dev);
        let what = if *dev == name {
            "the device".to_string()
        } else {
            format!("its partition {}", node.display())
        };
        if let Some(target) = mount_point(&mounts, &node) {
            return Some(format!("{what} is mounted on {target}"));
        }
        if swap_in_use(&swaps, &node) {
            return Some(format!("{what} is in use as swap"));
        }
        let holders = holders(dev);
        (!holders.is_empty()).then(|| {
            format!(
                "{what} is held by {} (device-mapper, LVM or md RAID)",
                holders.join(", ")
            )
        })
    })
}

/// Where /proc/self/mounts says `node` is mounted.
pub(super) fn mount_point(mounts: &str, node: &Path) -> Option<String> {
    mounts.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let source = fields.next()?;
        let target = fields.next()?;
        let same =
            Path::new(source) == node || std::fs::canonicalize(source).is_ok_and(|s| s == node);
        same.then(|| target.to_string())
    })
}

/// Whether /proc/swaps lists `node`.
pub(super) fn swap_in_use(swaps: &str, node: &Path) -> bool {
    swaps
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .any(|source| Path::new(source) == node)
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

    #[test]
    fn recognises_ext4_and_gpt_and_blank() {
        let mut head = vec![0u8; PROBE_LEN];
        assert_eq!(detect_signature(&head), None);
        head[1080] = 0x53;
        head[1081] = 0xEF;
        assert_eq!(detect_signature(&head), Some("an ext2/3/4 filesystem"));
        let mut gpt = vec![0u8; PROBE_LEN];
        gpt[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(detect_signature(&gpt), Some("a GPT partition table"));
    }

    #[test]
    fn md_raid_and_lvm_signatures() {
        let mut head = vec![0u8; PROBE_LEN];
        head[4096..4100].copy_from_slice(&[0xfc, 0x4e, 0x2b, 0xa9]);
        assert_eq!(
            detect_signature(&head),
            Some("an md RAID member (superblock 1.2)")
        );
        let mut lvm = vec![0u8; PROBE_LEN];
        lvm[536..544].copy_from_slice(b"LVM2 001");
        assert_eq!(detect_signature(&lvm), Some("an LVM physical volume"));
    }

    #[test]
    fn mounts_and_swaps_name_the_device() {
        let mounts = "/dev/loop7 /mnt/x ext4 rw 0 0\nproc /proc proc rw 0 0\n";
        assert_eq!(
            mount_point(mounts, Path::new("/dev/loop7")).as_deref(),
            Some("/mnt/x")
        );
        assert_eq!(mount_point(mounts, Path::new("/dev/loop8")), None);
        let swaps = "Filename Type Size Used Priority\n/dev/loop9 partition 1024 0 -2\n";
        assert!(swap_in_use(swaps, Path::new("/dev/loop9")));
        assert!(!swap_in_use(swaps, Path::new("/dev/loop7")));
    }

    #[test]
    fn short_heads_do_not_panic() {
        assert_eq!(detect_signature(&[0x55]), None);
    }
}
