//! `unstable-throughput`: the job's per-interval IOPS changed level part-way
//! through the run (an SLC cache filled, the device throttled, a neighbour
//! started), so one average describes neither part. Found by binary
//! segmentation: the split of the series that best separates two means.

use super::{fresh_space, seconds_at, still_moving};
use crate::model::{Finding, JobSeries, Observations, RunReport, Severity};

/// Intervals needed before a change point is worth looking for.
const MIN_INTERVALS: usize = 20;
/// Each segment must hold at least this many intervals…
const MIN_SEGMENT: usize = 5;
/// …and the levels must differ by this share of the higher one (noise is ±5–8 %)…
const MIN_STEP: f64 = 0.25;
/// …by this many standard errors.
pub(super) const MIN_T: f64 = 6.0;

pub(super) fn unstable_throughput(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let mut findings = Vec::new();
    for series in &obs.jobs {
        let Some((lo, iops)) = measured_iops(obs, series) else {
            continue;
        };
        // A series still moving at its end has no two levels to split;
        // still-moving says what it does instead. A change where the first
        // pass over fresh space ended is first-pass-allocates'.
        if still_moving::trend(obs, lo, &iops).is_some()
            || fresh_space::change_at_pass_end(report, series).is_some()
        {
            continue;
        }
        let Some(split) = change_point(&iops) else {
            continue;
        };
        let hi = lo + iops.len();
        let (a, b) = (mean(&iops[..split]), mean(&iops[split..]));
        let at = lo + split;
        findings.push(Finding {
            code: "unstable-throughput".into(),
            severity: Severity::Warning,
            title: format!(
                "job '{}' changed speed at t={:.1} s: {} then {} IOPS",
                series.name,
                seconds_at(obs, at - 1),
                round(a),
                round(b)
            ),
            evidence: vec![
                segment(obs, lo - 1, at - 1, a),
                segment(obs, at - 1, hi - 1, b),
            ],
            advice: "report the segments separately; a longer run (or ramp_time past the change) shows which level is the steady state".into(),
            at_ns: Some(obs.t_ns[at - 1]),
        });
    }
    findings
}

/// The IOPS of each whole interval of the job's measured window, and the
/// index of the first: value `k` is interval `lo + k`, which ends at sample
/// `lo + k`. None when there are too few for a change to be told from noise.
pub(super) fn measured_iops(obs: &Observations, series: &JobSeries) -> Option<(usize, Vec<f64>)> {
    let (from, to) = series.measured_span(&obs.t_ns)?;
    // The first and last intervals are partial: the job (or its measurement) started or ended inside them.
    let (lo, hi) = (from + 2, to);
    if hi <= lo || hi - lo < MIN_INTERVALS {
        return None;
    }
    let iops = (lo..hi)
        .map(|i| {
            let ios = series.intervals[i].ios[0] + series.intervals[i].ios[1];
            let ns = obs.t_ns[i].saturating_sub(obs.t_ns[i - 1]).max(1);
            ios as f64 / (ns as f64 / 1e9)
        })
        .collect();
    Some((lo, iops))
}

fn segment(obs: &Observations, from: usize, to: usize, iops: f64) -> String {
    format!(
        "t={:.1}–{:.1} s: {} IOPS on average",
        seconds_at(obs, from),
        seconds_at(obs, to),
        round(iops)
    )
}

pub(super) fn round(iops: f64) -> String {
    if iops >= 10_000.0 {
        format!("{:.1}k", iops / 1000.0)
    } else {
        format!("{iops:.0}")
    }
}

pub(super) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The index splitting `values` into two segments with clearly different
/// means, if there is one: the split maximising the two-sample t statistic.
fn change_point(values: &[f64]) -> Option<usize> {
    best_split(
        values,
        MIN_SEGMENT..=values.len().saturating_sub(MIN_SEGMENT),
    )
}

/// Of the `splits`, the one whose two segments of `values` differ most
/// clearly (the largest two-sample t statistic, the first of equals), if any
/// differs clearly: by `MIN_STEP` of the higher mean and `MIN_T` standard
/// errors, each segment `MIN_SEGMENT` long.
pub(super) fn best_split(values: &[f64], splits: impl IntoIterator<Item = usize>) -> Option<usize> {
    let n = values.len();
    let mut best: Option<(f64, usize)> = None;
    for split in splits {
        if split < MIN_SEGMENT || n < split + MIN_SEGMENT {
            continue;
        }
        let (a, b) = values.split_at(split);
        let (ma, mb) = (mean(a), mean(b));
        let ss: f64 = a.iter().map(|x| (x - ma).powi(2)).sum::<f64>()
            + b.iter().map(|x| (x - mb).powi(2)).sum::<f64>();
        let sd = (ss / (n - 2) as f64).sqrt();
        let se = sd * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
        let t = if se > 0.0 {
            (ma - mb).abs() / se
        } else {
            f64::INFINITY
        };
        let step = (ma - mb).abs() / ma.max(mb).max(f64::MIN_POSITIVE);
        if step >= MIN_STEP && t >= MIN_T && best.is_none_or(|(bt, _)| t > bt) {
            best = Some((t, split));
        }
    }
    best.map(|(_, split)| split)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;

    #[test]
    fn a_drop_to_a_lower_level_splits_the_run() {
        let report = writes_per_interval(|i| wobble(i, if i <= 40 { 5000.0 } else { 2000.0 }));
        let found = unstable_throughput(&report);
        assert_eq!(codes(&found), ["unstable-throughput"]);
        assert!(found[0].title.contains("t=4.0 s"), "{:?}", found[0]);
        assert_eq!(found[0].at_ns, Some(4_000_000_000));
        assert_eq!(found[0].evidence.len(), 2);
    }

    #[test]
    fn a_warm_up_inside_the_ramp_is_no_change() {
        // Slow for the first 2 s, then steady: the ramp (ramp_time) ended at 2.5 s.
        let mut report = writes_per_interval(|i| wobble(i, if i <= 20 { 1000.0 } else { 5000.0 }));
        assert_eq!(
            codes(&unstable_throughput(&report)),
            ["unstable-throughput"]
        );
        ramp_until(&mut report, 0, 25);
        assert!(
            unstable_throughput(&report).is_empty(),
            "expected the ramp left out of the series"
        );
    }

    #[test]
    fn steady_noise_is_not_a_change() {
        let report = writes_per_interval(|i| wobble(i, 5000.0));
        assert!(unstable_throughput(&report).is_empty());
    }
}
