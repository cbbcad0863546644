//! The compact table of `iolens quick`: one row per job (each preset job moves data in
//! one direction), then the findings.

use crate::model::{DirReport, JobReport, RunReport};
use crate::units::format_value;
use std::fmt::Write;

/// One row per job: test, MB/s (decimal, as disk vendors count), IOPS, mean and p99
/// completion latency, CPU time per I/O.
pub(crate) fn render_table(report: &RunReport) -> String {
    let mut out = format!(
        "{:<20} {:>10} {:>12} {:>12} {:>12} {:>10}\n",
        "test", "MB/s", "IOPS", "lat mean", "lat p99", "CPU/IO"
    );
    for job in &report.jobs {
        let dir = main_direction(job);
        let clat = dir.clat.as_ref();
        let _ = writeln!(
            out,
            "{:<20} {:>10.1} {:>12.0} {:>12} {:>12} {:>10}",
            job.name,
            dir.bw_bytes_per_sec / 1e6,
            dir.iops,
            clat.map_or("-".into(), |c| format_value(c.mean_ns, "ns")),
            p99_ns(dir).map_or("-".into(), |v| format_value(v as f64, "ns")),
            format_value(job.cpu.cpu_ns_per_io, "ns"),
        );
        if let Some(error) = &job.error {
            let _ = writeln!(out, "  error: {error}");
        }
    }
    out
}

/// The direction that moved the most I/Os (the first of a tie: reads when none did).
pub(crate) fn main_direction(job: &JobReport) -> &DirReport {
    let mut main = &job.dirs[0];
    for dir in &job.dirs[1..] {
        if dir.total_ios > main.total_ios {
            main = dir;
        }
    }
    main
}

/// The 99th percentile of completion latency, when percentiles were recorded.
pub(crate) fn p99_ns(dir: &DirReport) -> Option<u64> {
    dir.clat
        .as_ref()?
        .percentiles
        .iter()
        .find(|(p, _)| *p == 99.0)
        .map(|&(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LatSummary;
    use crate::testutil::run_report;

    #[test]
    fn a_row_per_job_in_its_direction() {
        let mut report = run_report(&[("x", 1.0)]);
        let job = &mut report.jobs[0];
        job.name = "RND4K-Q1T1-write".into();
        job.dirs[0] = DirReport::default();
        job.dirs[1] = DirReport {
            total_ios: 1000,
            iops: 2500.0,
            bw_bytes_per_sec: 10_240_000.0,
            clat: Some(LatSummary {
                mean_ns: 400_000.0,
                percentiles: vec![(50.0, 380_000), (99.0, 1_200_000)],
                ..LatSummary::default()
            }),
            ..DirReport::default()
        };
        job.cpu.cpu_ns_per_io = 2_500.0;
        let table = render_table(&report);
        let row = table.lines().nth(1).unwrap();
        assert!(row.starts_with("RND4K-Q1T1-write"), "{table}");
        for cell in ["10.2", "2500", "400.00 µs", "1.20 ms", "2.50 µs"] {
            assert!(row.contains(cell), "{cell} missing in {row}");
        }
    }
}
