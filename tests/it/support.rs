//! Shared helpers: run the binary, scratch directories on a real filesystem,
//! loop devices that are always detached.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// The home directory of every program a test starts: under the build's temporary
/// directory, so nothing a test runs can write under the user's home.
pub(crate) fn scratch_home() -> PathBuf {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("it-home");
    std::fs::create_dir_all(&home).expect("create the scratch home");
    home
}

/// `program` with HOME and the XDG directories in the scratch home.
pub(crate) fn isolated(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let home = scratch_home();
    let mut command = Command::new(program);
    command
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"));
    command
}

/// Whether `fio` documents `option`.
pub(crate) fn fio_knows(fio: &Path, option: &str) -> bool {
    isolated(fio)
        .arg(format!("--cmdhelp={option}"))
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains(&format!("{option}:")))
}

/// An upstream fio (newer than the distribution's) that knows `option`:
/// `IOLENS_UPSTREAM_FIO`, else bench/fio-testsuite's build, else (with
/// `or_installed`) a `fio` on the PATH that has it. Without one, says why the
/// fio side is skipped.
pub(crate) fn upstream_fio(option: &str, or_installed: bool) -> Option<PathBuf> {
    let found = match std::env::var_os("IOLENS_UPSTREAM_FIO") {
        Some(given) => Some(PathBuf::from(given)).filter(|fio| fio_knows(fio, option)),
        None => {
            let built =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fio-testsuite/fio-src/fio");
            let installed = or_installed.then(|| PathBuf::from("fio"));
            std::iter::once(built)
                .chain(installed)
                .find(|fio| fio_knows(fio, option))
        }
    };
    if found.is_none() {
        eprintln!(
            "skipping the upstream fio side: no upstream fio with {option} \
             (set IOLENS_UPSTREAM_FIO or run bench/fio-testsuite)"
        );
    }
    found
}

/// The iolens binary, isolated, with its history in a scratch database.
pub(crate) fn command() -> Command {
    with_scratch_history(isolated(env!("CARGO_BIN_EXE_iolens")))
}

fn with_scratch_history(mut command: Command) -> Command {
    command.env(
        "IOLENS_DB",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("it-history.db"),
    );
    command
}

/// The iolens binary as `command` gives it, under `prlimit` with `limits` (`--as=BYTES`,
/// `--nproc=N`, …), so a bug that allocates or spawns without bound fails alone instead of
/// taking the machine; None, saying why, where prlimit is missing.
pub(crate) fn limited(limits: &[&str]) -> Option<Command> {
    let found = Command::new("prlimit").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipping: prlimit (util-linux) is not installed");
        return None;
    }
    let mut command = with_scratch_history(isolated("prlimit"));
    command
        .args(limits)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_iolens"));
    Some(command)
}

/// Runs `command` to its end with its output; a run still going after `patience` is a hang:
/// it is killed and the test fails.
pub(crate) fn output_within(mut command: Command, patience: std::time::Duration) -> Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    let drain = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = from.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + patience;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} still ran after {patience:?} (a hang)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// Runs iolens with its history in a scratch database, never the user's.
pub(crate) fn iolens(args: &[&str]) -> Output {
    command().args(args).output().expect("run iolens")
}

/// Runs iolens, failing the test unless it exits 0.
pub(crate) fn iolens_ok(args: &[&str]) -> Output {
    let out = iolens(args);
    assert!(
        out.status.success(),
        "expected `iolens {}` to succeed, saw {:?}: {}",
        args.join(" "),
        out.status.code(),
        stderr(&out)
    );
    out
}

/// A short sequential write job to the block device `dev` (what the guard judges),
/// with `extra` options, not stored in the history.
pub(crate) fn write_to_device(dev: &str, extra: &[&str]) -> Output {
    let target = format!("--filename={dev}");
    let job = [
        "run",
        "--no-history",
        "--name=w",
        &target,
        "--rw=write",
        "--bs=64k",
        "--size=1m",
    ];
    iolens(&[&job[..], extra].concat())
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `out` must have ended with exit `code` and said `fragment` on stderr.
pub(crate) fn assert_failed_saying(out: &Output, code: i32, fragment: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "expected exit {code}, saw: {}",
        stderr(out)
    );
    assert!(
        stderr(out).contains(fragment),
        "expected stderr to say {fragment:?}, saw: {}",
        stderr(out)
    );
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Parse stdout as JSON, failing the test with stderr shown.
pub(crate) fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "iolens failed ({:?}): {}",
        out.status.code(),
        stderr(out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", stdout(out)))
}

/// A scratch directory under target/ (a real filesystem: /tmp may be tmpfs, which refuses O_DIRECT).
pub(crate) fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("it");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

/// Unmount `dir`, waiting a while for a process that still holds it (a stuck
/// worker leaving after a frozen filesystem thaws), then detaching it lazily, so
/// no test leaves a mount behind.
pub(crate) fn unmount(dir: &Path) {
    for _ in 0..50 {
        let unmounted = Command::new("umount")
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if unmounted || !is_mount_point(dir) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = Command::new("umount").arg("-l").arg(dir).status();
}

fn is_mount_point(dir: &Path) -> bool {
    let dir = dir.to_string_lossy();
    std::fs::read_to_string("/proc/self/mounts")
        .is_ok_and(|mounts| mounts.lines().any(|l| l.split(' ').nth(1) == Some(&*dir)))
}

pub(crate) fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A loop device over a file in /dev/shm (a RAM disk); detached and removed on drop,
/// also when the test fails.
pub(crate) struct LoopDevice {
    pub device: PathBuf,
    backing: PathBuf,
    /// The test made the backing file for this device: removed with it.
    owns_backing: bool,
}

impl LoopDevice {
    /// None (with the reason printed) when loop devices cannot be used here.
    pub(crate) fn create(size: u64) -> Option<LoopDevice> {
        if !is_root() {
            eprintln!("skipped: block-device tests need root (CI runs as root)");
            return None;
        }
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let backing = PathBuf::from(format!(
            "/dev/shm/iolens-test-{}-{}.img",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::File::create(&backing).ok()?.set_len(size).ok()?;
        let mut device = LoopDevice::attach(&backing);
        match &mut device {
            Some(device) => device.owns_backing = true,
            None => {
                let _ = std::fs::remove_file(&backing);
            }
        }
        device
    }

    /// A loop device over an existing `file`, detached on drop (the file stays);
    /// None (with the reason printed) when losetup refuses it.
    pub(crate) fn attach(file: &Path) -> Option<LoopDevice> {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(LoopDevice {
                device: PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
                backing: file.to_path_buf(),
                owns_backing: false,
            }),
            other => {
                eprintln!("skipped: cannot create a loop device (losetup: {other:?})");
                None
            }
        }
    }

    pub(crate) fn backing(&self) -> &Path {
        &self.backing
    }

    pub(crate) fn path(&self) -> &str {
        self.device.to_str().unwrap()
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.device).status();
        if self.owns_backing {
            let _ = std::fs::remove_file(&self.backing);
        }
    }
}
