//! `writeback-stall` (seed 004): buffered writers throttled by the kernel's
//! dirty-page limits. Two signs, either enough: the writers' wait channel was
//! measured in the throttling functions, or per-interval max latency jumped
//! far above its usual level while the dirty pages were past the background
//! threshold that applies to the writer (its cgroup's own, under cgroup v2
//! with per-group dirty limits, else the global one) or its cgroup was at its
//! memory limit. A stall the cgroup's memory limit explains is reported by
//! `cgroup-memory-limit` instead: one cause, one finding. A job that syncs its
//! own writes (fsync=, end_fsync, sync=, …) waits for their writeback by
//! design: for it only dirty throttling counts.

use super::cgroup_memory::{explains_stall, memory_at_limit};
use super::{bytes_text, duration_text, seconds_at};
use crate::model::{
    CgroupSample, Finding, JobInterval, JobSeries, MemorySample, RunReport, Severity,
};

/// Kernel functions a writer sleeps in when dirty throttling or stable pages
/// hold it, or reclaim at a cgroup's memory limit waits for writeback.
const THROTTLE_WCHANS: &[&str] = &[
    "balance_dirty_pages",
    "folio_wait_bit",
    "folio_wait_writeback",
];
/// What throttles a job that syncs its writes: its waits for writeback are its
/// own fsync's (or O_SYNC's), the durability it asked to measure.
const SYNCING_THROTTLE_WCHANS: &[&str] = &["balance_dirty_pages"];
/// Share of the writers' time in those functions that counts as a stall (lab: 42–81 % when stalled).
const WAIT_SHARE: f64 = 0.10;
/// A max latency counts as a jump above this many times the job's median interval max...
const JUMP_FACTOR: u64 = 10;
/// ...and at least this long.
const JUMP_MIN_NS: u64 = 10_000_000;

/// The wait channels that count as throttling for `series`.
fn throttle_wchans(series: &JobSeries) -> &'static [&'static str] {
    if series.syncs_writes {
        SYNCING_THROTTLE_WCHANS
    } else {
        THROTTLE_WCHANS
    }
}

fn throttled_ns(interval: &JobInterval, wchans: &[&str]) -> u64 {
    interval
        .waits
        .iter()
        .filter(|w| wchans.contains(&w.wchan.as_str()))
        .map(|w| w.time_ns)
        .sum()
}

/// The dirty pages held and the thresholds that apply to the writer at one
/// sample: its cgroup's own (cgroup v2 writeback domain) when it is nearer
/// its hard threshold than the machine is to the global one, else the global.
struct DirtyDomain {
    held_bytes: u64,
    background_bytes: u64,
    threshold_bytes: u64,
    cgroup: bool,
}

impl DirtyDomain {
    fn at(memory: MemorySample, group: Option<CgroupSample>) -> DirtyDomain {
        let global = DirtyDomain {
            held_bytes: memory.dirty_bytes + memory.writeback_bytes,
            background_bytes: memory.dirty_background_threshold_bytes,
            threshold_bytes: memory.dirty_threshold_bytes,
            cgroup: false,
        };
        let Some(group) = group.filter(|g| g.dirty_threshold_bytes > 0) else {
            return global;
        };
        let own = DirtyDomain {
            held_bytes: group.dirty_bytes + group.writeback_bytes,
            background_bytes: group.dirty_background_threshold_bytes,
            threshold_bytes: group.dirty_threshold_bytes,
            cgroup: true,
        };
        if own.share() >= global.share() {
            own
        } else {
            global
        }
    }

    fn share(&self) -> f64 {
        self.held_bytes as f64 / self.threshold_bytes.max(1) as f64
    }

    fn past_background(&self) -> bool {
        self.background_bytes > 0 && self.held_bytes >= self.background_bytes
    }
}

/// A buffered writer's stall: the intervals it was held, how long, and the
/// words both stall findings share.
pub(super) struct Stall {
    /// Sample indices: the job's active span is `from..=to`; `first` is the first stalled interval.
    from: usize,
    pub to: usize,
    pub first: usize,
    /// The stalled intervals.
    pub intervals: Vec<usize>,
    usual_max_ns: u64,
    pub worst_ns: u64,
    throttled_ns: u64,
    /// The wait channels `throttled_ns` counts.
    wchans: &'static [&'static str],
    workers: u64,
}

/// Where `series`, a buffered job with writes, stalled; None when it did not.
pub(super) fn stall_of(report: &RunReport, series: &JobSeries) -> Option<Stall> {
    let obs = &report.observations;
    if series.direct {
        return None;
    }
    let (from, to) = series.measured_span(&obs.t_ns)?;
    let window = from + 1..=to;
    let writes: u64 = series.intervals[window.clone()]
        .iter()
        .map(|i| i.bytes[1])
        .sum();
    if writes == 0 {
        return None;
    }
    let step_ns = |i: usize| obs.t_ns[i].saturating_sub(obs.t_ns[i - 1]).max(1);
    let workers = u64::from(series.workers.max(1));
    let wchans = throttle_wchans(series);
    // Over the intervals that completed writes: one where every writer was
    // blocked throughout has no latency to show.
    let mut maxes: Vec<u64> = series.intervals[window.clone()]
        .iter()
        .filter(|i| i.ios[1] > 0)
        .map(|i| i.lat_max_ns)
        .collect();
    maxes.sort_unstable();
    // The lower quartile: a stall lasting most of the run cannot raise it.
    let usual_max_ns = maxes[maxes.len() / 4];
    let pressed = |i: usize| {
        obs.memory_series.get(i).is_some_and(|&m| {
            DirtyDomain::at(m, obs.cgroup_series.get(i).copied()).past_background()
        }) || memory_at_limit(report, i)
    };
    let stalled = |i: usize| {
        let interval = &series.intervals[i];
        let jumped = interval.lat_max_ns >= JUMP_MIN_NS
            && interval.lat_max_ns >= JUMP_FACTOR * usual_max_ns
            && pressed(i);
        let waited =
            throttled_ns(interval, wchans) as f64 >= WAIT_SHARE * (workers * step_ns(i)) as f64;
        jumped || waited
    };
    let intervals: Vec<usize> = window.clone().filter(|&i| stalled(i)).collect();
    let first = *intervals.first()?;
    Some(Stall {
        from,
        to,
        first,
        intervals,
        usual_max_ns,
        worst_ns: series.intervals[first..=to]
            .iter()
            .map(|i| i.lat_max_ns)
            .max()
            .unwrap_or(0),
        throttled_ns: series.intervals[window]
            .iter()
            .map(|i| throttled_ns(i, wchans))
            .sum(),
        wchans,
        workers,
    })
}

impl Stall {
    /// "; throughput fell from 100 to 25 MiB/s", or nothing when the stall began with the job.
    pub(super) fn throughput_change(&self, report: &RunReport, series: &JobSeries) -> String {
        let t = &report.observations.t_ns;
        let rate = |range: std::ops::Range<usize>| -> Option<f64> {
            let ns = t[range.end - 1].saturating_sub(t[range.start - 1]);
            let bytes: u64 = series.intervals[range].iter().map(|i| i.bytes[1]).sum();
            (ns > 0).then(|| bytes as f64 / (ns as f64 / 1e9) / (1u64 << 20) as f64)
        };
        match (
            rate(self.from + 1..self.first),
            rate(self.first..self.to + 1),
        ) {
            (Some(before), Some(after)) => {
                format!("; throughput fell from {before:.0} to {after:.0} MiB/s")
            }
            _ => String::new(),
        }
    }

    /// The latency evidence, then the time in the throttling functions when it was measured.
    pub(super) fn evidence(&self, report: &RunReport) -> Vec<String> {
        let t = &report.observations.t_ns;
        let mut evidence = vec![format!(
            "usual per-interval max latency {}, worst {}",
            duration_text(self.usual_max_ns),
            duration_text(self.worst_ns)
        )];
        let span_ns = t[self.to].saturating_sub(t[self.from]).max(1);
        let pct = self.throttled_ns as f64 / (self.workers * span_ns) as f64 * 100.0;
        // Below 1% the wait-channel samples show nothing (they may have been missed).
        if pct >= 0.5 {
            evidence.push(format!(
                "the writers spent {pct:.0}% of their time in {}",
                self.wchans.join(" / ")
            ));
        }
        evidence
    }

    /// The moment the stall began (the start of its first interval).
    pub(super) fn at_ns(&self, report: &RunReport) -> u64 {
        report.observations.t_ns[self.first - 1]
    }
}

pub(super) fn writeback_stall(report: &RunReport) -> Vec<Finding> {
    report
        .observations
        .jobs
        .iter()
        .filter_map(|s| Some((s, stall_of(report, s)?)))
        .filter(|(_, stall)| !explains_stall(report, stall))
        .map(|(s, stall)| finding(report, s, &stall))
        .collect()
}

fn finding(report: &RunReport, series: &JobSeries, stall: &Stall) -> Finding {
    let obs = &report.observations;
    let i = stall.first;
    let domain = DirtyDomain::at(
        obs.memory_series.get(i).copied().unwrap_or_default(),
        obs.cgroup_series.get(i).copied(),
    );
    let whose = if domain.cgroup {
        "its cgroup's Dirty+Writeback"
    } else {
        "Dirty+Writeback"
    };
    let title = format!(
        "job '{}': writes blocked up to {} from t={:.1} s when {whose} reached {} (threshold {}){}",
        series.name,
        duration_text(stall.worst_ns),
        seconds_at(obs, i - 1),
        bytes_text(domain.held_bytes),
        bytes_text(domain.threshold_bytes),
        stall.throughput_change(report, series)
    );
    let mut evidence = stall.evidence(report);
    evidence.insert(
        1,
        format!(
            "background writeback starts at {}, writers are throttled hard at {}{}",
            bytes_text(domain.background_bytes),
            bytes_text(domain.threshold_bytes),
            if domain.cgroup {
                " (the cgroup's own dirty limits, lower than the machine's)"
            } else {
                ""
            }
        ),
    );
    Finding {
        code: "writeback-stall".into(),
        severity: Severity::Warning,
        title,
        evidence,
        advice: "the device (or a throttle in front of it) drains dirty pages slower than the job writes: this measured the kernel's dirty throttling; add end_fsync=1 or use direct=1 for device numbers, or lower the rate".into(),
        at_ns: Some(stall.at_ns(report)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;
    use crate::model::WaitTime;

    fn buffered_writer(report: &mut RunReport) {
        add_job(report, "w", false, io(0, 2560));
    }

    #[test]
    fn latency_jump_near_the_threshold_is_a_stall() {
        let mut report = run(100);
        buffered_writer(&mut report);
        for i in 50..100 {
            let interval = &mut report.observations.jobs[0].intervals[i];
            interval.lat_max_ns = 150_000_000;
            interval.bytes[1] /= 4;
            let m = &mut report.observations.memory_series[i];
            m.dirty_bytes = 1_932_735_283;
        }
        // A few wait-channel samples in a long stall are no share worth quoting.
        report.observations.jobs[0].intervals[60].waits = vec![WaitTime {
            wchan: "folio_wait_bit".into(),
            time_ns: 1_000_000,
        }];
        let found = writeback_stall(&report);
        assert_eq!(codes(&found), ["writeback-stall"]);
        assert!(
            !found[0]
                .evidence
                .iter()
                .any(|e| e.contains("% of their time")),
            "expected no share of time under 1%, saw {:?}",
            found[0].evidence
        );
        let title = &found[0].title;
        assert!(title.contains("up to 150 ms from t=4.9 s"), "{title}");
        assert_eq!(found[0].at_ns, Some(4_900_000_000));
        assert!(
            title.contains("reached 1.8 GiB (threshold 2.0 GiB)"),
            "{title}"
        );
        assert!(title.contains("fell from 100 to 25 MiB/s"), "{title}");
    }

    #[test]
    fn time_in_balance_dirty_pages_is_a_stall() {
        let mut report = run(30);
        buffered_writer(&mut report);
        for interval in &mut report.observations.jobs[0].intervals[10..] {
            interval.waits = vec![WaitTime {
                wchan: "balance_dirty_pages".into(),
                time_ns: 40_000_000,
            }];
        }
        let found = writeback_stall(&report);
        assert_eq!(codes(&found), ["writeback-stall"]);
        assert!(found[0]
            .evidence
            .iter()
            .any(|e| e.contains("% of their time")));
    }

    /// A jump while the machine's Dirty+Writeback is far below its
    /// thresholds: a stall only when the writer's cgroup has its own lower
    /// dirty limits (cgroup v2) and is past them.
    fn jump_in_a_group(group_thresholds: u64) -> RunReport {
        let mut report = run(60);
        buffered_writer(&mut report);
        for interval in &mut report.observations.jobs[0].intervals[30..] {
            interval.lat_max_ns = 150_000_000;
        }
        let limits = crate::model::CgroupLimits {
            memory_max_bytes: Some(1 << 30),
            dirty_threshold_bytes: Some(group_thresholds),
            ..Default::default()
        };
        add_cgroup(&mut report, limits, |i| crate::model::CgroupSample {
            memory_usage_bytes: 300 << 20,
            dirty_bytes: if i >= 30 { 90 << 20 } else { 0 },
            dirty_threshold_bytes: group_thresholds,
            dirty_background_threshold_bytes: group_thresholds / 2,
            ..Default::default()
        });
        report
    }

    #[test]
    fn the_groups_own_dirty_thresholds_apply_to_its_writers() {
        let found = writeback_stall(&jump_in_a_group(100 << 20));
        assert_eq!(codes(&found), ["writeback-stall"], "{found:?}");
        assert!(
            found[0].title.contains(
                "when its cgroup's Dirty+Writeback reached 90.0 MiB (threshold 100.0 MiB)"
            ),
            "expected the group's dirty pages and threshold in the title, saw {}",
            found[0].title
        );
        let quiet = writeback_stall(&jump_in_a_group(0));
        assert!(
            quiet.is_empty(),
            "expected no stall without group thresholds, the machine's being far off; saw {quiet:?}"
        );
    }

    #[test]
    fn intervals_blocked_throughout_do_not_set_the_usual_latency() {
        let mut report = run(60);
        buffered_writer(&mut report);
        for interval in &mut report.observations.jobs[0].intervals[10..50] {
            *interval = JobInterval {
                waits: vec![WaitTime {
                    wchan: "balance_dirty_pages".into(),
                    time_ns: STEP_NS,
                }],
                ..Default::default()
            };
        }
        let found = writeback_stall(&report);
        assert_eq!(codes(&found), ["writeback-stall"], "{found:?}");
        assert_eq!(
            found[0].evidence[0], "usual per-interval max latency 1.0 ms, worst 1.0 ms",
            "expected the usual max from the intervals that completed writes"
        );
    }

    /// A fsync=1 writer whose intervals all have `time_ns` in `wchan`.
    fn syncing_writer_waiting_in(wchan: &str, time_ns: u64) -> RunReport {
        let mut report = run(30);
        buffered_writer(&mut report);
        let series = &mut report.observations.jobs[0];
        series.syncs_writes = true;
        for interval in &mut series.intervals[1..] {
            interval.waits = vec![WaitTime {
                wchan: wchan.into(),
                time_ns,
            }];
        }
        report
    }

    #[test]
    fn a_job_waiting_for_its_own_fsyncs_is_not_stalled() {
        // Measured (ext4 on a loop device, fsync=1): the fsyncs wait in jbd2_log_wait_commit
        // and folio_wait_bit, the latter 9% of the job's time, over 10% in some intervals.
        for wchan in ["folio_wait_writeback", "folio_wait_bit"] {
            let found = writeback_stall(&syncing_writer_waiting_in(wchan, 70_000_000));
            assert!(
                found.is_empty(),
                "expected a fsync=1 job's own waits in {wchan} to raise nothing, saw {found:?}"
            );
        }
    }

    #[test]
    fn dirty_throttling_of_a_syncing_job_is_still_a_stall() {
        let found = writeback_stall(&syncing_writer_waiting_in(
            "balance_dirty_pages",
            40_000_000,
        ));
        assert_eq!(codes(&found), ["writeback-stall"], "{found:?}");
        assert!(
            found[0]
                .evidence
                .iter()
                .any(|e| e.ends_with("% of their time in balance_dirty_pages")),
            "expected only balance_dirty_pages named, saw {:?}",
            found[0].evidence
        );
    }

    #[test]
    fn silent_when_writes_are_absorbed() {
        let mut report = run(100);
        buffered_writer(&mut report);
        // A lone slow write far below the thresholds is not throttling.
        report.observations.jobs[0].intervals[40].lat_max_ns = 30_000_000;
        assert!(writeback_stall(&report).is_empty());
    }
}
