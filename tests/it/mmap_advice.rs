//! The mmap engine gives its mappings fio's access advice: a random read then
//! faults in only the pages it reads, instead of the read-around window each
//! fault of an unadvised mapping brings in. Root and a loop device; skipped
//! with a printed reason otherwise.

use crate::scenario_support::{one_at_a_time, Ext4};
use crate::support::{iolens, json};
use std::io::Write;

const MIB: u64 = 1 << 20;

#[test]
fn random_mmap_reads_read_little_more_than_the_job_asked_for() {
    let _one = one_at_a_time();
    let Some(fs) = Ext4::create(256 * MIB) else {
        return;
    };
    let file = fs.path("m");
    let mut out = std::fs::File::create(&file).unwrap();
    let chunk: Vec<u8> = (0..MIB).map(|i| (i * 7 % 251) as u8).collect();
    for _ in 0..64 {
        out.write_all(&chunk).unwrap();
    }
    out.sync_all().unwrap();
    drop(out);
    // Cold: nothing of the file is cached when the job starts.
    fs.remount();
    let report = json(&iolens(&[
        "run",
        "--name=m",
        "--ioengine=mmap",
        "--rw=randread",
        "--bs=4k",
        "--size=64m",
        // A part of the file: read-around shows as the device reading many times it
        // (a whole pass, or time_based, would end with all of the file cached either way).
        "--io_size=4m",
        &format!("--filename={}", file.display()),
        "--output-format=iolens-json",
    ]));
    let job_read = report["jobs"][0]["dirs"][0]["io_bytes"].as_u64().unwrap();
    let name = fs.device_name();
    let disk = report["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name.as_str())
        .unwrap_or_else(|| panic!("{name} is not among the disks: {}", report["disks"]));
    let device_read = disk["read_sectors"].as_u64().unwrap() * 512;
    eprintln!(
        "job read {job_read} bytes, {name} read {device_read} ({:.2}x)",
        device_read as f64 / job_read.max(1) as f64
    );
    assert!(job_read > 0, "the job read nothing");
    assert!(
        device_read < 4 * job_read,
        "{name} read {device_read} bytes for the job's {job_read}: read-around is back"
    );
}
