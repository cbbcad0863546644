//! The destructive-write guard: iolens never writes to a block device that
//! holds a filesystem, a partition table or is mounted, unless told to.

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
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
];

/// How many bytes the signature check reads from the start of the device.
pub const PROBE_LEN: usize = 68 * 1024;

/// What a device's first bytes say it holds, if anything.
pub fn detect_signature(head: &[u8]) -> Option<&'static str> {
    SIGNATURES.iter().find_map(|(off, magic, what)| {
        head.get(*off..off + magic.len())
            .filter(|bytes| bytes == magic)
            .map(|_| *what)
    })
}

/// Refuse to write to a device that is mounted or holds recognisable data.
pub fn check_device_is_free_to_overwrite(path: &Path) -> Result<(), TargetError> {
    let refuse = |why: &str| {
        TargetError::Config(format!(
            "{}: {why}; writing would destroy it (pass --allow-device-write, or set allow_mounted_write=1 in the job, to write anyway)",
            path.display()
        ))
    };
    if let Some(mount) = mounted_at(path) {
        return Err(refuse(&format!("the device is mounted on {mount}")));
    }
    match read_signature(path).map_err(|e| TargetError::io(path, "read its first bytes", e))? {
        Some(what) => Err(refuse(&format!("the device holds {what}"))),
        None => Ok(()),
    }
}

/// What the first bytes of the device at `path` say it holds. Read with
/// O_DIRECT: a buffered read would leave the device's first pages in the page
/// cache, and a direct-I/O run with invalidate=0 would then start polluted by
/// iolens itself (seed 000).
pub fn read_signature(path: &Path) -> std::io::Result<Option<&'static str>> {
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
pub fn mounted_at(path: &Path) -> Option<String> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let source = fields.next()?;
        let target = fields.next()?;
        let same = std::fs::canonicalize(source).is_ok_and(|s| s == canonical);
        same.then(|| target.to_string())
    })
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
    fn short_heads_do_not_panic() {
        assert_eq!(detect_signature(&[0x55]), None);
    }
}
