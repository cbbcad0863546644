//! `--debug=io`: fio's lines per I/O (fill, prep, queue, complete), whose offsets are the
//! I/Os the job issued (the job's own `write_iolog` as the witness), in fio 3.33's field
//! layout (fio as the oracle), from `iolens run` and from the fio drop-in.

use crate::fio_command_line::shim;
use crate::support::{command, isolated, scratch, stderr, stdout};
use std::path::Path;

/// The `io` trace lines of `text` as (step, offset, len, ddir, file).
pub(crate) fn io_lines(text: &str) -> Vec<(String, u64, u64, u32, String)> {
    text.lines()
        .filter(|l| l.starts_with("io ") && l.contains(": io_u 0x"))
        .map(|line| {
            let message = line
                .split_whitespace()
                .skip(2)
                .collect::<Vec<_>>()
                .join(" ");
            let (step, rest) = message.split_once(": io_u ").expect("STEP: io_u");
            let fields = rest.split_once(": ").expect("io_u ADDRESS: FIELDS").1;
            let value = |key: &str| {
                fields
                    .split(',')
                    .find_map(|f| f.strip_prefix(key))
                    .unwrap_or_else(|| panic!("expected {key} in {line:?}"))
            };
            let hex = |key| u64::from_str_radix(&value(key)[2..], 16).expect("a hex number");
            (
                step.to_string(),
                hex("off="),
                hex("len="),
                value("ddir=").parse().expect("a ddir number"),
                value("file=").to_string(),
            )
        })
        .collect()
}

/// A line's layout: every number (decimal or hex) and the pid column replaced by `#`.
fn layout(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            if c == '0' && chars.peek() == Some(&'x') {
                chars.next();
            }
            while chars.peek().is_some_and(|d| d.is_ascii_hexdigit()) {
                chars.next();
            }
            out.push('#');
        } else {
            out.push(c);
        }
    }
    // The pid column is padded to 5: a shorter or longer pid changes the spaces only.
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// (offset, len, ddir) of the I/O lines of a version 3 `write_iolog`.
fn iolog_ios(path: &Path) -> Vec<(u64, u64, u32)> {
    let text = std::fs::read_to_string(path).expect("the write_iolog file");
    text.lines()
        .filter_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [_, _, action, offset, len] => Some((
                    offset.parse().expect("an offset"),
                    len.parse().expect("a length"),
                    match action {
                        "read" => 0,
                        "write" => 1,
                        _ => 2,
                    },
                )),
                _ => None,
            },
        )
        .collect()
}

const JOB: [&str; 6] = [
    "--name=d",
    "--filename=f",
    "--size=256k",
    "--bs=4k",
    "--rw=randrw",
    "--debug=io",
];

#[test]
fn debug_io_traces_each_issued_io_at_the_offsets_write_iolog_logs() {
    for workers in ["--thread=1", "--thread=0"] {
        let dir = scratch();
        let mut args = vec!["run", "--no-history", workers, "--write_iolog=w.log"];
        args.extend(JOB);
        let out = command()
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("run iolens");
        assert_eq!(
            out.status.code(),
            Some(0),
            "expected {args:?} to succeed, saw: {}",
            stderr(&out)
        );
        let lines = io_lines(&stdout(&out));
        let logged = iolog_ios(&dir.path().join("w.log"));
        assert_eq!(
            logged.len(),
            64,
            "expected 64 I/Os in the write_iolog ({workers})"
        );
        let steps: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
        let expected_steps: Vec<&str> = ["fill", "prep", "queue", "complete"]
            .iter()
            .copied()
            .cycle()
            .take(4 * logged.len())
            .collect();
        assert_eq!(
            steps, expected_steps,
            "expected fill, prep, queue, complete per I/O ({workers})"
        );
        for step in ["fill", "complete"] {
            let traced: Vec<(u64, u64, u32)> = lines
                .iter()
                .filter(|l| l.0 == step)
                .map(|l| (l.1, l.2, l.3))
                .collect();
            assert_eq!(
                traced, logged,
                "expected the {step} lines' offsets, lengths and directions to be write_iolog's ({workers})"
            );
        }
        assert!(
            lines.iter().all(|l| l.4 == "f"),
            "expected every line to name file=f ({workers})"
        );
        let before_report = stdout(&out)
            .lines()
            .position(|l| l.starts_with("d: (groupid="))
            .expect("the report");
        assert!(
            stdout(&out).lines().take(before_report).count() >= 4 * logged.len(),
            "expected the trace before the report"
        );
    }
}

#[test]
fn debug_io_lines_have_fios_layout_and_t64_switchs_pipeline_reads_the_offset() {
    let dir = scratch();
    let drop_in = shim(dir.path());
    let ours = drop_in(&JOB);
    assert_eq!(
        ours.status.code(),
        Some(0),
        "expected the drop-in to run {JOB:?}, saw: {}",
        stderr(&ours)
    );
    let ours = stdout(&ours);
    // t/t64-switch.sh: grep complete: | cut -d '=' -f 2 | cut -d ',' -f 1
    let cut: Vec<u64> = ours
        .lines()
        .filter(|l| l.contains("complete:"))
        .map(|l| l.split('=').nth(1).expect("a second '=' field"))
        .map(|f| f.split(',').next().expect("a first ',' field"))
        .map(|off| u64::from_str_radix(off.trim_start_matches("0x"), 16).expect("a hex offset"))
        .collect();
    let completed: Vec<u64> = io_lines(&ours)
        .into_iter()
        .filter(|l| l.0 == "complete")
        .map(|l| l.1)
        .collect();
    assert!(
        cut.len() == 64 && cut == completed,
        "expected t64-switch.sh's cut to give the 64 completed offsets, saw {cut:?}"
    );
    let theirs = match isolated("fio").args(JOB).current_dir(dir.path()).output() {
        Ok(out) => stdout(&out),
        Err(e) => return eprintln!("skipping the fio comparison: fio cannot run ({e})"),
    };
    let first_io = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("io ") && l.contains(": io_u 0x"))
            .take(4)
            .map(layout)
            .collect()
    };
    assert_eq!(
        first_io(&ours),
        first_io(&theirs),
        "expected the first I/O's lines in fio 3.33's layout"
    );
    assert_eq!(
        first_io(&ours)[3],
        "io # complete: io_u #: off=#,len=#,ddir=#,file=f",
        "expected the complete line's fields"
    );
}
