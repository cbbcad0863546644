//! Safety: devices in use are not written, symlinks do not lead out of
//! `directory=`, and a signal ends a run with a partial report and no orphans.

use crate::support::{iolens, scratch, stderr, write_to_device, LoopDevice};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_mounted_device_is_refused_naming_the_mount_point() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    let mnt = scratch();
    let ok = |cmd: &mut Command| {
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(Command::new("mkfs.ext4").args(["-q", dev.path()])) {
        eprintln!("skipped: mkfs.ext4 is not available");
        return;
    }
    if !ok(Command::new("mount").args([dev.path(), mnt.path().to_str().unwrap()])) {
        eprintln!("skipped: cannot mount a loop device here");
        return;
    }
    let out = write_to_device(dev.path(), &[]);
    let mounted = mnt.path().display().to_string();
    // Even with allow_mounted_write=1 the filesystem's signature keeps it safe.
    let lifted = write_to_device(dev.path(), &["--allow_mounted_write=1"]);
    crate::support::unmount(mnt.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("is mounted on {mounted}")),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("--allow-destructive"),
        "{}",
        stderr(&out)
    );
    assert_eq!(lifted.status.code(), Some(2), "{}", stderr(&lifted));
    assert!(
        stderr(&lifted).contains("a filesystem (ext4)"),
        "{}",
        stderr(&lifted)
    );
}

/// A process holding a private mount namespace with one mount in it; killed
/// (which ends the namespace and its mount) on drop, also when the test fails.
struct PrivateMount(std::process::Child);

impl PrivateMount {
    /// Mount `dev` on `dir` in a new mount namespace that ours cannot see.
    fn start(dev: &str, dir: &std::path::Path) -> Option<PrivateMount> {
        use std::io::BufRead;
        let script = r#"mount "$1" "$2" && echo mounted && exec sleep 300"#;
        let child = Command::new("unshare")
            .args([
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                script,
                "sh",
                dev,
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut holder = PrivateMount(child);
        let mut line = String::new();
        let stdout = holder.0.stdout.take()?;
        std::io::BufReader::new(stdout).read_line(&mut line).ok()?;
        (line.trim() == "mounted").then_some(holder)
    }
}

impl Drop for PrivateMount {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_device_mounted_in_another_mount_namespace_is_in_use_for_the_guard_and_doctor() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F", dev.path()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfs.ext4 is not available");
        return;
    }
    let mnt = scratch();
    let Some(holder) = PrivateMount::start(dev.path(), mnt.path()) else {
        eprintln!("skipped: cannot mount in a new mount namespace here (unshare --mount)");
        return;
    };
    let ours = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !ours.contains(&*mnt.path().to_string_lossy()),
        "the mount leaked into our namespace"
    );
    let out = write_to_device(dev.path(), &[]);
    let doctor = iolens(&["doctor", dev.path()]);
    let pid = holder.0.id();
    drop(holder);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let expected = format!(
        "the device is mounted on {} in another mount namespace (that of process {pid}",
        mnt.path().display()
    );
    assert!(
        stderr(&out).contains(&expected),
        "expected «{expected}» in: {}",
        stderr(&out)
    );
    let said = crate::support::stdout(&doctor);
    assert!(
        said.contains(&format!("FIX  in use: {expected}")),
        "expected doctor to name the mount: {said}"
    );
}

#[test]
fn a_symlink_out_of_the_directory_is_not_followed() {
    let dir = scratch();
    let outside = scratch();
    let victim = outside.path().join("precious");
    std::fs::write(&victim, b"keep me").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("w.0.0")).unwrap();
    let out = iolens(&[
        "run",
        "--no-history",
        "--name=w",
        &format!("--directory={}", dir.path().display()),
        "--rw=write",
        "--size=64k",
        "--unlink=1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("outside the directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
}

/// Children of `pid`, from /proc.
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid …: comm may hold spaces, so split after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1));
        if ppid == Some(&pid.to_string()) {
            found.push(child);
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// Start a long process-mode run, signal it once its workers run, and check the
/// exit code, the partial report and that no worker outlives it.
fn stopped_by(signal: &str, expected_code: i32) {
    let dir = scratch();
    let child = crate::support::command()
        .args([
            "run",
            "--no-history",
            "--output-format=iolens-json",
            "--name=w",
            &format!("--directory={}", dir.path().display()),
            "--rw=randread",
            "--size=1m",
            "--numjobs=3",
            "--runtime=60",
            "--time_based",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let workers = loop {
        let found = children(child.id());
        if found.len() >= 3 || Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(workers.len(), 3, "the workers did not start");
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(expected_code), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["terminated"], "signal");
    assert_eq!(report["interrupted"], true);
    assert!(report["jobs"][0]["dirs"][0]["total_ios"].as_u64().unwrap() > 0);
    let orphans: Vec<u32> = workers.into_iter().filter(|&p| alive(p)).collect();
    assert!(orphans.is_empty(), "workers outlived the run: {orphans:?}");
}

#[test]
fn sigint_writes_a_partial_report_and_exits_130_without_orphans() {
    stopped_by("-INT", 130);
}

#[test]
fn sigterm_exits_143() {
    stopped_by("-TERM", 143);
}
