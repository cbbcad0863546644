//! fio's other output formats and logs: json+, terse, --status-interval, I/O logs.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::path::Path;
use std::process::Command;

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

#[test]
fn fios_jsonplus_to_csv_script_reads_iolens_json_plus() {
    let script = "/usr/bin/fio_jsonplus_clat2csv";
    if !Path::new(script).exists() {
        eprintln!("skipped: {script} not installed (Debian package fio)");
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
        let status = Command::new(script)
            .arg(&source)
            .arg(&dest)
            .args(extra)
            .output()
            .expect("run the script");
        assert!(
            status.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
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
            assert!(fields[1].starts_with("iolens-"));
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
    // Windows of 100 ms, one line per direction, then the partial last window.
    assert_eq!(
        &times[..8],
        [100, 100, 200, 200, 300, 300, 400, 400],
        "{text}"
    );
    assert!(text.lines().all(|l| l.split(", ").count() == 5));
}
