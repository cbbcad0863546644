//! The history store's unit tests: schema migrations, concurrent writers, queries.

use super::*;
use crate::testutil::{run_report, scratch_dir};

fn report_at(ms: u64, iops: f64) -> RunReport {
    let mut r = run_report(&[("rr", iops)]);
    r.started_unix_ms = ms;
    r
}

fn user_version(path: &Path) -> u32 {
    Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn a_new_database_gets_the_current_schema() {
    let dir = scratch_dir();
    let path = dir.path().join("sub/dir/history.db");
    Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::VERSION);
    // Opening again is a no-op.
    Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::VERSION);
}

#[test]
fn stores_lists_and_returns_reports() {
    let dir = scratch_dir();
    let mut store = Store::open(&dir.path().join("h.db")).unwrap();
    let first = store.insert(&report_at(2_000, 100.0), None).unwrap();
    let second = store.insert(&report_at(3_000, 110.0), Some(first)).unwrap();
    let other = store
        .insert(&run_report(&[("seq", 50.0), ("rand", 20.0)]), None)
        .unwrap();

    let all = store.list(&Filter::default()).unwrap().items;
    assert_eq!(
        all.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![first, second, other]
    );
    assert_eq!(all[1].batch, first);
    assert_eq!(all[2].jobs, "seq,rand");
    assert_eq!(all[0].targets, "/data/rr");
    assert!(all[0].kernel.is_some());

    let by_job = Filter {
        job: Some("rand".into()),
        ..Default::default()
    };
    assert_eq!(store.list(&by_job).unwrap().items.len(), 1);
    let by_target = Filter {
        target: Some("data/r".into()),
        since_unix_ms: Some(2_500),
        ..Default::default()
    };
    assert_eq!(
        store
            .list(&by_target)
            .unwrap()
            .items
            .iter()
            .map(|r| r.id)
            .collect::<Vec<_>>(),
        vec![second, other]
    );

    assert_eq!(store.report(second).unwrap().jobs[0].dirs[0].iops, 110.0);
    assert_eq!(store.batch_of(second).unwrap().items.len(), 2);
    assert!(matches!(store.report(999), Err(StoreError::NotFound(999))));

    let points = store
        .metric_points(Metric::Iops, &Filter::default())
        .unwrap()
        .items;
    assert_eq!(
        points.iter().map(|p| p.value).collect::<Vec<_>>(),
        vec![100.0, 110.0, 50.0, 20.0]
    );
}

/// The v1 schema exactly as v1 created it: the fixture for the migration test.
const V1_FIXTURE: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_unix_ms INTEGER NOT NULL,
    report_json TEXT NOT NULL
);
CREATE INDEX runs_started ON runs(started_unix_ms);
PRAGMA user_version = 1;
";

/// A v1 database holding one report (run 1, 321 IOPS of job 'rr').
fn v1_database_with_one_report(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(V1_FIXTURE).unwrap();
    let json = serde_json::to_string(&report_at(5_000, 321.0)).unwrap();
    conn.execute(
        "INSERT INTO runs (started_unix_ms, report_json) VALUES (5000, ?1)",
        [json],
    )
    .unwrap();
    conn
}

#[test]
fn a_v1_database_is_migrated_and_its_reports_indexed() {
    let dir = scratch_dir();
    let path = dir.path().join("v1.db");
    {
        let conn = v1_database_with_one_report(&path);
        conn.execute(
            "INSERT INTO runs (started_unix_ms, report_json) VALUES (6000, '{\"from\":\"elsewhere\"}')",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::VERSION);
    let runs = store.list(&Filter::default()).unwrap().items;
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0].batch, runs[0].jobs.as_str()), (runs[0].id, "rr"));
    // Unknown to v1 and not recorded in the report.
    assert_eq!(runs[0].host, None);
    assert_eq!(runs[1].jobs, "");
    let points = store
        .metric_points(Metric::Iops, &Filter::default())
        .unwrap()
        .items;
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].value, 321.0);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = scratch_dir();
    let path = dir.path().join("future.db");
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", schema::VERSION + 1)
        .unwrap();
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::NewerSchema(v)) if v == schema::VERSION + 1
    ));
}

#[test]
fn connections_writing_at_once_all_succeed() {
    let dir = scratch_dir();
    let path = dir.path().join("busy.db");
    Store::open(&path).unwrap();
    std::thread::scope(|s| {
        for writer in 0..4 {
            let path = &path;
            s.spawn(move || {
                let mut store = Store::open(path).unwrap();
                for i in 0..25 {
                    store
                        .insert(&report_at(writer * 1000 + i, 1.0 + i as f64), None)
                        .unwrap();
                }
            });
        }
    });
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list(&Filter::default()).unwrap().items.len(), 100);
}

/// Environment variable that turns `writer_until_killed` into an endless writer.
const KILL_TEST_DB: &str = "IOLENS_STORE_KILL_TEST_DB";

/// Run by `a_writer_killed_mid_write_leaves_a_readable_database` in a child
/// process: writes until it is killed. Without the variable it does nothing.
#[test]
#[ignore = "helper process for the kill -9 test"]
fn writer_until_killed() {
    let Some(path) = std::env::var_os(KILL_TEST_DB) else {
        return;
    };
    let mut store = Store::open(Path::new(&path)).unwrap();
    // Large reports keep each transaction busy long enough for the kill to land mid-write.
    let jobs: Vec<(String, f64)> = (0..200)
        .map(|i| (format!("job{i}"), 1.0 + i as f64))
        .collect();
    let names: Vec<(&str, f64)> = jobs.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let report = run_report(&names);
    loop {
        store.insert(&report, None).unwrap();
    }
}

#[test]
fn a_writer_killed_mid_write_leaves_a_readable_database() {
    let dir = scratch_dir();
    let path = dir.path().join("killed.db");
    Store::open(&path).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store::tests::writer_until_killed",
            "--ignored",
            "--nocapture",
        ])
        .env(KILL_TEST_DB, &path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let reader = Store::open(&path).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while reader.list(&Filter::default()).unwrap().items.len() < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer stored nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(reader);

    let store = Store::open(&path).unwrap();
    let check: String = store
        .conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let runs = store.list(&Filter::default()).unwrap().items;
    assert!(runs.len() >= 5);
    for run in &runs {
        assert_eq!(store.report(run.id).unwrap().jobs.len(), 200);
    }
}

#[test]
fn a_v2_database_gets_each_stored_jobs_configuration() {
    let dir = scratch_dir();
    let path = dir.path().join("v2.db");
    {
        // The v2 migration as v2 ran it, minus the indexing the v3 step replaces.
        let conn = v1_database_with_one_report(&path);
        conn.execute_batch(schema::V2).unwrap();
        conn.execute("UPDATE runs SET batch = id", []).unwrap();
        conn.pragma_update(None, "user_version", 2).unwrap();
        conn.execute(
            "INSERT INTO run_jobs (run_id, job, target, engine, iops) VALUES (1, 'rr', '/data/rr', 'psync', 321.0)",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::VERSION);
    let points = store
        .metric_points(Metric::Iops, &Filter::default())
        .unwrap()
        .items;
    assert_eq!(
        points.len(),
        1,
        "expected the job indexed once, got {points:?}"
    );
    assert!(
        points[0].config_fingerprint.is_some() && points[0].config["filename"] == "/data/rr",
        "expected the migration to fill the configuration, got {:?}",
        points[0]
    );
}

#[test]
fn configurations_and_temporary_targets_are_stored_per_job() {
    let dir = scratch_dir();
    let mut store = Store::open(&dir.path().join("h.db")).unwrap();
    let with = |bs: &str, target: &str| {
        let mut r = run_report(&[("x", 100.0)]);
        r.jobs[0].options = vec![("filename".into(), target.into()), ("bs".into(), bs.into())];
        r
    };
    store
        .insert(&with("4k", "/d/.iolens-quick-aaaa"), None)
        .unwrap();
    store
        .insert(&with("4k", "/d/.iolens-quick-bbbb"), None)
        .unwrap();
    store
        .insert(&with("64k", "/d/.iolens-quick-cccc"), None)
        .unwrap();
    let points = store
        .metric_points(Metric::Iops, &Filter::default())
        .unwrap()
        .items;
    let fingerprints: Vec<_> = points
        .iter()
        .map(|p| p.config_fingerprint.clone())
        .collect();
    assert!(
        fingerprints[0] == fingerprints[1] && fingerprints[0] != fingerprints[2],
        "expected two temporary files of one directory alike and bs=64k apart, got {fingerprints:?}"
    );
    let listed = store.list(&Filter::default()).unwrap().items;
    assert_eq!(
        listed[0].targets, "/d/.iolens-quick-aaaa (temporary, removed)",
        "expected the temporary target marked"
    );
}

#[test]
fn a_history_written_by_schema_3_opens_and_reads_back() {
    let dir = scratch_dir();
    let path = dir.path().join("history.db");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/schema1/history.db"
    );
    std::fs::copy(fixture, &path).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::VERSION);
    let batch = store.batch_of(1).unwrap().items;
    assert_eq!(
        batch.len(),
        4,
        "expected the 4 repetitions of batch 1, got {}",
        batch.len()
    );
    let verified = store.report(6).unwrap();
    let bad = &verified.verify[0].bad_blocks[0];
    assert_eq!(
        (bad.fault.as_str(), bad.found.map(|h| h.offset)),
        ("misdirected", Some(12288)),
        "expected run 6's misdirected block, got {bad:?}"
    );
}

#[test]
fn interrupted_runs_are_marked_when_stored_and_when_a_v3_history_is_migrated() {
    let dir = scratch_dir();
    let path = dir.path().join("h.db");
    let cut_short = |ms| RunReport {
        interrupted: true,
        ..report_at(ms, 5.0)
    };
    {
        let mut store = Store::open(&path).unwrap();
        store.insert(&report_at(1_000, 9.0), None).unwrap();
        store.insert(&cut_short(2_000), None).unwrap();
    }
    // the database as schema 3 left it: no column, the flag only in the reports
    Connection::open(&path)
        .unwrap()
        .execute_batch("ALTER TABLE runs DROP COLUMN interrupted; PRAGMA user_version = 3;")
        .unwrap();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::VERSION);
    store.insert(&cut_short(3_000), None).unwrap();
    store.insert(&report_at(4_000, 9.0), None).unwrap();
    let listed: Vec<bool> = store
        .list(&Filter::default())
        .unwrap()
        .items
        .iter()
        .map(|r| r.interrupted)
        .collect();
    assert_eq!(
        listed,
        [false, true, true, false],
        "runs 2 and 3 were cut short"
    );
    let points: Vec<bool> = store
        .metric_points(Metric::Iops, &Filter::default())
        .unwrap()
        .items
        .iter()
        .map(|p| p.interrupted)
        .collect();
    assert_eq!(points, listed, "expected each point marked as its run");
}

#[test]
fn the_path_is_chosen_by_flag_env_and_an_absolute_xdg_data_home_only() {
    let choose = |flag: Option<&str>, vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        super::choose_path(flag.map(Path::new), move |k| {
            vars.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| std::ffi::OsString::from(v))
        })
        .ok()
    };
    let home = [("HOME", "/h")];
    let fallback = Some(PathBuf::from("/h/.local/share/iolens/history.db"));
    assert_eq!(
        choose(Some("f.db"), &[("IOLENS_DB", "/e.db")]),
        Some(PathBuf::from("f.db"))
    );
    assert_eq!(
        choose(None, &[("IOLENS_DB", "/e.db"), ("XDG_DATA_HOME", "/x")]),
        Some(PathBuf::from("/e.db"))
    );
    assert_eq!(
        choose(None, &[("XDG_DATA_HOME", "/x"), ("HOME", "/h")]),
        Some(PathBuf::from("/x/iolens/history.db"))
    );
    assert_eq!(
        choose(None, &[("XDG_DATA_HOME", "rel/data"), ("HOME", "/h")]),
        fallback,
        "a relative XDG_DATA_HOME is ignored"
    );
    assert_eq!(
        choose(None, &[("XDG_DATA_HOME", ""), ("HOME", "/h")]),
        fallback,
        "an empty XDG_DATA_HOME is ignored"
    );
    assert_eq!(choose(None, &[("IOLENS_DB", "")]), None);
    assert_eq!(choose(None, &home), fallback);
    assert_eq!(choose(None, &[("XDG_DATA_HOME", "rel")]), None);
}

#[test]
fn a_created_directory_is_0700_and_the_database_and_its_wal_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let before = mode(dir.path());
    let db = dir.path().join("a/b/h.db");
    let mut store = Store::open(&db).unwrap();
    store.insert(&report_at(1_000, 1.0), None).unwrap();
    assert_eq!(mode(&dir.path().join("a")), 0o700);
    assert_eq!(mode(&dir.path().join("a/b")), 0o700);
    assert_eq!(mode(&db), 0o600);
    for side in ["h.db-wal", "h.db-shm"] {
        assert_eq!(mode(&dir.path().join("a/b").join(side)), 0o600, "{side}");
    }
    assert_eq!(
        mode(dir.path()),
        before,
        "an existing directory is left as is"
    );
}

#[test]
fn damaged_rows_are_skipped_and_named_never_taken_for_missing() {
    let dir = scratch_dir();
    let path = dir.path().join("h.db");
    let mut store = Store::open(&path).unwrap();
    let good = store.insert(&report_at(2_000, 100.0), None).unwrap();
    let bad_report = store.insert(&report_at(3_000, 110.0), Some(good)).unwrap();
    let bad_time = store.insert(&report_at(4_000, 120.0), None).unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE runs SET report_json = substr(report_json, 1, 40) WHERE id = ?1",
        [bad_report],
    )
    .unwrap();
    conn.execute(
        "UPDATE runs SET started_unix_ms = 'noon' WHERE id = ?1",
        [bad_time],
    )
    .unwrap();
    conn.execute("UPDATE run_jobs SET config = '{' WHERE run_id = ?1", [good])
        .unwrap();

    let listed = store.list(&Filter::default()).unwrap();
    assert_eq!(
        listed.items.iter().map(|r| r.id).collect::<Vec<_>>(),
        [good, bad_report]
    );
    assert_eq!(listed.damaged.len(), 1);
    assert_eq!(listed.damaged[0].id, bad_time);
    assert!(
        listed.damaged[0].why.contains("started_unix_ms"),
        "{:?}",
        listed.damaged
    );

    match store.report(bad_report) {
        Err(StoreError::Damaged(d)) => {
            assert_eq!(d.id, bad_report);
            assert!(d.why.contains("not valid JSON"), "{}", d.why);
        }
        other => panic!("expected run {bad_report} named as damaged, got {other:?}"),
    }
    assert!(matches!(store.report(99), Err(StoreError::NotFound(99))));
    // The batch of the good run: the damaged repetition is skipped and named.
    let batch = store.batch_of(good).unwrap();
    assert_eq!(batch.items.len(), 1);
    assert_eq!(batch.damaged[0].id, bad_report);
    assert!(matches!(
        store.batch_of(bad_report),
        Err(StoreError::Damaged(_))
    ));

    let points = store
        .metric_points(Metric::Iops, &Filter::default())
        .unwrap();
    assert!(
        points
            .damaged
            .iter()
            .any(|d| d.id == good && d.why.contains("job configuration")),
        "{:?}",
        points.damaged
    );
}
