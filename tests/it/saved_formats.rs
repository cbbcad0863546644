//! Result files and history databases written by earlier versions still load:
//! the fixtures in tests/fixtures/schema1/ are real output of iolens 0.1.0
//! (report schema 1, history schema 3), read through compare, history and show.

use crate::support::{iolens, json, scratch, stderr, stdout};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schema1")
        .join(name)
}

fn loaded(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture(name)).expect("read the fixture");
    serde_json::from_str(&text).expect("the fixture is JSON")
}

#[test]
fn result_files_of_schema_1_still_compare() {
    let (a, b) = (fixture("repeat.json"), fixture("verify.json"));
    let out = iolens(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "expected compare to read both schema-1 files, got {:?}: {}",
        out.status.code(),
        stderr(&out)
    );
    let text = stdout(&out);
    for expected in [
        "(4 runs)",
        "(1 run)",
        "job 'v' option verify_only: (not set) vs 1",
        "96.79k IO/s    57.73k IO/s    -40.4%",
    ] {
        assert!(
            text.contains(expected),
            "expected `{expected}` in the comparison, got:\n{text}"
        );
    }
}

#[test]
fn a_history_of_schema_1_still_lists_shows_and_compares() {
    let dir = scratch();
    let db = dir.path().join("history.db");
    std::fs::copy(fixture("history.db"), &db).expect("copy the fixture database");
    let db_flag = format!("--db={}", db.display());

    let out = iolens(&["history", &db_flag]);
    let list = stdout(&out);
    assert!(out.status.success(), "history failed: {}", stderr(&out));
    assert_eq!(
        list.lines().skip(1).count(),
        6,
        "expected the 6 stored runs listed, got:\n{list}"
    );

    let shown = json(&iolens(&[
        "show",
        &db_flag,
        "6",
        "--output-format=iolens-json",
    ]));
    assert_eq!(
        shown,
        loaded("verify.json"),
        "expected run 6 shown exactly as the result file the same run wrote"
    );
    let repeat = loaded("repeat.json");
    let first = json(&iolens(&[
        "show",
        &db_flag,
        "1",
        "--output-format=iolens-json",
    ]));
    assert_eq!(
        first, repeat["repetitions"][0],
        "expected run 1 shown exactly as the first repetition in the result file"
    );

    let out = iolens(&["compare", &db_flag, "1", "6"]);
    let text = stdout(&out);
    assert!(
        out.status.success() && text.contains("A: run 1 (4 runs)"),
        "expected batch 1 compared as 4 runs, got {:?}:\n{text}{}",
        out.status.code(),
        stderr(&out)
    );
}
