//! fio's verify state files: a write job cut short by `runtime=` saves how far
//! its writes got; a `verify_only` job with `verify_state_load=1` then checks
//! only those, while without the state it finds the blocks the writer never
//! reached. fio 3.33 runs the same jobs on its own file beside iolens' (each
//! tool checks only its own data format) and must decide the same.

use crate::support::{command, isolated, scratch, stderr};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

const SIZE: u64 = 16 << 20;

/// One tool: iolens (`run`) or fio.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Tool {
    Iolens,
    Fio,
}

impl Tool {
    /// Runs the job with `args` in `dir`; None (with the reason printed) when fio cannot run.
    fn run(self, dir: &Path, args: &[String]) -> Option<Output> {
        let mut cmd = match self {
            Tool::Iolens => {
                let mut c = command();
                c.args(["run", "--no-history"]);
                c
            }
            Tool::Fio => isolated("fio"),
        };
        match cmd.args(args).current_dir(dir).output() {
            Ok(out) => Some(out),
            Err(e) => {
                eprintln!("skipping the fio side: fio cannot run ({e})");
                None
            }
        }
    }
}

fn job(rw: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--name=w",
        "--filename=data",
        "--bs=4k",
        "--verify=crc32c",
        "--output-format=json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--rw={rw}"));
    args.push(format!("--size={SIZE}"));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// The fio-format JSON a run printed (fio may print notes before it).
fn doc(out: &Output, what: &str) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let from = text.find('{').unwrap_or(0);
    serde_json::from_str(&text[from..])
        .unwrap_or_else(|e| panic!("{what}: no JSON ({e}): {text}{}", stderr(out)))
}

fn io_bytes(doc: &Value, dir: &str) -> u64 {
    doc["jobs"][0][dir]["io_bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("expected jobs[0].{dir}.io_bytes in {doc}"))
}

/// The writer, cut short by its runtime: the bytes it wrote.
fn interrupted_writer(tool: Tool, dir: &Path, rw: &str, extra: &[&str]) -> Option<u64> {
    let limits = [&["--runtime=1", "--rate=2m"][..], extra].concat();
    let out = tool.run(dir, &job(rw, &limits))?;
    assert!(
        out.status.success(),
        "{tool:?}: expected the writer to succeed, got {:?}: {}",
        out.status.code(),
        stderr(&out)
    );
    let written = io_bytes(&doc(&out, "writer"), "write");
    assert!(
        written > 0 && written < SIZE && written.is_multiple_of(4096),
        "{tool:?}: expected the 1 s writer at 2 MiB/s to write some 4 KiB blocks of \
         {SIZE}, saw {written} bytes"
    );
    Some(written)
}

#[test]
fn a_verify_only_job_checks_what_the_saved_state_says_was_written() {
    for tool in [Tool::Iolens, Tool::Fio] {
        for rw in ["write", "randwrite"] {
            let dir = scratch();
            let Some(written) = interrupted_writer(tool, dir.path(), rw, &[]) else {
                return;
            };
            let state = dir.path().join("local-w-0-verify.state");
            assert!(
                state.exists(),
                "{tool:?} {rw}: expected the writer to save {}",
                state.display()
            );
            let verify = job(rw, &["--verify_only=1", "--verify_state_load=1"]);
            let out = tool.run(dir.path(), &verify).expect("ran before");
            assert!(
                out.status.success(),
                "{tool:?} {rw}: expected the verify with the state to pass, got {:?}: {}",
                out.status.code(),
                stderr(&out)
            );
            let read = io_bytes(&doc(&out, "verify"), "read");
            assert_eq!(
                read, written,
                "{tool:?} {rw}: expected the verify to read back the {written} bytes written, \
                 saw {read}"
            );
        }
    }
}

#[test]
fn without_the_state_the_blocks_never_written_are_bad() {
    for tool in [Tool::Iolens, Tool::Fio] {
        let dir = scratch();
        let Some(written) = interrupted_writer(tool, dir.path(), "write", &[]) else {
            return;
        };
        let out = tool
            .run(dir.path(), &job("write", &["--verify_only=1"]))
            .expect("ran before");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{tool:?}: expected the full verify to fail, got: {}",
            stderr(&out)
        );
        // Each names the first bad block: the first the writer never reached.
        let text = stderr(&out);
        let first_bad = text
            .split("offset ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{tool:?}: expected an offset in the error, got {text}"));
        assert_eq!(
            first_bad, written,
            "{tool:?}: expected the first bad block at {written}, where the writer stopped, \
             saw {first_bad}: {text}"
        );
    }
}

#[test]
fn verify_state_save_0_saves_nothing_and_aux_path_moves_the_files() {
    for tool in [Tool::Iolens, Tool::Fio] {
        let dir = scratch();
        let Some(_) = interrupted_writer(tool, dir.path(), "write", &["--verify_state_save=0"])
        else {
            return;
        };
        let state = dir.path().join("local-w-0-verify.state");
        assert!(
            !state.exists(),
            "{tool:?}: expected verify_state_save=0 to save no state"
        );
        let verify = job("write", &["--verify_only=1", "--verify_state_load=1"]);
        let out = tool.run(dir.path(), &verify).expect("ran before");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{tool:?}: expected the load of a missing state to fail, got {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("local-w-0-verify.state"),
            "{tool:?}: expected the error to name the missing file, got {}",
            stderr(&out)
        );
        let aux = dir.path().join("aux");
        std::fs::create_dir(&aux).expect("create the aux dir");
        let aux_flag = format!("--aux-path={}", aux.display());
        let Some(written) = interrupted_writer(tool, dir.path(), "write", &[&aux_flag]) else {
            return;
        };
        assert!(
            aux.join("local-w-0-verify.state").exists() && !state.exists(),
            "{tool:?}: expected the state in the --aux-path directory only"
        );
        let verify = job(
            "write",
            &["--verify_only=1", "--verify_state_load=1", &aux_flag],
        );
        let out = tool.run(dir.path(), &verify).expect("ran before");
        let read = io_bytes(&doc(&out, "verify"), "read");
        assert!(
            out.status.success() && read == written,
            "{tool:?}: expected the state from --aux-path to verify the {written} bytes \
             written, saw exit {:?} and {read}: {}",
            out.status.code(),
            stderr(&out)
        );
    }
}

#[test]
fn a_read_job_with_the_state_reads_and_checks_what_was_written() {
    for tool in [Tool::Iolens, Tool::Fio] {
        let dir = scratch();
        let Some(written) = interrupted_writer(tool, dir.path(), "write", &[]) else {
            return;
        };
        let out = tool
            .run(dir.path(), &job("read", &["--verify_state_load=1"]))
            .expect("ran before");
        assert!(
            out.status.success(),
            "{tool:?}: expected the read job with the state to pass, got {:?}: {}",
            out.status.code(),
            stderr(&out)
        );
        let read = io_bytes(&doc(&out, "read job"), "read");
        assert_eq!(
            read, written,
            "{tool:?}: expected the read job to stop after the {written} bytes written, saw {read}"
        );
    }
}

#[test]
fn a_writer_stopped_by_ctrl_c_saves_its_state_too() {
    let dir = scratch();
    let child = command()
        .args(["run", "--no-history"])
        .args(job("write", &["--rate=2m"]))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start iolens");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "expected kill -INT to reach iolens");
    let out = child.wait_with_output().expect("wait for iolens");
    assert_eq!(
        out.status.code(),
        Some(130),
        "expected the interrupted exit code 130: {}",
        stderr(&out)
    );
    let written = io_bytes(&doc(&out, "interrupted writer"), "write");
    assert!(
        written > 0 && written < SIZE,
        "expected part of {SIZE} bytes written before Ctrl-C, saw {written}"
    );
    let verify = job("write", &["--verify_only=1", "--verify_state_load=1"]);
    let out = Tool::Iolens.run(dir.path(), &verify).expect("iolens runs");
    let read = io_bytes(&doc(&out, "verify"), "read");
    assert!(
        out.status.success() && read == written,
        "expected the saved state to verify the {written} bytes written, saw exit {:?} \
         and {read}: {}",
        out.status.code(),
        stderr(&out)
    );
}

#[test]
fn state_files_are_named_as_fio_names_them() {
    let job = "[global]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\n\
               [a]\nnumjobs=2\nfilename=fa\n[b/c]\nfilename=fb\n";
    let names = |tool: Tool| -> Option<Vec<String>> {
        let dir = scratch();
        std::fs::write(dir.path().join("j.fio"), job).expect("write the job file");
        let out = tool.run(dir.path(), &["j.fio".to_string()])?;
        assert!(
            out.status.success(),
            "{tool:?}: expected the job file to run: {}",
            stderr(&out)
        );
        let mut found: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list the scratch dir")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|n| n.ends_with("-verify.state"))
            .collect();
        found.sort();
        Some(found)
    };
    let ours = names(Tool::Iolens).expect("iolens runs");
    assert_eq!(
        ours,
        [
            "local-a-0-verify.state",
            "local-a-1-verify.state",
            "local-b.c-2-verify.state"
        ],
        "expected one state per worker, numbered across the run, / turned into ."
    );
    if let Some(theirs) = names(Tool::Fio) {
        assert_eq!(theirs, ours, "expected fio's state file names (left)");
    }
}

#[test]
fn a_state_that_cannot_be_saved_is_said_and_fails_nothing() {
    for tool in [Tool::Iolens, Tool::Fio] {
        let dir = scratch();
        let missing = dir.path().join("missing");
        let aux = format!("--aux-path={}", missing.display());
        let mut args = job("write", &[&aux]);
        if tool == Tool::Iolens {
            args.push("--iolens-notes".into());
        }
        let Some(out) = tool.run(dir.path(), &args) else {
            return;
        };
        let name = missing.join("local-w-0-verify.state");
        assert!(
            out.status.success() && stderr(&out).contains(&name.display().to_string()),
            "{tool:?}: expected success and {} named on stderr, saw {:?}: {}",
            name.display(),
            out.status.code(),
            stderr(&out)
        );
    }
}
