//! Helpers shared by unit tests.

/// A temporary directory on a real (disk-backed) filesystem: under `target/`,
/// because /tmp may be tmpfs, which refuses O_DIRECT.
pub(crate) fn scratch_dir() -> tempfile::TempDir {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-scratch");
    std::fs::create_dir_all(&base).expect("create target/test-scratch");
    tempfile::tempdir_in(base).expect("create scratch dir")
}

/// A scratch file of `pages` pages of `byte`, written through the page cache
/// (so they are cached), with its directory and length.
pub(crate) fn cached_file(pages: usize, byte: u8) -> (tempfile::TempDir, std::fs::File, u64) {
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join("t"))
        .unwrap();
    let len = pages * iolens_sys::page_size();
    file.write_all_at(&vec![byte; len], 0).unwrap();
    (dir, file, len as u64)
}

/// A warning finding with this code and nothing else said.
pub(crate) fn finding(code: &str) -> crate::model::Finding {
    crate::model::Finding {
        code: code.to_string(),
        severity: crate::model::Severity::Warning,
        title: code.to_string(),
        evidence: Vec::new(),
        advice: String::new(),
        at_ns: None,
    }
}

/// The latencies of 1000 I/Os whose p99 and max are `ns`, p99 the only percentile.
pub(crate) fn p99_summary(ns: u64) -> crate::model::LatSummary {
    crate::model::LatSummary {
        max_ns: ns,
        samples: 1_000,
        percentiles: vec![(99.0, ns)],
        ..Default::default()
    }
}

/// A minimal report: one read job per (name, IOPS), 4 KiB I/Os over one second,
/// with a clat mean of 1e9/IOPS ns and p99 at twice that.
pub(crate) fn run_report(jobs: &[(&str, f64)]) -> crate::model::RunReport {
    use crate::model::{DirReport, JobReport, LatSummary, RunReport, SCHEMA_VERSION};
    let job = |&(name, iops): &(&str, f64)| {
        let read = DirReport {
            io_bytes: iops as u64 * 4096,
            total_ios: iops as u64,
            runtime_ns: 1_000_000_000,
            bw_bytes_per_sec: iops * 4096.0,
            iops,
            clat: Some(LatSummary {
                mean_ns: 1e9 / iops,
                samples: iops as u64,
                percentiles: vec![(50.0, (1e9 / iops) as u64), (99.0, (2e9 / iops) as u64)],
                ..Default::default()
            }),
            ..Default::default()
        };
        JobReport {
            name: name.to_string(),
            workers: 1,
            options: vec![
                ("filename".into(), format!("/data/{name}")),
                ("ioengine".into(), "psync".into()),
            ],
            dirs: [read, DirReport::default(), DirReport::default()],
            runtime_ns: 1_000_000_000,
            ..Default::default()
        }
    };
    RunReport {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix_ms: 1_700_000_000_000,
        command_line: vec!["run".into()],
        jobs: jobs.iter().map(job).collect(),
        ..Default::default()
    }
}

/// A steady-state check that judged `iops` samples within 10 % over a window of
/// `duration_s` seconds and was not attained.
pub(crate) fn steady_state(
    duration_s: u64,
    iops: &[u64],
    bw_bytes_per_sec: &[u64],
) -> crate::model::SteadyStateReport {
    crate::model::SteadyStateReport {
        criterion: "iops".into(),
        limit: 10.0,
        limit_is_percent: true,
        duration_s,
        attained: false,
        value: 0.0,
        max_deviation: 0.0,
        slope: 0.0,
        iops_samples: iops.to_vec(),
        bw_samples_bytes_per_sec: bw_bytes_per_sec.to_vec(),
    }
}

/// The first job of fio-style command-line options, resolved.
pub(crate) fn job_spec(args: &[&str]) -> crate::job::spec::JobSpec {
    let (global, jobs) =
        crate::job::front::cli_args::parse_fio_args(&strings(args)).expect("options parse");
    crate::job::resolve(&global, &jobs)
        .expect("options resolve")
        .jobs
        .remove(0)
}

/// Owned strings from string literals (command lines in tests).
pub(crate) fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

/// Four ranks on hosts h0..h3 of 100 MB each (250 I/Os per MB), ending `ends_ms`
/// after the barrier; the first rank ended at 1 s.
pub(crate) fn four_ranks_ending_at(ends_ms: [u64; 4]) -> crate::model::RunReport {
    use crate::model::{ClusterReport, DirReport, JobReport, RankGroup, RankRun, RunReport};
    let rank = |rank: u32, end_ms: u64| {
        let mut total = JobReport::default();
        total.dirs[0] = DirReport {
            io_bytes: 100_000_000,
            total_ios: 25_000,
            ..Default::default()
        };
        RankRun {
            rank,
            hostname: format!("h{rank}"),
            groups: vec![RankGroup {
                end_ns: end_ms * 1_000_000,
                first_end_ns: 1_000_000_000,
                ..Default::default()
            }],
            total: Some(total),
            ..Default::default()
        }
    };
    RunReport {
        cluster: Some(Box::new(ClusterReport {
            ranks: (0..).zip(ends_ms).map(|(r, end)| rank(r, end)).collect(),
            ..Default::default()
        })),
        ..Default::default()
    }
}
