//! `first-pass-allocates`: a write job whose target was fresh space when the
//! run started (a file with holes, preallocated extents never written, a loop
//! device over a file with holes: a thin device) measured its first pass over
//! it, where every write also allocates (blocks, converted extents, the
//! backing file's pages), and overwrites of the same space once allocated run
//! at another speed. Fires when the job's speed changed where its first pass
//! ended (`unstable-throughput`'s change point, within a few intervals of the
//! moment its written bytes reached the range its targets span), and, as a
//! note, when its measured window never got past the first pass.

use super::unstable::{best_split, mean, measured_iops, round};
use super::{bytes_text, seconds_at};
use crate::model::{Finding, JobSeries, Observations, RunReport, Severity};

/// The change may lie this many intervals from the end of the pass (the
/// sampler's ticks and the change point's placing each blur it by one)…
const NEAR_INTERVALS: usize = 3;
/// …or this share of the measured intervals, when that is more.
const NEAR_SHARE: f64 = 0.05;
/// The intervals weighed on each side of the pass's end.
const LOCAL: usize = 10;

pub(super) fn first_pass_allocates(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let mut findings = Vec::new();
    for series in &obs.jobs {
        let Some(pass) = FirstPass::of(report, series) else {
            continue;
        };
        if let Some(change) = change_at_pass_end(report, series) {
            findings.push(changed_speed(obs, series, &pass, &change));
        } else if pass.ended.is_none() && measured_iops(obs, series).is_some() {
            findings.push(never_past(series, &pass));
        }
    }
    findings
}

/// A job's first pass over its targets, some of them fresh space.
struct FirstPass {
    /// Each fresh target's path and what it was when the run started.
    fresh: Vec<(String, String)>,
    /// The bytes its targets span: one pass over them allocates all of it.
    bytes: u64,
    /// The interval in which the bytes written to its targets (by it and
    /// the other jobs writing them) reached `bytes`, None when they never did.
    ended: Option<usize>,
    /// Bytes the job wrote in all, its ramp included (its writes allocate too).
    written: u64,
}

impl FirstPass {
    /// The first pass of a job that wrote to fresh space; None for a job that
    /// wrote nothing, or none of whose targets was fresh.
    fn of(report: &RunReport, series: &JobSeries) -> Option<FirstPass> {
        let targets: Vec<_> = report
            .observations
            .targets
            .iter()
            .filter(|t| series.targets.contains(&t.path))
            .collect();
        let fresh: Vec<(String, String)> = targets
            .iter()
            .filter_map(|t| {
                let what = if t.sparse {
                    "a file with holes: its first writes allocate blocks".to_string()
                } else if t.unwritten {
                    "a file with preallocated extents never written: its first writes convert them"
                        .to_string()
                } else {
                    format!(
                        "a loop device over a file with holes ({}), a thin device: its first writes allocate the backing file's blocks",
                        t.backing_holes.as_ref()?
                    )
                };
                Some((t.path.clone(), what))
            })
            .collect();
        let bytes: u64 = targets.iter().map(|t| t.used_bytes).sum();
        let written: u64 = series.intervals.iter().map(|i| i.bytes[1]).sum();
        if fresh.is_empty() || bytes == 0 || written == 0 {
            return None;
        }
        // Every job writing these targets allocates, the ones before this
        // job (a layout pass with stonewall) and beside it alike.
        let writers: Vec<&JobSeries> = (report.observations.jobs.iter())
            .filter(|j| j.targets.iter().any(|t| series.targets.contains(t)))
            .collect();
        let mut so_far = 0;
        let ended = (0..series.intervals.len()).position(|i| {
            so_far += (writers.iter())
                .filter_map(|w| w.intervals.get(i))
                .map(|interval| interval.bytes[1])
                .sum::<u64>();
            so_far >= bytes
        });
        Some(FirstPass {
            fresh,
            bytes,
            ended,
            written,
        })
    }

    fn evidence(&self) -> Vec<String> {
        self.fresh
            .iter()
            .map(|(path, what)| format!("{path} was fresh space when the run started, {what}"))
            .collect()
    }
}

/// A change of speed where the first pass ended: the measured IOPS (value
/// `k` is interval `lo + k`) and the first value after the change.
pub(super) struct Change {
    lo: usize,
    iops: Vec<f64>,
    split: usize,
}

/// The job's change of speed where its first pass over fresh space ended:
/// the intervals either side of that moment (up to `LOCAL` each) differ as
/// `unstable-throughput`'s two levels must, split within `NEAR_INTERVALS` (or
/// `NEAR_SHARE`) of it. Only those intervals are weighed: overwrites often
/// move on (bursts, a cache filling) and a change elsewhere is not this one.
pub(super) fn change_at_pass_end(report: &RunReport, series: &JobSeries) -> Option<Change> {
    let ended = FirstPass::of(report, series)?.ended?;
    let (lo, iops) = measured_iops(&report.observations, series)?;
    let near = NEAR_INTERVALS.max((NEAR_SHARE * iops.len() as f64) as usize);
    // The pass ended inside interval `ended`: the next one is all overwrites.
    let pass_end = (ended + 1).checked_sub(lo)?;
    let from = pass_end.saturating_sub(LOCAL).min(iops.len());
    let to = (pass_end + LOCAL).min(iops.len());
    let splits = pass_end.saturating_sub(near).max(from)..=pass_end + near;
    let split = from + best_split(&iops[from..to], splits.map(|s| s - from))?;
    Some(Change { lo, iops, split })
}

fn changed_speed(obs: &Observations, series: &JobSeries, pass: &FirstPass, c: &Change) -> Finding {
    let ended = pass.ended.unwrap_or_default();
    let (at, hi) = (c.lo + c.split, c.lo + c.iops.len());
    let (before, after) = (mean(&c.iops[..c.split]), mean(&c.iops[c.split..]));
    let started = series.active_span().map_or(0, |(from, _)| from);
    let segment = |from: usize, to: usize, iops: f64, doing: &str| {
        format!(
            "t={:.1}–{:.1} s: {} IOPS, {:.1} MiB/s on average, {doing}",
            seconds_at(obs, from - 1),
            seconds_at(obs, to - 1),
            round(iops),
            mib_per_s(obs, series, from, to)
        )
    };
    let mut evidence = pass.evidence();
    evidence.push(format!(
        "the {} its targets span had all been written by t={:.1} s, the first pass over them; its speed changed at t={:.1} s",
        bytes_text(pass.bytes),
        seconds_at(obs, ended),
        seconds_at(obs, at - 1)
    ));
    evidence.push(segment(
        c.lo,
        at,
        before,
        "the first pass (each write allocating)",
    ));
    evidence.push(segment(
        at,
        hi,
        after,
        "overwrites of space already allocated",
    ));
    Finding {
        code: "first-pass-allocates".into(),
        severity: Severity::Warning,
        title: format!(
            "job '{}' {} when its first pass over fresh space ended at t={:.1} s: {} IOPS while its writes allocated, then {} IOPS overwriting",
            series.name,
            if after > before { "sped up" } else { "slowed down" },
            seconds_at(obs, ended),
            round(before),
            round(after)
        ),
        evidence,
        advice: format!(
            "its average mixes the two; {LAY_OUT_FIRST}, or set ramp_time past the first pass (it ended {:.1} s after the job started)",
            seconds_at(obs, ended) - seconds_at(obs, started)
        ),
        at_ns: Some(obs.t_ns[at - 1]),
    }
}

fn never_past(series: &JobSeries, pass: &FirstPass) -> Finding {
    let mut evidence = pass.evidence();
    evidence.push(
        "overwrites of the same space, once allocated, may run at another speed: this result says nothing about them"
            .into(),
    );
    Finding {
        code: "first-pass-allocates".into(),
        severity: Severity::Info,
        title: format!(
            "job '{}' measured only its first pass over fresh space: it wrote {} of the {} its targets span, every write allocating",
            series.name,
            bytes_text(pass.written),
            bytes_text(pass.bytes)
        ),
        evidence,
        advice: format!("report it as a first-pass number; {LAY_OUT_FIRST}"),
        at_ns: None,
    }
}

const LAY_OUT_FIRST: &str = "to measure overwrites, lay the space out first: write it once before measuring (a job writing the same target before this one, with stonewall)";

/// The job's read and written MiB/s over intervals `from..to`.
fn mib_per_s(obs: &Observations, series: &JobSeries, from: usize, to: usize) -> f64 {
    let bytes: u64 = series.intervals[from..to]
        .iter()
        .map(|i| i.bytes[0] + i.bytes[1])
        .sum();
    let ns = obs.t_ns[to - 1].saturating_sub(obs.t_ns[from - 1]).max(1);
    bytes as f64 / (1 << 20) as f64 / (ns as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::super::{still_moving::still_moving, unstable::unstable_throughput};
    use super::*;

    /// An 8 s direct writer of 4 KiB writes over a fresh target spanning
    /// `pass_ios` of them, its interval `i` completing `ios(i)` writes.
    fn fresh_writer(pass_ios: u64, ios: impl Fn(usize) -> u64) -> RunReport {
        let mut report = writes_per_interval(ios);
        for interval in &mut report.observations.jobs[0].intervals {
            interval.bytes[1] = interval.ios[1] * 4096;
        }
        add_target(&mut report, |_| 0);
        let target = &mut report.observations.targets[0];
        target.used_bytes = pass_ios * 4096;
        target.sparse = true;
        report
    }

    /// 200 writes an interval up to 4 s (800 writes), then 2000.
    fn slow_then_fast(i: usize) -> u64 {
        wobble(i, if i <= 40 { 200.0 } else { 2000.0 })
    }

    #[test]
    fn a_change_where_the_first_pass_ends_is_named_instead_of_unstable_throughput() {
        // 40 intervals of about 200 writes: the pass of 8000 ends near 4 s.
        let report = fresh_writer(8000, slow_then_fast);
        let found = first_pass_allocates(&report);
        assert_eq!(codes(&found), ["first-pass-allocates"], "{found:?}");
        let finding = &found[0];
        assert_eq!(finding.severity, Severity::Warning);
        assert!(
            finding
                .title
                .contains("sped up when its first pass over fresh space ended at t=4.0 s"),
            "{finding:?}"
        );
        assert!(
            finding
                .title
                .contains(": 2001 IOPS while its writes allocated, then 20.1k IOPS overwriting"),
            "{finding:?}"
        );
        assert!(
            finding.evidence[0].contains("a file with holes"),
            "{finding:?}"
        );
        assert!(finding.evidence[3].contains("overwrites"), "{finding:?}");
        assert!(finding.advice.contains("ramp_time"), "{finding:?}");
        assert!(unstable_throughput(&report).is_empty());
        assert!(still_moving(&report).is_empty());
    }

    #[test]
    fn overwrites_that_speed_up_again_later_are_still_the_first_pass_ending() {
        // Slow to 4 s, then 1500 an interval for a second, then 6000.
        let report = fresh_writer(8000, |i| match i {
            ..=40 => wobble(i, 200.0),
            41..=50 => wobble(i, 1500.0),
            _ => wobble(i, 6000.0),
        });
        let found = first_pass_allocates(&report);
        assert_eq!(codes(&found), ["first-pass-allocates"], "{found:?}");
        assert_eq!(found[0].at_ns, Some(4_000_000_000), "{found:?}");
        assert!(unstable_throughput(&report).is_empty());
    }

    #[test]
    fn a_change_away_from_the_pass_end_is_left_to_unstable_throughput() {
        // The pass of 4000 writes ends near 2 s; the speed changes at 4 s.
        let report = fresh_writer(4000, slow_then_fast);
        assert!(first_pass_allocates(&report).is_empty());
        assert_eq!(
            codes(&unstable_throughput(&report)),
            ["unstable-throughput"]
        );
    }

    #[test]
    fn a_target_that_was_not_fresh_is_left_to_unstable_throughput() {
        let mut report = fresh_writer(8000, slow_then_fast);
        report.observations.targets[0].sparse = false;
        assert!(first_pass_allocates(&report).is_empty());
        assert_eq!(
            codes(&unstable_throughput(&report)),
            ["unstable-throughput"]
        );
        // Unwritten extents and a thin loop device are fresh space too.
        report.observations.targets[0].unwritten = true;
        assert_eq!(
            codes(&first_pass_allocates(&report)),
            ["first-pass-allocates"]
        );
        report.observations.targets[0].unwritten = false;
        report.observations.targets[0].backing_holes = Some("/data/thin.img".into());
        let found = first_pass_allocates(&report);
        assert!(found[0].evidence[0].contains("/data/thin.img"), "{found:?}");
    }

    #[test]
    fn reads_of_a_fresh_target_are_no_first_pass() {
        let mut report = fresh_writer(8000, slow_then_fast);
        for interval in &mut report.observations.jobs[0].intervals {
            interval.ios = [interval.ios[1], 0];
            interval.bytes = [interval.bytes[1], 0];
        }
        assert!(first_pass_allocates(&report).is_empty());
    }

    #[test]
    fn a_measured_window_inside_the_first_pass_is_a_note() {
        // Steady, and 80 intervals of about 200 writes never reach 100000.
        let report = fresh_writer(100_000, |i| wobble(i, 200.0));
        let found = first_pass_allocates(&report);
        assert_eq!(codes(&found), ["first-pass-allocates"], "{found:?}");
        assert_eq!(found[0].severity, Severity::Info);
        assert!(
            found[0].title.contains("measured only its first pass"),
            "{found:?}"
        );
        // Past the pass and steady: nothing to say.
        assert!(first_pass_allocates(&fresh_writer(4000, |i| wobble(i, 200.0))).is_empty());
    }

    #[test]
    fn space_an_earlier_job_wrote_is_no_longer_fresh() {
        // The writer starts at 1 s; a job before it wrote the whole range.
        let mut report = fresh_writer(100_000, |i| if i <= 10 { 0 } else { wobble(i, 200.0) });
        assert_eq!(
            codes(&first_pass_allocates(&report)),
            ["first-pass-allocates"]
        );
        add_job(&mut report, "lay out", true, io(0, 0));
        report.observations.jobs[1].intervals[5].bytes[1] = 100_000 * 4096;
        assert!(first_pass_allocates(&report).is_empty());
    }
}
