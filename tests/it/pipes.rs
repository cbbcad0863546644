//! A closed stdout and stderr (`iolens … 2>&1 | head -5` after head has quit):
//! every subcommand ends with its ordinary exit code, never a panic (101).

use crate::support::scratch;
use std::path::Path;
use std::process::{Command, ExitStatus};

/// Run iolens with stdout and stderr on a pipe whose reader is already closed,
/// so every write fails with EPIPE.
fn with_closed_pipe(db: &Path, args: &[&str]) -> ExitStatus {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_iolens"))
        .env("IOLENS_DB", db)
        .args(args)
        .stdout(writer.try_clone().expect("a second pipe writer"))
        .stderr(writer)
        .status()
        .expect("run iolens")
}

fn assert_quiet_success(db: &Path, args: &[&str]) {
    let status = with_closed_pipe(db, args);
    assert_eq!(
        status.code(),
        Some(0),
        "expected `iolens {}` to exit 0 with stdout and stderr closed, got {status} \
         (101 is a panic; run it without the pipe to see its output)",
        args.join(" ")
    );
}

#[test]
fn every_subcommand_ends_quietly_on_a_closed_pipe() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let run = [
        "run",
        "--name=pipe",
        "--ioengine=null",
        "--size=4m",
        "--bs=4k",
        "--rw=randread",
    ];
    assert_quiet_success(&db, &run);
    assert_quiet_success(&db, &run);
    let html = dir.path().join("c.html");
    assert_quiet_success(
        &db,
        &["compare", "1", "2", "--html", html.to_str().unwrap()],
    );
    assert!(
        html.exists(),
        "expected compare to write {} although nobody reads its output",
        html.display()
    );
    assert_quiet_success(&db, &["history"]);
    assert_quiet_success(&db, &["history", "--trend", "iops"]);
    assert_quiet_success(&db, &["show", "1"]);
    assert_quiet_success(&db, &["show-jobs", "--name=x", "--size=1m"]);
    assert_quiet_success(&db, &["quick", "--help"]);
    assert_quiet_success(&db, &["run", "--help"]);
    assert_quiet_success(&db, &["quick", "--show-job"]);

    let target = dir.path().join("quick");
    std::fs::create_dir(&target).unwrap();
    assert_quiet_success(
        &db,
        &[
            "quick",
            target.to_str().unwrap(),
            "--read-only",
            "--duration=200ms",
            "--ramp=0",
            "--size=4m",
        ],
    );
    let left: Vec<_> = std::fs::read_dir(&target).unwrap().collect();
    assert!(
        left.is_empty(),
        "expected quick to remove its temporary file with nobody reading its output, found {left:?}"
    );
}
