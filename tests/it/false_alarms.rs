//! Things iolens must not claim: a device read from a file in RAM, a writeback
//! stall in a job that waits for its own fsyncs, another process behind pages a
//! filesystem caches for the job's own direct writes, a trend in a rate that
//! is only noisy.

use crate::scenario_support::{have_tools, one_at_a_time, run, Ext4};
use crate::scenarios::expect_no_warning;
use crate::support::{iolens, json, scratch, stdout, unmount, LoopDevice};
use crate::warmup::{paced_log, replay};
use std::path::PathBuf;

const MIB: u64 = 1 << 20;

/// A file in /dev/shm, removed on drop.
struct ShmFile(PathBuf);

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_file_laid_out_on_tmpfs_is_said_to_live_in_ram() {
    let file = ShmFile(PathBuf::from(format!(
        "/dev/shm/iolens-layout-{}",
        std::process::id()
    )));
    let out = iolens(&[
        "run",
        "--name=t",
        "--rw=read",
        "--size=1m",
        &format!("--filename={}", file.0.display()),
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("laid out"))
        .unwrap_or_else(|| panic!("no layout line: {text}"));
    assert!(
        line.contains("the file lives in RAM") && !line.contains("goes to the device"),
        "{line}"
    );
}

#[test]
fn a_job_waiting_for_its_own_fsyncs_is_no_writeback_stall() {
    let _one = one_at_a_time();
    let Some(fs) = Ext4::create(256 * MIB) else {
        return;
    };
    let report = json(&iolens(&[
        "run",
        "--name=w",
        "--rw=write",
        "--bs=4k",
        "--fsync=1",
        "--size=32m",
        &format!("--filename={}", fs.path("f").display()),
        "--output-format=iolens-json",
    ]));
    assert_eq!(report["observations"]["jobs"][0]["syncs_writes"], true);
    expect_no_warning(&report, "writeback-stall");
}

/// A btrfs on a loop device, mounted on a temporary directory; unmounted, then
/// the device detached, on drop (also when the test fails).
struct Btrfs {
    mount_point: tempfile::TempDir,
    _device: LoopDevice,
}

impl Btrfs {
    fn create(size: u64) -> Option<Btrfs> {
        if !have_tools(&["mkfs.btrfs", "mount", "umount"]) {
            return None;
        }
        let device = LoopDevice::create(size)?;
        run("mkfs.btrfs", &["-q", "-f", device.path()]);
        let mount_point = tempfile::tempdir().unwrap();
        run(
            "mount",
            &[device.path(), mount_point.path().to_str().unwrap()],
        );
        Some(Btrfs {
            mount_point,
            _device: device,
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.mount_point.path().join(name)
    }
}

impl Drop for Btrfs {
    fn drop(&mut self) {
        unmount(self.mount_point.path());
    }
}

#[test]
fn pages_btrfs_caches_for_the_jobs_own_direct_writes_blame_nobody() {
    let _one = one_at_a_time();
    let Some(fs) = Btrfs::create(512 * MIB) else {
        return;
    };
    let file = fs.path("w");
    let report = json(&iolens(&[
        "run",
        "--name=w",
        "--ioengine=psync",
        "--direct=1",
        "--rw=write",
        "--bs=4k",
        "--size=32m",
        &format!("--filename={}", file.display()),
        "--output-format=iolens-json",
    ]));
    expect_no_warning(&report, "pagecache-under-direct-io");
    let text = report["findings"].to_string();
    assert!(!text.contains("another process"), "{text}");
}

#[test]
fn a_noisy_but_flat_rate_is_neither_still_moving_nor_unstable() {
    let dir = scratch();
    // 1500 IOPS on average, each 100 ms at a scrambled 50–150 % of it.
    let scramble = |t: f64| ((t * 10.0) as u64).wrapping_mul(2_654_435_761) % 1000;
    let log = paced_log(dir.path(), 5.0, |t| {
        1500.0 * (0.5 + scramble(t) as f64 / 1000.0)
    });
    let report = replay(&log, &[]);
    expect_no_warning(&report, "still-moving");
    expect_no_warning(&report, "unstable-throughput");
}
