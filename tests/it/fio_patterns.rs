//! fio as the oracle for I/O patterns: `random_generator=lfsr` (the blocks
//! and their order), with the offsets read from fio 3.33 pinned here and,
//! where fio is installed, its own run beside iolens.

use crate::fio_match::{fio, iolens_json};
use crate::fio_offsets::{fio_iolog, per_io_log, Ios};
use crate::support::scratch;

/// The I/Os iolens issues for `args` (its per-I/O log) and, where fio is
/// installed, those fio issues (its `write_iolog`), from a scratch directory.
fn issued(args: &[&str]) -> (Ios, Option<Ios>) {
    let dir = scratch();
    let mut with_log = args.to_vec();
    with_log.extend([
        "--output-format=json",
        "--write_lat_log=io",
        "--log_offset=1",
    ]);
    let (doc, code) = iolens_json(dir.path(), &with_log);
    assert_eq!(
        code, 0,
        "{args:?}: expected iolens to succeed, saw exit {code}: {doc}"
    );
    let ours = per_io_log(&dir.path().join("io_clat.1.log"));
    let mut fio_args = args.to_vec();
    fio_args.extend(["--output-format=json", "--write_iolog=fio.iolog"]);
    let theirs = fio(dir.path(), &fio_args).map(|_| fio_iolog(&dir.path().join("fio.iolog")));
    (ours, theirs)
}

#[test]
fn lfsr_hits_every_block_once_in_fios_order() {
    // fio's t0021: norandommap, and still each of the 256 offsets once
    let (ours, theirs) = issued(&[
        "--name=test",
        "--ioengine=null",
        "--filesize=1M",
        "--rw=randread",
        "--norandommap=1",
        "--random_generator=lfsr",
    ]);
    let mut blocks: Vec<u64> = ours.iter().map(|&(offset, _)| offset / 4).collect();
    assert_eq!(
        blocks[..8],
        [235, 205, 163, 196, 114, 41, 154, 93],
        "expected fio 3.33's first blocks, saw the left ones"
    );
    blocks.sort_unstable();
    assert!(
        blocks.iter().copied().eq(0..256),
        "expected each of the 256 blocks once, saw {blocks:?}"
    );
    if let Some(theirs) = theirs {
        assert_eq!(
            ours, theirs,
            "expected the installed fio's I/Os (right), saw iolens' (left)"
        );
    }
}

#[test]
fn lfsr_passes_on_a_file_follow_fio() {
    // on a real file, with a second pass and 8k blocks
    let (ours, theirs) = issued(&[
        "--name=lf",
        "--ioengine=psync",
        "--filename=lf.dat",
        "--size=256k",
        "--bs=8k",
        "--rw=randwrite",
        "--loops=2",
        "--random_generator=lfsr",
    ]);
    assert_eq!(
        ours.len(),
        64,
        "expected 2 passes of 32 blocks, saw {} I/Os",
        ours.len()
    );
    for (pass, ios) in ours.chunks(32).enumerate() {
        let mut offsets: Vec<u64> = ios.iter().map(|&(offset, _)| offset).collect();
        offsets.sort_unstable();
        assert!(
            offsets.iter().copied().eq((0..32).map(|b| b * 8)),
            "expected pass {pass} to write each 8k block once, saw offsets (KiB) {offsets:?}"
        );
    }
    if let Some(theirs) = theirs {
        assert_eq!(
            ours, theirs,
            "expected the installed fio's I/Os (right), saw iolens' (left)"
        );
    }
}

#[test]
fn skewed_distributions_take_fios_default_parameter() {
    // fio: pareto 0.2, zipf 1.1, normal its own bell when no :value is given
    for distribution in ["pareto", "zipf", "normal"] {
        let args = [
            "--name=skew",
            "--ioengine=null",
            "--size=1M",
            "--rw=randread",
            &format!("--random_distribution={distribution}"),
            "--output-format=json",
        ];
        let dir = scratch();
        let (doc, code) = iolens_json(dir.path(), &args);
        assert_eq!(
            code, 0,
            "{distribution}: expected iolens to run it, saw exit {code}: {doc}"
        );
        let read = |doc: &serde_json::Value| doc["jobs"][0]["read"]["io_bytes"].as_u64();
        assert_eq!(
            read(&doc),
            Some(1 << 20),
            "{distribution}: expected 1 MiB read, saw {:?}",
            read(&doc)
        );
        if let Some(fio_doc) = fio(dir.path(), &args) {
            assert_eq!(
                read(&fio_doc),
                read(&doc),
                "{distribution}: expected fio's bytes (left)"
            );
        }
    }
}
