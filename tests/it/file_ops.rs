//! The file and directory operation engines against fio: the same job (200 names in a
//! scratch directory) run by both must count the same operations in the same direction,
//! leave the same names behind, and time every operation (clat samples, percentiles).
//! fio 3.33 has only the file engines; the dir engines are compared where the
//! installed fio has them (3.34 and later) and checked alone otherwise.

use crate::fio_match::{fio, iolens_json};
use crate::support::{iolens, scratch, stderr};
use serde_json::Value;
use std::path::Path;

const NRFILES: u64 = 200;
const BS: u64 = 4096;

/// What one run decided: per direction [io_bytes, total_ios, clat samples], whether
/// the clat percentiles are there, and the job's error.
#[derive(Debug, PartialEq, Eq)]
struct Counted {
    read: [u64; 3],
    write: [u64; 3],
    percentiles: bool,
    error: u64,
}

fn counted(doc: &Value, counted_in: &str) -> Counted {
    let job = &doc["jobs"][0];
    let numbers = |d: &str| {
        let side = &job[d];
        [&side["io_bytes"], &side["total_ios"], &side["clat_ns"]["N"]].map(|v| {
            v.as_u64()
                .unwrap_or_else(|| panic!("{d}: a number in {side}"))
        })
    };
    Counted {
        read: numbers("read"),
        write: numbers("write"),
        percentiles: job[counted_in]["clat_ns"]["percentile"].is_object(),
        error: job["error"].as_u64().expect("the job's error"),
    }
}

/// The names in `dir`, sorted, each with "/" if it is a directory.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap();
            let slash = if entry.file_type().unwrap().is_dir() {
                "/"
            } else {
                ""
            };
            format!("{}{slash}", entry.file_name().to_string_lossy())
        })
        .collect();
    names.sort();
    names
}

/// The installed fio has `engine` (None, with the reason printed, if not).
fn fio_has(engine: &str) -> bool {
    match crate::support::isolated("fio").arg("--enghelp").output() {
        Ok(out)
            if String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|line| line.trim() == engine) =>
        {
            true
        }
        Ok(_) => {
            eprintln!("skipping the fio comparison: the installed fio has no ioengine={engine}");
            false
        }
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            false
        }
    }
}

/// The job both tools run in `dir`: `nrfiles` names in `dir/d`.
fn job_args(engine: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--name=t",
        "--directory=d",
        &format!("--ioengine={engine}"),
        "--filesize=4k",
        &format!("--nrfiles={NRFILES}"),
        "--output-format=json",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Runs `engine` under iolens (and fio, where it has the engine) in fresh scratch
/// directories after `before` ran there; what each counted and left in `d`.
fn run_both(engine: &str, before: Option<&str>, extra: &[&str]) -> Vec<(Counted, Vec<String>)> {
    let counted_in = if extra.contains(&"--rw=write") {
        "write"
    } else {
        "read"
    };
    let mut seen = Vec::new();
    let iolens_dir = scratch();
    let fio_dir = scratch();
    let dirs: Vec<&Path> = if fio_has(engine) && before.is_none_or(fio_has) {
        vec![iolens_dir.path(), fio_dir.path()]
    } else {
        vec![iolens_dir.path()]
    };
    for (i, dir) in dirs.into_iter().enumerate() {
        std::fs::create_dir(dir.join("d")).unwrap();
        let run = |engine: &str, extra: &[&str]| {
            let args = job_args(engine, extra);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            if i == 0 {
                iolens_json(dir, &args).0
            } else {
                fio(dir, &args).expect("fio ran for --enghelp")
            }
        };
        if let Some(first) = before {
            run(first, &[]);
        }
        let doc = run(engine, extra);
        seen.push((counted(&doc, counted_in), listing(&dir.join("d"))));
    }
    seen
}

/// t.0.0 … t.0.199, as both tools name generated files, with `suffix` ("/" for dirs).
fn names(suffix: &str) -> Vec<String> {
    let mut all: Vec<String> = (0..NRFILES).map(|f| format!("t.0.{f}{suffix}")).collect();
    all.sort();
    all
}

fn all_counted_in(read: bool) -> Counted {
    let done = [NRFILES * BS, NRFILES, NRFILES];
    Counted {
        read: if read { done } else { [0; 3] },
        write: if read { [0; 3] } else { done },
        percentiles: true,
        error: 0,
    }
}

#[test]
fn each_file_and_dir_engine_does_one_operation_per_name_as_fio_does() {
    // engine, the engine run first, extra options, the names left
    type Case = (
        &'static str,
        Option<&'static str>,
        &'static [&'static str],
        Vec<String>,
    );
    let cases: [Case; 7] = [
        ("filecreate", None, &["--rw=write"], names("")),
        ("filecreate", None, &[], names("")),
        ("filestat", None, &[], names("")),
        ("filedelete", None, &[], vec![]),
        ("dircreate", None, &[], names("/")),
        (
            "dirstat",
            Some("dircreate"),
            &["--stat_type=lstat"],
            names("/"),
        ),
        ("dirdelete", None, &[], vec![]),
    ];
    for (engine, before, extra, left) in cases {
        let expected = (all_counted_in(!extra.contains(&"--rw=write")), left);
        for (i, seen) in run_both(engine, before, extra).into_iter().enumerate() {
            let who = ["iolens", "fio"][i];
            assert_eq!(
                seen, expected,
                "{who} ioengine={engine} {extra:?}: expected one counted, timed operation per \
                 name and the names left as shown"
            );
        }
    }
}

#[test]
fn filestat_s_stat_types_each_count_every_file() {
    for stat_type in ["stat", "lstat", "statx"] {
        let option = format!("--stat_type={stat_type}");
        for (i, seen) in run_both("filestat", None, &[&option])
            .into_iter()
            .enumerate()
        {
            let who = ["iolens", "fio"][i];
            assert_eq!(
                seen,
                (all_counted_in(true), names("")),
                "{who} filestat {option}: expected 200 timed stats of 200 laid-out files"
            );
        }
    }
}

#[test]
fn deleting_names_already_gone_fails_the_job_with_enoent_as_in_fio() {
    for engine in ["filedelete", "dirdelete"] {
        // the second pass finds every name deleted by the first
        let seen = run_both(engine, None, &["--loops=2"]);
        for (i, (counted, left)) in seen.into_iter().enumerate() {
            let who = ["iolens", "fio"][i];
            assert_eq!(
                (counted.error, counted.read[1], left),
                (libc::ENOENT as u64, NRFILES, vec![]),
                "{who} {engine} loops=2: expected error ENOENT after the first pass's {NRFILES} deletes"
            );
        }
    }
    let dir = scratch();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let out = iolens(&[
        "run",
        "--no-history",
        "--name=t",
        &format!("--directory={}", dir.path().join("d").display()),
        "--ioengine=filedelete",
        "--filesize=4k",
        "--nrfiles=2",
        "--loops=2",
    ]);
    let text = stderr(&out);
    let expected = format!(
        "ioengine=filedelete: unlink {}: ENOENT",
        dir.path().join("d/t.0.0").display()
    );
    assert_eq!(out.status.code(), Some(1), "expected exit code 1: {text}");
    assert!(
        text.lines().any(|l| l.contains(&expected)),
        "expected a line naming the engine, the call and the file ({expected}), saw: {text}"
    );
}

#[test]
fn a_stat_engine_refuses_a_missing_name_it_may_not_create() {
    for (engine, what) in [
        ("filestat", "does not exist"),
        ("dirstat", "no such directory"),
    ] {
        let dir = scratch();
        let out = iolens(&[
            "run",
            "--no-history",
            "--name=t",
            &format!("--directory={}", dir.path().display()),
            &format!("--ioengine={engine}"),
            "--filesize=4k",
            "--nrfiles=2",
            "--allow_file_create=0",
        ]);
        let text = stderr(&out);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{engine}: expected exit code 2: {text}"
        );
        assert!(
            text.contains(what) && text.contains("allow_file_create=0") && text.lines().count() == 1,
            "{engine}: expected one line saying the name {what} and allow_file_create=0 forbids it, saw: {text}"
        );
        assert_eq!(
            listing(dir.path()),
            Vec::<String>::new(),
            "{engine}: expected nothing made"
        );
    }
}
