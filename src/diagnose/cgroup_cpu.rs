//! `cgroup-cpu-quota`: the run's cgroup used up its CPU quota (v2 `cpu.max`,
//! v1 `cpu.cfs_quota_us`) while the jobs ran and was throttled, stopping
//! every worker until the next period: the numbers measure the quota. A
//! job's CPU wait the throttling explains is named here, not blamed on
//! other processes by `cpu-starvation`.

use super::duration_text;
use crate::model::{CgroupVersion, Finding, JobSeries, RunReport, Severity};

/// Throttled time, in percent of the jobs' wall time, worth a warning.
const THROTTLED_PCT: f64 = 10.0;

/// (periods, throttled periods, throttled ns) of the group between samples `from` and `to`.
fn throttling(report: &RunReport, from: usize, to: usize) -> Option<(u64, u64, u64)> {
    let series = &report.observations.cgroup_series;
    let (a, b) = (series.get(from)?, series.get(to)?);
    Some((
        b.cpu_periods.saturating_sub(a.cpu_periods),
        b.cpu_throttled_periods
            .saturating_sub(a.cpu_throttled_periods),
        b.cpu_throttled_ns.saturating_sub(a.cpu_throttled_ns),
    ))
}

/// Throttling explains most of the job's CPU wait: every runnable worker
/// waits out each throttled stretch.
pub(super) fn quota_explains_wait(report: &RunReport, series: &JobSeries) -> bool {
    let (Some(wait), Some((from, to))) = (series.cpu_wait, series.active_span()) else {
        return false;
    };
    let Some((_, _, throttled_ns)) = throttling(report, from, to) else {
        return false;
    };
    let workers = u64::from(series.workers.max(1));
    wait.run_delay_ns > 0 && 2 * throttled_ns * workers >= wait.run_delay_ns
}

pub(super) fn cgroup_cpu_quota(report: &RunReport) -> Option<Finding> {
    let obs = &report.observations;
    let spans: Vec<(usize, usize)> = obs.jobs.iter().filter_map(JobSeries::active_span).collect();
    let from = spans.iter().map(|s| s.0).min()?;
    let to = spans.iter().map(|s| s.1).max()?;
    let (periods, throttled_periods, throttled_ns) = throttling(report, from, to)?;
    let wall_ns = obs.t_ns[to].saturating_sub(obs.t_ns[from]).max(1);
    let pct = throttled_ns as f64 * 100.0 / wall_ns as f64;
    if pct < THROTTLED_PCT {
        return None;
    }
    let cgroup = report.environment.cgroup.as_ref()?;
    let limits = &cgroup.limits;
    let quota = match (
        limits.cpu_quota_us,
        limits.cpu_period_us,
        limits.cpu_quota_cpus(),
    ) {
        (Some(quota), Some(period), Some(cpus)) => format!(
            "{cpus:.2} CPU: {} per {}",
            duration_text(quota * 1000),
            duration_text(period * 1000)
        ),
        _ => "a quota set above the group".into(),
    };
    let mut evidence = Vec::new();
    if let (Some(group), Some(quota), Some(period)) =
        (&cgroup.place.cpu, limits.cpu_quota_us, limits.cpu_period_us)
    {
        evidence.push(match group.version {
            CgroupVersion::V1 => format!(
                "cgroup {}: cpu.cfs_quota_us {quota}, cpu.cfs_period_us {period}",
                group.path
            ),
            CgroupVersion::V2 => format!("cgroup {}: cpu.max {quota} {period}", group.path),
        });
    }
    evidence.push(format!(
        "throttled {:.2} s of the jobs' {:.2} s ({pct:.0}%)",
        throttled_ns as f64 / 1e9,
        wall_ns as f64 / 1e9
    ));
    for series in obs.jobs.iter().filter(|s| quota_explains_wait(report, s)) {
        if let Some(wait) = series.cpu_wait {
            evidence.push(format!("job '{}': {}", series.name, wait.describe()));
        }
    }
    Some(Finding {
        code: "cgroup-cpu-quota".into(),
        severity: Severity::Warning,
        title: format!(
            "the cgroup's CPU quota ({quota}) throttled the run in {throttled_periods} of {periods} periods"
        ),
        evidence,
        advice: "the workers waited for the quota's next period, not for the device: raise the quota (cpu.max, v1 cpu.cfs_quota_us), use fewer workers or less CPU per I/O, or report the number as the container's".into(),
        at_ns: None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::cpu_starvation::cpu_starvation;
    use super::super::fixture::*;
    use super::*;
    use crate::model::{CgroupLimits, CgroupSample, CpuWait};

    /// A job whose worker waits half of each 100 ms interval for a CPU, in a
    /// group with a 20 ms per 100 ms quota throttled `throttled_ns` per interval.
    fn quota_run(throttled_ns: u64) -> RunReport {
        let mut report = run(31);
        let mut each = io(1000, 0);
        each.run_delay_ns = STEP_NS / 2;
        add_job(&mut report, "spin", false, each);
        let obs = &mut report.observations;
        obs.jobs[0].cpu_wait = CpuWait::of(&obs.jobs[0], &obs.t_ns);
        let limits = CgroupLimits {
            cpu_quota_us: Some(20_000),
            cpu_period_us: Some(100_000),
            ..Default::default()
        };
        add_cgroup(&mut report, limits, |i| CgroupSample {
            cpu_periods: i as u64,
            cpu_throttled_periods: if throttled_ns > 0 { i as u64 } else { 0 },
            cpu_throttled_ns: i as u64 * throttled_ns,
            ..Default::default()
        });
        report
    }

    #[test]
    fn throttling_by_the_quota_is_named_with_the_quota_and_the_time() {
        let report = quota_run(STEP_NS * 4 / 10);
        let found = cgroup_cpu_quota(&report).expect("a cgroup-cpu-quota finding");
        assert_eq!(
            found.title,
            "the cgroup's CPU quota (0.20 CPU: 20 ms per 100 ms) throttled the run in 30 of 30 periods",
            "{found:?}"
        );
        let evidence = found.evidence.join("\n");
        for expected in [
            "cgroup /bench: cpu.cfs_quota_us 20000, cpu.cfs_period_us 100000",
            "throttled 1.20 s of the jobs' 3.00 s (40%)",
            "job 'spin': CPU wait 50.0%",
        ] {
            assert!(
                evidence.contains(expected),
                "expected {expected:?} in the evidence, saw:\n{evidence}"
            );
        }
        assert!(
            cpu_starvation(&report).is_empty(),
            "expected the quota, not other processes, to be named for the CPU wait"
        );
    }

    #[test]
    fn without_throttling_the_wait_is_other_processes() {
        let report = quota_run(0);
        assert!(cgroup_cpu_quota(&report).is_none());
        assert_eq!(codes(&cpu_starvation(&report)), ["cpu-starvation"]);
    }

    #[test]
    fn a_little_throttling_explains_neither() {
        // 5 ms of every 100 ms: under the 10% bar, and a tenth of the 50 ms wait.
        let report = quota_run(STEP_NS / 20);
        assert!(cgroup_cpu_quota(&report).is_none());
        assert_eq!(codes(&cpu_starvation(&report)), ["cpu-starvation"]);
    }
}
