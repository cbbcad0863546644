//! `still-moving`: the job's throughput was still rising or falling when its
//! run ended. Its average is then a point on a curve (how far the job had got
//! when the clock stopped), not a steady state: a longer or a shorter run
//! reports another number. Found with a robust line (Theil–Sen: the median of
//! the slopes between every two points) through the last part of the measured
//! IOPS series, judged against how far the intervals scatter around it, then
//! followed back to where the trend began.

use super::unstable::{mean, measured_iops, round, MIN_T};
use super::{fresh_space, seconds_at};
use crate::model::{Finding, Observations, RunReport, Severity};

/// The end judged is the last third of the measured intervals (a change that
/// settled before it leaves a level, `unstable-throughput`'s business)…
const TAIL_DIVISOR: usize = 3;
/// …and, however short the run, at least this many of them.
const MIN_TAIL: usize = 10;
/// Longer series are averaged into this many points first: Theil–Sen weighs
/// every pair of points.
const MAX_POINTS: usize = 240;
/// Over the part judged, the line must move by this share of its level:
/// identical runs differ by ±5–8 %, so twice that is more than run-to-run
/// noise. Its slope must also be `MIN_T` standard errors from flat (the bar
/// of `unstable-throughput`'s change of level), the error taken from the
/// points' scatter around the line (the median absolute residual, so a burst
/// neither hides a trend nor makes one).
const MIN_DRIFT: f64 = 0.15;

pub(super) fn still_moving(report: &RunReport) -> Vec<Finding> {
    let obs = &report.observations;
    let mut findings = Vec::new();
    for series in &obs.jobs {
        // steadystate= judged the job itself and found it steady.
        let judged_steady = report
            .jobs
            .iter()
            .any(|j| j.name == series.name && j.steadystate.as_ref().is_some_and(|s| s.attained));
        // A change where the first pass over fresh space ended is first-pass-allocates'.
        if judged_steady || fresh_space::change_at_pass_end(report, series).is_some() {
            continue;
        }
        let Some((lo, iops)) = measured_iops(obs, series) else {
            continue;
        };
        let Some(trend) = trend(obs, lo, &iops) else {
            continue;
        };
        // Interval `lo + k` runs from sample `lo + k - 1` to sample `lo + k`.
        let (began, ended) = (lo + trend.since - 1, lo + iops.len() - 1);
        let (rose, doing) = if trend.to > trend.from {
            ("rose", "speeding up")
        } else {
            ("fell", "slowing down")
        };
        let lasted = seconds_at(obs, ended) - seconds_at(obs, began);
        findings.push(Finding {
            code: "still-moving".into(),
            severity: Severity::Warning,
            title: format!(
                "job '{}' was still {doing} when the run ended: {} → {} IOPS over its last {lasted:.1} s",
                series.name,
                round(trend.from),
                round(trend.to)
            ),
            evidence: vec![
                format!(
                    "IOPS {rose} steadily from t={:.1} s to the end at t={:.1} s ({:+.0}%); the intervals scatter ±{:.0}% around that line",
                    seconds_at(obs, began),
                    seconds_at(obs, ended),
                    (trend.to / trend.from - 1.0) * 100.0,
                    trend.scatter * 100.0
                ),
                format!(
                    "the measured average, {} IOPS, is where the curve was when the clock stopped, not a steady state",
                    round(mean(&iops))
                ),
            ],
            advice: "run longer (runtime=) until the rate settles, or set ramp_time past the change so only the settled part is measured; steadystate= (e.g. steadystate=iops_slope:0.3%) ends a job once its rate holds and says when it never did".into(),
            at_ns: Some(obs.t_ns[began]),
        });
    }
    findings
}

/// A trend at the end of a series.
#[derive(Debug)]
pub(super) struct Trend {
    /// The value where it began.
    pub since: usize,
    /// The fitted line there and at the end.
    pub from: f64,
    pub to: f64,
    /// The points' robust standard deviation around the line, a share of its level.
    pub scatter: f64,
}

/// The trend at the end of `iops`, the series `measured_iops` gives (its
/// first value is interval `lo`), if its end is still moving.
pub(super) fn trend(obs: &Observations, lo: usize, iops: &[f64]) -> Option<Trend> {
    let points = points(obs, lo, iops);
    let tail = (points.len() / TAIL_DIVISOR)
        .max(MIN_TAIL)
        .min(points.len());
    let tail_start = points.len() - tail;
    let last = Line::through(&points[tail_start..]).filter(Line::moves)?;
    // Where it began: the knee of the best fit of "a level, then a straight
    // line the tail's way" (a knee at the first point is one straight line),
    // no later than the tail.
    let (knee, hinge) = (0..=tail_start)
        .filter_map(|k| Some((k, Hinge::fit(&points, k)?)))
        .filter(|(_, h)| h.slope * last.slope > 0.0)
        .min_by(|a, b| a.1.squares.total_cmp(&b.1.squares))?;
    let end = points[points.len() - 1].0;
    Some(Trend {
        since: points[knee].2,
        from: hinge.level,
        to: hinge.level + hinge.slope * (end - points[knee].0),
        scatter: last.sigma / last.level(),
    })
}

/// Least squares of "`level` up to point `knee`'s x, then rising by `slope`
/// a second": the trend's start and pace.
#[derive(Debug, Clone, Copy)]
struct Hinge {
    level: f64,
    slope: f64,
    /// The sum of the squared residuals.
    squares: f64,
}

impl Hinge {
    fn fit(points: &[(f64, f64, usize)], knee: usize) -> Option<Hinge> {
        let x0 = points.get(knee)?.0;
        let z: Vec<f64> = points.iter().map(|p| (p.0 - x0).max(0.0)).collect();
        let y: Vec<f64> = points.iter().map(|p| p.1).collect();
        let (z_mean, y_mean) = (mean(&z), mean(&y));
        let szz: f64 = z.iter().map(|z| (z - z_mean).powi(2)).sum();
        if szz <= 0.0 {
            return None;
        }
        let szy: f64 = z
            .iter()
            .zip(&y)
            .map(|(z, y)| (z - z_mean) * (y - y_mean))
            .sum();
        let slope = szy / szz;
        let level = y_mean - slope * z_mean;
        let squares = z
            .iter()
            .zip(&y)
            .map(|(z, y)| (y - level - slope * z).powi(2))
            .sum();
        Some(Hinge {
            level,
            slope,
            squares,
        })
    }
}

/// (seconds, IOPS, index of the first value averaged into it): one point per
/// value, or per run of values when there are more than `MAX_POINTS`.
fn points(obs: &Observations, lo: usize, iops: &[f64]) -> Vec<(f64, f64, usize)> {
    let per = iops.len().div_ceil(MAX_POINTS);
    let middle = |k: usize| (seconds_at(obs, lo + k - 1) + seconds_at(obs, lo + k)) / 2.0;
    (0..iops.len())
        .step_by(per)
        .map(|first| {
            let run = first..(first + per).min(iops.len());
            let xs: Vec<f64> = run.clone().map(middle).collect();
            (mean(&xs), mean(&iops[run]), first)
        })
        .collect()
}

/// A Theil–Sen line through some points, with their spread around it.
#[derive(Debug, Clone, Copy)]
struct Line {
    slope: f64,
    intercept: f64,
    /// Robust standard deviation of the residuals (1.4826 × their median absolute value).
    sigma: f64,
    /// The first and last point's x, the mean x and Σ(x − mean)².
    x_first: f64,
    x_last: f64,
    x_mean: f64,
    sxx: f64,
}

impl Line {
    fn through(points: &[(f64, f64, usize)]) -> Option<Line> {
        let mut slopes = Vec::with_capacity(points.len() * points.len() / 2);
        for (i, a) in points.iter().enumerate() {
            for b in &points[i + 1..] {
                if b.0 > a.0 {
                    slopes.push((b.1 - a.1) / (b.0 - a.0));
                }
            }
        }
        let slope = median(&mut slopes)?;
        let mut offsets: Vec<f64> = points.iter().map(|p| p.1 - slope * p.0).collect();
        let intercept = median(&mut offsets)?;
        let mut residuals: Vec<f64> = points
            .iter()
            .map(|p| (p.1 - intercept - slope * p.0).abs())
            .collect();
        let sigma = 1.4826 * median(&mut residuals)?;
        let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
        let x_mean = mean(&xs);
        Some(Line {
            slope,
            intercept,
            sigma,
            x_first: xs[0],
            x_last: xs[xs.len() - 1],
            x_mean,
            sxx: xs.iter().map(|x| (x - x_mean).powi(2)).sum(),
        })
    }

    fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }

    /// The line's mean value over its points.
    fn level(&self) -> f64 {
        self.at(self.x_mean).max(f64::MIN_POSITIVE)
    }

    /// It moves beyond both noise bars (`MIN_DRIFT`, `MIN_T`).
    fn moves(&self) -> bool {
        let drift = self.slope.abs() * (self.x_last - self.x_first);
        let standard_error = self.sigma / self.sxx.sqrt();
        drift >= MIN_DRIFT * self.level() && self.slope.abs() >= MIN_T * standard_error
    }
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let middle = values.len() / 2;
    let (_, m, _) = values.select_nth_unstable_by(middle, f64::total_cmp);
    Some(*m)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::*;
    use super::*;

    #[test]
    fn a_rate_still_rising_at_the_end_is_named_with_how_long() {
        // Flat at 200 per interval (2000 IOPS) for 4 s, then rising 2 % an interval to the end.
        let report =
            writes_per_interval(|i| wobble(i, 200.0 * (1.0 + 0.02 * i.saturating_sub(40) as f64)));
        let found = still_moving(&report);
        assert_eq!(codes(&found), ["still-moving"], "{found:?}");
        let finding = &found[0];
        assert!(finding.title.contains("still speeding up"), "{finding:?}");
        let began = finding.at_ns.expect("when it began") as f64 / 1e9;
        assert!(
            (3.5..=5.0).contains(&began),
            "expected the rise dated near 4 s, saw {began} s: {finding:?}"
        );
        // It is no change of level: unstable-throughput leaves it to this finding.
        assert!(super::super::unstable::unstable_throughput(&report).is_empty());
    }

    #[test]
    fn a_rate_still_falling_at_the_end_is_named() {
        let report = writes_per_interval(|i| wobble(i, 400.0 - 4.0 * i as f64));
        let found = still_moving(&report);
        assert_eq!(codes(&found), ["still-moving"], "{found:?}");
        assert!(found[0].title.contains("still slowing down"), "{found:?}");
        assert!(
            found[0].at_ns.is_some_and(|ns| ns <= 500_000_000),
            "expected the fall followed back to the start, saw {found:?}"
        );
    }

    #[test]
    fn flat_noise_a_settled_change_and_a_steady_state_are_silent() {
        // ±7 % around a flat level.
        assert!(still_moving(&writes_per_interval(|i| wobble(i, 300.0))).is_empty());
        // Heavy noise: every fifth interval a burst of three times the level, every seventh a stall.
        let bursty = writes_per_interval(|i| match (i % 5, i % 7) {
            (0, _) => 900,
            (_, 0) => 20,
            _ => wobble(i, 300.0),
        });
        assert!(still_moving(&bursty).is_empty());
        // A drop halfway that settled at its new level: unstable-throughput's.
        let dropped = writes_per_interval(|i| wobble(i, if i <= 40 { 500.0 } else { 200.0 }));
        assert!(still_moving(&dropped).is_empty());
        assert_eq!(
            codes(&super::super::unstable::unstable_throughput(&dropped)),
            ["unstable-throughput"]
        );
        // A trend gentler than the noise bar: 5 % over the last third.
        let gentle = writes_per_interval(|i| wobble(i, 300.0 * (1.0 + 0.002 * i as f64)));
        assert!(still_moving(&gentle).is_empty());
    }

    #[test]
    fn a_job_steadystate_judged_steady_is_left_to_it() {
        let mut rising = writes_per_interval(|i| wobble(i, 100.0 + 10.0 * i as f64));
        assert_eq!(codes(&still_moving(&rising)), ["still-moving"]);
        rising.jobs[0].steadystate = Some(crate::model::SteadyStateReport {
            criterion: "iops_slope".into(),
            limit: 0.3,
            limit_is_percent: true,
            duration_s: 2,
            attained: true,
            value: 0.1,
            max_deviation: 0.0,
            slope: 0.0,
            iops_samples: Vec::new(),
            bw_samples_bytes_per_sec: Vec::new(),
        });
        assert!(still_moving(&rising).is_empty());
    }

    #[test]
    fn long_series_are_averaged_into_points() {
        // 2000 intervals (200 s) rising over the last quarter.
        let mut report = run(2000);
        add_job(&mut report, "w", true, io(0, 1));
        for (i, interval) in report.observations.jobs[0].intervals.iter_mut().enumerate() {
            interval.ios[1] = wobble(i, 300.0 + 0.5 * i.saturating_sub(1500) as f64);
        }
        let found = still_moving(&report);
        assert_eq!(codes(&found), ["still-moving"], "{found:?}");
        let began = found[0].at_ns.unwrap() as f64 / 1e9;
        assert!((130.0..=165.0).contains(&began), "began at {began} s");
    }
}
