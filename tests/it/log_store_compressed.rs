//! `log_store_compressed=1` and `--inflate-log` with fio 3.33 as the oracle: a log fio
//! stored compressed inflates under iolens (and its fio drop-in) to the bytes fio's own
//! `--inflate-log` prints, and a log iolens stored compressed inflates under fio to the
//! lines iolens writes uncompressed.

use crate::fio_command_line::shim;
use crate::support::{command, isolated, scratch, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// fio with `args` in `dir`, or None (with the reason printed) when fio cannot run.
fn fio(dir: &Path, args: &[&str]) -> Option<Output> {
    match isolated("fio").args(args).current_dir(dir).output() {
        Ok(out) => Some(out),
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            None
        }
    }
}

fn iolens_in(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "--no-history"];
    all.extend_from_slice(args);
    command()
        .args(&all)
        .current_dir(dir)
        .output()
        .expect("run iolens")
}

/// stdout of a run that must succeed.
fn succeeded(who: &str, args: &[&str], out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "expected {who} {args:?} to exit 0, saw stderr: {}",
        stderr(out)
    );
    stdout(out)
}

/// Per line: the direction, block size and offset columns (what a rerun repeats).
fn placements(text: &str) -> Vec<[String; 3]> {
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split(", ").collect();
            assert_eq!(
                f.len(),
                6,
                "expected 6 columns with log_offset=1, saw {line:?}"
            );
            [f[2].to_string(), f[3].to_string(), f[4].to_string()]
        })
        .collect()
}

#[test]
fn logs_fio_stored_compressed_inflate_as_fios_own_inflate_log_prints_them() {
    let dir = scratch();
    let drop_in = shim(dir.path());
    for (prefix, extra) in [("plain", "--log_offset=0"), ("prio", "--log_prio=1")] {
        let bw = format!("--write_bw_log={prefix}");
        let lat = format!("--write_lat_log={prefix}");
        let job = [
            "--name=z",
            "--ioengine=null",
            "--size=8m",
            "--bs=4k",
            "--rw=randwrite",
            "--log_offset=1",
            extra,
            "--log_compression=8k",
            "--log_store_compressed=1",
            &bw,
            &lat,
        ];
        let Some(out) = fio(dir.path(), &job) else {
            return;
        };
        succeeded("fio", &job, &out);
        for kind in ["bw", "clat", "lat"] {
            let file = format!("--inflate-log={prefix}_{kind}.1.log.fz");
            let Some(theirs) = fio(dir.path(), &[&file]) else {
                return;
            };
            let theirs = succeeded("fio", &[&file], &theirs);
            assert_eq!(
                theirs.lines().count(),
                2048,
                "expected fio's {file} to hold one line per I/O"
            );
            let ours = succeeded("iolens run", &[&file], &iolens_in(dir.path(), &[&file]));
            assert!(
                ours == theirs,
                "expected iolens run {file} to print fio's bytes; first lines fio: {:?}, iolens: {:?}",
                theirs.lines().take(2).collect::<Vec<_>>(),
                ours.lines().take(2).collect::<Vec<_>>()
            );
            let drop_in_out = succeeded("the fio drop-in", &[&file], &drop_in(&[&file]));
            assert!(
                drop_in_out == theirs,
                "expected the drop-in's {file} to print fio's bytes"
            );
        }
    }
}

#[test]
fn logs_iolens_stores_compressed_inflate_under_fio_to_the_lines_it_writes_uncompressed() {
    let dir = scratch();
    // 2 workers × 24576 I/Os: several streams per worker (16384 entries each), joined
    // into one file per job without per_job_logs.
    let job = [
        "--name=z",
        "--ioengine=null",
        "--size=96m",
        "--bs=4k",
        "--rw=write",
        "--numjobs=2",
        "--per_job_logs=0",
        "--log_offset=1",
        "--write_bw_log=z",
        "--write_lat_log=z",
    ];
    succeeded("iolens run", &job, &iolens_in(dir.path(), &job));
    let mut compressed = job.to_vec();
    compressed.push("--log_store_compressed=1");
    succeeded(
        "iolens run",
        &compressed,
        &iolens_in(dir.path(), &compressed),
    );
    for kind in ["bw", "lat"] {
        let text = std::fs::read_to_string(dir.path().join(format!("z_{kind}.log")))
            .expect("the uncompressed log");
        let file = format!("--inflate-log=z_{kind}.log.fz");
        let ours = succeeded("iolens run", &[&file], &iolens_in(dir.path(), &[&file]));
        assert_eq!(
            placements(&ours),
            placements(&text),
            "expected {file} to inflate to the directions, sizes and offsets of the uncompressed log"
        );
        let Some(theirs) = fio(dir.path(), &[&file]) else {
            return;
        };
        let theirs = succeeded("fio", &[&file], &theirs);
        assert!(
            theirs == ours,
            "expected fio {file} to print iolens' inflation byte for byte ({} vs {} lines)",
            theirs.lines().count(),
            ours.lines().count()
        );
    }
}

#[test]
fn inflate_log_names_a_file_that_is_not_a_compressed_log() {
    let dir = scratch();
    std::fs::write(dir.path().join("t.log"), "0, 1, 0, 4096, 0\n").expect("write the text log");
    let out = iolens_in(dir.path(), &["--inflate-log=t.log"]);
    let said = stderr(&out);
    assert!(
        out.status.code() == Some(1)
            && said.contains("--inflate-log=t.log: stream 1 (at byte 0): not a zlib stream")
            && said.contains("log_store_compressed=1"),
        "expected exit 1 naming the file and what it needs, saw {:?}: {said}",
        out.status.code()
    );
}
