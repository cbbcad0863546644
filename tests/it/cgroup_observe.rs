//! iolens inside a real child cgroup with memory, io and CPU limits: the
//! environment records the group and its limits, the sampler its usage,
//! the system text and `doctor` show them. Skipped (with the reason) when
//! not root or the controllers are not there.

use crate::cgroup_support::ChildCgroup;
use crate::support::{json, scratch, stdout};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const MEMORY_LIMIT: u64 = 128 << 20;
const READ_LIMIT: u64 = 1 << 30;

/// "maj:min" of the whole disk holding `dir` (a partition's parent), as
/// the io controller names it.
fn disk_of(dir: &Path) -> String {
    let dev = std::fs::metadata(dir).expect("stat the scratch dir").dev();
    let (major, minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    let sys = Path::new("/sys/dev/block").join(format!("{major}:{minor}"));
    let disk = if sys.join("partition").exists() {
        sys.join("..")
    } else {
        sys
    };
    std::fs::read_to_string(disk.join("dev"))
        .expect("read the disk's dev")
        .trim()
        .to_string()
}

/// A child group with a 128 MiB memory limit, a 1 GiB/s read limit on the
/// scratch disk (high enough not to slow the test) and half a CPU.
fn limited_group(disk: &str) -> Option<ChildCgroup> {
    let group = match ChildCgroup::new(&["memory", "io", "cpu"], "observe") {
        Ok(group) => group,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            return None;
        }
    };
    if group.version() == "v1" {
        group.set("memory.limit_in_bytes", &MEMORY_LIMIT.to_string());
        group.set(
            "blkio.throttle.read_bps_device",
            &format!("{disk} {READ_LIMIT}"),
        );
        group.set("cpu.cfs_period_us", "100000");
        group.set("cpu.cfs_quota_us", "50000");
    } else {
        group.set("memory.max", &MEMORY_LIMIT.to_string());
        group.set("io.max", &format!("{disk} rbps={READ_LIMIT}"));
        group.set("cpu.max", "50000 100000");
    }
    Some(group)
}

#[test]
fn a_run_inside_a_limited_cgroup_records_shows_and_samples_it() {
    let dir = scratch();
    let disk = disk_of(dir.path());
    let Some(group) = limited_group(&disk) else {
        return;
    };
    let file = dir.path().join("cg.dat");
    let job = [
        "run",
        "--no-history",
        "--name=cg",
        &format!("--filename={}", file.display()),
        "--size=16m",
        "--rw=write",
        "--bs=64k",
        "--direct=1",
    ];
    let out = group
        .command(env!("CARGO_BIN_EXE_iolens"))
        .args(job)
        .arg("--output-format=iolens-json")
        .output()
        .expect("run iolens in the group");
    let report = json(&out);
    let cgroup = &report["environment"]["cgroup"];
    let memory_path = group.path("memory");
    assert_eq!(
        cgroup["place"]["memory"]["path"], memory_path,
        "expected the run in the test's group, got {}",
        cgroup["place"]
    );
    let limits = &cgroup["limits"];
    assert_eq!(
        limits["memory_max_bytes"], MEMORY_LIMIT,
        "expected the 128 MiB limit, got {limits}"
    );
    assert_eq!(
        (&limits["cpu_quota_us"], &limits["cpu_period_us"]),
        (&50000.into(), &100000.into()),
        "expected half a CPU, got {limits}"
    );
    let io = limits["io"].as_array().expect("io limits");
    assert!(
        io.iter()
            .any(|l| l["device"] == disk && l["read_bytes_per_sec"] == READ_LIMIT),
        "expected the read limit on {disk}, got {io:?}"
    );
    let obs = &report["observations"];
    let samples = obs["t_ns"].as_array().unwrap().len();
    let series = obs["cgroup_series"].as_array().expect("cgroup_series");
    assert_eq!(
        series.len(),
        samples,
        "expected a cgroup sample per sample, notes {}",
        obs["notes"]
    );
    let peak = series
        .iter()
        .filter_map(|s| s["memory_usage_bytes"].as_u64())
        .max()
        .unwrap_or(0);
    assert!(
        peak > 0 && peak <= MEMORY_LIMIT,
        "expected a usage within the limit, got a peak of {peak}"
    );
    let io_series = obs["cgroup_io"].as_array().expect("cgroup_io");
    let written: u64 = io_series
        .iter()
        .filter(|d| d["device"] == disk)
        .filter_map(|d| {
            let counters = d["counter_series"].as_array()?;
            let at = |i: usize| counters.get(i)?["write_bytes"].as_u64();
            Some(at(counters.len().checked_sub(1)?)? - at(0)?)
        })
        .sum();
    assert!(
        written >= 16 << 20,
        "expected the group's io counters on {disk} to count the 16 MiB written directly, got {written}: {io_series:?}"
    );

    let text = group
        .command(env!("CARGO_BIN_EXE_iolens"))
        .args(job)
        .output()
        .expect("run iolens in the group");
    let text = stdout(&text);
    let line = format!(
        "  cgroup {memory_path} ({}): memory limit 128.0 MiB (peak usage ",
        group.version()
    );
    assert!(
        text.lines().any(|l| l.starts_with(&line)
            && l.contains("read limit 1.0 GiB/s on ")
            && l.contains("CPU quota 0.50 CPU (throttled ")),
        "expected a line starting {line:?} with the io and CPU limits, got:\n{text}"
    );
}

#[test]
fn doctor_inside_a_limited_cgroup_names_its_limits() {
    let dir = scratch();
    let disk = disk_of(dir.path());
    let Some(group) = limited_group(&disk) else {
        return;
    };
    let out = group
        .command(env!("CARGO_BIN_EXE_iolens"))
        .arg("doctor")
        .arg(dir.path())
        .output()
        .expect("run iolens doctor in the group");
    let text = stdout(&out);
    let line = format!(
        "  FIX  cgroup {} ({}): memory limit 128.0 MiB, ",
        group.path("memory"),
        group.version()
    );
    assert!(
        text.lines().any(|l| l.starts_with(&line)
            && l.contains("read limit 1.0 GiB/s on ")
            && l.ends_with("a benchmark inside a limit measures the limit, not the storage")),
        "expected a line starting {line:?}, got:\n{text}"
    );
}
