//! Interrupted runs stay honest: the real binary stopped by SIGINT, SIGTERM and
//! SIGHUP, alone and in twos, during the layout, mid-run and while the report is being stored,
//! keeps its report, stores it marked interrupted and leaves no temporary file;
//! only a third signal, or a second one after the grace period, aborts, and that
//! still removes what iolens created. The phases are found by polling what the
//! program writes (its timeline, its report, its test file), never by sleeping a
//! guessed time; the layout is slowed by a FUSE filesystem, the report phase is
//! held open by a lock on the history database.

use crate::support::{command, scratch};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Long enough for any phase on a loaded machine; a test fails when it passes.
const PATIENCE: Duration = Duration::from_secs(120);

/// iolens started in `dir` with stdout and stderr in files there (a pipe could
/// fill and stall it) and its temporary directory in `dir/tmp`; killed on drop
/// if it still runs, so a failing test leaves no process behind.
struct Running {
    child: Child,
    dir: PathBuf,
}

impl Running {
    fn start(dir: &Path, args: &[&str]) -> Running {
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let child = command()
            .args(args)
            .current_dir(dir)
            .env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .expect("start iolens");
        Running {
            child,
            dir: dir.to_path_buf(),
        }
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(self.dir.join("stdout")).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
    }

    /// Wait until `ready` holds (polled), failing if iolens ended first.
    fn wait_for(&mut self, what: &str, ready: impl Fn(&Running) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !ready(self) {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "iolens ended ({status}) before {what}; stderr:\n{}",
                    self.stderr()
                );
            }
            assert!(Instant::now() < deadline, "no {what} within {PATIENCE:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait until stderr says `fragment`.
    fn wait_saying(&mut self, fragment: &str) {
        self.wait_for(fragment, |r| r.stderr().contains(fragment));
    }

    fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .args(["-s", name, &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -s {name} failed");
    }

    /// Its exit code once it ends.
    fn code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "iolens did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory and the path of a history database in it.
fn scratch_with_history() -> (tempfile::TempDir, PathBuf) {
    let dir = scratch();
    let db = dir.path().join("h.db");
    (dir, db)
}

/// A null-engine job that runs until stopped, printing its timeline each second.
fn endless_job(db: &Path) -> Vec<String> {
    [
        "run",
        "--name=endless",
        "--ioengine=null",
        "--size=64m",
        "--rw=randread",
        "--time_based",
        "--runtime=10m",
        "--timeline",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--db={}", db.display())])
    .collect()
}

fn args(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

/// `iolens history` of `db`.
fn history(db: &Path) -> String {
    let out = command()
        .args(["history", &format!("--db={}", db.display())])
        .output()
        .expect("run iolens history");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Names in `dir` that iolens may have left: its quick test files and anything in `tmp`.
fn leftovers(dir: &Path) -> Vec<String> {
    let names = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .map(|entries| {
                entries
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut left: Vec<String> = names(dir)
        .into_iter()
        .filter(|n| n.starts_with(".iolens-quick-"))
        .collect();
    left.extend(
        names(&dir.join("tmp"))
            .into_iter()
            .map(|n| format!("tmp/{n}")),
    );
    left
}

#[test]
fn each_signal_pattern_mid_run_keeps_the_report_and_stores_it_marked() {
    let patterns: [(&[&str], i32); 4] = [
        (&["INT", "INT"], 130),
        (&["TERM"], 143),
        (&["INT", "TERM"], 143),
        (&["HUP"], 129),
    ];
    for (signals, code) in patterns {
        let (dir, db) = scratch_with_history();
        let mut iolens = Running::start(dir.path(), &args(&endless_job(&db)));
        // the timeline's header comes once the job has run a second
        iolens.wait_saying("timeline:");
        for s in signals {
            iolens.signal(s);
        }
        let case = format!("{signals:?} mid-run");
        assert_eq!(
            iolens.code(),
            Some(code),
            "{case}: expected exit {code}; stderr:\n{}",
            iolens.stderr()
        );
        let (out, err) = (iolens.stdout(), iolens.stderr());
        assert!(
            out.contains("endless: (groupid=0"),
            "{case}: expected the report, got:\n{out}"
        );
        assert!(
            err.contains("iolens: interrupted: the results are partial")
                && err.contains("saved in the history as run 1"),
            "{case}: expected the partial run stored; stderr:\n{err}"
        );
        assert!(
            !err.contains("aborted"),
            "{case}: expected no abort; stderr:\n{err}"
        );
        assert!(
            history(&db).contains(" INTERRUPTED "),
            "{case}: expected the stored run marked:\n{}",
            history(&db)
        );
        assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "{case}");
    }
}

#[test]
fn quick_stopped_twice_mid_run_like_timeout_keeps_its_table_and_removes_its_file() {
    let (dir, db) = scratch_with_history();
    let mut iolens = quick_with_its_file_laid_out(
        dir.path(),
        &db,
        &["--duration=30", "--ramp=100ms", "--size=16m"],
    );
    // the first test measures once its ramp is over
    std::thread::sleep(Duration::from_millis(500));
    iolens.signal("TERM");
    iolens.signal("TERM");
    assert_eq!(iolens.code(), Some(143), "stderr:\n{}", iolens.stderr());
    assert!(
        iolens.stdout().contains("SEQ1M-Q8T1-read"),
        "expected the table; got:\n{}",
        iolens.stdout()
    );
    assert!(
        iolens.stderr().contains("saved in the history as run 1")
            && history(&db).contains(" INTERRUPTED "),
        "{}",
        iolens.stderr()
    );
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// `iolens quick` on `dir` with its history in `db` and these `--duration`, `--ramp`, `--size`.
fn start_quick(dir: &Path, db: &Path, settings: &[&str]) -> Running {
    let target = dir.display().to_string();
    let db_arg = format!("--db={}", db.display());
    let mut words = vec!["quick", target.as_str(), db_arg.as_str()];
    words.extend(settings);
    Running::start(dir, &words)
}

/// `start_quick` (with `--size=16m` among `settings`), once its test file is laid out.
fn quick_with_its_file_laid_out(dir: &Path, db: &Path, settings: &[&str]) -> Running {
    let mut iolens = start_quick(dir, db, settings);
    let dir = dir.to_path_buf();
    iolens.wait_for("the laid-out test file", move |_| {
        std::fs::read_dir(&dir).unwrap().any(|e| {
            let e = e.unwrap();
            e.file_name()
                .to_string_lossy()
                .starts_with(".iolens-quick-")
                && e.metadata().is_ok_and(|m| m.len() >= 16 << 20)
        })
    });
    iolens
}

#[test]
fn quick_stopped_before_it_measured_stores_nothing_and_says_so() {
    let (dir, db) = scratch_with_history();
    // a ramp far longer than the test takes to reach it: nothing is measured
    let mut iolens = quick_with_its_file_laid_out(
        dir.path(),
        &db,
        &["--duration=1", "--ramp=10m", "--size=16m"],
    );
    iolens.signal("INT");
    assert_eq!(iolens.code(), Some(130), "stderr:\n{}", iolens.stderr());
    let err = iolens.stderr();
    assert!(
        err.contains("iolens quick: interrupted before any test measured: nothing stored")
            && !err.contains("saved in the history"),
        "{err}"
    );
    assert!(
        history(&db).starts_with("no runs stored yet"),
        "{}",
        history(&db)
    );
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// The history database `db`, created, with its write lock held until dropped:
/// a run's report is written, then iolens waits to store it.
struct HeldHistory(rusqlite::Connection);

impl HeldHistory {
    fn hold(db: &Path) -> HeldHistory {
        assert!(history(db).starts_with("no runs stored yet"));
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        HeldHistory(conn)
    }
}

impl Drop for HeldHistory {
    fn drop(&mut self) {
        let _ = self.0.execute_batch("ROLLBACK");
    }
}

#[test]
fn at_report_time_two_signals_wait_for_the_history_and_a_third_or_a_late_one_aborts_cleanly() {
    // (signals, a pause after the first, aborted)
    let cases: [(&[&str], Duration, bool); 3] = [
        (&["INT", "TERM"], Duration::ZERO, false),
        (&["INT", "INT", "INT"], Duration::ZERO, true),
        (&["INT", "HUP"], Duration::from_millis(5500), true),
    ];
    for (signals, pause, aborts) in cases {
        let case = format!("{signals:?} (pause {pause:?}) at report time");
        let (dir, db) = scratch_with_history();
        let held = HeldHistory::hold(&db);
        let mut iolens = start_quick(
            dir.path(),
            &db,
            &["--duration=100ms", "--ramp=0", "--size=8m"],
        );
        // the table is printed before the run is stored
        iolens.wait_for("the table", |r| r.stdout().contains("RND4K-Q1T1-write"));
        let answers = ["stopping: the report", "again: still finishing"];
        for (i, s) in signals.iter().enumerate() {
            iolens.signal(s);
            if let Some(answer) = answers.get(i).filter(|_| i + 1 < signals.len()) {
                iolens.wait_saying(answer);
                if i == 0 {
                    std::thread::sleep(pause);
                }
            }
        }
        if aborts {
            let last = signals.last().unwrap();
            let code = if *last == "HUP" { 129 } else { 130 };
            assert_eq!(iolens.code(), Some(code), "{case}: {}", iolens.stderr());
            assert!(
                iolens
                    .stderr()
                    .contains("aborted without a report; removed"),
                "{case}: {}",
                iolens.stderr()
            );
            drop(held);
            assert!(history(&db).starts_with("no runs stored yet"), "{case}");
        } else {
            drop(held);
            let code = iolens.code();
            assert!(
                iolens.stderr().contains("saved in the history as run 1"),
                "{case}: {}",
                iolens.stderr()
            );
            assert_eq!(
                code,
                Some(0),
                "{case}: the run had measured all it was asked"
            );
        }
        assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "{case}");
    }
}

/// `iolens WORDS…` ended: its exit code, stdout and stderr.
fn iolens_says(words: &[&str]) -> (Option<i32>, String, String) {
    let out = command().args(words).output().expect("run iolens");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_interrupted_run_is_marked_in_history_trend_compare_and_show() {
    let (dir, db) = scratch_with_history();
    let db_arg = format!("--db={}", db.display());
    // the same job twice: run 1 whole, run 2 stopped once its first second is out
    let job: Vec<String> = endless_job(&db)
        .into_iter()
        .map(|w| match w.starts_with("--runtime=") {
            true => "--runtime=3s".into(),
            false => w,
        })
        .collect();
    for stop in [false, true] {
        let mut iolens = Running::start(dir.path(), &args(&job));
        if stop {
            iolens.wait_saying("timeline:");
            iolens.signal("INT");
        }
        assert_eq!(
            iolens.code(),
            Some(if stop { 130 } else { 0 }),
            "{}",
            iolens.stderr()
        );
    }
    let (_, list, _) = iolens_says(&["history", &db_arg]);
    let rows: Vec<&str> = list.lines().collect();
    assert!(
        rows[0].contains(" ended ")
            && rows[1].contains(" complete ")
            && rows[2].contains(" INTERRUPTED "),
        "expected run 2 marked interrupted:\n{list}"
    );

    let (_, trend, _) = iolens_says(&["history", &db_arg, "--trend=iops"]);
    assert!(
        trend.contains("(1 interrupted run(s) left out") && !trend.contains("\n      2  "),
        "expected run 2 left out of the trend:\n{trend}"
    );
    let (_, trend, _) = iolens_says(&["history", &db_arg, "--trend=iops", "--with-interrupted"]);
    let run_2 = trend.lines().find(|l| l.starts_with("      2  "));
    assert!(
        run_2.is_some_and(|l| l.ends_with("INTERRUPTED: partial results, not judged")),
        "expected run 2 shown, marked:\n{trend}"
    );

    let (code, _, err) = iolens_says(&["compare", &db_arg, "1", "2"]);
    assert_eq!(code, Some(2), "expected a refusal: {err}");
    assert!(
        err.contains("run 2 was interrupted: its results are partial, not comparable"),
        "{err}"
    );
    let (code, out, err) = iolens_says(&["compare", &db_arg, "1", "2", "--allow-interrupted"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning: run 2 was interrupted") && !out.is_empty(),
        "expected the comparison with a warning: {err}"
    );

    let (_, shown, _) = iolens_says(&["show", &db_arg, "2"]);
    assert!(
        shown.starts_with("run 2 was interrupted (signal): its results are partial"),
        "{shown}"
    );
    let (_, shown, _) = iolens_says(&["show", &db_arg, "1"]);
    assert!(!shown.contains("interrupted"), "{shown}");
}

/// Signals while a job's file is being laid out, every layout write slowed by a
/// FUSE filesystem (a held write would keep the signals from being handled at
/// all: the kernel waits for it uninterruptibly): two keep the report (of a run
/// that measured nothing) and store it marked; a third aborts without waiting
/// for the layout, and nothing is stored.
#[test]
fn signals_during_the_layout_stop_before_the_run_or_abort_on_the_third() {
    use crate::fault_fs::{Fault, FaultFs, Op, Rule};
    for (signals, aborts) in [
        (&["INT", "TERM"][..], false),
        (&["INT", "INT", "HUP"], true),
    ] {
        let case = format!("{signals:?} during the layout");
        let Some(fs) = FaultFs::mount("f", 0) else {
            return;
        };
        fs.inject(Rule::always(
            Op::Write,
            0..u64::MAX,
            Fault::Delay(Duration::from_millis(100)),
        ));
        let (dir, db) = scratch_with_history();
        let file = format!("--filename={}", fs.file().display());
        let db_arg = format!("--db={}", db.display());
        let mut iolens = Running::start(
            dir.path(),
            &[
                "run",
                "--name=laid",
                &file,
                "--rw=read",
                "--size=16m",
                "--bs=64k",
                &db_arg,
            ],
        );
        iolens.wait_for("a slowed layout write", |_| fs.fired() > 0);
        let answers = ["stopping: the report", "again: still finishing"];
        for (s, answer) in signals.iter().zip(answers.iter().map(Some).chain([None])) {
            iolens.signal(s);
            if let Some(answer) = answer {
                iolens.wait_saying(answer);
            }
        }
        // the layout was still going when the last answer came
        let file_size = std::fs::metadata(fs.file()).unwrap().len();
        assert!(file_size < 16 << 20, "{case}: laid out before the signals");
        let code = iolens.code();
        let err = iolens.stderr();
        match aborts {
            true => {
                assert_eq!(code, Some(129), "{case}: {err}");
                assert!(
                    err.contains("SIGHUP: aborted without a report"),
                    "{case}: {err}"
                );
                assert!(!history(&db).contains(" laid"), "{case}: {}", history(&db));
            }
            false => {
                assert_eq!(code, Some(143), "{case}: {err}");
                assert!(
                    iolens.stdout().contains("laid: (g=0)")
                        && err.contains("interrupted: the results are partial")
                        && history(&db).contains(" INTERRUPTED "),
                    "{case}: expected the report, stored and marked:\n{}{err}",
                    iolens.stdout()
                );
            }
        }
    }
}

/// No pause holds a stop: a worker waiting out `startdelay=1h`, or a think time of an hour
/// after its first I/O (thread or process), ends on SIGINT, and the run reports (exit 130).
#[test]
fn sigint_ends_an_hour_long_startdelay_or_thinktime() {
    let cases: [&[&str]; 3] = [
        &["--startdelay=1h"],
        &["--thinktime=3600s"],
        &["--thinktime=3600s", "--thread"],
    ];
    for pause in cases {
        let (dir, db) = scratch_with_history();
        let mut words: Vec<String> = [
            "run",
            "--name=paused",
            "--ioengine=null",
            "--size=1m",
            "--timeline",
        ]
        .iter()
        .chain(pause)
        .map(|s| s.to_string())
        .collect();
        words.push(format!("--db={}", db.display()));
        let mut iolens = Running::start(dir.path(), &args(&words));
        // the timeline's header comes once the job has run a second, in its pause
        iolens.wait_saying("timeline:");
        iolens.signal("INT");
        assert_eq!(
            iolens.code(),
            Some(130),
            "{pause:?}: stderr:\n{}",
            iolens.stderr()
        );
        assert!(
            iolens.stdout().contains("paused: (groupid=0"),
            "{pause:?}: expected the report, got:\n{}",
            iolens.stdout()
        );
    }
}
