//! `cache-evicted-without-pressure`: cachestat saw pages of a target evicted
//! while reclaim scanned nothing (memory was not short), the signature of
//! proactive reclaim such as DAMON. Warm-cache results then depend on when
//! the reclaimer last ran. Silent when the run's cgroup reached its memory
//! limit: the group's own reclaim evicted them (that is pressure, local to
//! the group, and the global pgscan may not count it).

use super::cgroup_memory::memory_limit_reached;
use crate::model::{Finding, RunReport, Severity};

/// Evictions below this are too few to change a result.
const MIN_EVICTED_PAGES: u64 = 64;

pub(super) fn cache_evicted_without_pressure(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let scanned = match (obs.memory_series.first(), obs.memory_series.last()) {
        (Some(a), Some(b)) => b.pgscan_pages.saturating_sub(a.pgscan_pages),
        _ => return Vec::new(),
    };
    if scanned > 0 || memory_limit_reached(report) {
        return Vec::new();
    }
    let mut findings = Vec::new();
    for target in &obs.targets {
        let read = obs.cache_during_jobs(target);
        let (Some((_, first)), Some((_, last))) = (read.first(), read.last()) else {
            continue;
        };
        let evicted = last.evicted.saturating_sub(first.evicted);
        if evicted < MIN_EVICTED_PAGES {
            continue;
        }
        let first_eviction_ns = read
            .iter()
            .find(|(_, p)| p.evicted > first.evicted)
            .map(|&(t, _)| t);
        let mut evidence = vec![
            format!(
                "{evicted} pages of {} were evicted during the run",
                target.path
            ),
            "reclaim scanned no pages (pgscan unchanged): memory was not short".to_string(),
        ];
        if report.environment.damon_running {
            evidence.push("a DAMON kdamond is running (proactive reclaim)".into());
        }
        findings.push(Finding {
            code: "cache-evicted-without-pressure".into(),
            severity: Severity::Warning,
            title: format!(
                "page cache of {} was evicted without memory pressure: warm-cache results are not stable",
                target.path
            ),
            evidence,
            advice: "proactive reclaim drops idle cache on its own schedule; measure the device (direct=1) or check the cached pages before each warm run".into(),
            at_ns: first_eviction_ns,
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::CacheGuard;

    fn evicting(report: &mut RunReport) {
        add_target(report, |_| 1000);
        for (i, pages) in report.observations.targets[0]
            .cache_series
            .iter_mut()
            .enumerate()
        {
            pages.as_mut().unwrap().evicted = i as u64 * 10;
        }
    }

    #[test]
    fn evictions_with_free_memory_are_flagged() {
        let mut report = run(20);
        report.environment.damon_running = true;
        evicting(&mut report);
        let found = cache_evicted_without_pressure(&report);
        assert_eq!(codes(&found), ["cache-evicted-without-pressure"]);
        assert!(found[0].evidence.iter().any(|e| e.contains("DAMON")));
        // Sample 1 is the first whose evicted count grew.
        assert_eq!(found[0].at_ns, Some(STEP_NS));
    }

    #[test]
    fn evictions_before_the_first_job_started_do_not_count() {
        let mut report = run(20);
        evicting(&mut report);
        // The job on the target started at sample 19: only one sample of it.
        report.observations.cache_guards.push(CacheGuard {
            path: TARGET.into(),
            t_ns: 19 * STEP_NS,
            ..Default::default()
        });
        let found = cache_evicted_without_pressure(&report);
        assert!(
            found.is_empty(),
            "expected the 180 pages evicted before the job to be ignored, saw {found:?}"
        );
    }

    #[test]
    fn silent_when_the_runs_cgroup_was_at_its_memory_limit() {
        let mut report = run(20);
        report.environment.damon_running = true;
        evicting(&mut report);
        let limits = crate::model::CgroupLimits {
            memory_max_bytes: Some(128 << 20),
            ..Default::default()
        };
        add_cgroup(&mut report, limits, |i| crate::model::CgroupSample {
            memory_usage_bytes: if i > 5 { 128 << 20 } else { 16 << 20 },
            ..Default::default()
        });
        let found = cache_evicted_without_pressure(&report);
        assert!(
            found.is_empty(),
            "expected the group's own reclaim at its limit not to be blamed on DAMON, saw {found:?}"
        );
    }

    #[test]
    fn silent_under_memory_pressure_or_without_evictions() {
        let mut pressure = run(20);
        evicting(&mut pressure);
        pressure
            .observations
            .memory_series
            .last_mut()
            .unwrap()
            .pgscan_pages = 5000;
        assert!(cache_evicted_without_pressure(&pressure).is_empty());

        let mut calm = run(20);
        add_target(&mut calm, |_| 1000);
        assert!(cache_evicted_without_pressure(&calm).is_empty());
    }
}
