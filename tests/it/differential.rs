//! The oracle: seeded job sections run under fio and iolens, their JSON byte
//! and I/O counts compared. Deliberate differences are listed in
//! `oracle::KNOWN` (and docs/fio-differences.md); anything else fails with
//! the seed, the job file and both tools' numbers.
//!
//! `IOLENS_DIFFERENTIAL_SEEDS=FIRST..END` picks other seeds (bench/differential
//! runs long sweeps that way).

mod gen;
mod oracle;

use crate::support::scratch;
use gen::Case;
use oracle::{judge, run_both, Verdict, KNOWN};
use std::collections::BTreeMap;

/// The fixed seed set of `cargo test`.
const SEEDS: std::ops::Range<u64> = 0..520;
/// Cases per job file: fio and iolens each start once per batch.
const BATCH: usize = 26;

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

#[test]
#[ignore = "15 of the 520 seeds still differ (docs/fio-differences.md, Open); run with --ignored"]
fn fio_and_iolens_report_the_same_bytes_and_ios() {
    if !oracle::fio_present() {
        eprintln!("skipped: fio is not installed (the differential oracle needs it)");
        return;
    }
    let cases: Vec<Case> = seeds().map(Case::generate).collect();
    let dir = scratch();
    let mut failures = Vec::new();
    let mut pending: BTreeMap<oracle::Known, Vec<u64>> = BTreeMap::new();
    for batch in cases.chunks(BATCH) {
        let refs: Vec<&Case> = batch.iter().collect();
        let [fio, iolens] = run_both(&refs, dir.path());
        let batch_ok = fio.status == Some(0) && iolens.status == Some(0);
        for case in batch {
            // a failed run is judged case by case, so its status is the case's own
            let verdict = if batch_ok {
                judge(case, &fio, &iolens)
            } else {
                let [fio, iolens] = run_both(&[case], dir.path());
                judge(case, &fio, &iolens)
            };
            match verdict {
                Verdict::Same => {}
                Verdict::Pending(known) => pending.entry(known).or_default().push(case.seed),
                Verdict::Differs(report) => failures.push(report),
            }
        }
    }
    for (known, seeds) in &pending {
        let reason = KNOWN
            .iter()
            .find(|(k, _)| k == known)
            .map_or("", |(_, r)| r);
        eprintln!(
            "{} cases differ only as {known:?} says ({reason}): seeds {seeds:?}",
            seeds.len()
        );
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
