//! fio as the oracle for jobs without `size=` (or with `size=0`): the whole
//! existing file or device, and with `offset=` or numjobs with
//! `offset_increment=` what lies past each clone's start; and for fio's
//! `--readonly`. Each case runs iolens in a scratch directory and checks what
//! fio 3.33 does for it; where fio is installed, it runs the same job and must
//! agree (bytes, I/O counts and, from the per-I/O logs, every offset).

use crate::fio_match::{entries, fio, iolens_json, Counts};
use crate::fio_offsets::{per_io_log, Ios};
use crate::support::{command, isolated, scratch, stderr, LoopDevice};
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// Per clone: (its first offset, the bytes it reads), both in MiB.
type Slices = [(u64, u64)];

/// The read counts and 1 MiB reads (offset KiB, length KiB) each clone of
/// `slices` must show.
fn wanted(slices: &Slices) -> Vec<(Counts, Ios)> {
    slices
        .iter()
        .map(|&(start, mib)| {
            let ios = (start..start + mib).map(|m| (m * 1024, 1024)).collect();
            ([[mib * MIB, mib], [0, 0]], ios)
        })
        .collect()
}

/// What a run in `dir` did per clone: read/write counts and the I/Os of its log.
fn seen(dir: &Path, doc: &serde_json::Value) -> Vec<(Counts, Ios)> {
    entries(doc)
        .into_iter()
        .enumerate()
        .map(|(i, (_, _, counts))| {
            let log = dir.join(format!("io_clat.{}.log", i + 1));
            let ios = per_io_log(&log);
            std::fs::remove_file(&log).expect("remove the per-I/O log");
            (counts, ios)
        })
        .collect()
}

/// A sequential 1 MiB read of `target` with `extra` must read `slices` in iolens
/// and, where installed, in fio; a regular file keeps its length.
fn whole_target_reads(case: &str, dir: &Path, target: &str, extra: &[&str], slices: &Slices) {
    let filename = format!("--filename={target}");
    let mut args = vec!["--name=w", filename.as_str(), "--rw=read", "--bs=1m"];
    args.extend_from_slice(extra);
    args.extend([
        "--output-format=json",
        "--write_lat_log=io",
        "--log_offset=1",
    ]);
    let length = || std::fs::metadata(dir.join(target)).map(|m| m.len()).ok();
    let before = length();
    let (doc, code) = iolens_json(dir, &args);
    assert_eq!(
        code, 0,
        "{case}: expected iolens to succeed, saw {code}: {doc}"
    );
    assert_eq!(
        seen(dir, &doc),
        wanted(slices),
        "{case}: expected iolens to read (first offset MiB, MiB) per clone {slices:?} (right), saw the left"
    );
    assert_eq!(
        length(),
        before,
        "{case}: expected the target's length kept"
    );
    if let Some(fio_doc) = fio(dir, &args) {
        assert_eq!(
            seen(dir, &fio_doc),
            wanted(slices),
            "{case}: expected the installed fio to read {slices:?} per clone (right), saw the left"
        );
    }
}

/// Without size= (and with size=0) fio reads every byte of an existing file, past
/// offset= and past each clone's offset_increment=.
#[test]
fn without_size_a_job_reads_the_whole_existing_file_as_fio_does() {
    let dir = scratch();
    std::fs::write(dir.path().join("f"), vec![3u8; 8 << 20]).expect("write the 8 MiB file");
    let cases: [(&str, &[&str], &Slices); 6] = [
        ("no size", &[], &[(0, 8)]),
        ("size=0", &["--size=0"], &[(0, 8)]),
        ("io_size=0", &["--io_size=0"], &[(0, 8)]),
        ("offset=1m", &["--offset=1m"], &[(1, 7)]),
        (
            "numjobs=2 offset_increment=4m",
            &["--numjobs=2", "--offset_increment=4m"],
            &[(0, 8), (4, 4)],
        ),
        (
            "size=0 numjobs=2 offset_increment=4m",
            &["--size=0", "--numjobs=2", "--offset_increment=4m"],
            &[(0, 8), (4, 4)],
        ),
    ];
    for (case, extra, slices) in cases {
        whole_target_reads(case, dir.path(), "f", extra, slices);
    }
}

/// On a block device: the whole device, and numjobs with offset_increment= gives
/// each clone its own slice (what lies past its start, or size= of it).
#[test]
fn without_size_a_job_reads_the_whole_device_and_clones_their_slices() {
    let Some(dev) = LoopDevice::create(16 << 20) else {
        return;
    };
    let dir = scratch();
    let cases: [(&str, &[&str], &Slices); 3] = [
        ("no size", &[], &[(0, 16)]),
        (
            "numjobs=2 offset_increment=8m",
            &["--numjobs=2", "--offset_increment=8m"],
            &[(0, 16), (8, 8)],
        ),
        (
            "size=8m numjobs=2 offset_increment=6m",
            &["--size=8m", "--numjobs=2", "--offset_increment=6m"],
            &[(0, 8), (6, 8)],
        ),
    ];
    for (case, extra, slices) in cases {
        whole_target_reads(case, dir.path(), dev.path(), extra, slices);
    }
    // fio stops a clone at the device's end; iolens refuses (docs/fio-differences.md)
    let (code, message) = iolens_refusal(
        dir.path(),
        &[
            "--name=w",
            &format!("--filename={}", dev.path()),
            "--rw=read",
            "--size=8m",
            "--numjobs=2",
            "--offset_increment=12m",
        ],
    );
    assert!(
        code == 2 && message.contains("clone 1") && message.contains("the device holds 16777216"),
        "expected exit 2 naming clone 1 and the device's size, saw {code}: {message}"
    );
}

/// iolens `run --no-history` with `args` in `dir`: its exit code and stderr.
pub(crate) fn iolens_refusal(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = command()
        .args(["run", "--no-history"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run iolens");
    (out.status.code().unwrap_or(-1), stderr(&out))
}

/// fio's exit code for `args` in `dir`; None (and a printed reason) without fio.
fn fio_code(dir: &Path, args: &[&str]) -> Option<i32> {
    match isolated("fio").args(args).current_dir(dir).output() {
        Ok(out) => Some(out.status.code().unwrap_or(-1)),
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            None
        }
    }
}

/// iolens refuses `args` in `dir` (exit 2, a message with `fragments`), fio
/// fails them too, and neither creates `absent`.
fn both_refuse(case: &str, dir: &Path, args: &[&str], fragments: &[&str], absent: &str) {
    let (code, message) = iolens_refusal(dir, args);
    assert!(
        code == 2 && fragments.iter().all(|f| message.contains(f)),
        "{case}: expected exit 2 and a message with {fragments:?}, saw {code}: {message}"
    );
    if let Some(fio) = fio_code(dir, args) {
        assert_ne!(fio, 0, "{case}: expected the installed fio to fail too");
    }
    assert!(
        !dir.join(absent).exists(),
        "{case}: expected {absent} not to be created"
    );
}

#[test]
fn a_missing_or_too_short_file_without_size_is_refused_as_fio_does() {
    let dir = scratch();
    std::fs::write(dir.path().join("f"), vec![3u8; 8 << 20]).expect("write the 8 MiB file");
    both_refuse(
        "missing file, no size",
        dir.path(),
        &["--name=m", "--filename=absent", "--rw=read", "--bs=1m"],
        &["absent does not exist", "set size="],
        "absent",
    );
    both_refuse(
        "missing file, size=0",
        dir.path(),
        &["--name=m", "--filename=absent", "--rw=write", "--size=0"],
        &["absent does not exist", "set size="],
        "absent",
    );
    both_refuse(
        "the third clone starts at the file's end",
        dir.path(),
        &[
            "--name=m",
            "--filename=f",
            "--rw=read",
            "--bs=1m",
            "--numjobs=3",
            "--offset_increment=4m",
        ],
        &["clone 2", "is not before the end of f", "offset_increment="],
        "absent",
    );
}

/// The file's bytes and modification time, to show nothing wrote it.
fn fingerprint(path: &Path) -> (Vec<u8>, std::time::SystemTime) {
    let meta = std::fs::metadata(path).expect("stat the target");
    (
        std::fs::read(path).expect("read the target"),
        meta.modified().expect("the target's mtime"),
    )
}

/// fio's `--readonly` (its t/readonly.py cases, before and after the job options):
/// jobs that write or trim fail, whatever the engine, and the file is untouched.
#[test]
fn readonly_refuses_writes_and_trims_and_leaves_the_file_alone() {
    let dir = scratch();
    let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("f"), data).expect("write the 1 MiB file");
    let before = fingerprint(&dir.path().join("f"));
    let job = |rw: &'static str| ["--name=r", "--filename=f", "--bs=4k", rw];
    let cases: [(&str, Vec<&str>); 6] = [
        (
            "randwrite, --readonly first",
            [&["--readonly"][..], &job("--rw=randwrite")].concat(),
        ),
        (
            "randtrim, --readonly last",
            [&job("--rw=randtrim")[..], &["--readonly"]].concat(),
        ),
        ("rw", [&["--readonly"][..], &job("--rw=rw")].concat()),
        (
            "trimwrite",
            [&["--readonly"][..], &job("--rw=trimwrite")].concat(),
        ),
        (
            "--parse-only: refused while parsing, as in fio",
            [&["--parse-only", "--readonly"][..], &job("--rw=write")].concat(),
        ),
        (
            "null engine",
            vec![
                "--readonly",
                "--name=r",
                "--ioengine=null",
                "--size=1m",
                "--rw=randwrite",
            ],
        ),
    ];
    for (case, args) in cases {
        both_refuse(case, dir.path(), &args, &["--readonly forbids"], "r.0.0");
        assert!(
            fingerprint(&dir.path().join("f")) == before,
            "{case}: expected the file's bytes and mtime unchanged"
        );
    }
    both_refuse(
        "a missing file would be laid out",
        dir.path(),
        &[
            "--readonly",
            "--name=r",
            "--filename=absent",
            "--size=1m",
            "--rw=read",
        ],
        &[
            "absent: does not exist",
            "--readonly forbids",
            "create the file first",
        ],
        "absent",
    );
    let (code, message) = iolens_refusal(
        dir.path(),
        &[
            "--readonly",
            "--name=r",
            "--filename=f",
            "--size=2m",
            "--rw=read",
        ],
    );
    assert!(
        code == 2 && message.contains("would extend it"),
        "expected a file shorter than size= refused under --readonly, saw {code}: {message}"
    );
    let read = [
        "--readonly",
        "--name=r",
        "--filename=f",
        "--rw=randread",
        "--bs=4k",
        "--output-format=json",
    ];
    let (doc, code) = iolens_json(dir.path(), &read);
    let counts = [[MIB, 256], [0, 0]];
    assert_eq!(code, 0, "expected a read under --readonly to run: {doc}");
    assert_eq!(
        entries(&doc)[0].2,
        counts,
        "expected 1 MiB read in 256 I/Os"
    );
    if let Some(fio_doc) = fio(dir.path(), &read) {
        assert_eq!(
            entries(&fio_doc)[0].2,
            counts,
            "expected fio to read the same"
        );
    }
    assert!(
        fingerprint(&dir.path().join("f")) == before,
        "expected the file's bytes and mtime unchanged by the reads"
    );
}

/// An immutable file (`chattr +i`: not even root may open it for writing) is read
/// under --readonly: a file long enough is never opened for writing.
#[test]
fn readonly_reads_a_file_nobody_may_open_for_writing() {
    struct Immutable<'a>(&'a Path);
    impl Drop for Immutable<'_> {
        fn drop(&mut self) {
            let _ = Command::new("chattr").arg("-i").arg(self.0).status();
        }
    }
    let dir = scratch();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![5u8; 1 << 20]).expect("write the 1 MiB file");
    let made = Command::new("chattr").arg("+i").arg(&path).output();
    let _undo = Immutable(&path);
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: cannot make a file immutable here (chattr +i: {made:?})");
        return;
    }
    let (doc, code) = iolens_json(
        dir.path(),
        &[
            "--readonly",
            "--name=r",
            "--filename=f",
            "--rw=read",
            "--bs=64k",
            "--output-format=json",
        ],
    );
    assert_eq!(
        code, 0,
        "expected the read of an immutable file to run: {doc}"
    );
    assert_eq!(
        entries(&doc)[0].2,
        [[MIB, 16], [0, 0]],
        "expected 1 MiB read in 16 I/Os"
    );
}
