//! Page cache evicted part-way through a run, on a real memory cgroup: a
//! buffered reader of a file it has cached runs inside a child group whose
//! memory limit leaves some room, and part-way another process of the group
//! fills a tmpfs, so the group's own reclaim evicts the file and the reads go
//! to the device. The report must name the eviction, and the group's limit, as
//! the cause of the change of speed; the same run without the neighbour stays
//! silent. Root, cgroups and a loop device over /dev/shm; skipped with a
//! printed reason otherwise.

use crate::cgroup_scenarios::{child, codes};
use crate::scenario_support::{one_at_a_time, Ext4, Tmpfs};
use crate::scenarios::{expect_no_warning, expect_warning, finding_text};
use crate::support::json;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

const MIB: u64 = 1 << 20;
const FILE: u64 = 48 * MIB;
/// The group's limit: what it uses once the file is cached, and this much more.
const HEADROOM: u64 = 24 * MIB;
/// What the neighbour writes to the tmpfs (memory reclaim cannot take back).
const NEIGHBOUR: u64 = 48 * MIB;
/// The run's length, and when the neighbour starts.
const RUNTIME_S: u64 = 6;
const NEIGHBOUR_AFTER: Duration = Duration::from_secs(3);

/// The reader's report: 4k random buffered reads of a file the group cached
/// before the run (invalidate=0 keeps it), for 6 s, in a group limited to its
/// use then plus `HEADROOM`; with `neighbour`, another process of the group
/// writes `NEIGHBOUR` bytes to a tmpfs 3 s in. None when the scenario must skip.
fn reader(neighbour: bool) -> Option<Value> {
    let group = child(&["memory"], "eviction")?;
    let (usage, limit) = if group.version() == "v1" {
        ("memory.usage_in_bytes", "memory.limit_in_bytes")
    } else {
        ("memory.current", "memory.max")
    };
    let fs = Ext4::create(128 * MIB)?;
    let tmpfs = Tmpfs::mount(2 * NEIGHBOUR)?;
    let file = fs.preallocated_file("data", FILE);
    // cold, then cached by a reader inside the group: its pages are the group's
    fs.remount();
    let warmed = group
        .command("cat")
        .arg(&file)
        .stdout(Stdio::null())
        .status()
        .expect("read the file in the group");
    assert!(warmed.success());
    let warm: u64 = group.get(usage).parse().unwrap();
    group.set(limit, &(warm + HEADROOM).to_string());
    let run = group
        .command(env!("CARGO_BIN_EXE_iolens"))
        .args([
            "run",
            "--no-history",
            "--output-format=iolens-json",
            "--name=warm",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            "--invalidate=0",
            "--time_based",
            &format!("--runtime={RUNTIME_S}"),
            &format!("--size={FILE}"),
            &format!("--filename={}", file.display()),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iolens in the group");
    if neighbour {
        std::thread::sleep(NEIGHBOUR_AFTER);
        let wrote = group
            .command("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", tmpfs.path("neighbour").display()))
            .args(["bs=1M", &format!("count={}", NEIGHBOUR / MIB)])
            .stderr(Stdio::null())
            .status()
            .expect("run the neighbour in the group");
        assert!(wrote.success());
    }
    let out = run.wait_with_output().expect("wait for iolens");
    Some(json(&out))
}

#[test]
fn a_neighbour_in_the_group_evicting_the_file_is_named_as_the_cause() {
    let _one = one_at_a_time();
    let Some(report) = reader(true) else {
        return;
    };
    let finding = expect_warning(&report, "cache-evicted-mid-run");
    let text = finding_text(finding);
    eprintln!("{text}\nfindings: {:?}", codes(&report));
    assert!(
        text.contains("because the page cache of")
            && text.contains("cgroup was at its memory limit"),
        "expected the eviction and the group's limit named, saw:\n{text}"
    );
    // one event, one finding of the family
    expect_no_warning(&report, "cache-evicted-without-pressure");
}

#[test]
fn the_same_reader_alone_is_silent() {
    let _one = one_at_a_time();
    let Some(report) = reader(false) else {
        return;
    };
    eprintln!("findings: {:?}", codes(&report));
    expect_no_warning(&report, "cache-evicted-mid-run");
    expect_no_warning(&report, "cache-evicted-without-pressure");
}
