//! fio's tausworthe generators without the random map (`norandommap`), fio 3.33 as the
//! oracle: the same offsets for the same job on a small file, the 32-bit generator's
//! repeats on a file of more than 2^32 blocks (fio's t/t64-switch.sh) and fio's switch
//! to the 64-bit one there when `random_generator` is not given.

use crate::debug_io::io_lines;
use crate::fio_offsets::issued_by_both;
use crate::support::{command, isolated, scratch, stderr, stdout};
use std::collections::HashSet;
use std::path::Path;

#[test]
fn tausworthe_offsets_without_the_random_map_are_fios() {
    for (generator, first_kib) in [
        // fio 3.33's first offsets for worker 1 (KiB), read from its write_iolog.
        ("--random_generator=tausworthe", [60, 756, 860, 480]),
        ("--random_generator=tausworthe64", [960, 24, 80, 100]),
    ] {
        for rw in ["--rw=randread", "--rw=randwrite"] {
            let dir = scratch();
            let args = [
                "--name=t",
                "--ioengine=null",
                "--size=1m",
                "--bs=4k",
                rw,
                "--norandommap",
                generator,
            ];
            let ((_, ours), theirs) = issued_by_both(dir.path(), &format!("{args:?}"), &args);
            let offsets: Vec<u64> = ours.iter().map(|&(offset, _)| offset).collect();
            assert_eq!(
                offsets[..4],
                first_kib,
                "expected fio 3.33's first offsets (KiB) for {generator} {rw}"
            );
            if let Some((_, theirs)) = theirs {
                assert_eq!(
                    ours, theirs,
                    "expected the installed fio's I/Os (right) for {generator} {rw}, saw iolens' (left)"
                );
            }
        }
    }
}

/// The offsets of the first `count` completions of a 1 TiB, 1-byte-block random read
/// on the null engine (t/t64-switch.sh's job) under `program`, or None when it cannot run.
fn huge_file_offsets(
    program: &mut std::process::Command,
    dir: &Path,
    extra: &[&str],
    count: usize,
) -> Option<Vec<u64>> {
    let number_ios = format!("--number_ios={count}");
    let mut args = vec![
        "--name=test",
        "--ioengine=null",
        "--filesize=1T",
        "--bs=1",
        "--rw=randread",
        "--debug=io",
        "--norandommap",
        &number_ios,
    ];
    args.extend(extra);
    let out = match program.args(&args).current_dir(dir).output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            return None;
        }
    };
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected {args:?} to run, saw: {}",
        stderr(&out)
    );
    let completed: Vec<u64> = io_lines(&stdout(&out))
        .into_iter()
        .filter(|l| l.0 == "complete")
        .map(|l| l.1)
        .collect();
    assert_eq!(
        completed.len(),
        count,
        "expected {count} completions for {args:?}"
    );
    Some(completed)
}

#[test]
fn a_32_bit_tausworthe_repeats_on_a_huge_file_and_the_default_switches_to_64_bits() {
    let dir = scratch();
    let iolens = || {
        let mut c = command();
        c.args(["run", "--no-history"]);
        c
    };
    let offsets = |extra: &[&str]| {
        huge_file_offsets(&mut iolens(), dir.path(), extra, 2000).expect("iolens runs")
    };
    let given32 = ["--random_generator=tausworthe"];
    let narrow = offsets(&given32);
    assert!(
        narrow.iter().all(|offset| offset.is_multiple_of(256)),
        "expected a 32-bit draw over 2^40 blocks to land on multiples of 2^40 / 2^32"
    );
    let wide = offsets(&["--random_generator=tausworthe64"]);
    assert!(
        wide.iter()
            .filter(|offset| !offset.is_multiple_of(256))
            .count()
            > 1900,
        "expected the 64-bit generator to reach the blocks between"
    );
    let distinct: HashSet<u64> = wide.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        2000,
        "expected no repeat among 2000 of 2^40 blocks"
    );
    // fio 3.42's rule (3.33 announces the switch but keeps drawing 32 bits): with
    // random_generator not given, a file of 2^32 blocks or more gets the 64-bit
    // generator, from the same seed.
    assert!(
        offsets(&[]) == wide,
        "expected the default to draw tausworthe64's offsets on a 2^40-block file"
    );
    for (extra, ours) in [
        (&given32[..], &narrow),
        (&["--random_generator=tausworthe64"][..], &wide),
    ] {
        if let Some(theirs) = huge_file_offsets(&mut isolated("fio"), dir.path(), extra, 2000) {
            assert!(
                *ours == theirs,
                "expected fio's offsets for {extra:?}; first: iolens {:?}, fio {:?}",
                &ours[..3],
                &theirs[..3]
            );
        }
    }
}
