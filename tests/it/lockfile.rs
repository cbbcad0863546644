//! `lockfile=`: the workers take a lock on the file for each I/O, so while another
//! holder keeps the file locked no I/O of theirs gets through. The test holds the lock
//! itself, sees a worker waiting for it in /proc/locks, checks that nothing was written
//! meanwhile, and lets go.

use crate::support::{command, scratch, stderr};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Generous for a loaded 2-core machine: only a hang takes this long.
const PATIENCE: Duration = Duration::from_secs(60);

const BYTES: usize = 64 << 10;

fn start(path: &Path, rw: &str, mode: &str) -> Child {
    command()
        .args([
            "run",
            "--no-history",
            "--name=l",
            &format!("--filename={}", path.display()),
            &format!("--rw={rw}"),
            "--bs=4k",
            "--size=64k",
            "--numjobs=2",
            &format!("--lockfile={mode}"),
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iolens")
}

/// Whether a process waits for a lock on `path` (a "->" line of /proc/locks).
fn someone_waits(path: &Path) -> bool {
    let inode = format!(":{} ", std::fs::metadata(path).unwrap().ino());
    std::fs::read_to_string("/proc/locks")
        .unwrap_or_default()
        .lines()
        .any(|l| l.contains("->") && l.contains(&inode))
}

/// Wait for `child` to end, or for a waiter on `path` when `until_waiting`; true if it ended.
fn wait(child: &mut Child, path: &Path, until_waiting: bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if child.try_wait().expect("poll iolens").is_some() {
            return true;
        }
        if until_waiting && someone_waits(path) {
            return false;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("expected iolens to end or wait for the lock within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn written(child: Child) -> u64 {
    let out = child.wait_with_output().expect("collect iolens");
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected the job to run: {}",
        stderr(&out)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    doc["jobs"]
        .as_array()
        .expect("a jobs array")
        .iter()
        .map(|j| j["write"]["io_bytes"].as_u64().unwrap() + j["read"]["io_bytes"].as_u64().unwrap())
        .sum()
}

#[test]
fn no_write_gets_through_while_another_holds_the_file_locked() {
    for (mode, hold_shared) in [("exclusive", false), ("readwrite", true)] {
        let dir = scratch();
        let path = dir.path().join("shared");
        std::fs::write(&path, vec![0xab; BYTES]).unwrap();
        let holder = File::open(&path).unwrap();
        if hold_shared {
            holder.lock_shared().unwrap();
        } else {
            holder.lock().unwrap();
        }
        let mut child = start(&path, "write", mode);
        let ended = wait(&mut child, &path, true);
        assert!(
            !ended,
            "lockfile={mode}: expected the writers to wait for the lock, saw iolens end"
        );
        let now = std::fs::read(&path).unwrap();
        assert!(
            now == vec![0xab; BYTES],
            "lockfile={mode}: expected nothing written while the test held the lock"
        );
        holder.unlock().unwrap();
        wait(&mut child, &path, false);
        assert_eq!(
            written(child),
            2 * BYTES as u64,
            "lockfile={mode}: expected both clones' 64 KiB written once the lock was free"
        );
        assert_ne!(
            std::fs::read(&path).unwrap(),
            vec![0xab; BYTES],
            "expected the file written"
        );
    }
}

#[test]
fn readwrite_lets_reads_through_beside_another_reader() {
    let dir = scratch();
    let path = dir.path().join("shared");
    std::fs::write(&path, vec![0xab; BYTES]).unwrap();
    let holder = File::open(&path).unwrap();
    holder.lock_shared().unwrap();
    let mut child = start(&path, "read", "readwrite");
    let ended = wait(&mut child, &path, true);
    assert!(
        ended,
        "expected lockfile=readwrite reads to go beside a shared holder, saw them wait"
    );
    assert_eq!(
        written(child),
        2 * BYTES as u64,
        "expected both clones' 64 KiB read"
    );
}
