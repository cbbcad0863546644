//! `iolens quick`: the suite on a scratch directory with short tests, its table, its
//! history and comparison, its JSON, and its HTML report in a real browser.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::path::{Path, PathBuf};

/// Short tests keep CI fast; the sizes and times are the only changes from the defaults.
const SHORT: [&str; 3] = ["--duration=1", "--ramp=100ms", "--size=16m"];

fn quick(dir: &Path, extra: &[&str]) -> std::process::Output {
    let target = dir.display().to_string();
    let mut args = vec!["quick", target.as_str()];
    args.extend(SHORT);
    args.extend(extra);
    iolens(&args)
}

/// Files in `dir`, by name.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_suite_prints_one_row_per_test_and_removes_its_file() {
    let dir = scratch();
    let db = dir.path().join("h.db").display().to_string();
    let html = dir.path().join("r.html");
    let out = quick(dir.path(), &["--db", &db, "--html", html.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = stdout(&out);
    // Table rows start with the test name; findings below may name tests too.
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("SEQ") || l.starts_with("RND"))
        .collect();
    assert_eq!(rows.len(), 8, "{table}");
    assert!(
        table.starts_with("test ") && table.contains("lat p99"),
        "{table}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("engine ") && err.contains("saved in the history"),
        "{err}"
    );
    let left = files_in(dir.path());
    assert!(left.contains(&"r.html".to_string()), "{left:?}");
    assert!(
        !left.iter().any(|f| f.starts_with(".iolens-quick-")),
        "{left:?}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"chart-job-7-pct\"") && page.contains("RND4K-Q1T1-write"));

    // The next run compares itself with this one, also as a side-by-side page.
    let compared = dir.path().join("compared.html");
    let again = quick(
        dir.path(),
        &[
            "--db",
            &db,
            "--read-only",
            "--compare-with=last",
            "--html",
            compared.to_str().unwrap(),
        ],
    );
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let text = stdout(&again);
    assert!(
        text.contains("SEQ1M-Q8T1-read") && !text.contains("-write "),
        "{text}"
    );
    assert!(
        text.contains("run "),
        "the comparison names the stored run: {text}"
    );
    let page = std::fs::read_to_string(&compared).unwrap();
    assert!(page.contains("id=\"changes\"") && page.contains("SEQ1M-Q8T1-read"));
    assert!(
        page.contains("id=\"chart-a-job-0-iops\"") && page.contains("id=\"chart-b-job-0-iops\"")
    );
}

#[test]
fn show_job_prints_the_preset_and_bad_flags_are_usage_errors() {
    let out = iolens(&["quick", "--show-job"]);
    assert_eq!(out.status.code(), Some(0));
    let preset = stdout(&out);
    assert_eq!(preset.matches("\n[").count(), 9, "{preset}");
    assert!(preset.contains("iodepth=32") && preset.contains("direct=1"));
    for bad in [
        "--eta=sometimes",
        "--duration=soon",
        "--compare-with=yesterday",
        "--repeat=0",
    ] {
        let out = iolens(&["quick", "--no-history", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.lines().count() == 1 && err.starts_with(&format!("iolens: {bad}: ")),
            "expected one line naming {bad} and the fix, got: {err}"
        );
    }
}

/// Chromium, if installed.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Chromium headless with a fresh profile, quiet about everything but the page.
fn headless(chromium: &Path, profile: &Path, args: &[&str]) -> std::process::Output {
    crate::support::isolated(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("run chromium")
}

#[test]
fn the_html_report_renders_in_a_browser() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let dir = scratch();
    let html = dir.path().join("report.html");
    let out = quick(
        dir.path(),
        &[
            "--read-only",
            "--json",
            "--no-history",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    let report = json(&out);
    let url = format!("file://{}", html.display());
    let png = dir.path().join("shot.png");
    let profile = tempfile::tempdir().unwrap();
    let shot = headless(
        &chromium,
        profile.path(),
        &[
            "--window-size=1280,2400",
            &format!("--screenshot={}", png.display()),
            &url,
        ],
    );
    let log = stderr(&shot);
    assert!(png.exists(), "no screenshot: {log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let (width, colours) = png_width_and_colours(&png);
    assert_eq!(width, 1280);
    assert!(colours > 16, "a blank page has few colours: {colours}");

    let profile = tempfile::tempdir().unwrap();
    let dom = stdout(&headless(&chromium, profile.path(), &["--dump-dom", &url]));
    let jobs = report["jobs"].as_array().unwrap().len();
    assert_eq!(jobs, 4);
    let mut ids: Vec<String> = (0..jobs)
        .flat_map(|j| ["iops", "bw", "lat", "hist", "pct"].map(|c| format!("chart-job-{j}-{c}")))
        .collect();
    ids.extend(["cache", "dirty", "ios", "cpu"].map(|c| format!("chart-obs-{c}")));
    let findings = report["findings"].as_array().unwrap().len();
    ids.extend((0..findings).map(|i| format!("finding-{i}")));
    for id in ids {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "{id} missing from the DOM"
        );
    }
    assert!(dom.matches("<svg").count() >= jobs * 5 + 4);
}

/// The image width and the number of distinct RGB colours in it.
fn png_width_and_colours(path: &Path) -> (u32, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let mut colours: Vec<[u8; 3]> = pixels[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| p.len() >= 3)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    colours.sort_unstable();
    colours.dedup();
    (info.width, colours.len())
}

#[test]
fn repeated_quick_runs_compare_with_verdicts_and_no_temporary_names() {
    let dir = scratch();
    let db = dir.path().join("h.db").display().to_string();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let repeated = |extra: &[&str]| {
        let mut args = vec![
            "quick",
            target.to_str().unwrap(),
            "--db",
            &db,
            "--read-only",
            "--duration=200ms",
            "--ramp=0",
            "--size=8m",
            "--repeat",
            "2",
        ];
        args.extend(extra);
        let out = iolens(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "expected `iolens {}` to succeed: {}",
            args.join(" "),
            stderr(&out)
        );
        stdout(&out)
    };
    let first = repeated(&[]);
    assert!(
        first.contains("2 measured repetitions") && first.contains("job 'RND4K-Q1T1-read'"),
        "expected the repetition statistics per test, got:\n{first}"
    );
    let second = repeated(&["--compare-with=last"]);
    assert!(
        second.contains("A: run ") && second.contains("(2 runs)"),
        "expected the stored batch of two runs as A, got:\n{second}"
    );
    let verdicts = ["B faster", "B slower", "no significant difference", "CPU"];
    let iops = second
        .lines()
        .find(|l| l.starts_with("SEQ1M-Q8T1-read") && l.contains("iops"))
        .unwrap_or_else(|| panic!("expected an iops line, got:\n{second}"));
    assert!(
        verdicts.iter().any(|v| iops.contains(v)),
        "expected a verdict with repetitions on both sides, got: {iops}"
    );
    // The differences come between the sides' names and the table (a finding's
    // evidence after the table may name the file).
    let comparison = &second[second.find("A: run ").unwrap()..];
    let differences = &comparison[..comparison.find("\njob ").unwrap_or(comparison.len())];
    assert!(
        !differences.contains(".iolens-quick-"),
        "expected the temporary file's name not to be listed as a difference, got:\n{differences}"
    );
}
