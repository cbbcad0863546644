//! Things iolens must not claim: a device read from a file in RAM, a writeback
//! stall in a job that waits for its own fsyncs, another process behind pages a
//! filesystem caches for the job's own direct writes.

use crate::support::{iolens, stdout};
use std::path::PathBuf;

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
