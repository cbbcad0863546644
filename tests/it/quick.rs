//! `iolens quick`: the suite on a scratch directory with short tests, its table, its
//! history and comparison, its JSON, and its HTML report in a real browser.

use crate::browser::{attribute, chart, charts_are_legible, chromium_or_skip, render};
use crate::support::{iolens, iolens_ok, json, scratch, stderr, stdout};
use std::path::Path;

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
    // The stored run's page is the same quick page, opening with the results side by side.
    let stored = dir.path().join("stored.html");
    let out = iolens(&[
        "report",
        "1",
        "--db",
        &db,
        "--html",
        stored.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected `iolens report 1` to write the page: {}",
        stderr(&out)
    );
    for (name, path) in [("quick's page", &html), ("the stored run's page", &stored)] {
        let page = std::fs::read_to_string(path).unwrap();
        assert!(
            page.contains("id=\"chart-overview-mbs\"")
                && page.contains("id=\"chart-overview-iops\""),
            "expected {name} to open with the MB/s and IOPS of the tests side by side"
        );
    }

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

/// The cheapest quick run that still has numbers: reads only, 200 ms each, on 8 MiB.
const CHEAP_READS: [&str; 4] = ["--read-only", "--duration=200ms", "--ramp=0", "--size=8m"];

#[test]
fn the_html_report_renders_in_a_browser() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = scratch();
    let html = dir.path().join("report.html");
    let out = quick(
        dir.path(),
        &["--json", "--no-history", "--html", html.to_str().unwrap()],
    );
    let report = json(&out);
    let dom = render(&chromium, &html);
    charts_are_legible("quick's page", &dom);
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8, "expected the eight tests");
    let mut ids: Vec<String> = (0..jobs.len())
        .flat_map(|j| ["iops", "bw", "lat", "hist", "pct"].map(|c| format!("chart-job-{j}-{c}")))
        .collect();
    ids.extend(["cache", "dirty", "ios", "cpu"].map(|c| format!("chart-obs-{c}")));
    let findings = report["findings"].as_array().unwrap().len();
    ids.extend((0..findings).map(|i| format!("finding-{i}")));
    for id in ids {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "expected {id} in the DOM Chromium built"
        );
    }
    assert!(dom.matches("<svg").count() >= jobs.len() * 5 + 4 + 2);
    overview_has_each_result(&dom, jobs);
    for (j, job) in jobs.iter().enumerate() {
        job_charts_span_its_window(
            &dom,
            &report["observations"],
            j,
            job["name"].as_str().unwrap(),
        );
    }
    let pct = chart(&dom, "chart-job-0-pct");
    for tick in [">p50<", ">p90<", ">p99<", ">p99.9<", ">p99.99<"] {
        assert!(
            pct.contains(tick),
            "expected the percentile tick {tick} in {pct}"
        );
    }
}

/// The overview opens the page with a read or write bar per test, in MB/s and in
/// IOPS, each the value the JSON has for its job.
fn overview_has_each_result(dom: &str, jobs: &[serde_json::Value]) {
    assert!(
        dom.find("id=\"chart-overview-mbs\"") < dom.find("id=\"findings\""),
        "expected the results side by side before the findings"
    );
    for (kind, key, scale) in [("mbs", "bw_bytes_per_sec", 1e6), ("iops", "iops", 1.0)] {
        let figure = chart(dom, &format!("chart-overview-{kind}"));
        let bars = figure.matches("class=\"bar ").count();
        assert_eq!(
            bars, 8,
            "expected 4 tests × read/write bars in {kind}, saw {bars}"
        );
        for job in jobs {
            let name = job["name"].as_str().unwrap();
            let (test, direction, d) = match name.strip_suffix("-write") {
                Some(test) => (test, "write", 1),
                None => (name.strip_suffix("-read").unwrap(), "read", 0),
            };
            let group = test.replace('-', " ");
            let bar = figure
                .split(&format!("class=\"bar {direction}\" data-group=\"{group}\""))
                .nth(1)
                .unwrap_or_else(|| panic!("expected a {direction} bar for {group} in {kind}"));
            let expected = job["dirs"][d][key].as_f64().unwrap() / scale;
            let seen = attribute(bar, "data-value");
            assert!(
                (seen - expected).abs() <= expected.abs() * 1e-9,
                "expected {name}'s bar in {kind} at {expected}, saw {seen}"
            );
        }
    }
}

/// A job's IOPS, bandwidth and latency charts show its window (the start of its
/// first interval with I/O to the end of its last), not the whole run.
fn job_charts_span_its_window(dom: &str, obs: &serde_json::Value, index: usize, name: &str) {
    let t: Vec<f64> = obs["t_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap() / 1e9)
        .collect();
    let series = obs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("expected the samples of {name}"));
    let busy: Vec<usize> = series["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, iv)| iv["ios"][0].as_u64().unwrap() + iv["ios"][1].as_u64().unwrap() > 0)
        .map(|(i, _)| i)
        .collect();
    let (first, last) = (busy[0], *busy.last().unwrap());
    let from = first.checked_sub(1).map_or(0.0, |i| t[i]);
    let to = t[last];
    for kind in ["iops", "bw", "lat"] {
        let figure = chart(dom, &format!("chart-job-{index}-{kind}"));
        let (seen_from, seen_to) = (
            attribute(figure, "data-x-from"),
            attribute(figure, "data-x-to"),
        );
        assert!(
            seen_from <= from + 1e-9 && seen_to >= to - 1e-9 && seen_to - seen_from <= 1.2 * (to - from),
            "expected {name}'s {kind} chart over its window {from:.3}..{to:.3} s (within 20 %), saw {seen_from:.3}..{seen_to:.3} s of a {:.3} s run",
            t.last().unwrap()
        );
    }
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
            "--repeat",
            "2",
        ];
        args.extend(CHEAP_READS);
        args.extend(extra);
        stdout(&iolens_ok(&args))
    };
    let first = repeated(&[]);
    assert!(
        first.contains("2 measured repetitions") && first.contains("job 'RND4K-Q1T1-read'"),
        "expected the repetition statistics per test, got:\n{first}"
    );
    let page = dir.path().join("compared.html");
    let second = repeated(&["--compare-with=last", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).expect("the page is written");
    assert!(
        html.contains("<h1>iolens comparison</h1>")
            && html.contains("id=\"changes\"")
            && html.contains("id=\"chart-repeat-0\""),
        "expected the comparison page, with the repetitions' charts, from --repeat --compare-with --html"
    );
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

#[test]
fn the_repetitions_and_comparison_pages_render_legibly_in_a_browser() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = scratch();
    let db = dir.path().join("h.db").display().to_string();
    let quick_page = |name: &str, extra: &[&str]| {
        let html = dir.path().join(name);
        let target = dir.path().display().to_string();
        let mut args = vec!["quick", &target, "--db", &db];
        args.extend(CHEAP_READS);
        args.extend(extra);
        args.extend(["--html", html.to_str().unwrap()]);
        iolens_ok(&args);
        html
    };
    // Two repetitions: an axis from 1 to 2, where round steps fall between them.
    let repeat = quick_page("repeat.html", &["--repeat", "2"]);
    let dom = render(&chromium, &repeat);
    assert!(
        dom.contains("id=\"chart-repeat-0\""),
        "expected the repetitions' charts"
    );
    charts_are_legible("quick's repetitions page", &dom);

    // The next run beside the stored ones: the comparison page.
    let compared = quick_page("compared.html", &["--compare-with=last"]);
    let dom = render(&chromium, &compared);
    assert!(dom.contains("id=\"chart-a-job-0-lat\"") && dom.contains("id=\"chart-b-job-0-lat\""));
    charts_are_legible("the comparison page", &dom);
}

/// `iolens` alone is `iolens quick`, which stores its run: its first line says
/// where and how to see it; with --no-history nothing is said about it.
#[test]
fn the_first_line_says_where_the_run_is_stored() {
    let dir = scratch();
    let db_dir = scratch();
    let db = db_dir.path().join("h.db");
    let first_line = |extra: &[&str]| {
        let mut args = vec![
            "quick",
            dir.path().to_str().unwrap(),
            "--read-only",
            "--duration=100ms",
            "--ramp=0",
            "--size=4m",
        ];
        args.extend(extra);
        let out = crate::support::command()
            .env("IOLENS_DB", &db)
            .args(&args)
            .output()
            .expect("run iolens");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stderr(&out).lines().next().unwrap_or_default().to_string()
    };
    let line = first_line(&[]);
    assert_eq!(
        line,
        format!(
            "iolens quick: results are stored in {} (see `iolens history`; --no-history to skip)",
            db.display()
        ),
        "expected the first line to say where the run is stored"
    );
    let line = first_line(&["--no-history"]);
    assert!(
        line.starts_with("iolens quick: ") && !line.contains("stored"),
        "expected no word of the history with --no-history, got: {line}"
    );
}
