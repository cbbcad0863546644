//! fio as the oracle for what happens between passes: with `invalidate=1` (the
//! default) fio drops a buffered job's cached pages as each pass of `loops`
//! begins (it reopens the files) and as a `time_based` job's offsets wrap, so
//! every pass reads from the device; with `invalidate=0` only the first pass
//! may. Each case runs fio 3.33 and iolens on the same job over a file of a
//! loop-mounted ext4 (and over a loop device itself) and compares the share of
//! the job's reads the device read, from `/sys/block/loopN/stat`: what each
//! tool made the device do, never how fast either was.

use crate::fio_match::{fio, iolens_json};
use crate::scenario_support::{one_at_a_time, BackedLoop, Backing, Ext4};
use serde_json::Value;
use std::path::Path;

const FILE: u64 = 8 << 20;
/// Shares of the job's bytes: a pass re-read from the cache moves iolens' share
/// by 1/passes (0.75 at loops=4), readahead and timing by a few points.
const TOLERANCE: f64 = 0.15;

/// The cases: the job's options after `--filename` and `--size`.
const CASES: &[&[&str]] = &[
    &["--rw=read", "--loops=1"],
    &["--rw=read", "--loops=4"],
    &["--rw=randread", "--loops=4"],
    &["--rw=read", "--loops=4", "--invalidate=0"],
    &["--rw=read", "--time_based", "--runtime=1"],
    &["--rw=randread", "--time_based", "--runtime=1"],
    &["--rw=read", "--time_based", "--runtime=1", "--invalidate=0"],
];

/// Bytes the device `name` ("loop3") has read since it was attached.
fn device_read_bytes(name: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let sectors: u64 = stat.split_whitespace().nth(2).unwrap().parse().unwrap();
    sectors * 512
}

/// The share of its reads a run made the device read: `run` gives the run's
/// fio-format JSON. The target is read through the cache first, so only a drop
/// sends a read to the device.
fn device_share(target: &Path, device: &str, run: impl FnOnce() -> Option<Value>) -> Option<f64> {
    std::fs::read(target).unwrap();
    let before = device_read_bytes(device);
    let doc = run()?;
    let read = doc["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!(read > 0, "the job read nothing: {doc}");
    Some((device_read_bytes(device) - before) as f64 / read as f64)
}

/// Runs every case on `target` with fio and iolens; their device shares must agree.
/// The target stays open meanwhile: the last close of a block device drops its
/// cache in the kernel, and fio closes its files between passes where iolens
/// keeps them open, which is no part of what `invalidate` decides.
fn compare(dir: &Path, target: &Path, device: &str) {
    let _held = std::fs::File::open(target).unwrap();
    let filename = format!("--filename={}", target.display());
    let size = format!("--size={FILE}");
    for case in CASES {
        let mut args = vec!["--name=p", "--bs=4k", &filename, &size];
        args.extend_from_slice(case);
        let mut fio_args = args.clone();
        fio_args.push("--output-format=json");
        let Some(fio_share) = device_share(target, device, || fio(dir, &fio_args)) else {
            return;
        };
        let mut ours = args.clone();
        ours.push("--output-format=json");
        let ours_share = device_share(target, device, || {
            let (doc, code) = iolens_json(dir, &ours);
            assert_eq!(code, 0, "iolens {ours:?} failed");
            Some(doc)
        })
        .unwrap();
        assert!(
            (ours_share - fio_share).abs() <= TOLERANCE,
            "{case:?} on {}: the device read {ours_share:.2} of iolens' reads, {fio_share:.2} of fio's",
            target.display()
        );
    }
}

#[test]
fn each_pass_reads_the_device_as_in_fio_on_a_file() {
    let _one = one_at_a_time();
    let Some(fs) = Ext4::create(64 << 20) else {
        return;
    };
    let target = fs.preallocated_file("f", FILE);
    let dir = crate::support::scratch();
    compare(dir.path(), &target, &fs.device_name());
}

#[test]
fn each_pass_reads_the_device_as_in_fio_on_a_block_device() {
    let _one = one_at_a_time();
    let Some(device) = BackedLoop::create(FILE, Backing::Shm, false) else {
        return;
    };
    let dir = crate::support::scratch();
    compare(dir.path(), Path::new(device.path()), &device.name());
}
