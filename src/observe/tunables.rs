//! The `vm.dirty_*` sysctls: read at the start, re-read every sample, because
//! another process may change these global settings during a run.

use super::read_into;
use crate::model::TunableChange;
use std::path::{Path, PathBuf};

/// The writeback settings that decide when buffered writers are throttled.
pub(crate) const VM_DIRTY: [&str; 6] = [
    "dirty_ratio",
    "dirty_background_ratio",
    "dirty_bytes",
    "dirty_background_bytes",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
];

/// Where the sysctls live.
pub(crate) const PROC_SYS_VM: &str = "/proc/sys/vm";

/// The last values seen of the `vm.dirty_*` settings.
pub(crate) struct DirtyTunables {
    paths: Vec<PathBuf>,
    /// Same order as `VM_DIRTY`; empty when unreadable.
    values: Vec<String>,
    buf: String,
}

impl DirtyTunables {
    /// Read the settings under `dir` (normally [`PROC_SYS_VM`]).
    pub(crate) fn read(dir: &Path) -> Self {
        let paths: Vec<PathBuf> = VM_DIRTY.iter().map(|n| dir.join(n)).collect();
        let mut buf = String::with_capacity(64);
        let values = paths
            .iter()
            .map(|p| {
                if read_into(p, &mut buf) {
                    buf.trim().to_string()
                } else {
                    String::new()
                }
            })
            .collect();
        DirtyTunables { paths, values, buf }
    }

    /// (name, value) of every readable setting.
    pub(crate) fn settings(&self) -> Vec<(String, String)> {
        VM_DIRTY
            .iter()
            .zip(&self.values)
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect()
    }

    /// Re-read every setting; record each one that differs from the last value seen.
    pub(crate) fn check(&mut self, t_ns: u64, changes: &mut Vec<TunableChange>) {
        for ((name, path), value) in VM_DIRTY.iter().zip(&self.paths).zip(&mut self.values) {
            if !read_into(path, &mut self.buf) {
                continue;
            }
            let now = self.buf.trim();
            if now != value {
                changes.push(TunableChange {
                    t_ns,
                    name: format!("vm.{name}"),
                    from: std::mem::replace(value, now.to_string()),
                    to: now.to_string(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_proc_sys_vm() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, value) in VM_DIRTY.iter().zip(["20", "10", "0", "0", "3000", "500"]) {
            std::fs::write(dir.path().join(name), format!("{value}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn reads_every_setting() {
        let dir = fake_proc_sys_vm();
        let t = DirtyTunables::read(dir.path());
        let s = t.settings();
        assert_eq!(s.len(), 6);
        assert_eq!(s[0], ("dirty_ratio".to_string(), "20".to_string()));
        assert_eq!(
            s[5],
            ("dirty_writeback_centisecs".to_string(), "500".to_string())
        );
    }

    #[test]
    fn a_change_is_reported_once_with_its_time() {
        let dir = fake_proc_sys_vm();
        let mut t = DirtyTunables::read(dir.path());
        let mut changes = Vec::new();
        t.check(100, &mut changes);
        assert!(changes.is_empty());
        std::fs::write(dir.path().join("dirty_bytes"), "805306368\n").unwrap();
        t.check(200, &mut changes);
        t.check(300, &mut changes);
        assert_eq!(
            changes,
            [TunableChange {
                t_ns: 200,
                name: "vm.dirty_bytes".into(),
                from: "0".into(),
                to: "805306368".into(),
            }]
        );
    }

    #[test]
    fn missing_files_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let t = DirtyTunables::read(dir.path());
        assert!(t.settings().is_empty());
    }
}
