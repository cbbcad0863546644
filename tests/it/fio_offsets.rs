//! fio as the oracle for where I/O goes: the offsets iolens issues (its
//! per-I/O latency log with `log_offset=1`) against those fio 3.33 issues for
//! the same job (its `write_iolog`), plus the bytes each moved. The expected
//! offsets were read from fio 3.33; where fio is installed, it runs the same
//! job beside iolens and must agree.

use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;
use serde_json::Value;
use std::path::Path;

/// (offset KiB, length KiB) of each I/O, in issue order.
pub(crate) type Ios = Vec<(u64, u64)>;

/// [read, write] io_bytes of the first job entry.
fn io_bytes(doc: &Value) -> [u64; 2] {
    ["read", "write"].map(|d| doc["jobs"][0][d]["io_bytes"].as_u64().unwrap_or(0))
}

/// The I/Os in a per-I/O log of iolens or fio (`time, value, ddir, bs, offset, prio`).
pub(crate) fn per_io_log(path: &Path) -> Ios {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("expected iolens to write {}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let fields: Vec<u64> = line
                .split(',')
                .map(|f| f.trim().parse().expect("a number"))
                .collect();
            (fields[4] / 1024, fields[3] / 1024)
        })
        .collect()
}

/// The reads and writes in a fio `write_iolog` (`time file action offset len`).
fn fio_iolog(path: &Path) -> Ios {
    fio_iolog_actions(path, &["read", "write"])
        .into_iter()
        .map(|(_, offset, len)| (offset, len))
        .collect()
}

/// The I/Os of the given actions in a fio `write_iolog`: (action, offset KiB, length KiB).
pub(crate) fn fio_iolog_actions(path: &Path, actions: &[&str]) -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("expected fio to write {}: {e}", path.display()));
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && actions.contains(&f[2]))
        .map(|f| {
            let number = |s: &str| s.parse::<u64>().expect("a number") / 1024;
            (f[2].to_string(), number(f[3]), number(f[4]))
        })
        .collect()
}

/// iolens must issue `expected` and move `bytes` ([read, write]) for `args`;
/// fio, where installed, must do the same. `files` (name, bytes) are written
/// into the scratch directory first.
fn offsets_match(
    case: &str,
    files: &[(&str, usize)],
    args: &[&str],
    expected: &Ios,
    bytes: [u64; 2],
) {
    let dir = scratch();
    for &(name, len) in files {
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join(name), data).expect("write a target file");
    }
    let ((doc, issued), fio_side) = issued_by_both(dir.path(), case, args);
    assert_eq!(
        &issued, expected,
        "{case}: expected iolens to issue these (offset KiB, length KiB), saw the left ones"
    );
    assert_eq!(
        io_bytes(&doc),
        bytes,
        "{case}: expected [read, write] io_bytes {bytes:?}"
    );
    if let Some((fio_doc, fio_ios)) = fio_side {
        assert_eq!(
            &fio_ios, expected,
            "{case}: expected the installed fio to issue what fio 3.33 did, saw the left ones"
        );
        assert_eq!(
            io_bytes(&fio_doc),
            bytes,
            "{case}: expected the installed fio's [read, write] io_bytes to be {bytes:?}"
        );
    }
}

/// Runs `args` in `dir` under iolens, which must succeed, and, where fio is
/// installed, under fio: each one's JSON and the I/Os it issued (iolens' per-I/O
/// log, fio's `write_iolog`).
pub(crate) fn issued_by_both(
    dir: &Path,
    case: &str,
    args: &[&str],
) -> ((Value, Ios), Option<(Value, Ios)>) {
    let mut with_log = args.to_vec();
    with_log.extend([
        "--output-format=json",
        "--write_lat_log=io",
        "--log_offset=1",
    ]);
    let (doc, code) = iolens_json(dir, &with_log);
    assert_eq!(
        code, 0,
        "{case}: expected iolens to succeed, saw exit {code}: {doc}"
    );
    let issued = per_io_log(&dir.join("io_clat.1.log"));
    let mut fio_args = args.to_vec();
    fio_args.extend(["--output-format=json", "--write_iolog=fio.iolog"]);
    let fio_side = fio(dir, &fio_args).map(|fio_doc| (fio_doc, fio_iolog(&dir.join("fio.iolog"))));
    ((doc, issued), fio_side)
}

#[test]
fn the_null_engine_walks_the_region_from_its_offset() {
    // fio: the null target "n.0.0" is written from 512k to 1536k
    let expected: Ios = (0..16).map(|i| (512 + 64 * i, 64)).collect();
    offsets_match(
        "null, offset=512k",
        &[],
        &[
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--offset=512k",
            "--bs=64k",
            "--rw=write",
        ],
        &expected,
        [0, 1 << 20],
    );
}

#[test]
fn strided_zones_beyond_zonerange_stay_in_the_zone_as_in_fio() {
    // bs=6k zonesize=64k zonerange=16k: each zone is read until 64k are done
    // (11 reads, 66k); the read at 12k crosses the zone's end, the positions
    // start over past the zone and at each 16k done. 170 reads make 1020k.
    let zone = [0, 6, 12, 0, 6, 12, 0, 6, 0, 6, 12];
    let expected: Ios = (0..16)
        .flat_map(|z| zone.map(|o| (z * 16 + o, 6)))
        .take(170)
        .collect();
    offsets_match(
        "zonemode=strided, zonesize > zonerange",
        &[("f", 1 << 20)],
        &[
            "--name=z",
            "--filename=f",
            "--size=1020k",
            "--bs=6k",
            "--rw=read",
            "--zonemode=strided",
            "--zonesize=64k",
            "--zonerange=16k",
        ],
        &expected,
        [170 * 6 * 1024, 0],
    );
}
