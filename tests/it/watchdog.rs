//! A hung device: writes to a frozen filesystem block until it is thawed.
//! The watchdog must name the stuck worker, file and offset, and end the run.

use crate::support::{iolens, scratch, stderr, LoopDevice};
use std::path::Path;
use std::process::Command;
use tempfile::TempDir;

/// An ext4 filesystem on a loop device, mounted and frozen; thawed,
/// unmounted and detached on drop, whatever the test did.
struct FrozenFs {
    dir: TempDir,
    _device: LoopDevice,
}

impl FrozenFs {
    /// The filesystem holds `file` (1 MiB) and is frozen; None (reason printed) without root.
    fn with_file(file: &str) -> Option<FrozenFs> {
        let device = LoopDevice::create(32 << 20)?;
        let dir = scratch();
        let run = |cmd: &str, args: &[&str]| {
            Command::new(cmd)
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        let mount_point = dir.path().to_str().unwrap().to_string();
        let mount_point = mount_point.as_str();
        if !run("mkfs.ext4", &["-q", "-F", device.path()])
            || !run("mount", &[device.path(), mount_point])
        {
            eprintln!("skipped: cannot make and mount an ext4 filesystem");
            return None;
        }
        let fs = FrozenFs {
            dir,
            _device: device,
        };
        std::fs::write(fs.path().join(file), vec![0u8; 1 << 20]).unwrap();
        if !run("fsfreeze", &["-f", mount_point]) {
            eprintln!("skipped: fsfreeze failed");
            return None;
        }
        Some(fs)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for FrozenFs {
    fn drop(&mut self) {
        let _ = Command::new("fsfreeze").arg("-u").arg(self.path()).status();
        crate::support::unmount(self.path());
    }
}

#[test]
fn a_worker_stuck_on_a_frozen_filesystem_is_named_and_the_run_ends() {
    let Some(fs) = FrozenFs::with_file("f") else {
        return;
    };
    let file = fs.path().join("f");
    let out = iolens(&[
        "run",
        "--no-history",
        "--io-timeout=1s",
        "--name=frozen",
        &format!("--filename={}", file.display()),
        "--size=1m",
        "--rw=write",
        "--bs=4k",
        "--ioengine=psync",
        "--runtime=1",
        "--time_based",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--io-timeout"), "{err}");
    assert!(
        err.contains("job 'frozen' worker 0 (pid ")
            && err.contains(&format!("waiting on {} at offset 0", file.display())),
        "{err}"
    );
}
