//! Every engine × read/write × direct/buffered against a real file: bytes
//! moved, data on disk, and fio's JSON keys.

use crate::support::{iolens, json, scratch, stderr};
use serde_json::Value;

const SIZE: u64 = 2 << 20;

fn run_job(engine: &str, rw: &str, direct: bool) -> (Value, Vec<u8>) {
    let dir = scratch();
    let f = dir.path().join("target");
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=t",
        &format!("--filename={}", f.display()),
        &format!("--size={SIZE}"),
        &format!("--ioengine={engine}"),
        &format!("--rw={rw}"),
        "--bs=4k",
        "--iodepth=8",
        &format!("--direct={}", u8::from(direct)),
    ]);
    let report = json(&out);
    let data = std::fs::read(&f).unwrap_or_default();
    (report, data)
}

/// fio's top keys; `disk_util` only when a target is on a block device (fio
/// leaves it out otherwise: the null engine touches none).
fn check_fio_keys(report: &Value, on_a_disk: bool) {
    for key in ["fio version", "timestamp", "jobs"] {
        assert!(report.get(key).is_some(), "missing top key {key}: {report}");
    }
    assert_eq!(report.get("disk_util").is_some(), on_a_disk, "{report}");
    let job = &report["jobs"][0];
    for key in [
        "jobname",
        "groupid",
        "error",
        "read",
        "write",
        "trim",
        "sync",
        "usr_cpu",
        "sys_cpu",
        "ctx",
        "iodepth_level",
        "latency_us",
    ] {
        assert!(job.get(key).is_some(), "missing job key {key}: {job}");
    }
    for key in [
        "io_bytes",
        "bw",
        "iops",
        "runtime",
        "total_ios",
        "clat_ns",
        "lat_ns",
        "slat_ns",
    ] {
        assert!(job["read"].get(key).is_some(), "missing read key {key}");
    }
}

#[test]
fn every_engine_reads_a_whole_file_direct_and_buffered() {
    for engine in iolens::data_engines() {
        for direct in [false, true] {
            // mmap cannot bypass the page cache; fio refuses that combination too.
            if engine == "mmap" && direct {
                continue;
            }
            let (report, _) = run_job(engine, "randread", direct);
            check_fio_keys(&report, engine != "null");
            let read = &report["jobs"][0]["read"];
            assert_eq!(read["io_bytes"], SIZE, "{engine} direct={direct}: {read}");
            assert_eq!(read["total_ios"], SIZE / 4096, "{engine} direct={direct}");
            assert_eq!(report["jobs"][0]["write"]["io_bytes"], 0);
            assert!(
                read["clat_ns"]["N"].as_u64().unwrap() > 0,
                "{engine}: no clat"
            );
        }
    }
}

#[test]
fn every_engine_writes_data_that_reaches_the_file() {
    for engine in iolens::data_engines() {
        for direct in [false, true] {
            if engine == "mmap" && direct {
                continue;
            }
            let (report, data) = run_job(engine, "write", direct);
            let write = &report["jobs"][0]["write"];
            assert_eq!(write["io_bytes"], SIZE, "{engine} direct={direct}: {write}");
            if engine == "null" {
                continue; // the null engine moves no data by design
            }
            assert_eq!(data.len() as u64, SIZE, "{engine}: file size");
            let zeros = data.iter().filter(|&&b| b == 0).count();
            assert!(
                zeros < data.len() / 50,
                "{engine} direct={direct}: {zeros} zero bytes: the written data is not in the file"
            );
        }
    }
}

#[test]
fn an_unknown_engine_is_one_line_naming_the_engines_in_a_job_file_and_on_the_command_line() {
    let dir = scratch();
    let file = dir.path().join("unknown.fio");
    std::fs::write(&file, "[a]\nioengine=nosuch\nsize=1m\n").unwrap();
    let choices = "(use one of sync, psync, pvsync, pvsync2, libaio, io_uring, posixaio, mmap, \
                   null, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, \
                   e.g. ioengine=io_uring)";
    let cases = [
        (
            vec!["run", "--no-history", file.to_str().unwrap()],
            format!("iolens: {}:2: ioengine=nosuch: unknown value 'nosuch' {choices}\n", file.display()),
        ),
        (
            vec!["run", "--no-history", "--name=a", "--size=1m", "--ioengine=nosuch"],
            format!("iolens: command line argument 3: ioengine=nosuch: unknown value 'nosuch' {choices}\n"),
        ),
    ];
    for (args, expected) in cases {
        let out = iolens(&args);
        assert_eq!(
            (out.status.code(), stderr(&out)),
            (Some(2), expected),
            "iolens {args:?}: expected exit 2 and one line naming the engines"
        );
    }
}

#[test]
fn time_based_runs_wrap_around_and_stop_on_time() {
    let dir = scratch();
    let f = dir.path().join("t");
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=t",
        &format!("--filename={}", f.display()),
        "--size=1m",
        "--rw=randread",
        "--runtime=1",
        "--time_based",
    ]);
    let report = json(&out);
    let read = &report["jobs"][0]["read"];
    assert!(
        read["io_bytes"].as_u64().unwrap() > 1 << 20,
        "did not wrap: {read}"
    );
    let runtime_ms = read["runtime"].as_u64().unwrap();
    assert!((900..3000).contains(&runtime_ms), "runtime {runtime_ms} ms");
}

#[test]
fn numjobs_with_group_reporting_merges_workers() {
    let dir = scratch();
    let f = dir.path().join("g");
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=g",
        &format!("--filename={}", f.display()),
        "--size=1m",
        "--rw=randread",
        "--numjobs=3",
        "--thread",
        "--group_reporting",
    ]);
    let report = json(&out);
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["read"]["io_bytes"], 3u64 << 20);
}

#[test]
fn io_uring_sqpoll_keeps_four_workers_at_depth_128_running() {
    // The SQPOLL kernel threads take entries at their own pace; a worker that refills a
    // slot before its thread moved the queue's head finds the queue full and must wait.
    let dir = scratch();
    let f = dir.path().join("target");
    let out = iolens(&[
        "run",
        "--output-format=json",
        "--name=sq",
        &format!("--filename={}", f.display()),
        "--size=8m",
        "--ioengine=io_uring",
        "--sqthread_poll=1",
        "--numjobs=4",
        "--iodepth=128",
        "--rw=randread",
        "--bs=4k",
        "--runtime=1",
        "--time_based",
    ]);
    let report = json(&out);
    let jobs = report["jobs"].as_array().expect("a jobs array");
    assert_eq!(
        jobs.len(),
        4,
        "expected one entry per worker, got {}",
        jobs.len()
    );
    for job in jobs {
        assert_eq!(job["error"], 0, "expected no error, got {}", job["error"]);
        let ios = job["read"]["total_ios"].as_u64().unwrap_or(0);
        assert!(ios > 0, "expected each worker to complete reads, got {ios}");
    }
}
