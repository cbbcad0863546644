//! Per-interval bandwidth and IOPS samples of real runs, read back in every
//! format that shows them: each must be a rate over a (nearly) full interval,
//! so min <= mean <= max and no sample can have moved more than the whole job.

use crate::support::{iolens, json, scratch, stderr, stdout};
use serde_json::Value;
use std::path::Path;

/// fio's default bw_avg_time/iops_avg_time less its millisecond of slack: no
/// interval that is a sample lasted less.
const SHORTEST_INTERVAL_S: f64 = 0.499;

/// One direction's samples as a report states them, in bytes/s and IO/s.
#[derive(Debug, Clone, Copy)]
struct Samples {
    bw: [f64; 3],
    iops: [f64; 3],
}

/// One direction that has samples: its totals and its samples.
#[derive(Debug)]
struct Dir {
    job: String,
    io_bytes: f64,
    total_ios: f64,
    samples: Samples,
}

/// Fails unless `samples` of `dir` as `format` states them have min <= mean <=
/// max (`*_slack` absorbs the format's rounding) and the largest fits in the job's totals.
fn check(format: &str, dir: &Dir, samples: Samples, bytes_slack: f64, ios_slack: f64) {
    let Samples { bw, iops } = samples;
    for (what, [min, mean, max], slack, total) in [
        ("bw", bw, bytes_slack, dir.io_bytes),
        ("iops", iops, ios_slack, dir.total_ios),
    ] {
        assert!(
            min <= mean + slack && mean <= max + slack,
            "{format}: job '{}' {what}: expected min <= mean <= max, saw min={min} mean={mean} max={max}",
            dir.job
        );
        assert!(
            (max - slack) * SHORTEST_INTERVAL_S <= total,
            "{format}: job '{}' {what}: expected no sample above {total} moved in {SHORTEST_INTERVAL_S} s, saw max={max} /s",
            dir.job
        );
    }
}

/// `iolens show ID --output-format=FORMAT` of the run stored in `db`.
fn show(db: &Path, id: &str, format: &str) -> std::process::Output {
    let db = format!("--db={}", db.display());
    let out = iolens(&["show", &db, id, &format!("--output-format={format}")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected `show {id}` to succeed, saw: {}",
        stderr(&out)
    );
    out
}

/// The native report's directions that have samples.
fn native_dirs(report: &Value) -> Vec<Dir> {
    let mut dirs = Vec::new();
    for job in report["jobs"].as_array().unwrap() {
        for dir in job["dirs"].as_array().unwrap() {
            let (bw, iops) = (&dir["bw_samples"], &dir["iops_samples"]);
            if bw["samples"].as_u64().unwrap() == 0 {
                continue;
            }
            let three = |s: &Value| ["min", "mean", "max"].map(|k| s[k].as_f64().unwrap());
            dirs.push(Dir {
                job: job["name"].as_str().unwrap().to_string(),
                io_bytes: dir["io_bytes"].as_f64().unwrap(),
                total_ios: dir["total_ios"].as_f64().unwrap(),
                samples: Samples {
                    bw: three(bw),
                    iops: three(iops),
                },
            });
        }
    }
    dirs
}

/// fio's JSON: bw_* in KiB/s, whole numbers for min and max.
fn fio_json_dirs(report: &Value) -> Vec<Dir> {
    let mut dirs = Vec::new();
    for job in report["jobs"].as_array().unwrap() {
        for name in ["read", "write", "trim"] {
            let dir = &job[name];
            if dir["bw_samples"].as_u64().unwrap_or(0) == 0 {
                continue;
            }
            let three = |prefix: &str| {
                ["min", "mean", "max"].map(|k| dir[format!("{prefix}_{k}")].as_f64().unwrap())
            };
            dirs.push(Dir {
                job: job["jobname"].as_str().unwrap().to_string(),
                io_bytes: dir["io_bytes"].as_f64().unwrap(),
                total_ios: dir["total_ios"].as_f64().unwrap(),
                samples: Samples {
                    bw: three("bw").map(|kib| kib * 1024.0),
                    iops: three("iops"),
                },
            });
        }
    }
    dirs
}

/// `min=`, `avg=` and `max=` of a normal-output line, as [min, mean, max].
fn stat_fields(line: &str) -> [f64; 3] {
    let field = |key: &str| {
        let start = line.find(&format!("{key}=")).unwrap() + key.len() + 1;
        let value: String = line[start..]
            .chars()
            .skip_while(|c| *c == ' ')
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        value
            .parse::<f64>()
            .unwrap_or_else(|e| panic!("{key} in {line:?}: {e}"))
    };
    [field("min"), field("avg"), field("max")]
}

/// The normal output's `bw (…)` and `iops :` lines, in order, in bytes/s and IO/s.
fn normal_samples(text: &str) -> Vec<Samples> {
    let mut bw_lines = Vec::new();
    let mut iops_lines = Vec::new();
    for line in text.lines().map(str::trim_start) {
        if let Some(rest) = line.strip_prefix("bw (") {
            let unit = rest.split(')').next().unwrap().trim();
            let scale = match unit {
                "B/s" => 1.0,
                "KiB/s" => 1024.0,
                "MiB/s" => 1024.0 * 1024.0,
                "GiB/s" => 1024.0 * 1024.0 * 1024.0,
                other => panic!("expected a bandwidth unit, saw {other:?} in {line:?}"),
            };
            bw_lines.push(stat_fields(line).map(|v| v * scale));
        } else if line.starts_with("iops ") && line.contains("min=") {
            iops_lines.push(stat_fields(line));
        }
    }
    assert_eq!(
        bw_lines.len(),
        iops_lines.len(),
        "expected one iops line per bw line in\n{text}"
    );
    bw_lines
        .into_iter()
        .zip(iops_lines)
        .map(|(bw, iops)| Samples { bw, iops })
        .collect()
}

/// Every format `show` prints of stored run `id` holds only plausible samples.
fn check_every_format(db: &Path, id: &str) -> usize {
    let native = native_dirs(&json(&show(db, id, "iolens-json")));
    assert!(
        !native.is_empty(),
        "expected rate samples in the native report of run {id}"
    );
    for dir in &native {
        check("iolens-json", dir, dir.samples, 1e-6, 1e-6);
    }
    let fio = fio_json_dirs(&json(&show(db, id, "json")));
    assert_eq!(
        fio.len(),
        native.len(),
        "expected the same directions with samples in json as in iolens-json"
    );
    for dir in &fio {
        check("json", dir, dir.samples, 1024.0, 1.0);
    }
    let text = stdout(&show(db, id, "normal"));
    let normal = normal_samples(&text);
    assert_eq!(
        normal.len(),
        native.len(),
        "expected a bw line per direction with samples in\n{text}"
    );
    for (samples, dir) in normal.into_iter().zip(&native) {
        // min and max print as whole numbers in the line's unit (up to GiB/s).
        check("normal", dir, samples, 1024.0 * 1024.0 * 1024.0, 1.0);
    }
    native.len()
}

/// Runs whose runtime is a whole number of sampling intervals end just after a
/// sample, with a queue of I/Os still to complete: the partial last interval
/// used to turn that burst into a rate of tens of GiB/s.
#[test]
fn queued_runs_that_end_on_an_interval_boundary_have_plausible_samples() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let out = iolens(&[
        "run",
        &format!("--db={}", db.display()),
        "--name=q",
        &format!("--filename={}", dir.path().join("f").display()),
        "--size=16m",
        "--bs=128k",
        "--rw=read",
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=16",
        "--time_based",
        "--runtime=1",
        "--numjobs=3",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dirs = check_every_format(&db, "1");
    assert_eq!(dirs, 3, "expected one read direction per worker job");
}

#[test]
fn the_quick_suite_shows_plausible_samples() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let target = dir.path().display().to_string();
    let db_flag = format!("--db={}", db.display());
    let out = iolens(&[
        "quick",
        &target,
        &db_flag,
        "--duration=1",
        "--ramp=100ms",
        "--size=16m",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dirs = check_every_format(&db, "1");
    assert_eq!(dirs, 8, "expected one direction per quick test");
}
