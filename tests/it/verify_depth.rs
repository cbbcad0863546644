//! The verify read-back goes through the job's engine and queue at its
//! iodepth, as fio's do_verify does: fio 3.33 as the oracle for what the
//! read-back counts (reads, bytes, submission latencies) and how deep it
//! queues; a bad block is still found when several reads are in flight.

use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::Path;

const SIZE: u64 = 16 << 20;
const BLOCK: u64 = 4096;

/// A sequential 4 KiB write of 16 MiB with crc32c blocks through `engine` at iodepth=8.
fn job<'a>(engine: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--name=v",
        "--filename=v.dat",
        "--rw=write",
        "--bs=4k",
        "--size=16m",
        "--verify=crc32c",
        engine,
        "--iodepth=8",
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    args
}

/// The first job's reads: [io_bytes, total_ios, slat samples].
fn reads(doc: &Value) -> [u64; 3] {
    let read = &doc["jobs"][0]["read"];
    [&read["io_bytes"], &read["total_ios"], &read["slat_ns"]["N"]]
        .map(|v| v.as_u64().unwrap_or_else(|| panic!("no count in {read}")))
}

/// The first job's `iodepth_level` shares (percent), from depth 1 to >=64.
fn levels(doc: &Value) -> [f64; 7] {
    let level = &doc["jobs"][0]["iodepth_level"];
    ["1", "2", "4", "8", "16", "32", ">=64"].map(|k| {
        level[k]
            .as_f64()
            .unwrap_or_else(|| panic!("no {k} in {level}"))
    })
}

/// The deepest `iodepth_level` bucket used: 0 for depth 1, 3 for 8.
fn deepest(levels: &[f64; 7]) -> Option<usize> {
    levels.iter().rposition(|&share| share > 0.0)
}

fn iolens_ok(dir: &Path, args: &[&str]) -> Value {
    let (doc, code) = iolens_json(dir, args);
    assert_eq!(code, 0, "iolens {args:?} failed: {doc}");
    doc
}

#[test]
fn the_read_back_queues_at_the_jobs_depth_and_counts_as_fio_counts_it() {
    for engine in ["--ioengine=libaio", "--ioengine=io_uring"] {
        let dir = scratch();
        let written = iolens_ok(dir.path(), &job(engine, &[]));
        let expected = [SIZE, SIZE / BLOCK, SIZE / BLOCK];
        assert_eq!(
            reads(&written),
            expected,
            "{engine}: expected one read back per write, each with its submission latency \
             (fio's slat N = total_ios), as [io_bytes, total_ios, slat N]"
        );
        // verify_only: the read-back is the job's only I/O, so its depth shows alone
        let read_back = levels(&iolens_ok(dir.path(), &job(engine, &["--verify_only=1"])));
        let own_reads = levels(&iolens_ok(
            dir.path(),
            &["--name=r", "--filename=v.dat", "--rw=read", "--bs=4k"]
                .into_iter()
                .chain(["--size=16m", engine, "--iodepth=8", "--output-format=json"])
                .collect::<Vec<_>>(),
        ));
        assert_eq!(
            deepest(&read_back),
            Some(3),
            "{engine}: expected the read-back to reach iodepth=8, saw levels {read_back:?}"
        );
        // Buffered libaio completes each read inside io_submit: both queue the same way.
        if engine.ends_with("libaio") {
            let apart = read_back
                .iter()
                .zip(&own_reads)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                apart < 1.0,
                "{engine}: expected the read-back to queue as the job's own reads do: \
                 read-back levels {read_back:?}, reads {own_reads:?}"
            );
        }
        let Some(oracle) = fio(dir.path(), &job(engine, &[])) else {
            continue;
        };
        assert_eq!(
            reads(&oracle),
            reads(&written),
            "{engine}: fio's read-back [io_bytes, total_ios, slat N] (left) differs from iolens'"
        );
        let fio_levels = levels(&oracle);
        assert!(
            fio_levels[3] > 90.0,
            "{engine}: fio 3.33 queues its writes and read-back at depth 8, saw {fio_levels:?}"
        );
        assert_eq!(
            deepest(&levels(&written)),
            deepest(&fio_levels),
            "{engine}: fio's deepest level (right) differs from iolens'"
        );
    }
}

/// Overwrite blocks `indexes` of `path` with bytes no verify header starts with.
fn corrupt(path: &Path, indexes: &[u64]) {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open the target to corrupt it");
    for &i in indexes {
        file.write_all_at(&[0xee; BLOCK as usize], i * BLOCK)
            .expect("corrupt a block");
    }
}

/// Check the file with verify_only at iodepth=8: (exit code, the native verify report).
fn check(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = job("--ioengine=libaio", &["--verify_only=1"]);
    args.retain(|a| !a.starts_with("--output-format"));
    args.push("--output-format=iolens-json");
    args.extend_from_slice(extra);
    let (doc, code) = iolens_json(dir, &args);
    (code, doc["verify"][0].clone())
}

#[test]
fn bad_blocks_are_found_with_reads_in_flight_and_verify_fatal_stops_at_the_first() {
    let dir = scratch();
    iolens_ok(dir.path(), &job("--ioengine=libaio", &["--do_verify=0"]));
    corrupt(&dir.path().join("v.dat"), &[5, 9]);
    let (code, report) = check(dir.path(), &[]);
    assert_eq!(code, 1, "expected the bad blocks to fail the job: {report}");
    let bad: Vec<&Value> = report["bad_blocks"]
        .as_array()
        .map(|b| b.iter().map(|b| &b["offset"]).collect())
        .unwrap_or_default();
    assert_eq!(
        bad,
        [5 * BLOCK, 9 * BLOCK],
        "expected blocks 5 and 9 reported bad: {report}"
    );
    assert_eq!(
        report["read_back_ios"],
        SIZE / BLOCK,
        "expected every write read back: {report}"
    );
    let (code, report) = check(dir.path(), &["--verify_fatal=1"]);
    assert_eq!(code, 1, "expected verify_fatal to fail the job: {report}");
    assert_eq!(
        (
            &report["bad_blocks_total"],
            &report["bad_blocks"][0]["offset"]
        ),
        (&1.into(), &(5 * BLOCK).into()),
        "expected verify_fatal to stop at the first bad block: {report}"
    );
    let read_back = report["read_back_ios"].as_u64().unwrap_or(u64::MAX);
    assert!(
        read_back < SIZE / BLOCK,
        "expected verify_fatal to end the read-back early, it read back {read_back}"
    );
}
