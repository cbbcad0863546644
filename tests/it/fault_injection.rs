//! Faults a real device has, injected below the filesystem (tests/it/fault_fs.rs):
//! what iolens reports for each, checked end to end through the binary. Each
//! test skips with a printed reason where FUSE cannot be mounted.

use crate::fault_fs::{Fault, FaultFs, Op, Rule};
use crate::fio_match::fio;
use crate::support::{assert_failed_saying, command, scratch, stderr, LoopDevice};
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BLOCK: u64 = 4096;
/// A 1 MiB file: 256 blocks.
const SIZE: u64 = 1 << 20;

/// iolens `run` on `target` (job 'faulty', psync, 4 KiB blocks, the whole file).
fn run_on(target: &Path, args: &[&str]) -> Output {
    let target = format!("--filename={}", target.display());
    let mut all = vec![
        "run",
        "--no-history",
        "--name=faulty",
        &target,
        "--size=1m",
        "--bs=4k",
        "--ioengine=psync",
    ];
    all.extend_from_slice(args);
    command().args(&all).output().expect("run iolens")
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "expected a JSON report on stdout ({e}), saw stderr: {}",
            stderr(out)
        )
    })
}

/// An EIO is reported naming the job, the file, the offset and the errno: on the
/// FUSE file itself and on a loop device over it (the block-device path).
#[test]
fn an_eio_names_the_job_file_offset_and_errno() {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    fs.inject(Rule::always(
        Op::Read,
        5 * BLOCK..6 * BLOCK,
        Fault::Fail(libc::EIO),
    ));
    let out = run_on(&fs.file(), &["--rw=read"]);
    let file = fs.file().display().to_string();
    for fragment in ["job 'faulty'", &file, "offset 20480", "EIO"] {
        assert_failed_saying(&out, 1, fragment);
    }
    let Some(device) = LoopDevice::attach(&fs.file()) else {
        return;
    };
    let out = run_on(&device.device, &["--rw=read", "--direct=1"]);
    for fragment in ["job 'faulty'", device.path(), "offset 20480", "EIO"] {
        assert_failed_saying(&out, 1, fragment);
    }
}

/// continue_on_error and ignore_error as fio 3.33 counts them: the same errors,
/// the same bytes and I/Os, on the same faulty file.
#[test]
fn tolerated_errors_count_as_fios() {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    let file = format!("--filename={}", fs.file().display());
    let cases: [&[&str]; 3] = [
        &["--continue_on_error=read"],
        &["--continue_on_error=all"],
        &["--ignore_error=EIO"],
    ];
    for options in cases {
        fs.heal();
        for at in [3, 40, 41, 200] {
            fs.inject(Rule::always(
                Op::Read,
                at * BLOCK..(at + 1) * BLOCK,
                Fault::Fail(libc::EIO),
            ));
        }
        let mut args = vec![
            "--name=faulty",
            &file,
            "--size=1m",
            "--bs=4k",
            "--ioengine=psync",
            "--rw=read",
            "--output-format=json",
        ];
        args.extend_from_slice(options);
        let out = command()
            .arg("run")
            .arg("--no-history")
            .args(&args)
            .output()
            .unwrap();
        let ours = report(&out)["jobs"][0].clone();
        let dir = scratch();
        let Some(theirs) = fio(dir.path(), &args) else {
            return;
        };
        let theirs = &theirs["jobs"][0];
        for key in ["error", "total_err", "first_error"] {
            assert_eq!(
                ours[key], theirs[key],
                "{options:?}: expected fio's {key}, saw iolens {ours}\nfio {theirs}"
            );
        }
        for key in ["io_bytes", "total_ios"] {
            assert_eq!(
                ours["read"][key], theirs["read"][key],
                "{options:?}: expected fio's read {key}, saw iolens {}\nfio {}",
                ours["read"], theirs["read"]
            );
        }
    }
}

/// Two writes delayed by 600 ms: they are the job's max and its top percentile,
/// the latency log has them at their offsets, the per-interval series shows each
/// spike in its own interval, and max_latency trips on the first.
#[test]
fn latency_spikes_show_where_and_when_they_happened() {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    let delay = Duration::from_millis(600);
    let spikes = [40 * BLOCK, 200 * BLOCK];
    for at in spikes {
        fs.inject(Rule::always(Op::Write, at..at + BLOCK, Fault::Delay(delay)));
    }
    let logs = scratch();
    let log = logs.path().join("spike");
    let log_arg = format!("--write_lat_log={}", log.display());
    let out = run_on(
        &fs.file(),
        &[
            "--rw=write",
            "--output-format=iolens-json",
            &log_arg,
            "--log_offset=1",
        ],
    );
    let spiked = report(&out);
    let job = &spiked["jobs"][0];
    let clat = &job["dirs"][1]["clat"];
    let delay_ns = delay.as_nanos() as u64;
    assert!(
        clat["max_ns"].as_u64().unwrap() >= delay_ns,
        "expected max ≥ 600 ms, saw {clat}"
    );
    let percentile = |p: f64| {
        clat["percentiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e[0] == p)
            .unwrap()[1]
            .as_u64()
            .unwrap()
    };
    assert!(
        percentile(99.9) >= delay_ns * 9 / 10,
        "expected p99.9 at the spikes, saw {clat}"
    );
    assert!(
        percentile(50.0) < delay_ns / 2,
        "expected the median below the spikes, saw {clat}"
    );

    let text = std::fs::read_to_string(logs.path().join("spike_clat.1.log")).unwrap();
    // time (ms), latency (ns), direction, size, offset
    let slow: Vec<(u64, u64)> = text
        .lines()
        .map(|l| {
            l.split(',')
                .map(|f| f.trim().parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|f| f[1] >= delay_ns * 9 / 10)
        .map(|f| (f[0], f[4]))
        .collect();
    assert_eq!(
        slow.iter().map(|s| s.1).collect::<Vec<_>>(),
        spikes,
        "expected the slow entries of the latency log at the delayed offsets, saw {slow:?}"
    );

    let observations = &spiked["observations"];
    let interval_ns = observations["interval_ns"].as_u64().unwrap();
    let intervals = observations["jobs"][0]["intervals"].as_array().unwrap();
    let spiky: Vec<usize> = (0..intervals.len())
        .filter(|&i| intervals[i]["lat_max_ns"].as_u64().unwrap() >= delay_ns * 9 / 10)
        .collect();
    assert_eq!(
        spiky.len(),
        2,
        "expected two intervals with a spike, saw {intervals:?}"
    );
    // Each spike lands in the sample after its I/O completed: the samples' gap is
    // the log's, give or take one interval on each side.
    let t_ns = observations["t_ns"].as_array().unwrap();
    let gap_ms = (t_ns[spiky[1]].as_u64().unwrap() - t_ns[spiky[0]].as_u64().unwrap()) / 1_000_000;
    let logged_gap_ms = slow[1].0 - slow[0].0;
    let slack_ms = 2 * interval_ns / 1_000_000;
    assert!(
        gap_ms.abs_diff(logged_gap_ms) <= slack_ms,
        "expected the series' spikes {logged_gap_ms} ms apart as in the latency log, saw {gap_ms} ms (samples {spiky:?})"
    );

    let out = run_on(
        &fs.file(),
        &[
            "--rw=write",
            "--output-format=iolens-json",
            "--max_latency=300ms",
        ],
    );
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected max_latency to fail the job, saw: {err}"
    );
    assert!(
        err.contains("max_latency") && err.contains("offset 163840"),
        "expected max_latency named at offset 163840, saw: {err}"
    );
    let job = &report(&out)["jobs"][0];
    assert_eq!(
        job["errno"],
        libc::ETIMEDOUT,
        "expected ETIMEDOUT, saw {job}"
    );
    assert_eq!(
        job["dirs"][1]["total_ios"], 41,
        "expected the job to stop at the 41st write, saw {job}"
    );
}

/// A write pass twice over the file, the second pass's write of block 7 dropped
/// and of block 9 torn: verify says stale and torn, at those offsets.
#[test]
fn verify_classifies_dropped_writes_as_stale_and_torn_ones_as_torn() {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    fs.inject(Rule::once(Op::Write, 7 * BLOCK..8 * BLOCK, Fault::Drop).after(1));
    fs.inject(Rule::once(Op::Write, 9 * BLOCK..10 * BLOCK, Fault::Tear).after(1));
    let states = scratch();
    let aux = format!("--aux-path={}", states.path().display());
    let out = run_on(
        &fs.file(),
        &[
            "--rw=write",
            "--loops=2",
            "--verify=crc32c",
            "--output-format=iolens-json",
            &aux,
        ],
    );
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected verify to fail the run, saw: {err}"
    );
    assert_eq!(fs.fired(), 2, "expected both faults to have fired");
    let verify = &report(&out)["verify"][0];
    let bad: Vec<(u64, &str)> = verify["bad_blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["offset"].as_u64().unwrap(), b["fault"].as_str().unwrap()))
        .collect();
    assert_eq!(
        bad,
        [(7 * BLOCK, "stale"), (9 * BLOCK, "torn")],
        "expected block 7 stale and 9 torn, saw {verify}"
    );
}

/// A write that never completes (its FUSE request is read and never answered, so
/// even SIGKILL cannot free the worker): the watchdog names the worker, its wait
/// channel, the file and the offset, --io-timeout ends the job, and the worker,
/// which cannot be joined, is left behind: the report has the other job's results
/// and the stuck worker's live counters, the run and job are marked, the history
/// keeps it, and iolens exits 1. Releasing the write lets the stuck worker go.
fn a_stuck_worker_is_left_behind(threads: bool) {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    fs.inject(Rule::once(Op::Write, 12 * BLOCK..13 * BLOCK, Fault::Hang));
    let scratch_dir = scratch();
    let db_arg = format!("--db={}", scratch_dir.path().join("history.db").display());
    let output = scratch_dir.path().join("report.json");
    let file = format!("--filename={}", fs.file().display());
    let healthy = format!("--filename={}", scratch_dir.path().join("g").display());
    // Two jobs at once: the stuck one and one that finishes.
    let mut run = command();
    run.current_dir(scratch_dir.path())
        .args([
            "run",
            &db_arg,
            "--io-timeout=1s",
            "--output-format=iolens-json",
            POSTRUN,
        ])
        .arg(format!("--output={}", output.display()))
        .args(["--bs=4k", "--ioengine=psync", "--rw=write", "--size=1m"])
        .args(["--name=faulty", &file, "--name=healthy", &healthy])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if threads {
        run.arg("--thread");
    }
    let iolens = run.spawn().unwrap();
    let report = report_written(&output);
    assert_eq!(
        fs.held(),
        1,
        "expected the write still held after the report"
    );
    assert_eq!(
        report["interrupted"], true,
        "expected the run marked interrupted, saw {}",
        report["interrupted"]
    );
    let job = &report["jobs"][0];
    assert_eq!(
        job["errno"],
        libc::ETIMEDOUT,
        "expected the job failed with ETIMEDOUT, saw {job}"
    );
    let error = job["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("in request_wait_answer") && error.contains("at offset 49152"),
        "expected the job's error to name the wait channel and offset, saw {error:?}"
    );
    assert_eq!(
        job["dirs"][1]["total_ios"], 12,
        "expected the stuck worker's 12 writes from its live counters, saw {job}"
    );
    let other = &report["jobs"][1];
    assert_eq!(
        other["dirs"][1]["total_ios"], 256,
        "expected the healthy job's 256 writes, saw {other}"
    );

    let stored = stored_run(&db_arg, 1);
    assert_eq!(
        stored["interrupted"], true,
        "expected the stored run marked interrupted"
    );
    assert_eq!(
        stored["jobs"][0]["dirs"][1]["total_ios"], 12,
        "expected the stored partial counts"
    );

    let pid: u32 = error
        .split("(pid ")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "expected the stuck worker's process {pid} still there before the release"
    );
    assert_eq!(fs.release(), 1, "expected one held write to release");
    let out = iolens.wait_with_output().unwrap();
    for fragment in [
        "--io-timeout",
        "job 'faulty' worker 0 (pid ",
        &format!("waiting on {} at offset 49152", fs.file().display()),
        "did not come back; the report has what they had done",
        "interrupted: the results are partial",
    ] {
        assert_failed_saying(&out, 1, fragment);
    }
    assert_postruns(&scratch_dir.path().join("postruns"), 1, &out);
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(
        gone,
        "expected the stuck worker's process {pid} to exit once its write was answered"
    );
}

/// Each job's postrun appends a line to `postruns` in the current directory.
const POSTRUN: &str = "--exec_postrun=echo ran >> postruns";

/// The postrun of every worker that came back ran (`lines` in all) and none of
/// the worker left behind, which is said.
fn assert_postruns(file: &Path, lines: usize, out: &Output) {
    let ran = std::fs::read_to_string(file).unwrap_or_default();
    assert_eq!(
        ran.lines().count(),
        lines,
        "expected {lines} postrun(s), of the workers that came back, saw {ran:?}"
    );
    assert_failed_saying(
        out,
        1,
        "job 'faulty': exec_postrun not run for its 1 worker(s) left behind, stuck in the kernel",
    );
}

/// Run `id` of the history `db_arg` (`--db=…`), as iolens-json.
fn stored_run(db_arg: &str, id: u32) -> Value {
    let out = command()
        .args([
            "show",
            &id.to_string(),
            db_arg,
            "--output-format=iolens-json",
        ])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("expected run {id} in the history ({e}): {}", stderr(&out)))
}

/// The JSON report iolens writes to `path`, once it is there. A process whose
/// worker thread is stuck exits only when that thread can: the report must be
/// complete before.
fn report_written(path: &Path) -> Value {
    (0..1200)
        .find_map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            std::fs::read(path)
                .ok()
                .and_then(|text| serde_json::from_slice(&text).ok())
        })
        .expect("expected the report written within a minute")
}

#[test]
fn a_stuck_worker_process_is_left_behind_with_a_partial_report() {
    a_stuck_worker_is_left_behind(false);
}

#[test]
fn a_stuck_worker_thread_is_left_behind_with_a_partial_report() {
    a_stuck_worker_is_left_behind(true);
}

/// --repeat 3 whose second repetition hangs on a write: the worker thread is left
/// behind, and the report has repetition 1 whole and 2 partial and marked, both
/// stored in the history; iolens exits 1, repetition 3 never starts, and nothing
/// stays mounted.
#[test]
fn a_stuck_worker_in_a_repetition_leaves_the_repetitions_so_far_with_the_partial_one() {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    fs.inject(Rule::once(Op::Write, 12 * BLOCK..13 * BLOCK, Fault::Hang).after(1));
    let scratch_dir = scratch();
    let db_arg = format!("--db={}", scratch_dir.path().join("history.db").display());
    let output = scratch_dir.path().join("report.json");
    let iolens = command()
        .current_dir(scratch_dir.path())
        .args(["run", &db_arg, "--repeat=3", "--thread", "--io-timeout=1s"])
        .args(["--output-format=iolens-json", POSTRUN])
        .arg(format!("--output={}", output.display()))
        .args(["--bs=4k", "--ioengine=psync", "--rw=write", "--size=1m"])
        .args([
            "--name=faulty",
            &format!("--filename={}", fs.file().display()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let report = report_written(&output);
    let seen: Vec<(bool, u64)> = report["repetitions"]
        .as_array()
        .expect("expected a --repeat report with its repetitions")
        .iter()
        .map(|r| {
            (
                r["interrupted"].as_bool().unwrap(),
                r["jobs"][0]["dirs"][1]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [(false, 256), (true, 12)],
        "expected repetition 1 whole (256 writes) and 2 marked interrupted with the stuck worker's 12"
    );
    let stored = stored_run(&db_arg, 2);
    assert_eq!(
        (
            &stored["interrupted"],
            &stored["jobs"][0]["dirs"][1]["total_ios"]
        ),
        (&Value::Bool(true), &Value::from(12)),
        "expected the stored second repetition partial and marked"
    );
    assert_eq!(fs.release(), 1, "expected one held write to release");
    let out = iolens.wait_with_output().unwrap();
    for fragment in [
        "iolens: repetition 2/3",
        "did not come back; the report has what they had done",
        "interrupted: the results are partial",
    ] {
        assert_failed_saying(&out, 1, fragment);
    }
    assert!(
        !stderr(&out).contains("repetition 3/3"),
        "expected no third repetition, saw: {}",
        stderr(&out)
    );
    assert_postruns(&scratch_dir.path().join("postruns"), 1, &out);
    let mount_point = fs.file().parent().unwrap().display().to_string();
    drop(fs);
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(
        !mounts.contains(&mount_point),
        "expected {mount_point} unmounted, saw it in /proc/self/mounts"
    );
}

/// `iolens ab` whose B run hangs on a write (no --io-timeout: the watchdog stops
/// the time-based run past its plan): the worker thread is left behind, and A's
/// run and B's partial one are compared, B's marked, both stored; exit 1.
#[test]
fn a_stuck_worker_in_an_ab_run_leaves_the_comparison_of_the_runs_so_far() {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    fs.inject(Rule::once(Op::Write, 12 * BLOCK..13 * BLOCK, Fault::Hang));
    let scratch_dir = scratch();
    let db_arg = format!("--db={}", scratch_dir.path().join("history.db").display());
    let arm = |name: &str, file: &Path| {
        format!(
            "--name={name} --filename={} --thread --ioengine=psync --rw=write --bs=4k --size=1m --runtime=1 --time_based",
            file.display()
        )
    };
    let printed = scratch_dir.path().join("out.txt");
    let iolens = command()
        .args([
            "ab",
            &arm("a", &scratch_dir.path().join("g")),
            &arm("b", &fs.file()),
        ])
        .args(["--pairs=1", &db_arg])
        .stdout(std::fs::File::create(&printed).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let marked = "run 2 (B): interrupted, its results are partial; job 'b': ";
    // the watchdog stops the run two margins (20 s) past its plan, then waits 10 s
    let text = (0..2400)
        .find_map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            std::fs::read_to_string(&printed)
                .ok()
                .filter(|text| text.contains(marked))
        })
        .expect("expected the comparison with B's run marked within two minutes");
    assert!(
        text.starts_with("A: A `--name=a") && text.contains("\nB: B `--name=b"),
        "expected A's run compared with B's partial one, saw:\n{text}"
    );
    let stored = stored_run(&db_arg, 2);
    assert_eq!(
        (&stored["interrupted"], &stored["jobs"][0]["name"]),
        (&Value::Bool(true), &Value::from("b")),
        "expected B's run stored, marked interrupted"
    );
    assert_eq!(fs.release(), 1, "expected one held write to release");
    let out = iolens.wait_with_output().unwrap();
    assert_failed_saying(&out, 1, "interrupted: the results are partial");
}

#[test]
fn the_fault_filesystem_does_what_it_is_told() {
    let Some(fs) = FaultFs::mount("f", SIZE) else {
        return;
    };
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(fs.file())
        .unwrap();
    fs.inject(Rule::once(
        Op::Read,
        BLOCK..2 * BLOCK,
        Fault::Fail(libc::EIO),
    ));
    let mut buf = [0u8; BLOCK as usize];
    let err = file
        .read_at(&mut buf, BLOCK)
        .expect_err("expected the first read at 4096 to fail");
    assert_eq!(
        err.raw_os_error(),
        Some(libc::EIO),
        "expected EIO, saw {err}"
    );
    file.read_at(&mut buf, BLOCK)
        .expect("expected the second read at 4096 to pass (once)");
    fs.inject(Rule::always(Op::Write, 0..BLOCK, Fault::Drop));
    fs.inject(Rule::always(Op::Write, 2 * BLOCK..3 * BLOCK, Fault::Tear).after(1));
    file.write_all_at(&[7u8; 4096], 0).unwrap();
    file.write_all_at(&[8u8; 4096], 2 * BLOCK).unwrap();
    file.write_all_at(&[9u8; 4096], 2 * BLOCK).unwrap();
    let stored = fs.stored();
    assert!(
        stored[..4096].iter().all(|&b| b == 0),
        "expected the dropped write not stored"
    );
    assert!(
        stored[8192..10240].iter().all(|&b| b == 9) && stored[10240..12288].iter().all(|&b| b == 8),
        "expected the second write torn after its first half, the first whole"
    );
    fs.heal();
    fs.inject(Rule::once(Op::Write, 4 * BLOCK..5 * BLOCK, Fault::Hang));
    let path = fs.file();
    let writer = std::thread::spawn(move || {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.write_all_at(&[5u8; 4096], 4 * BLOCK)
    });
    while fs.held() == 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!writer.is_finished(), "expected the hung write to wait");
    assert_eq!(fs.release(), 1, "expected one held write");
    writer
        .join()
        .unwrap()
        .expect("expected the released write to succeed");
    assert!(
        fs.stored()[4 * BLOCK as usize..5 * BLOCK as usize]
            .iter()
            .all(|&b| b == 5),
        "expected the released write stored"
    );
}

/// A layout whose writes never complete (a frozen filesystem) is named on stderr
/// instead of hanging silently, and a signal ends it once the write returns: no
/// job runs, the report says so (exit 130), the file is left as far as it got.
#[test]
fn a_stalled_layout_is_named_and_a_signal_ends_it() {
    use std::io::{BufRead, BufReader};
    let Some(fs) = FaultFs::mount("f", 0) else {
        return;
    };
    fs.inject(Rule::always(Op::Write, 0..u64::MAX, Fault::Hang));
    let mut child = command()
        .args(["run", "--no-history", "--name=r", "--rw=read", "--bs=64k"])
        .args(["--size=16m", "--io-timeout=1s"])
        .arg(format!("--filename={}", fs.file().display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run iolens");
    let (lines, seen) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut said = String::new();
    let named = loop {
        match seen.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                said.push_str(&line);
                said.push('\n');
                if line.contains("has made no progress") {
                    break line;
                }
            }
            Err(_) => {
                let _ = child.kill();
                fs.release();
                panic!("expected the stalled layout named on stderr, saw: {said}");
            }
        }
    };
    assert!(
        named.contains("setup: laying out ") && named.contains("a frozen filesystem"),
        "{named}"
    );
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    // The filesystem thaws: the write the kernel held returns, and no further one is issued.
    std::thread::sleep(Duration::from_millis(300));
    fs.heal();
    fs.release();
    let status = child.wait().expect("wait for iolens");
    while let Ok(line) = seen.recv_timeout(Duration::from_secs(5)) {
        said.push_str(&line);
        said.push('\n');
    }
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains("the layout stopped with the run"), "{said}");
}
