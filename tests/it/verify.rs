//! Data verification: faults injected between the write and the verify pass, on a
//! file and on a loop device; each must be detected and classified.

use crate::support::{iolens, scratch, stderr, LoopDevice};
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BLOCK: u64 = 4096;
const SIZE: &str = "1m";

/// Write the target with verifiable blocks, `loops` times (generation = loops).
fn write_pass(target: &str, loops: u32) {
    let args = job(target, loops, &["--do_verify=0"]);
    let out = iolens(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
}

fn job<'a>(target: &'a str, loops: u32, extra: &[&'a str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--no-history",
        "--output-format=iolens-json",
        "--name=v",
        "--rw=write",
        "--bs=4k",
        "--verify=crc32c",
        "--thread",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--filename={target}"));
    // The state files a write job saves go to scratch space, never the current directory.
    let states = crate::support::scratch_home().join("verify-states");
    std::fs::create_dir_all(&states).expect("create the state file directory");
    args.push(format!("--aux-path={}", states.display()));
    args.push(format!("--size={SIZE}"));
    args.push(format!("--loops={loops}"));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Check what `write_pass(target, loops)` wrote; (exit code, the verify report).
fn verify_only(target: &str, loops: u32) -> (i32, serde_json::Value, String) {
    let args = job(target, loops, &["--verify_only=1"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = iolens(&args);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", stderr(&out));
    });
    (
        out.status.code().unwrap(),
        report["verify"][0].clone(),
        stderr(&out),
    )
}

fn read_block(path: &Path, index: u64) -> Vec<u8> {
    let mut block = vec![0; BLOCK as usize];
    let f = OpenOptions::new().read(true).open(path).unwrap();
    f.read_exact_at(&mut block, index * BLOCK).unwrap();
    block
}

fn write_block(path: &Path, index: u64, block: &[u8]) {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(block, index * BLOCK).unwrap();
    f.sync_all().unwrap();
}

/// A fault to inject into block 7 of a target written twice (generation 2).
enum Fault {
    FlipBit,
    CopyFromBlock(u64),
    Zero,
    /// Put back block 7 as the first pass left it.
    OlderGeneration(Vec<u8>),
}

fn inject(path: &Path, fault: &Fault) {
    let mut block = read_block(path, 7);
    match fault {
        Fault::FlipBit => block[2000] ^= 0x04,
        Fault::CopyFromBlock(from) => block = read_block(path, *from),
        Fault::Zero => block.fill(0),
        Fault::OlderGeneration(old) => block.clone_from(old),
    }
    write_block(path, 7, &block);
}

/// Each fault on `target` (a path the test can also open), detected and classified.
fn each_fault_is_classified(target: &str) {
    let path = Path::new(target);
    write_pass(target, 1);
    let first_generation = read_block(path, 7);
    let cases = [
        (Fault::FlipBit, "corrupt", "1 bytes (1 bits) differ"),
        (
            Fault::CopyFromBlock(3),
            "misdirected",
            "block at offset 28672 holds the data written for offset 12288 (misdirected write)",
        ),
        (Fault::Zero, "zeroed", "all zeros"),
        (
            Fault::OlderGeneration(first_generation),
            "stale",
            "holds generation 1, expected 2",
        ),
    ];
    for (fault, kind, message) in cases {
        write_pass(target, 2);
        let (code, clean, err) = verify_only(target, 2);
        assert_eq!(code, 0, "clean target failed verify: {err}");
        assert_eq!(clean["bad_blocks_total"], 0);
        assert_eq!(clean["verified_blocks"], 256);

        inject(path, &fault);
        let (code, report, err) = verify_only(target, 2);
        assert_eq!(code, 1, "{kind} went unnoticed: {err}");
        assert_eq!(report["bad_blocks_total"], 1, "{report}");
        let bad = &report["bad_blocks"][0];
        assert_eq!(bad["fault"], kind, "{bad}");
        assert_eq!(bad["offset"], 7 * BLOCK);
        assert!(bad["message"].as_str().unwrap().contains(message), "{bad}");
        assert!(
            err.contains(&format!(
                "job 'v': verify: 1 bad of 256 blocks checked in {target}"
            )),
            "{err}"
        );
    }
}

#[test]
fn faults_in_a_file_are_detected_and_classified() {
    let dir = scratch();
    let target = dir.path().join("data");
    each_fault_is_classified(target.to_str().unwrap());
}

#[test]
fn faults_on_a_loop_device_are_detected_and_classified() {
    let Some(dev) = LoopDevice::create(4 << 20) else {
        return;
    };
    each_fault_is_classified(dev.path());
}

#[test]
fn the_read_back_counts_as_reads_and_is_kept_apart_in_the_native_report() {
    let dir = scratch();
    let target = dir.path().join("data");
    let args = job(target.to_str().unwrap(), 1, &["--size=8m"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = iolens(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verify = &report["verify"][0];
    let reads = &report["jobs"][0]["dirs"][0];
    assert_eq!(
        (&verify["read_back_ios"], &verify["read_back_bytes"]),
        (&2048.into(), &(8u64 << 20).into()),
        "one read back per 4 KiB write of 8 MiB: {verify}"
    );
    assert_eq!(
        (&reads["total_ios"], &reads["io_bytes"]),
        (&2048.into(), &(8u64 << 20).into()),
        "the job's reads hold the read-back, as fio's: {reads}"
    );
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(
        !codes.contains(&"served-from-cache"),
        "reading back what the job just wrote is no page-cache measurement: findings {codes:?}"
    );
}

#[test]
fn a_write_job_verifies_itself_and_dumps_nothing_when_clean() {
    let dir = scratch();
    let target = dir.path().join("data");
    let target = target.to_str().unwrap();
    for method in ["crc64", "xxhash", "sha256", "md5", "meta"] {
        let verify = format!("--verify={method}");
        let args = job(
            target,
            1,
            &[
                "--rw=randwrite",
                &verify,
                "--verify_dump=1",
                "--verify_backlog=16",
            ],
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = iolens(&args);
        assert!(out.status.success(), "{method}: {}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            report["verify"][0]["verified_blocks"].as_u64().unwrap() > 0,
            "{method}"
        );
        assert_eq!(report["verify"][0]["bad_blocks_total"], 0);
    }
}

#[test]
fn verify_fatal_stops_at_the_first_bad_block_and_verify_dump_keeps_both_copies() {
    let dir = scratch();
    let target = dir.path().join("data");
    let path = target.as_path();
    let target = target.to_str().unwrap();
    write_pass(target, 1);
    for index in [2, 5] {
        write_block(path, index, &vec![0xee; BLOCK as usize]);
    }
    let args = job(
        target,
        1,
        &["--verify_only=1", "--verify_fatal=1", "--verify_dump=1"],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = crate::support::command()
        .current_dir(dir.path())
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["verify"][0]["bad_blocks_total"], 1);
    assert_eq!(report["verify"][0]["bad_blocks"][0]["fault"], "no_header");
    let received = std::fs::read(dir.path().join("data.8192.received")).unwrap();
    assert_eq!(received, vec![0xee; BLOCK as usize]);
    let expected = std::fs::read(dir.path().join("data.8192.expected")).unwrap();
    assert_eq!(&expected[..4], b"iolV");
}
