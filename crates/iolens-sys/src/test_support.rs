//! Helpers shared by this crate's unit tests.

use crate::IoRing;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// A temporary directory inside the build's target directory: a real filesystem,
/// unlike a tmpfs `/tmp`, so `O_DIRECT` works there.
pub(crate) fn scratch_dir() -> TempDir {
    let exe = std::env::current_exe().expect("test binary path");
    // The test binary lives in <target>/<profile>/deps/.
    let profile_dir = exe.ancestors().nth(2).expect("target/<profile> directory");
    tempfile::tempdir_in(profile_dir).expect("scratch dir under target/")
}

/// A read/write file `data` of `len` bytes (zeros) in a fresh scratch directory.
pub(crate) fn scratch_file(len: u64) -> (TempDir, File) {
    let dir = scratch_dir();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.path().join("data"))
        .expect("create scratch file");
    file.set_len(len).expect("size scratch file");
    (dir, file)
}

/// A loop device over a file, detached on drop (also when the test fails).
pub(crate) struct LoopDevice(PathBuf);

impl LoopDevice {
    /// `None` (after printing why) when not root or no loop device can be made.
    pub(crate) fn attach(backing: &Path) -> Option<Self> {
        // SAFETY: geteuid has no preconditions and touches no memory.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: loop devices need root");
            return None;
        }
        let out = match Command::new("losetup")
            .arg("-f")
            .arg("--show")
            .arg(backing)
            .output()
        {
            Ok(out) if out.status.success() => out,
            Ok(out) => {
                eprintln!(
                    "skipped: losetup failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                return None;
            }
            Err(e) => {
                eprintln!("skipped: cannot run losetup: {e}");
                return None;
            }
        };
        Some(Self(PathBuf::from(
            String::from_utf8_lossy(&out.stdout).trim(),
        )))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let detached = Command::new("losetup").arg("-d").arg(&self.0).status();
        if !matches!(detached, Ok(status) if status.success()) {
            eprintln!(
                "warning: could not detach {}: {detached:?}",
                self.0.display()
            );
        }
    }
}

/// A second, `O_DIRECT` descriptor of the `data` file in a scratch directory.
pub(crate) fn open_direct(dir: &TempDir) -> File {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(crate::fd::open_flags::DIRECT)
        .open(dir.path().join("data"))
        .expect("open scratch file with O_DIRECT")
}

/// Queue depth and block size of the ring tests.
pub(crate) const DEPTH: u32 = 8;
pub(crate) const BS: usize = 4096;

fn pattern(slot: u32) -> Vec<u8> {
    (0..BS)
        .map(|i| (i as u32 * 3 + slot * 17 + 1) as u8)
        .collect()
}

/// Blocks land in reverse slot order, so a ring mixing up slots or offsets fails.
fn offset(slot: u32) -> u64 {
    u64::from(DEPTH - 1 - slot) * BS as u64
}

/// Through `ring` (DEPTH slots of BS bytes on one file), write DEPTH blocks concurrently,
/// check them through `plain` (a buffered descriptor of the same file), then read them
/// back concurrently.
pub(crate) fn ring_roundtrip(ring: &mut impl IoRing, plain: &File) {
    for slot in 0..DEPTH {
        ring.slot_mut(slot).copy_from_slice(&pattern(slot));
        ring.prep_write(slot, 0, offset(slot), BS as u32).unwrap();
    }
    assert_eq!(
        ring.pending(),
        DEPTH,
        "expected every prepared write pending"
    );
    // Under SQPOLL the kernel thread may already have taken some: they count as submitted.
    assert_eq!(
        ring.submit().unwrap(),
        DEPTH,
        "expected submit to hand over every prepared write"
    );
    assert_eq!(ring.in_flight(), DEPTH, "expected every write in flight");
    let mut results = Vec::new();
    while results.len() < DEPTH as usize {
        ring.reap(1, DEPTH, |slot, res| results.push((slot, res)))
            .unwrap();
    }
    assert!(
        results.iter().all(|&(_, res)| res == BS as i64),
        "{results:?}"
    );
    assert_eq!(
        ring.in_flight(),
        0,
        "expected nothing in flight after reaping"
    );

    for slot in 0..DEPTH {
        let mut on_disk = vec![0; BS];
        plain.read_exact_at(&mut on_disk, offset(slot)).unwrap();
        assert!(
            on_disk == pattern(slot),
            "slot {slot}: expected its pattern on disk"
        );
        ring.slot_mut(slot).fill(0);
        ring.prep_read(slot, 0, offset(slot), BS as u32).unwrap();
    }
    ring.submit().unwrap();
    let mut reaped = 0;
    while reaped < DEPTH {
        reaped += ring
            .reap(DEPTH - reaped, DEPTH, |slot, res| {
                assert_eq!(res, BS as i64, "slot {slot}: expected a whole block read")
            })
            .unwrap();
    }
    for slot in 0..DEPTH {
        assert!(
            ring.slot(slot) == pattern(slot),
            "slot {slot}: expected its pattern read back"
        );
    }
}

/// Reads DEPTH blocks of file 0 (it must hold them) into every slot of `ring`, then drops
/// the ring with the reads in flight: its Drop must wait for them before freeing anything.
pub(crate) fn drop_with_reads_in_flight(mut ring: impl IoRing) {
    for slot in 0..DEPTH {
        ring.prep_read(slot, 0, u64::from(slot) * BS as u64, BS as u32)
            .unwrap();
    }
    ring.submit().unwrap();
    drop(ring);
}

/// Reads one block of file 0 (it must hold one) with each of these priorities, one after
/// the other, and returns what each read gave: bytes or -errno. The kernel checks an
/// I/O's priority (an unknown class is EINVAL), so the results show that it arrived.
pub(crate) fn reads_with_priorities(ring: &mut impl IoRing, ioprios: &[u16]) -> Vec<i64> {
    let mut results = Vec::new();
    for &ioprio in ioprios {
        ring.set_ioprio(ioprio);
        ring.prep_read(0, 0, 0, BS as u32).unwrap();
        ring.submit().unwrap();
        ring.reap(1, 1, |_, res| results.push(res)).unwrap();
    }
    results
}

/// The ioprio of a class and level, as `ioprio_set(2)` encodes them.
pub(crate) fn ioprio(class: u16, level: u16) -> u16 {
    class << 13 | level
}
