//! Findings, `--timeline` and `iolens doctor` through the real binary.

use crate::outputs::{clat2csv, clat2csv_installed};
use crate::support::{iolens, is_root, json, scratch, stderr, stdout, LoopDevice};
use std::io::Write;
use std::path::Path;
use std::process::Command;

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
fn doctor_shows_that_a_file_in_dev_shm_lives_in_ram() {
    let Ok(mut file) = tempfile::NamedTempFile::new_in("/dev/shm") else {
        eprintln!("skipped: no /dev/shm to make a file in");
        return;
    };
    file.write_all(&[1u8; 4096]).unwrap();
    let out = iolens(&["doctor", file.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("\n  Stack:\n"), "{text}");
    assert!(
        text.contains(": no device, the data lives in RAM\n"),
        "{text}"
    );
    assert!(
        text.contains("no device: a benchmark here measures RAM"),
        "{text}"
    );
}

#[test]
fn doctor_follows_a_buffered_loop_device_to_its_backing_files_filesystem() {
    if !is_root() {
        eprintln!("skipped: attaching a loop device needs root");
        return;
    }
    let dir = scratch();
    let backing = dir.path().join("img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    // losetup attaches without direct I/O unless asked.
    let Some(device) = LoopDevice::attach(&backing) else {
        return;
    };
    let out = iolens(&["doctor", device.path()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let name = Path::new(device.path())
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    let backing = std::fs::canonicalize(&backing).unwrap();
    let loop_line = format!(
        "      {name}: backing file {}, no direct I/O",
        backing.display()
    );
    let at = text
        .lines()
        .position(|l| l.starts_with(&loop_line))
        .unwrap_or_else(|| panic!("no line starting {loop_line:?} in\n{text}"));
    // The line below the loop's names the backing file's filesystem.
    let fs_type = filesystem_type(&backing);
    let fs_line = text.lines().nth(at + 1).unwrap_or_default();
    assert!(
        fs_line.starts_with(&format!("        {fs_type} ")),
        "expected the backing file's {fs_type} below the loop line in\n{text}"
    );
    assert!(
        text.contains(&format!("fix: losetup --direct-io=on /dev/{name}")),
        "{text}"
    );
}

/// The type of the filesystem holding `path`, as df names it.
fn filesystem_type(path: &Path) -> String {
    let out = Command::new("df")
        .arg("--output=fstype")
        .arg(path)
        .output()
        .expect("run df");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().nth(1).expect("df's answer").trim().to_string()
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

/// A 32 MiB file just written, so its pages are in the page cache.
fn cached_file(dir: &std::path::Path) -> std::path::PathBuf {
    let f = dir.join("warm");
    std::fs::write(&f, vec![7u8; 32 << 20]).unwrap();
    f
}

/// A buffered read of `file`, which is in the page cache: a served-from-cache finding.
fn warm_read(file: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let filename = format!("--filename={}", file.display());
    let mut args = vec![
        "run",
        "--no-history",
        "--name=warm",
        &filename,
        "--rw=read",
        "--bs=64k",
        "--size=32m",
        "--ioengine=psync",
        "--invalidate=0",
    ];
    args.extend(extra);
    iolens(&args)
}

const SUMMARY_LINE: &str = "iolens: warning served-from-cache: ";

fn codes(findings: &serde_json::Value) -> Vec<&str> {
    findings
        .as_array()
        .expect("findings is a list")
        .iter()
        .map(|f| f["code"].as_str().expect("each finding has a code"))
        .collect()
}

#[test]
fn a_warm_buffered_read_with_json_output_has_served_from_cache_inside_the_json() {
    let dir = scratch();
    let file = cached_file(dir.path());
    let out = warm_read(&file, &["--output-format=json"]);
    let doc = json(&out);
    let findings = &doc["iolens"]["findings"];
    assert!(
        codes(findings).contains(&"served-from-cache"),
        "expected served-from-cache in iolens.findings, saw {findings}"
    );
    let finding = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "served-from-cache")
        .unwrap();
    for key in ["severity", "title", "evidence", "advice"] {
        assert!(
            finding.get(key).is_some(),
            "expected {key} in the finding, saw {finding}"
        );
    }
    assert_eq!(
        doc["jobs"][0]["jobname"], "warm",
        "expected fio's job entry beside the findings, saw {}",
        doc["jobs"][0]
    );
}

#[test]
fn a_line_per_finding_goes_to_stderr_unless_the_report_is_normal_text_or_quieted() {
    let dir = scratch();
    let file = cached_file(dir.path());
    let summary_lines = |out: &std::process::Output| -> usize {
        assert!(out.status.success(), "iolens failed: {}", stderr(out));
        stderr(out)
            .lines()
            .filter(|l| l.starts_with(SUMMARY_LINE))
            .count()
    };
    for format in ["json", "json+", "terse", "iolens-json"] {
        let out = warm_read(&file, &[&format!("--output-format={format}")]);
        assert_eq!(
            summary_lines(&out),
            1,
            "{format}: expected one '{SUMMARY_LINE}…' line on stderr, saw:\n{}",
            stderr(&out)
        );
    }
    let terse = warm_read(&file, &["--output-format=terse"]);
    assert!(
        stdout(&terse).starts_with("3;") && !stdout(&terse).contains("served-from-cache"),
        "expected fio's terse line alone on stdout, saw:\n{}",
        stdout(&terse)
    );
    let normal = warm_read(&file, &[]);
    assert_eq!(
        summary_lines(&normal),
        0,
        "normal: expected no summary on stderr, saw:\n{}",
        stderr(&normal)
    );
    assert!(
        stdout(&normal).contains("(served-from-cache)"),
        "normal: expected the finding in the text, saw:\n{}",
        stdout(&normal)
    );
    let quiet = warm_read(&file, &["--output-format=json", "--quiet-findings"]);
    assert_eq!(
        summary_lines(&quiet),
        0,
        "--quiet-findings: expected no summary on stderr, saw:\n{}",
        stderr(&quiet)
    );
    assert!(
        codes(&json(&quiet)["iolens"]["findings"]).contains(&"served-from-cache"),
        "--quiet-findings: expected the finding still in the JSON"
    );
}

#[test]
fn fios_jsonplus_to_csv_script_reads_json_plus_with_findings() {
    if !clat2csv_installed() {
        return;
    }
    let dir = scratch();
    let file = cached_file(dir.path());
    let source = dir.path().join("plus.json");
    let out = warm_read(
        &file,
        &[
            "--output-format=json+",
            &format!("--output={}", source.display()),
        ],
    );
    assert!(out.status.success(), "iolens failed: {}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&source).unwrap()).expect("valid JSON");
    assert!(
        codes(&doc["iolens"]["findings"]).contains(&"served-from-cache"),
        "expected the finding in the json+ document, saw {}",
        doc["iolens"]
    );
    clat2csv(&source, &dir.path().join("lat.csv"), None);
    let csv = std::fs::read_to_string(dir.path().join("lat_job0.csv"))
        .expect("expected the script to write lat_job0.csv");
    assert!(
        csv.starts_with("nsec, ") && csv.lines().count() > 1,
        "expected the script's header and rows, saw:\n{csv}"
    );
}
