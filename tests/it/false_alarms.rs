//! Things iolens must not claim: a device read from a file in RAM, a writeback
//! stall in a job that waits for its own fsyncs, another process behind pages a
//! filesystem caches for the job's own direct writes.

use crate::scenario_support::{one_at_a_time, Ext4};
use crate::scenarios::expect_no_warning;
use crate::support::{iolens, json, stdout};
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
