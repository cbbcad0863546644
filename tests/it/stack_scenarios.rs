//! The I/O stack below a target, reproduced on the real kernel: filesystems
//! on loop devices over RAM or over the machine's disk, zram, tmpfs, and a
//! neighbour sharing the device.
//!
//! Clean controls first: a plain direct-I/O run on each stack must raise no
//! warning but host noise. Then the distortions: setups where the bytes the
//! job moved and the bytes a layer below moved differ (caches, holes,
//! unwritten extents, compression, read-modify-write, someone else's I/O).
//! Each test asserts the ground truth in the raw report first (so the setup
//! is known to reproduce its distortion), then the finding that names the
//! layer responsible, and that the rules which used to blame the wrong layer
//! stay silent.
//!
//! Root, loop devices and the filesystems' tools; skipped with a printed
//! reason otherwise. Runs are a few seconds each, one at a time.

use crate::scenario_support::{
    one_at_a_time, BackedLoop, Backing, FsKind, LoopFs, Neighbour, Tmpfs, Zram,
};
use crate::scenarios::{
    expect_no_warning, expect_warning, finding_text, job_bytes, run_report, strings,
};
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

/// Warnings this shared, noisy VM raises on any run: they say something
/// about the host, not about the stack under test.
const HOST_NOISE: &[&str] = &[
    "tunables-changed",
    "cpu-starvation",
    "cpu-frequency",
    "cache-evicted-without-pressure",
    "unstable-throughput",
    "tool-bound",
];

/// Fails listing every warning that is not host noise, code and title.
fn expect_only_host_noise(report: &Value) {
    let others: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "warning" && !is_host_noise(f))
        .map(|f| format!("{}: {}", f["code"], f["title"]))
        .collect();
    assert!(
        others.is_empty(),
        "warnings besides host noise:\n{}",
        others.join("\n")
    );
}

fn is_host_noise(finding: &Value) -> bool {
    HOST_NOISE.contains(&finding["code"].as_str().unwrap())
}

/// The warning `code`, whose title and evidence contain `words`.
fn expect_warning_saying(report: &Value, code: &str, words: &str) {
    let text = finding_text(expect_warning(report, code));
    assert!(
        text.contains(words),
        "{code} does not say {words:?}: {text}"
    );
}

/// `iolens run` of one job named `name` on `filename` with `options`.
fn run_job(name: &str, filename: &Path, options: &[&str]) -> Value {
    let mut args = strings(options);
    args.push(format!("--name={name}"));
    args.push(format!("--filename={}", filename.display()));
    run_report(&args)
}

/// 4k direct random reads for 3 s, `size` bytes of `filename`.
fn direct_randread(name: &str, filename: &Path, size: &str) -> Value {
    run_job(
        name,
        filename,
        &[
            "--ioengine=libaio",
            "--iodepth=8",
            "--direct=1",
            "--rw=randread",
            "--bs=4k",
            &format!("--size={size}"),
            "--runtime=3",
            "--time_based",
        ],
    )
}

/// The observed device named `name` (under /sys/block).
fn observed_device<'a>(report: &'a Value, name: &str) -> &'a Value {
    observed_devices(report)
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} was not observed: {:#}", devices_seen(report)))
}

/// The disk holding a loop device's backing file, as iolens found it.
fn backing_disk(report: &Value) -> &Value {
    observed_devices(report)
        .iter()
        .find(|d| d["via"].as_str().unwrap().starts_with("backing file of "))
        .unwrap_or_else(|| panic!("no backing disk observed: {:#}", devices_seen(report)))
}

fn observed_devices(report: &Value) -> &Vec<Value> {
    report["observations"]["devices"].as_array().unwrap()
}

/// Name and how it was found, of each observed device: for failure messages.
fn devices_seen(report: &Value) -> Value {
    observed_devices(report)
        .iter()
        .map(|d| serde_json::json!({"name": d["name"], "via": d["via"]}))
        .collect()
}

/// Bytes a device moved over the run in one direction ("read_sectors" or
/// "write_sectors"), from the first to the last sample of its counters.
fn moved(device: &Value, sectors: &str) -> u64 {
    let series = device["counter_series"].as_array().unwrap();
    let at = |sample: &Value| sample[sectors].as_u64().unwrap();
    (at(series.last().unwrap()) - at(&series[0])) * 512
}

/// The job's bytes read and written, and what `device` moved in `sectors`
/// ("read_sectors" or "write_sectors").
fn job_and_device(report: &Value, device: &str, sectors: &str) -> (u64, u64, u64) {
    let moved = moved(observed_device(report, device), sectors);
    (job_bytes(report, 0), job_bytes(report, 1), moved)
}

/// A 256 MiB ext4 (noatime) on a loop device over a file on the machine's disk.
fn ext4_over_disk(direct_io: bool) -> Option<LoopFs> {
    LoopFs::create(
        FsKind::Ext4,
        256 * MIB,
        Backing::Disk,
        direct_io,
        &["noatime"],
    )
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

// ---- clean controls -------------------------------------------------------

/// The control load: 4k direct random reads and writes for 3 s on 48 MiB.
fn clean_randrw(filename: &Path) -> Value {
    run_job(
        "c",
        filename,
        &[
            "--ioengine=libaio",
            "--iodepth=8",
            "--direct=1",
            "--rw=randrw",
            "--bs=4k",
            "--size=48m",
            "--runtime=3",
            "--time_based",
        ],
    )
}

/// The control load on a fresh `kind` filesystem over a loop device with
/// direct I/O to a file on the machine's disk.
fn clean_on_filesystem(kind: FsKind) {
    let _one = one_at_a_time();
    let Some(fs) = LoopFs::create(kind, 512 * MIB, Backing::Disk, true, &["noatime"]) else {
        return;
    };
    let report = clean_randrw(&fs.path("c"));
    assert!(job_bytes(&report, 0) > 0 && job_bytes(&report, 1) > 0);
    expect_only_host_noise(&report);
}

#[test]
fn clean_direct_io_on_ext4_over_a_loop_device_with_dio() {
    clean_on_filesystem(FsKind::Ext4);
}

#[test]
fn clean_direct_io_on_xfs_over_a_loop_device_with_dio() {
    clean_on_filesystem(FsKind::Xfs);
}

#[test]
fn clean_direct_io_on_btrfs_over_a_loop_device_with_dio() {
    clean_on_filesystem(FsKind::Btrfs);
}

#[test]
fn clean_direct_io_on_zram() {
    let _one = one_at_a_time();
    let Some(zram) = Zram::create(256 * MIB) else {
        return;
    };
    let report = clean_randrw(&zram.path());
    assert!(job_bytes(&report, 0) > 0 && job_bytes(&report, 1) > 0);
    expect_only_host_noise(&report);
}

// ---- distortions ----------------------------------------------------------

/// A loop device without direct I/O reads its backing file through the page
/// cache. ext4 on such a loop over a file on the machine's disk; a 64 MiB
/// file written, synced, read once, then made cold in ext4 by a remount
/// (which leaves the backing file's cache alone); then 4k direct random
/// reads of it for 3 s.
///
/// Ground truth: the loop device reads about what the job read, the disk
/// holding the backing file ("backing file of loopN") almost nothing: the
/// direct reads are served from the backing file's page cache.
fn loop_without_dio_reread() -> Option<Value> {
    let fs = ext4_over_disk(false)?;
    let file = fs.preallocated_file("data", 64 * MIB);
    fs.remount();
    // Through ext4 and the loop device into the backing file's cache.
    std::fs::read(&file).unwrap();
    fs.remount();
    Some(direct_randread("reread", &file, "64m"))
}

#[test]
fn loop_without_dio_reread_reads_the_backing_cache_not_the_disk() {
    let _one = one_at_a_time();
    let Some(report) = loop_without_dio_reread() else {
        return;
    };
    let job = job_bytes(&report, 0);
    let disk = moved(backing_disk(&report), "read_sectors");
    eprintln!(
        "job read {:.1} MiB, the disk below the loop device {:.2} MiB",
        mib(job),
        mib(disk)
    );
    assert!(job > 16 * MIB, "{job}");
    // Not about 0: other tenants read the machine's disk too.
    assert!(disk < job / 4, "job {job}, backing disk {disk}");
    expect_warning_saying(&report, "loop-without-direct-io", "(loop/dio = 0)");
    expect_no_warning(&report, "direct-io-not-honoured");
}

/// tmpfs has no device: its "direct" reads are copies from RAM. 4k direct
/// random reads of a 64 MiB file on a private tmpfs for 3 s.
///
/// Ground truth: the job read, and iolens observed no device at all.
fn tmpfs_direct_read() -> Option<Value> {
    let tmpfs = Tmpfs::mount(128 * MIB)?;
    Some(direct_randread("tmpfs", &tmpfs.path("data"), "64m"))
}

#[test]
fn tmpfs_direct_read_has_no_device_below() {
    let _one = one_at_a_time();
    let Some(report) = tmpfs_direct_read() else {
        return;
    };
    let job = job_bytes(&report, 0);
    eprintln!("job read {:.1} MiB", mib(job));
    assert!(job > 16 * MIB, "{job}");
    assert_eq!(
        observed_devices(&report).len(),
        0,
        "{}",
        devices_seen(&report)
    );
    expect_warning_saying(&report, "no-device", "this measured RAM");
    expect_no_warning(&report, "pagecache-under-direct-io");
}

/// Buffered writes end in the page cache; without fsync the run ends before
/// writeback. 512 MiB written sequentially in 1 MiB blocks to ext4 on a loop
/// device (with direct I/O, over the machine's disk), no fsync. Needs the
/// dirty limits above 512 MiB, which the defaults (a share of the RAM) are
/// on machines with a few GiB; checked, not changed.
///
/// Ground truth: the loop device wrote far less than the job's 512 MiB, and
/// the file had many dirty pages in the cache at the last sample.
fn buffered_writes_stay_in_ram() -> Option<(Value, u64)> {
    let dirty_threshold = dirty_threshold_bytes();
    if dirty_threshold < 1024 * MIB {
        eprintln!(
            "skipped: the dirty threshold is {:.0} MiB, too low to hold 512 MiB",
            mib(dirty_threshold)
        );
        return None;
    }
    let fs = LoopFs::create(FsKind::Ext4, 768 * MIB, Backing::Disk, true, &["noatime"])?;
    let report = run_job(
        "buffered",
        &fs.path("data"),
        &["--ioengine=psync", "--rw=write", "--bs=1m", "--size=512m"],
    );
    let written = moved(observed_device(&report, &fs.device_name()), "write_sectors");
    Some((report, written))
}

/// vmstat's nr_dirty_threshold, bytes: above it writers are throttled hard.
fn dirty_threshold_bytes() -> u64 {
    let vmstat = std::fs::read_to_string("/proc/vmstat").unwrap();
    let pages: u64 = vmstat
        .lines()
        .find_map(|l| l.strip_prefix("nr_dirty_threshold "))
        .unwrap()
        .parse()
        .unwrap();
    pages * 4096
}

#[test]
fn buffered_writes_stay_in_ram_leave_the_device_idle() {
    let _one = one_at_a_time();
    let Some((report, device_wrote)) = buffered_writes_stay_in_ram() else {
        return;
    };
    let job = job_bytes(&report, 1);
    let cache = &report["observations"]["targets"][0]["cache_series"];
    let dirty_pages = cache
        .as_array()
        .unwrap()
        .last()
        .and_then(|pages| pages["dirty"].as_u64())
        .unwrap_or_else(|| panic!("no last cache sample: {cache}"));
    eprintln!(
        "job wrote {:.0} MiB, the device {:.1} MiB; {:.0} MiB dirty at the end",
        mib(job),
        mib(device_wrote),
        mib(dirty_pages * 4096)
    );
    assert_eq!(job, 512 * MIB);
    assert!(device_wrote < job / 4, "device wrote {device_wrote}");
    assert!(dirty_pages * 4096 > job / 2, "{cache}");
    expect_warning_saying(&report, "writes-left-in-ram", "still dirty");
}

/// Reads of unwritten extents (fallocate without writing) return zeros
/// without touching the device. ext4 on a loop device with direct I/O over
/// the machine's disk; 4k direct random reads of a fallocated 64 MiB file
/// for 3 s.
///
/// Ground truth: the job read tens of MiB, the loop device about nothing.
fn unwritten_extents_read() -> Option<(Value, String)> {
    never_written_read(LoopFs::fallocated_file)
}

/// Reads of a hole return zeros without touching the device: as
/// `unwritten_extents_read`, on a file that is one hole (truncated to 64 MiB).
///
/// Ground truth: the job read tens of MiB, the loop device about nothing,
/// and iolens saw the target was sparse.
fn sparse_file_read() -> Option<(Value, String)> {
    never_written_read(LoopFs::sparse_file)
}

/// 4k direct random reads for 3 s of a 64 MiB file made by `make` on ext4
/// over a loop device with direct I/O; the report and the device's name.
fn never_written_read(make: fn(&LoopFs, &str, u64) -> PathBuf) -> Option<(Value, String)> {
    let fs = ext4_over_disk(true)?;
    let file = make(&fs, "data", 64 * MIB);
    Some((direct_randread("unstored", &file, "64m"), fs.device_name()))
}

/// The job's read bytes and the device's, checked to be tens of MiB and
/// about nothing.
fn assert_read_without_device(report: &Value, device: &str) {
    let (job, _, read) = job_and_device(report, device, "read_sectors");
    eprintln!(
        "job read {:.1} MiB, the device {:.2} MiB",
        mib(job),
        mib(read)
    );
    assert!(job > 16 * MIB, "{job}");
    assert!(read < MIB, "device read {read}");
}

#[test]
fn unwritten_extents_read_does_not_reach_the_device() {
    let _one = one_at_a_time();
    let Some((report, device)) = unwritten_extents_read() else {
        return;
    };
    assert_read_without_device(&report, &device);
    expect_warning_saying(&report, "read-from-holes", "never written");
    expect_no_warning(&report, "direct-io-not-honoured");
}

#[test]
fn sparse_file_read_does_not_reach_the_device() {
    let _one = one_at_a_time();
    let Some((report, device)) = sparse_file_read() else {
        return;
    };
    assert_read_without_device(&report, &device);
    let target = &report["observations"]["targets"][0];
    assert_eq!(target["sparse"], true, "{target}");
    expect_warning_saying(&report, "read-from-holes", "a file with holes");
}

/// A loop device over a sparse file: its reads of the hole are answered by
/// the filesystem below with zeros. A loop device with direct I/O over a
/// fresh 64 MiB sparse file on the machine's disk, read directly (4k random,
/// 3 s).
///
/// Ground truth: the loop device read what the job read, the disk holding
/// the backing file about nothing, and the backing file is still a hole.
fn loop_over_hole() -> Option<(Value, BackedLoop)> {
    let device = BackedLoop::create(64 * MIB, Backing::Disk, true)?;
    let report = direct_randread("hole", Path::new(device.path()), "64m");
    Some((report, device))
}

#[test]
fn loop_over_hole_reads_nothing_from_the_disk() {
    let _one = one_at_a_time();
    let Some((report, device)) = loop_over_hole() else {
        return;
    };
    let job = job_bytes(&report, 0);
    let loop_read = moved(observed_device(&report, &device.name()), "read_sectors");
    let disk_read = moved(backing_disk(&report), "read_sectors");
    let blocks = std::fs::metadata(device.backing_file()).unwrap().blocks();
    eprintln!(
        "job read {:.1} MiB, the loop device {:.1} MiB, the disk below {:.2} MiB; backing file blocks {blocks}",
        mib(job),
        mib(loop_read),
        mib(disk_read)
    );
    assert!(job > 16 * MIB, "{job}");
    assert!(loop_read >= job * 9 / 10, "job {job}, loop {loop_read}");
    // Not about 0: other tenants read the machine's disk too.
    assert!(disk_read < job / 4, "job {job}, disk {disk_read}");
    assert_eq!(blocks, 0, "the backing file was allocated");
    let backing = device.backing_file().display().to_string();
    expect_warning_saying(&report, "read-from-holes", &backing);
}

/// zram stores a page of zeros as a flag, other pages compressed. 256 MiB
/// written directly in 64k blocks to a 512 MiB zram device, with `buffers`
/// saying what the blocks hold (`--zero_buffers`, or `--refill_buffers` for
/// fresh random data). The device is returned so its mm_stat can be read
/// before it is reset.
///
/// Ground truth: with zero buffers nearly every page is a same-filled page
/// and the compressed size is about nothing; random buffers are stored at
/// about their size.
fn zram_write(buffers: &str) -> Option<(Value, Zram)> {
    let zram = Zram::create(512 * MIB)?;
    let report = run_job(
        "zram",
        &zram.path(),
        &[
            "--ioengine=libaio",
            "--iodepth=8",
            "--direct=1",
            "--rw=write",
            "--bs=64k",
            "--size=256m",
            buffers,
        ],
    );
    Some((report, zram))
}

/// mm_stat's fields: orig_data_size, compr_data_size (bytes); same_pages (pages).
const ORIG_DATA_SIZE: usize = 0;
const COMPR_DATA_SIZE: usize = 1;
const SAME_PAGES: usize = 5;

#[test]
fn zram_zero_buffers_are_stored_as_nothing() {
    let _one = one_at_a_time();
    let Some((report, zram)) = zram_write("--zero_buffers") else {
        return;
    };
    let job = job_bytes(&report, 1);
    let stat = zram.mm_stat();
    let device_wrote = moved(observed_device(&report, zram.name()), "write_sectors");
    eprintln!(
        "zeros: job wrote {:.0} MiB, the device {:.0} MiB; mm_stat {stat:?}",
        mib(job),
        mib(device_wrote)
    );
    assert_eq!(job, 256 * MIB);
    assert!(stat[SAME_PAGES] * 4096 >= job * 9 / 10, "{stat:?}");
    assert!(stat[COMPR_DATA_SIZE] < MIB, "{stat:?}");
    expect_warning_saying(&report, "compressible-data", "write buffers: zero_buffers");
    drop(zram);

    let Some((report, zram)) = zram_write("--refill_buffers") else {
        return;
    };
    let stat = zram.mm_stat();
    eprintln!("random: mm_stat {stat:?}");
    assert_eq!(job_bytes(&report, 1), 256 * MIB);
    assert!(stat[SAME_PAGES] * 4096 < MIB, "{stat:?}");
    assert!(
        stat[COMPR_DATA_SIZE] > stat[ORIG_DATA_SIZE] * 9 / 10,
        "{stat:?}"
    );
    expect_no_warning(&report, "compressible-data");
}

/// A write smaller than a page into an uncached page makes the kernel read
/// the page first (read-modify-write). 512-byte buffered random writes for
/// 3 s into a 64 MiB file on ext4 (4k blocks) on a loop device with direct
/// I/O, the file made cold by a remount, fsync every 64 writes.
///
/// Ground truth: the job only wrote, yet the loop device read.
fn subsector_writes_rmw() -> Option<(Value, String)> {
    let fs = ext4_over_disk(true)?;
    let file = fs.preallocated_file("data", 64 * MIB);
    fs.remount();
    let report = run_job(
        "rmw",
        &file,
        &[
            "--ioengine=psync",
            "--rw=randwrite",
            "--bs=512",
            "--size=64m",
            "--fsync=64",
            "--runtime=3",
            "--time_based",
        ],
    );
    Some((report, fs.device_name()))
}

#[test]
fn subsector_writes_rmw_read_the_device() {
    let _one = one_at_a_time();
    let Some((report, device)) = subsector_writes_rmw() else {
        return;
    };
    let (job_read, job_wrote, read) = job_and_device(&report, &device, "read_sectors");
    eprintln!(
        "job read {job_read} B and wrote {:.2} MiB; the device read {:.2} MiB",
        mib(job_wrote),
        mib(read)
    );
    assert_eq!(job_read, 0);
    assert!(job_wrote > 0);
    assert!(read > MIB, "device read {read}");
    expect_warning_saying(&report, "job-amplification", "read-modify-write");
    expect_no_warning(&report, "foreign-io");
}

/// Another process writing to the same filesystem while the job reads. ext4
/// on a loop device with direct I/O over the machine's disk; 4k direct
/// random reads of a 64 MiB file for 3 s while a neighbour rewrites another
/// file with direct writes at up to 32 MiB/s (iolens reads some 50–100 MiB/s
/// here).
///
/// Ground truth: the job only read, yet the loop device wrote.
fn foreign_neighbour() -> Option<(Value, String)> {
    let fs = ext4_over_disk(true)?;
    let file = fs.preallocated_file("data", 64 * MIB);
    let other = fs.preallocated_file("other", 4 * MIB);
    let neighbour = Neighbour::start(&other, 32 * MIB)?;
    let report = direct_randread("neighbour", &file, "64m");
    // It ran for the whole job: its process still exists.
    assert!(
        Path::new(&format!("/proc/{}", neighbour.pid())).exists(),
        "the neighbour ended early"
    );
    Some((report, fs.device_name()))
}

#[test]
fn foreign_neighbour_writes_show_on_the_device_of_a_read_only_job() {
    let _one = one_at_a_time();
    let Some((report, device)) = foreign_neighbour() else {
        return;
    };
    let (job_read, job_wrote, wrote) = job_and_device(&report, &device, "write_sectors");
    eprintln!(
        "job read {:.1} MiB and wrote {job_wrote} B; the device wrote {:.1} MiB",
        mib(job_read),
        mib(wrote)
    );
    assert!(job_read > 16 * MIB, "{job_read}");
    assert_eq!(job_wrote, 0);
    assert!(wrote > 4 * MIB, "device wrote {wrote}");
    expect_warning_saying(&report, "foreign-io", "the busiest dd (pid");
}

/// ext4 with `data=journal` has no direct I/O: O_DIRECT falls back to the
/// page cache. A 16 MiB file written and synced on such an ext4 (loop device
/// with direct I/O over the machine's disk), then read directly (4k random,
/// 3 s): after the first pass every read is a cache hit.
///
/// Ground truth: the device read at most about the file once. The finding
/// names the mount option as the layer that cached.
fn data_journal_direct_read() -> Option<(Value, String)> {
    let fs = LoopFs::create(
        FsKind::Ext4,
        256 * MIB,
        Backing::Disk,
        true,
        &["noatime", "data=journal"],
    )?;
    let file = fs.preallocated_file("data", 16 * MIB);
    fs.remount();
    Some((direct_randread("journal", &file, "16m"), fs.device_name()))
}

#[test]
fn data_journal_turns_direct_reads_into_cache_hits() {
    let _one = one_at_a_time();
    let Some((report, device)) = data_journal_direct_read() else {
        return;
    };
    let (job, _, read) = job_and_device(&report, &device, "read_sectors");
    eprintln!(
        "job read {:.1} MiB, the device {:.1} MiB",
        mib(job),
        mib(read)
    );
    assert!(job > 64 * MIB, "{job}");
    assert!(read < job / 2, "device read {read}");
    expect_warning_saying(
        &report,
        "direct-io-not-honoured",
        "ext4 is mounted with data=journal",
    );
}

/// A zram device never written holds no data: its reads return zeros
/// without touching its memory, like a thin device's unwritten blocks. 4k
/// direct random reads for 3 s of a fresh 256 MiB zram device.
///
/// Ground truth: the device stored nothing (mm_stat's first field is 0).
#[test]
fn reads_of_a_never_written_zram_device_are_reads_of_holes() {
    let _one = one_at_a_time();
    let Some(zram) = Zram::create(256 * MIB) else {
        return;
    };
    let report = direct_randread("thin", &zram.path(), "256m");
    let stat = zram.mm_stat();
    eprintln!(
        "job read {:.1} MiB; mm_stat {stat:?}",
        mib(job_bytes(&report, 0))
    );
    assert!(job_bytes(&report, 0) > 16 * MIB);
    assert_eq!(stat[ORIG_DATA_SIZE], 0, "{stat:?}");
    expect_warning_saying(&report, "read-from-holes", "held data for only 0 KiB");
}
