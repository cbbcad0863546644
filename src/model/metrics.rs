//! The headline metrics of a job that repetitions, comparisons and the history
//! track. Mixed read/write jobs add up both directions' rates; for latency the
//! mean is weighted by I/O count and p99 is the worse direction's.

use crate::model::{JobReport, RunReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    Iops,
    Bandwidth,
    ClatMean,
    ClatP99,
    CpuPerIo,
}

impl Metric {
    pub(crate) const ALL: [Metric; 5] = [
        Metric::Iops,
        Metric::Bandwidth,
        Metric::ClatMean,
        Metric::ClatP99,
        Metric::CpuPerIo,
    ];

    /// The name used on the command line, in JSON and in the history.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bandwidth => "bw",
            Metric::ClatMean => "clat_mean",
            Metric::ClatP99 => "clat_p99",
            Metric::CpuPerIo => "cpu_per_io",
        }
    }

    pub(crate) fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "IO/s",
            Metric::Bandwidth => "B/s",
            Metric::ClatMean | Metric::ClatP99 | Metric::CpuPerIo => "ns",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether a larger value means a faster system.
    pub(crate) fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::Bandwidth)
    }

    /// The metric's value for a job; None when the job has nothing to measure
    /// (no completed I/O, or no latency recorded).
    pub(crate) fn of(self, job: &JobReport) -> Option<f64> {
        let active = || job.dirs.iter().filter(|d| d.total_ios > 0);
        if job.total_ios() == 0 {
            return None;
        }
        match self {
            Metric::Iops => Some(active().map(|d| d.iops).sum()),
            Metric::Bandwidth => Some(active().map(|d| d.bw_bytes_per_sec).sum()),
            Metric::ClatMean => {
                let (sum, count) = active()
                    .filter_map(|d| d.clat.as_ref())
                    .fold((0.0, 0u64), |(s, c), l| {
                        (s + l.mean_ns * l.samples as f64, c + l.samples)
                    });
                (count > 0).then(|| sum / count as f64)
            }
            Metric::ClatP99 => active()
                .filter_map(|d| d.clat.as_ref())
                .filter_map(|l| l.percentiles.iter().find(|(p, _)| *p == 99.0))
                .map(|&(_, ns)| ns as f64)
                .reduce(f64::max),
            Metric::CpuPerIo => Some(job.cpu.cpu_ns_per_io),
        }
    }
}

/// (user + sys) CPU time per MiB moved, nanoseconds: buffered against direct
/// I/O is a CPU story (seed 001). None for a job that moved nothing.
pub(crate) fn cpu_ns_per_mib(job: &JobReport) -> Option<f64> {
    let mib = job.dirs.iter().map(|d| d.io_bytes).sum::<u64>() as f64 / (1u64 << 20) as f64;
    (mib > 0.0).then(|| (job.cpu.usr_ns + job.cpu.sys_ns) as f64 / mib)
}

/// The metric of job `name` in every report, or None if one lacks it.
pub(crate) fn values_of(reports: &[RunReport], name: &str, metric: Metric) -> Option<Vec<f64>> {
    job_values(reports, name, |j| metric.of(j))
}

/// `value` of job `name` in every report, or None if one lacks it.
pub(crate) fn job_values(
    reports: &[RunReport],
    name: &str,
    value: impl Fn(&JobReport) -> Option<f64>,
) -> Option<Vec<f64>> {
    reports
        .iter()
        .map(|r| r.jobs.iter().find(|j| j.name == name).and_then(&value))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DirReport, LatSummary};

    fn job(read: DirReport, write: DirReport) -> JobReport {
        JobReport {
            name: "j".into(),
            workers: 1,
            dirs: [read, write, DirReport::default()],
            runtime_ns: 1,
            ..Default::default()
        }
    }

    fn dir(ios: u64, iops: f64, mean_ns: f64, p99: u64) -> DirReport {
        DirReport {
            total_ios: ios,
            iops,
            bw_bytes_per_sec: iops * 4096.0,
            clat: Some(LatSummary {
                mean_ns,
                samples: ios,
                percentiles: vec![(50.0, 1), (99.0, p99)],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn mixed_jobs_add_rates_and_weight_latency() {
        let j = job(dir(300, 30.0, 100.0, 900), dir(100, 10.0, 500.0, 2000));
        assert_eq!(Metric::Iops.of(&j), Some(40.0));
        assert_eq!(Metric::Bandwidth.of(&j), Some(40.0 * 4096.0));
        assert_eq!(Metric::ClatMean.of(&j), Some(200.0));
        assert_eq!(Metric::ClatP99.of(&j), Some(2000.0));
    }

    #[test]
    fn a_job_without_io_has_no_metrics() {
        let j = job(DirReport::default(), DirReport::default());
        assert!(Metric::ALL.iter().all(|m| m.of(&j).is_none()));
    }

    #[test]
    fn cpu_per_mib_counts_both_directions_and_user_and_system_time() {
        let mut j = job(dir(256, 1.0, 1.0, 1), dir(256, 1.0, 1.0, 1));
        j.dirs[0].io_bytes = 1 << 20;
        j.dirs[1].io_bytes = 1 << 20;
        j.cpu.usr_ns = 1_000_000;
        j.cpu.sys_ns = 3_000_000;
        assert_eq!(
            cpu_ns_per_mib(&j),
            Some(2_000_000.0),
            "expected 4 ms of CPU over 2 MiB to be 2 ms per MiB"
        );
        j.dirs[0].io_bytes = 0;
        j.dirs[1].io_bytes = 0;
        assert_eq!(
            cpu_ns_per_mib(&j),
            None,
            "expected none without bytes moved"
        );
    }

    #[test]
    fn names_round_trip() {
        for m in Metric::ALL {
            assert_eq!(Metric::from_name(m.name()), Some(m));
        }
    }
}
