//! The windows of fio's logs and the samples behind its JSON bandwidth and IOPS
//! figures, with fio 3.33 as the oracle: fio and iolens run the same command line,
//! each in its own scratch directory, and their logs and documents must follow
//! the same rules (stat.c's add_log_sample, finalize_logs, add_clat_sample's
//! histogram windows, __add_samples, add_bw_sample/add_iops_sample). Timing
//! makes a window more or less at the end, so counts may differ by one.

use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;
use serde_json::Value;
use std::path::Path;

/// The lines of a log, each as its numbers (a priority in hex as its value).
fn lines(path: &Path) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            line.split(", ")
                .map(|f| match f.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
                    None => f
                        .parse()
                        .unwrap_or_else(|_| panic!("{}: {line}", path.display())),
                })
                .collect()
        })
        .collect()
}

/// The times of the lines of direction `ddir` (the third field, or the second in
/// a histogram log).
fn times(lines: &[Vec<u64>], ddir: u64, ddir_field: usize) -> Vec<u64> {
    lines
        .iter()
        .filter(|l| l[ddir_field] == ddir)
        .map(|l| l[0])
        .collect()
}

/// fio's document and iolens' for `args`, each run in its own directory; None without fio.
fn both(args: &[&str]) -> Option<([tempfile::TempDir; 2], [Value; 2])> {
    let (fio_dir, iolens_dir) = (scratch(), scratch());
    let fio_doc = fio(fio_dir.path(), args)?;
    let (iolens_doc, code) = iolens_json(iolens_dir.path(), args);
    assert_eq!(code, 0, "expected iolens {args:?} to succeed");
    Some(([fio_dir, iolens_dir], [fio_doc, iolens_doc]))
}

const TIMED_NULL_JOB: [&str; 8] = [
    "--output-format=json",
    "--name=j",
    "--ioengine=null",
    "--size=1g",
    "--rw=randrw",
    "--bs=4k",
    "--time_based",
    "--runtime=2",
];

/// How late an I/O may complete on a machine busy with other work.
const LATE_MS: u64 = 50;

#[test]
fn averaged_logs_end_without_a_partial_window_as_fio() {
    let mut args = TIMED_NULL_JOB.to_vec();
    args.extend([
        "--log_avg_msec=500",
        "--write_bw_log=a",
        "--write_iops_log=a",
        "--write_lat_log=a",
        "--log_offset=1",
        "--log_prio=1",
    ]);
    let Some((dirs, _)) = both(&args) else {
        return;
    };
    for kind in ["bw", "iops", "clat", "lat"] {
        let [fio_lines, iolens_lines] = dirs
            .each_ref()
            .map(|d| lines(&d.path().join(format!("a_{kind}.1.log"))));
        for ddir in [0, 1] {
            let [fio_times, iolens_times] = [&fio_lines, &iolens_lines].map(|l| times(l, ddir, 2));
            for (who, t) in [("fio", &fio_times), ("iolens", &iolens_times)] {
                assert!(
                    t.windows(2).all(|w| w[0] < w[1]),
                    "{who} a_{kind}: expected the times of direction {ddir} strictly increasing (no partial window at a repeated time), saw {t:?}"
                );
                assert!(
                    t.last().is_some_and(|&last| last <= 2000 + LATE_MS),
                    "{who} a_{kind}: expected no line after the 2 s runtime (and its last I/O), saw {t:?}"
                );
            }
            // The job's rate is sampled at each window's end; per-I/O values close
            // their window at the I/O that reaches its end, later on a busy machine.
            let late = if matches!(kind, "bw" | "iops") {
                0
            } else {
                LATE_MS
            };
            for (i, &t) in iolens_times.iter().enumerate() {
                let end = 500 * (i as u64 + 1);
                assert!(
                    (end..=end + late).contains(&t),
                    "iolens a_{kind}: expected line {i} of direction {ddir} at {end} ms (+{late}), saw {iolens_times:?}"
                );
            }
            assert!(
                fio_times.len().abs_diff(iolens_times.len()) <= 1,
                "a_{kind}: expected as many windows of direction {ddir} as fio, give or take the last: fio {fio_times:?}, iolens {iolens_times:?}"
            );
        }
        // time, value, ddir, bs 0, offset 0, priority 0: a window has none of them.
        for (who, l) in [("fio", &fio_lines), ("iolens", &iolens_lines)] {
            let odd = l
                .iter()
                .find(|l| l.len() != 6 || l[3] != 0 || l[4] != 0 || l[5] != 0);
            assert_eq!(odd, None, "{who} a_{kind}: expected windowed lines");
        }
    }
}

#[test]
fn histogram_windows_are_stamped_when_an_io_fills_them_as_fio() {
    let mut args = TIMED_NULL_JOB.to_vec();
    args.extend(["--log_hist_msec=500", "--write_hist_log=h"]);
    let Some((dirs, _)) = both(&args) else {
        return;
    };
    let [fio_lines, iolens_lines] = dirs
        .each_ref()
        .map(|d| lines(&d.path().join("h_clat_hist.1.log")));
    for ddir in [0, 1] {
        let [fio_times, iolens_times] = [&fio_lines, &iolens_lines].map(|l| times(l, ddir, 1));
        // The first window starts at the first I/O after the first ms (1 ms on the
        // null engine), so fio's lines are at 501, 1001, 1501, and at 2001 only when
        // an I/O was that late; no partial window at the run's end.
        for (who, t) in [("fio", &fio_times), ("iolens", &iolens_times)] {
            assert!(
                (3..=4).contains(&t.len()),
                "{who}: expected 3 windows (4 with a late last I/O), saw {t:?}"
            );
            for (i, &t) in t.iter().enumerate() {
                let end = 500 * (i as u64 + 1);
                assert!(
                    (end + 1..=end + LATE_MS).contains(&t),
                    "{who}: expected window {i} of direction {ddir} stamped just after {end} ms, saw {t}"
                );
            }
        }
    }
    let odd = iolens_lines
        .iter()
        .find(|l| l.len() != 3 + 1856 || l[2] != 4096 || l[3..].iter().sum::<u64>() == 0);
    assert_eq!(
        odd.map(|l| &l[..3]),
        None,
        "expected `time, ddir, 4096` and the window's I/Os over 1856 buckets"
    );
}

#[test]
fn elapsed_is_the_whole_runs_for_every_job_as_fio() {
    let args = [
        "--output-format=json",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--bs=4k",
        "--time_based",
        "--name=a",
        "--runtime=1",
        "--name=b",
        "--stonewall",
        "--runtime=2",
    ];
    let Some((_dirs, docs)) = both(&args) else {
        return;
    };
    let [fio_elapsed, iolens_elapsed] = docs.each_ref().map(|doc| {
        doc["jobs"]
            .as_array()
            .expect("a jobs array")
            .iter()
            .map(|job| job["elapsed"].as_u64().expect("elapsed"))
            .collect::<Vec<u64>>()
    });
    assert_eq!(fio_elapsed.len(), 2);
    assert!(
        fio_elapsed[0] == fio_elapsed[1] && fio_elapsed[0] >= 3,
        "expected fio's run time (3 s and setup, rounded up) for both jobs, saw {fio_elapsed:?}"
    );
    assert!(
        iolens_elapsed[0] == iolens_elapsed[1] && iolens_elapsed[0].abs_diff(fio_elapsed[0]) <= 1,
        "expected iolens' elapsed the run's for both jobs, as fio's {fio_elapsed:?}, saw {iolens_elapsed:?}"
    );
}

/// [read, write] of `key` in one job's entry.
fn per_dir(doc: &Value, key: &str) -> [u64; 2] {
    ["read", "write"].map(|d| doc["jobs"][0][d][key].as_u64().expect(key))
}

#[test]
fn per_io_logs_make_every_io_a_bandwidth_and_iops_sample_as_fio() {
    let args = [
        "--output-format=json",
        "--name=j",
        "--ioengine=null",
        "--size=4m",
        "--rw=randrw",
        "--bs=4k",
        "--write_bw_log=a",
        "--write_iops_log=a",
    ];
    let Some((_dirs, docs)) = both(&args) else {
        return;
    };
    for (who, doc) in ["fio", "iolens"].into_iter().zip(&docs) {
        let ios = per_dir(doc, "total_ios");
        assert_eq!(
            ios.iter().sum::<u64>(),
            1024,
            "{who}: expected 4 MiB of 4k I/O"
        );
        assert_eq!(
            (per_dir(doc, "bw_samples"), per_dir(doc, "iops_samples")),
            (ios, ios),
            "{who}: expected one bandwidth and one IOPS sample per I/O"
        );
        assert_eq!(
            (per_dir(doc, "iops_min"), per_dir(doc, "iops_max")),
            ([1, 1], [1, 1]),
            "{who}: expected each I/O an IOPS sample of 1"
        );
        let [min, max] = ["bw_min", "bw_max"].map(|k| per_dir(doc, k));
        assert!(
            min[0] <= max[0] && max[0] > 0,
            "{who}: expected per-I/O bandwidths (bytes per ms of each I/O), saw min {min:?} max {max:?}"
        );
    }
    // Only the bandwidth log: IOPS keep their 500 ms samples, none in a run this short.
    let args = &args[..args.len() - 1];
    let Some((_dirs, docs)) = both(args) else {
        return;
    };
    for (who, doc) in ["fio", "iolens"].into_iter().zip(&docs) {
        assert_eq!(
            (per_dir(doc, "bw_samples"), per_dir(doc, "iops_samples")),
            (per_dir(doc, "total_ios"), [0, 0]),
            "{who}: expected per-I/O bandwidth samples and no IOPS sample"
        );
    }
}

#[test]
fn an_averaged_bandwidth_log_sets_the_sample_interval_as_fio() {
    let mut args = TIMED_NULL_JOB.to_vec();
    args.extend(["--log_avg_msec=1000", "--write_bw_log=a"]);
    let Some((dirs, docs)) = both(&args) else {
        return;
    };
    for (who, (dir, doc)) in ["fio", "iolens"].into_iter().zip(dirs.iter().zip(&docs)) {
        let log = lines(&dir.path().join("a_bw.1.log"));
        let logged = [0, 1].map(|d| times(&log, d, 2).len() as u64);
        assert_eq!(
            per_dir(doc, "bw_samples"),
            logged,
            "{who}: expected a bandwidth sample per line of the 1000 ms log"
        );
        assert!(
            (1..=2).contains(&logged[0]),
            "{who}: expected one or two 1000 ms windows in 2 s, saw {logged:?}"
        );
        let iops = per_dir(doc, "iops_samples");
        assert!(
            iops.iter().all(|&n| (3..=4).contains(&n)),
            "{who}: expected IOPS still sampled every 500 ms, saw {iops:?}"
        );
    }
}
