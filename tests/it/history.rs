//! Repetitions, comparisons and the run history, through the binary. Every test
//! uses its own database in a scratch directory.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::path::Path;
use std::process::Stdio;

/// A short null-engine job: no device, fast, and still a full run.
fn job(db: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        format!("--db={}", db.display()),
        "--name=nulljob".into(),
        "--ioengine=null".into(),
        "--size=8m".into(),
        "--bs=4k".into(),
        "--rw=randread".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String]) -> std::process::Output {
    iolens(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn repeat_prints_a_table_and_json_holds_every_repetition() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let out = run(&job(&db, &["--repeat", "3"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(table.contains("3 measured repetitions"), "{table}");
    for metric in ["iops", "bw", "clat_mean", "clat_p99", "cpu_per_io"] {
        assert!(table.contains(metric), "no {metric} in:\n{table}");
    }

    let out = run(&job(
        &db,
        &["--repeat=3", "--warmup=1", "--output-format=iolens-json"],
    ));
    let report = json(&out);
    assert_eq!(report["repetitions"].as_array().unwrap().len(), 3);
    assert_eq!(report["warmup"], 1);
    let iops = report["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["metric"] == "iops")
        .unwrap();
    assert_eq!(iops["values"].as_array().unwrap().len(), 3);
    assert!(iops["median_ci95"].is_array());
}

#[test]
fn comparing_two_result_files_gives_a_verdict() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let files: Vec<String> = ["a", "b"]
        .iter()
        .map(|side| {
            let path = dir.path().join(format!("{side}.json"));
            let out = run(&job(
                &db,
                &[
                    "--repeat=3",
                    "--output-format=iolens-json",
                    &format!("--output={}", path.display()),
                ],
            ));
            assert!(out.status.success(), "{}", stderr(&out));
            path.display().to_string()
        })
        .collect();
    let out = iolens(&["compare", &files[0], &files[1]]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let iops = text
        .lines()
        .find(|l| l.starts_with("nulljob") && l.contains("iops"))
        .unwrap_or_else(|| panic!("no iops line:\n{text}"));
    assert!(
        ["B faster", "B slower", "no significant difference"]
            .iter()
            .any(|v| iops.ends_with(v)),
        "{iops}"
    );
}

#[test]
fn history_lists_stored_runs_and_show_prints_one() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let db_flag = format!("--db={}", db.display());
    assert!(run(&job(&db, &[])).status.success());
    assert!(run(&job(&db, &["--no-history"])).status.success());
    // Two processes at once, both writing to the same database.
    let children: Vec<_> = (0..2)
        .map(|_| {
            crate::support::command()
                .args(job(&db, &[]))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn iolens")
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }

    let out = iolens(&["history", &db_flag, "--job", "nulljob"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list = stdout(&out);
    assert_eq!(
        list.lines().filter(|l| l.contains("nulljob")).count(),
        3,
        "{list}"
    );

    let out = iolens(&["show", "1", &db_flag]);
    assert!(
        stdout(&out).contains("nulljob: (groupid=0"),
        "{}",
        stderr(&out)
    );
    let out = iolens(&["show", "99", &db_flag]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no run with id 99"),
        "{}",
        stderr(&out)
    );

    let out = iolens(&["history", &db_flag, "--trend", "iops"]);
    assert!(
        stdout(&out).contains("iops of job 'nulljob'"),
        "{}",
        stdout(&out)
    );
    let out = iolens(&["history", &db_flag, "--trend", "speed"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn without_a_database_option_the_history_lands_in_the_scratch_home() {
    // The test support points HOME and XDG_DATA_HOME of every program it starts into
    // the build's temporary directory: even a run with no --db and no IOLENS_DB
    // cannot reach the user's real history.
    let dir = scratch();
    let out = crate::support::command()
        .env_remove("IOLENS_DB")
        .args([
            "run",
            "--name=h",
            &format!("--filename={}", dir.path().join("f").display()),
            "--size=64k",
            "--rw=read",
            "--output-format=terse",
        ])
        .output()
        .expect("run iolens");
    assert!(
        out.status.success(),
        "expected the run to pass: {}",
        stderr(&out)
    );
    let db = crate::support::scratch_home().join(".local/share/iolens/history.db");
    assert!(
        db.is_file(),
        "expected the default history at {}, it is not there",
        db.display()
    );
}

/// Split a documented command line into words the way a shell would (double quotes only).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !words.last().unwrap().is_empty() {
                    words.push(String::new());
                }
            }
            _ => words.last_mut().unwrap().push(c),
        }
    }
    words.retain(|w| !w.is_empty());
    words
}

#[test]
fn the_documented_ab_line_runs() {
    let readme = include_str!("../../docs/repeat-compare-history.md");
    let documented = readme
        .lines()
        .find(|l| l.starts_with("iolens ab \""))
        .expect("README documents an `iolens ab` line");
    let help = stdout(&iolens(&["ab", "--help"]));
    assert!(
        help.contains(documented),
        "expected `ab --help` to show the README's example\n{documented}\ngot:\n{help}"
    );
    // The same line on a scratch file, with a tiny size and one pair.
    let dir = scratch();
    let target = dir.path().join("t");
    let shortened = documented
        .replace("/tmp/t", target.to_str().unwrap())
        .replace("--size=64m", "--size=1m")
        .replace("--pairs 5", "--pairs 1");
    let mut args = shell_words(&shortened);
    assert_eq!(args.remove(0), "iolens");
    args.push(format!("--db={}", dir.path().join("h.db").display()));
    let out = iolens(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected `{shortened}` to run, got {:?}: {}",
        out.status,
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("job 'x' option bs: 4k vs 64k") && text.contains("(1 run)"),
        "expected one run per arm and the bs difference named, got:\n{text}"
    );
}

#[test]
fn a_trend_keeps_configurations_of_one_job_apart() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let with_bs = |bs: &str| {
        let out = iolens(&[
            "run",
            &format!("--db={}", db.display()),
            "--name=x",
            "--ioengine=null",
            "--size=16m",
            "--rw=read",
            &format!("--bs={bs}"),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    for _ in 0..3 {
        with_bs("4k");
    }
    with_bs("64k");
    let out = iolens(&[
        "history",
        &format!("--db={}", db.display()),
        "--trend",
        "iops",
        "--job",
        "x",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let series: Vec<&str> = text.lines().filter(|l| l.starts_with("iops")).collect();
    assert_eq!(
        series,
        [
            "iops of job 'x' (IO/s), bs=4k:",
            "iops of job 'x' (IO/s), bs=64k:"
        ],
        "expected one series per bs, got:\n{text}"
    );
    assert!(
        !text.contains("REGRESSION") && !text.contains("improvement"),
        "expected no verdict between bs=4k and bs=64k runs, got:\n{text}"
    );
}

/// `--compare-with ID --html FILE`: the page is the comparison with the stored
/// run, for one run and for `--repeat N` (which puts its repetitions' charts on it too).
#[test]
fn the_html_page_of_a_run_compared_with_a_stored_one_is_the_comparison() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let out = run(&job(&db, &["--repeat", "2"]));
    assert!(out.status.success(), "{}", stderr(&out));
    for (extra, repetitions) in [(&["--repeat", "2"][..], true), (&[][..], false)] {
        let page = dir.path().join("compared.html");
        let mut args = vec!["--compare-with=1", "--html", page.to_str().unwrap()];
        args.extend(extra);
        let out = run(&job(&db, &args));
        assert!(out.status.success(), "{}", stderr(&out));
        let html = std::fs::read_to_string(&page).expect("the page is written");
        assert!(
            html.contains("<h1>iolens comparison</h1>")
                && html.contains("id=\"changes\"")
                && html.contains("nulljob"),
            "expected the comparison with run 1 on the page of `run {}`",
            args.join(" ")
        );
        assert_eq!(
            html.contains("id=\"repetitions\"") && html.contains("id=\"chart-repeat-0\""),
            repetitions,
            "expected the repetitions' charts on the comparison page only with --repeat (`run {}`)",
            args.join(" ")
        );
    }
}

/// Jobs are compared by name: with none in common `compare` says so, names both
/// sides' jobs and how to pair them, rather than print an empty table;
/// `--pair A_JOB=B_JOB` pairs two, and the jobs left alone are named.
#[test]
fn compare_names_the_jobs_that_do_not_match_and_pairs_them_on_request() {
    let dir = scratch();
    let result = |side: &str, names: &[&str]| {
        let path = dir.path().join(format!("{side}.json"));
        let mut args = vec![
            "run".to_string(),
            "--no-history".into(),
            "--output-format=iolens-json".into(),
            format!("--output={}", path.display()),
            "--ioengine=null".into(),
            "--size=4m".into(),
            "--bs=4k".into(),
            "--rw=randread".into(),
        ];
        args.extend(names.iter().map(|n| format!("--name={n}")));
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        path.display().to_string()
    };
    let (a, b) = (result("a", &["alpha", "shared"]), result("b", &["beta"]));
    let out = iolens(&["compare", &a, &b]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("no job matches")
            && err.contains("has alpha, shared;")
            && err.contains("has beta;")
            && err.contains("--pair A_JOB=B_JOB"),
        "expected both sides' jobs and how to pair them, got: {err}"
    );
    assert_eq!(stdout(&out), "", "expected no empty table");

    let out = iolens(&["compare", &a, &b, "--pair", "alpha=beta"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("alpha") && l.contains("iops")),
        "expected A's alpha compared with B's beta, got:\n{text}"
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!("only in A ({a}): shared")),
        "expected the job on one side only named, got: {err}"
    );

    let out = iolens(&["compare", &a, &b, "--pair", "gamma=beta"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("--pair=gamma=beta: A")
            && stderr(&out).contains("has no job gamma; its jobs: alpha, shared"),
        "{}",
        stderr(&out)
    );
}

/// `iolens run` stores its runs too: the history line comes first on stderr
/// (stdout keeps the report alone, machine-readable in its format), not with
/// --no-history.
#[test]
fn run_says_where_it_stores_the_run_on_stderr_before_the_run() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let out = run(&job(&db, &["--output-format=json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.lines().next(),
        Some(
            format!(
                "iolens run: results are stored in {} (see `iolens history`; --no-history to skip)",
                db.display()
            )
            .as_str()
        ),
        "{err}"
    );
    json(&out);
    let out = run(&job(&db, &["--no-history"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("stored in"), "{}", stderr(&out));
}

#[test]
fn damaged_runs_are_skipped_and_named_by_every_command() {
    let dir = scratch();
    let db = dir.path().join("h.db");
    let db_flag = format!("--db={}", db.display());
    for _ in 0..2 {
        assert!(run(&job(&db, &[])).status.success());
    }
    assert!(run(&job(&db, &["--repeat=2"])).status.success());
    // Run 2: its report cut short; run 4 (the second repetition of 3): that, and a
    // start time that is text (which the listing reads).
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE runs SET report_json = substr(report_json, 1, 40) WHERE id IN (2, 4)",
        [],
    )
    .unwrap();
    conn.execute("UPDATE runs SET started_unix_ms = 'noon' WHERE id = 4", [])
        .unwrap();
    drop(conn);

    let listed = iolens(&["history", &db_flag]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(
        stderr(&listed).contains("run 4 is damaged in the history database (")
            && stderr(&listed).contains("): skipped"),
        "{}",
        stderr(&listed)
    );
    let table = stdout(&listed);
    let ids: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["1", "2", "3"], "{table}");

    let shown = iolens(&["show", "2", &db_flag]);
    assert_eq!(shown.status.code(), Some(1), "{}", stderr(&shown));
    assert!(
        stderr(&shown)
            .contains("run 2 is damaged in the history database (its report is not valid JSON")
            && !stderr(&shown).contains("no run with id"),
        "{}",
        stderr(&shown)
    );
    // The --repeat batch of run 3 without its damaged repetition, named.
    let page = dir.path().join("r.html");
    let reported = iolens(&["report", "3", &db_flag, "--html", page.to_str().unwrap()]);
    assert!(reported.status.success(), "{}", stderr(&reported));
    assert!(
        stderr(&reported).contains("run 4 is damaged"),
        "{}",
        stderr(&reported)
    );
    let compared = iolens(&["compare", "1", "3", &db_flag]);
    assert!(compared.status.success(), "{}", stderr(&compared));
    assert!(
        stderr(&compared).contains("run 4 is damaged"),
        "{}",
        stderr(&compared)
    );
    let trend = iolens(&["history", "--trend", "iops", &db_flag]);
    assert!(trend.status.success(), "{}", stderr(&trend));
    assert!(
        stderr(&trend).contains("run 4 is damaged"),
        "{}",
        stderr(&trend)
    );
}
