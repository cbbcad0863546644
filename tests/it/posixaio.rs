//! `ioengine=posixaio` against fio: the same job at iodepth=8, buffered and direct,
//! moves the same bytes in the same number of I/Os, and a sequential write with a
//! `buffer_pattern` leaves the same file.

use crate::buffer_contents::write_both;
use crate::fio_match::{entries, fio, iolens_json};
use crate::support::scratch;

const SIZE: u64 = 1 << 20;

/// The most copied fio command line, shrunk to a scratch file.
fn job(rw: &str, direct: bool) -> Vec<String> {
    [
        "--name=p",
        "--filename=f",
        "--ioengine=posixaio",
        "--iodepth=8",
        "--bs=4k",
        "--output-format=json",
    ]
    .iter()
    .map(|a| a.to_string())
    .chain([
        format!("--size={SIZE}"),
        format!("--rw={rw}"),
        format!("--direct={}", u8::from(direct)),
    ])
    .collect()
}

#[test]
fn posixaio_moves_the_bytes_and_ios_fio_moves() {
    for rw in ["randwrite", "randread"] {
        for direct in [false, true] {
            let case = format!("rw={rw} direct={direct}");
            let args = job(rw, direct);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let moved = [SIZE, SIZE / 4096];
            let expected = if rw == "randread" {
                [moved, [0, 0]]
            } else {
                [[0, 0], moved]
            };
            let dir = scratch();
            let (doc, code) = iolens_json(dir.path(), &args);
            assert_eq!(
                code, 0,
                "{case}: expected iolens to succeed, saw exit {code}: {doc}"
            );
            let job = &doc["jobs"][0];
            assert_eq!(
                (
                    job["error"].as_u64(),
                    job["job options"]["ioengine"].as_str()
                ),
                (Some(0), Some("posixaio")),
                "{case}: expected no error and ioengine=posixaio in the job's options: {job}"
            );
            assert_eq!(
                entries(&doc),
                [("p".to_string(), 0, expected)],
                "{case}: expected iolens' [[read bytes, ios], [write bytes, ios]]"
            );
            std::fs::remove_file(dir.path().join("f")).expect("remove iolens' file");
            if let Some(fio_doc) = fio(dir.path(), &args) {
                assert_eq!(
                    entries(&fio_doc),
                    entries(&doc),
                    "{case}: expected fio's counts to equal iolens'"
                );
            }
        }
    }
}

#[test]
fn a_sequential_posixaio_write_leaves_the_file_fio_leaves() {
    let dir = scratch();
    for direct in ["--direct=0", "--direct=1"] {
        let (ours, theirs) = write_both(
            dir.path(),
            "256k",
            &[
                "--ioengine=posixaio",
                "--iodepth=8",
                direct,
                "--buffer_pattern=0xdeadbeef",
            ],
        );
        let expected: Vec<u8> = [0xde, 0xad, 0xbe, 0xef]
            .into_iter()
            .cycle()
            .take(256 << 10)
            .collect();
        assert!(
            ours == expected,
            "{direct}: expected 256 KiB of deadbeef from iolens, saw {:02x?}… ({} bytes)",
            &ours[..ours.len().min(8)],
            ours.len()
        );
        if let Some(theirs) = theirs {
            assert!(
                theirs == ours,
                "{direct}: expected fio's file to equal iolens' byte for byte; first difference at {:?}",
                ours.iter().zip(&theirs).position(|(a, b)| a != b)
            );
        }
    }
}
