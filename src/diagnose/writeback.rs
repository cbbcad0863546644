//! `writeback-stall` (seed 004): buffered writers throttled by the kernel's
//! dirty-page limits. Two signs, either enough: the writers' wait channel was
//! measured in the throttling functions, or per-interval max latency jumped
//! far above its usual level while Dirty+Writeback was past the background
//! threshold.

use super::{bytes_text, duration_text, seconds_at};
use crate::model::{Finding, JobInterval, JobSeries, Observations, RunReport, Severity};

/// Kernel functions a writer sleeps in when dirty throttling or stable pages hold it.
const THROTTLE_WCHANS: &[&str] = &[
    "balance_dirty_pages",
    "folio_wait_bit",
    "folio_wait_writeback",
];
/// Share of the writers' time in those functions that counts as a stall (lab: 42–81 % when stalled).
const WAIT_SHARE: f64 = 0.10;
/// A max latency counts as a jump above this many times the job's median interval max...
const JUMP_FACTOR: u64 = 10;
/// ...and at least this long.
const JUMP_MIN_NS: u64 = 10_000_000;

fn throttled_ns(interval: &JobInterval) -> u64 {
    interval
        .waits
        .iter()
        .filter(|w| THROTTLE_WCHANS.contains(&w.wchan.as_str()))
        .map(|w| w.time_ns)
        .sum()
}

pub fn writeback_stall(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    obs.jobs
        .iter()
        .filter(|s| !s.direct)
        .filter_map(|s| stall_of(obs, s))
        .collect()
}

fn stall_of(obs: &Observations, series: &JobSeries) -> Option<Finding> {
    let (from, to) = series.active_span()?;
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
    let mut maxes: Vec<u64> = series.intervals[window.clone()]
        .iter()
        .map(|i| i.lat_max_ns)
        .collect();
    maxes.sort_unstable();
    // The lower quartile: a stall lasting most of the run cannot raise it.
    let usual_max = maxes[maxes.len() / 4];
    let past_background = |i: usize| {
        obs.memory_series.get(i).is_some_and(|m| {
            m.dirty_background_threshold_bytes > 0
                && m.dirty_bytes + m.writeback_bytes >= m.dirty_background_threshold_bytes
        })
    };
    let stalled = |i: usize| {
        let interval = &series.intervals[i];
        let jumped = interval.lat_max_ns >= JUMP_MIN_NS
            && interval.lat_max_ns >= JUMP_FACTOR * usual_max
            && past_background(i);
        let waited = throttled_ns(interval) as f64 >= WAIT_SHARE * (workers * step_ns(i)) as f64;
        jumped || waited
    };
    let first = window.clone().find(|&i| stalled(i))?;
    let span_ns = obs.t_ns[to].saturating_sub(obs.t_ns[from]).max(1);
    let throttled: u64 = series.intervals[window.clone()]
        .iter()
        .map(throttled_ns)
        .sum();
    let worst = series.intervals[first..=to]
        .iter()
        .map(|i| i.lat_max_ns)
        .max()
        .unwrap_or(0);
    let memory = obs.memory_series.get(first).copied().unwrap_or_default();
    let rate = |range: std::ops::Range<usize>| -> Option<f64> {
        let ns: u64 = range.clone().map(step_ns).sum();
        let bytes: u64 = series.intervals[range].iter().map(|i| i.bytes[1]).sum();
        (ns > 0).then(|| bytes as f64 / (ns as f64 / 1e9) / (1u64 << 20) as f64)
    };
    let mut title = format!(
        "job '{}': writes blocked up to {} from t={:.1} s when Dirty+Writeback reached {} (threshold {})",
        series.name,
        duration_text(worst),
        seconds_at(obs, first - 1),
        bytes_text(memory.dirty_bytes + memory.writeback_bytes),
        bytes_text(memory.dirty_threshold_bytes)
    );
    if let (Some(before), Some(after)) = (rate(from + 1..first), rate(first..to + 1)) {
        title.push_str(&format!(
            "; throughput fell from {before:.0} to {after:.0} MiB/s"
        ));
    }
    let mut evidence = vec![
        format!(
            "usual per-interval max latency {}, worst {}",
            duration_text(usual_max),
            duration_text(worst)
        ),
        format!(
            "background writeback starts at {}, writers are throttled hard at {}",
            bytes_text(memory.dirty_background_threshold_bytes),
            bytes_text(memory.dirty_threshold_bytes)
        ),
    ];
    if throttled > 0 {
        evidence.push(format!(
            "the writers spent {:.0}% of their time in {}",
            throttled as f64 / (workers * span_ns) as f64 * 100.0,
            THROTTLE_WCHANS.join(" / ")
        ));
    }
    Some(Finding {
        code: "writeback-stall".into(),
        severity: Severity::Warning,
        title,
        evidence,
        advice: "the device (or a throttle in front of it) drains dirty pages slower than the job writes: this measured the kernel's dirty throttling; add end_fsync=1 or use direct=1 for device numbers, or lower the rate".into(),
        at_ns: Some(obs.t_ns[first - 1]),
    })
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
        let found = writeback_stall(&report);
        assert_eq!(codes(&found), ["writeback-stall"]);
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

    #[test]
    fn silent_when_writes_are_absorbed() {
        let mut report = run(100);
        buffered_writer(&mut report);
        // A lone slow write far below the thresholds is not throttling.
        report.observations.jobs[0].intervals[40].lat_max_ns = 30_000_000;
        assert!(writeback_stall(&report).is_empty());
    }
}
