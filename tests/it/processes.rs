//! Workers as processes (fio's default without --thread): their reports add
//! up, merge with group_reporting, mix with thread workers in one group, and
//! carry their I/O errors back to the parent.

use crate::support::{iolens, json, scratch, stderr};
use serde_json::Value;
use std::path::Path;

const SIZE: u64 = 1 << 20;

/// Read `SIZE` bytes of one file per worker, with `jobs` options (each job starts at `--name=`).
fn read_run(dir: &Path, jobs: &[&str]) -> std::process::Output {
    let file = format!("--filename={}", dir.join("target").display());
    let size = format!("--size={SIZE}");
    let mut args = vec![
        "run",
        "--output-format=json",
        &file,
        &size,
        "--rw=read",
        "--bs=4k",
    ];
    args.extend_from_slice(jobs);
    iolens(&args)
}

fn io_bytes(job: &Value) -> u64 {
    job["read"]["io_bytes"].as_u64().unwrap()
}

#[test]
fn each_worker_process_reports_its_own_job() {
    let dir = scratch();
    let report = json(&read_run(dir.path(), &["--name=p", "--numjobs=3"]));
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3, "{report}");
    for job in jobs {
        assert_eq!(io_bytes(job), SIZE, "{job}");
        assert_eq!(job["error"], 0);
    }
    assert_eq!(jobs.iter().map(io_bytes).sum::<u64>(), 3 * SIZE);
}

#[test]
fn group_reporting_merges_worker_processes() {
    let dir = scratch();
    let report = json(&read_run(
        dir.path(),
        &["--name=p", "--numjobs=3", "--group_reporting"],
    ));
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{report}");
    assert_eq!(io_bytes(&jobs[0]), 3 * SIZE);
    assert_eq!(jobs[0]["read"]["total_ios"], 3 * SIZE / 4096);
}

#[test]
fn thread_and_process_workers_share_a_group() {
    let dir = scratch();
    let report = json(&read_run(dir.path(), &["--name=t", "--thread", "--name=p"]));
    let jobs = report["jobs"].as_array().unwrap();
    let names: Vec<_> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["t", "p"]);
    for job in jobs {
        assert_eq!(io_bytes(job), SIZE, "{job}");
        assert_eq!(job["groupid"], jobs[0]["groupid"]);
    }
}

#[test]
fn an_io_error_in_a_worker_process_fails_the_run() {
    let dir = scratch();
    // Polled completions (hipri) need O_DIRECT: buffered reads fail in the worker.
    let out = read_run(dir.path(), &["--name=h", "--ioengine=io_uring", "--hipri"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("job 'h'"), "{message}");
    // The worker process itself ran fine: the error came back inside its result.
    assert!(!message.contains("worker process failed"), "{message}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(report["jobs"][0]["error"], 0, "{report}");
}

/// Workers the system refuses (the user's process limit, as a user it applies to) end the
/// run: the started ones are let go and stopped, the report comes, and stderr has one line
/// saying how many started and which limits hold; the run failed (exit 1), never a hang.
/// Threads and worker processes alike.
#[test]
fn workers_the_system_refuses_end_the_run_in_one_line_not_a_hang() {
    // as root RLIMIT_NPROC does not hold: the run goes as nobody
    if !crate::scenario_support::have_tools(&["setpriv", "prlimit"]) {
        return;
    }
    let dir = scratch();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    for kind in [&["--thread"][..], &[]] {
        let mut command = crate::support::isolated("setpriv");
        command
            .current_dir(dir.path())
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .args(["prlimit", "--nproc=20", "--", env!("CARGO_BIN_EXE_iolens")])
            .args([
                "run",
                "--no-history",
                "--name=many",
                "--ioengine=null",
                "--size=1m",
            ])
            .args(["--numjobs=50", "--group_reporting"])
            .args(kind);
        let out = crate::support::output_within(command, std::time::Duration::from_secs(120));
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{kind:?}: {text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{kind:?}: {text}");
        assert!(
            lines[0].starts_with("iolens: job 'many': job 'many' worker ")
                && lines[0].contains("cannot start a")
                && lines[0].contains("EAGAIN")
                && lines[0].contains("limits: RLIMIT_NPROC 20")
                && lines[0].ends_with("lower numjobs or raise the limit"),
            "{kind:?}: {text}"
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("many: (groupid=0, jobs=50)"),
            "{kind:?}: expected the report"
        );
    }
}

/// A worker process's relay of `--status-interval` snapshots ends with the worker, not at
/// the interval's end: a 1 MiB job with `--status-interval=1h` ends (it waited an hour).
#[test]
fn a_long_status_interval_does_not_hold_a_worker_process() {
    let mut command = crate::support::command();
    command.args([
        "run",
        "--no-history",
        "--name=short",
        "--ioengine=null",
        "--size=1m",
    ]);
    command.arg("--status-interval=1h");
    let out = crate::support::output_within(command, std::time::Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
