//! The run's cgroup and its limits as one line of text: in the "System
//! during the run" block with what the group used (`write_cgroup`), and in
//! `doctor` as the limits a run will meet (`limits_line`). Nothing when no
//! limit is set.

use crate::model::{CgroupRecord, CgroupSample, CgroupVersion, IoLimit, Observations, RunReport};
use crate::units::{human_bytes, ByteUnits::BToTib};
use std::fmt::{self, Write};

/// What the group used over the run, from its first and last samples.
struct Usage {
    peak_bytes: u64,
    /// The difference of each cumulative counter, last minus first.
    delta: CgroupSample,
}

impl Usage {
    fn of(obs: &Observations) -> Option<Usage> {
        let (first, last) = (obs.cgroup_series.first()?, obs.cgroup_series.last()?);
        let peak_bytes = obs
            .cgroup_series
            .iter()
            .map(|s| s.memory_usage_bytes)
            .max()
            .unwrap_or(0);
        let delta = CgroupSample {
            memory_max_events: last
                .memory_max_events
                .saturating_sub(first.memory_max_events),
            memory_high_events: last
                .memory_high_events
                .saturating_sub(first.memory_high_events),
            oom_kills: last.oom_kills.saturating_sub(first.oom_kills),
            cpu_periods: last.cpu_periods.saturating_sub(first.cpu_periods),
            cpu_throttled_periods: last
                .cpu_throttled_periods
                .saturating_sub(first.cpu_throttled_periods),
            cpu_throttled_ns: last.cpu_throttled_ns.saturating_sub(first.cpu_throttled_ns),
            ..Default::default()
        };
        Some(Usage { peak_bytes, delta })
    }
}

/// "times" with its count, singular for one.
fn times(n: u64) -> String {
    if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    }
}

fn io_limits(limit: &IoLimit) -> Vec<String> {
    let rate = |bytes: u64| format!("{}/s", human_bytes(bytes, BToTib));
    [
        ("read", limit.read_bytes_per_sec.map(rate)),
        ("write", limit.write_bytes_per_sec.map(rate)),
        ("read", limit.read_iops.map(|n| format!("{n} IOPS"))),
        ("write", limit.write_iops.map(|n| format!("{n} IOPS"))),
    ]
    .into_iter()
    .filter_map(|(dir, value)| Some(format!("{dir} limit {} on {}", value?, limit.name)))
    .collect()
}

/// The group and its limits, with what it used when `usage` is known;
/// None when no limit is set.
fn describe(record: &CgroupRecord, usage: Option<&Usage>) -> Option<String> {
    let limits = &record.limits;
    if !limits.any() {
        return None;
    }
    let group = record.place.main()?;
    let mut parts = Vec::new();
    if let Some(max) = limits.memory_max_bytes {
        let mut part = format!("memory limit {}", human_bytes(max, BToTib));
        if let Some(u) = usage {
            let _ = write!(
                part,
                " (peak usage {}, hit the limit {}",
                human_bytes(u.peak_bytes, BToTib),
                times(u.delta.memory_max_events)
            );
            if u.delta.oom_kills > 0 {
                let _ = write!(part, ", {} OOM kills", u.delta.oom_kills);
            }
            part.push(')');
        }
        parts.push(part);
    }
    if let Some(high) = limits.memory_high_bytes {
        let mut part = format!("memory.high {}", human_bytes(high, BToTib));
        if let Some(u) = usage {
            let _ = write!(part, " (over it {})", times(u.delta.memory_high_events));
        }
        parts.push(part);
    }
    if let Some(swap) = limits.swap_max_bytes {
        parts.push(format!("swap limit {}", human_bytes(swap, BToTib)));
    }
    if let (Some(hard), Some(background)) = (
        limits.dirty_threshold_bytes,
        limits.dirty_background_threshold_bytes,
    ) {
        parts.push(format!(
            "its own dirty threshold {} (background {}) at the start",
            human_bytes(hard, BToTib),
            human_bytes(background, BToTib)
        ));
    } else if limits.memory_max_bytes.is_some()
        && record.place.memory.as_ref().map(|m| m.version) == Some(CgroupVersion::V1)
    {
        parts.push("the global dirty thresholds (v1 has no per-group ones)".into());
    }
    parts.extend(limits.io.iter().flat_map(io_limits));
    if let Some(cpus) = limits.cpu_quota_cpus() {
        let mut part = format!("CPU quota {cpus:.2} CPU");
        if let Some(u) = usage {
            let _ = write!(
                part,
                " (throttled {} of {} periods, {:.1} s)",
                u.delta.cpu_throttled_periods,
                u.delta.cpu_periods,
                u.delta.cpu_throttled_ns as f64 / 1e9
            );
        }
        parts.push(part);
    }
    if let Some(cpus) = &limits.cpuset_cpus {
        parts.push(format!("CPUs {cpus} only"));
    }
    Some(format!(
        "cgroup {} ({}): {}",
        group.path,
        group.version.name(),
        parts.join(", ")
    ))
}

/// The limits a run in `record`'s group meets (for `doctor`); None when none is set.
pub(crate) fn limits_line(record: &CgroupRecord) -> Option<String> {
    describe(record, None)
}

/// The cgroup lines of the "System during the run" block: the group, its
/// limits and what it used; the workers that ran in another group.
pub(crate) fn write_cgroup(out: &mut String, report: &RunReport) -> fmt::Result {
    let Some(record) = &report.environment.cgroup else {
        return Ok(());
    };
    let usage = Usage::of(&report.observations);
    if let Some(line) = describe(record, usage.as_ref()) {
        writeln!(out, "  {line}")?;
    }
    for worker in &record.workers_elsewhere {
        writeln!(
            out,
            "  job '{}' worker {} ran in cgroup {}, not the run's (moved by another process)",
            worker.job, worker.worker, worker.path
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CgroupDir, CgroupLimits, CgroupPlace, WorkerCgroup};

    fn record(limits: CgroupLimits) -> CgroupRecord {
        CgroupRecord {
            place: CgroupPlace {
                memory: Some(CgroupDir {
                    version: CgroupVersion::V1,
                    path: "/bench".into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            limits,
            workers_elsewhere: Vec::new(),
        }
    }

    fn report(record: CgroupRecord, series: Vec<CgroupSample>) -> RunReport {
        let mut report = RunReport::default();
        report.environment.cgroup = Some(record);
        report.observations.cgroup_series = series;
        report
    }

    #[test]
    fn a_limited_group_is_one_line_with_what_it_used() {
        let limits = CgroupLimits {
            memory_max_bytes: Some(128 << 20),
            io: vec![IoLimit {
                device: "7:3".into(),
                name: "loop3".into(),
                write_bytes_per_sec: Some(10 << 20),
                ..Default::default()
            }],
            cpu_quota_us: Some(50_000),
            cpu_period_us: Some(100_000),
            ..Default::default()
        };
        let first = CgroupSample {
            memory_usage_bytes: 10 << 20,
            memory_max_events: 100,
            cpu_periods: 10,
            cpu_throttled_periods: 3,
            ..Default::default()
        };
        let last = CgroupSample {
            memory_usage_bytes: 120 << 20,
            memory_max_events: 4412,
            cpu_periods: 160,
            cpu_throttled_periods: 90,
            cpu_throttled_ns: 4_350_000_000,
            ..Default::default()
        };
        let peak = CgroupSample {
            memory_usage_bytes: (1279 << 20) / 10,
            ..last
        };
        let mut out = String::new();
        write_cgroup(&mut out, &report(record(limits), vec![first, peak, last])).unwrap();
        assert_eq!(
            out,
            "  cgroup /bench (v1): memory limit 128.0 MiB (peak usage 127.9 MiB, hit the limit 4312 times), \
             the global dirty thresholds (v1 has no per-group ones), write limit 10.0 MiB/s on loop3, CPU quota 0.50 CPU (throttled 87 of 150 periods, 4.3 s)\n"
        );
    }

    #[test]
    fn no_limit_no_line_but_a_moved_worker_is_named() {
        let mut unlimited = record(CgroupLimits::default());
        let mut out = String::new();
        write_cgroup(&mut out, &report(unlimited.clone(), Vec::new())).unwrap();
        assert_eq!(out, "", "expected no line without a limit");
        unlimited.workers_elsewhere.push(WorkerCgroup {
            job: "w".into(),
            worker: 2,
            path: "/other".into(),
        });
        write_cgroup(&mut out, &report(unlimited, Vec::new())).unwrap();
        assert_eq!(
            out,
            "  job 'w' worker 2 ran in cgroup /other, not the run's (moved by another process)\n"
        );
    }

    #[test]
    fn doctor_sees_the_limits_without_usage() {
        let limits = CgroupLimits {
            memory_max_bytes: Some(64 << 20),
            memory_high_bytes: Some(48 << 20),
            dirty_threshold_bytes: Some(10 << 20),
            dirty_background_threshold_bytes: Some(5 << 20),
            cpuset_cpus: Some("0-1".into()),
            ..Default::default()
        };
        assert_eq!(
            limits_line(&record(limits)).as_deref(),
            Some(
                "cgroup /bench (v1): memory limit 64.0 MiB, memory.high 48.0 MiB, \
                 its own dirty threshold 10.0 MiB (background 5.0 MiB) at the start, CPUs 0-1 only"
            )
        );
    }
}
