//! fio's other output formats and logs: json+, terse, --status-interval, I/O logs.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::path::Path;

fn small_job(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        "--name=job1".to_string(),
        format!("--filename={}", dir.join("f").display()),
        "--size=1m".to_string(),
        "--rw=randrw".to_string(),
        "--bs=4k".to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    iolens(&args)
}

#[test]
fn json_plus_bins_sum_to_the_io_count() {
    let dir = scratch();
    let doc = json(&run(&small_job(
        dir.path(),
        &["--output-format=json+", "--lat_percentiles=1"],
    )));
    let job = &doc["jobs"][0];
    for ddir in ["read", "write"] {
        let total = job[ddir]["total_ios"].as_u64().unwrap();
        assert!(total > 0, "{ddir}: no I/O");
        for lat in ["clat_ns", "lat_ns"] {
            let bins = job[ddir][lat]["bins"].as_object().expect("bins");
            let sum: u64 = bins.values().map(|n| n.as_u64().unwrap()).sum();
            assert_eq!(sum, total, "{ddir} {lat}");
            assert!(bins.keys().all(|k| k.parse::<u64>().is_ok()));
        }
        assert!(job[ddir]["slat_ns"].get("bins").is_none());
    }
}

const CLAT2CSV: &str = "/usr/bin/fio_jsonplus_clat2csv";

/// Whether fio's json+ to CSV script is installed; prints why a test skips if not.
pub(crate) fn clat2csv_installed() -> bool {
    let installed = Path::new(CLAT2CSV).exists();
    if !installed {
        eprintln!("skipped: {CLAT2CSV} not installed (Debian package fio)");
    }
    installed
}

/// Runs fio's script on the json+ document `source` (CSVs named after `dest`),
/// failing the test if the script refuses it.
pub(crate) fn clat2csv(source: &Path, dest: &Path, extra: Option<&str>) {
    let out = crate::support::isolated(CLAT2CSV)
        .arg(source)
        .arg(dest)
        .args(extra)
        .output()
        .expect("run the script");
    assert!(
        out.status.success(),
        "expected {CLAT2CSV} {extra:?} to accept {}, it failed: {}",
        source.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fios_jsonplus_to_csv_script_reads_iolens_json_plus() {
    if !clat2csv_installed() {
        return;
    }
    let dir = scratch();
    let source = dir.path().join("plus.json");
    let out = run(&small_job(
        dir.path(),
        &[
            "--output-format=json+",
            &format!("--output={}", source.display()),
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let dest = dir.path().join("lat.csv");
    for extra in [None, Some("--validate")] {
        clat2csv(&source, &dest, extra);
    }
    let csv = std::fs::read_to_string(dir.path().join("lat_job0.csv")).unwrap();
    let mut lines = csv.lines();
    // The script's own header: nsec, then count/cumulative/percentile per direction and latency.
    let header: Vec<&str> = lines.next().unwrap().split(", ").collect();
    assert_eq!(header[0], "nsec");
    assert_eq!(
        header[4..7],
        [
            "read_clat_ns_count",
            "read_clat_ns_cumulative",
            "read_clat_ns_percentile"
        ]
    );
    assert_eq!(
        header.len(),
        1 + 3 * 3 * 3 + 1,
        "27 columns and the trailing separator"
    );
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.split(", ").count() == header.len()));
}

#[test]
fn terse_has_fios_version_3_fields() {
    let dir = scratch();
    let second = format!("--filename={}", dir.path().join("g").display());
    for flag in ["--minimal", "--output-format=terse"] {
        let out = run(&small_job(
            dir.path(),
            &[flag, "--name=job2", &second, "--size=1m", "--rw=read"],
        ));
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        for (fields, name) in lines.iter().zip(["job1", "job2"]) {
            // 121 job fields, then 9 per disk (none when the target's disk is unknown).
            assert!(
                fields.len() >= 121 && (fields.len() - 121) % 9 == 0,
                "{}",
                fields.len()
            );
            assert_eq!(fields[0], "3");
            assert!(fields[1].starts_with("fio-3.33-iolens-"));
            assert_eq!(fields[2], name);
            assert!(
                fields[17].contains("%="),
                "first clat percentile: {}",
                fields[17]
            );
            assert!(fields[87].ends_with('%'), "cpu user: {}", fields[87]);
        }
    }
}

#[test]
fn status_interval_prints_one_valid_json_document_per_line() {
    let dir = scratch();
    let out = run(&small_job(
        dir.path(),
        &[
            "--ioengine=null",
            "--time_based",
            "--runtime=1300ms",
            "--status-interval=300ms",
            "--output-format=json",
            "--eta=always",
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let interim: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| l.starts_with('{') && l.ends_with('}'))
        .map(|l| serde_json::from_str(l).expect("each interim line is a JSON document"))
        .collect();
    assert!(
        interim.len() >= 3,
        "{} interim reports:\n{text}",
        interim.len()
    );
    let ios: Vec<u64> = interim
        .iter()
        .map(|d| d["jobs"][0]["read"]["total_ios"].as_u64().unwrap())
        .collect();
    assert!(ios.is_sorted() && ios[ios.len() - 1] > 0, "{ios:?}");
}

#[test]
fn logs_have_fios_names_and_lines() {
    let dir = scratch();
    let prefix = dir.path().join("lg").display().to_string();
    let out = run(&small_job(
        dir.path(),
        &[
            &format!("--write_bw_log={prefix}"),
            &format!("--write_iops_log={prefix}"),
            &format!("--write_lat_log={prefix}"),
            &format!("--write_hist_log={prefix}"),
            "--log_hist_msec=5",
            "--log_offset=1",
            "--numjobs=2",
            "--thread",
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    for kind in ["bw", "iops", "clat", "lat", "slat", "clat_hist"] {
        for worker in [1, 2] {
            let path = format!("{prefix}_{kind}.{worker}.log");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            for line in text.lines() {
                let fields: Vec<u64> = line
                    .split(", ")
                    .map(|f| f.parse().unwrap_or_else(|_| panic!("{path}: {line}")))
                    .collect();
                match kind {
                    "clat_hist" => assert_eq!(fields.len(), 3 + 1856, "{path}"),
                    _ => {
                        assert_eq!(fields.len(), 6, "{path}: {line}");
                        assert!(fields[2] <= 1 && fields[3] == 4096, "{path}: {line}");
                        assert_eq!(fields[4] % 4096, 0, "offset: {line}");
                    }
                }
            }
            // psync has no submission latency: fio leaves that file empty too.
            if kind == "slat" {
                assert!(text.is_empty());
            } else if kind != "clat_hist" {
                // 1 MiB of 4k I/O per worker, one line each.
                assert_eq!(text.lines().count(), 256, "{path}");
            }
        }
    }
    let iops = std::fs::read_to_string(format!("{prefix}_iops.1.log")).unwrap();
    assert!(iops.lines().all(|l| l.split(", ").nth(1) == Some("1")));
}

#[test]
fn averaged_logs_without_per_job_numbers() {
    let dir = scratch();
    let prefix = dir.path().join("avg").display().to_string();
    let out = run(&small_job(
        dir.path(),
        &[
            &format!("--write_bw_log={prefix}"),
            "--log_avg_msec=100",
            "--per_job_logs=0",
            "--ioengine=null",
            "--time_based",
            "--runtime=450ms",
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(format!("{prefix}_bw.log")).unwrap();
    let times: Vec<u64> = text
        .lines()
        .map(|l| l.split(", ").next().unwrap().parse().unwrap())
        .collect();
    // Windows of 100 ms, one line per direction; no partial last window, as fio.
    assert_eq!(
        &times[..8],
        [100, 100, 200, 200, 300, 300, 400, 400],
        "{text}"
    );
    assert!(text.lines().all(|l| l.split(", ").count() == 5));
}

/// The lines of a log file, each as its numbers.
fn log_lines(path: &str) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|line| {
            line.split(", ")
                .map(|f| {
                    f.parse()
                        .unwrap_or_else(|_| panic!("{path}: not numbers: {line}"))
                })
                .collect()
        })
        .collect()
}

fn part_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".part"))
        .collect()
}

#[test]
fn per_io_logs_of_worker_processes_are_complete_after_a_timed_null_job() {
    // fio's t/ suite: a timed null-engine job logging every I/O. Each worker process
    // streams its lines to disk; the run ends in time with its report and its logs.
    let dir = scratch();
    let prefix = dir.path().join("n").display().to_string();
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=n",
        "--ioengine=null",
        "--size=1g",
        "--rw=randrw",
        "--bs=4k",
        "--numjobs=2",
        "--runtime=2",
        "--time_based",
        &format!("--write_lat_log={prefix}"),
        &format!("--write_bw_log={prefix}"),
        &format!("--write_iops_log={prefix}"),
    ]);
    let doc = json(&out);
    assert!(
        !stderr(&out).contains("watchdog"),
        "expected no worker named stuck, got: {}",
        stderr(&out)
    );
    let jobs = doc["jobs"].as_array().expect("a jobs array");
    assert_eq!(
        jobs.len(),
        2,
        "expected one entry per worker, got {}",
        jobs.len()
    );
    for (i, job) in jobs.iter().enumerate() {
        let worker = i + 1;
        let ios: Vec<u64> = ["read", "write"]
            .map(|d| job[d]["total_ios"].as_u64().expect("total_ios"))
            .to_vec();
        let runtime_ms = job["read"]["runtime"].as_u64().expect("runtime");
        assert!(
            ios[0] > 1000 && ios[1] > 1000,
            "expected both directions busy, got {ios:?}"
        );
        for kind in ["clat", "lat", "bw", "iops"] {
            let path = format!("{prefix}_{kind}.{worker}.log");
            let lines = log_lines(&path);
            for ddir in [0, 1] {
                let logged = lines.iter().filter(|l| l[2] == ddir).count() as u64;
                assert_eq!(
                    logged, ios[ddir as usize],
                    "{path}: expected one line per I/O of direction {ddir}, got {logged}"
                );
            }
            let bad = lines
                .iter()
                .find(|l| l.len() != 5 || l[3] != 4096 || l[4] != 0);
            assert_eq!(
                bad, None,
                "{path}: expected `time, value, ddir, 4096, 0` lines"
            );
            let last_ms = lines.last().map_or(0, |l| l[0]);
            assert!(
                last_ms <= runtime_ms,
                "{path}: expected no line after the runtime ({runtime_ms} ms), the last is at {last_ms} ms"
            );
        }
        let slat = log_lines(&format!("{prefix}_slat.{worker}.log"));
        assert!(
            slat.is_empty(),
            "the null engine has no submission latency, got {} lines",
            slat.len()
        );
    }
    assert_eq!(
        part_files(dir.path()),
        Vec::<String>::new(),
        "expected no part file left"
    );
}

/// The peak resident memory (VmHWM, KiB) of a running process, while it runs.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn per_io_logs_keep_the_memory_of_a_worker_bounded() {
    // A million logged I/Os: kept in memory until the end (56 bytes each, in a vector
    // that doubles) the worker's thread peaked near 90 MiB; streamed, it stays near 12.
    const BOUND_KIB: u64 = 48 * 1024;
    let dir = scratch();
    let prefix = dir.path().join("m").display().to_string();
    let mut child = crate::support::command()
        .args([
            "run",
            "--no-history",
            "--output-format=terse",
            "--name=m",
            "--ioengine=null",
            "--size=512m",
            "--bs=512",
            "--rw=read",
            "--thread",
            &format!("--write_lat_log={prefix}"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run iolens");
    let mut peak = 0;
    while child.try_wait().expect("wait for iolens").is_none() {
        peak = peak_rss_kib(child.id()).unwrap_or(peak).max(peak);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("iolens output");
    assert!(
        out.status.success(),
        "expected the run to pass: {}",
        stderr(&out)
    );
    let ios = 512 * 1024 * 2;
    let clat = log_lines(&format!("{prefix}_clat.1.log"));
    assert_eq!(clat.len(), ios, "expected one clat line per I/O");
    assert!(
        peak > 0,
        "expected to see the process's memory at least once"
    );
    assert!(
        peak < BOUND_KIB,
        "expected the peak memory of {ios} logged I/Os below {BOUND_KIB} KiB, saw {peak} KiB"
    );
}

#[test]
fn averaged_logs_hold_the_jobs_io() {
    // log_avg_msec: one line per direction per window; the windows' IOPS times their
    // length add up to the job's I/O (less the I/Os of the last window, which ends as
    // the runtime does: fio stops the job before it samples it, and logs 200..800).
    let dir = scratch();
    let prefix = dir.path().join("a").display().to_string();
    let doc = json(&iolens(&[
        "run",
        "--output-format=json",
        "--name=a",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--bs=4k",
        "--runtime=1",
        "--time_based",
        "--log_avg_msec=200",
        &format!("--write_iops_log={prefix}"),
    ]));
    let ios = doc["jobs"][0]["read"]["total_ios"]
        .as_u64()
        .expect("total_ios");
    let lines = log_lines(&format!("{prefix}_iops.1.log"));
    let reads: Vec<&Vec<u64>> = lines.iter().filter(|l| l[2] == 0).collect();
    assert_eq!(reads.len(), 4, "expected 4 windows of 200 ms in a 1 s job");
    let mut start = 0;
    let logged: u64 = reads
        .iter()
        .map(|l| {
            let (end, iops) = (l[0], l[1]);
            let n = iops * (end - start) / 1000;
            start = end;
            n
        })
        .sum();
    // Each window's rate is rounded down to whole IOPS and its end to a whole ms; the
    // windows hold the I/Os of the first 800 ms of the job (a shared machine may have
    // run it unevenly), never more than it did.
    let slack = ios / 50 + 6 * 1000;
    assert!(
        logged <= ios + slack && logged >= ios / 2,
        "expected the windows to hold most of the job's {ios} reads and no more, they hold {logged}"
    );
}
