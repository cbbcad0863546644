//! fio's `verify_pattern` notation and the strict `verify=pattern`: the bytes of a
//! sequential write equal fio's for each pattern (`%o` included), each tool
//! accepts the other's file and both name the same bad block; plus
//! `verify_pattern_interval`, `verify=pattern_hdr` and a `verify_interval`
//! larger than the block size (clamped, as fio does).

use crate::buffer_contents::write_both;
use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;
use std::os::unix::fs::FileExt;
use std::path::Path;

const PATTERNS: [&str; 5] = [
    "0xdeadbeef",
    "\"abcd\"-120xdeadface",
    "\"ab\"%o0x01",
    "%o",
    "-100xab\"1\"%o\"2\"",
];

fn strict(pattern: &str) -> [String; 3] {
    [
        "--verify=pattern".into(),
        format!("--verify_pattern={pattern}"),
        "--do_verify=0".into(),
    ]
}

#[test]
fn a_strict_pattern_write_holds_the_bytes_fio_writes() {
    for pattern in PATTERNS {
        for bs in ["--bs=4k", "--bs=16k"] {
            let dir = scratch();
            let args = strict(pattern);
            let extra: Vec<&str> = args.iter().map(String::as_str).chain([bs]).collect();
            let (ours, theirs) = write_both(dir.path(), "64k", &extra);
            // Without fio too: the blocks differ exactly when %o puts their offsets in.
            let (first, second) = (&ours[..4096], &ours[16384..20480]);
            assert_eq!(
                (ours.len(), first == second),
                (65536, !pattern.contains("%o")),
                "{pattern} {bs}: expected 64 KiB, blocks alike unless %o is in the pattern"
            );
            if let Some(theirs) = theirs {
                let first = ours.iter().zip(&theirs).position(|(a, b)| a != b);
                assert!(
                    first.is_none() && ours.len() == theirs.len(),
                    "{pattern} {bs}: expected fio's bytes, first difference at {first:?}"
                );
            }
        }
    }
}

/// A verify_only check of `file` (written with `pattern`) by iolens, or fio:
/// the exit code and what was said.
fn check(dir: &Path, file: &str, pattern: &str, with_fio: bool) -> Option<(i32, String)> {
    let args = [
        "--name=p".to_string(),
        format!("--filename={file}"),
        "--rw=write".into(),
        "--bs=4k".into(),
        "--size=64k".into(),
        "--verify=pattern".into(),
        format!("--verify_pattern={pattern}"),
        "--verify_only=1".into(),
        "--verify_state_save=0".into(),
        "--output-format=json".into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = match with_fio {
        false => {
            let mut c = crate::support::command();
            c.args(["run", "--no-history"]);
            c
        }
        true => crate::support::isolated("fio"),
    };
    let out = cmd.args(&args).current_dir(dir).output().ok()?;
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    Some((out.status.code().unwrap_or(-1), text))
}

#[test]
fn each_tool_verifies_the_others_strict_pattern_and_names_the_same_bad_block() {
    let pattern = "\"ab\"%o0x01";
    let dir = scratch();
    let args = strict(pattern);
    let extra: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, theirs) = write_both(dir.path(), "64k", &extra);
    if theirs.is_none() {
        eprintln!("skipping the cross-check: fio cannot run");
        return;
    }
    for (file, with_fio) in [("fio.dat", false), ("iolens.dat", true)] {
        let (code, text) = check(dir.path(), file, pattern, with_fio).expect("ran before");
        assert_eq!(
            code,
            0,
            "expected {} to verify the other tool's {file}, got: {text}",
            if with_fio { "fio" } else { "iolens" }
        );
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join(file))
            .expect("open the file");
        f.write_all_at(b"X", 20000).expect("corrupt a byte");
    }
    for (file, with_fio) in [("fio.dat", false), ("iolens.dat", true)] {
        let (code, text) = check(dir.path(), file, pattern, with_fio).expect("ran before");
        assert!(
            code == 1 && text.contains("offset 16384"),
            "expected {} to fail naming the block at 16384 of {file}, got {code}: {text}",
            if with_fio { "fio" } else { "iolens" }
        );
    }
}

#[test]
fn verify_pattern_interval_restarts_the_pattern_with_its_offset() {
    let dir = scratch();
    let args = [
        "--name=p",
        "--filename=d",
        "--rw=write",
        "--bs=4k",
        "--size=8k",
        "--verify=pattern",
        "--verify_pattern=%o\"x\"",
        "--verify_pattern_interval=1000",
        "--output-format=json",
    ];
    let (_, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0, "expected the write and its verify to pass");
    let data = std::fs::read(dir.path().join("d")).expect("read the file");
    // Per 4 KiB block, 1000-byte parts (the last one short), each the 9-byte
    // pattern repeated with %o = where the part starts.
    for (b, block) in data.chunks(4096).enumerate() {
        for (p, part) in block.chunks(1000).enumerate() {
            let at = (b * 4096 + p * 1000) as u64;
            let mut unit = at.to_le_bytes().to_vec();
            unit.push(b'x');
            let expected: Vec<u8> = unit.iter().copied().cycle().take(part.len()).collect();
            assert_eq!(
                part,
                &expected[..],
                "expected the part at {at} to repeat its offset and x"
            );
        }
    }
}

#[test]
fn pattern_hdr_and_a_large_verify_interval_verify_like_fio() {
    for extra in [
        &["--verify=pattern_hdr", "--verify_pattern=0x5a"][..],
        &["--verify=crc32c", "--verify_interval=64k"],
    ] {
        let dir = scratch();
        let mut args = vec![
            "--name=p",
            "--filename=d",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--output-format=json",
        ];
        args.extend(extra);
        let (doc, code) = iolens_json(dir.path(), &args);
        let read = doc["jobs"][0]["read"]["io_bytes"].as_u64();
        assert_eq!(
            (code, read),
            (0, Some(65536)),
            "{extra:?}: expected the write to verify its 64 KiB"
        );
        // fio 3.33 has no pattern_hdr (its verify_pattern alone means the same).
        if extra[0] == "--verify=pattern_hdr" {
            continue;
        }
        if let Some(theirs) = fio(dir.path(), &args) {
            let fio_read = theirs["jobs"][0]["read"]["io_bytes"].as_u64();
            assert_eq!(
                (theirs["jobs"][0]["error"].as_u64(), fio_read),
                (Some(0), read),
                "{extra:?}: expected fio to verify as many bytes, without error"
            );
        }
    }
}
