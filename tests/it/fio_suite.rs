//! What fio's own test suite (bench/fio-testsuite) needs from the fio drop-in beyond job
//! options: fio's client/server mode refused with the way to go instead, and
//! `--bandwidth-log` writing the files fio writes.

use crate::fio_command_line::shim;
use crate::support::{iolens, scratch, stderr};
use std::path::Path;

#[test]
fn fios_network_mode_is_refused_pointing_to_mpi() {
    let dir = scratch();
    let fio = shim(dir.path());
    for (line, flag) in [
        (vec!["--server"], "--server"),
        (vec!["--server=ip:localhost,8765"], "--server"),
        (vec!["-daemonize=/tmp/never.pid", "--server"], "--daemonize"),
        (vec!["--client=localhost", "job.fio"], "--client"),
        (
            vec!["--client", "h1", "--remote-config", "job.fio"],
            "--client",
        ),
    ] {
        let out = fio(&line);
        let said = stderr(&out);
        assert!(
            out.status.code() == Some(2)
                && said.lines().count() == 1
                && said.contains(flag)
                && said.contains("mpirun"),
            "expected fio {line:?} to be refused (exit 2) in one line naming {flag} and mpirun, \
             got {:?}: {said}",
            out.status.code()
        );
    }
    let run = iolens(&[
        "run",
        "--no-history",
        "--client=h1",
        "--name=x",
        "--ioengine=null",
    ]);
    assert!(
        run.status.code() == Some(2) && stderr(&run).contains("--client"),
        "expected `iolens run --client=h1` to be refused the same way, got {:?}: {}",
        run.status.code(),
        stderr(&run)
    );
}

/// The lines of `dir/name`, each split at ", ".
fn log_lines(dir: &Path, name: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("expected {name} in {}: {e}", dir.display()));
    text.lines()
        .map(|l| l.split(", ").map(str::to_string).collect())
        .collect()
}

/// fio's shape of an aggregate bandwidth line: time, KiB/s, the file's ddir, 0, 0.
fn check_agg_lines(who: &str, lines: &[Vec<String>], ddir: usize) {
    for line in lines {
        assert!(
            line.len() == 5
                && line[0].parse::<u64>().is_ok()
                && line[1].parse::<u64>().is_ok()
                && line[2] == ddir.to_string()
                && line[3] == "0"
                && line[4] == "0",
            "expected {who}'s line as `time, KiB/s, {ddir}, 0, 0`, got {line:?}"
        );
    }
}

#[test]
fn bandwidth_log_writes_fios_aggregate_files() {
    let job = [
        "--name=x",
        "--ioengine=null",
        "--size=1t",
        "--rw=read",
        "--time_based",
        "--runtime=1200ms",
        "--bandwidth-log",
        "--output-format=terse",
    ];
    let dir = scratch();
    let out = shim(dir.path())(&job);
    assert_eq!(
        (out.status.code(), stderr(&out).as_str()),
        (Some(0), ""),
        "expected the drop-in to run with --bandwidth-log and say nothing on stderr"
    );
    let files = ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"];
    for (ddir, name) in files.iter().enumerate() {
        let lines = log_lines(dir.path(), name);
        assert!(
            !lines.is_empty(),
            "expected a line per 500 ms window in {name} over a 1.2 s run, got none"
        );
        check_agg_lines("iolens", &lines, ddir);
    }
    let read = log_lines(dir.path(), files[0]);
    assert!(
        read.iter().any(|l| l[1] != "0"),
        "expected a read bandwidth above 0 in agg-read_bw.log, got {read:?}"
    );
    // fio writes the same three files (3.33 leaves them empty; later versions fill them).
    let fio_dir = scratch();
    let Ok(fio) = crate::support::isolated("fio")
        .args(job)
        .current_dir(fio_dir.path())
        .output()
    else {
        eprintln!("skipping the fio comparison: fio cannot run");
        return;
    };
    assert_eq!(fio.status.code(), Some(0), "fio: {}", stderr(&fio));
    for (ddir, name) in files.iter().enumerate() {
        check_agg_lines("fio", &log_lines(fio_dir.path(), name), ddir);
    }
}
