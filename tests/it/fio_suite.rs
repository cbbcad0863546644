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

/// What does not depend on timing in a per-I/O log: every column but the time, the
/// latency and the issue time, sorted (fio completes psync I/Os in order, iolens too,
/// but the comparison should not rest on it).
fn fixed_columns(lines: &[Vec<String>], timed: &[usize]) -> Vec<Vec<String>> {
    let mut fixed: Vec<Vec<String>> = lines
        .iter()
        .map(|l| {
            l.iter()
                .enumerate()
                .filter(|(i, _)| !timed.contains(i))
                .map(|(_, v)| v.clone())
                .collect()
        })
        .collect();
    fixed.sort();
    fixed
}

/// Runs `job` with iolens (the drop-in) and with fio (None without fio) in two scratch
/// dirs, and gives each one's lines of the log `name`.
fn both_logs(job: &[&str], name: &str) -> (Vec<Vec<String>>, Option<Vec<Vec<String>>>) {
    let dir = scratch();
    let out = shim(dir.path())(job);
    assert_eq!(
        out.status.code(),
        Some(0),
        "iolens {job:?}: {}",
        stderr(&out)
    );
    let ours = log_lines(dir.path(), name);
    let fio_dir = scratch();
    let fio = match crate::support::isolated("fio")
        .args(job)
        .current_dir(fio_dir.path())
        .output()
    {
        Ok(fio) => fio,
        Err(e) => {
            eprintln!("skipping the fio comparison: fio cannot run ({e})");
            return (ours, None);
        }
    };
    if stderr(&fio).contains("unrecognized option") {
        eprintln!("skipping the fio comparison: this fio lacks an option of {job:?}");
        return (ours, None);
    }
    assert_eq!(fio.status.code(), Some(0), "fio {job:?}: {}", stderr(&fio));
    (ours, Some(log_lines(fio_dir.path(), name)))
}

const LOGGED_JOB: [&str; 12] = [
    "--name=x",
    "--ioengine=psync",
    "--filename=f",
    "--size=64k",
    "--bs=4k",
    "--rw=write",
    "--write_lat_log=l",
    "--log_offset=1",
    "--log_prio=1",
    "--prioclass=2",
    "--prio=3",
    "--output-format=terse",
];

#[test]
fn log_prio_writes_the_priority_as_fio_does() {
    let (ours, fio) = both_logs(&LOGGED_JOB, "l_clat.1.log");
    let expected: Vec<Vec<String>> = (0..16)
        .map(|block| {
            vec![
                "1".into(),
                "4096".into(),
                (block * 4096).to_string(),
                "0x4003".into(),
            ]
        })
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(
        fixed_columns(&ours, &[0, 1]),
        expected,
        "expected time, clat, 1, 4096, offset, 0x4003 (best effort, level 3) per write"
    );
    if let Some(fio) = fio {
        assert_eq!(
            fixed_columns(&ours, &[0, 1]),
            fixed_columns(&fio, &[0, 1]),
            "expected iolens' clat log columns to be fio's"
        );
    }
}

#[test]
fn log_window_value_and_issue_time_columns_are_upstream_fios() {
    let mut job = LOGGED_JOB.to_vec();
    job.extend(["--log_window_value=both", "--log_issue_time=1"]);
    // time, clat, 0 (no maximum per I/O), ddir, bs, offset, priority, issue time.
    let (ours, fio) = both_logs(&job, "l_clat.1.log");
    let mut expected: Vec<Vec<String>> = (0..16)
        .map(|block| {
            let offset = (block * 4096).to_string();
            ["0", "1", "4096", &offset, "0x4003"]
                .map(String::from)
                .to_vec()
        })
        .collect();
    expected.sort();
    assert_eq!(
        fixed_columns(&ours, &[0, 1, 7]),
        expected,
        "expected time, clat, 0, 1, 4096, offset, 0x4003, issue time per write"
    );
    let (clat_ms, issued_ns): (u64, u64) =
        (ours[0][0].parse().unwrap(), ours[0][7].parse().unwrap());
    assert!(
        issued_ns / 1_000_000 <= clat_ms,
        "expected the issue time ({issued_ns} ns) at or before the completion ({clat_ms} ms)"
    );
    // fio 3.33 knows neither option: compared only with a later fio.
    if let Some(fio) = fio {
        assert_eq!(
            fixed_columns(&ours, &[0, 1, 7]),
            fixed_columns(&fio, &[0, 1, 7]),
            "expected iolens' columns to be upstream fio's"
        );
    }
}
