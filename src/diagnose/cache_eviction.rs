//! The page cache of a target evicted while the run went on, one finding per
//! event:
//!
//! - `cache-evicted-mid-run`: a buffered job changed speed at the sample where
//!   cachestat saw its target's pages evicted and its cached pages fall; names
//!   whose reclaim it was (the run's cgroup at its memory limit, the machine's
//!   reclaim scanning, or neither: proactive reclaim).
//! - `cache-evicted-without-pressure`: pages evicted while reclaim scanned
//!   nothing (memory was not short), the signature of proactive reclaim such as
//!   DAMON, when no job's speed changed with it (that is the finding above).
//!   Warm-cache results then depend on when the reclaimer last ran. Silent when
//!   the run's cgroup reached its memory limit: the group's own reclaim evicted
//!   them (that is pressure, local to the group, and the global pgscan may not
//!   count it).

use super::cgroup_memory::{memory_at_limit, memory_limit_reached};
use super::unstable::round;
use super::{bytes_text, seconds_at};
use crate::model::{Finding, JobSeries, Observations, RunReport, Severity, TargetObservation};

/// Evictions below this are too few to change a result.
const MIN_EVICTED_PAGES: u64 = 64;
/// Intervals of a job needed on each side of an eviction to compare its speed.
const MIN_SIDE: usize = 3;
/// The speed change worth naming, as a share of the faster side (noise is ±5–8 %).
const MIN_CHANGE: f64 = 0.25;

/// A job's speed changed where its target's cache was evicted.
struct MidRunEviction<'a> {
    target: &'a TargetObservation,
    job: &'a JobSeries,
    /// The sample whose interval held the largest eviction.
    at: usize,
    evicted: u64,
    /// Cached pages of the target at the samples before and at `at`.
    cached: (u64, u64),
    /// The job's mean IOPS before and after the eviction's interval.
    iops: (f64, f64),
}

/// Whose reclaim evicted the pages around sample `at`.
enum Pressure {
    Cgroup(u64),
    Machine(u64),
    None,
}

pub(super) fn cache_evicted_mid_run(report: &RunReport) -> Vec<Finding> {
    mid_run_evictions(report)
        .iter()
        .map(|e| mid_run_finding(report, e))
        .collect()
}

/// Every (target, job) whose speed changed where the target's cache was evicted.
fn mid_run_evictions(report: &RunReport) -> Vec<MidRunEviction<'_>> {
    let obs = &report.observations;
    let mut found = Vec::new();
    for target in &obs.targets {
        let Some((at, evicted, cached)) = largest_eviction(obs, target) else {
            continue;
        };
        let jobs = obs
            .jobs
            .iter()
            .filter(|j| !j.direct && j.targets.contains(&target.path));
        for job in jobs {
            let Some(iops) = speed_around(obs, job, at) else {
                continue;
            };
            let (before, after) = iops;
            if (before - after).abs() >= MIN_CHANGE * before.max(after) {
                found.push(MidRunEviction {
                    target,
                    job,
                    at,
                    evicted,
                    cached,
                    iops,
                });
            }
        }
    }
    found
}

/// The sample after the jobs started whose interval evicted the most pages of
/// `target` while its cached pages fell: (sample, pages evicted, cached before
/// and after).
fn largest_eviction(
    obs: &Observations,
    target: &TargetObservation,
) -> Option<(usize, u64, (u64, u64))> {
    obs.cache_during_jobs(target)
        .windows(2)
        .filter_map(|pair| {
            let ((_, a), (t, b)) = (pair[0], pair[1]);
            let evicted = b.evicted.saturating_sub(a.evicted);
            let at = obs.t_ns.binary_search(&t).ok()?;
            (evicted >= MIN_EVICTED_PAGES && b.cached < a.cached).then_some((
                at,
                evicted,
                (a.cached, b.cached),
            ))
        })
        .max_by_key(|&(_, evicted, _)| evicted)
}

/// The job's mean IOPS over its whole measured intervals (ramp_time left out)
/// before and after interval `at` (which holds the eviction), when each side
/// has enough of them.
fn speed_around(obs: &Observations, job: &JobSeries, at: usize) -> Option<(f64, f64)> {
    let (from, to) = job.measured_span(&obs.t_ns)?;
    // The first and last active intervals are partial: the job started or ended inside them.
    let (lo, hi) = (from + 2, to);
    if at < lo + MIN_SIDE || at + 1 + MIN_SIDE > hi {
        return None;
    }
    let iops = |i: usize| {
        let ios = job.intervals[i].ios[0] + job.intervals[i].ios[1];
        let ns = obs.t_ns[i].saturating_sub(obs.t_ns[i - 1]).max(1);
        ios as f64 / (ns as f64 / 1e9)
    };
    let mean = |r: std::ops::Range<usize>| {
        let n = r.len() as f64;
        r.map(iops).sum::<f64>() / n
    };
    Some((mean(lo..at), mean(at + 1..hi)))
}

/// Whose reclaim it was around sample `at`: the run's cgroup at its memory
/// limit, else the machine's reclaim scanning pages, else nobody's.
fn pressure_at(report: &RunReport, at: usize) -> Pressure {
    let obs = &report.observations;
    let near = at.saturating_sub(1)..=at + 1;
    if let Some(i) = near.clone().find(|&i| memory_at_limit(report, i)) {
        return Pressure::Cgroup(obs.cgroup_series[i].memory_usage_bytes);
    }
    let scanned = obs
        .memory_series
        .get(at.saturating_sub(1))
        .zip(obs.memory_series.get(at + 1).or(obs.memory_series.last()))
        .map_or(0, |(a, b)| b.pgscan_pages.saturating_sub(a.pgscan_pages));
    if scanned > 0 {
        Pressure::Machine(scanned)
    } else {
        Pressure::None
    }
}

fn mid_run_finding(report: &RunReport, e: &MidRunEviction) -> Finding {
    let obs = &report.observations;
    let page = obs.page_size_bytes.max(1);
    let (before, after) = e.iops;
    let path = &e.target.path;
    let mut evidence = vec![
        format!(
            "{} pages of {path} were evicted between t={:.1} and {:.1} s: its cached pages fell from {} to {}",
            e.evicted,
            seconds_at(obs, e.at - 1),
            seconds_at(obs, e.at),
            bytes_text(e.cached.0 * page),
            bytes_text(e.cached.1 * page)
        ),
    ];
    let advice = match pressure_at(report, e.at) {
        Pressure::Cgroup(usage) => {
            evidence.push(format!(
                "the run's cgroup was at its memory limit (using {}): its own reclaim evicted them",
                bytes_text(usage)
            ));
            "the group's memory limit is smaller than what the job keeps cached: raise the limit to measure the cache, or measure the device (direct=1)"
        }
        Pressure::Machine(scanned) => {
            evidence.push(format!(
                "reclaim scanned {scanned} pages then: the machine was short of memory"
            ));
            "other memory use pushed the target out of the page cache: run on a machine with memory to spare, or measure the device (direct=1)"
        }
        Pressure::None => {
            no_pressure_evidence(report, &mut evidence);
            PROACTIVE_ADVICE
        }
    };
    Finding {
        code: "cache-evicted-mid-run".into(),
        severity: Severity::Warning,
        title: format!(
            "job '{}' changed speed at t={:.1} s because the page cache of {path} was evicted: {} then {} IOPS",
            e.job.name,
            seconds_at(obs, e.at),
            round(before),
            round(after)
        ),
        evidence,
        advice: advice.into(),
        at_ns: obs.t_ns.get(e.at).copied(),
    }
}

/// What to do about evictions nobody's memory pressure made.
const PROACTIVE_ADVICE: &str = "proactive reclaim drops idle cache on its own schedule; measure the device (direct=1) or check the cached pages before each warm run";

/// The evidence that memory was not short when pages were evicted.
fn no_pressure_evidence(report: &RunReport, evidence: &mut Vec<String>) {
    evidence.push("reclaim scanned no pages (pgscan unchanged): memory was not short".to_string());
    if report.environment.damon_running {
        evidence.push("a DAMON kdamond is running (proactive reclaim)".into());
    }
}

pub(super) fn cache_evicted_without_pressure(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let scanned = match (obs.memory_series.first(), obs.memory_series.last()) {
        (Some(a), Some(b)) => b.pgscan_pages.saturating_sub(a.pgscan_pages),
        _ => return Vec::new(),
    };
    if scanned > 0 || memory_limit_reached(report) {
        return Vec::new();
    }
    let named = mid_run_evictions(report);
    let mut findings = Vec::new();
    for target in &obs.targets {
        if named.iter().any(|e| e.target.path == target.path) {
            continue;
        }
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
        let mut evidence = vec![format!(
            "{evicted} pages of {} were evicted during the run",
            target.path
        )];
        no_pressure_evidence(report, &mut evidence);
        findings.push(Finding {
            code: "cache-evicted-without-pressure".into(),
            severity: Severity::Warning,
            title: format!(
                "page cache of {} was evicted without memory pressure: warm-cache results are not stable",
                target.path
            ),
            evidence,
            advice: PROACTIVE_ADVICE.into(),
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

    /// A buffered reader of `TARGET` at 1000 I/Os per interval until sample 20,
    /// `after` from then on; with `evicted` pages of it evicted in interval 20,
    /// its cached pages falling from 1000 to 100.
    fn reader_evicted_at_20(after: u64, evicted: u64) -> RunReport {
        let mut report = run(40);
        add_job(&mut report, "rr", false, io(1000, 0));
        for interval in &mut report.observations.jobs[0].intervals[20..] {
            interval.ios = [after, 0];
        }
        add_target(&mut report, |i| if i < 20 { 1000 } else { 100 });
        for (i, pages) in report.observations.targets[0]
            .cache_series
            .iter_mut()
            .enumerate()
        {
            pages.as_mut().unwrap().evicted = if i < 20 { 0 } else { evicted };
        }
        report
    }

    /// Both rules of the family on `report`.
    fn family(report: &RunReport) -> Vec<Finding> {
        let mut found = cache_evicted_mid_run(report);
        found.extend(cache_evicted_without_pressure(report));
        found
    }

    #[test]
    fn an_eviction_at_the_groups_limit_is_named_as_the_cause_of_the_change() {
        let mut report = reader_evicted_at_20(100, 900);
        let limits = crate::model::CgroupLimits {
            memory_max_bytes: Some(64 << 20),
            ..Default::default()
        };
        add_cgroup(&mut report, limits, |i| crate::model::CgroupSample {
            memory_usage_bytes: if i < 20 { 16 << 20 } else { 63 << 20 },
            ..Default::default()
        });
        let found = family(&report);
        assert_eq!(codes(&found), ["cache-evicted-mid-run"]);
        let f = &found[0];
        assert_eq!(
            f.title,
            format!("job 'rr' changed speed at t=2.0 s because the page cache of {TARGET} was evicted: 10.0k then 1000 IOPS")
        );
        assert_eq!(f.at_ns, Some(20 * STEP_NS));
        assert!(
            f.evidence[0]
                .starts_with("900 pages of /dev/loop7 were evicted between t=1.9 and 2.0 s")
                && f.evidence[1].contains("cgroup was at its memory limit"),
            "{f:?}"
        );
        assert!(f.advice.contains("memory limit"), "{f:?}");
    }

    #[test]
    fn the_machines_reclaim_or_nobodys_is_named_once() {
        let mut pressure = reader_evicted_at_20(100, 900);
        for sample in &mut pressure.observations.memory_series[20..] {
            sample.pgscan_pages = 5000;
        }
        let found = family(&pressure);
        assert_eq!(codes(&found), ["cache-evicted-mid-run"]);
        assert!(
            found[0].evidence[1].contains("reclaim scanned 5000 pages"),
            "{found:?}"
        );

        // No pressure: proactive reclaim, in one finding, not two.
        let mut proactive = reader_evicted_at_20(100, 900);
        proactive.environment.damon_running = true;
        let found = family(&proactive);
        assert_eq!(codes(&found), ["cache-evicted-mid-run"]);
        assert!(
            found[0].evidence.iter().any(|e| e.contains("DAMON")),
            "{found:?}"
        );
    }

    #[test]
    fn silent_without_a_change_without_an_eviction_or_for_direct_io() {
        // evicted, same speed: the eviction alone is the without-pressure finding
        assert_eq!(
            codes(&family(&reader_evicted_at_20(1000, 900))),
            ["cache-evicted-without-pressure"]
        );
        // a change, nothing evicted: not this family's
        assert!(family(&reader_evicted_at_20(100, 0)).is_empty());
        let mut direct = reader_evicted_at_20(100, 900);
        direct.observations.jobs[0].direct = true;
        assert!(cache_evicted_mid_run(&direct).is_empty());
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
