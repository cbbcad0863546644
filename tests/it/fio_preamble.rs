//! What fio prints around its results, for the tools that read fio's stdout: the
//! line per job, the version and the "Starting" line before the run (normal text
//! only), `pid=` in each job's header, and the JSON before the normal text when
//! both are asked for. fio 3.33 is the oracle where it is installed.

use crate::support::{command, isolated, scratch, stderr};
use std::path::Path;

/// fio's stdout for `args` in `dir`; None (and a printed reason) without fio.
fn fio_stdout(dir: &Path, args: &[&str]) -> Option<String> {
    match isolated("fio").args(args).current_dir(dir).output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "fio {args:?} failed: {}",
                stderr(&out)
            );
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Err(e) => {
            eprintln!("skipping the fio side: fio cannot run ({e})");
            None
        }
    }
}

/// iolens `run`'s stdout for `args` in `dir`.
fn iolens_stdout(dir: &Path, args: &[&str]) -> String {
    let out = command()
        .args(["run", "--no-history"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run iolens");
    assert!(
        out.status.success(),
        "iolens {args:?} failed: {}",
        stderr(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lines up to and including `Starting …`, the version line cut to fio's
/// release (iolens adds its own version after it).
fn preamble(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        lines.push(match line.strip_prefix("fio-3.33") {
            Some(_) => "fio-3.33".to_string(),
            None => line.to_string(),
        });
        if line.starts_with("Starting ") {
            return lines;
        }
    }
    panic!("no Starting line in:\n{text}")
}

/// The job headers with the pid and the date masked: `x: (groupid=0, jobs=1): err= 0: pid=<pid>: <date>`.
fn headers(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(": (groupid="))
        .map(|l| {
            let (head, rest) = l
                .split_once(": pid=")
                .unwrap_or_else(|| panic!("no pid in {l:?}"));
            let (pid, date) = rest.split_once(": ").expect("a date after the pid");
            assert!(pid.parse::<u32>().is_ok_and(|p| p > 0), "a pid in {l:?}");
            assert_eq!(date.split_whitespace().count(), 5, "a ctime date in {l:?}");
            format!("{head}: pid=<pid>: <date>")
        })
        .collect()
}

const CASES: &[&[&str]] = &[
    &["--name=x", "--ioengine=null", "--size=1m", "--rw=read"],
    &[
        "--ioengine=null",
        "--size=256k",
        "--name=a",
        "--rw=randrw",
        "--bs=4k,64k",
        "--numjobs=3",
        "--name=b",
        "--rw=trim",
        "--bsrange=512-128k",
        "--thread",
        "--iodepth=8",
        "--stonewall",
    ],
    &[
        "--name=g",
        "--ioengine=null",
        "--size=4m",
        "--rw=randwrite",
        "--bs=1m",
        "--numjobs=2",
        "--thread",
        "--group_reporting",
    ],
    &[
        "--name=f",
        "--filename=f.dat",
        "--size=256k",
        "--rw=write",
        "--bs=64k",
        "--ioengine=psync",
    ],
];

#[test]
fn the_preamble_and_headers_are_fios() {
    let dir = scratch();
    for args in CASES {
        let mut normal = args.to_vec();
        normal.push("--output-format=normal");
        let ours = iolens_stdout(dir.path(), &normal);
        let Some(theirs) = fio_stdout(dir.path(), &normal) else {
            assert!(preamble(&ours).last().unwrap().starts_with("Starting "));
            continue;
        };
        assert_eq!(
            preamble(&ours),
            preamble(&theirs),
            "{args:?}: iolens' preamble (left) differs from fio's (right)"
        );
        assert_eq!(
            headers(&ours),
            headers(&theirs),
            "{args:?}: iolens' job headers (left) differ from fio's (right)"
        );
        assert!(
            ours.contains("\nStarting") && ours.contains("\n\n"),
            "expected an empty line before the results:\n{ours}"
        );
    }
}

/// Where each part starts: the preamble, the JSON document, the terse line, the
/// results of the normal text.
fn parts(text: &str) -> Vec<&'static str> {
    let mut seen = Vec::new();
    let mut in_json = false;
    for line in text.lines() {
        let part = if in_json {
            in_json = line != "}";
            continue;
        } else if line == "{" {
            in_json = true;
            "json"
        } else if line.contains(": (g=") {
            "preamble"
        } else if line.starts_with("3;") {
            "terse"
        } else if line.contains(": (groupid=") {
            "normal"
        } else {
            continue;
        };
        if seen.last() != Some(&part) {
            seen.push(part);
        }
    }
    seen
}

#[test]
fn json_and_terse_come_before_the_normal_text_as_in_fio() {
    let dir = scratch();
    let job = ["--name=x", "--ioengine=null", "--size=256k", "--rw=read"];
    for (format, expected) in [
        ("normal", &["preamble", "normal"][..]),
        ("json", &["json"]),
        ("terse", &["terse"]),
        ("json,normal", &["preamble", "json", "normal"]),
        ("normal,json", &["preamble", "json", "normal"]),
        ("normal,terse", &["preamble", "terse", "normal"]),
        (
            "json,terse,normal",
            &["preamble", "terse", "json", "normal"],
        ),
    ] {
        let mut args = job.to_vec();
        let flag = format!("--output-format={format}");
        args.push(&flag);
        let ours = iolens_stdout(dir.path(), &args);
        assert_eq!(parts(&ours), expected, "{format}: iolens printed\n{ours}");
        if let Some(theirs) = fio_stdout(dir.path(), &args) {
            assert_eq!(parts(&theirs), expected, "{format}: fio printed\n{theirs}");
        }
    }
}

/// What a test framework does with `--output-format=json,normal`: skip to the line
/// after "Starting", decode one JSON document there and ignore what follows
/// (Python's `json.JSONDecoder().raw_decode`).
fn json_after_starting(text: &str) -> serde_json::Value {
    let at = text
        .find("\nStarting ")
        .unwrap_or_else(|| panic!("no Starting line in:\n{text}"));
    let rest = &text[at + 1..];
    let rest = &rest[rest.find('\n').expect("a line after Starting") + 1..];
    serde_json::Deserializer::from_str(rest)
        .into_iter::<serde_json::Value>()
        .next()
        .expect("a document after the Starting line")
        .unwrap_or_else(|e| panic!("not JSON after the Starting line ({e}):\n{rest}"))
}

#[test]
fn the_json_can_be_cut_after_the_starting_line() {
    let dir = scratch();
    let args = [
        "--name=x",
        "--ioengine=null",
        "--size=256k",
        "--rw=read",
        "--output-format=json,normal",
    ];
    let ours = json_after_starting(&iolens_stdout(dir.path(), &args));
    assert_eq!(ours["jobs"][0]["jobname"], "x");
    assert_eq!(ours["jobs"][0]["read"]["io_bytes"], 256 * 1024);
    if let Some(theirs) = fio_stdout(dir.path(), &args) {
        assert_eq!(json_after_starting(&theirs)["jobs"][0]["jobname"], "x");
    }
}

#[test]
fn with_output_the_preamble_goes_to_the_file() {
    let dir = scratch();
    for format in ["normal", "json,normal", "json"] {
        let flag = format!("--output-format={format}");
        let args = [
            "--name=x",
            "--ioengine=null",
            "--size=256k",
            "--output=report.txt",
            flag.as_str(),
        ];
        let stdout = iolens_stdout(dir.path(), &args);
        assert_eq!(stdout, "", "{format}: expected nothing on stdout");
        let ours = std::fs::read_to_string(dir.path().join("report.txt")).unwrap();
        let has_preamble = ours.starts_with("x: (g=0): rw=read,");
        assert_eq!(
            has_preamble,
            format.contains("normal"),
            "{format}: the preamble belongs in the file with the normal text only:\n{ours}"
        );
        if fio_stdout(dir.path(), &args).is_some_and(|s| s.is_empty()) {
            let theirs = std::fs::read_to_string(dir.path().join("report.txt")).unwrap();
            assert_eq!(
                theirs.starts_with("x: (g=0): rw=read,"),
                has_preamble,
                "{theirs}"
            );
        }
    }
}
