//! fio's test 1017 (t/verify.py) combinations: `verify_interval` that fio clamps
//! rather than refuses, the header at `verify_offset` inside each interval, queued
//! `norandommap` writes, `%o` patterns, and read jobs that check what they read.
//! fio 3.33 runs the same jobs where it is installed and must pass them too.

use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;
use serde_json::Value;
use std::path::Path;

/// The error of each job entry (0: the job passed).
fn errors(doc: &Value) -> Vec<u64> {
    doc["jobs"]
        .as_array()
        .expect("a jobs array")
        .iter()
        .map(|j| j["error"].as_u64().unwrap_or(0))
        .collect()
}

/// Run `args` with iolens (and fio where installed) in `dir`: every job must pass.
fn passes_in_both(dir: &Path, args: &[&str]) {
    let (ours, code) = iolens_json(dir, args);
    assert_eq!(
        (code, errors(&ours)),
        (0, vec![0; errors(&ours).len()]),
        "{args:?}: expected iolens to verify its own writes, got exit {code}: {ours}"
    );
    if let Some(theirs) = fio(dir, args) {
        let seen = errors(&theirs);
        assert_eq!(
            seen,
            vec![0; seen.len()],
            "{args:?}: expected fio to pass the same job, got errors {seen:?}"
        );
    }
}

#[test]
fn interval_and_offset_combinations_of_fio_test_1017_verify_in_both() {
    let cases: [&[&str]; 6] = [
        // verify_interval that does not divide bs: fio uses bs.
        &["--verify=md5", "--verify_interval=2222"],
        &[
            "--verify=crc32c",
            "--verify_interval=3791",
            "--verify_offset=1024",
        ],
        &[
            "--verify=md5",
            "--verify_interval=512",
            "--verify_offset=400",
        ],
        &[
            "--verify=meta",
            "--verify_interval=1024",
            "--verify_offset=512",
        ],
        // The strict pattern `%o` is all zeros in the block at offset 0.
        &["--verify=pattern", "--verify_pattern=%o"],
        // Queued writes of one offset may land in either order: no sequence check.
        &[
            "--rw=randwrite",
            "--verify=md5",
            "--ioengine=libaio",
            "--iodepth=32",
            "--norandommap",
            "--io_size=512k",
            "--verify_interval=2048",
            "--verify_offset=1024",
        ],
    ];
    for extra in cases {
        let dir = scratch();
        let mut args = vec![
            "--name=v",
            "--filename=d",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
            "--output-format=json",
        ];
        args.extend(extra);
        passes_in_both(dir.path(), &args);
    }
}

#[test]
fn a_read_job_checks_the_blocks_it_read_not_the_holes_it_skipped() {
    let dir = scratch();
    let job = |rw: &str| {
        vec![
            "--name=v".to_string(),
            "--filename=d".into(),
            format!("--rw={rw}"),
            "--bs=4k".into(),
            "--filesize=256k".into(),
            "--io_size=128k".into(),
            "--verify=crc32c".into(),
            "--output-format=json".into(),
        ]
    };
    for rw in ["write", "read"] {
        let args = job(rw);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ours, code) = iolens_json(dir.path(), &args);
        assert_eq!(
            (code, errors(&ours)),
            (0, vec![0]),
            "rw={rw}: expected the half the writer wrote to verify and the unwritten half \
             (never read) to be left alone, got exit {code}: {ours}"
        );
    }
    let fio_dir = scratch();
    for rw in ["write", "read"] {
        let args = job(rw);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if let Some(theirs) = fio(fio_dir.path(), &args) {
            assert_eq!(
                errors(&theirs),
                vec![0],
                "rw={rw}: expected fio to pass too"
            );
        }
    }
}
