//! Data safety under hostile conditions: what iolens may delete, overwrite or fill,
//! and what it must leave alone.

use crate::support::{iolens, scratch, stderr};
use std::path::Path;

#[test]
fn readonly_keeps_the_file_that_unlink_would_remove() {
    let dir = scratch();
    let path = dir.path().join("data");
    let content = vec![0x5au8; 1 << 20];
    std::fs::write(&path, &content).unwrap();
    let out = iolens(&[
        "run",
        "--no-history",
        "--readonly",
        "--name=r",
        &format!("--filename={}", path.display()),
        "--rw=read",
        "--bs=64k",
        "--size=1m",
        "--unlink=1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&path).ok(),
        Some(content),
        "expected --readonly to keep {} whole despite unlink=1",
        path.display()
    );
    assert!(
        stderr(&out).contains("unlink=1 removes nothing under --readonly"),
        "expected a warning that unlink=1 was not carried out, saw: {}",
        stderr(&out)
    );
}

/// `iolens quick FILE` on `path`, short, without history.
fn quick_on(path: &Path, extra: &[&str]) -> std::process::Output {
    let target = path.display().to_string();
    let mut args = vec![
        "quick",
        target.as_str(),
        "--no-history",
        "--duration=200ms",
        "--ramp=0",
    ];
    args.extend(extra);
    iolens(&args)
}

#[test]
fn quick_overwrites_an_existing_file_only_when_allowed() {
    let dir = scratch();
    let path = dir.path().join("precious");
    let content: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &content).unwrap();

    let refused = quick_on(&path, &[]);
    let err = stderr(&refused);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "expected quick to refuse an existing file, saw: {err}"
    );
    let named = path.display().to_string();
    assert!(
        err.lines()
            .any(|l| l.contains(&named) && l.contains("--allow-destructive")),
        "expected one line naming {named} and --allow-destructive, saw: {err}"
    );
    assert!(
        std::fs::read(&path).unwrap() == content,
        "expected {named} unchanged after the refusal"
    );

    let read_only = quick_on(&path, &["--read-only"]);
    assert_eq!(read_only.status.code(), Some(0), "{}", stderr(&read_only));
    assert!(
        std::fs::read(&path).unwrap() == content,
        "expected a --read-only quick to leave {named} unchanged"
    );

    let allowed = quick_on(&path, &["--allow-destructive"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
}

/// `iolens run JOBFILE` in `dir` (where the hooks' output files go), without history.
fn run_job_file(dir: &Path, job_file: &str) -> std::process::Output {
    let path = dir.join("job.fio");
    std::fs::write(&path, job_file).unwrap();
    crate::support::command()
        .current_dir(dir)
        .args(["run", "--no-history", path.to_str().unwrap()])
        .output()
        .expect("run iolens")
}

/// A scratch directory with `d/` (the jobs' directory=) and `out/f`, a file outside
/// it holding `keep`, which no job may touch.
fn inside_and_outside() -> (tempfile::TempDir, String, String) {
    let dir = scratch();
    let d = dir.path().join("d");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("f"), b"keep").unwrap();
    let (d, out) = (d.display().to_string(), out.display().to_string());
    (dir, d, out)
}

/// The one line saying a name leads out of `directory=`, as refused; the file outside kept.
fn assert_refused_as_leading_out(out: &std::process::Output, outside: &str) {
    let err = stderr(out);
    assert_ne!(out.status.code(), Some(0), "expected a refusal, saw: {err}");
    assert!(
        err.lines()
            .any(|l| l.contains("sub/f: the name leads out of directory=")),
        "expected one line naming the file and directory=, saw: {err}"
    );
    assert_eq!(
        std::fs::read(Path::new(outside).join("f")).ok().as_deref(),
        Some(&b"keep"[..]),
        "expected {outside}/f untouched"
    );
}

#[test]
fn a_directory_swapped_for_a_link_out_after_the_check_is_not_written_through() {
    let (dir, d, out) = inside_and_outside();
    // The first job swaps the directory a later job's name passes through for a link
    // out of directory=, after the names were checked and before that job opens its file.
    let job_file = format!(
        "[swap]\nioengine=null\nsize=4k\nexec_prerun=mv {d}/sub {d}/old && ln -s {out} {d}/sub\n\n\
         [victim]\nstonewall\ndirectory={d}\nfilename_format=sub/f\nsize=64k\nbs=4k\nrw=write\ncreate_on_open=1\n"
    );
    let run = run_job_file(dir.path(), &job_file);
    assert_refused_as_leading_out(&run, &out);
}

#[test]
fn unlink_through_a_directory_swapped_for_a_link_out_removes_nothing_outside() {
    let (dir, d, out) = inside_and_outside();
    let job_file = format!(
        "[w]\ndirectory={d}\nfilename_format=sub/f\nsize=64k\nbs=4k\nrw=write\nunlink=1\n\
         exec_postrun=mv {d}/sub {d}/old && ln -s {out} {d}/sub\n"
    );
    let run = run_job_file(dir.path(), &job_file);
    assert_refused_as_leading_out(&run, &out);
}

#[test]
fn a_file_to_create_is_not_created_through_a_link_at_its_name() {
    let dir = scratch();
    let elsewhere = dir.path().join("elsewhere");
    let link = dir.path().join("new");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let out = iolens(&[
        "run",
        "--no-history",
        "--name=w",
        &format!("--filename={}", link.display()),
        "--rw=write",
        "--size=64k",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "expected a refusal, saw: {err}");
    assert!(
        err.lines()
            .any(|l| l.contains(&link.display().to_string()) && l.contains("never through a link")),
        "expected one line naming the link, saw: {err}"
    );
    assert!(
        !elsewhere.exists(),
        "expected nothing created at the link's target"
    );
}

/// A read job on `path` of `size`, without history.
fn read_job(path: &Path, size: &str) -> std::process::Output {
    iolens(&[
        "run",
        "--no-history",
        "--name=r",
        &format!("--filename={}", path.display()),
        "--rw=read",
        "--bs=64k",
        &format!("--size={size}"),
    ])
}

/// The refusal of a layout larger than the filesystem's room, nothing made.
fn assert_refused_for_room(out: &std::process::Output, path: &Path) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "expected a refusal, saw: {err}");
    let line = err
        .lines()
        .find(|l| l.contains(&path.display().to_string()));
    assert!(
        line.is_some_and(|l| l.contains("size= needs") && l.contains("free; lower size=")),
        "expected one line naming the file, the size, the free space and size=, saw: {err}"
    );
    assert!(!path.exists(), "expected {} not created", path.display());
}

#[test]
fn a_layout_of_2_to_the_60_bytes_is_refused_before_it_starts() {
    let dir = scratch();
    let path = dir.path().join("huge");
    assert_refused_for_room(&read_job(&path, "1024p"), &path);
}

/// A small tmpfs mounted on a scratch directory, unmounted on drop.
struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn mount(size: &str) -> Option<SmallFs> {
        if !crate::support::is_root() {
            eprintln!("skipped: mounting a small filesystem needs root");
            return None;
        }
        let dir = scratch();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(SmallFs(dir))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        crate::support::unmount(self.0.path());
    }
}

#[test]
fn a_layout_larger_than_a_small_filesystem_writes_nothing_there() {
    let Some(fs) = SmallFs::mount("16m") else {
        return;
    };
    let path = fs.0.path().join("f");
    assert_refused_for_room(&read_job(&path, "64m"), &path);
    let fits = read_job(&path, "4m");
    assert_eq!(fits.status.code(), Some(0), "{}", stderr(&fits));
    // an existing file of the right size needs no room
    let again = read_job(&path, "4m");
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
}

#[test]
fn quick_removes_the_leftovers_of_killed_runs_and_keeps_those_of_live_ones() {
    let dir = scratch();
    let (target, tmp) = (dir.path().join("target"), dir.path().join("tmp"));
    std::fs::create_dir_all(&target).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    // a process that has ended: its id names the leftovers of a run killed with SIGKILL
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    ended.wait().unwrap();
    let (dead, alive) = (ended.id(), std::process::id());
    let file = |pid: u32| target.join(format!(".iolens-quick-{pid}-AbC123"));
    let preset = |pid: u32| tmp.join(format!("iolens-preset-{pid}-XyZ789"));
    for pid in [dead, alive] {
        std::fs::write(file(pid), vec![1u8; 1 << 20]).unwrap();
        std::fs::create_dir(preset(pid)).unwrap();
        std::fs::write(preset(pid).join("quick.fio"), b"[global]\n").unwrap();
    }
    let out = crate::support::command()
        .env("TMPDIR", &tmp)
        .args(["quick", target.to_str().unwrap(), "--no-history"])
        .args(["--read-only", "--duration=200ms", "--ramp=0", "--size=4m"])
        .output()
        .expect("run iolens");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        !file(dead).exists() && !preset(dead).exists(),
        "expected the leftovers of process {dead}, which has ended, removed"
    );
    assert!(
        file(alive).exists() && preset(alive).exists(),
        "expected the leftovers of process {alive}, still running, kept"
    );
    let told = err
        .lines()
        .filter(|l| l.contains("were killed"))
        .collect::<Vec<_>>();
    assert!(
        told.len() == 1
            && told[0].contains(&file(dead).display().to_string())
            && told[0].contains(&preset(dead).display().to_string()),
        "expected one line naming both removed leftovers, saw: {err}"
    );
}
