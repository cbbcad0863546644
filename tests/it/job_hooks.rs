//! What runs around a job: `exec_prerun`/`exec_postrun` (once per clone, with `sh -c`,
//! output in JOBNAME.prerun.txt / .postrun.txt, compared with fio where installed) and
//! `ioscheduler=` on a loop device (switched for the job, switched back after).

use crate::support::{assert_failed_saying, command, isolated, scratch, stderr, LoopDevice};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `iolens run --no-history ARGS` in `dir`.
fn iolens_in(dir: &Path, args: &[&str]) -> Output {
    command()
        .args([&["run", "--no-history"][..], args].concat())
        .current_dir(dir)
        .output()
        .expect("run iolens")
}

/// fio run with `args` in a scratch directory it must succeed in; None without fio.
fn fio_in(args: &[&str]) -> Option<tempfile::TempDir> {
    let dir = scratch();
    let out = match isolated("fio").args(args).current_dir(dir.path()).output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "expected fio to run: {}",
        stderr(&out)
    );
    Some(dir)
}

fn assert_ran(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected the job to run: {}",
        stderr(out)
    );
}

/// A small write job `name` with `extra` (its commands) in `dir`, reporting in JSON.
fn small_write(dir: &Path, name: &str, extra: &[&str]) -> Output {
    let name = format!("--name={name}");
    let base = [name.as_str(), "--rw=write", "--bs=4k", "--size=16k"];
    iolens_in(dir, &[&base[..], extra, &["--output-format=json"]].concat())
}

/// The text of each of `names` in `dir`.
fn contents<const N: usize>(dir: &Path, names: [&str; N]) -> [String; N] {
    names.map(|name| read(&dir.join(name)))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("expected {} made: {e}", path.display()))
}

const MARKERS: &[&str] = &[
    "--name=p",
    "--rw=write",
    "--bs=4k",
    "--size=16k",
    "--numjobs=2",
    // fio appends its own redirection to the command's text, which would override one at
    // its end: a nested shell keeps the marker's redirection the same in both
    "--exec_prerun=sh -c 'echo pre >> marker'",
    "--exec_postrun=sh -c 'echo post >> marker'",
];

#[test]
fn prerun_and_postrun_run_once_per_clone_around_the_job_as_in_fio() {
    let dir = scratch();
    let out = iolens_in(dir.path(), MARKERS);
    assert_ran(&out);
    let marker = read(&dir.path().join("marker"));
    assert_eq!(
        marker, "pre\npre\npost\npost\n",
        "expected both clones' prerun before and both postruns after, saw the left"
    );
    if let Some(fio_dir) = fio_in(MARKERS) {
        // fio's clones run their commands each on its own, so a quick clone's postrun
        // may come before the other's prerun: only the lines are compared
        let lines = |text: String| {
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            lines.sort();
            lines
        };
        assert_eq!(
            lines(read(&fio_dir.path().join("marker"))),
            lines(marker),
            "expected fio's marker lines (left) to be iolens' (right)"
        );
    }
}

#[test]
fn a_command_s_output_and_errors_go_to_the_job_s_file_as_in_fio() {
    let args = [
        "--name=o",
        "--rw=write",
        "--bs=4k",
        "--size=16k",
        "--exec_prerun=sh -c 'echo out; echo err >&2'",
        "--exec_postrun=echo done",
    ];
    let dir = scratch();
    let out = iolens_in(dir.path(), &args);
    assert_ran(&out);
    let seen = contents(dir.path(), ["o.prerun.txt", "o.postrun.txt"]);
    assert_eq!(
        seen,
        ["out\nerr\n", "done\n"],
        "expected the commands' stdout and stderr in o.prerun.txt and o.postrun.txt"
    );
    if let Some(fio_dir) = fio_in(&args) {
        let fio_seen = contents(fio_dir.path(), ["o.prerun.txt", "o.postrun.txt"]);
        assert_eq!(
            fio_seen, seen,
            "expected fio's files (left) to hold iolens' (right)"
        );
    }
}

#[test]
fn a_command_s_own_redirections_and_lists_keep_their_meaning() {
    // fio binds its redirection to the last simple command only, so under fio `one`
    // would print on its stdout and `own` would stay empty: a deliberate difference
    let dir = scratch();
    let out = small_write(dir.path(), "r", &["--exec_prerun=echo one; echo two > own"]);
    assert_ran(&out);
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .expect("expected stdout to hold only the JSON report");
    let seen = contents(dir.path(), ["r.prerun.txt", "own"]);
    assert_eq!(
        seen,
        ["one\n", "two\n"],
        "expected the list's output in r.prerun.txt and the redirection kept"
    );
}

#[test]
fn a_failed_prerun_fails_its_job_before_any_io_and_skips_its_postrun() {
    let dir = scratch();
    let out = small_write(
        dir.path(),
        "f",
        &["--exec_prerun=exit 3", "--exec_postrun=echo post >> marker"],
    );
    assert_failed_saying(&out, 1, "exec_prerun=exit 3: exited with status 3");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let written = &doc["jobs"][0]["write"]["io_bytes"];
    assert_eq!(
        written, 0,
        "expected no I/O after a failed prerun, saw {written}"
    );
    assert!(
        !dir.path().join("marker").exists(),
        "expected no postrun after a failed prerun (fio skips it too)"
    );
}

/// The active scheduler and the choices of a `queue/scheduler` file.
fn scheduler(file: &Path) -> (String, Vec<String>) {
    let text = read(file);
    let active = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or(text.trim())
        .to_string();
    let choices = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect();
    (active, choices)
}

/// The loop device's `queue/scheduler` file, its active scheduler and choices, and
/// another one to switch to (None, with the reason printed, when it offers no other).
fn switchable(dev: &LoopDevice) -> Option<(PathBuf, String, Vec<String>, String)> {
    let name = Path::new(dev.path()).file_name()?.to_str()?.to_string();
    let file = Path::new("/sys/block").join(name).join("queue/scheduler");
    let (before, choices) = scheduler(&file);
    let Some(wanted) = choices.iter().find(|c| **c != before).cloned() else {
        eprintln!(
            "skipped: {} offers no scheduler but {before}",
            file.display()
        );
        return None;
    };
    Some((file, before, choices, wanted))
}

/// The job's prerun saw `wanted` in `file` (its copy is `seen` in `dir`), and `before` is
/// back in it now.
fn switched_then_back(dir: &Path, file: &Path, before: &str, wanted: &str) {
    let during = scheduler(&dir.join("seen")).0;
    assert_eq!(
        during, wanted,
        "expected {wanted} active while the job ran, saw {during}"
    );
    let after = scheduler(file).0;
    assert_eq!(
        after, before,
        "expected {before} back after the job, saw {after}"
    );
}

/// A filesystem mounted on a scratch directory, unmounted when dropped (also when the
/// test fails).
struct Mounted(tempfile::TempDir);

impl Mounted {
    /// An ext4 filesystem made on `dev` and mounted; None (reason printed) where it cannot be.
    fn ext4(dev: &LoopDevice) -> Option<Mounted> {
        let quiet = |cmd: &mut Command| {
            cmd.stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !quiet(Command::new("mkfs.ext4").args(["-q", dev.path()])) {
            eprintln!("skipped: mkfs.ext4 is not available");
            return None;
        }
        let dir = scratch();
        if !quiet(Command::new("mount").arg(dev.path()).arg(dir.path())) {
            eprintln!("skipped: cannot mount a loop device here");
            return None;
        }
        Some(Mounted(dir))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        crate::support::unmount(self.0.path());
    }
}

#[test]
fn ioscheduler_of_a_file_switches_the_device_holding_it() {
    let Some(dev) = LoopDevice::create(32 << 20) else {
        return;
    };
    let Some((file, before, _, wanted)) = switchable(&dev) else {
        return;
    };
    let Some(mounted) = Mounted::ext4(&dev) else {
        return;
    };
    let dir = scratch();
    let out = iolens_in(
        dir.path(),
        &[
            "--name=f",
            &format!("--filename={}", mounted.0.path().join("data").display()),
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            &format!("--ioscheduler={wanted}"),
            &format!("--exec_prerun=cat {} > seen", file.display()),
        ],
    );
    assert_ran(&out);
    switched_then_back(dir.path(), &file, &before, &wanted);
}

#[test]
fn ioscheduler_switches_the_device_for_the_job_and_back_after() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    let Some((file, before, choices, wanted)) = switchable(&dev) else {
        return;
    };
    let dir = scratch();
    let filename = format!("--filename={}", dev.path());
    let prerun = format!("--exec_prerun=cat {} > seen", file.display());
    let switch = format!("--ioscheduler={wanted}");
    let job = |extra: &[&str]| {
        let base = [
            "--name=s",
            filename.as_str(),
            "--rw=read",
            "--bs=4k",
            "--size=1m",
        ];
        iolens_in(dir.path(), &[&base[..], extra].concat())
    };

    let out = job(&[switch.as_str(), prerun.as_str()]);
    assert_ran(&out);
    switched_then_back(dir.path(), &file, &before, &wanted);

    let failed = job(&[switch.as_str(), "--exec_prerun=exit 1"]);
    assert_eq!(
        failed.status.code(),
        Some(1),
        "expected the job failed: {}",
        stderr(&failed)
    );
    let after = scheduler(&file).0;
    assert_eq!(
        after, before,
        "expected {before} back after a failed job, saw {after}"
    );

    // refused before any job runs: the first group's prerun leaves no marker
    let unknown = job(&[
        "--exec_prerun=touch first-ran",
        "--name=t",
        filename.as_str(),
        "--rw=read",
        "--size=1m",
        "--stonewall",
        "--ioscheduler=no-such-scheduler",
    ]);
    assert!(
        !dir.path().join("first-ran").exists(),
        "expected the refusal before the first group ran"
    );
    let offered = format!("it offers {}", choices.join(", "));
    assert_failed_saying(&unknown, 2, &offered);
    let message = stderr(&unknown);
    assert_eq!(
        message.lines().count(),
        1,
        "expected one line, saw: {message}"
    );
    assert_eq!(
        scheduler(&file).0,
        before,
        "expected {before} untouched by a refusal"
    );
}
