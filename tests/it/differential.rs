//! The oracle: seeded job sections run under fio and iolens, their JSON byte
//! and I/O counts compared. Deliberate differences are listed in
//! `oracle::KNOWN` (and docs/fio-differences.md); anything else fails with
//! the seed, the job file and both tools' numbers.
//!
//! `IOLENS_DIFFERENTIAL_SEEDS=FIRST..END` picks other seeds (bench/differential
//! runs long sweeps that way).

pub(crate) mod gen;
mod oracle;

use crate::support::scratch;
use gen::Case;
use oracle::{classes, judge, run_both, Known, Verdict, KNOWN};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The fixed seed set of `cargo test`.
const SEEDS: std::ops::Range<u64> = 0..520;
/// Cases per job file: fio and iolens each start once per batch.
const BATCH: usize = 26;
/// Batches run at once. fio mostly sleeps (100 ms steps between the groups of
/// a job file), so this many fit on two cores.
const PARALLEL_BATCHES: usize = 8;

fn seeds() -> std::ops::Range<u64> {
    let Ok(range) = std::env::var("IOLENS_DIFFERENTIAL_SEEDS") else {
        return SEEDS;
    };
    let (first, end) = range
        .split_once("..")
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .unwrap_or_else(|| panic!("IOLENS_DIFFERENTIAL_SEEDS={range}: expected FIRST..END"));
    first..end
}

/// Runs one batch as one job file; a batch that fails is run again case by
/// case, so a failing status is the case's own.
fn judge_batch<'a>(batch: &'a [Case], dir: &Path) -> Vec<(&'a Case, Verdict)> {
    let refs: Vec<&Case> = batch.iter().collect();
    let [fio, iolens] = run_both(&refs, dir);
    let batch_ok = fio.status == Some(0) && iolens.status == Some(0);
    batch
        .iter()
        .map(|case| {
            let verdict = if batch_ok {
                judge(case, &fio, &iolens)
            } else {
                let [fio, iolens] = run_both(&[case], dir);
                judge(case, &fio, &iolens)
            };
            (case, verdict)
        })
        .collect()
}

#[test]
fn fio_and_iolens_report_the_same_bytes_and_ios() {
    if !oracle::fio_present() {
        eprintln!("skipped: fio is not installed (the differential oracle needs it)");
        return;
    }
    let cases: Vec<Case> = seeds().map(Case::generate).collect();
    let dir = scratch();
    let batches: Vec<&[Case]> = cases.chunks(BATCH).collect();
    let next = AtomicUsize::new(0);
    let judged: Mutex<Vec<(&Case, Verdict)>> = Mutex::new(Vec::new());
    // fio sleeps between the groups of a job file: batches run side by side
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL_BATCHES {
            scope.spawn(|| {
                while let Some(batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let verdicts = judge_batch(batch, dir.path());
                    judged.lock().unwrap().extend(verdicts);
                }
            });
        }
    });
    let mut judged = judged.into_inner().unwrap();
    judged.sort_by_key(|(case, _)| case.seed);
    let mut failures = Vec::new();
    let mut tolerated: BTreeMap<Known, usize> = BTreeMap::new();
    for (case, verdict) in judged {
        match verdict {
            Verdict::Same => {
                for known in classes(case) {
                    *tolerated.entry(known).or_default() += 1;
                }
            }
            Verdict::Differs(report) => failures.push(report),
        }
    }
    let count = |f: fn(&Case) -> bool| cases.iter().filter(|c| f(c)).count();
    eprintln!(
        "{} cases verify, {} merge sections into one group entry (compared exactly)",
        count(|c| c.sections.iter().any(|s| s.has("verify"))),
        count(|c| c.merges_sections()),
    );
    for (known, reason) in KNOWN {
        let count = tolerated.get(known).unwrap_or(&0);
        eprintln!("{count} of {} cases as {known:?} ({reason})", cases.len());
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from fio beyond the known differences:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn a_block_that_does_not_fit_in_the_size_is_not_issued() {
    // fio writes 6 blocks of 10 MiB into size=64m, never a 7th wrapped to offset 0
    for rw in ["write", "randwrite"] {
        let doc = crate::support::json(&crate::support::iolens(&[
            "run",
            "--no-history",
            "--name=s",
            "--ioengine=null",
            "--size=64m",
            "--bs=10m",
            &format!("--rw={rw}"),
            "--output-format=json",
        ]));
        let write = &doc["jobs"][0]["write"];
        assert_eq!(
            (write["total_ios"].as_u64(), write["io_bytes"].as_u64()),
            (Some(6), Some(60 << 20)),
            "{rw}: expected 6 I/Os and 60 MiB, saw {write}"
        );
    }
}
