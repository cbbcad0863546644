//! Command-line behaviour: errors are one line, name the option, and exit 2.

use crate::support::{iolens, scratch, stderr, stdout};

#[test]
fn a_typo_in_an_option_suggests_the_right_one() {
    let out = iolens(&["run", "--name=a", "--size=1m", "--threads"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("thread"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_job_without_size_or_filename_is_a_usage_error() {
    let out = iolens(&["run", "--name=a", "--rw=read"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("size"), "{}", stderr(&out));
}

#[test]
fn misaligned_direct_io_is_refused_before_any_io() {
    let dir = scratch();
    let f = dir.path().join("f");
    let out = iolens(&[
        "run",
        "--name=a",
        &format!("--filename={}", f.display()),
        "--size=1m",
        "--bs=1000",
        "--direct=1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("bs=1000") && err.contains("multiple"), "{err}");
}

#[test]
fn unknown_output_format_is_a_usage_error() {
    let out = iolens(&["run", "--output-format=xml", "--name=a", "--size=1m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--output-format=xml"));
}

#[test]
fn normal_output_looks_like_fio() {
    let dir = scratch();
    let f = dir.path().join("f");
    let out = iolens(&[
        "run",
        "--name=job1",
        &format!("--filename={}", f.display()),
        "--size=2m",
        "--rw=randread",
        "--ioengine=psync",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "job1: (groupid=0",
        "read: IOPS=",
        "clat",
        "Run status group 0",
        "cpu",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn a_read_job_never_reads_holes_of_a_file_it_lays_out() {
    let dir = scratch();
    let f = dir.path().join("laid-out");
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", f.display()),
        "--size=4m",
        "--rw=read",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 4 << 20);
    assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 100);
}

#[test]
fn reading_an_existing_sparse_file_warns() {
    let dir = scratch();
    let f = dir.path().join("sparse");
    std::fs::File::create(&f).unwrap().set_len(4 << 20).unwrap();
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", f.display()),
        "--rw=read",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("holes"), "{}", stderr(&out));
}
