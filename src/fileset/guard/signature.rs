//! What a block device holds, asked of libblkid, the library the system itself
//! uses to recognise filesystems, partition tables, RAID/LVM members and
//! encrypted volumes (through its probe program, `blkid -p`). A short table
//! of the commonest signatures stands in only where `blkid` is missing.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The probe program, found on PATH (util-linux; /sbin and /usr/sbin are
/// searched too since a non-root PATH often lacks them).
const BLKID: &str = "blkid";
const SBIN_DIRS: &[&str] = &["/usr/sbin", "/sbin"];

/// A device that does not answer its probe within this time is not written.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// What a device holds, in words ("a filesystem (ext4), found by blkid").
pub(crate) type Holding = String;

/// What the device at `path` holds, if anything. Asks libblkid; without
/// `blkid` on the machine, the built-in table decides (and says it did).
pub(crate) fn probe(path: &Path) -> std::io::Result<Option<Holding>> {
    match blkid_program() {
        Some(blkid) => probe_with_blkid(&blkid, path),
        None => Ok(read_head(path)?.map(|what| {
            format!("{what}, recognised by iolens' own table (install util-linux's blkid to recognise every signature the system knows)")
        })),
    }
}

fn blkid_program() -> Option<std::path::PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain(SBIN_DIRS.iter().map(Into::into))
        .map(|dir| dir.join(BLKID))
        .find(|candidate| candidate.is_file())
}

/// `blkid -p` (low-level probe: superblocks and partition tables, no cache).
/// Its reads go through the device's page cache; when the device had no
/// cached page before, iolens drops what the probe left, so that a direct-I/O
/// run does not start with pages iolens itself put there (seed 000).
fn probe_with_blkid(blkid: &Path, path: &Path) -> std::io::Result<Option<Holding>> {
    let device = std::fs::File::open(path)?;
    let cached_before = iolens_sys::cachestat::cachestat(&device, 0, 0).map(|c| c.cache);
    let mut child = Command::new(blkid)
        .args(["-p", "-o", "export", "--"])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > PROBE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "blkid did not finish probing it in {} s",
                    PROBE_TIMEOUT.as_secs()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut stdout)?;
    }
    if let Some(mut err) = child.stderr.take() {
        err.read_to_string(&mut stderr)?;
    }
    if cached_before.is_ok_and(|pages| pages == 0) {
        // Best effort: the probe's answer stands whether or not the drop worked.
        let _ = iolens_sys::fd::fadvise_dontneed(&device, 0, 0);
    }
    blkid_verdict(status.code(), &stdout, stderr.trim())
}

/// Read blkid's answer: exit 0 with `KEY=value` lines when it recognised
/// something, 2 when it found nothing, anything else an error (8: several
/// signatures that contradict each other, which is data too).
pub(super) fn blkid_verdict(
    code: Option<i32>,
    export: &str,
    stderr: &str,
) -> std::io::Result<Option<Holding>> {
    match code {
        Some(0) => Ok(Some(describe(export))),
        Some(2) => Ok(None),
        Some(8) => Ok(Some(format!(
            "several contradicting signatures (blkid: {stderr}; `wipefs` lists them)"
        ))),
        _ => Err(std::io::Error::other(format!(
            "blkid could not probe it ({}{})",
            code.map_or("killed by a signal".to_string(), |c| format!("exit {c}")),
            if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            }
        ))),
    }
}

/// Words for blkid's `-o export` lines (TYPE, USAGE, PTTYPE), naming the type as blkid does.
pub(super) fn describe(export: &str) -> Holding {
    let value = |key: &str| {
        export
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .map(str::to_string)
    };
    let found = match (value("TYPE"), value("PTTYPE")) {
        (Some(kind), _) if kind == "swap" => "swap space".to_string(),
        (Some(kind), _) => match value("USAGE").as_deref() {
            Some("filesystem") => format!("a filesystem ({kind})"),
            Some("raid") => format!("a RAID or volume-manager member ({kind})"),
            Some("crypto") => format!("an encrypted volume ({kind})"),
            _ => format!("a {kind} signature"),
        },
        (None, Some(table)) => format!("a partition table ({table})"),
        (None, None) => "a signature blkid recognised".to_string(),
    };
    format!("{found}, found by blkid")
}

/// (byte offset, magic bytes, what it means): the fallback without blkid.
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
    (0, b"hsqs", "a squashfs filesystem"),
    (1024, &[0xe2, 0xe1, 0xf5, 0xe0], "an erofs filesystem"),
    (1024, &[0x10, 0x20, 0xf5, 0xf2], "an f2fs filesystem"),
];

/// How many bytes the fallback reads from the start of the device.
const PROBE_LEN: usize = 68 * 1024;

/// What a device's first bytes say it holds, by the fallback table.
fn detect_signature(head: &[u8]) -> Option<&'static str> {
    SIGNATURES.iter().find_map(|(off, magic, what)| {
        head.get(*off..off + magic.len())
            .filter(|bytes| bytes == magic)
            .map(|_| *what)
    })
}

/// The fallback's read, with O_DIRECT so that no page of the device is left
/// in the page cache by iolens itself.
fn read_head(path: &Path) -> std::io::Result<Option<&'static str>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blkid_exports_are_put_in_words() {
        let ext4 = "DEVNAME=/dev/loop0\nUUID=bb\nVERSION=1.0\nTYPE=ext4\nUSAGE=filesystem\n";
        assert_eq!(describe(ext4), "a filesystem (ext4), found by blkid");
        assert_eq!(
            describe("DEVNAME=/dev/loop0\nTYPE=squashfs\nUSAGE=filesystem\n"),
            "a filesystem (squashfs), found by blkid"
        );
        assert_eq!(
            describe("TYPE=linux_raid_member\nUSAGE=raid\n"),
            "a RAID or volume-manager member (linux_raid_member), found by blkid"
        );
        assert_eq!(
            describe("TYPE=crypto_LUKS\nUSAGE=crypto\n"),
            "an encrypted volume (crypto_LUKS), found by blkid"
        );
        assert_eq!(
            describe("TYPE=swap\nUSAGE=other\n"),
            "swap space, found by blkid"
        );
        assert_eq!(
            describe("DEVNAME=/dev/loop0\nPTUUID=x\nPTTYPE=dos\n"),
            "a partition table (dos), found by blkid"
        );
        assert_eq!(
            describe("PTTYPE=gpt\n"),
            "a partition table (gpt), found by blkid"
        );
    }

    #[test]
    fn blkid_exit_codes_decide() {
        assert_eq!(blkid_verdict(Some(2), "", "").unwrap(), None);
        let found = blkid_verdict(Some(0), "TYPE=minix\nUSAGE=filesystem\n", "").unwrap();
        assert_eq!(
            found.as_deref(),
            Some("a filesystem (minix), found by blkid")
        );
        let ambivalent = blkid_verdict(Some(8), "", "ambivalent result").unwrap();
        assert!(
            ambivalent.is_some_and(|w| w.contains("contradicting")),
            "contradicting signatures are data too"
        );
        let failed = blkid_verdict(Some(4), "", "usage error").unwrap_err();
        assert!(
            failed.to_string().contains("exit 4: usage error"),
            "{failed}"
        );
        assert!(blkid_verdict(None, "", "").is_err());
    }

    #[test]
    fn the_fallback_table_recognises_ext4_gpt_squashfs_and_blank() {
        let mut head = vec![0u8; PROBE_LEN];
        assert_eq!(detect_signature(&head), None);
        head[1080] = 0x53;
        head[1081] = 0xEF;
        assert_eq!(detect_signature(&head), Some("an ext2/3/4 filesystem"));
        let mut gpt = vec![0u8; PROBE_LEN];
        gpt[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(detect_signature(&gpt), Some("a GPT partition table"));
        let mut squash = vec![0u8; PROBE_LEN];
        squash[..4].copy_from_slice(b"hsqs");
        assert_eq!(detect_signature(&squash), Some("a squashfs filesystem"));
        let mut lvm = vec![0u8; PROBE_LEN];
        lvm[536..544].copy_from_slice(b"LVM2 001");
        assert_eq!(detect_signature(&lvm), Some("an LVM physical volume"));
    }

    #[test]
    fn short_heads_do_not_panic() {
        assert_eq!(detect_signature(&[0x55]), None);
    }
}
