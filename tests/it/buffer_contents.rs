//! What written data contains, with fio as the oracle: `buffer_pattern` (the file
//! bytes of a sequential write are identical), `buffer_compress_percentage` and
//! `buffer_compress_chunk` (how well the two files deflate), `dedupe_percentage`
//! (the share of 4k blocks that repeat an earlier one), and `refill_buffers`,
//! `scramble_buffers`, `zero_buffers` between them. Each case also checks iolens
//! against its target alone, so the test decides something without fio.

use crate::fio_match::{fio, iolens_json};
use crate::support::{command, iolens, scratch, stderr};
use flate2::{write::DeflateEncoder, Compression};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

const BLOCK: usize = 4096;

/// Writes `size` sequentially in 4k blocks with `extra` options, under iolens and
/// (when installed) fio; the bytes of each file.
pub(crate) fn write_both(dir: &Path, size: &str, extra: &[&str]) -> (Vec<u8>, Option<Vec<u8>>) {
    let args = |file: &str| {
        let mut all = vec![
            "--name=contents".to_string(),
            format!("--filename={file}"),
            "--rw=write".into(),
            "--bs=4k".into(),
            format!("--size={size}"),
            "--output-format=json".into(),
        ];
        all.extend(extra.iter().map(|a| a.to_string()));
        all
    };
    let ours = args("iolens.dat");
    let (_, code) = iolens_json(dir, &ours.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        code, 0,
        "expected iolens {extra:?} to succeed, exit code {code}"
    );
    let bytes = |file: &str| std::fs::read(dir.join(file)).expect("read the written file");
    let theirs = args("fio.dat");
    let fio_ran = fio(dir, &theirs.iter().map(String::as_str).collect::<Vec<_>>()).is_some();
    (bytes("iolens.dat"), fio_ran.then(|| bytes("fio.dat")))
}

/// Deflated size / size.
fn compressed_share(data: &[u8]) -> f64 {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).expect("deflate into memory");
    let packed = encoder.finish().expect("deflate into memory");
    packed.len() as f64 / data.len() as f64
}

/// Share of the 4k blocks that repeat an earlier block.
fn duplicate_share(data: &[u8]) -> f64 {
    let mut seen = HashSet::new();
    let blocks = data.chunks(BLOCK).collect::<Vec<_>>();
    let repeats = blocks.iter().filter(|b| !seen.insert(**b)).count();
    repeats as f64 / blocks.len() as f64
}

#[test]
fn buffer_pattern_writes_the_bytes_fio_writes() {
    let dir = scratch();
    // 300 bytes: does not divide a block, and fits fio 3.33's 512-byte limit.
    let from_file: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(dir.path().join("pattern.bin"), &from_file).expect("write the pattern file");
    let cases: &[(&str, Vec<u8>)] = &[
        (
            "0xdeadface\"abcd\"-12",
            b"\xde\xad\xfa\xceabcd\xf4\xff\xff\xff".to_vec(),
        ),
        ("66", vec![0x42]),
        ("0xFF0X1", vec![0xff, 0x01]),
        ("\"abc\"", b"abc".to_vec()),
        ("-100xab\"1\"", vec![0xf6, 0xff, 0xff, 0xff, 0xab, b'1']),
        ("0x01'pattern.bin'", [&[1u8][..], &from_file].concat()),
    ];
    for (pattern, bytes) in cases {
        let option = format!("--buffer_pattern={pattern}");
        let (ours, theirs) = write_both(dir.path(), "64k", &[&option]);
        let block: Vec<u8> = bytes.iter().copied().cycle().take(BLOCK).collect();
        let expected = block.repeat(16);
        assert!(
            ours == expected,
            "{option}: expected every 4k block to be {:02x?}… repeated from its start, saw {:02x?}…",
            &block[..24],
            &ours[..24]
        );
        if let Some(theirs) = theirs {
            let first = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            assert!(
                theirs == ours,
                "{option}: expected fio's file to equal iolens' byte for byte; first difference at {first:?}"
            );
        }
    }
}

#[test]
fn compressible_and_duplicate_shares_match_fio() {
    let dir = scratch();
    // (options, deflated share, share of repeated blocks): the targets iolens must
    // meet alone; fio must land as close to iolens.
    let cases: &[(&[&str], Option<f64>, f64)] = &[
        (&["--buffer_compress_percentage=50"], Some(0.5), 0.0),
        (
            &[
                "--buffer_compress_percentage=75",
                "--buffer_compress_chunk=4k",
            ],
            Some(0.25),
            0.0,
        ),
        (
            &[
                "--buffer_compress_percentage=30",
                "--buffer_compress_chunk=0",
            ],
            Some(0.7),
            0.0,
        ),
        (
            &[
                "--buffer_compress_percentage=60",
                "--buffer_pattern=0xdeadbeef",
            ],
            Some(0.4),
            0.0,
        ),
        (&["--dedupe_percentage=30"], None, 0.3),
        (
            &["--dedupe_percentage=50", "--buffer_compress_percentage=40"],
            None,
            0.5,
        ),
    ];
    for &(options, compressed, repeated) in cases {
        let (ours, theirs) = write_both(dir.path(), "4m", options);
        let (our_ratio, our_dups) = (compressed_share(&ours), duplicate_share(&ours));
        if let Some(target) = compressed {
            assert!(
                (our_ratio - target).abs() < 0.03,
                "{options:?}: expected the file to deflate to {target} of its size, saw {our_ratio:.3}"
            );
        }
        // 1024 blocks: a binomial share is within 0.06 of its mean (4 sigma).
        assert!(
            (our_dups - repeated).abs() < 0.06,
            "{options:?}: expected {repeated} of the blocks to repeat an earlier one, saw {our_dups:.3}"
        );
        let Some(theirs) = theirs else { continue };
        let (fio_ratio, fio_dups) = (compressed_share(&theirs), duplicate_share(&theirs));
        // Duplicates deflate too, so the ratio varies with the duplicate share.
        let ratio_margin = if repeated > 0.0 { 0.08 } else { 0.03 };
        assert!(
            (our_ratio - fio_ratio).abs() < ratio_margin,
            "{options:?}: expected iolens' file to deflate like fio's ({fio_ratio:.3}), saw {our_ratio:.3}"
        );
        assert!(
            (our_dups - fio_dups).abs() < 0.08,
            "{options:?}: expected iolens to repeat as many blocks as fio ({fio_dups:.3}), saw {our_dups:.3}"
        );
    }
}

#[test]
fn refill_scramble_and_zero_buffers_match_fio() {
    let dir = scratch();
    // (options, every block repeats the first, the file is all zeros)
    let cases: &[(&[&str], bool, bool)] = &[
        (&[], false, false),
        (&["--scramble_buffers=0"], true, false),
        (
            &["--refill_buffers=1", "--scramble_buffers=0"],
            false,
            false,
        ),
        (&["--zero_buffers=1"], true, true),
        (
            &["--buffer_pattern=0x22", "--refill_buffers=1"],
            true,
            false,
        ),
    ];
    for &(options, same, zeros) in cases {
        let (ours, theirs) = write_both(dir.path(), "256k", options);
        for (tool, data) in [("iolens", Some(&ours)), ("fio", theirs.as_ref())] {
            let Some(data) = data else { continue };
            let first = &data[..BLOCK];
            let all_same = data.chunks(BLOCK).all(|b| b == first);
            let unique = duplicate_share(data) == 0.0;
            let all_zero = data.iter().all(|&b| b == 0);
            assert!(
                (same && all_same || !same && unique) && all_zero == zeros,
                "{tool} {options:?}: expected every block the same: {same}, all zeros: {zeros}; \
                 saw every block the same: {all_same}, every block unique: {unique}, all zeros: {all_zero}"
            );
        }
    }
}

#[test]
fn reads_do_not_leak_into_pattern_writes() {
    // Each block of the file starts out different; a write of a buffer a read
    // filled would copy some other block's bytes instead of the pattern.
    let dir = scratch();
    let blocks = 64;
    let start: Vec<u8> = (0..blocks * BLOCK).map(|i| (i / BLOCK + 1) as u8).collect();
    let file = dir.path().join("mixed.dat");
    std::fs::write(&file, &start).expect("write the starting file");
    let out = iolens(&[
        "run",
        "--no-history",
        "--name=mixed",
        &format!("--filename={}", file.display()),
        "--rw=randrw",
        "--bs=4k",
        "--size=256k",
        "--buffer_pattern=0xab",
        "--loops=4",
    ]);
    assert!(
        out.status.success(),
        "expected the randrw run to succeed: {}",
        stderr(&out)
    );
    let data = std::fs::read(&file).expect("read the file back");
    let pattern = [0xabu8; BLOCK];
    let mut written = 0;
    for (i, (now, before)) in data.chunks(BLOCK).zip(start.chunks(BLOCK)).enumerate() {
        written += usize::from(now == pattern);
        assert!(
            now == pattern || now == before,
            "expected block {i} to hold the pattern or its starting bytes, saw {:02x?}…",
            &now[..8]
        );
    }
    assert!(
        written > 0,
        "expected some blocks to be written with the pattern, saw none"
    );
}

#[test]
fn unsupported_pattern_and_dedupe_settings_are_refused_by_name() {
    let cases = [
        (
            "--buffer_pattern=%o",
            "buffer_pattern=%o",
            "%o (the block offset)",
        ),
        (
            "--buffer_pattern=0xzz",
            "buffer_pattern=0xzz",
            "no hex digits",
        ),
        (
            "--dedupe_mode=working_set",
            "dedupe_mode=working_set",
            "only dedupe_mode=repeat",
        ),
    ];
    let dir = scratch();
    for (option, named, why) in cases {
        let out = command()
            .args(["run", "--no-history", "--name=x", "--filename=unused.dat"])
            .args(["--rw=write", "--size=4k", option])
            .current_dir(dir.path())
            .output()
            .expect("run iolens");
        let text = stderr(&out);
        assert!(
            out.status.code() == Some(2) && text.contains(named) && text.contains(why),
            "expected {option} to be refused (exit 2) naming {named} and saying {why:?}, saw {:?}: {text}",
            out.status.code()
        );
    }
}
