//! Who made storage move: the kernel's per-task I/O accounting
//! (`/proc/<pid>/task/<tid>/io`, `/proc/<pid>/io`). The sampler reads it for
//! every worker thread (what iolens itself caused below the page cache) and,
//! at most every two seconds, for every other process, so traffic a device did
//! beyond iolens' can be pinned on the processes that caused it.

use super::openers::{read_cmdline, read_stat};
use super::read_into;
use crate::model::{ProcessIo, TaskIo};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The `read_bytes`, `write_bytes` and `cancelled_write_bytes` lines of an io file.
pub(crate) fn parse(text: &str) -> Option<TaskIo> {
    let mut io = TaskIo::default();
    let mut seen = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key {
            "read_bytes" => &mut io.read_bytes,
            "write_bytes" => &mut io.write_bytes,
            "cancelled_write_bytes" => &mut io.cancelled_write_bytes,
            _ => continue,
        };
        *slot = value.trim().parse().ok()?;
        seen += 1;
    }
    (seen == 3).then_some(io)
}

/// Scans of the other processes are at least this far apart: a pass reads
/// one file per process, about 2 ms for 90 processes on a loaded 2-core VM
/// (0.1 % of a core at this gap). A long-lived neighbour is seen whatever
/// the gap; one that lives less than it may escape.
const MIN_SCAN_GAP: Duration = Duration::from_secs(2);
/// Processes remembered; past this the quiet ones are forgotten (a day-long
/// run on a machine that starts many short programs stays bounded).
const MAX_TRACKED: usize = 8192;
/// How many of the busiest other processes a run keeps.
pub(crate) const BUSIEST_KEPT: usize = 8;

/// One other process as the scans saw it.
struct Seen {
    /// Counters at the first scan that saw it (zero for one born during the run).
    first: TaskIo,
    last: TaskIo,
    /// (comm, parent pid, command line), read when it was first seen moving
    /// bytes: a short-lived process is gone by the end of the run.
    name: Option<(String, u32, String)>,
}

impl Seen {
    fn moved(&self) -> u64 {
        let d = self.last.since(&self.first);
        d.read_bytes + d.write_bytes
    }
}

/// Every other process's I/O over the run, scanned at most every `MIN_SCAN_GAP`.
pub(crate) struct ProcessIoWatch {
    proc_root: PathBuf,
    own_pid: u32,
    seen: HashMap<u32, Seen>,
    scans: u32,
    last_scan: Option<Instant>,
    buf: String,
}

impl ProcessIoWatch {
    /// Take the first scan now: what each process had done before the run.
    pub(crate) fn new(proc_root: PathBuf, own_pid: u32) -> ProcessIoWatch {
        let mut watch = ProcessIoWatch {
            proc_root,
            own_pid,
            seen: HashMap::new(),
            scans: 0,
            last_scan: None,
            buf: String::with_capacity(256),
        };
        watch.scan(Instant::now());
        watch
    }

    /// Scan again when the last scan is a second old.
    pub(crate) fn after_sample(&mut self, now: Instant) {
        if self
            .last_scan
            .is_none_or(|last| now.duration_since(last) >= MIN_SCAN_GAP)
        {
            self.scan(now);
        }
    }

    fn scan(&mut self, now: Instant) {
        self.last_scan = Some(now);
        let first_scan = self.scans == 0;
        self.scans += 1;
        let Ok(entries) = std::fs::read_dir(&self.proc_root) else {
            return;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            if pid == self.own_pid {
                continue;
            }
            let path = self.proc_root.join(entry.file_name()).join("io");
            let Some(io) = read_into(&path, &mut self.buf)
                .then(|| parse(&self.buf))
                .flatten()
            else {
                continue;
            };
            // A process born during the run did all its I/O in it.
            let first = if first_scan { io } else { TaskIo::default() };
            let seen = self.seen.entry(pid).or_insert(Seen {
                first,
                last: io,
                name: None,
            });
            seen.last = io;
            if seen.name.is_none() && seen.moved() > 0 {
                let dir = self.proc_root.join(entry.file_name());
                seen.name = read_stat(&dir).map(|(comm, ppid)| (comm, ppid, read_cmdline(&dir)));
            }
        }
        if self.seen.len() > MAX_TRACKED {
            self.seen.retain(|_, s| s.moved() > 0);
        }
    }

    /// A last scan, then the busiest other processes over the run, most bytes
    /// first: neither iolens' own worker processes nor kernel threads (their
    /// I/O is done on somebody's behalf: loop workers, flushers).
    pub(crate) fn finish(mut self) -> Vec<ProcessIo> {
        self.scan(Instant::now());
        let own_pid = self.own_pid;
        let mut busiest: Vec<ProcessIo> = self
            .seen
            .into_iter()
            .filter(|(_, s)| s.moved() > 0)
            .filter_map(|(pid, s)| {
                const KTHREADD: u32 = 2;
                let io = s.last.since(&s.first);
                let (comm, ppid, cmdline) = s.name.unwrap_or_default();
                let ours_or_kernel = ppid == own_pid || ppid == KTHREADD || pid == KTHREADD;
                (!ours_or_kernel).then_some(ProcessIo {
                    pid,
                    comm,
                    cmdline,
                    read_bytes: io.read_bytes,
                    write_bytes: io.write_bytes,
                })
            })
            .collect();
        busiest.sort_by_key(|p| (std::cmp::Reverse(p.read_bytes + p.write_bytes), p.pid));
        busiest.truncate(BUSIEST_KEPT);
        busiest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const IO: &str = "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 8192\nwrite_bytes: 4096\ncancelled_write_bytes: 512\n";

    #[test]
    fn parses_the_kernels_io_file() {
        let io = parse(IO).unwrap();
        assert_eq!(
            (io.read_bytes, io.write_bytes, io.cancelled_write_bytes),
            (8192, 4096, 512)
        );
        assert_eq!(parse("rchar: 1\n"), None);
    }

    /// A fake /proc with one process: its io, stat and cmdline.
    fn process(root: &Path, pid: u32, ppid: u32, comm: &str, read: u64, write: u64) {
        let dir = root.join(pid.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let io = format!("read_bytes: {read}\nwrite_bytes: {write}\ncancelled_write_bytes: 0\n");
        std::fs::write(dir.join("io"), io).unwrap();
        std::fs::write(dir.join("stat"), format!("{pid} ({comm}) S {ppid} 1 1")).unwrap();
        std::fs::write(dir.join("cmdline"), format!("{comm}\0--fast\0")).unwrap();
    }

    #[test]
    fn names_the_busiest_others_but_not_iolens_its_workers_or_kernel_threads() {
        let root = tempfile::tempdir().unwrap();
        let own = 100;
        process(root.path(), own, 1, "iolens", 0, 0);
        process(root.path(), 200, 1, "dd", 0, 1 << 20);
        process(root.path(), 300, 1, "idle", 4096, 0);
        let mut watch = ProcessIoWatch::new(root.path().into(), own);
        // During the run: dd writes 64 MiB, a worker process and a loop
        // worker (a kernel thread) read, a new process appears, reads and
        // is gone by the end (it is still named).
        process(root.path(), 200, 1, "dd", 0, 65 << 20);
        process(root.path(), 101, own, "iolens", 32 << 20, 0);
        process(root.path(), 50, 2, "loop3", 32 << 20, 0);
        process(root.path(), 400, 1, "tar", 2 << 20, 0);
        watch.scan(Instant::now());
        std::fs::remove_dir_all(root.path().join("400")).unwrap();
        std::fs::remove_dir_all(root.path().join("101")).unwrap();
        let busiest = watch.finish();
        let names: Vec<(&str, u64, u64)> = busiest
            .iter()
            .map(|p| (p.comm.as_str(), p.read_bytes, p.write_bytes))
            .collect();
        assert_eq!(names, [("dd", 0, 64 << 20), ("tar", 2 << 20, 0)]);
        assert_eq!(busiest[0].cmdline, "dd --fast");
        watch = ProcessIoWatch::new(root.path().into(), own);
        assert!(
            watch.finish().is_empty(),
            "nothing moved since the first scan"
        );
    }
}
