//! fio's `--debug=parse` and `--debug=random` lines, in the shape and with the values
//! fio's own test scripts read (t/steadystate_tests.py, t/random_seed.py), from the fio
//! drop-in and from `iolens run`; fio is the oracle for the columns of a line.

use crate::fio_command_line::shim;
use crate::support::{assert_failed_saying, iolens, scratch, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// t/steadystate_tests.py's option-parsing cases: the limit given, the line it looks for.
const THRESHOLDS: &[(&str, &str)] = &[
    ("iops:10", "set steady state IOPS threshold to 10.000000"),
    ("iops:10%", "set steady state threshold to 10.000000%"),
    ("iops:.1%", "set steady state threshold to 0.100000%"),
    ("bw:10%", "set steady state threshold to 10.000000%"),
    ("bw:.1%", "set steady state threshold to 0.100000%"),
    ("bw:12", "set steady state BW threshold to 12"),
];

/// The message of each line of debug type `kind`: after the type padded to 8 columns, a
/// space, the process id padded to 5 and a space, as fio prints them.
fn traced<'a>(kind: &str, text: &'a str) -> Vec<&'a str> {
    text.lines()
        .filter_map(|line| line.strip_prefix(&format!("{kind:<8} ")))
        .map(|rest| {
            let (pid, message) = rest.split_at(rest.find(' ').expect("a space after the pid"));
            assert!(
                pid.parse::<u32>().is_ok() && message.len() > 1,
                "expected '{kind} PID message', saw: {rest}"
            );
            let message = if pid.len() < 5 {
                &message[5 - pid.len()..]
            } else {
                message
            };
            message
                .strip_prefix(' ')
                .expect("one space after the padded pid")
        })
        .collect()
}

#[test]
fn steadystate_thresholds_are_traced_as_fio_words_them() {
    let dir = scratch();
    let fio = shim(dir.path());
    for (limit, expected) in THRESHOLDS {
        let ss = format!("--ss={limit}");
        let args = [
            "--parse-only",
            "--debug=parse",
            "--ss_dur=10s",
            &ss,
            "--ss_ramp=5",
        ];
        let out = fio(&args);
        assert_eq!(
            (out.status.code(), traced("parse", &stdout(&out))),
            (Some(0), vec![*expected]),
            "expected fio {args:?} to exit 0 with the parse line, saw stderr: {}",
            stderr(&out)
        );
    }
    let out = iolens(&[
        "run",
        "--parse-only",
        "--ss_dur=10s",
        "--ss=bw:12",
        "--name=x",
    ]);
    assert!(
        out.status.success() && traced("parse", &stdout(&out)).is_empty(),
        "expected no parse line without --debug, saw: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// The seeds `--debug=random` reports for one run of t/random_seed.py's job with `extra`.
fn seeds(dir: &Path, fio: &dyn Fn(&[&str]) -> Output, extra: &[&str]) -> Vec<u64> {
    let output = dir.join("seeds.txt");
    let output_flag = format!("--output={}", output.display());
    let mut args = vec![
        "--debug=random",
        "--name=random_seed",
        "--ioengine=null",
        "--filesize=32k",
        "--rw=randread",
        &output_flag,
    ];
    args.extend_from_slice(extra);
    let out = fio(&args);
    assert_eq!(out.status.code(), Some(0), "fio {args:?}: {}", stderr(&out));
    let text = std::fs::read_to_string(&output).expect("the --output file");
    let lines = traced("random", &text);
    let streams: usize = lines[0]
        .strip_prefix("FIO_RAND_NR_OFFS=")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("expected the stream count first, saw: {text}"));
    let seeds: Vec<u64> = lines[1..]
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let value = line.strip_prefix(&format!("rand_seeds[{index}]="));
            value.and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                panic!("expected rand_seeds[{index}]=SEED, saw {line:?} in: {text}")
            })
        })
        .collect();
    assert_eq!(seeds.len(), streams, "expected a seed per stream: {text}");
    assert!(
        text.find("rand_seeds[").unwrap() < text.find("random_seed: (groupid").unwrap(),
        "expected the trace before the report: {text}"
    );
    seeds
}

#[test]
fn seeds_repeat_with_randrepeat_and_follow_randseed() {
    let dir = scratch();
    let fio = shim(dir.path());
    let repeatable = seeds(dir.path(), &fio, &["--randrepeat=1"]);
    assert_eq!(
        seeds(dir.path(), &fio, &[]),
        repeatable,
        "expected randrepeat=1 (the default) to repeat its seeds"
    );
    assert_eq!(
        seeds(dir.path(), &fio, &["--allrandrepeat=1"]),
        repeatable,
        "expected allrandrepeat=1 to act as randrepeat=1"
    );
    let unrepeatable = seeds(dir.path(), &fio, &["--randrepeat=0"]);
    for other in [
        seeds(dir.path(), &fio, &["--randrepeat=0"]),
        seeds(dir.path(), &fio, &["--allrandrepeat=0"]),
    ] {
        assert!(
            other != unrepeatable && other != repeatable && unrepeatable != repeatable,
            "expected [all]randrepeat=0 to draw new seeds each run, saw {other:?}, {unrepeatable:?}, {repeatable:?}"
        );
    }
    let seeded = seeds(dir.path(), &fio, &["--randseed=12345"]);
    for extra in [
        ["--randseed=12345", "--randrepeat=0"],
        ["--randseed=12345", "--allrandrepeat=1"],
    ] {
        assert_eq!(
            seeds(dir.path(), &fio, &extra),
            seeded,
            "expected randseed to decide the seeds with {extra:?}"
        );
    }
    let other = seeds(dir.path(), &fio, &["--randseed=67890"]);
    assert!(
        other != seeded && seeded != repeatable,
        "expected another randseed to give other seeds, saw {other:?} and {seeded:?}"
    );
}

#[test]
fn debug_lines_have_fios_columns() {
    let dir = scratch();
    let job = [
        "--name=x",
        "--ioengine=null",
        "--size=16k",
        "--rw=randread",
        "--debug=random",
    ];
    let mut args = vec!["run", "--no-history"];
    args.extend_from_slice(&job);
    let out = iolens(&args);
    assert!(
        traced("random", &stdout(&out)).len() > 1,
        "expected iolens run to print the seed lines, saw: {}{}",
        stdout(&out),
        stderr(&out)
    );
    let fio = match crate::support::isolated("fio")
        .args(job)
        .current_dir(dir.path())
        .output()
    {
        Ok(out) => out,
        Err(e) => return eprintln!("skipping the fio comparison: fio cannot run ({e})"),
    };
    assert!(
        !traced("random", &stdout(&fio)).is_empty(),
        "expected fio's random lines to read in the same columns, saw: {}",
        stdout(&fio)
    );
}

#[test]
fn debug_help_lists_the_types_and_unknown_ones_are_refused() {
    let out = iolens(&["run", "--debug=help"]);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "parse,random,io,all\n".to_string()),
        "expected --debug=help to list the types, saw: {}",
        stderr(&out)
    );
    let dir = scratch();
    let out = shim(dir.path())(&[
        "--debug=parse,file",
        "--name=x",
        "--ioengine=null",
        "--size=4k",
    ]);
    assert_failed_saying(
        &out,
        2,
        "--debug=parse,file: 'file' is not a debug type iolens has",
    );
    assert_eq!(
        stderr(&out).lines().count(),
        1,
        "expected one line, saw: {}",
        stderr(&out)
    );
    let out = iolens(&[
        "run",
        "--no-history",
        "--debug=random",
        "--repeat=2",
        "--name=x",
        "--ioengine=null",
        "--size=4k",
    ]);
    assert_failed_saying(&out, 2, "--debug traces one run");
}
