//! `cgroup-memory-limit`: buffered writes stalled because the run's cgroup
//! was at its memory limit. The page cache a writer fills is charged to its
//! group; at the limit the group must reclaim, and dirty pages can only be
//! reclaimed once the device has written them, so the writer waits for the
//! device through reclaim long before the machine's dirty thresholds are
//! near (cgroup v1 has no per-group dirty limits at all). The benchmark then
//! measures the container's limit, not the device or the kernel's global
//! dirty throttling (issue 12's container: "threshold 3.6 GiB" under a
//! 128 MiB limit).

use super::writeback::{stall_of, Stall};
use super::{bytes_text, duration_text, seconds_at};
use crate::model::{CgroupVersion, Finding, JobSeries, RunReport, Severity};

/// Usage at this share of the limit counts as at the limit (v1 usage is
/// approximate by the per-CPU charge batches).
const AT_LIMIT: f64 = 0.90;

/// The group's tightest memory limit, bytes, and the file that sets it.
fn memory_limit(report: &RunReport) -> Option<(u64, &'static str)> {
    let cgroup = report.environment.cgroup.as_ref()?;
    let limits = &cgroup.limits;
    let v1 = cgroup
        .place
        .memory
        .as_ref()
        .is_some_and(|d| d.version == CgroupVersion::V1);
    let max = limits.memory_max_bytes.map(|b| {
        let file = if v1 {
            "memory.limit_in_bytes"
        } else {
            "memory.max"
        };
        (b, file)
    });
    let high = limits.memory_high_bytes.map(|b| (b, "memory.high"));
    [max, high].into_iter().flatten().min_by_key(|&(b, _)| b)
}

/// The group was at its memory limit at sample `i`: its usage near the
/// limit, or the limit hit (v2 `max`/`high` events, v1 failcnt) since the sample before.
pub(super) fn memory_at_limit(report: &RunReport, i: usize) -> bool {
    let Some((limit, _)) = memory_limit(report) else {
        return false;
    };
    let series = &report.observations.cgroup_series;
    let Some(now) = series.get(i) else {
        return false;
    };
    let hit = i
        .checked_sub(1)
        .and_then(|p| series.get(p))
        .is_some_and(|before| {
            now.memory_max_events > before.memory_max_events
                || now.memory_high_events > before.memory_high_events
        });
    hit || now.memory_usage_bytes as f64 >= AT_LIMIT * limit as f64
}

/// The group was at its memory limit at some sample of the run.
pub(super) fn memory_limit_reached(report: &RunReport) -> bool {
    (0..report.observations.cgroup_series.len()).any(|i| memory_at_limit(report, i))
}

/// Most of the stall's intervals had the group at its memory limit.
pub(super) fn explains_stall(report: &RunReport, stall: &Stall) -> bool {
    let at_limit = stall
        .intervals
        .iter()
        .filter(|&&i| memory_at_limit(report, i))
        .count();
    at_limit * 2 > stall.intervals.len()
}

pub(super) fn cgroup_memory_limit(report: &RunReport) -> Vec<Finding> {
    report
        .observations
        .jobs
        .iter()
        .filter_map(|s| Some((s, stall_of(report, s)?)))
        .filter(|(_, stall)| explains_stall(report, stall))
        .filter_map(|(s, stall)| finding(report, s, &stall))
        .collect()
}

fn finding(report: &RunReport, series: &JobSeries, stall: &Stall) -> Option<Finding> {
    let (limit, file) = memory_limit(report)?;
    let obs = &report.observations;
    let during = obs.cgroup_series.get(stall.first - 1..=stall.to)?;
    let usage = during
        .iter()
        .map(|s| s.memory_usage_bytes)
        .max()
        .unwrap_or(0);
    let held = during
        .iter()
        .map(|s| s.dirty_bytes + s.writeback_bytes)
        .max()
        .unwrap_or(0);
    let cached = during.iter().map(|s| s.file_bytes).max().unwrap_or(0);
    let (first, last) = (during.first()?, during.last()?);
    let hits = (last.memory_max_events + last.memory_high_events)
        .saturating_sub(first.memory_max_events + first.memory_high_events);
    let group = report
        .environment
        .cgroup
        .as_ref()
        .and_then(|c| c.place.memory.as_ref())
        .map_or("/", |d| d.path.as_str());
    let title = format!(
        "job '{}': writes blocked up to {} from t={:.1} s by its cgroup's memory limit ({} used of {}){}",
        series.name,
        duration_text(stall.worst_ns),
        seconds_at(obs, stall.first - 1),
        bytes_text(usage),
        bytes_text(limit),
        stall.throughput_change(report, series)
    );
    let mut evidence = vec![format!(
        "cgroup {group}: {file} {}, usage up to {} while the writes were blocked; the limit was hit {hits} times meanwhile",
        bytes_text(limit),
        bytes_text(usage)
    )];
    evidence.push(format!(
        "its page cache up to {}, of which up to {} dirty or under writeback",
        bytes_text(cached),
        bytes_text(held)
    ));
    if let Some(m) = obs
        .memory_series
        .get(stall.first)
        .filter(|m| m.dirty_bytes + m.writeback_bytes < m.dirty_background_threshold_bytes)
    {
        evidence.push(format!(
            "the machine's Dirty+Writeback ({}) was below its background threshold ({}): not the global dirty throttling",
            bytes_text(m.dirty_bytes + m.writeback_bytes),
            bytes_text(m.dirty_background_threshold_bytes)
        ));
    }
    evidence.extend(stall.evidence(report));
    Some(Finding {
        code: "cgroup-memory-limit".into(),
        severity: Severity::Warning,
        title,
        evidence,
        advice: format!("the job's page cache counts against the cgroup's memory limit, so the writers waited for the device to clean pages before the cache could grow: this measured the container's limit, not the device; raise {file} above the file size plus the dirty data, or use direct=1"),
        at_ns: Some(stall.at_ns(report)),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::super::{diagnose, writeback::writeback_stall};
    use super::*;
    use crate::model::{CgroupLimits, CgroupSample, WaitTime};

    const MIB: u64 = 1 << 20;

    /// A buffered writer whose writes wait in reclaim from sample 20 on, in a
    /// group limited to `limit` whose usage is `usage` from sample 10 on (the
    /// limit hit 10 times a sample while it is there).
    fn limited_writer(limit: Option<u64>, usage: u64) -> RunReport {
        let mut report = run(60);
        add_job(&mut report, "w", false, io(0, 2560));
        for interval in &mut report.observations.jobs[0].intervals[20..] {
            interval.bytes[1] /= 10;
            interval.waits = vec![WaitTime {
                wchan: "folio_wait_bit".into(),
                time_ns: 60_000_000,
            }];
        }
        let limits = CgroupLimits {
            memory_max_bytes: limit,
            ..Default::default()
        };
        let at_limit = limit.is_some_and(|l| usage >= l);
        add_cgroup(&mut report, limits, |i| CgroupSample {
            memory_usage_bytes: if i >= 10 { usage } else { usage / 10 },
            file_bytes: if i >= 10 { usage - MIB } else { 0 },
            dirty_bytes: if i >= 10 { 40 * MIB } else { 0 },
            memory_max_events: if at_limit {
                i.saturating_sub(10) as u64 * 10
            } else {
                0
            },
            ..Default::default()
        });
        report
    }

    #[test]
    fn a_stall_at_the_groups_memory_limit_names_the_limit_and_the_usage() {
        let report = limited_writer(Some(128 * MIB), 128 * MIB);
        let found = diagnose(&report);
        let stall: Vec<_> = found
            .iter()
            .filter(|f| f.code.contains("stall") || f.code.contains("memory"))
            .collect();
        assert_eq!(
            stall.len(),
            1,
            "expected one finding for the one cause (cgroup-memory-limit), saw {:?}",
            codes(&found)
        );
        let finding = stall[0];
        assert_eq!(finding.code, "cgroup-memory-limit", "{finding:?}");
        assert!(
            finding.title.contains("from t=1.9 s")
                && finding.title.contains("(128.0 MiB used of 128.0 MiB)"),
            "expected the stall's start and the usage of the limit in the title, saw {}",
            finding.title
        );
        let evidence = finding.evidence.join("\n");
        for expected in [
            "cgroup /bench: memory.limit_in_bytes 128.0 MiB",
            "the limit was hit 400 times",
            "below its background threshold (1.0 GiB)",
            "% of their time in",
        ] {
            assert!(
                evidence.contains(expected),
                "expected {expected:?} in the evidence, saw:\n{evidence}"
            );
        }
        assert!(
            finding.advice.contains("raise memory.limit_in_bytes"),
            "expected the v1 limit's file in the advice, saw {}",
            finding.advice
        );
    }

    #[test]
    fn a_latency_jump_at_the_limit_is_a_stall_far_below_the_dirty_thresholds() {
        let mut report = limited_writer(Some(128 * MIB), 128 * MIB);
        for interval in &mut report.observations.jobs[0].intervals[20..] {
            interval.waits.clear();
            interval.lat_max_ns = 500_000_000;
        }
        let found = cgroup_memory_limit(&report);
        assert_eq!(
            codes(&found),
            ["cgroup-memory-limit"],
            "expected 500 ms writes at the limit to be its stall, saw {found:?}"
        );
        assert!(
            writeback_stall(&report).is_empty(),
            "expected writeback-stall to yield to the cgroup finding"
        );
    }

    #[test]
    fn a_stall_without_a_limit_or_far_below_it_stays_writeback_stall() {
        for (limit, usage) in [(None, 128 * MIB), (Some(1 << 30), 128 * MIB)] {
            let report = limited_writer(limit, usage);
            let found = diagnose(&report);
            assert!(
                codes(&found).contains(&"writeback-stall")
                    && !codes(&found).contains(&"cgroup-memory-limit"),
                "limit {limit:?}, usage {usage}: expected writeback-stall alone, saw {:?}",
                codes(&found)
            );
        }
    }

    #[test]
    fn a_group_at_its_limit_without_blocked_writes_is_not_a_finding() {
        let mut report = limited_writer(Some(128 * MIB), 128 * MIB);
        for interval in &mut report.observations.jobs[0].intervals {
            interval.waits.clear();
        }
        assert!(
            cgroup_memory_limit(&report).is_empty(),
            "expected no finding when the writes never waited"
        );
    }
}
