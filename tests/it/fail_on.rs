//! `--fail-on`: a finding of that severity makes a run that worked exit 3, after
//! every report it was asked for is written.

use crate::support::{iolens, scratch, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// Reading a sparse file: the `read-from-holes` warning fires every time.
fn read_holes(dir: &Path, extra: &[&str]) -> Output {
    let f = dir.join("sparse");
    std::fs::File::create(&f).unwrap().set_len(1 << 20).unwrap();
    let db = dir.join("history.db");
    let mut args = vec![
        "run".to_string(),
        "--name=r".into(),
        format!("--filename={}", f.display()),
        "--rw=read".into(),
        "--thread".into(),
        format!("--db={}", db.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    iolens(&args)
}

fn finding_codes(report: &serde_json::Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["code"].as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn a_warning_fails_the_run_with_exit_3_after_the_reports_are_written() {
    let dir = scratch();
    let html = dir.path().join("r.html");
    let out = read_holes(
        dir.path(),
        &[
            "--fail-on=warning",
            "--output-format=iolens-json",
            &format!("--html={}", html.display()),
        ],
    );
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(3),
        "expected exit 3 for a warning under --fail-on=warning, saw {:?}: {err}",
        out.status.code()
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "expected the whole JSON report on stdout ({e}), saw: {}",
            stdout(&out)
        )
    });
    assert!(
        finding_codes(&report).contains(&"read-from-holes"),
        "expected the finding in the report, saw {:?}",
        finding_codes(&report)
    );
    assert_eq!(
        report["jobs"][0]["name"], "r",
        "expected the job's results in the report, saw {}",
        report["jobs"]
    );
    assert!(
        html.exists(),
        "expected the HTML report to be written; stderr: {err}"
    );
    assert!(
        err.contains("saved in the history")
            && err.contains("--fail-on=warning and the findings")
            && err.contains("read-from-holes"),
        "expected the run saved and the reason for exit 3 on stderr, saw: {err}"
    );
}

#[test]
fn without_the_flag_or_below_its_severity_the_same_run_exits_0() {
    let dir = scratch();
    let out = read_holes(dir.path(), &["--no-history"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected exit 0 without --fail-on, saw {:?}: {}",
        out.status.code(),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("read-from-holes"),
        "expected the finding in the normal report, saw: {}",
        stdout(&out)
    );
}

#[test]
fn with_repeat_a_finding_of_any_repetition_fails_the_run() {
    let dir = scratch();
    let out = read_holes(
        dir.path(),
        &[
            "--no-history",
            "--repeat=2",
            "--fail-on=info",
            "--output-format=iolens-json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "expected exit 3 when a repetition had a finding under --fail-on=info, saw {:?}: {}",
        out.status.code(),
        stderr(&out)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "expected the repetitions' JSON on stdout ({e}), saw: {}",
            stdout(&out)
        )
    });
    let repetitions = report["repetitions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        repetitions.len(),
        2,
        "expected both repetitions in the report, saw {report}"
    );
    assert!(
        finding_codes(&repetitions[0]).contains(&"read-from-holes"),
        "expected the repetition's finding in the report, saw {:?}",
        finding_codes(&repetitions[0])
    );
}

#[test]
fn an_unknown_severity_is_a_one_line_usage_error() {
    let out = iolens(&[
        "run",
        "--fail-on=error",
        "--name=x",
        "--size=4k",
        "--filename=x",
    ]);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit 2 for --fail-on=error, saw {:?}: {err}",
        out.status.code()
    );
    assert_eq!(
        err.trim().lines().count(),
        1,
        "expected one line naming the flag and the values that work, saw: {err}"
    );
    assert!(
        err.contains("--fail-on=error: use warning") && err.contains("info"),
        "expected the refusal to name the value and the two that work, saw: {err}"
    );
}

#[test]
fn quick_takes_the_flag_with_the_same_values() {
    let out = iolens(&["quick", "--fail-on=never", "--no-history"]);
    let err = stderr(&out);
    assert_eq!(
        (out.status.code(), err.trim().lines().count()),
        (Some(2), 1),
        "expected quick to refuse --fail-on=never in one line with exit 2, saw {:?}: {err}",
        out.status.code()
    );
    assert!(
        err.contains("--fail-on=never: use warning"),
        "expected the refusal to name the value and the fix, saw: {err}"
    );
}
