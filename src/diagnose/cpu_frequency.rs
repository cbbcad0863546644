//! `cpu-frequency`: CPU-heavy I/O paths (small blocks, buffered I/O) run at the
//! speed of the clock, so a result measured while the clock moved mixes two
//! machines. Two findings share the code: an Info when a cpufreq governor other
//! than `performance` lets the clock follow the load, and a Warning per job
//! during which a CPU's sampled clock did move. The sampler cannot tell which
//! CPUs the workers ran on, so every CPU counts.

use super::seconds_at;
use crate::model::{Finding, Observations, RunReport, Severity};
use std::cmp::Reverse;

/// A CPU's clock moved when its lowest or highest reading during a job lies
/// further than this share from its median (well beyond the ±5–8 % identical
/// runs differ by).
const MOVED_SHARE: f64 = 0.10;

/// Evidence lines per finding; the CPUs that moved most come first.
const MAX_CPUS_SHOWN: usize = 8;

pub(super) fn cpu_frequency(report: &RunReport) -> Vec<Finding> {
    let mut findings: Vec<Finding> = governor_not_performance(report).into_iter().collect();
    findings.extend(frequency_changed(&report.observations));
    findings
}

fn governor_not_performance(report: &RunReport) -> Option<Finding> {
    let governors = &report.environment.cpufreq_governors;
    let others: Vec<&str> = governors
        .iter()
        .map(String::as_str)
        .filter(|g| *g != "performance")
        .collect();
    if others.is_empty() {
        return None;
    }
    Some(Finding {
        code: "cpu-frequency".into(),
        severity: Severity::Info,
        title: format!(
            "the CPU frequency governor is {}, not performance",
            others.join(", ")
        ),
        evidence: vec![format!("cpufreq governors in use: {}", governors.join(", "))],
        advice: "for repeatable CPU-bound results set the performance governor (cpupower frequency-set -g performance)".into(),
        at_ns: None,
    })
}

/// One CPU's clock over a job's samples.
struct ClockRange {
    cpu: u32,
    min_khz: u64,
    median_khz: u64,
    max_khz: u64,
    /// Samples of the lowest and highest reading.
    min_at: usize,
    max_at: usize,
}

impl ClockRange {
    /// Largest distance from the median, as a share of it.
    fn moved_share(&self) -> f64 {
        let median = self.median_khz as f64;
        (median - self.min_khz as f64).max(self.max_khz as f64 - median) / median
    }

    /// The reading furthest from the median: when the clock moved.
    fn furthest_at(&self) -> usize {
        if self.median_khz - self.min_khz >= self.max_khz - self.median_khz {
            self.min_at
        } else {
            self.max_at
        }
    }
}

/// Column `column` of the samples `first..=last`, ignoring unreadable (0) entries.
fn clock_range(obs: &Observations, column: usize, first: usize, last: usize) -> Option<ClockRange> {
    let readings: Vec<(usize, u64)> = (first..=last)
        .filter_map(|i| {
            let khz = *obs.cpu_freq_khz_series.get(i)?.get(column)?;
            (khz > 0).then_some((i, khz))
        })
        .collect();
    if readings.len() < 2 {
        return None;
    }
    let mut sorted: Vec<u64> = readings.iter().map(|&(_, khz)| khz).collect();
    sorted.sort_unstable();
    let (min_at, min_khz) = *readings.iter().min_by_key(|&&(_, khz)| khz)?;
    // The first of equal readings, for both: when the clock got there.
    let (max_at, max_khz) = *readings.iter().min_by_key(|&&(_, khz)| Reverse(khz))?;
    Some(ClockRange {
        cpu: obs
            .cpu_freq_cpus
            .get(column)
            .copied()
            .unwrap_or(column as u32),
        min_khz,
        median_khz: sorted[sorted.len() / 2],
        max_khz,
        min_at,
        max_at,
    })
}

/// One Warning per job during which some CPU's clock moved beyond `MOVED_SHARE`.
fn frequency_changed(obs: &Observations) -> Vec<Finding> {
    let columns = obs.cpu_freq_cpus.len();
    let mut findings = Vec::new();
    for job in &obs.jobs {
        let Some((first, last)) = job.measured_span(&obs.t_ns) else {
            continue;
        };
        let mut moved: Vec<ClockRange> = (0..columns)
            .filter_map(|c| clock_range(obs, c, first, last))
            .filter(|r| r.moved_share() > MOVED_SHARE)
            .collect();
        if moved.is_empty() {
            continue;
        }
        moved.sort_by(|a, b| b.moved_share().total_cmp(&a.moved_share()));
        let worst = &moved[0];
        let mhz = |khz: u64| khz / 1000;
        let mut evidence: Vec<String> = moved
            .iter()
            .take(MAX_CPUS_SHOWN)
            .map(|r| {
                format!(
                    "cpu{}: {}–{} MHz (median {} MHz), lowest at t={:.1} s, highest at t={:.1} s",
                    r.cpu,
                    mhz(r.min_khz),
                    mhz(r.max_khz),
                    mhz(r.median_khz),
                    seconds_at(obs, r.min_at),
                    seconds_at(obs, r.max_at)
                )
            })
            .collect();
        if moved.len() > MAX_CPUS_SHOWN {
            evidence.push(format!("and {} more CPUs", moved.len() - MAX_CPUS_SHOWN));
        }
        findings.push(Finding {
            code: "cpu-frequency".into(),
            severity: Severity::Warning,
            title: format!(
                "the CPU clock changed by up to {:.0}% while job {} ran ({} of {} CPUs)",
                worst.moved_share() * 100.0,
                job.name,
                moved.len(),
                columns
            ),
            evidence,
            advice: "fix the clock for the run (performance governor, boost/turbo off) and keep the machine cool and otherwise idle; compare runs only at the same clock".into(),
            at_ns: obs.t_ns.get(worst.furthest_at()).copied(),
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;

    /// A run of 30 samples with job "rw" and two CPUs whose clocks are `khz(cpu, sample)`.
    fn clocked(khz: impl Fn(usize, usize) -> u64) -> RunReport {
        let mut report = run(30);
        add_job(&mut report, "rw", true, io(1000, 0));
        let obs = &mut report.observations;
        obs.cpu_freq_cpus = vec![0, 1];
        obs.cpu_freq_khz_series = (0..30).map(|i| vec![khz(0, i), khz(1, i)]).collect();
        report
    }

    #[test]
    fn a_powersave_governor_is_an_info() {
        let mut report = run(2);
        report.environment.cpufreq_governors = vec!["performance".into(), "powersave".into()];
        let found = cpu_frequency(&report);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Info);
        assert!(found[0].title.contains("powersave"), "{found:?}");
    }

    #[test]
    fn silent_with_performance_or_without_cpufreq() {
        let mut report = run(2);
        assert_eq!(cpu_frequency(&report), vec![]);
        report.environment.cpufreq_governors = vec!["performance".into()];
        assert_eq!(cpu_frequency(&report), vec![]);
    }

    #[test]
    fn a_clock_that_drops_during_a_job_is_a_warning_with_when() {
        // cpu1 throttles from 3.4 to 2.0 GHz from t=2.0 s to t=2.4 s.
        let report = clocked(|cpu, i| {
            if cpu == 1 && (20..25).contains(&i) {
                2_000_000
            } else {
                3_400_000
            }
        });
        let found = cpu_frequency(&report);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!(
            (f.code.as_str(), f.severity),
            ("cpu-frequency", Severity::Warning)
        );
        assert!(
            f.title.contains("41%") && f.title.contains("1 of 2"),
            "{f:?}"
        );
        assert_eq!(
            f.evidence,
            vec!["cpu1: 2000–3400 MHz (median 3400 MHz), lowest at t=2.0 s, highest at t=0.0 s"]
        );
        assert_eq!(f.at_ns, Some(20 * STEP_NS));
    }

    #[test]
    fn silent_on_a_steady_clock_and_outside_jobs() {
        // ±5 % jitter is within what identical runs differ by.
        let jitter = clocked(|_, i| if i % 2 == 0 { 3_400_000 } else { 3_230_000 });
        assert_eq!(cpu_frequency(&jitter), vec![]);

        // The clock drops only after the job stopped doing I/O.
        let mut after = clocked(|_, i| if i >= 25 { 1_000_000 } else { 3_400_000 });
        for interval in &mut after.observations.jobs[0].intervals[25..] {
            *interval = Default::default();
        }
        assert_eq!(cpu_frequency(&after), vec![]);

        // Unreadable samples (an offline CPU) are not a change.
        let offline = clocked(|cpu, i| if cpu == 0 && i == 10 { 0 } else { 3_400_000 });
        assert_eq!(cpu_frequency(&offline), vec![]);
    }
}
