//! The container scenarios of issue 12 on real cgroups: a run inside a child
//! group with a memory limit, an io (blkio) throttle or a CPU quota gets the
//! finding that names that limit, and the same run without the limit does
//! not. Root, cgroups and loop devices over /dev/shm; skipped with a printed
//! reason otherwise.

use crate::cgroup_support::ChildCgroup;
use crate::scenario_support::{one_at_a_time, write_throttle, Ext4};
use crate::scenarios::{expect_no_warning, expect_warning, finding_text, seed004_writer, strings};
use crate::support::{json, LoopDevice};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// A child group with `controllers`, or None with the reason printed.
pub(crate) fn child(controllers: &[&str], name: &str) -> Option<ChildCgroup> {
    ChildCgroup::new(controllers, name)
        .map_err(|reason| eprintln!("skipped: {reason}"))
        .ok()
}

/// `iolens run … --output-format=iolens-json` inside `group` → the native report.
fn run_in(group: &ChildCgroup, args: &[String]) -> Value {
    let out = group
        .command(env!("CARGO_BIN_EXE_iolens"))
        .args(["run", "--output-format=iolens-json"])
        .args(args)
        .output()
        .expect("run iolens in the group");
    json(&out)
}

/// "major:minor" of a block device under /sys/block.
fn dev_numbers(name: &str) -> String {
    std::fs::read_to_string(format!("/sys/block/{name}/dev"))
        .unwrap_or_else(|e| panic!("expected /sys/block/{name}/dev: {e}"))
        .trim()
        .to_string()
}

/// The report places the run in the test's group for `controller` (its
/// key under `environment.cgroup.place`: memory, io, cpu).
fn assert_in_group(report: &Value, controller: &str, name: &str) {
    let path = &report["environment"]["cgroup"]["place"][controller]["path"];
    assert!(
        path.as_str()
            .is_some_and(|p| p.contains(&format!("/iolens-test-{name}-"))),
        "expected the run's {controller} group to be the test's iolens-test-{name}-…, saw {path}"
    );
}

/// The warning `code`, whose title or evidence quotes `value`.
fn expect_warning_quoting(report: &Value, code: &str, value: &str) {
    let text = finding_text(expect_warning(report, code));
    assert!(
        text.contains(value),
        "expected the {code} finding to quote {value}, saw:\n{text}"
    );
}

pub(crate) fn codes(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

// ---- memory limit ---------------------------------------------------------

const MEMORY_LIMIT: u64 = 128 * MIB;

/// The container: the seed 004 writer unpaced (4k random buffered
/// writes into a cold 256 MiB file on ext4) on a device that drains
/// 16 MiB/s, in a memory group limited to `limit` (None: the group has no
/// limit). None when the scenario must skip.
fn memory_limited_writer(limit: Option<u64>) -> Option<Value> {
    let group = child(&["memory"], "memory")?;
    if group.version() != "v1" {
        eprintln!("skipped: the device throttle of this scenario is cgroup v1's");
        return None;
    }
    let fs = Ext4::create(512 * MIB)?;
    let args = seed004_writer(&fs, 6);
    let _throttle = write_throttle(&fs.device_name(), 16 * MIB)?;
    if let Some(limit) = limit {
        group.set("memory.limit_in_bytes", &limit.to_string());
    }
    let report = run_in(&group, &args);
    assert_in_group(&report, "memory", "memory");
    Some(report)
}

/// The group's largest memory usage over the run, bytes.
fn max_usage(report: &Value) -> u64 {
    report["observations"]["cgroup_series"]
        .as_array()
        .map(|series| {
            series
                .iter()
                .filter_map(|s| s["memory_usage_bytes"].as_u64())
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

#[test]
fn a_memory_limited_container_blames_its_limit_for_the_write_stall() {
    let _one = one_at_a_time();
    let Some(report) = memory_limited_writer(Some(MEMORY_LIMIT)) else {
        return;
    };
    let limits = &report["environment"]["cgroup"]["limits"];
    assert_eq!(
        limits["memory_max_bytes"].as_u64(),
        Some(MEMORY_LIMIT),
        "expected the 128 MiB limit in the environment, saw {limits}"
    );
    let usage = max_usage(&report);
    eprintln!(
        "memory limit: usage up to {:.1} MiB; findings {:?}",
        usage as f64 / MIB as f64,
        codes(&report)
    );
    assert!(
        usage >= MEMORY_LIMIT * 9 / 10,
        "expected the group's usage to reach 90% of its 128 MiB limit, saw {usage} bytes"
    );
    expect_warning_quoting(&report, "cgroup-memory-limit", "128.0 MiB");
    // One cause, one finding; and the limit was memory pressure, not DAMON.
    expect_no_warning(&report, "writeback-stall");
    expect_no_warning(&report, "cache-evicted-without-pressure");
}

#[test]
fn the_same_writer_without_a_memory_limit_does_not_blame_one() {
    let _one = one_at_a_time();
    let Some(report) = memory_limited_writer(None) else {
        return;
    };
    let limits = &report["environment"]["cgroup"]["limits"];
    assert!(
        limits["memory_max_bytes"].is_null(),
        "expected no memory limit in the environment, saw {limits}"
    );
    eprintln!("no memory limit: findings {:?}", codes(&report));
    expect_no_warning(&report, "cgroup-memory-limit");
}

// ---- io (blkio) throttle --------------------------------------------------

/// Direct 64k random writes on a loop device from a group whose write rate
/// on it is limited to `limit` bytes/s, the job itself paced at `rate`
/// (None: as fast as it goes). None when the scenario must skip.
fn throttled_writer(limit: u64, rate: Option<&str>) -> Option<(Value, u64)> {
    let group = child(&["io"], "io")?;
    let dev = LoopDevice::create(256 * MIB)?;
    let name = dev
        .device
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let numbers = dev_numbers(&name);
    if group.version() == "v1" {
        group.set(
            "blkio.throttle.write_bps_device",
            &format!("{numbers} {limit}"),
        );
    } else {
        group.set("io.max", &format!("{numbers} wbps={limit}"));
    }
    let mut args = strings(&[
        "--name=throttled",
        "--rw=randwrite",
        "--bs=64k",
        "--ioengine=libaio",
        "--iodepth=4",
        "--direct=1",
        "--size=192m",
        "--time_based",
        "--runtime=4",
    ]);
    args.push(format!("--filename={}", dev.path()));
    if let Some(rate) = rate {
        args.push(format!("--rate={rate}"));
    }
    let report = run_in(&group, &args);
    assert_in_group(&report, "io", "io");
    let written = report["jobs"][0]["dirs"][1]["bw_bytes_per_sec"]
        .as_f64()
        .unwrap();
    eprintln!(
        "write limit {:.1} MiB/s: the job wrote {:.2} MiB/s; findings {:?}",
        limit as f64 / MIB as f64,
        written / MIB as f64,
        codes(&report)
    );
    Some((report, written as u64))
}

#[test]
fn a_job_at_its_groups_write_limit_is_reported_capped() {
    let _one = one_at_a_time();
    let Some((report, _)) = throttled_writer(8 * MIB, None) else {
        return;
    };
    expect_warning_quoting(&report, "cgroup-io-limit", "8.0 MiB/s");
}

#[test]
fn a_job_far_below_its_groups_write_limit_is_not() {
    let _one = one_at_a_time();
    let Some((report, written)) = throttled_writer(64 * MIB, Some("4m")) else {
        return;
    };
    let limit = &report["environment"]["cgroup"]["limits"]["io"][0];
    assert_eq!(
        limit["write_bytes_per_sec"].as_u64(),
        Some(64 * MIB),
        "expected the group's 64 MiB/s write limit in the environment, saw {limit}"
    );
    assert!(
        written < 16 * MIB,
        "expected the job paced at 4 MiB/s to stay far below the 64 MiB/s limit, it wrote {written} B/s"
    );
    expect_no_warning(&report, "cgroup-io-limit");
}

// ---- CPU quota ------------------------------------------------------------

/// A CPU-bound null-engine job in a group with `quota_us` per 100 ms (None: no quota).
fn cpu_bound(quota_us: Option<u64>) -> Option<Value> {
    let group = child(&["cpu"], "cpu")?;
    if let Some(quota) = quota_us {
        if group.version() == "v1" {
            group.set("cpu.cfs_period_us", "100000");
            group.set("cpu.cfs_quota_us", &quota.to_string());
        } else {
            group.set("cpu.max", &format!("{quota} 100000"));
        }
    }
    let args = strings(&[
        "--name=spin",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=3",
    ]);
    let report = run_in(&group, &args);
    assert_in_group(&report, "cpu", "cpu");
    eprintln!(
        "CPU quota {quota_us:?} µs per 100 ms: findings {:?}",
        codes(&report)
    );
    Some(report)
}

#[test]
fn a_cpu_quota_that_throttles_the_workers_is_named() {
    let _one = one_at_a_time();
    // A tenth of a CPU: throttled in nearly every period even when other
    // work on the machine also takes CPU time from the job.
    let Some(report) = cpu_bound(Some(10_000)) else {
        return;
    };
    expect_warning_quoting(&report, "cgroup-cpu-quota", "0.10 CPU");
    // The wait for a CPU is the quota's, not other processes': not blamed twice.
    expect_no_warning(&report, "cpu-starvation");
}

#[test]
fn without_a_cpu_quota_nothing_is_throttled() {
    let _one = one_at_a_time();
    let Some(report) = cpu_bound(None) else {
        return;
    };
    expect_no_warning(&report, "cgroup-cpu-quota");
}
