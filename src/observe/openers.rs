//! Who else has a direct-I/O target open (seed 000's reader). When the
//! sampler sees such a target's cached pages grow, something read it through
//! the page cache; a look through `/proc/*/fd` at that moment names the
//! processes that still hold it open. A short-lived reader (udev's blkid) may
//! be gone by then: the scan then records that nobody else was seen.
//!
//! A scan costs a `stat` per descriptor of every process, so it runs only on
//! growth, at most once per `MIN_SCAN_GAP`, over at most `MAX_PROCESSES`
//! processes (newest first: a reader started for the occasion has a high pid)
//! and `MAX_FDS` descriptors each. iolens itself and its worker processes
//! (its children) are never reported.
//!
//! Where fanotify works (root), a thread of its own is also told of every open
//! of those targets as it happens and names the opener at once, so a reader
//! that opens, reads and closes between two samples is still caught. fanotify
//! reports opens of regular files only (none of device nodes, whatever the
//! mark), so block-device targets rely on the scan.

use crate::model::{Observations, Opener, OpenerScan, TargetObservation, TargetOpen};
use iolens_sys::{OpenAlarm, OpenEvent, OpenWatch};
use std::fs::{File, Metadata};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The kernel's process directory.
pub(crate) const PROC: &str = "/proc";

/// At most one scan per this long.
const MIN_SCAN_GAP: Duration = Duration::from_secs(1);
/// Processes looked at per scan.
const MAX_PROCESSES: usize = 4096;
/// Descriptors looked at per process.
const MAX_FDS: usize = 4096;
/// Characters of a command line kept.
const CMDLINE_CHARS: usize = 120;
/// Opens recorded per run; more are counted in a note.
const MAX_OPENS: usize = 1000;
/// Scans kept at most: a day-long run whose target's cache keeps growing
/// would otherwise add one a second; later ones are counted in a note.
const MAX_SCANS: usize = 1000;
/// How long the open log's thread waits for an event before it checks for the stop.
const OPEN_POLL: Duration = Duration::from_millis(100);

/// What makes two opens the same target: the device number of a device node
/// (two nodes of one device are the same device), else the inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeId {
    Device { block: bool, rdev: u64 },
    Inode { dev: u64, ino: u64 },
}

impl NodeId {
    pub(crate) fn of(meta: &Metadata) -> NodeId {
        let kind = meta.file_type();
        if kind.is_block_device() || kind.is_char_device() {
            NodeId::Device {
                block: kind.is_block_device(),
                rdev: meta.rdev(),
            }
        } else {
            NodeId::Inode {
                dev: meta.dev(),
                ino: meta.ino(),
            }
        }
    }
}

/// What one pass over the processes found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ScanResult {
    /// (index into the wanted nodes, the process that has it open).
    pub hits: Vec<(usize, Opener)>,
    pub unreadable: u32,
    pub truncated: bool,
}

/// The processes under `proc_root` (a `/proc`) that have one of `wanted`
/// open, leaving out `own_pid` and its children (iolens and its workers).
pub(crate) fn scan(proc_root: &Path, own_pid: u32, wanted: &[NodeId]) -> ScanResult {
    let mut result = ScanResult::default();
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return result;
    };
    let mut pids: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&pid| pid != own_pid)
        .collect();
    pids.sort_unstable_by(|a, b| b.cmp(a));
    if pids.len() > MAX_PROCESSES {
        pids.truncate(MAX_PROCESSES);
        result.truncated = true;
    }
    for pid in pids {
        let dir = proc_root.join(pid.to_string());
        let fds = match std::fs::read_dir(dir.join("fd")) {
            Ok(fds) => fds,
            // Gone since the listing.
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(_) => {
                result.unreadable += 1;
                continue;
            }
        };
        let mut held: Vec<usize> = Vec::new();
        for (n, fd) in fds.enumerate() {
            if n == MAX_FDS {
                result.truncated = true;
                break;
            }
            let Ok(fd) = fd else { continue };
            // Follows the descriptor's link to the open file itself.
            let Ok(meta) = std::fs::metadata(fd.path()) else {
                continue;
            };
            let node = NodeId::of(&meta);
            held.extend(wanted.iter().position(|w| *w == node));
        }
        if held.is_empty() {
            continue;
        }
        let Some(opener) = name(proc_root, pid, own_pid) else {
            continue;
        };
        held.sort_unstable();
        held.dedup();
        result
            .hits
            .extend(held.into_iter().map(|w| (w, opener.clone())));
    }
    result
}

/// Process `pid` named from `/proc/PID`; None when it is iolens' child (a worker)
/// or gone (then nothing can tell whether it was one).
fn name(proc_root: &Path, pid: u32, own_pid: u32) -> Option<Opener> {
    let dir = proc_root.join(pid.to_string());
    let (comm, ppid) = read_stat(&dir)?;
    (ppid != own_pid).then(|| Opener {
        pid,
        comm,
        cmdline: read_cmdline(&dir),
    })
}

/// (comm, ppid) from `/proc/PID/stat`; the name is in parentheses and may hold any character.
pub(crate) fn read_stat(dir: &Path) -> Option<(String, u32)> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let ppid = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((comm, ppid))
}

/// The command line with spaces for its NULs, shortened; empty for a kernel thread or a process gone.
pub(crate) fn read_cmdline(dir: &Path) -> String {
    let raw = std::fs::read(dir.join("cmdline")).unwrap_or_default();
    let text = String::from_utf8_lossy(&raw);
    let line = text.trim_end_matches('\0').replace('\0', " ");
    if line.chars().count() > CMDLINE_CHARS {
        let short: String = line.chars().take(CMDLINE_CHARS).collect();
        format!("{short}…")
    } else {
        line
    }
}

/// One watched target: a direct-I/O job's, at its index in `Observations::targets`.
struct Watched {
    index: usize,
    node: NodeId,
    /// Cached pages at the last sample that read them.
    last_cached: Option<u64>,
    /// Grew since the last scan, which the rate limit put off.
    pending: bool,
}

/// The sampler's side: notices growth and scans, rate-limited; owns the open log.
pub(crate) struct OpenerWatch {
    proc_root: PathBuf,
    own_pid: u32,
    watched: Vec<Watched>,
    last_scan: Option<Instant>,
    opens: Vec<OpenLog>,
    /// Scans not made once `MAX_SCANS` were kept.
    scans_skipped: u64,
}

impl OpenerWatch {
    /// Watch the targets given as (index in `Observations::targets`, open file);
    /// one whose metadata cannot be read is left out. With `opens_since` (the
    /// run's start), also log their opens: fanotify for regular files (root),
    /// inotify and a scan for device nodes.
    pub(crate) fn new<'a>(
        proc_root: PathBuf,
        own_pid: u32,
        targets: impl IntoIterator<Item = (usize, &'a File)>,
        opens_since: Option<Instant>,
    ) -> OpenerWatch {
        let mut files = (Vec::new(), Vec::new());
        let mut devices = (Vec::new(), Vec::new());
        let mut watched = Vec::new();
        for (index, file) in targets {
            let Ok(meta) = file.metadata() else { continue };
            let node = NodeId::of(&meta);
            let (which, of) = match node {
                NodeId::Inode { .. } => (&mut files.0, &mut files.1),
                NodeId::Device { .. } => (&mut devices.0, &mut devices.1),
            };
            which.push(watched.len());
            of.push(file);
            watched.push(Watched {
                index,
                node,
                last_cached: None,
                pending: false,
            });
        }
        let mut opens = Vec::new();
        if let Some(start) = opens_since {
            let ctx = |targets: Vec<usize>| LogContext {
                proc_root: proc_root.clone(),
                own_pid,
                nodes: targets.iter().map(|&w| watched[w].node).collect(),
                targets,
                run_start: start,
            };
            let sources = [
                (!files.0.is_empty())
                    .then(|| Source::files(&files.1).map(|s| (s, ctx(files.0.clone()))))
                    .flatten(),
                (!devices.0.is_empty())
                    .then(|| Source::devices(&devices.1).map(|s| (s, ctx(devices.0.clone()))))
                    .flatten(),
            ];
            opens.extend(
                sources
                    .into_iter()
                    .flatten()
                    .filter_map(|(source, ctx)| OpenLog::start(source, ctx)),
            );
        }
        OpenerWatch {
            proc_root,
            own_pid,
            watched,
            last_scan: None,
            opens,
            scans_skipped: 0,
        }
    }

    /// Stop the open logs and put what they saw into `obs`.
    pub(crate) fn finish(self, obs: &mut Observations) {
        if self.scans_skipped > 0 {
            obs.notes.push(format!(
                "{} scans for the processes holding the targets not made (more than {MAX_SCANS})",
                self.scans_skipped
            ));
        }
        for log in self.opens {
            let paths: Vec<String> = log
                .targets
                .iter()
                .map(|&w| obs.targets[self.watched[w].index].path.clone())
                .collect();
            let record = log.stop();
            for (t_ns, k, opener) in record.opens {
                let path = paths[k].clone();
                obs.target_opens.push(TargetOpen { t_ns, path, opener });
            }
            obs.target_opens.sort_by_key(|o| o.t_ns);
            obs.opens_watched.extend(paths);
            if record.lost > 0 {
                obs.notes.push(format!(
                    "{} opens of the targets not recorded (more than {MAX_OPENS}, or the kernel's queue overflowed)",
                    record.lost
                ));
            }
            if let Some(error) = record.error {
                obs.notes
                    .push(format!("stopped watching the targets' opens: {error}"));
            }
        }
    }

    /// After each sample (taken at `t_ns`, now `now`): note the watched targets
    /// whose cached pages grew, and scan for them unless the last scan is less
    /// than `MIN_SCAN_GAP` old (then at a later sample).
    pub(crate) fn after_sample(
        &mut self,
        t_ns: u64,
        now: Instant,
        targets: &[TargetObservation],
        scans: &mut Vec<OpenerScan>,
    ) {
        for w in &mut self.watched {
            let Some(Some(pages)) = targets.get(w.index).and_then(|t| t.cache_series.last()) else {
                continue;
            };
            w.pending |= w.last_cached.is_some_and(|last| pages.cached > last);
            w.last_cached = Some(pages.cached);
        }
        let due = self
            .last_scan
            .is_none_or(|last| now.saturating_duration_since(last) >= MIN_SCAN_GAP);
        if !due || !self.watched.iter().any(|w| w.pending) {
            return;
        }
        if scans.len() >= MAX_SCANS {
            for w in self.watched.iter_mut().filter(|w| w.pending) {
                w.pending = false;
                self.scans_skipped += 1;
            }
            return;
        }
        self.last_scan = Some(now);
        let pending: Vec<&mut Watched> = self.watched.iter_mut().filter(|w| w.pending).collect();
        let nodes: Vec<NodeId> = pending.iter().map(|w| w.node).collect();
        let found = scan(&self.proc_root, self.own_pid, &nodes);
        for (k, w) in pending.into_iter().enumerate() {
            w.pending = false;
            scans.push(OpenerScan {
                t_ns,
                path: targets[w.index].path.clone(),
                openers: found
                    .hits
                    .iter()
                    .filter(|(hit, _)| *hit == k)
                    .map(|(_, opener)| opener.clone())
                    .collect(),
                unreadable: found.unreadable,
                truncated: found.truncated,
            });
        }
    }
}

/// What the open log saw: (t_ns, index among the log's targets, opener).
#[derive(Default)]
struct OpenRecord {
    opens: Vec<(u64, usize, Opener)>,
    lost: u64,
    error: Option<String>,
}

/// Where a log learns of opens.
enum Source {
    /// fanotify: each open of a regular file, with the process that made it.
    Files(OpenWatch),
    /// inotify: that a device node was opened; a scan at once finds the
    /// opener among the processes holding it (those that did not before).
    Devices {
        alarm: OpenAlarm,
        /// (target, pid) holding a target at the last scan.
        holders: Vec<(usize, u32)>,
        last_scan: Option<Instant>,
    },
}

impl Source {
    /// None when fanotify is not available (not root, or an old kernel).
    fn files(files: &[&File]) -> Option<Source> {
        let watch = OpenWatch::new().ok()?;
        for file in files {
            watch.mark(file).ok()?;
        }
        Some(Source::Files(watch))
    }

    fn devices(devices: &[&File]) -> Option<Source> {
        let alarm = OpenAlarm::new().ok()?;
        for device in devices {
            alarm.watch(device).ok()?;
        }
        Some(Source::Devices {
            alarm,
            holders: Vec::new(),
            last_scan: None,
        })
    }

    fn wait(&self, timeout: Duration) -> std::io::Result<bool> {
        match self {
            Source::Files(watch) => watch.wait(timeout),
            Source::Devices { alarm, .. } => alarm.wait(timeout),
        }
    }

    /// Record what is queued (never blocks); with `force`, a device log scans
    /// even without an alarm (to learn who already holds the devices).
    fn collect(
        &mut self,
        ctx: &LogContext,
        record: &mut OpenRecord,
        force: bool,
    ) -> std::io::Result<()> {
        match self {
            Source::Files(watch) => {
                let t_ns = ctx.run_start.elapsed().as_nanos() as u64;
                for event in watch.read()? {
                    record.note(event, t_ns, ctx);
                }
            }
            Source::Devices {
                alarm,
                holders,
                last_scan,
            } => {
                if !alarm.take()? && !force {
                    return Ok(());
                }
                // A process opening in a loop must not keep this thread scanning.
                if let Some(gap) = last_scan.and_then(|l| DEVICE_SCAN_GAP.checked_sub(l.elapsed()))
                {
                    std::thread::sleep(gap);
                    alarm.take()?;
                }
                *last_scan = Some(Instant::now());
                let t_ns = ctx.run_start.elapsed().as_nanos() as u64;
                let found = scan(&ctx.proc_root, ctx.own_pid, &ctx.nodes);
                let now: Vec<(usize, u32)> = found.hits.iter().map(|(k, o)| (*k, o.pid)).collect();
                if !force {
                    for (k, opener) in found.hits {
                        if !holders.contains(&(k, opener.pid)) {
                            record.push(t_ns, k, opener);
                        }
                    }
                }
                *holders = now;
            }
        }
        Ok(())
    }
}

/// What a log's thread needs besides its source.
struct LogContext {
    proc_root: PathBuf,
    own_pid: u32,
    /// Index in `OpenerWatch::watched` of each of its targets, and their nodes.
    targets: Vec<usize>,
    nodes: Vec<NodeId>,
    run_start: Instant,
}

/// Least time between two scans of a device log.
const DEVICE_SCAN_GAP: Duration = Duration::from_millis(20);

/// A thread that logs the opens of some of the watched targets.
struct OpenLog {
    /// Index in `OpenerWatch::watched` of each of its targets.
    targets: Vec<usize>,
    stop: Arc<AtomicBool>,
    handle: JoinHandle<OpenRecord>,
}

impl OpenLog {
    fn start(mut source: Source, ctx: LogContext) -> Option<OpenLog> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let targets = ctx.targets.clone();
        let handle = std::thread::Builder::new()
            .name("iolens-opens".into())
            .spawn(move || {
                let mut record = OpenRecord::default();
                let mut run = |source: &mut Source, force: bool| {
                    source
                        .collect(&ctx, &mut record, force)
                        .map_err(|e| e.to_string())
                };
                let mut outcome = run(&mut source, true);
                while outcome.is_ok() && !thread_stop.load(Ordering::Relaxed) {
                    outcome = match source.wait(OPEN_POLL) {
                        Ok(true) => run(&mut source, false),
                        Ok(false) => Ok(()),
                        Err(e) => Err(e.to_string()),
                    };
                }
                // Opens queued between the last wait and the stop.
                if outcome.is_ok() {
                    outcome = run(&mut source, false);
                }
                record.error = outcome.err();
                record
            })
            .ok()?;
        Some(OpenLog {
            targets,
            stop,
            handle,
        })
    }

    fn stop(self) -> OpenRecord {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

impl OpenRecord {
    /// Record one fanotify event, the opener named at once, unless it is iolens or its worker.
    fn note(&mut self, event: OpenEvent, t_ns: u64, ctx: &LogContext) {
        let (pid, file) = match event {
            OpenEvent::Overflow => {
                self.lost += 1;
                return;
            }
            OpenEvent::Opened { pid, file } => (pid, file),
        };
        if pid == ctx.own_pid {
            return;
        }
        let node = file.and_then(|f| f.metadata().ok()).map(|m| NodeId::of(&m));
        let nodes = &ctx.nodes;
        let Some(k) = nodes
            .iter()
            .position(|n| Some(*n) == node)
            .or((nodes.len() == 1).then_some(0))
        else {
            return;
        };
        let opener = if ctx.proc_root.join(pid.to_string()).exists() {
            match name(&ctx.proc_root, pid, ctx.own_pid) {
                Some(opener) => opener,
                None => return,
            }
        } else {
            Opener {
                pid,
                ..Default::default()
            }
        };
        self.push(t_ns, k, opener);
    }

    fn push(&mut self, t_ns: u64, k: usize, opener: Opener) {
        if self.opens.len() < MAX_OPENS {
            self.opens.push((t_ns, k, opener));
        } else {
            self.lost += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CachePages;
    use crate::testutil::scratch_dir;
    use std::os::unix::fs::symlink;

    /// iolens' pid in the tests where no fake process is iolens or its child.
    const NOT_HERE: u32 = 999_999;

    /// A fake /proc: each process a directory with `stat`, `cmdline` and `fd/N` links.
    struct FakeProc {
        root: PathBuf,
    }

    impl FakeProc {
        fn new(dir: &Path) -> FakeProc {
            let root = dir.join("proc");
            std::fs::create_dir_all(root.join("self")).unwrap();
            FakeProc { root }
        }

        fn process(&self, pid: u32, comm: &str, ppid: u32, cmdline: &[&str], fds: &[&Path]) {
            let dir = self.root.join(pid.to_string());
            std::fs::create_dir_all(dir.join("fd")).unwrap();
            let stat = format!("{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560");
            std::fs::write(dir.join("stat"), stat).unwrap();
            std::fs::write(dir.join("cmdline"), cmdline.join("\0") + "\0").unwrap();
            for (n, target) in fds.iter().enumerate() {
                symlink(target, dir.join("fd").join(n.to_string())).unwrap();
            }
        }
    }

    /// A scratch directory with a file `target` and an empty fake /proc.
    fn scene() -> (tempfile::TempDir, PathBuf, FakeProc) {
        let dir = scratch_dir();
        let target = dir.path().join("target");
        std::fs::write(&target, b"x").unwrap();
        let fake = FakeProc::new(dir.path());
        (dir, target, fake)
    }

    fn node(path: &Path) -> NodeId {
        NodeId::of(&std::fs::metadata(path).unwrap())
    }

    #[test]
    fn finds_other_processes_holding_the_target_but_not_iolens_or_its_workers() {
        let dir = scratch_dir();
        let target = dir.path().join("target");
        let other = dir.path().join("other");
        std::fs::write(&target, b"x").unwrap();
        std::fs::write(&other, b"y").unwrap();
        let fake = FakeProc::new(dir.path());
        let own = 500;
        fake.process(own, "iolens", 1, &["iolens", "run"], &[&target]);
        fake.process(501, "iolens", own, &["iolens", "__worker"], &[&target]);
        fake.process(
            4182,
            "blkid",
            1,
            &["blkid", "-p", "/dev/loop3"],
            &[&other, &target],
        );
        fake.process(77, "a (b) c", 1, &[], &[&target, &target]);
        fake.process(78, "bash", 1, &["bash"], &[&other]);

        let found = scan(&fake.root, own, &[node(&target)]);
        let seen: Vec<(usize, u32, &str, &str)> = found
            .hits
            .iter()
            .map(|(w, o)| (*w, o.pid, o.comm.as_str(), o.cmdline.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (0, 4182, "blkid", "blkid -p /dev/loop3"),
                (0, 77, "a (b) c", "")
            ],
            "expected blkid (newest first) and the process with a parenthesised name, \
             not iolens (500), its worker (501) or bash (78); saw {found:?}"
        );
        assert_eq!((found.unreadable, found.truncated), (0, false), "{found:?}");
    }

    #[test]
    fn a_device_is_matched_by_its_device_number_and_unreadable_processes_are_counted() {
        let dir = scratch_dir();
        let fake = FakeProc::new(dir.path());
        // A second node of the same device, as a container's /dev would have.
        let alias = dir.path().join("null-alias");
        symlink("/dev/null", &alias).unwrap();
        fake.process(10, "holder", 1, &["holder"], &[&alias]);
        let broken = fake.root.join("11");
        std::fs::create_dir_all(&broken).unwrap();
        std::fs::write(broken.join("fd"), b"").unwrap();

        let found = scan(
            &fake.root,
            NOT_HERE,
            &[node(Path::new("/dev/zero")), node(Path::new("/dev/null"))],
        );
        let pids: Vec<(usize, u32)> = found
            .hits
            .iter()
            .map(|(w, o)| (w.to_owned(), o.pid))
            .collect();
        assert_eq!(
            pids,
            [(1, 10)],
            "expected pid 10 holding the second node (/dev/null), saw {found:?}"
        );
        assert_eq!(
            found.unreadable, 1,
            "expected pid 11's fd listing to count as unreadable, saw {found:?}"
        );
    }

    #[test]
    fn a_long_command_line_is_shortened() {
        let (_dir, target, fake) = scene();
        let long = "a".repeat(300);
        fake.process(9, "sh", 1, &["sh", &long], &[&target]);
        let found = scan(&fake.root, NOT_HERE, &[node(&target)]);
        let line = &found.hits[0].1.cmdline;
        assert_eq!(
            line.chars().count(),
            CMDLINE_CHARS + 1,
            "expected {CMDLINE_CHARS} characters and an ellipsis, saw {line:?}"
        );
    }

    #[test]
    fn an_open_names_its_process_unless_it_is_iolens_or_its_worker_and_keeps_a_gone_one_by_pid() {
        let (_dir, target, fake) = scene();
        let own = 500;
        fake.process(501, "iolens", own, &["iolens", "__worker"], &[]);
        fake.process(4182, "blkid", 1, &["blkid", "-p", "/dev/loop3"], &[]);
        let ctx = LogContext {
            proc_root: fake.root.clone(),
            own_pid: own,
            targets: vec![0],
            nodes: vec![node(&target)],
            run_start: Instant::now(),
        };
        let mut record = OpenRecord::default();
        for pid in [own, 501, 4182, 4183] {
            let event = OpenEvent::Opened {
                pid,
                file: Some(File::open(&target).unwrap()),
            };
            record.note(event, 7, &ctx);
        }
        record.note(OpenEvent::Overflow, 8, &ctx);
        let seen: Vec<(u64, usize, u32, &str)> = record
            .opens
            .iter()
            .map(|(t, w, o)| (*t, *w, o.pid, o.comm.as_str()))
            .collect();
        assert_eq!(
            seen,
            [(7, 0, 4182, "blkid"), (7, 0, 4183, "")],
            "expected blkid named and 4183 (gone) kept by pid, not iolens or its worker; saw {seen:?}"
        );
        assert_eq!(record.lost, 1, "expected the overflow counted");
    }

    #[test]
    fn fanotify_logs_another_process_opening_a_watched_target() {
        let dir = scratch_dir();
        let target = dir.path().join("target");
        std::fs::write(&target, b"x").unwrap();
        let file = File::open(&target).unwrap();
        let watch = OpenerWatch::new(PROC.into(), NOT_HERE, [(0, &file)], Some(Instant::now()));
        if watch.opens.is_empty() {
            eprintln!("skipped: fanotify unavailable (it needs root)");
            return;
        }
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exec 3<\"$1\"; exec sleep 30", "sh"])
            .arg(&target)
            .spawn()
            .expect("spawn sh");
        // Until the shell has opened the target (its fd 3 shows it).
        let fd3 = PathBuf::from(format!("/proc/{}/fd/3", child.id()));
        let opened = (0..1000).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            std::fs::metadata(&fd3).is_ok_and(|m| NodeId::of(&m) == node(&target))
        });
        let mut obs = Observations {
            targets: vec![target_with(&target, &[0])],
            ..Default::default()
        };
        watch.finish(&mut obs);
        let _ = child.kill();
        let _ = child.wait();
        assert!(opened, "the shell never opened the target");
        assert_eq!(
            obs.opens_watched,
            [target.display().to_string()],
            "expected the target's opens watched"
        );
        let pid = child.id();
        assert!(
            obs.target_opens
                .iter()
                .any(|o| o.opener.pid == pid && ["sh", "sleep"].contains(&o.opener.comm.as_str())),
            "expected the shell ({pid}, sh or sleep by then) logged as an opener, saw {:?}",
            obs.target_opens
        );
    }

    fn target_with(path: &Path, cached: &[u64]) -> TargetObservation {
        TargetObservation {
            path: path.display().to_string(),
            cache_series: cached
                .iter()
                .map(|&c| {
                    Some(CachePages {
                        cached: c,
                        ..Default::default()
                    })
                })
                .collect(),
            ..Default::default()
        }
    }

    /// A scene where blkid (pid 4182) holds the target open, and the target opened.
    fn blkid_holding_the_target() -> (tempfile::TempDir, PathBuf, FakeProc, File) {
        let (dir, target, fake) = scene();
        fake.process(4182, "blkid", 1, &["blkid"], &[&target]);
        let file = File::open(&target).unwrap();
        (dir, target, fake, file)
    }

    #[test]
    fn scans_on_growth_at_most_once_a_second() {
        let (_dir, target, fake, file) = blkid_holding_the_target();
        let mut watch = OpenerWatch::new(fake.root.clone(), NOT_HERE, [(0, &file)], None);
        let start = Instant::now();
        let mut scans = Vec::new();
        // Cached pages per sample, 100 ms apart: growth at samples 2, 4 and 25.
        let mut series = vec![0, 0, 25, 25];
        series.extend([30; 9]);
        series.extend([10; 12]);
        series.push(12);
        for i in 0..series.len() {
            let target = target_with(&target, &series[..=i]);
            let t = Duration::from_millis(100 * i as u64);
            watch.after_sample(t.as_nanos() as u64, start + t, &[target], &mut scans);
        }
        let at: Vec<u64> = scans.iter().map(|s| s.t_ns / 100_000_000).collect();
        assert_eq!(
            at,
            [2, 12, 25],
            "expected scans at the first growth (sample 2), the growth at 4 put off to a second later (12), \
             and the growth at 25; saw {scans:?}"
        );
        assert!(
            scans
                .iter()
                .all(|s| s.openers.len() == 1 && s.openers[0].pid == 4182),
            "expected each scan to see pid 4182, saw {scans:?}"
        );
    }

    #[test]
    fn scans_stop_at_their_bound_and_are_counted_in_a_note() {
        let (_dir, target, fake, file) = blkid_holding_the_target();
        let mut watch = OpenerWatch::new(fake.root.clone(), NOT_HERE, [(0, &file)], None);
        let start = Instant::now();
        let mut scans = Vec::new();
        // The target's cache grows every second for more seconds than scans are kept.
        let seconds = MAX_SCANS as u64 + 5;
        for i in 0..seconds {
            let cached: Vec<u64> = (0..=i).collect();
            let t = Duration::from_secs(i);
            watch.after_sample(
                t.as_nanos() as u64,
                start + t,
                &[target_with(&target, &cached)],
                &mut scans,
            );
        }
        assert_eq!(scans.len(), MAX_SCANS);
        let mut obs = Observations {
            targets: vec![target_with(&target, &[0])],
            ..Observations::default()
        };
        watch.finish(&mut obs);
        assert!(
            obs.notes
                .iter()
                .any(|n| n.starts_with("4 scans") && n.contains("not made")),
            "{:?}",
            obs.notes
        );
    }
}
