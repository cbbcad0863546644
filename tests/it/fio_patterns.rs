//! fio as the oracle for I/O patterns: `random_generator=lfsr` (the blocks
//! and their order), with the offsets read from fio 3.33 pinned here and,
//! where fio is installed, its own run beside iolens.

use crate::fio_match::{fio, iolens_json};
use crate::fio_offsets::{fio_iolog, per_io_log, Ios};
use crate::support::scratch;

/// The I/Os iolens issues for `args` (its per-I/O log) and, where fio is
/// installed, those fio issues (its `write_iolog`), from a scratch directory.
fn issued(args: &[&str]) -> (Ios, Option<Ios>) {
    let dir = scratch();
    let mut with_log = args.to_vec();
    with_log.extend([
        "--output-format=json",
        "--write_lat_log=io",
        "--log_offset=1",
    ]);
    let (doc, code) = iolens_json(dir.path(), &with_log);
    assert_eq!(
        code, 0,
        "{args:?}: expected iolens to succeed, saw exit {code}: {doc}"
    );
    let ours = per_io_log(&dir.path().join("io_clat.1.log"));
    let mut fio_args = args.to_vec();
    fio_args.extend(["--output-format=json", "--write_iolog=fio.iolog"]);
    let theirs = fio(dir.path(), &fio_args).map(|_| fio_iolog(&dir.path().join("fio.iolog")));
    (ours, theirs)
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

/// fio's write_iolog as (action, offset KiB) for trims and writes.
fn fio_trims_and_writes(path: &std::path::Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("expected fio to write {}: {e}", path.display()));
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && matches!(f[2], "trim" | "write"))
        .map(|f| {
            (
                f[2].to_string(),
                f[3].parse::<u64>().expect("an offset") / 1024,
            )
        })
        .collect()
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
    for (ddir, ios) in [("trim", 16), ("write", 16)] {
        let job = &doc["jobs"][0][ddir];
        assert_eq!(
            (job["io_bytes"].as_u64(), job["total_ios"].as_u64()),
            (Some(64 << 10), Some(ios)),
            "expected {ddir}: 64 KiB in {ios} I/Os, saw {job}"
        );
    }
    let fio_args = [&args[..], &["--write_iolog=fio.iolog"]].concat();
    if let Some(fio_doc) = fio(dir.path(), &fio_args) {
        let theirs = fio_trims_and_writes(&dir.path().join("fio.iolog"));
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
    for ddir in ["trim", "write"] {
        let job = &doc["jobs"][0][ddir];
        assert_eq!(
            (job["io_bytes"].as_u64(), job["total_ios"].as_u64()),
            (Some(256 << 10), Some(64)),
            "expected {ddir}: 256 KiB in 64 I/Os, saw {job}"
        );
    }
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

/// fio's t0012: three jobs of one flow_id with weights 1, 5 and 10, each
/// logging its IOPS every half second.
const FLOW_JOBS: &str = "[global]
bs=4k
ioengine=null
size=100g
runtime=3
time_based
flow_id=1
flow_sleep=100
log_avg_msec=500
write_iops_log=flow
MODE

[flow1]
flow=1

[flow2]
flow=5

[flow3]
flow=10
";

/// The jobs' I/Os over their IOPS logs' samples but the last, as ratios to the
/// first job's. As fio's harness does for t0012, the end is left out: a job
/// whose peers have ended is held by no one.
fn flow_ratios(dir: &std::path::Path) -> Vec<f64> {
    let ios: Vec<f64> = (1..=3)
        .map(|job| {
            let path = dir.join(format!("flow_iops.{job}.log"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("expected an IOPS log {}: {e}", path.display()));
            let samples: Vec<f64> = text
                .lines()
                .map(|line| {
                    line.split(',')
                        .nth(1)
                        .expect("an IOPS field")
                        .trim()
                        .parse()
                        .expect("a number")
                })
                .collect();
            assert!(
                samples.len() >= 4,
                "expected 5 or 6 samples in {}, saw {samples:?}",
                path.display()
            );
            samples[..samples.len() - 1].iter().sum()
        })
        .collect();
    assert!(
        ios[0] >= 100.0,
        "expected each job to issue at least 100 I/Os, saw {ios:?}"
    );
    ios.iter().map(|n| n / ios[0]).collect()
}

/// While all run, each job is held to its share within an I/O or two; their
/// clocks (hence their samples) may start some ms apart: `tolerance` of each ratio.
fn assert_flow_ratios(who: &str, ratios: &[f64], tolerance: f64) {
    for (ratio, expected) in ratios.iter().zip([1.0, 5.0, 10.0]) {
        assert!(
            (ratio / expected - 1.0).abs() < tolerance,
            "{who}: expected the jobs' I/O counts in the ratio 1:5:10, saw 1:{:.3}:{:.3}",
            ratios[1],
            ratios[2]
        );
    }
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
        assert_flow_ratios(&format!("iolens, {mode}"), &flow_ratios(dir.path()), 0.05);
    }
    if fio(dir.path(), &["--output-format=json", "flow.fio"]).is_some() {
        // fio's own harness allows 30 % (job3/job1 in 7..13), and fio needs it
        assert_flow_ratios("fio", &flow_ratios(dir.path()), 0.3);
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
