//! Missed schedules (coordinated omission): a rate-limited job whose filesystem
//! is frozen (`fsfreeze` on a small loop-mounted ext4) cannot issue the I/Os due
//! meanwhile. iolens catches up afterwards as fio does, records the stall, counts
//! latency from each I/O's due time beside fio's, and says so in a finding; a
//! clean paced run stays silent. The freeze needs root; the outputs' test runs anywhere.

use crate::scenario_support::{have_tools, one_at_a_time, run, Ext4};
use crate::scenarios::{expect_no_warning, expect_warning, finding_text, run_report, strings};
use crate::support::{iolens, json, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::MutexGuard;
use std::time::Duration;

const MIB: u64 = 1 << 20;
const IOPS: u64 = 200;

/// A frozen filesystem, thawed on drop (also when a test fails).
struct Frozen(PathBuf);

impl Frozen {
    fn freeze(mount_point: &Path) -> Frozen {
        run("fsfreeze", &["-f", mount_point.to_str().unwrap()]);
        Frozen(mount_point.to_path_buf())
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        run("fsfreeze", &["-u", self.0.to_str().unwrap()]);
    }
}

/// `rate_iops=200` QD1 psync direct writes for `seconds` on `file`.
fn paced_writes(file: &Path, seconds: u32) -> Vec<String> {
    strings(&[
        "--name=paced",
        &format!("--filename={}", file.display()),
        "--size=16m",
        "--rw=write",
        "--bs=4k",
        "--direct=1",
        "--ioengine=psync",
        &format!("--rate_iops={IOPS}"),
        &format!("--runtime={seconds}"),
        "--time_based",
    ])
}

/// A 16 MiB file on a fresh ext4, the scenarios' lock held (the file system is
/// unmounted, then the lock released, on drop); None, skipped, without root
/// or the tools.
fn paced_file() -> Option<(Ext4, PathBuf, MutexGuard<'static, ()>)> {
    if !have_tools(&["fsfreeze"]) {
        return None;
    }
    let alone = one_at_a_time();
    let fs = Ext4::create(64 * MIB)?;
    let file = fs.preallocated_file("paced", 16 * MIB);
    Some((fs, file, alone))
}

/// The write direction's p99 of `summary` (a LatSummary of the native report), ns.
fn p99(summary: &Value) -> u64 {
    let percentiles = summary["percentiles"].as_array().unwrap();
    let p99 = percentiles.iter().find(|p| p[0] == 99.0).unwrap();
    p99[1].as_u64().unwrap()
}

#[test]
fn a_frozen_filesystem_stalls_a_paced_job_and_the_finding_shows_what_the_percentiles_hide() {
    let Some((_fs, file, _alone)) = paced_file() else {
        return;
    };
    let mount_point = file.parent().unwrap().to_path_buf();
    let report = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(1_000));
            let _frozen = Frozen::freeze(&mount_point);
            std::thread::sleep(Duration::from_millis(1_500));
        });
        run_report(&paced_writes(&file, 5))
    });
    let job = &report["jobs"][0];
    let schedule = &job["schedule"];
    // nothing could be issued while the filesystem was frozen
    let stall = &schedule["stalls"][0];
    let stall_ns = stall["len_ns"].as_u64().unwrap();
    assert!(stall_ns >= 1_300_000_000, "{schedule:#}");
    assert!(stall["missed_ios"].as_u64().unwrap() >= 260, "{schedule:#}");
    // over time: a second in which most of the stall's I/Os were due and not issued
    let behind = schedule["behind_per_second"].as_array().unwrap();
    let most = behind.iter().filter_map(Value::as_u64).max().unwrap();
    assert!(most >= 200, "{schedule:#}");
    // as fio, the missed I/Os went out afterwards: the totals are the rate's
    let writes = job["dirs"][1]["total_ios"].as_u64().unwrap();
    assert!((900..=5 * IOPS + 10).contains(&writes), "{writes} writes");
    assert_eq!(schedule["end_behind_ios"], 0, "{schedule:#}");
    // counted from when they were due, the waits show; fio's percentiles miss them
    let corrected = p99(&schedule["corrected"][1]);
    let usual = p99(&job["dirs"][1]["clat"]);
    assert!(corrected >= 1_000_000_000, "{schedule:#}");
    assert!(
        usual < corrected,
        "usual p99 {usual}, corrected {corrected}"
    );
    let finding = finding_text(expect_warning(&report, "missed-schedule"));
    assert!(
        finding.contains("nothing could be issued for 1."),
        "{finding}"
    );
    assert!(
        finding.contains("counted from when it was due"),
        "{finding}"
    );
}

#[test]
fn a_paced_job_on_a_filesystem_left_alone_has_no_missed_schedule() {
    let Some((_fs, file, _alone)) = paced_file() else {
        return;
    };
    let report = run_report(&paced_writes(&file, 3));
    expect_no_warning(&report, "missed-schedule");
    let schedule = &report["jobs"][0]["schedule"];
    assert!(schedule["ios"].as_u64().unwrap() > 0, "{schedule:#}");
}

#[test]
fn a_paced_job_reports_its_schedule_in_text_and_fio_json_and_an_unpaced_one_does_not() {
    let dir = scratch();
    let file = dir.path().join("paced");
    let run_as = |format: &str, paced: bool| {
        let mut args = strings(&["run", &format!("--output-format={format}")]);
        args.extend(paced_writes(&file, 1));
        args.retain(|arg| paced || !arg.starts_with("--rate_iops"));
        args.retain(|arg| arg != "--direct=1");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        iolens(&args)
    };
    let text = String::from_utf8(run_as("normal", true).stdout).unwrap();
    assert!(text.contains("     schedule  : ios="), "{text}");
    assert!(text.contains(" due lat percentiles ("), "{text}");
    let fio = json(&run_as("json", true));
    assert_eq!(
        fio["iolens"]["schedules"][0]["jobname"], "paced",
        "{:#}",
        fio["iolens"]
    );
    assert!(fio["jobs"][0].get("schedule").is_none());
    let unpaced_text = String::from_utf8(run_as("normal", false).stdout).unwrap();
    assert!(!unpaced_text.contains("schedule  :"), "{unpaced_text}");
    let unpaced = json(&run_as("json", false));
    assert!(
        unpaced["iolens"].get("schedules").is_none(),
        "{:#}",
        unpaced["iolens"]
    );
}

#[test]
fn a_paced_job_on_a_queued_engine_counts_its_ios_from_their_due_times_too() {
    let dir = scratch();
    let mut args = paced_writes(&dir.path().join("queued"), 1);
    args.retain(|arg| arg != "--direct=1" && arg != "--ioengine=psync");
    args.extend(strings(&["--ioengine=libaio", "--iodepth=4"]));
    let report = run_report(&args);
    let job = &report["jobs"][0];
    let writes = job["dirs"][1]["total_ios"].as_u64().unwrap();
    let corrected = job["schedule"]["corrected"][1]["samples"].as_u64();
    // every write reaped, but one the job's end may have let out before its due time
    assert!(
        corrected.is_some_and(|n| n + 1 >= writes && n <= writes && n > 0),
        "{writes} writes, {corrected:?} counted from their due times: {:#}",
        job["schedule"]
    );
}
