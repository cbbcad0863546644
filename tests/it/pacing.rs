//! Rate limits, syncs, ramp time and stopping: behaviour over real time on real files.

use crate::support::{iolens, json, scratch, stderr};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn file_arg(dir: &tempfile::TempDir, name: &str) -> String {
    format!("--filename={}", dir.path().join(name).display())
}

#[test]
fn rate_iops_limits_the_achieved_rate() {
    let dir = scratch();
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=r",
        &file_arg(&dir, "r"),
        "--size=4m",
        "--rw=randread",
        "--rate_iops=200",
        "--runtime=2",
        "--time_based",
    ]);
    let report = json(&out);
    let iops = report["jobs"][0]["read"]["iops"].as_f64().unwrap();
    // Loose bounds: shared machines stall, but an unpaced run would be >10k.
    assert!((150.0..=210.0).contains(&iops), "iops {iops}");
}

#[test]
fn fsync_every_n_writes_is_counted() {
    let dir = scratch();
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=w",
        &file_arg(&dir, "w"),
        "--size=1m",
        "--bs=4k",
        "--rw=write",
        "--fsync=32",
    ]);
    let report = json(&out);
    let sync = &report["jobs"][0]["sync"];
    // 256 writes, a sync after every 32nd.
    assert_eq!(sync["total_ios"], 8, "{sync}");
}

#[test]
fn fsync_on_close_is_not_counted_among_the_jobs_syncs_as_in_fio() {
    let dir = scratch();
    let out = iolens(&[
        "run",
        "--output-format=iolens-json",
        "--name=w",
        &file_arg(&dir, "w"),
        "--size=1m",
        "--bs=4k",
        "--rw=write",
        "--fsync_on_close=1",
    ]);
    let report = json(&out);
    let sync = &report["jobs"][0]["sync"];
    // The job's files stay open until it ends: one fsync, when they close, after the
    // job's I/O, so (as in fio) it is not counted among the job's syncs.
    assert_eq!(sync["total_ios"], 0, "no counted fsync expected: {sync}");
}

#[test]
fn ramp_time_is_not_measured() {
    let dir = scratch();
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=r",
        &file_arg(&dir, "r"),
        "--size=1m",
        "--rw=randread",
        "--ramp_time=1",
        "--runtime=1",
        "--time_based",
    ]);
    let report = json(&out);
    let runtime_ms = report["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    assert!(
        (900..1900).contains(&runtime_ms),
        "expected about 1000 ms measured of a 1 s run after a 1 s ramp (2000 would count the ramp), got {runtime_ms} ms"
    );
}

#[test]
fn the_report_can_go_to_a_file() {
    let dir = scratch();
    let report = dir.path().join("out.json");
    let out = iolens(&[
        "run",
        "--output-format=json",
        &format!("--output={}", report.display()),
        "--name=r",
        &file_arg(&dir, "r"),
        "--size=256k",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(&report).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 256 * 1024);
}

#[test]
fn ctrl_c_stops_the_run_and_reports_what_was_measured() {
    let dir = scratch();
    let child = crate::support::command()
        .args([
            "run",
            "--output-format=json",
            "--name=r",
            &file_arg(&dir, "r"),
            "--size=1m",
            "--rw=randread",
            "--runtime=60",
            "--time_based",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "did not stop promptly"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = &report["jobs"][0]["read"];
    assert!(read["total_ios"].as_u64().unwrap() > 0, "{read}");
    assert!(read["runtime"].as_u64().unwrap() < 30_000);
}
