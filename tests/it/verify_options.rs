//! fio's verify options beside the method: `verify_backlog_batch` (and no backlog
//! with `do_verify=0`), `experimental_verify`, `verify_async` (accepted),
//! `verify_write_sequence`, `verify_header_seed` and the trims of `trim_percentage`. fio 3.33 runs the same jobs where it has the option and
//! must count the same reads and writes.

use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;
use serde_json::Value;

/// [reads, writes] (I/O counts) and the error of the first entry.
fn counts(doc: &Value) -> ([u64; 2], u64) {
    let job = &doc["jobs"][0];
    let ios = |dir: &str| job[dir]["total_ios"].as_u64().expect("total_ios");
    (
        [ios("read"), ios("write")],
        job["error"].as_u64().unwrap_or(0),
    )
}

#[test]
fn backlog_batches_and_experimental_verify_read_back_what_fio_reads() {
    // (options, reads iolens must count for 256 writes of 4 KiB)
    let cases: [(&[&str], u64); 7] = [
        (&["--verify_backlog=16", "--verify_backlog_batch=8"], 256),
        (&["--verify_backlog=16", "--verify_backlog_batch=32"], 256),
        (
            &[
                "--rw=randwrite",
                "--verify_backlog=16",
                "--verify_backlog_batch=8",
            ],
            256,
        ),
        (&["--verify_backlog=16", "--do_verify=0"], 0),
        (&["--experimental_verify=1"], 256),
        (&["--rw=randwrite", "--experimental_verify=1"], 256),
        (&["--verify_async=2", "--verify_async_cpus=0"], 256),
    ];
    for (extra, reads) in cases {
        let dir = scratch();
        let mut args = vec![
            "--name=b",
            "--filename=d",
            "--rw=write",
            "--bs=4k",
            "--size=1m",
            "--verify=crc32c",
            "--output-format=json",
        ];
        args.extend(extra);
        let (ours, code) = iolens_json(dir.path(), &args);
        assert_eq!(
            (code, counts(&ours)),
            (0, ([reads, 256], 0)),
            "{extra:?}: expected iolens to pass with {reads} reads back for 256 writes"
        );
        if let Some(theirs) = fio(dir.path(), &args) {
            assert_eq!(
                counts(&theirs),
                counts(&ours),
                "{extra:?}: expected fio's read and write counts (left) from iolens (right)"
            );
        }
    }
}

/// A verify_only check (iolens) of what a job named `writer` wrote once; the exit code.
fn verify_only(writer: &str, checker: &[&str]) -> i32 {
    let dir = scratch();
    let job = |name: &str| {
        vec![
            format!("--name={name}"),
            "--filename=d".to_string(),
            "--rw=write".into(),
            "--bs=4k".into(),
            "--size=64k".into(),
            "--verify=crc32c".into(),
            "--output-format=json".into(),
        ]
    };
    let mut write = job(writer);
    write.push("--do_verify=0".into());
    let write: Vec<&str> = write.iter().map(String::as_str).collect();
    let (_, code) = iolens_json(dir.path(), &write);
    assert_eq!(code, 0, "expected the writer to succeed");
    let mut check = job("checker");
    check.push("--verify_only=1".into());
    check.extend(checker.iter().map(|s| s.to_string()));
    let check: Vec<&str> = check.iter().map(String::as_str).collect();
    iolens_json(dir.path(), &check).1
}

#[test]
fn verify_write_sequence_0_accepts_other_generations_and_header_seed_1_other_writers() {
    // The checker replays two loops: it expects each block's second write.
    assert_eq!(
        verify_only("checker", &["--loops=2"]),
        1,
        "expected blocks written once to be stale for a check of two loops"
    );
    assert_eq!(
        verify_only("checker", &["--loops=2", "--verify_write_sequence=0"]),
        0,
        "expected verify_write_sequence=0 to accept blocks of another write"
    );
    assert_eq!(
        verify_only("writer", &[]),
        0,
        "expected verify_only to accept another job's blocks by default, as fio"
    );
    assert_eq!(
        verify_only("writer", &["--verify_header_seed=1"]),
        1,
        "expected verify_header_seed=1 to refuse another job's blocks"
    );
}

/// `trim_percentage` on `target` (a loop device, where fio can trim):
/// [reads, writes, trims] and the error, or None when fio cannot run.
fn trimmed(tool_is_fio: bool, target: &str, extra: &[&str]) -> Option<([u64; 3], u64)> {
    let dir = scratch();
    let mut args = vec![
        "--name=t".to_string(),
        format!("--filename={target}"),
        "--rw=trimwrite".into(),
        "--bs=4k".into(),
        "--size=1m".into(),
        "--verify=crc32c".into(),
        "--trim_percentage=25".into(),
        "--trim_backlog=16".into(),
        "--output-format=json".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let doc = match tool_is_fio {
        true => fio(
            dir.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        )?,
        false => {
            args.push("--allow-destructive".into());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (doc, code) = iolens_json(dir.path(), &args);
            assert_eq!(code, 0, "expected iolens {extra:?} to pass: {doc}");
            doc
        }
    };
    let job = &doc["jobs"][0];
    let ios = |dir: &str| job[dir]["total_ios"].as_u64().expect("total_ios");
    Some((
        [ios("read"), ios("write"), ios("trim")],
        job["error"].as_u64().unwrap_or(0),
    ))
}

#[test]
fn trim_percentage_trims_a_share_of_the_written_blocks_which_read_back_as_zeros() {
    let Some(dev) = crate::support::LoopDevice::create(4 << 20) else {
        return;
    };
    for tool_is_fio in [false, true] {
        for zero in ["--trim_verify_zero=1", "--trim_verify_zero=0"] {
            let Some(([reads, writes, trims], error)) = trimmed(tool_is_fio, dev.path(), &[zero])
            else {
                return;
            };
            let who = if tool_is_fio { "fio" } else { "iolens" };
            // rw=trimwrite trims each of the 256 blocks once; the rest are the picks.
            let picked = trims.saturating_sub(256);
            // 25 % of 256 blocks: 64, within five standard deviations (6.9).
            assert!(
                error == 0 && writes == 256 && (30..=98).contains(&picked),
                "{who} {zero}: expected no error, 256 writes and about 64 picked trims, saw \
                 error {error}, {writes} writes, {trims} trims"
            );
            let read_back = if zero.ends_with('1') {
                256
            } else {
                256 - picked
            };
            assert_eq!(
                reads, read_back,
                "{who} {zero}: expected {read_back} blocks read back ({picked} trimmed)"
            );
        }
    }
}
