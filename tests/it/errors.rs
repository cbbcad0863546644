//! Error paths, one table row each: the exit code and the one-line message
//! (job, file, offset, errno name), and the partial results a failed run keeps.

use crate::support::{iolens, is_root, scratch, stderr, LoopDevice};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A small tmpfs mounted for one test: a full (or read-only) filesystem without
/// a device-mapper target. Unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        if !is_root() {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let dir = scratch();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount_read_only(&self) {
        let ok = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        crate::support::unmount(self.dir.path());
    }
}

/// What a row expects.
struct Expect {
    code: i32,
    fragments: &'static [&'static str],
    /// The direction ([read, write]) whose completed I/Os the partial report keeps.
    partial: Option<usize>,
}

fn check(name: &str, args: &[String], expect: &Expect) {
    let mut all = vec![
        "run".to_string(),
        "--no-history".into(),
        "--output-format=iolens-json".into(),
        "--name=w".into(),
        "--thread".into(),
    ];
    all.extend_from_slice(args);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let out = iolens(&all);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(expect.code), "{name}: {err}");
    let error_lines: Vec<&str> = err.lines().filter(|l| !l.contains("warning")).collect();
    assert_eq!(error_lines.len(), 1, "{name}: one line expected: {err}");
    for fragment in expect.fragments {
        assert!(err.contains(fragment), "{name}: no '{fragment}' in: {err}");
    }
    if let Some(d) = expect.partial {
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: no partial report ({e}): {err}"));
        let ios = report["jobs"][0]["dirs"][d]["total_ios"].as_u64().unwrap();
        assert!(ios > 0, "{name}: the partial results were lost");
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn each_error_is_one_clear_line() {
    let dir = scratch();
    // A missing directory on the way is made, as fio makes it; a file there is no way on.
    std::fs::write(dir.path().join("plain"), b"").unwrap();
    let blocked = dir.path().join("plain").join("f");
    check(
        "ENOTDIR",
        &strings(&[
            &format!("--filename={}", blocked.display()),
            "--rw=write",
            "--size=1m",
        ]),
        &Expect {
            code: 1,
            fragments: &["plain/f", "ENOTDIR"],
            partial: None,
        },
    );

    if let Some(full) = Tmpfs::mount("2m") {
        // The job fits the filesystem but not what is left of it: it runs (with a
        // warning before it starts) until ENOSPC, as fio's would.
        std::fs::write(full.path().join("filler"), vec![1u8; 3 << 19]).unwrap();
        let target: PathBuf = full.path().join("f");
        check(
            "ENOSPC",
            &strings(&[
                &format!("--filename={}", target.display()),
                "--rw=write",
                "--bs=64k",
                "--size=1m",
            ]),
            &Expect {
                code: 1,
                fragments: &[
                    "will stop at ENOSPC",
                    "job 'w'",
                    "write ",
                    "/f at offset ",
                    "ENOSPC (No space left on device)",
                ],
                partial: Some(1),
            },
        );
    }

    if let Some(ro) = Tmpfs::mount("4m") {
        let target = ro.path().join("f");
        std::fs::write(&target, vec![1u8; 1 << 20]).unwrap();
        ro.remount_read_only();
        check(
            "EROFS",
            &strings(&[
                &format!("--filename={}", target.display()),
                "--rw=write",
                "--size=1m",
            ]),
            &Expect {
                code: 1,
                fragments: &["/f: ", "EROFS (Read-only file system)"],
                partial: None,
            },
        );
    }

    if !is_root() {
        let target = dir.path().join("locked");
        std::fs::write(&target, b"").unwrap();
        std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o000))
            .unwrap();
        check(
            "EACCES",
            &strings(&[
                &format!("--filename={}", target.display()),
                "--rw=write",
                "--size=64k",
            ]),
            &Expect {
                code: 1,
                fragments: &["locked", "EACCES"],
                partial: None,
            },
        );
    }

    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    check(
        "EINVAL (misaligned O_DIRECT)",
        &strings(&[
            &format!("--filename={}", dev.path()),
            "--rw=read",
            "--direct=1",
            "--bs=1000",
        ]),
        &Expect {
            code: 2,
            fragments: &["job 'w'", "bs=1000", "512-byte logical sector"],
            partial: None,
        },
    );
    check(
        "device shorter than size",
        &strings(&[
            &format!("--filename={}", dev.path()),
            "--rw=read",
            "--size=32m",
        ]),
        &Expect {
            code: 2,
            fragments: &["the device holds 16777216", "lower size="],
            partial: None,
        },
    );
}

#[test]
fn a_device_that_goes_away_mid_run_is_an_eio_with_partial_results() {
    let Some(dev) = LoopDevice::create(64 << 20) else {
        return;
    };
    let (path, backing) = (dev.path().to_string(), dev.backing().to_path_buf());
    // Cut the device's backing store from under the running job, once it reads (not
    // after a fixed delay: on a busy machine the job may not have started by then).
    // With direct I/O to its backing file the loop device fails a read past the
    // file's end (EIO); buffered, it may hand back zeros, or hang a capacity change.
    let dio = Command::new("losetup")
        .args(["--direct-io=on", &path])
        .status()
        .expect("run losetup");
    assert!(
        dio.success(),
        "expected losetup --direct-io=on {path} to pass, got {dio}"
    );
    let stat = format!("/sys/block/{}/stat", path.trim_start_matches("/dev/"));
    let reads = move || {
        std::fs::read_to_string(&stat)
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // A reused loop device keeps its counts: start from what it has now.
    let before = reads();
    let cutter = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        // More reads than the checks before the job make (signatures, sizes).
        while reads() < before + 1000 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(&backing)
            .unwrap()
            .set_len(0)
            .unwrap();
    });
    check(
        "EIO (device removed)",
        &strings(&[
            &format!("--filename={}", dev.path()),
            "--rw=randread",
            "--direct=1",
            "--runtime=20",
            "--time_based",
        ]),
        &Expect {
            code: 1,
            fragments: &[
                "job 'w'",
                "read ",
                " at offset ",
                "EIO (Input/output error)",
            ],
            partial: Some(0),
        },
    );
    cutter.join().unwrap();
}

#[test]
fn a_log_that_fills_the_disk_fails_the_job_and_keeps_what_was_logged() {
    let Some(small) = Tmpfs::mount("64k") else {
        return;
    };
    let prefix = small.path().join("lat");
    let out = crate::support::iolens(&[
        "run",
        "--no-history",
        "--name=x",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=1g",
        "--number_ios=200000",
        &format!("--write_lat_log={}", prefix.display()),
    ]);
    let said = crate::support::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cannot write a log: the clat log stopped: No space left on device")
            && said.contains("what was logged before is kept in"),
        "{said}"
    );
    let clat = small.path().join("lat_clat.1.log");
    let kept = std::fs::read_to_string(&clat).unwrap_or_default();
    assert!(
        kept.lines().count() > 100,
        "expected the partial clat log kept at {}",
        clat.display()
    );
    assert!(
        crate::support::stdout(&out).contains("read: IOPS="),
        "the measured results are still reported"
    );
}
