//! Guards for the scenario tests. Each one undoes on drop what it did, also
//! when the test fails: processes are killed, filesystems unmounted, and
//! kernel settings restored only if they still hold the value the test set
//! (another tenant may have changed them meanwhile; theirs wins).

use crate::support::{is_root, LoopDevice};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// True when every tool exists; otherwise prints why the scenario is skipped.
pub(crate) fn have_tools(tools: &[&str]) -> bool {
    if !is_root() {
        eprintln!("skipped: scenario tests need root (CI runs as root)");
        return false;
    }
    for tool in tools {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            eprintln!("skipped: {tool} is not installed");
            return false;
        }
    }
    true
}

/// Run a command that must succeed.
pub(crate) fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A process that keeps a block device open, as udev or a monitoring agent
/// would. Without one, the device's page cache is dropped when the last
/// opener closes it, and pollution made between two runs would vanish.
pub(crate) struct Holder(Child);

impl Holder {
    pub(crate) fn open(device: &Path) -> Holder {
        let stdin = File::open(device).unwrap();
        Holder(
            Command::new("sleep")
                .arg("1000000")
                .stdin(stdin)
                .spawn()
                .expect("spawn sleep"),
        )
    }

    /// A shell that opens `device`, has dd read `pages` pages at `offset`
    /// through the page cache (as blkid would), then keeps the device open as
    /// `sleep` for `hold_s` seconds.
    pub(crate) fn read_and_hold(device: &Path, offset: u64, pages: usize, hold_s: u32) -> Holder {
        let script = format!(
            "exec 3<\"$1\"; dd if=\"$1\" of=/dev/null bs=4096 count={pages} skip={} 2>/dev/null; exec sleep {hold_s}",
            offset / 4096
        );
        Holder(
            Command::new("sh")
                .args(["-c", &script, "sh"])
                .arg(device)
                .spawn()
                .expect("spawn sh"),
        )
    }

    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Drop a block device's clean page cache (BLKFLSBUF), as the clean arm of seed 000 does.
pub(crate) fn flush_buffers(device: &Path) {
    run("blockdev", &["--flushbufs", device.to_str().unwrap()]);
}

/// Read `pages` pages at `offset` through the page cache, as blkid does;
/// readahead usually caches more than was asked.
pub(crate) fn read_through_cache(device: &Path, offset: u64, pages: usize) {
    let mut buf = vec![0u8; pages * 4096];
    File::open(device)
        .unwrap()
        .read_exact_at(&mut buf, offset)
        .unwrap();
}

/// Where a loop device's backing file lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backing {
    /// A file in /dev/shm: RAM, no disk below the loop device.
    Shm,
    /// A file in the test's scratch space under `CARGO_TARGET_TMPDIR`: the
    /// machine's disk is below the loop device, with its own page cache.
    Disk,
}

/// A loop device over a fresh sparse file (a hole of `size` bytes), with or
/// without direct I/O to that file. Detached on drop, then the file removed.
pub(crate) struct BackedLoop {
    // Declared first: detached before the backing file's directory goes.
    device: LoopDevice,
    _backing_dir: tempfile::TempDir,
}

impl BackedLoop {
    /// None, with the reason printed, without root or losetup, or when the
    /// kernel refuses direct I/O on the backing file.
    pub(crate) fn create(size: u64, backing: Backing, direct_io: bool) -> Option<BackedLoop> {
        if !have_tools(&["losetup"]) {
            return None;
        }
        let backing_dir = match backing {
            Backing::Shm => tempfile::tempdir_in("/dev/shm").ok()?,
            Backing::Disk => crate::support::scratch(),
        };
        let file = backing_dir.path().join("backing.img");
        File::create(&file).ok()?.set_len(size).ok()?;
        let device = BackedLoop {
            device: LoopDevice::attach(&file)?,
            _backing_dir: backing_dir,
        };
        if direct_io {
            // losetup may print nothing when the ioctl fails: the sysfs flag decides.
            let _ = Command::new("losetup")
                .args(["--direct-io=on", device.path()])
                .stderr(Stdio::null())
                .status();
        }
        let dio = read_trimmed(&Path::new("/sys/block").join(device.name()).join("loop/dio"));
        if dio != if direct_io { "1" } else { "0" } {
            eprintln!(
                "skipped: {} has dio={dio} over {file:?}, not the direct_io={direct_io} asked",
                device.path()
            );
            return None;
        }
        Some(device)
    }

    /// The device node ("/dev/loop3").
    pub(crate) fn path(&self) -> &str {
        self.device.path()
    }

    /// The name under /sys/block ("loop3").
    pub(crate) fn name(&self) -> String {
        self.device
            .device
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    pub(crate) fn backing_file(&self) -> &Path {
        self.device.backing()
    }
}

/// A filesystem type `LoopFs` can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FsKind {
    Ext4,
    Xfs,
    /// Needs at least ~128 MiB.
    Btrfs,
}

impl FsKind {
    /// mkfs, quiet and forced over whatever the device held.
    fn mkfs(self) -> (&'static str, &'static [&'static str]) {
        match self {
            FsKind::Ext4 => ("mkfs.ext4", &["-q", "-F"]),
            FsKind::Xfs => ("mkfs.xfs", &["-q", "-f"]),
            FsKind::Btrfs => ("mkfs.btrfs", &["-q", "-f"]),
        }
    }
}

/// A fresh filesystem on a `BackedLoop`, mounted on a scratch directory;
/// unmounted on drop, then the device detached and its backing file removed.
pub(crate) struct LoopFs {
    mount_point: tempfile::TempDir,
    device: BackedLoop,
    mount_options: String,
}

impl LoopFs {
    /// None, with the reason printed, where the machine lacks root, the
    /// filesystem's tools, or direct I/O on the backing file.
    pub(crate) fn create(
        kind: FsKind,
        size: u64,
        backing: Backing,
        direct_io: bool,
        mount_options: &[&str],
    ) -> Option<LoopFs> {
        let (mkfs, mkfs_args) = kind.mkfs();
        if !have_tools(&[mkfs, "mount", "umount"]) {
            return None;
        }
        let device = BackedLoop::create(size, backing, direct_io)?;
        let mut args = mkfs_args.to_vec();
        args.push(device.path());
        run(mkfs, &args);
        let fs = LoopFs {
            mount_point: crate::support::scratch(),
            device,
            mount_options: mount_options.join(","),
        };
        fs.mount();
        Some(fs)
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.mount_point.path().join(name)
    }

    /// The loop device's name under /sys/block ("loop3").
    pub(crate) fn device_name(&self) -> String {
        self.device.name()
    }

    fn mount(&self) {
        let mut args = vec![];
        if !self.mount_options.is_empty() {
            args.extend(["-o", &self.mount_options]);
        }
        args.extend([
            self.device.path(),
            self.mount_point.path().to_str().unwrap(),
        ]);
        run("mount", &args);
    }

    /// Unmount and mount again: the only way to make every file cold without
    /// dropping the whole machine's caches. The backing file's own cache (Disk
    /// backing without direct I/O) stays.
    pub(crate) fn remount(&self) {
        run("umount", &[self.mount_point.path().to_str().unwrap()]);
        self.mount();
    }

    /// A file of `size` bytes written with zeros and synced, so later writes
    /// overwrite allocated blocks (the seed 004 setup).
    pub(crate) fn preallocated_file(&self, name: &str, size: u64) -> PathBuf {
        let path = self.path(name);
        let file = File::create(&path).unwrap();
        let chunk = vec![0u8; 1 << 20];
        for offset in (0..size).step_by(chunk.len()) {
            file.write_all_at(&chunk, offset).unwrap();
        }
        file.sync_all().unwrap();
        path
    }

    /// A file of `size` bytes allocated by `fallocate` and never written:
    /// unwritten extents, which read as zeros without touching the device.
    pub(crate) fn fallocated_file(&self, name: &str, size: u64) -> PathBuf {
        let path = self.path(name);
        run(
            "fallocate",
            &["-l", &size.to_string(), path.to_str().unwrap()],
        );
        path
    }

    /// A file of `size` bytes that is one hole (truncated to its size).
    pub(crate) fn sparse_file(&self, name: &str, size: u64) -> PathBuf {
        let path = self.path(name);
        File::create(&path).unwrap().set_len(size).unwrap();
        path
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        crate::support::unmount(self.mount_point.path());
    }
}

/// ext4 on a loop device over /dev/shm without direct I/O, mounted noatime:
/// the seed scenarios' filesystem.
pub(crate) struct Ext4(LoopFs);

impl Ext4 {
    pub(crate) fn create(size: u64) -> Option<Ext4> {
        LoopFs::create(FsKind::Ext4, size, Backing::Shm, false, &["noatime"]).map(Ext4)
    }
}

impl std::ops::Deref for Ext4 {
    type Target = LoopFs;

    fn deref(&self) -> &LoopFs {
        &self.0
    }
}

/// A zram device (compressed RAM) given a disk size; reset on drop, which
/// frees its memory. Only /dev/zram0, and only when nobody set it up: a
/// disksize other than 0 means it is in use.
pub(crate) struct Zram {
    name: &'static str,
    // Held until the reset: two tests never share the device.
    _only_user: std::sync::MutexGuard<'static, ()>,
}

impl Zram {
    pub(crate) fn create(size: u64) -> Option<Zram> {
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        // No tools: only root.
        if !have_tools(&[]) {
            return None;
        }
        let only_user = LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let name = "zram0";
        let disksize = Path::new("/sys/block").join(name).join("disksize");
        match read_trimmed(&disksize).as_str() {
            "0" => {}
            "" => {
                eprintln!("skipped: no {name} (the zram module is not loaded)");
                return None;
            }
            used => {
                eprintln!("skipped: {name} is in use (disksize {used})");
                return None;
            }
        }
        if let Err(e) = std::fs::write(&disksize, size.to_string()) {
            eprintln!("skipped: cannot set {disksize:?}: {e}");
            return None;
        }
        Some(Zram {
            name,
            _only_user: only_user,
        })
    }

    /// The device node ("/dev/zram0").
    pub(crate) fn path(&self) -> PathBuf {
        Path::new("/dev").join(self.name)
    }

    /// The name under /sys/block ("zram0").
    pub(crate) fn name(&self) -> &str {
        self.name
    }

    /// /sys/block/zramN/mm_stat: orig_data_size, compr_data_size,
    /// mem_used_total, mem_limit, mem_used_max, same_pages, pages_compacted,
    /// huge_pages, huge_pages_since (bytes, except the page counts).
    pub(crate) fn mm_stat(&self) -> Vec<u64> {
        read_trimmed(&Path::new("/sys/block").join(self.name).join("mm_stat"))
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect()
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let reset = Path::new("/sys/block").join(self.name).join("reset");
        if let Err(e) = std::fs::write(&reset, "1") {
            eprintln!("could not reset {}: {e}", self.name);
        }
    }
}

/// A private tmpfs mounted on a scratch directory, unmounted on drop; a
/// directory in /dev/shm (a tmpfs too) where mounting is not possible.
pub(crate) struct Tmpfs {
    dir: tempfile::TempDir,
    mounted: bool,
}

impl Tmpfs {
    pub(crate) fn mount(size: u64) -> Option<Tmpfs> {
        let dir = crate::support::scratch();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if mounted {
            Some(Tmpfs { dir, mounted })
        } else {
            Tmpfs::in_dev_shm()
        }
    }

    fn in_dev_shm() -> Option<Tmpfs> {
        match tempfile::tempdir_in("/dev/shm") {
            Ok(dir) => Some(Tmpfs {
                dir,
                mounted: false,
            }),
            Err(e) => {
                eprintln!("skipped: no tmpfs to mount and no /dev/shm ({e})");
                None
            }
        }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        if self.mounted {
            crate::support::unmount(self.dir.path());
        }
    }
}

/// Another process writing to `path` with direct I/O, at roughly a given
/// rate, for as long as the guard lives: a neighbour sharing the device with
/// the run, long-lived like a database or a backup (one dd, fed through a
/// pipe a tenth of a second's worth at a time). Its process group (the
/// shell, its feeder and its dd) is killed on drop.
pub(crate) struct Neighbour(Child);

/// The neighbour's dd writes blocks of this size.
const NEIGHBOUR_BLOCK: u64 = 64 << 10;

impl Neighbour {
    /// Appends to `path` about `bytes_per_sec_hint` a second (less when the
    /// device is slower).
    pub(crate) fn start(path: &Path, bytes_per_sec_hint: u64) -> Option<Neighbour> {
        if !have_tools(&["sh", "dd", "head", "sleep"]) {
            return None;
        }
        let tenth = (bytes_per_sec_hint / 10 / NEIGHBOUR_BLOCK).max(1) * NEIGHBOUR_BLOCK;
        let script = format!(
            "while :; do head -c {tenth} /dev/zero; sleep 0.1; done | \
             dd of=\"$1\" bs={NEIGHBOUR_BLOCK} iflag=fullblock oflag=direct status=none"
        );
        let child = Command::new("sh")
            .args(["-c", &script, "sh"])
            .arg(path)
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        Some(Neighbour(child))
    }

    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        // The group is the shell's own (process_group(0)): its dd goes too.
        // sh's builtin kill signals a group; std only signals one process.
        let _ = Command::new("sh")
            .args(["-c", "kill -9 \"-$1\"", "sh"])
            .arg(self.pid().to_string())
            .status();
        let _ = self.0.wait();
    }
}

/// A value written to a kernel file, put back on drop if the file still shows
/// it (as its value, or as one of its lines for a rule list). `restore` is
/// what to write back, which is not always the value read before (see `DirtyLimit`).
#[must_use = "the setting is restored when this is dropped"]
pub(crate) struct KernelSetting {
    path: PathBuf,
    written: String,
    restore: Vec<(PathBuf, String)>,
}

impl KernelSetting {
    fn write(path: &Path, value: &str, restore: Vec<(PathBuf, String)>) -> KernelSetting {
        std::fs::write(path, value).unwrap_or_else(|e| panic!("write {value} to {path:?}: {e}"));
        KernelSetting {
            path: path.to_path_buf(),
            written: value.to_string(),
            restore,
        }
    }
}

impl Drop for KernelSetting {
    fn drop(&mut self) {
        let now = read_trimmed(&self.path);
        if !now.lines().any(|line| line.trim() == self.written) {
            eprintln!(
                "left {:?} alone: it holds {now}, not the {} this test set",
                self.path, self.written
            );
            return;
        }
        for (path, value) in &self.restore {
            if let Err(e) = std::fs::write(path, value) {
                eprintln!("could not restore {path:?} to {value}: {e}");
            }
        }
    }
}

fn read_trimmed(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Set `vm.dirty_bytes` or `vm.dirty_background_bytes` (`which` is "dirty" or
/// "dirty_background"). Setting a `_bytes` value zeroes its `_ratio` twin and
/// the kernel refuses `_bytes = 0`, so a ratio-based original is restored by
/// writing the ratio back.
pub(crate) fn dirty_limit(which: &str, bytes: u64) -> KernelSetting {
    let vm = Path::new("/proc/sys/vm");
    let bytes_path = vm.join(format!("{which}_bytes"));
    let ratio_path = vm.join(format!("{which}_ratio"));
    let original_bytes = read_trimmed(&bytes_path);
    let restore = if original_bytes == "0" {
        (ratio_path.clone(), read_trimmed(&ratio_path))
    } else {
        (bytes_path.clone(), original_bytes)
    };
    KernelSetting::write(&bytes_path, &bytes.to_string(), vec![restore])
}

/// Throttle writes to `device_name` to `bytes_per_sec` for every process, the
/// kernel's flusher threads included (a rule in the root blkio cgroup of
/// cgroup v1; the flusher is not in any child cgroup there). None, with the
/// reason printed, where cgroup v1 blkio throttling is not mounted.
pub(crate) fn write_throttle(device_name: &str, bytes_per_sec: u64) -> Option<KernelSetting> {
    let rules = Path::new("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device");
    if !rules.exists() {
        eprintln!("skipped: needs cgroup v1 blkio throttling ({rules:?} is absent)");
        return None;
    }
    let dev = read_trimmed(&Path::new("/sys/block").join(device_name).join("dev"));
    let before = read_trimmed(rules);
    if before.lines().any(|l| l.starts_with(&format!("{dev} "))) {
        eprintln!("skipped: {device_name} already has a write throttle: {before}");
        return None;
    }
    Some(KernelSetting::write(
        rules,
        &format!("{dev} {bytes_per_sec}"),
        vec![(rules.to_path_buf(), format!("{dev} 0"))],
    ))
}

/// `stable_writes=1` on a device: writes to a page under writeback wait for it,
/// the behaviour behind the 2012 seed 004 stalls.
pub(crate) fn stable_writes(device_name: &str) -> KernelSetting {
    let path = Path::new("/sys/block")
        .join(device_name)
        .join("queue/stable_writes");
    let before = read_trimmed(&path);
    KernelSetting::write(&path, "1", vec![(path.clone(), before)])
}

/// Scenarios measure timing and change machine-wide settings: they run one at a time.
pub(crate) fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
