//! The queue depths fio reports (`iodepth_level`, `iodepth_submit`,
//! `iodepth_complete`) under its batching options and their defaults
//! (`iodepth_batch_submit`, `iodepth_batch_complete_min`/`_max`, `iodepth_low`):
//! each job runs under iolens and, where installed, fio 3.33 in one scratch
//! directory, and the two distributions must agree.

use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;
use serde_json::Value;
use std::path::Path;

/// fio's three depth maps, in its JSON key order.
const MAPS: [&str; 3] = ["iodepth_level", "iodepth_submit", "iodepth_complete"];

/// The variant whose distributions depend on timing: how many completions are
/// ready at each reap (compared loosely, and its batch sizes only with its limit).
const TIMED: &str = "--iodepth_batch_complete_max=8";

/// How far a distribution that depends on timing may be from fio's; the sizes of
/// its batches of completions are not compared.
const TIMED_TOLERANCE: f64 = 25.0;

/// A batching variant and how far (percentage points per bucket) iolens may be
/// from fio: the queue follows the options alone, but for `TIMED`.
const VARIANTS: [(&str, f64); 4] = [
    ("", 1.0),
    (TIMED, TIMED_TOLERANCE),
    ("--iodepth_batch_submit=4", 1.0),
    ("--iodepth_low=4", 1.0),
];

/// Why `engine` cannot run here, if it cannot.
fn missing(engine: &str) -> Option<&'static str> {
    let io_uring_disabled = || {
        std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").is_ok_and(|v| v.trim() != "0")
    };
    match engine {
        "libaio" if !Path::new("/proc/sys/fs/aio-max-nr").exists() => {
            Some("the kernel has no native AIO")
        }
        "io_uring" if io_uring_disabled() => {
            Some("io_uring is disabled (kernel.io_uring_disabled)")
        }
        _ => None,
    }
}

/// `map` of the job's entry in `doc`, bucket name → percent.
fn shares(doc: &Value, map: &str) -> Vec<(String, f64)> {
    let buckets = doc["jobs"][0][map]
        .as_object()
        .unwrap_or_else(|| panic!("expected a {map} object in {doc}"));
    buckets
        .iter()
        .map(|(bucket, pct)| (bucket.clone(), pct.as_f64().unwrap_or(0.0)))
        .collect()
}

fn share(doc: &Value, map: &str, bucket: &str) -> f64 {
    doc["jobs"][0][map][bucket].as_f64().unwrap_or(0.0)
}

/// Runs `engine` at `depth` with `variant` under iolens (and fio, when it runs);
/// iolens' report.
fn run(engine: &str, depth: u32, variant: &str, tolerance: f64) -> Value {
    let dir = scratch();
    let iodepth = format!("--iodepth={depth}");
    let mut args = vec![
        "--output-format=json",
        "--name=d",
        "--filename=f",
        // one pass: fio drains the queue at the end of each
        "--size=8m",
        "--bs=4k",
        "--rw=randread",
        &iodepth,
    ];
    let ioengine = format!("--ioengine={engine}");
    args.push(&ioengine);
    if !variant.is_empty() {
        args.push(variant);
    }
    let case = format!("{engine} iodepth={depth} {variant}");
    let (doc, code) = iolens_json(dir.path(), &args);
    assert_eq!(code, 0, "{case}: expected iolens to succeed: {doc}");
    let Some(fio_doc) = fio(dir.path(), &args) else {
        return doc;
    };
    for map in MAPS {
        if tolerance >= TIMED_TOLERANCE && map == "iodepth_complete" {
            continue;
        }
        let mut buckets = shares(&doc, map);
        buckets.extend(shares(&fio_doc, map));
        for (bucket, _) in buckets {
            let (ours, theirs) = (share(&doc, map, &bucket), share(&fio_doc, map, &bucket));
            assert!(
                (ours - theirs).abs() <= tolerance,
                "{case}: {map} {bucket} is {ours} % under iolens, {theirs} % under fio \
                 (more than {tolerance} points apart)\niolens: {}\nfio: {}",
                doc["jobs"][0][map],
                fio_doc["jobs"][0][map]
            );
        }
    }
    doc
}

#[test]
fn async_engines_keep_the_queue_as_full_as_fio_does() {
    for engine in ["libaio", "io_uring"] {
        if let Some(why) = missing(engine) {
            eprintln!("skipping ioengine={engine}: {why}");
            continue;
        }
        for depth in [8, 32] {
            for (variant, tolerance) in VARIANTS {
                let doc = run(engine, depth, variant, tolerance);
                let full = share(&doc, "iodepth_level", &depth.to_string());
                match variant {
                    // one completion reaped, one I/O issued: the queue stays full
                    "" | "--iodepth_batch_submit=4" => assert!(
                        full > 95.0,
                        "{engine} iodepth={depth} {variant}: expected over 95 % of I/Os \
                         at depth {depth}, saw {full} %"
                    ),
                    // refilled from 4: 5..=depth, each once per cycle
                    "--iodepth_low=4" => {
                        let expected = 100.0 / f64::from(depth - 4);
                        assert!(
                            (full - expected).abs() < 2.0,
                            "{engine} iodepth={depth} {variant}: expected about {expected} % \
                             at depth {depth}, saw {full} %"
                        );
                    }
                    _ => {
                        // up to 8 a reap, but for the whole queue at the end
                        let over_8: f64 = ["16", "32", "64", ">=64"]
                            .iter()
                            .map(|bucket| share(&doc, "iodepth_complete", bucket))
                            .sum();
                        assert!(
                            over_8 < 1.0,
                            "{engine} iodepth={depth} {variant}: expected reaps of at most 8 \
                             (and one final), saw {}",
                            doc["jobs"][0]["iodepth_complete"]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_null_engine_holds_one_batch_as_fios_does() {
    // fio's null engine takes no I/O while a committed batch is unreaped
    for depth in [8, 32] {
        for (variant, tolerance) in VARIANTS {
            let doc = run("null", depth, variant, tolerance);
            let batch = if variant == "--iodepth_batch_submit=4" {
                "4"
            } else {
                "1"
            };
            assert_eq!(
                share(&doc, "iodepth_level", batch),
                100.0,
                "null iodepth={depth} {variant}: expected every I/O at depth {batch}, saw {}",
                doc["jobs"][0]["iodepth_level"]
            );
        }
    }
}

#[test]
fn posixaio_reaps_every_request_done_as_fios_does() {
    // fio's posixaio takes every request it finds done, beyond the batch's
    // maximum: how many there are is the C library's threads' timing. Deeper
    // than 8 it sleeps on the first 8 requests only, which iolens does not copy.
    for (variant, _) in VARIANTS {
        run("posixaio", 8, variant, TIMED_TOLERANCE);
    }
}
