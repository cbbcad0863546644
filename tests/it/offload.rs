//! `io_submit_mode=offload`: fio's own suite jobs (t0010, t0013) through the fio drop-in,
//! the depth a blocking engine reaches with a pool of submit threads, upstream fio as the
//! oracle for what such a job moves and where (Debian's 3.33 hangs in this mode), and a stop (runtime, SIGINT) that leaves
//! no submit thread behind.

use crate::fio_command_line::shim;
use crate::fio_match::{entries, iolens_json, Counts};
use crate::fio_offsets::{fio_iolog_actions, per_io_log};
use crate::support::{scratch, stderr};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a job file of fio's suite through the drop-in as the suite does (JSON output);
/// the suite passes a job when fio exits 0 with nothing on stderr.
fn suite_job(name: &str, text: &str) -> Value {
    let dir = scratch();
    std::fs::write(dir.path().join(name), text).expect("write the job file");
    let fio = shim(dir.path());
    let out = fio(&["--output-format=json", name]);
    assert!(
        out.status.code() == Some(0) && out.stderr.is_empty(),
        "expected {name} to pass as in fio's suite (exit 0, empty stderr), saw exit {:?}: {}",
        out.status.code(),
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("expected {name} to print JSON ({e})"))
}

#[test]
fn fios_t0010_job_completes_with_fios_byte_count() {
    let doc = suite_job(
        "t0010-b7aae4ba.fio",
        "[test]\nioengine=null\nsize=10g\nio_submit_mode=offload\niodepth=16\n",
    );
    // fio 3.33: the 10 GiB in 4 KiB reads
    let expected: Counts = [[10 << 30, (10 << 30) / 4096], [0, 0]];
    assert_eq!(
        entries(&doc),
        [("test".to_string(), 0, expected)],
        "expected t0010 to read 10 GiB in 2621440 I/Os as fio does"
    );
}

#[test]
fn fios_t0013_job_with_serialize_overlap_completes() {
    let doc = suite_job(
        "t0013.fio",
        "[test]\nioengine=null\nthread=1\nsize=4K\nblocksize=4K\nio_submit_mode=offload\n\
         iodepth=1\nserialize_overlap=1\nnumjobs=8\nloops=1000000\nruntime=10\n",
    );
    let jobs = doc["jobs"].as_array().expect("a jobs array");
    assert_eq!(
        jobs.len(),
        8,
        "expected 8 entries (numjobs=8), saw {}",
        jobs.len()
    );
    for job in jobs {
        let ios = job["read"]["total_ios"].as_u64().unwrap_or(0);
        assert!(
            ios > 0 && job["error"] == 0,
            "expected every clone to read without error, saw {ios} I/Os, error {}",
            job["error"]
        );
    }
}

/// A 1 MiB file `f` of non-zero bytes in `dir` (fio 3.33 can hang laying out a file in
/// offload mode, so neither side lays one out).
fn target(dir: &Path) {
    let data: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8 + 1).collect();
    std::fs::write(dir.join("f"), data).expect("write the target file");
}

/// iolens' `iodepth_level` of the job's entry: percent of I/Os issued at depths 1, 2, 4, 8.
fn depth_levels(doc: &Value) -> [f64; 4] {
    ["1", "2", "4", "8"].map(|d| doc["jobs"][0]["iodepth_level"][d].as_f64().unwrap_or(0.0))
}

#[test]
fn a_blocking_engine_offloaded_keeps_iodepth_ios_in_flight() {
    let dir = scratch();
    target(dir.path());
    let job = |mode: &'static str| {
        let mut args = vec![
            "--output-format=json",
            "--name=p",
            "--filename=f",
            "--ioengine=psync",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=8",
        ];
        args.push(mode);
        let (doc, code) = iolens_json(dir.path(), &args);
        assert_eq!(code, 0, "expected the {mode} job to succeed: {doc}");
        doc
    };
    let inline = depth_levels(&job("--io_submit_mode=inline"));
    assert_eq!(
        inline,
        [100.0, 0.0, 0.0, 0.0],
        "expected psync inline to keep one I/O in flight, saw depths 1/2/4/8 {inline:?}"
    );
    let offload = depth_levels(&job("--io_submit_mode=offload"));
    // the worker fills its 8 slots before it waits for the first completion
    assert!(
        offload[3] > 0.0,
        "expected psync offloaded to reach 8 I/Os in flight, saw depths 1/2/4/8 {offload:?}"
    );
}

/// Runs `fio` with `args` as threads in `dir`, giving up after 20 s; None (with a printed
/// reason) without its report or when it hangs.
fn fio_within_20s(fio: &Path, dir: &Path, args: &[&str]) -> Option<Value> {
    let mut child = match crate::support::isolated(fio)
        .arg("--thread")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            return None;
        }
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait for fio").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("skipping the fio comparison: fio {args:?} hung");
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("fio's output");
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = &text[text.find('{').unwrap_or(0)..];
    let parsed = serde_json::from_str(doc);
    if let Err(e) = &parsed {
        eprintln!(
            "skipping the fio comparison: fio {args:?} ended without its report ({e}): {text}"
        );
    }
    parsed.ok()
}

#[test]
fn offloaded_jobs_move_what_fio_moves_at_the_same_offsets() {
    const ALL: u64 = 1 << 20;
    // (case, rw, expected counts, whether fio can run it: upstream fio aborts
    // on verify in offload mode, "inflight_idx already set")
    let cases: [(&str, &[&str], Counts, bool); 3] = [
        ("randread", &["--rw=randread"], [[ALL, 256], [0, 0]], true),
        ("randwrite", &["--rw=randwrite"], [[0, 0], [ALL, 256]], true),
        // the verify read-back counts among the reads, as in fio's rules
        (
            "write + verify",
            &["--rw=write", "--verify=crc32c"],
            [[ALL, 256], [ALL, 256]],
            false,
        ),
    ];
    // fio 3.33 (Debian's) hangs in offload mode on these psync jobs; upstream
    // fio runs them. One hang is enough to know this fio cannot be the oracle.
    let upstream = crate::support::upstream_fio("io_submit_mode", false);
    let mut fio_ends = upstream.is_some();
    for (case, rw, expected, fio_can) in cases {
        let dir = scratch();
        target(dir.path());
        let mut args = vec![
            "--name=o",
            "--filename=f",
            "--ioengine=psync",
            "--bs=4k",
            "--iodepth=8",
            "--io_submit_mode=offload",
            "--output-format=json",
        ];
        args.extend_from_slice(rw);
        let mut with_log = args.clone();
        with_log.extend(["--write_lat_log=io", "--log_offset=1"]);
        let (doc, code) = iolens_json(dir.path(), &with_log);
        assert_eq!(code, 0, "{case}: expected iolens to succeed: {doc}");
        let counts = entries(&doc);
        assert_eq!(
            counts,
            [("o".to_string(), 0, expected)],
            "{case}: expected iolens' [[read bytes, ios], [write bytes, ios]] to be fio's"
        );
        let mut issued = per_io_log(&dir.path().join("io_clat.1.log"));
        issued.sort_unstable();
        issued.dedup();
        let every_block: Vec<(u64, u64)> = (0..256).map(|b| (b * 4, 4)).collect();
        assert_eq!(
            issued, every_block,
            "{case}: expected iolens to touch every 4 KiB block (offset KiB, length KiB)"
        );
        args.push("--write_iolog=fio.iolog");
        let Some(fio_doc) = (fio_ends && fio_can)
            .then(|| fio_within_20s(upstream.as_deref()?, dir.path(), &args))
            .flatten()
        else {
            // not tried (fio_can) leaves fio_ends as it was
            fio_ends &= !fio_can;
            continue;
        };
        assert_eq!(entries(&fio_doc), counts, "{case}: upstream fio disagrees");
        let mut fio_ios: Vec<(u64, u64)> =
            fio_iolog_actions(&dir.path().join("fio.iolog"), &["read", "write"])
                .into_iter()
                .map(|(_, offset, len)| (offset, len))
                .collect();
        fio_ios.sort_unstable();
        fio_ios.dedup();
        assert_eq!(
            fio_ios, issued,
            "{case}: fio's offsets (left) differ from iolens'"
        );
    }
}

/// Waits up to `limit` for `child` to end; kills it and fails if it does not. Its
/// stdout went to `report.json` in its directory (a pipe could fill and stall it).
fn ended_within(
    mut child: std::process::Child,
    limit: Duration,
    what: &str,
) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("wait for iolens").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("expected iolens to end after {what} within {limit:?}; it hung (a submit thread left?)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("iolens' output")
}

/// Threads of `pid` named as submit threads.
fn submit_threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .filter(|name| name.starts_with("iolens-submit"))
                .count()
        })
        .unwrap_or(0)
}

fn offload_run(dir: &Path, runtime: &str) -> std::process::Child {
    target(dir);
    let report = std::fs::File::create(dir.join("report.json")).expect("create report.json");
    crate::support::command()
        .args([
            "run",
            "--no-history",
            "--output-format=iolens-json",
            "--name=o",
            "--filename=f",
            "--ioengine=psync",
            "--rw=randrw",
            "--bs=4k",
            "--iodepth=4",
            "--io_submit_mode=offload",
            "--thread",
            "--time_based",
            runtime,
        ])
        .current_dir(dir)
        .stdout(report)
        .stderr(Stdio::null())
        .spawn()
        .expect("start iolens")
}

#[test]
fn the_runtime_end_and_sigint_stop_the_submit_threads() {
    let dir = scratch();
    let out = ended_within(
        offload_run(dir.path(), "--runtime=1"),
        Duration::from_secs(60),
        "runtime=1",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected runtime=1 to end the run: {}",
        stderr(&out)
    );

    let dir = scratch();
    let child = offload_run(dir.path(), "--runtime=120");
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = submit_threads(pid);
    while seen < 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        seen = submit_threads(pid);
    }
    assert_eq!(
        seen, 4,
        "expected iodepth=4 submit threads to start, saw {seen}"
    );
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("send SIGINT");
    let out = ended_within(child, Duration::from_secs(60), "SIGINT");
    assert_eq!(
        out.status.code(),
        Some(130),
        "expected exit 130 after SIGINT: {}",
        stderr(&out)
    );
    let report = std::fs::read(dir.path().join("report.json")).expect("read report.json");
    let report: Value = serde_json::from_slice(&report).expect("a partial report");
    let ios = report["jobs"][0]["dirs"][0]["total_ios"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        report["interrupted"] == true && ios > 0,
        "expected an interrupted report with reads, saw interrupted={} and {ios} reads",
        report["interrupted"]
    );
}
