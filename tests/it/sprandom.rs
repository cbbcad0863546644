//! Upstream fio's newer options against upstream fio (Debian's 3.33 lacks
//! them): `sprandom` (fio 3.42) and `random_distribution=sequence` with
//! `random_sequence_stride` (after 3.42). The same I/Os at the same offsets in
//! the same order (both sides' `write_iolog`), the same bytes, and the same
//! jobs refused. The upstream binary comes from `IOLENS_UPSTREAM_FIO`, else the
//! build of bench/fio-testsuite (target/fio-testsuite/fio-src/fio), else a
//! `fio` on the PATH that has the option; without one, the fio side is skipped
//! with a reason and iolens is held to the numbers read from upstream fio.

use crate::fio_match::iolens_json;
use crate::support::{command, fio_knows, isolated, scratch, stderr, upstream_fio};
use std::path::Path;
use std::process::Output;

/// (offset, length) of each I/O, in issue order.
type Ios = Vec<(u64, u64)>;

/// The reads and writes in a `write_iolog` (either side's): (offset, length) in order.
fn logged_ios(path: &Path) -> Ios {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("expected an iolog at {}: {e}", path.display()));
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && (f[2] == "read" || f[2] == "write"))
        .map(|f| {
            (
                f[3].parse().expect("an offset"),
                f[4].parse().expect("a length"),
            )
        })
        .collect()
}

/// Write bytes and I/Os of a JSON document's first job.
fn write_totals(doc: &serde_json::Value) -> (u64, u64) {
    let write = &doc["jobs"][0]["write"];
    (
        write["io_bytes"].as_u64().unwrap_or(0),
        write["total_ios"].as_u64().unwrap_or(0),
    )
}

/// The value of `--name=` in `extra`.
fn value_of<'a>(extra: &[&'a str], name: &str) -> Option<&'a str> {
    extra
        .iter()
        .find_map(|a| a.strip_prefix(&format!("--{name}=")))
}

/// The `--size=` of `extra` in bytes (k and M suffixes).
fn size_of(extra: &[&str]) -> u64 {
    let size = value_of(extra, "size").expect("a --size= option");
    let (number, unit) = size.split_at(size.len() - 1);
    let unit = match unit {
        "k" => 1 << 10,
        "M" => 1 << 20,
        _ => panic!("a size in k or M, not {size}"),
    };
    number.parse::<u64>().expect("a number") * unit
}

const SPRANDOM: &[&str] = &["--ioengine=psync", "--rw=randwrite", "--sprandom=1"];

fn job(kind: &[&str], extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["--name=up", "--filename=target", "--output-format=json"]
        .map(String::from)
        .to_vec();
    args.extend(kind.iter().chain(extra).map(|a| a.to_string()));
    args
}

/// iolens' I/Os and write (bytes, I/Os) for the job, in a fresh scratch directory.
fn iolens_ios(kind: &[&str], extra: &[&str]) -> (Ios, (u64, u64)) {
    let dir = scratch();
    let mut args = job(kind, extra);
    args.push("--write_iolog=iolens.iolog".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(
        code, 0,
        "expected iolens {extra:?} to succeed, saw exit {code}: {doc}"
    );
    (
        logged_ios(&dir.path().join("iolens.iolog")),
        write_totals(&doc),
    )
}

/// Upstream fio's I/Os and write (bytes, I/Os) for the job.
fn fio_ios(fio: &Path, kind: &[&str], extra: &[&str]) -> (Ios, (u64, u64)) {
    let dir = scratch();
    let mut args = job(kind, extra);
    args.push("--write_iolog=fio.iolog".into());
    let out = isolated(fio)
        .args(&args)
        .current_dir(dir.path())
        .output()
        .expect("run upstream fio");
    let text = String::from_utf8_lossy(&out.stdout);
    // fio says "fio: sprandom sets ..." before the document
    let doc = serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).unwrap_or_else(|e| {
        panic!(
            "upstream fio {extra:?} gave no JSON ({e}): {text}{}",
            stderr(&out)
        )
    });
    (
        logged_ios(&dir.path().join("fio.iolog")),
        write_totals(&doc),
    )
}

#[test]
fn sprandom_writes_upstream_fios_blocks_in_its_order() {
    let fio = upstream_fio("sprandom", true);
    // fio after 3.42 rounds the physical size down, not up, to whole blocks
    let rounds_up = fio
        .as_ref()
        .is_some_and(|fio| !fio_knows(fio, "random_sequence_stride"));
    // (options, writes fio 3.42 issues): t/sprandom.py's jobs 1 and 6, a
    // physical size of whole blocks, a region count that does not divide the
    // size, a cache, another seed, 16k blocks and an io_size that sprandom overrides
    let cases: [(&[&str], u64); 6] = [
        (
            &["--size=32M", "--spr_op=0.10", "--spr_num_regions=50"],
            9012,
        ),
        (
            &["--size=32M", "--spr_op=0.25", "--spr_num_regions=64"],
            10240,
        ),
        (
            &[
                "--size=32M",
                "--spr_op=0.10",
                "--spr_num_regions=100",
                "--spr_cs=32K",
            ],
            9012,
        ),
        (
            &[
                "--size=1000k",
                "--spr_op=0.2",
                "--spr_num_regions=3",
                "--spr_cs=8k",
            ],
            292,
        ),
        (
            &[
                "--size=4M",
                "--spr_op=0.9",
                "--spr_num_regions=10",
                "--randseed=77",
            ],
            1946,
        ),
        (
            &[
                "--size=8M",
                "--bs=16k",
                "--spr_op=0.28",
                "--spr_num_regions=7",
                "--io_size=1M",
            ],
            655,
        ),
    ];
    for (extra, writes) in cases {
        let (ours, (bytes, ios)) = iolens_ios(SPRANDOM, extra);
        let block = ours.first().map_or(0, |w| w.1);
        assert_eq!(
            (ours.len() as u64, ios, bytes),
            (writes, writes, writes * block),
            "{extra:?}: expected fio 3.42's {writes} writes (iolog, total_ios, io_bytes)"
        );
        let size = size_of(extra);
        assert!(
            ours.iter()
                .all(|&(offset, len)| offset % block == 0 && offset + len <= size),
            "{extra:?}: expected whole blocks inside the {size}-byte target"
        );
        let op: f64 = value_of(extra, "spr_op").map_or(0.15, |op| op.parse().expect("a ratio"));
        let whole_blocks = ((size as f64 * op) as u64).is_multiple_of(block);
        if let Some(fio) = fio.as_ref().filter(|_| rounds_up || whole_blocks) {
            let (theirs, totals) = fio_ios(fio, SPRANDOM, extra);
            assert!(
                ours == theirs,
                "{extra:?}: expected upstream fio's {} writes in its order, saw iolens' {} \
                 (first difference at write {:?})",
                theirs.len(),
                ours.len(),
                ours.iter().zip(&theirs).position(|(a, b)| a != b)
            );
            assert_eq!(
                (bytes, ios),
                totals,
                "{extra:?}: expected upstream fio's write io_bytes and total_ios"
            );
        }
    }
}

fn refused_by_iolens(extra: &[&str]) -> Output {
    let dir = scratch();
    let mut args = vec!["run".to_string(), "--no-history".into()];
    args.extend(job(SPRANDOM, extra));
    command()
        .args(&args)
        .current_dir(dir.path())
        .output()
        .expect("run iolens")
}

#[test]
fn jobs_upstream_fio_refuses_are_refused_in_one_line() {
    let fio = upstream_fio("sprandom", true);
    // t/sprandom.py's jobs that must fail (3, 4, 5, 7, 8), plus two files
    let cases: [(&[&str], &str); 6] = [
        (
            &["--size=128M", "--random_generator=tausworthe"],
            "random_generator=tausworthe",
        ),
        (
            &["--size=256M", "--bs=16K", "--norandommap=0"],
            "norandommap=0",
        ),
        (
            &["--size=256M", "--bs=16K", "--rw=randread"],
            "rw=randwrite",
        ),
        (
            &["--size=32M", "--spr_num_regions=2000", "--spr_cs=32K"],
            "spr_cs=32K",
        ),
        (
            &["--size=32M", "--spr_num_regions=50", "--spr_cs=32M"],
            "spr_cs=32M",
        ),
        (&["--size=1M", "--nrfiles=2", "--filename="], "one file"),
    ];
    for (extra, named) in cases {
        let out = refused_by_iolens(extra);
        let said = stderr(&out);
        assert!(
            out.status.code() == Some(2)
                && said.trim().lines().count() == 1
                && said.contains(named),
            "{extra:?}: expected iolens to refuse (exit 2) in one line naming {named}, saw {:?}: {said}",
            out.status.code()
        );
        if let Some(fio) = &fio {
            let dir = scratch();
            let out = isolated(fio)
                .args(job(SPRANDOM, extra))
                .current_dir(dir.path())
                .output()
                .expect("run upstream fio");
            assert!(
                !out.status.success(),
                "{extra:?}: expected upstream fio to refuse the job too, it succeeded"
            );
        }
    }
}

#[test]
fn a_sequence_distribution_reads_upstream_fios_blocks() {
    let fio = upstream_fio("random_sequence_stride", true);
    let kind = ["--ioengine=null", "--rw=randread", "--bs=4k"];
    let blocks = |list: &[u64]| list.iter().map(|b| (b * 4096, 4096)).collect::<Vec<_>>();
    // fio's t/sequence.py (the list, and the list moving on), a stride that runs
    // off a 12-block region under a larger io_size, and loops after it ran off
    let cases: [(&[&str], Ios); 4] = [
        (
            &[
                "--random_distribution=sequence:2,0,1",
                "--size=48k",
                "--io_size=24k",
            ],
            blocks(&[2, 0, 1, 2, 0, 1]),
        ),
        (
            &[
                "--random_distribution=sequence:2,0,1",
                "--size=48k",
                "--io_size=24k",
                "--random_sequence_stride=1",
            ],
            blocks(&[2, 0, 1, 5, 3, 4]),
        ),
        (
            &[
                "--random_distribution=sequence:2,0,1",
                "--size=48k",
                "--io_size=1M",
                "--random_sequence_stride=1",
            ],
            blocks(&[2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10]),
        ),
        (
            &[
                "--random_distribution=sequence:3,1",
                "--size=32k",
                "--loops=2",
                "--random_sequence_stride=1",
            ],
            blocks(&[3, 1, 5, 3, 7, 5]),
        ),
    ];
    for (extra, expected) in cases {
        let (ours, _) = iolens_ios(&kind, extra);
        assert_eq!(
            ours, expected,
            "{extra:?}: expected upstream fio's reads (offset, length)"
        );
        if let Some(fio) = &fio {
            let (theirs, _) = fio_ios(fio, &kind, extra);
            assert_eq!(
                theirs, expected,
                "{extra:?}: expected upstream fio to read these"
            );
        }
    }
}
