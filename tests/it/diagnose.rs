//! Findings, `--timeline` and `iolens doctor` through the real binary.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::io::Write;

#[test]
fn doctor_on_a_written_file_finds_no_holes_and_exits_0() {
    let dir = scratch();
    let f = dir.path().join("data");
    let mut file = std::fs::File::create(&f).unwrap();
    file.write_all(&vec![7u8; 1 << 20]).unwrap();
    file.sync_all().unwrap();
    let out = iolens(&["doctor", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!("iolens doctor: {} (file, 1.0 MiB)", f.display())),
        "{text}"
    );
    assert!(text.contains("no holes"), "{text}");
    assert!(text.contains("dirty limits:"), "{text}");
}

#[test]
fn doctor_on_a_sparse_file_says_so_with_the_fix() {
    let dir = scratch();
    let f = dir.path().join("sparse");
    std::fs::File::create(&f).unwrap().set_len(8 << 20).unwrap();
    let out = iolens(&["doctor", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .position(|l| l.contains("sparse file"))
        .expect(&text);
    assert!(
        text.lines()
            .nth(line + 1)
            .unwrap()
            .contains("fix: write the file fully"),
        "{text}"
    );
}

#[test]
fn doctor_on_a_missing_target_is_a_usage_error() {
    let out = iolens(&["doctor", "/nonexistent/iolens-target"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn reading_a_sparse_file_is_a_finding_in_the_report() {
    let dir = scratch();
    let f = dir.path().join("sparse");
    std::fs::File::create(&f).unwrap().set_len(4 << 20).unwrap();
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", f.display()),
        "--rw=read",
        "--thread",
        "--output-format=iolens-json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = json(&out);
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"read-from-holes"), "{codes:?}");
}

#[test]
fn timeline_prints_a_line_per_second_to_stderr_and_keeps_json_valid() {
    let dir = scratch();
    let f = dir.path().join("t");
    let out = iolens(&[
        "run",
        "--name=r",
        &format!("--filename={}", f.display()),
        "--size=4m",
        "--rw=randread",
        "--thread",
        "--runtime=3",
        "--time_based",
        "--rate_iops=200",
        "--timeline",
        "--output-format=iolens-json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("timeline:")).collect();
    // The header, then one line per whole second.
    assert!(lines.len() > 3, "{err}");
    assert!(
        lines[0].contains("MiB/s") && lines[0].contains("cached pages"),
        "{err}"
    );
    assert!(lines[1].contains('%'), "{err}");
    assert!(json(&out)["jobs"].is_array());
}

#[test]
fn doctor_and_a_run_agree_on_the_cpu_clock() {
    let dir = scratch();
    let out = iolens(&[
        "run",
        "--no-history",
        "--output-format=iolens-json",
        "--name=clock",
        "--ioengine=null",
        "--size=1m",
    ]);
    let report = json(&out);
    let run_says_hidden = report["observations"]["notes"]
        .as_array()
        .expect("the report has observation notes")
        .iter()
        .any(|n| {
            n.as_str()
                .is_some_and(|n| n.starts_with("cpufreq not exposed"))
        });
    let doctor = stdout(&iolens(&["doctor", dir.path().to_str().unwrap()]));
    let doctor_says_hidden = doctor.contains("cpufreq not exposed");
    assert_eq!(
        doctor_says_hidden, run_says_hidden,
        "expected doctor to say 'cpufreq not exposed' exactly when a run notes it \
         (the run: {run_says_hidden}); doctor said:\n{doctor}"
    );
    if doctor_says_hidden {
        assert!(
            !doctor.contains("governor"),
            "expected no claim about a governor without an exposed clock, doctor said:\n{doctor}"
        );
    }
}
