//! fio as the oracle for how syncs are counted in the JSON: `sync.total_ios` counts
//! the fsyncs of `fsync=N` (fio's DDIR_SYNC), not fdatasyncs (timed in `sync.lat_ns`
//! all the same) and not `end_fsync`'s (fio runs it after the job's I/O, uncounted).

use crate::fio_match::{fio, iolens_json};
use crate::support::scratch;

/// `sync.total_ios` and the samples of `sync.lat_ns` of a 16-write job with `extra`.
fn sync_counts(doc: &serde_json::Value) -> (u64, u64) {
    let sync = &doc["jobs"][0]["sync"];
    let total = sync["total_ios"].as_u64().unwrap_or(0);
    (total, sync["lat_ns"]["N"].as_u64().unwrap_or(0))
}

#[test]
fn syncs_are_counted_as_fio_counts_them() {
    let cases: [(&str, (u64, u64)); 4] = [
        ("--end_fsync=1", (0, 0)),
        ("--fdatasync=5", (0, 3)),
        ("--fsync=5", (3, 3)),
        ("--fsync=5 --end_fsync=1", (3, 3)),
    ];
    for (extra, expected) in cases {
        let mut args = vec![
            "--name=w",
            "--filename=f",
            "--size=1m",
            "--bs=64k",
            "--rw=write",
            "--output-format=json",
        ];
        args.extend(extra.split(' '));
        let dir = scratch();
        let (doc, code) = iolens_json(dir.path(), &args);
        assert_eq!(code, 0, "{extra}: expected success: {doc}");
        assert_eq!(
            sync_counts(&doc),
            expected,
            "{extra}: expected (total_ios, lat samples) on the right"
        );
        let dir = scratch();
        if let Some(fio_doc) = fio(dir.path(), &args) {
            assert_eq!(
                sync_counts(&fio_doc),
                expected,
                "{extra}: expected fio's (total_ios, lat samples) on the right"
            );
        }
    }
}
