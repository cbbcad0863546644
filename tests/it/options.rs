//! The option table through the binary: fio's example job files either parse or are
//! rejected with a message that names what iolens does not support.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::path::{Path, PathBuf};

/// Where Debian's `fio-examples` package puts fio's example job files.
const FIO_EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// Deliberate strict-mode rejections (each names the problem and its fix): `threads=1`
/// ("did you mean thread") and an unset `${VAR}`.
const STRICT_REJECTIONS: &[&str] = &["did you mean 'thread'", "environment variable"];

fn example_job_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "fio"))
        .collect();
    files.sort();
    files
}

#[test]
fn fio_examples_parse_or_name_what_is_unsupported() {
    let dir = Path::new(FIO_EXAMPLES);
    if !dir.is_dir() {
        eprintln!("skipped: {FIO_EXAMPLES} is missing (apt-get install fio-examples)");
        return;
    }
    let (mut parsed, mut unsupported, mut strict) = (0, 0, 0);
    let mut unexplained = Vec::new();
    for file in example_job_files(dir) {
        let out = iolens(&["run", "--parse-only", &file.display().to_string()]);
        let message = stderr(&out);
        if out.status.success() {
            parsed += 1;
        } else if message.contains("not supported by iolens") {
            unsupported += 1;
        } else if STRICT_REJECTIONS.iter().any(|s| message.contains(s)) {
            strict += 1;
        } else {
            unexplained.push(format!("{}: {}", file.display(), message.trim()));
        }
    }
    eprintln!(
        "fio examples: {parsed} parse, {unsupported} name an unsupported option or engine, \
         {strict} rejected by strict mode"
    );
    assert!(parsed > 0, "no example parsed");
    assert!(
        unexplained.is_empty(),
        "failures that name no unsupported option:\n{}",
        unexplained.join("\n")
    );
}

#[test]
fn workers_take_cpus_allowed_nice_and_prio_and_report_a_refusal() {
    let dir = scratch();
    let file = dir.path().join("f").display().to_string();
    let base = [
        "run",
        "--name=sched",
        "--ioengine=null",
        "--size=1m",
        "--numjobs=2",
        "--cpus_allowed_policy=split",
    ];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        let filename = format!("--filename={file}");
        args.push(&filename);
        args.extend_from_slice(extra);
        iolens(&args)
    };
    let out = run(&["--cpus_allowed=0", "--nice=1", "--prioclass=3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&["--cpus_allowed=4000"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cpus_allowed [4000]"),
        "{}",
        stderr(&out)
    );
}

/// Runs null-engine jobs (no file is touched) and returns fio-style JSON.
fn fio_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", "--output-format=json"];
    all.extend_from_slice(args);
    json(&iolens(&all))
}

#[test]
fn description_appears_in_json_normal_and_terse_output() {
    let job = [
        "--name=d",
        "--ioengine=null",
        "--size=64k",
        "--description=cold cache",
    ];
    let report = fio_json(&job);
    assert_eq!(report["jobs"][0]["desc"], "cold cache");
    let mut normal = vec!["run"];
    normal.extend_from_slice(&job);
    assert!(stdout(&iolens(&normal)).contains("  Description  : [cold cache]\n"));
    let mut terse = vec!["run", "--minimal"];
    terse.extend_from_slice(&job);
    let line = stdout(&iolens(&terse));
    assert_eq!(line.trim_end().rsplit(';').next(), Some("cold cache"));
    // Without a description fio writes no "desc" key at all.
    let plain = fio_json(&["--name=p", "--ioengine=null", "--size=64k"]);
    assert!(plain["jobs"][0].get("desc").is_none());
}

#[test]
fn stats_0_runs_the_job_but_leaves_it_out_of_jobs_and_group_totals() {
    let jobs = [
        "--ioengine=null",
        "--size=64k",
        "--name=shown",
        "--name=hidden",
        "--stats=0",
        "--size=1m",
    ];
    let report = fio_json(&jobs);
    let reported = report["jobs"].as_array().unwrap();
    assert_eq!(reported.len(), 1);
    assert_eq!(reported[0]["jobname"], "shown");
    let mut normal = vec!["run"];
    normal.extend_from_slice(&jobs);
    let text = stdout(&iolens(&normal));
    let group = text.lines().find(|l| l.contains("READ: bw=")).unwrap();
    assert!(group.contains("io=64.0KiB"), "{group}");
}

/// A 64 KiB tmpfs mounted on a scratch directory (root only); unmounted on drop, also when
/// the test fails. Writing past 64 KiB there fails with ENOSPC, a real I/O error.
struct FullFilesystem {
    dir: tempfile::TempDir,
}

impl FullFilesystem {
    fn mount() -> Option<Self> {
        if !crate::support::is_root() {
            return None;
        }
        let dir = scratch();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            return None;
        }
        // 64 KiB left: the jobs' writes fit the filesystem, so they run until ENOSPC
        // (writes larger than the whole filesystem are refused before they start).
        let full = Self { dir };
        let filler = vec![1u8; (1 << 20) - (64 << 10)];
        std::fs::write(full.dir.path().join("filler"), filler).unwrap();
        Some(full)
    }
}

impl Drop for FullFilesystem {
    fn drop(&mut self) {
        crate::support::unmount(self.dir.path());
    }
}

#[test]
fn continue_on_error_counts_tolerated_errors_and_the_job_goes_on() {
    let Some(full) = FullFilesystem::mount() else {
        eprintln!("skipped: needs root to mount a small tmpfs");
        return;
    };
    let file = full.dir.path().join("f").display().to_string();
    let filename = format!("--filename={file}");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--output-format=json",
            "--name=e",
            &filename,
            "--rw=write",
            "--bs=4k",
            "--size=256k",
        ];
        args.extend_from_slice(extra);
        iolens(&args)
    };
    // fio 3.33: ',' separates the read and write lists; all 64 writes are issued, the
    // 48 past the end fail, "error" holds the first failure, and the exit status is 0.
    let report = json(&run(&[
        "--continue_on_error=write",
        "--ignore_error=,ENOSPC",
    ]));
    let job = &report["jobs"][0];
    assert_eq!(job["error"], libc::ENOSPC);
    assert_eq!(job["total_err"], 48);
    assert_eq!(job["first_error"], libc::ENOSPC);
    assert_eq!(job["write"]["total_ios"], 64);
    assert_eq!(job["write"]["io_bytes"], 64 * 1024);
    // ENOSPC is not among the errors continue_on_error tolerates by default (EIO, EILSEQ).
    let out = run(&["--continue_on_error=write"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(report["jobs"][0]["total_err"], 1);
}

/// Runs one job on a file in a fresh scratch directory: (exit status, fio-style JSON or
/// Null, stderr, the file's path).
fn file_job(args: &[&str]) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    let dir = scratch();
    let file = dir.path().join("f");
    let filename = format!("--filename={}", file.display());
    let mut all = vec!["run", "--output-format=json", "--name=f", &filename];
    all.extend_from_slice(args);
    (iolens(&all), file, dir)
}

#[test]
fn allow_file_create_0_refuses_a_missing_file_and_create_only_does_no_io() {
    let (out, file, _dir) = file_job(&["--size=64k", "--allow_file_create=0"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("allow_file_create=0"),
        "{}",
        stderr(&out)
    );
    assert!(!file.exists());

    let (out, file, _dir) = file_job(&["--size=64k", "--rw=write", "--create_only=1"]);
    let report = json(&out);
    assert_eq!(report["jobs"][0]["write"]["io_bytes"], 0);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 64 * 1024);
}

/// fio creates a create_on_open file when its job opens it: a file of the second
/// group is born after the first group's last write, not when the run starts.
#[test]
fn create_on_open_creates_the_file_when_its_group_starts() {
    let dir = scratch();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let job_file = dir.path().join("two-groups.fio");
    std::fs::write(
        &job_file,
        format!(
            "[first]\nfilename={}\nsize=64k\nrw=write\nthinktime=10ms\n\
             [second]\nstonewall\nfilename={}\nsize=64k\nrw=write\ncreate_on_open=1\n",
            first.display(),
            second.display()
        ),
    )
    .unwrap();
    let out = iolens(&[
        "run",
        "--output-format=json",
        &job_file.display().to_string(),
    ]);
    assert_eq!(json(&out)["jobs"][1]["write"]["io_bytes"], 64 * 1024);
    let born = match std::fs::metadata(&second).unwrap().created() {
        Ok(born) => born,
        Err(e) => {
            eprintln!("skipped: the filesystem keeps no birth time: {e}");
            return;
        }
    };
    let first_written = std::fs::metadata(&first).unwrap().modified().unwrap();
    assert!(born >= first_written, "{born:?} before {first_written:?}");

    std::fs::remove_file(&second).unwrap();
    let filename = format!("--filename={}", second.display());
    let out = iolens(&[
        "run",
        "--name=r",
        &filename,
        "--size=64k",
        "--create_on_open=1",
    ]);
    assert!(
        stderr(&out).contains("create_on_open=1"),
        "{}",
        stderr(&out)
    );
    assert!(!second.exists());
}

#[test]
fn fallocate_pre_read_and_fadvise_hint_run_a_job() {
    use std::os::unix::fs::MetadataExt;
    // A write job under fallocate=keep starts from an empty file that the writes fill.
    let (out, file, _dir) = file_job(&["--size=64k", "--rw=write", "--fallocate=keep"]);
    assert_eq!(json(&out)["jobs"][0]["write"]["io_bytes"], 64 * 1024);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 64 * 1024);
    let (out, file, _dir) = file_job(&[
        "--size=64k",
        "--rw=write",
        "--fallocate=truncate",
        "--create_only=1",
    ]);
    assert!(out.status.success());
    assert_eq!(std::fs::metadata(&file).unwrap().blocks(), 0);
    let (out, _file, _dir) = file_job(&[
        "--size=64k",
        "--rw=randread",
        "--pre_read=1",
        "--fadvise_hint=random",
    ]);
    assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"], 64 * 1024);
}

#[test]
fn percentage_random_and_file_service_type_cover_every_file() {
    for service in ["random:2", "sequential", "roundrobin:3"] {
        let service = format!("--file_service_type={service}");
        let report = fio_json(&[
            "--name=s",
            "--ioengine=null",
            "--size=64k",
            "--nrfiles=4",
            "--rw=randread",
            "--percentage_random=50",
            &service,
        ]);
        assert_eq!(
            report["jobs"][0]["read"]["io_bytes"],
            64 * 1024,
            "{service}"
        );
    }
}

/// Each job's (name, job_runtime in ms) from fio-style JSON.
fn runtimes_ms(report: &serde_json::Value) -> Vec<(String, u64)> {
    report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let name = j["jobname"].as_str().unwrap().to_string();
            (name, j["job_runtime"].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn exitall_stops_the_group_when_any_job_ends_also_for_worker_processes() {
    // Set on the long job only; as in fio, the short job's end stops it.
    let started = std::time::Instant::now();
    let report = fio_json(&[
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--name=short",
        "--runtime=200ms",
        "--name=long",
        "--runtime=20s",
        "--exitall",
    ]);
    // Without exitall the long job runs its 20 s; any bound well below that holds on a busy machine.
    let elapsed = started.elapsed();
    assert!(
        elapsed.as_secs() < 15,
        "expected the run to end well before the long job's 20 s, it took {elapsed:?}"
    );
    let runtimes = runtimes_ms(&report);
    assert_eq!(runtimes.len(), 2, "expected two jobs, got {runtimes:?}");
    assert!(
        runtimes[1].1 < 10_000,
        "expected the long job stopped early (runtime below 10 s), got {runtimes:?}"
    );
}

#[test]
fn exit_what_all_also_skips_the_later_groups() {
    let jobs = |exit_what: &str| {
        let exit_what = format!("--exit_what={exit_what}");
        let report = fio_json(&[
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--thread",
            "--exitall",
            &exit_what,
            "--name=short",
            "--runtime=100ms",
            "--name=long",
            "--runtime=20s",
            "--name=next",
            "--stonewall",
            "--runtime=100ms",
        ]);
        runtimes_ms(&report)
    };
    let stonewall = jobs("stonewall");
    assert!(stonewall[1].1 < 2_000, "{stonewall:?}");
    assert!(stonewall[2].1 >= 100, "{stonewall:?}");
    let all = jobs("all");
    assert!(all[1].1 < 2_000, "{all:?}");
    assert!(all.get(2).is_none_or(|(_, ms)| *ms == 0), "{all:?}");
}

#[test]
fn wait_for_starts_a_job_after_the_named_one_ends() {
    let started = std::time::Instant::now();
    let report = fio_json(&[
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--runtime=300ms",
        "--name=first",
        "--name=second",
        "--wait_for=first",
    ]);
    // One after the other, not side by side.
    assert!(
        started.elapsed().as_millis() >= 600,
        "{:?}",
        started.elapsed()
    );
    let runtimes = runtimes_ms(&report);
    assert!(runtimes.iter().all(|(_, ms)| *ms >= 300), "{runtimes:?}");
    let out = iolens(&[
        "run",
        "--ioengine=null",
        "--size=1m",
        "--name=a",
        "--wait_for=b",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("names no earlier job"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn thinktime_spin_spends_the_think_time_on_the_cpu() {
    let usr_cpu = |spin: &str| {
        let spin = format!("--thinktime_spin={spin}");
        let report = fio_json(&[
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=300ms",
            "--thinktime=2ms",
            &spin,
        ]);
        report["jobs"][0]["usr_cpu"].as_f64().unwrap()
    };
    let (sleeping, spinning) = (usr_cpu("0"), usr_cpu("2ms"));
    // How much CPU the spinning worker gets depends on how busy the machine is (a few per
    // cent with two CPU hogs and other builds beside it); a sleeping one takes almost none.
    // That the spin never yields is pinned by the unit test of spin_until_ns.
    assert!(
        spinning > sleeping * 3.0 + 1.0,
        "expected the spinning job to use clearly more user CPU than the sleeping one: \
         sleeping {sleeping:.2} %, spinning {spinning:.2} %"
    );
}

/// Runs `args` and returns the exit code and the first job's fio-style JSON.
fn failing_job(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut all = vec!["run", "--output-format=json"];
    all.extend_from_slice(args);
    let out = iolens(&all);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", stderr(&out)));
    (out.status.code(), report["jobs"][0].clone())
}

#[test]
fn max_latency_fails_the_job_on_the_first_slower_io() {
    let dir = scratch();
    let file = format!("--filename={}", dir.path().join("f").display());
    // 1 us: no real read is that fast; the write side has no limit.
    let (code, job) = failing_job(&["--name=m", "--size=64k", &file, "--max_latency=1,10s"]);
    assert_eq!(code, Some(1));
    assert_eq!(job["error"], 110, "{job}");
    assert_eq!(job["read"]["total_ios"], 1, "{job}");
    let (code, job) = failing_job(&[
        "--name=m",
        "--size=64k",
        &file,
        "--rw=write",
        "--max_latency=1,10s",
    ]);
    assert_eq!(code, Some(0), "{job}");
}

#[test]
fn rate_iops_min_fails_a_job_that_falls_below_after_settling() {
    let started = std::time::Instant::now();
    // 10 ms of think time per I/O: about 100 IOPS, under the floor of 1000.
    let (code, job) = failing_job(&[
        "--name=slow",
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--runtime=20s",
        "--thinktime=10ms",
        "--rate_iops_min=1000",
        "--rate_cycle=100",
    ]);
    assert_eq!(
        code,
        Some(1),
        "expected exit 1 for the failed job, got {code:?}"
    );
    assert_eq!(
        job["error"], 5,
        "expected EIO (5) as the job's error: {job}"
    );
    // Without the floor the job runs its 20 s.
    let elapsed = started.elapsed();
    assert!(
        elapsed.as_secs() < 15,
        "expected the job to fail well before its 20 s runtime, it took {elapsed:?}"
    );
    let out = iolens(&[
        "run",
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--rate_iops=10",
        "--rate_iops_min=20",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn iodepth_low_lets_a_full_queue_drain_before_refilling() {
    let dir = scratch();
    let filename = format!("--filename={}", dir.path().join("f").display());
    let share_at_16 = |low: &str| {
        let low = format!("--iodepth_low={low}");
        // fio's null engine never holds more than one batch, so a real queue
        let report = fio_json(&[
            "--name=q",
            "--ioengine=io_uring",
            &filename,
            "--size=1m",
            "--iodepth=16",
            // One completion per reap, so the queue could be topped up each time.
            "--iodepth_batch_complete_max=1",
            &low,
        ]);
        report["jobs"][0]["iodepth_level"]["16"].as_f64().unwrap()
    };
    assert!(share_at_16("16") > 80.0);
    assert!(share_at_16("4") < 20.0);
}

#[test]
fn filename_format_names_the_files_a_job_creates() {
    let dir = scratch();
    let directory = format!("--directory={}", dir.path().display());
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=fmt",
        &directory,
        "--size=64k",
        "--nrfiles=2",
        "--rw=write",
        "--filename_format=data.$jobname.$filenum",
    ]);
    assert_eq!(json(&out)["jobs"][0]["write"]["io_bytes"], 64 * 1024);
    for file in ["data.fmt.0", "data.fmt.1"] {
        assert!(dir.path().join(file).exists(), "{file} missing");
    }
}

#[test]
fn rw_sequencer_identical_moves_the_same_bytes_in_runs_of_one_offset() {
    let report = fio_json(&[
        "--name=seq",
        "--ioengine=null",
        "--size=64k",
        "--rw=randread:4",
        "--rw_sequencer=identical",
    ]);
    assert_eq!(report["jobs"][0]["read"]["io_bytes"], 64 * 1024);
    assert_eq!(report["jobs"][0]["read"]["total_ios"], 16);
}

#[test]
fn unified_rw_reporting_merges_the_directions_as_fio_does() {
    let job = |mode: &str| {
        let mode = format!("--unified_rw_reporting={mode}");
        let args = ["--name=u", "--ioengine=null", "--size=256k", "--rw=randrw"];
        let mut all = args.to_vec();
        all.push(&mode);
        fio_json(&all)["jobs"][0].clone()
    };
    // mixed: one block instead of read, write, trim and sync
    let mixed = job("mixed");
    assert_eq!(mixed["mixed"]["io_bytes"], 256 * 1024);
    assert_eq!(mixed["mixed"]["total_ios"], 64);
    assert!(mixed.get("read").is_none() && mixed.get("sync").is_none());
    // both: the directions, then their sum
    let both = job("2");
    let ios = |dir: &str| both[dir]["total_ios"].as_u64().unwrap();
    assert_eq!(ios("read") + ios("write"), ios("mixed"));
    assert_eq!(ios("mixed"), 64);
    assert!(job("none").get("mixed").is_none());

    let out = iolens(&[
        "run",
        "--name=u",
        "--ioengine=null",
        "--size=256k",
        "--rw=randrw",
        "--unified_rw_reporting=mixed",
    ]);
    let text = stdout(&out);
    assert!(text.contains("  mixed: IOPS="), "{text}");
    assert!(text.contains("  MIXED: bw="), "{text}");
    assert!(!text.contains("  read: IOPS="), "{text}");
}

/// The offsets (KiB) of a sequential 4k read job's I/Os, in completion order, from
/// its per-I/O latency log (`log_offset=1`).
fn logged_read_offsets_kib(args: &[&str]) -> Vec<u64> {
    let dir = scratch();
    let prefix = dir.path().join("lg").display().to_string();
    let directory = format!("--directory={}", dir.path().display());
    let log = format!("--write_lat_log={prefix}");
    let mut all = vec![
        "run",
        "--name=z",
        &directory,
        "--rw=read",
        "--bs=4k",
        "--ioengine=psync",
        &log,
        "--log_offset=1",
    ];
    all.extend_from_slice(args);
    let out = iolens(&all);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = std::fs::read_to_string(format!("{prefix}_clat.1.log")).unwrap();
    log.lines()
        .map(|line| line.split(", ").nth(4).unwrap().parse::<u64>().unwrap() / 1024)
        .collect()
}

#[test]
fn zonemode_strided_reads_zonesize_bytes_per_zone_as_fio() {
    // fio 3.33, same options on a 256k file: 0 4 8 12 96 100 104 108 192 196 200 204 0 …
    let offsets = logged_read_offsets_kib(&[
        "--size=256k",
        "--zonemode=strided",
        "--zonesize=16k",
        "--zonerange=64k",
        "--zoneskip=32k",
    ]);
    let round = [0, 4, 8, 12, 96, 100, 104, 108, 192, 196, 200, 204];
    assert_eq!(offsets.len(), 64);
    assert_eq!(offsets[..24], round.repeat(2)[..]);
}

#[test]
fn openfiles_caps_the_files_a_worker_reads_at_a_time() {
    // four 16k files: round robin over all of them, or one file after another
    let all = logged_read_offsets_kib(&["--size=64k", "--nrfiles=4"]);
    assert_eq!(all[..8], [0, 0, 0, 0, 4, 4, 4, 4]);
    let one_at_a_time = logged_read_offsets_kib(&["--size=64k", "--nrfiles=4", "--openfiles=1"]);
    assert_eq!(one_at_a_time, [0, 4, 8, 12].repeat(4));
    let two = logged_read_offsets_kib(&["--size=64k", "--nrfiles=4", "--openfiles=2"]);
    assert_eq!(two[..4], [0, 0, 4, 4]);
}

/// Blocks a file holds on its device (`st_blocks`, 512-byte units).
fn allocated_blocks(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks()
}

#[test]
fn trim_on_a_file_punches_holes_and_keeps_its_length() {
    let dir = scratch();
    let path = dir.path().join("t");
    let filename = format!("--filename={}", path.display());
    let write = iolens(&["run", "--name=w", &filename, "--size=1m", "--rw=write"]);
    assert!(write.status.success(), "{}", stderr(&write));
    let full = allocated_blocks(&path);
    assert!(full >= 2048, "the written file holds {full} blocks");
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=t",
        &filename,
        "--size=1m",
        "--rw=trim",
        "--bs=4k,4k,64k",
    ]);
    let report = json(&out);
    let job = &report["jobs"][0];
    assert_eq!(job["trim"]["io_bytes"], 1 << 20, "{}", job["trim"]);
    assert_eq!(job["trim"]["total_ios"], 16);
    assert_eq!(job["write"]["total_ios"], 0);
    assert!(job["trim"]["bw_bytes"].as_u64().unwrap() > 0);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
    assert!(
        allocated_blocks(&path) < full / 4,
        "{} blocks left",
        allocated_blocks(&path)
    );
}

#[test]
fn trimwrite_trims_then_writes_every_block() {
    let dir = scratch();
    let path = dir.path().join("tw");
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=tw",
        &format!("--filename={}", path.display()),
        "--size=256k",
        "--rw=trimwrite",
    ]);
    let job = &json(&out)["jobs"][0];
    for dir in ["trim", "write"] {
        assert_eq!(job[dir]["io_bytes"], 256 << 10, "{dir}: {}", job[dir]);
        assert_eq!(job[dir]["total_ios"], 64);
    }
    // the writes come after the trims: the file ends up fully allocated
    assert!(allocated_blocks(&path) >= 512);
}

#[test]
fn the_normal_output_has_a_trim_block() {
    let out = iolens(&[
        "run",
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--rw=randtrim",
    ]);
    let text = stdout(&out);
    assert!(text.contains("  trim: IOPS="), "{text}");
    assert!(text.contains("issued rwts: total=0,0,256,0"), "{text}");
    assert!(text.contains("   TRIM: bw="), "{text}");
}

#[test]
fn steadystate_ends_a_stable_job_early_and_reports_the_window() {
    let report = fio_json(&[
        "--name=steady",
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--runtime=20",
        "--rate_iops=2000",
        "--numjobs=2",
        "--group_reporting",
        "--steadystate=iops:20%",
        "--ss_dur=2",
    ]);
    let job = &report["jobs"][0];
    let ss = &job["steadystate"];
    assert_eq!(ss["attained"], 1, "expected steady state attained: {ss}");
    // Two samples of a second each are needed, and then the job ends, not after its 20 s.
    let runtime_ms = job["job_runtime"].as_u64().unwrap();
    assert!(
        (1_900..20_000).contains(&runtime_ms),
        "expected the job to end after its 2 s window and before its 20 s runtime, got {runtime_ms} ms"
    );
    assert_eq!(ss["ss"], "iops:20.000000%", "{ss}");
    assert_eq!(ss["duration"], 2, "{ss}");
    assert!(ss["criterion"].as_str().unwrap().ends_with('%'), "{ss}");
    // Two workers at 2000 IOPS each, judged together: about 4000, never one worker's
    // 2000; at most 10 % above it (a stalled worker catches up on 100 ms of backlog).
    let iops: Vec<u64> = ss["data"]["iops"]
        .as_array()
        .expect("iops samples")
        .iter()
        .map(|v| v.as_u64().expect("a whole number"))
        .collect();
    assert_eq!(iops.len(), 2, "expected two samples: {ss}");
    assert!(
        iops.iter().all(|s| (2_500..=4_500).contains(s)),
        "expected samples near 4000 IOPS (both workers), got {iops:?}"
    );
    // What attained means: each sample within 20 % of their mean.
    let mean = iops.iter().sum::<u64>() as f64 / 2.0;
    assert!(
        iops.iter().all(|&s| (s as f64 - mean).abs() <= 0.2 * mean),
        "expected samples within 20 % of their mean {mean}, got {iops:?}"
    );
    // Each sample is a rate over about a second: bytes and I/Os round apart.
    let bw_in_ios = ss["data"]["bw"][0].as_f64().unwrap() / 4096.0;
    assert!(
        (bw_in_ios - iops[0] as f64).abs() < 2.0,
        "expected the bw sample ({bw_in_ios} I/Os) to match the iops sample {}",
        iops[0]
    );
    // A job without steadystate has no such key, as fio.
    let plain = fio_json(&["--name=plain", "--ioengine=null", "--size=64k"]);
    assert!(plain["jobs"][0].get("steadystate").is_none());
}

/// Steady-state windows size nothing by their length up front: a 1-day window with a
/// 50000-day ramp ends after its 1 MiB (256 I/Os), unsteady, in 2 GiB of address space, and a
/// 50000-day window (69 GB of samples, which aborted) is refused in one line.
#[test]
fn steadystate_windows_allocate_only_what_they_sample() {
    let run = |window: &str| {
        let mut command = crate::support::limited(&["--as=2147483648"])?;
        let out = command
            .args(["run", "--no-history", "--output-format=json", "--thread"])
            .args([
                "--name=long",
                "--ioengine=null",
                "--size=1m",
                "--number_ios=1000",
            ])
            .args(["--steadystate=iops:10%", "--ss_ramp=50000d"])
            .arg(format!("--ss_dur={window}"))
            .output()
            .unwrap();
        Some(out)
    };
    let Some(day) = run("1d") else {
        return;
    };
    let report = json(&day);
    let ss = &report["jobs"][0]["steadystate"];
    assert_eq!(ss["duration"], 86_400, "{ss}");
    assert_eq!(ss["attained"], 0, "{ss}");
    assert_eq!(report["jobs"][0]["read"]["total_ios"], 256);
    let refused = run("50000d").unwrap();
    crate::support::assert_failed_saying(
        &refused,
        2,
        "steadystate_duration=50000d: a window of more than 1 day is not kept",
    );
}

#[test]
fn a_runtime_of_50000_days_allocates_nothing_for_it() {
    // The rate series once reserved a sample per 500 ms of the planned runtime: 69 GB.
    let Some(mut command) = crate::support::limited(&["--as=2147483648"]) else {
        return;
    };
    let out = command
        .args(["run", "--no-history", "--output-format=json"])
        .args([
            "--name=long",
            "--ioengine=null",
            "--size=1m",
            "--runtime=50000d",
        ])
        .output()
        .unwrap();
    let report = json(&out);
    assert_eq!(report["jobs"][0]["read"]["total_ios"], 256);
}

#[test]
fn latency_target_finds_a_depth_reports_it_and_ends_the_job() {
    let report = fio_json(&[
        "--name=target",
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--runtime=20",
        "--iodepth=8",
        // Far above what the null engine takes: every depth meets it.
        "--latency_target=1s",
        "--latency_window=100ms",
        "--latency_percentile=99.5",
    ]);
    let job = &report["jobs"][0];
    // Depths 1, 2, 4, 8, then settled: four windows, not the runtime.
    let runtime_ms = job["job_runtime"].as_u64().unwrap();
    assert!(
        (300..20_000).contains(&runtime_ms),
        "expected four 100 ms windows and then the end, before the 20 s runtime: got {runtime_ms} ms"
    );
    assert_eq!(
        job["latency_depth"], 8,
        "expected the search to settle at depth 8: {job}"
    );
    assert_eq!(job["latency_target"], 1_000_000_000u64);
    assert_eq!(job["latency_window"], 100_000);
    assert_eq!(job["latency_percentile"], 99.5);
    // An unreachable target settles at depth 1.
    let report = fio_json(&[
        "--name=target",
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--runtime=20",
        "--iodepth=8",
        "--latency_target=1ns",
        "--latency_window=100ms",
    ]);
    assert_eq!(report["jobs"][0]["latency_depth"], 1);
}

#[test]
fn thinktime_blocks_type_issue_is_accepted_and_paces_the_job() {
    let report = fio_json(&[
        "--name=think",
        "--ioengine=null",
        "--size=64k",
        "--iodepth=4",
        "--thinktime=20ms",
        "--thinktime_blocks=4",
        "--thinktime_blocks_type=issue",
    ]);
    // 16 I/Os in blocks of 4: three pauses between them.
    let runtime_ms = report["jobs"][0]["job_runtime"].as_u64().unwrap();
    // A pause after every I/O instead would take 300 ms at least; none, a few ms.
    assert!(
        (55..300).contains(&runtime_ms),
        "expected three 20 ms pauses (60 ms and a little), got {runtime_ms} ms"
    );
}

#[test]
fn a_misspelled_choice_is_refused_in_one_line_naming_the_choices() {
    let cases = [
        (
            "--sync=dsnyc",
            "sync=dsnyc: unknown value 'dsnyc' (use one of 0, none, 1, sync, dsync, e.g. sync=dsync)",
        ),
        (
            "--fallocate=natve",
            "fallocate=natve: unknown value 'natve' (use one of none, native, posix, keep, \
             truncate, 0, 1, e.g. fallocate=posix)",
        ),
        (
            "--verify=crc32x",
            "verify=crc32x: unknown value 'crc32x' (use one of 0, crc32c, crc32c-intel, crc64, \
             xxhash, sha256, md5, pattern, pattern_hdr, meta, null, e.g. verify=crc32c)",
        ),
        (
            "--unified_rw_reporting=3",
            "unified_rw_reporting=3: unknown value '3' (use one of none, mixed, both, 0, 1, 2, \
             e.g. unified_rw_reporting=mixed)",
        ),
        (
            "--random_distribution=zipff:1.2",
            "random_distribution=zipff:1.2: unknown value 'zipff' (use one of random, zipf, \
             pareto, normal, zoned, sequence, e.g. random_distribution=zipf:1.2)",
        ),
        (
            "--sync=dsync:1",
            "sync=dsync:1: 'dsync' takes no ':' parameter (use one of 0, none, 1, sync, dsync, \
             e.g. sync=dsync)",
        ),
    ];
    for (arg, message) in cases {
        let out = iolens(&["run", "--parse-only", "--name=a", "--size=1m", arg]);
        let expected = format!("iolens: command line argument 3: {message}\n");
        assert!(
            !out.status.success(),
            "expected {arg} to be refused, saw success"
        );
        assert_eq!(
            stderr(&out),
            expected,
            "expected {arg} refused in one line naming the choices, saw otherwise"
        );
    }
}

/// fio has no exabyte suffix: its size parser knows k, m, g, t and p (with their
/// `b`/`ib` forms) and reads the digits of `2e` or `2EiB` as 2 bytes, ignoring the
/// rest. iolens refuses the unknown suffix instead of shrinking the job to 2 bytes.
#[test]
fn an_exabyte_suffix_is_refused_where_fio_reads_bytes() {
    for size in ["2e", "2E", "2EiB"] {
        let arg = format!("--size={size}");
        let common = ["--name=x", "--ioengine=null", "--rw=read", "--bs=4k", &arg];
        match crate::support::isolated("fio").args(common).output() {
            Ok(fio) => {
                let said = format!("{}{}", stdout(&fio), stderr(&fio));
                assert!(
                    said.contains("2 < 4096"),
                    "fio was expected to read {size} as 2 bytes: {said}"
                );
            }
            Err(e) => eprintln!("skipping the fio half: fio cannot run ({e})"),
        }
        let out = iolens(&[&["run", "--no-history"][..], &common[..]].concat());
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("size={size}: unknown size suffix")),
            "{}",
            stderr(&out)
        );
    }
}
