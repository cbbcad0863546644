//! fio as the oracle for I/O patterns: `random_generator=lfsr` (the blocks
//! and their order), with the offsets read from fio 3.33 pinned here and,
//! where fio is installed, its own run beside iolens.

use crate::fio_match::{fio, iolens_json};
use crate::fio_offsets::{fio_iolog_actions, issued_by_both, Ios};
use crate::support::scratch;

/// The I/Os iolens issues for `args` and, where fio is installed, those fio
/// issues, from a scratch directory.
fn issued(args: &[&str]) -> (Ios, Option<Ios>) {
    let dir = scratch();
    let ((_, ours), theirs) = issued_by_both(dir.path(), &format!("{args:?}"), args);
    (ours, theirs.map(|(_, ios)| ios))
}

#[test]
fn lfsr_hits_every_block_once_in_fios_order() {
    // fio's t0021: norandommap, and still each of the 256 offsets once
    let (ours, theirs) = issued(&[
        "--name=test",
        "--ioengine=null",
        "--filesize=1M",
        "--rw=randread",
        "--norandommap=1",
        "--random_generator=lfsr",
    ]);
    let mut blocks: Vec<u64> = ours.iter().map(|&(offset, _)| offset / 4).collect();
    assert_eq!(
        blocks[..8],
        [235, 205, 163, 196, 114, 41, 154, 93],
        "expected fio 3.33's first blocks, saw the left ones"
    );
    blocks.sort_unstable();
    assert!(
        blocks.iter().copied().eq(0..256),
        "expected each of the 256 blocks once, saw {blocks:?}"
    );
    if let Some(theirs) = theirs {
        assert_eq!(
            ours, theirs,
            "expected the installed fio's I/Os (right), saw iolens' (left)"
        );
    }
}

#[test]
fn lfsr_passes_on_a_file_follow_fio() {
    // on a real file, with a second pass and 8k blocks
    let (ours, theirs) = issued(&[
        "--name=lf",
        "--ioengine=psync",
        "--filename=lf.dat",
        "--size=256k",
        "--bs=8k",
        "--rw=randwrite",
        "--loops=2",
        "--random_generator=lfsr",
    ]);
    assert_eq!(
        ours.len(),
        64,
        "expected 2 passes of 32 blocks, saw {} I/Os",
        ours.len()
    );
    for (pass, ios) in ours.chunks(32).enumerate() {
        let mut offsets: Vec<u64> = ios.iter().map(|&(offset, _)| offset).collect();
        offsets.sort_unstable();
        assert!(
            offsets.iter().copied().eq((0..32).map(|b| b * 8)),
            "expected pass {pass} to write each 8k block once, saw offsets (KiB) {offsets:?}"
        );
    }
    if let Some(theirs) = theirs {
        assert_eq!(
            ours, theirs,
            "expected the installed fio's I/Os (right), saw iolens' (left)"
        );
    }
}

#[test]
fn skewed_distributions_take_fios_default_parameter() {
    // fio: pareto 0.2, zipf 1.1, normal its own bell when no :value is given
    for distribution in ["pareto", "zipf", "normal"] {
        let args = [
            "--name=skew",
            "--ioengine=null",
            "--size=1M",
            "--rw=randread",
            &format!("--random_distribution={distribution}"),
            "--output-format=json",
        ];
        let dir = scratch();
        let (doc, code) = iolens_json(dir.path(), &args);
        assert_eq!(
            code, 0,
            "{distribution}: expected iolens to run it, saw exit {code}: {doc}"
        );
        let read = |doc: &serde_json::Value| doc["jobs"][0]["read"]["io_bytes"].as_u64();
        assert_eq!(
            read(&doc),
            Some(1 << 20),
            "{distribution}: expected 1 MiB read, saw {:?}",
            read(&doc)
        );
        if let Some(fio_doc) = fio(dir.path(), &args) {
            assert_eq!(
                read(&fio_doc),
                read(&doc),
                "{distribution}: expected fio's bytes (left)"
            );
        }
    }
}

/// The job trimmed and wrote `bytes` each, in `ios` I/Os each.
fn assert_trims_and_writes(doc: &serde_json::Value, bytes: u64, ios: u64) {
    for ddir in ["trim", "write"] {
        let job = &doc["jobs"][0][ddir];
        assert_eq!(
            (job["io_bytes"].as_u64(), job["total_ios"].as_u64()),
            (Some(bytes), Some(ios)),
            "expected {ddir}: {bytes} bytes in {ios} I/Os, saw {job}"
        );
    }
}

#[test]
fn randtrimwrite_trims_then_writes_the_same_block_as_fio() {
    // with lfsr both tools pick the same blocks, so the whole sequence compares
    let args = [
        "--name=rtw",
        "--ioengine=null",
        "--size=64k",
        "--bs=4k",
        "--rw=randtrimwrite",
        "--random_generator=lfsr",
        "--output-format=json",
    ];
    let dir = scratch();
    let with_log = [&args[..], &["--write_lat_log=io", "--log_offset=1"]].concat();
    let (doc, code) = iolens_json(dir.path(), &with_log);
    assert_eq!(
        code, 0,
        "expected iolens to run randtrimwrite, saw exit {code}: {doc}"
    );
    let log = std::fs::read_to_string(dir.path().join("io_clat.1.log")).expect("iolens' log");
    let ours: Vec<(String, u64)> = log
        .lines()
        .map(|line| {
            let fields: Vec<u64> = line
                .split(',')
                .map(|f| f.trim().parse().expect("a number"))
                .collect();
            let action = if fields[2] == 2 { "trim" } else { "write" };
            (action.to_string(), fields[4] / 1024)
        })
        .collect();
    // fio 3.33's order: trims and writes in pairs over blocks 15, 11, 9, 14, …
    let blocks = [15, 11, 9, 14, 3, 8, 0, 4, 6, 7, 10, 1, 12, 2, 5, 13];
    let expected: Vec<(String, u64)> = blocks
        .iter()
        .flat_map(|b| [("trim".to_string(), b * 4), ("write".to_string(), b * 4)])
        .collect();
    assert_eq!(
        ours, expected,
        "expected fio 3.33's trims and writes (right), saw iolens' (left)"
    );
    assert_trims_and_writes(&doc, 64 << 10, 16);
    let fio_args = [&args[..], &["--write_iolog=fio.iolog"]].concat();
    if let Some(fio_doc) = fio(dir.path(), &fio_args) {
        let theirs: Vec<(String, u64)> =
            fio_iolog_actions(&dir.path().join("fio.iolog"), &["trim", "write"])
                .into_iter()
                .map(|(action, offset, _)| (action, offset))
                .collect();
        assert_eq!(
            ours, theirs,
            "expected the installed fio's trims and writes (right)"
        );
        for ddir in ["trim", "write"] {
            assert_eq!(
                fio_doc["jobs"][0][ddir]["io_bytes"], doc["jobs"][0][ddir]["io_bytes"],
                "expected fio's {ddir} bytes (left)"
            );
        }
    }
}

#[test]
fn randtrimwrite_on_a_file_punches_each_block_then_fills_it() {
    // fio 3.33's psync cannot trim a regular file (ENOTTY); iolens punches a hole
    let dir = scratch();
    let (doc, code) = iolens_json(
        dir.path(),
        &[
            "--name=rtw",
            "--filename=rtw.dat",
            "--size=256k",
            "--rw=randtrimwrite",
            "--output-format=json",
        ],
    );
    assert_eq!(
        code, 0,
        "expected iolens to run randtrimwrite on a file, saw exit {code}: {doc}"
    );
    assert_trims_and_writes(&doc, 256 << 10, 64);
    let data = std::fs::read(dir.path().join("rtw.dat")).expect("the target file");
    assert_eq!(data.len(), 256 << 10, "expected the file to keep its size");
    let zero_blocks = data
        .chunks(4096)
        .filter(|b| b.iter().all(|&x| x == 0))
        .count();
    assert_eq!(
        zero_blocks, 0,
        "expected every trimmed block written again, saw {zero_blocks} zero blocks"
    );
}

/// Three jobs of one flow_id with weights 1, 5 and 10 (as fio's t0012): the
/// light one ends after 2000 I/Os and, with `exitall`, stops the others.
const FLOW_JOBS: &str = "[global]
bs=4k
ioengine=null
size=100g
flow_id=1
flow_sleep=100
exitall
MODE

[flow1]
flow=1
number_ios=2000

[flow2]
flow=5
time_based
runtime=60

[flow3]
flow=10
time_based
runtime=60
";

/// The I/O counts of the three jobs.
fn flow_ios(doc: &serde_json::Value) -> Vec<u64> {
    doc["jobs"]
        .as_array()
        .expect("a jobs array")
        .iter()
        .map(|job| job["read"]["total_ios"].as_u64().unwrap_or(0))
        .collect()
}

/// When the light job ends, the others hold 5 and 10 times its count: each
/// is held to its share (an I/O or two off), and until the end is noticed and
/// they are stopped they stay held (the ended job's count no longer grows).
/// This holds however busy the machine is.
fn assert_flow_shares(who: &str, ios: &[u64]) {
    let expected = [2000, 10_000, 20_000];
    let near = ios
        .iter()
        .zip(expected)
        .all(|(&n, e)| n.abs_diff(e) <= e / 100);
    assert!(
        near,
        "{who}: expected the flow's jobs to issue {expected:?} I/Os (within 1 %), saw {ios:?}"
    );
}

#[test]
fn flow_keeps_the_jobs_of_a_flow_id_in_the_ratio_of_their_weights() {
    let dir = scratch();
    let jobfile = dir.path().join("flow.fio");
    for mode in ["thread", "# worker processes"] {
        std::fs::write(&jobfile, FLOW_JOBS.replace("MODE", mode)).expect("write the job file");
        let (doc, code) = iolens_json(dir.path(), &["--output-format=json", "flow.fio"]);
        assert_eq!(
            code, 0,
            "{mode}: expected iolens to run the flow jobs, saw exit {code}: {doc}"
        );
        assert_flow_shares(&format!("iolens, {mode}"), &flow_ios(&doc));
        if let Some(fio_doc) = fio(dir.path(), &["--output-format=json", "flow.fio"]) {
            assert_flow_shares(&format!("fio, {mode}"), &flow_ios(&fio_doc));
        }
    }
}

#[test]
fn serialize_overlap_never_has_two_writes_of_one_block_in_flight() {
    // every write of a one-block file overlaps the one before: serialised, the
    // queue of 16 never holds two; reads are left alone, as in fio
    let depth_share = |rw: &str, serialize: &str| {
        let dir = scratch();
        let (doc, code) = iolens_json(
            dir.path(),
            &[
                "--name=overlap",
                "--ioengine=null",
                "--iodepth=16",
                // fio's null engine holds one batch: a batch of 16 can fill the queue
                "--iodepth_batch_submit=16",
                "--size=4k",
                "--io_size=1m",
                &format!("--rw={rw}"),
                &format!("--serialize_overlap={serialize}"),
                "--output-format=json",
            ],
        );
        assert_eq!(
            code, 0,
            "{rw}, serialize_overlap={serialize}: expected success, saw exit {code}: {doc}"
        );
        let job = &doc["jobs"][0];
        let ios = job["read"]["total_ios"].as_u64().unwrap_or(0)
            + job["write"]["total_ios"].as_u64().unwrap_or(0);
        assert_eq!(
            ios, 256,
            "{rw}, serialize_overlap={serialize}: expected 256 I/Os, saw {ios}"
        );
        job["iodepth_level"]["1"].as_f64().expect("a depth-1 share")
    };
    assert_eq!(
        depth_share("randwrite", "1"),
        100.0,
        "expected serialised writes of one block one at a time"
    );
    for (rw, serialize) in [("randwrite", "0"), ("randread", "1")] {
        let share = depth_share(rw, serialize);
        assert!(
            share < 50.0,
            "{rw}, serialize_overlap={serialize}: expected the queue to fill (depth 1 < 50 %), saw {share} %"
        );
    }
}
