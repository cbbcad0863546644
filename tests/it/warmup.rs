//! Warm-up and runs that end too soon, on the real kernel: a change inside
//! `ramp_time` is not the job's (no `unstable-throughput`, no ramp bytes in
//! `served-from-cache` nor in the ledger), `quick` records where each test's
//! ramp ended, and a rate still rising when the run ends is named
//! (`still-moving`) while a steady one is not. The rates are set by replaying
//! timed I/O logs of buffered reads of a cached file, so they do not depend on
//! the machine. A write job's first pass over fresh space (`first-pass-allocates`)
//! runs on the FUSE file of `fault_fs.rs` playing storage whose first write to a
//! range is slow, so the two speeds are the test's, not the machine's.

use crate::fault_fs::FaultFs;
use crate::scenarios::{expect_no_warning, expect_warning, finding_text, run_report, strings};
use crate::support::{iolens, json, scratch};
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file the logs read, cycled 4 KiB at a time.
const FILE_BYTES: u64 = 16 << 20;

/// A version 3 I/O log in `dir` of 4 KiB reads of `dir/data` (written here),
/// `iops(t)` a second at `t` seconds, for `seconds`.
pub(crate) fn paced_log(dir: &Path, seconds: f64, iops: impl Fn(f64) -> f64) -> PathBuf {
    let data = dir.join("data");
    std::fs::write(&data, vec![7u8; FILE_BYTES as usize]).expect("write the data file");
    let file = data.display();
    let mut log = format!("fio version 3 iolog\n0 {file} add\n0 {file} open\n");
    let (mut owed, mut offset) = (0.0, 0);
    for ms in 0..(seconds * 1000.0) as u64 {
        owed += iops(ms as f64 / 1000.0) / 1000.0;
        while owed >= 1.0 {
            owed -= 1.0;
            let _ = writeln!(log, "{} {file} read {offset} 4096", ms * 1000);
            offset = (offset + 4096) % FILE_BYTES;
        }
    }
    let _ = writeln!(log, "{} {file} close", (seconds * 1e6) as u64);
    let path = dir.join("paced.log");
    std::fs::write(&path, log).expect("write the log");
    path
}

/// The report of the replay of `log`, with `extra` options.
pub(crate) fn replay(log: &Path, extra: &[&str]) -> Value {
    let mut args = strings(&["--name=paced", &format!("--read_iolog={}", log.display())]);
    args.extend(strings(extra));
    run_report(&args)
}

/// The job's ramp end, in seconds since the run started.
fn ramp_end_s(report: &Value, job: usize) -> f64 {
    let series = &report["observations"]["jobs"][job];
    series["measured_from_ns"]
        .as_f64()
        .unwrap_or_else(|| panic!("no ramp end recorded: {series:#}"))
        / 1e9
}

#[test]
fn a_warm_up_inside_the_ramp_is_no_change_of_speed() {
    let dir = scratch();
    // 3000 IOPS for 1.5 s, then 800 until the log ends at 5 s.
    let log = paced_log(dir.path(), 5.0, |t| if t < 1.5 { 3000.0 } else { 800.0 });
    let without_ramp = replay(&log, &[]);
    let change = expect_warning(&without_ramp, "unstable-throughput");
    assert!(
        finding_text(change).contains("changed speed at t=1."),
        "expected the change at 1.5 s seen without a ramp: {change:#}"
    );

    let ramped = replay(&log, &["--ramp_time=2"]);
    expect_no_warning(&ramped, "unstable-throughput");
    expect_no_warning(&ramped, "still-moving");
    let ramp_end = ramp_end_s(&ramped, 0);
    assert!(
        (2.0..3.0).contains(&ramp_end),
        "expected the ramp to end 2 s after the job started, saw {ramp_end} s"
    );
}

/// "25.9 GiB" → bytes (to the precision printed).
fn bytes_said(text: &str) -> f64 {
    let (number, unit) = text.split_once(' ').expect("a number and a unit");
    let scale = match unit {
        "KiB" => 1u64 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => panic!("unit {other:?}"),
    };
    number.parse::<f64>().expect("a number") * scale as f64
}

#[test]
fn served_from_cache_counts_the_measured_reads_only() {
    let dir = scratch();
    let file = dir.path().join("f");
    // A 16 MiB file read over and over: after the first pass, from the cache
    // (invalidate=0: by default each time_based wrap drops it, as fio's does).
    let report = run_report(&strings(&[
        "--name=warm",
        "--rw=read",
        "--bs=64k",
        "--size=16m",
        &format!("--filename={}", file.display()),
        "--ramp_time=1",
        "--runtime=2",
        "--time_based",
        "--invalidate=0",
    ]));
    let finding = expect_warning(&report, "served-from-cache");
    let line = finding["evidence"][0].as_str().unwrap();
    let read = line
        .strip_prefix("the job read ")
        .and_then(|rest| rest.split(" while").next())
        .unwrap_or_else(|| panic!("unexpected evidence: {line}"));
    let measured = report["jobs"][0]["dirs"][0]["io_bytes"].as_f64().unwrap();
    // The ramp is a third of the job's time: its reads would add half again.
    assert!(
        bytes_said(read) <= measured * 1.01 && bytes_said(read) >= measured * 0.5,
        "expected the finding to count the measured {measured} bytes, not the ramp's: {line}"
    );
    let ledger = &report["observations"]["ledger"][0];
    let in_ledger = ledger["job_read_bytes"].as_f64().unwrap();
    assert!(
        in_ledger <= measured * 1.01 && in_ledger >= measured * 0.5,
        "expected the ledger's window to leave the ramp out too: {ledger:#}"
    );
}

#[test]
fn quick_records_where_each_tests_ramp_ended() {
    let dir = scratch();
    let target = dir.path().display().to_string();
    let out = iolens(&[
        "quick",
        &target,
        "--duration=1",
        "--ramp=1",
        "--size=16m",
        "--json",
        "--no-history",
    ]);
    let report = json(&out);
    let obs = &report["observations"];
    let t = |i: usize| obs["t_ns"][i].as_f64().unwrap() / 1e9;
    let jobs = obs["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8, "{:#}", obs["jobs"]);
    for (j, series) in jobs.iter().enumerate() {
        let busy = series["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .position(|i| i["ios"][0].as_u64().unwrap() + i["ios"][1].as_u64().unwrap() > 0)
            .expect("the test did I/O");
        // Interval `busy` ran from sample busy - 1: the first I/O came then or later.
        let first_io = t(busy.saturating_sub(1));
        let ramp_end = ramp_end_s(&report, j);
        assert!(
            ramp_end >= first_io + 0.9 && ramp_end <= t(busy) + 1.1,
            "{}: expected the ramp to end 1 s after its first I/O (between {first_io} and {} s), saw {ramp_end} s",
            series["name"],
            t(busy)
        );
    }
}

#[test]
fn a_rate_still_rising_when_the_run_ends_is_named() {
    let dir = scratch();
    // From 400 IOPS up by 600 a second, to 3400 at 5 s.
    let log = paced_log(dir.path(), 5.0, |t| 400.0 + 600.0 * t);
    let report = replay(&log, &[]);
    let finding = expect_warning(&report, "still-moving");
    let text = finding_text(finding);
    assert!(
        text.contains("still speeding up when the run ended"),
        "{text}"
    );
    let began = finding["at_ns"].as_f64().unwrap() / 1e9;
    assert!(
        began < 1.5,
        "expected the rise dated from the start, saw {began} s: {text}"
    );
    // A rise is no change between two levels.
    expect_no_warning(&report, "unstable-throughput");

    // The same log at a steady 1500 IOPS.
    let steady = replay(&paced_log(dir.path(), 5.0, |_| 1500.0), &[]);
    expect_no_warning(&steady, "still-moving");
}

/// What a first write to a range of the FUSE file costs: 4 KiB writes one at a
/// time then go at most 250 a second, overwrites many times that.
const FIRST_WRITE: Duration = Duration::from_millis(4);

/// A FUSE file of `size` bytes that allocates on the first write, all of it fresh.
fn fresh_file(size: u64) -> Option<FaultFs> {
    let fs = FaultFs::mount("thin", size)?;
    fs.allocate_on_first_write(FIRST_WRITE);
    Some(fs)
}

/// The report of 4 KiB sequential writes over all of `fs`'s file for `seconds`.
fn write_for(fs: &FaultFs, size: &str, seconds: u32) -> Value {
    run_report(&strings(&[
        "--name=fill",
        "--rw=write",
        "--bs=4k",
        &format!("--size={size}"),
        &format!("--filename={}", fs.file().display()),
        &format!("--runtime={seconds}"),
        "--time_based",
    ]))
}

/// (severity, text) of the run's first-pass-allocates findings.
fn first_pass_findings(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "first-pass-allocates")
        .map(|f| (f["severity"].as_str().unwrap().to_string(), finding_text(f)))
        .collect()
}

#[test]
fn a_first_pass_over_fresh_space_is_named_where_the_speed_changes() {
    // 512 first writes take over 2 s; the overwrites after them are fast.
    let Some(fs) = fresh_file(2 << 20) else {
        return;
    };
    let report = write_for(&fs, "2m", 5);
    assert_eq!(report["observations"]["targets"][0]["sparse"], true);
    let finding = expect_warning(&report, "first-pass-allocates");
    let text = finding_text(finding);
    assert!(
        text.contains("sped up when its first pass over fresh space ended")
            && text.contains("the 2.0 MiB its targets span had all been written by"),
        "{text}"
    );
    // One event, one finding.
    expect_no_warning(&report, "unstable-throughput");
    expect_no_warning(&report, "still-moving");
}

#[test]
fn a_window_inside_the_first_pass_is_a_first_pass_number() {
    // 64 MiB would take over a minute of first writes: 3 s see only those.
    let Some(fs) = fresh_file(64 << 20) else {
        return;
    };
    let report = write_for(&fs, "64m", 3);
    let found = first_pass_findings(&report);
    assert!(
        found.len() == 1
            && found[0].0 == "info"
            && found[0]
                .1
                .contains("measured only its first pass over fresh space"),
        "{found:?}"
    );
}

#[test]
fn the_same_job_over_space_already_written_is_no_first_pass() {
    let Some(fs) = fresh_file(2 << 20) else {
        return;
    };
    fs.write_all_of_it();
    let report = write_for(&fs, "2m", 5);
    assert_eq!(report["observations"]["targets"][0]["sparse"], false);
    let found = first_pass_findings(&report);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_layout_job_before_it_with_stonewall_leaves_no_first_pass_to_measure() {
    // 64 writes of 1 MiB lay the file out in well under a second; the paced
    // job after it writes a tenth of the file in its 3 s, all overwrites.
    let Some(fs) = fresh_file(64 << 20) else {
        return;
    };
    let file = format!("--filename={}", fs.file().display());
    let report = run_report(&strings(&[
        "--rw=write",
        "--size=64m",
        &file,
        "--name=lay-out",
        "--bs=1m",
        "--name=measure",
        "--bs=4k",
        "--rate_iops=500",
        "--stonewall",
        "--runtime=3",
        "--time_based",
    ]));
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{:#}", report["jobs"]);
    let found = first_pass_findings(&report);
    assert!(found.is_empty(), "{found:?}");
}
