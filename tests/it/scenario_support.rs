//! Guards for the scenario tests. Each one undoes on drop what it did, also
//! when the test fails: processes are killed, filesystems unmounted, and
//! kernel settings restored only if they still hold the value the test set
//! (another tenant may have changed them meanwhile; theirs wins).

use crate::support::{is_root, LoopDevice};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// True when every tool exists; otherwise prints why the scenario is skipped.
pub fn have_tools(tools: &[&str]) -> bool {
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
pub fn run(program: &str, args: &[&str]) {
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
pub struct Holder(Child);

impl Holder {
    pub fn open(device: &Path) -> Holder {
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
    pub fn read_and_hold(device: &Path, offset: u64, pages: usize, hold_s: u32) -> Holder {
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

    pub fn pid(&self) -> u32 {
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
pub fn flush_buffers(device: &Path) {
    run("blockdev", &["--flushbufs", device.to_str().unwrap()]);
}

/// Read `pages` pages at `offset` through the page cache, as blkid does;
/// readahead usually caches more than was asked.
pub fn read_through_cache(device: &Path, offset: u64, pages: usize) {
    let mut buf = vec![0u8; pages * 4096];
    File::open(device)
        .unwrap()
        .read_exact_at(&mut buf, offset)
        .unwrap();
}

/// An ext4 filesystem on a loop device over /dev/shm, mounted on a scratch
/// directory; unmounted (then the device detached) on drop.
pub struct Ext4 {
    pub mount_point: tempfile::TempDir,
    pub device: LoopDevice,
}

impl Ext4 {
    pub fn create(size: u64) -> Option<Ext4> {
        if !have_tools(&["mkfs.ext4", "mount", "umount"]) {
            return None;
        }
        let device = LoopDevice::create(size)?;
        run("mkfs.ext4", &["-q", "-F", device.path()]);
        let fs = Ext4 {
            mount_point: tempfile::tempdir().unwrap(),
            device,
        };
        fs.mount();
        Some(fs)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.mount_point.path().join(name)
    }

    /// The loop device's name under /sys/block ("loop3").
    pub fn device_name(&self) -> String {
        self.device
            .device
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    fn mount(&self) {
        run(
            "mount",
            &[
                "-o",
                "noatime",
                self.device.path(),
                self.mount_point.path().to_str().unwrap(),
            ],
        );
    }

    /// Unmount and mount again: the only way to make every file cold without
    /// dropping the whole machine's caches.
    pub fn remount(&self) {
        run("umount", &[self.mount_point.path().to_str().unwrap()]);
        self.mount();
    }

    /// A file of `size` bytes written with zeros and synced, so later writes
    /// overwrite allocated blocks (the seed 004 setup).
    pub fn preallocated_file(&self, name: &str, size: u64) -> PathBuf {
        let path = self.path(name);
        let file = File::create(&path).unwrap();
        let chunk = vec![0u8; 1 << 20];
        for offset in (0..size).step_by(chunk.len()) {
            file.write_all_at(&chunk, offset).unwrap();
        }
        file.sync_all().unwrap();
        path
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        crate::support::unmount(self.mount_point.path());
    }
}

/// A value written to a kernel file, put back on drop if the file still shows
/// it (as its value, or as one of its lines for a rule list). `restore` is
/// what to write back, which is not always the value read before (see `DirtyLimit`).
#[must_use = "the setting is restored when this is dropped"]
pub struct KernelSetting {
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
pub fn dirty_limit(which: &str, bytes: u64) -> KernelSetting {
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
pub fn write_throttle(device_name: &str, bytes_per_sec: u64) -> Option<KernelSetting> {
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
pub fn stable_writes(device_name: &str) -> KernelSetting {
    let path = Path::new("/sys/block")
        .join(device_name)
        .join("queue/stable_writes");
    let before = read_trimmed(&path);
    KernelSetting::write(&path, "1", vec![(path.clone(), before)])
}

/// Scenarios measure timing and change machine-wide settings: they run one at a time.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
