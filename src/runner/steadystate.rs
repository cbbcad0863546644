//! `steadystate` / `ss_dur` / `ss_ramp`: end a job once its rate holds steady.
//!
//! The group's supervising thread reads the job's live counters every few
//! milliseconds; once a second (after `ramp_time` and `ss_ramp`) it takes a
//! sample of IOPS and bandwidth, both directions together. When the last
//! `ss_dur` of samples meets the criterion, the job is told to stop. Nothing
//! here runs per I/O.

use crate::job::spec::{JobSpec, SteadyMetric, SteadyStateSpec};
use crate::model::SteadyStateReport;
use crate::observe::live::LiveBoard;
use std::collections::VecDeque;
use std::ops::Range;
use std::time::Duration;

/// One sample a second, as fio.
const SAMPLE_NS: u64 = 1_000_000_000;

/// The steady-state checks of a running group's jobs.
pub(super) struct GroupSteadyState {
    units: Vec<Unit>,
}

/// Workers judged together: a job's with `group_reporting` (as they are
/// reported), else one.
struct Unit {
    /// The job's position in the group and its index in the run.
    position: usize,
    job: usize,
    workers: Range<u32>,
    check: SteadyState,
}

impl GroupSteadyState {
    /// `group` holds the run's indexes of the running group's jobs.
    pub(super) fn new(jobs: &[JobSpec], group: &[usize]) -> Self {
        let mut units = Vec::new();
        for (position, &job) in group.iter().enumerate() {
            let spec = &jobs[job];
            let Some(ss) = &spec.control.steadystate else {
                continue;
            };
            let numjobs = spec.exec.numjobs;
            let worker_sets: Vec<Range<u32>> = if spec.exec.group_reporting {
                std::iter::once(0..numjobs).collect()
            } else {
                (0..numjobs).map(|w| w..w + 1).collect()
            };
            units.extend(worker_sets.into_iter().map(|workers| Unit {
                position,
                job,
                workers,
                check: SteadyState::new(ss, spec.exec.ramp_time),
            }));
        }
        Self { units }
    }

    /// Take the samples that are due at `now_ns` from the workers' live
    /// counters; `stop(position, workers)` for each unit that has just become steady.
    pub(super) fn observe(
        &mut self,
        now_ns: u64,
        board: &LiveBoard,
        mut stop: impl FnMut(usize, Range<u32>),
    ) {
        for unit in self.units.iter_mut().filter(|u| !u.check.attained) {
            let mut totals = Totals::default();
            for w in unit.workers.clone() {
                let live = board.worker(unit.job, w).totals();
                totals.ios += live.ios.iter().sum::<u64>();
                totals.bytes += live.bytes.iter().sum::<u64>();
            }
            if unit.check.observe(now_ns, totals) {
                stop(unit.position, unit.workers.clone());
            }
        }
    }

    /// The check of the unit worker `worker` of the job at `position` belongs to.
    pub(super) fn report_for(&self, position: usize, worker: u32) -> Option<SteadyStateReport> {
        self.units
            .iter()
            .find(|u| u.position == position && u.workers.contains(&worker))
            .map(|u| u.check.report())
    }
}

/// A judged unit's running totals (its workers' I/Os and bytes, both directions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Totals {
    pub ios: u64,
    pub bytes: u64,
}

/// The steady-state check of one reported unit: a job's workers together with
/// `group_reporting`, else a single worker.
#[derive(Debug, Clone)]
pub(super) struct SteadyState {
    spec: SteadyStateSpec,
    samples_wanted: usize,
    /// `ramp_time` + `ss_ramp`, counted from the unit's first I/O.
    ramp_ns: u64,
    first_io_ns: Option<u64>,
    /// When the last sample was taken, and the totals then; None during the ramp.
    last_sample: Option<(u64, Totals)>,
    iops: VecDeque<u64>,
    bw: VecDeque<u64>,
    verdict: Verdict,
    attained: bool,
}

/// How far the judged samples are from steady, in the criterion's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Verdict {
    /// Compared with the limit: |deviation| or |slope|, per cent of the mean with a `%` limit.
    value: f64,
    max_deviation: f64,
    slope: f64,
}

impl SteadyState {
    pub(super) fn new(spec: &SteadyStateSpec, ramp_time: Duration) -> Self {
        let samples_wanted = spec.duration.as_secs().max(1) as usize;
        Self {
            spec: spec.clone(),
            samples_wanted,
            ramp_ns: nanos(ramp_time.saturating_add(spec.ramp)),
            first_io_ns: None,
            last_sample: None,
            // Grown as samples come (one a second), never sized by `ss_dur` up front.
            iops: VecDeque::new(),
            bw: VecDeque::new(),
            verdict: Verdict::default(),
            attained: false,
        }
    }

    /// Look at the unit's totals at `now_ns`; true once steady state is attained.
    pub(super) fn observe(&mut self, now_ns: u64, totals: Totals) -> bool {
        if self.attained {
            return true;
        }
        if totals.ios == 0 {
            return false;
        }
        let first_io_ns = *self.first_io_ns.get_or_insert(now_ns);
        let Some((then_ns, then)) = self.last_sample else {
            if now_ns >= first_io_ns.saturating_add(self.ramp_ns) {
                self.last_sample = Some((now_ns, totals));
            }
            return false;
        };
        let elapsed_ns = now_ns - then_ns;
        if elapsed_ns < SAMPLE_NS {
            return false;
        }
        let per_sec =
            |delta: u64| (u128::from(delta) * 1_000_000_000 / u128::from(elapsed_ns)) as u64;
        self.push(
            per_sec(totals.ios - then.ios),
            per_sec(totals.bytes - then.bytes),
        );
        self.last_sample = Some((now_ns, totals));
        if self.iops.len() == self.samples_wanted {
            self.verdict = judge(&self.spec, self.judged());
            self.attained = self.verdict.value <= self.spec.limit;
        }
        self.attained
    }

    fn push(&mut self, iops: u64, bw: u64) {
        if self.iops.len() == self.samples_wanted {
            self.iops.pop_front();
            self.bw.pop_front();
        }
        self.iops.push_back(iops);
        self.bw.push_back(bw);
    }

    fn judged(&self) -> &VecDeque<u64> {
        match self.spec.metric {
            SteadyMetric::Iops => &self.iops,
            SteadyMetric::Bw => &self.bw,
        }
    }

    pub(super) fn report(&self) -> SteadyStateReport {
        let metric = match self.spec.metric {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Bw => "bw",
        };
        SteadyStateReport {
            criterion: format!("{metric}{}", if self.spec.slope { "_slope" } else { "" }),
            limit: self.spec.limit,
            limit_is_percent: self.spec.limit_is_percent,
            duration_s: self.samples_wanted as u64,
            attained: self.attained,
            value: self.verdict.value,
            max_deviation: self.verdict.max_deviation,
            slope: self.verdict.slope,
            iops_samples: self.iops.iter().copied().collect(),
            bw_samples_bytes_per_sec: self.bw.iter().copied().collect(),
        }
    }
}

/// Judge a full window of samples against the spec's criterion.
fn judge(spec: &SteadyStateSpec, samples: &VecDeque<u64>) -> Verdict {
    let n = samples.len() as f64;
    let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / n;
    let (max_deviation, slope) = if spec.slope {
        (0.0, least_squares_slope(samples))
    } else {
        let deviation = samples
            .iter()
            .map(|&s| (s as f64 - mean).abs())
            .fold(0.0, f64::max);
        (deviation, 0.0)
    };
    let size = max_deviation.max(slope.abs());
    let value = match (spec.limit_is_percent, mean > 0.0) {
        (false, _) => size,
        (true, true) => size / mean * 100.0,
        // Nothing moved: no percentage of nothing is steady.
        (true, false) => f64::INFINITY,
    };
    Verdict {
        value,
        max_deviation,
        slope,
    }
}

/// Slope of the least-squares line through (0, y0), (1, y1), …: change per sample.
fn least_squares_slope(samples: &VecDeque<u64>) -> f64 {
    let n = samples.len() as f64;
    if samples.len() < 2 {
        return 0.0;
    }
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = samples.iter().map(|&y| y as f64).sum::<f64>() / n;
    let (covariance, variance) = samples
        .iter()
        .enumerate()
        .fold((0.0, 0.0), |(c, v), (x, &y)| {
            let dx = x as f64 - mean_x;
            (c + dx * (y as f64 - mean_y), v + dx * dx)
        });
    covariance / variance
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = SAMPLE_NS;

    fn spec(metric: SteadyMetric, slope: bool, limit: f64, percent: bool) -> SteadyStateSpec {
        SteadyStateSpec {
            metric,
            slope,
            limit,
            limit_is_percent: percent,
            duration: Duration::from_secs(3),
            ramp: Duration::from_secs(1),
        }
    }

    /// Feed one sample a second with these IOPS (4 KiB each) after a 1 s ramp;
    /// the result of each observation.
    fn feed(ss: &mut SteadyState, iops: &[u64]) -> Vec<bool> {
        let mut totals = Totals {
            ios: 1,
            bytes: 4096,
        };
        ss.observe(1, totals);
        ss.observe(S + 1, totals);
        iops.iter()
            .enumerate()
            .map(|(i, &n)| {
                totals.ios += n;
                totals.bytes += n * 4096;
                ss.observe((i as u64 + 2) * S + 1, totals)
            })
            .collect()
    }

    #[test]
    fn a_window_of_50000_days_holds_only_the_samples_taken() {
        let mut long = spec(SteadyMetric::Iops, false, 5.0, true);
        (long.duration, long.ramp) = (Duration::from_secs(50_000 * 86_400), Duration::MAX);
        let mut ss = SteadyState::new(&long, Duration::from_secs(50_000 * 86_400));
        assert_eq!(ss.samples_wanted, 4_320_000_000);
        assert!(ss.iops.capacity() < 64 && ss.bw.capacity() < 64);
        assert!(!ss.observe(
            1,
            Totals {
                ios: 1,
                bytes: 4096
            }
        ));
        assert!(!ss.observe(
            u64::MAX,
            Totals {
                ios: 2,
                bytes: 8192
            }
        ));
    }

    #[test]
    fn deviation_from_the_mean_within_a_percentage_ends_the_job() {
        let mut ss = SteadyState::new(&spec(SteadyMetric::Iops, false, 5.0, true), Duration::ZERO);
        // 1000 is far from the rest; once it leaves the 3 s window the rest are within 5%.
        let verdicts = feed(&mut ss, &[1000, 2000, 2050, 1980]);
        assert_eq!(verdicts, [false, false, false, true]);
        let report = ss.report();
        assert_eq!(report.iops_samples, [2000, 2050, 1980]);
        assert_eq!(
            report.bw_samples_bytes_per_sec,
            [2000 * 4096, 2050 * 4096, 1980 * 4096]
        );
        // mean 2010: the largest deviation is 40, 1.99% of it.
        assert_eq!(report.max_deviation, 40.0);
        assert!((report.value - 1.990).abs() < 0.001, "{report:?}");
        assert_eq!(report.slope, 0.0);
        assert!(report.attained);
    }

    #[test]
    fn slope_criteria_judge_the_least_squares_line() {
        let mut ss = SteadyState::new(&spec(SteadyMetric::Iops, true, 1.0, true), Duration::ZERO);
        // Rising by 100 a second over a mean of 2000: a 5% slope, not steady.
        assert_eq!(feed(&mut ss, &[1900, 2000, 2100]), [false; 3]);
        let report = ss.report();
        assert!((report.slope - 100.0).abs() < 1e-9);
        assert!((report.value - 5.0).abs() < 1e-9);
        assert!(!report.attained);
        // Flat but noisy: the slope is small even where the deviation is not.
        let mut ss = SteadyState::new(&spec(SteadyMetric::Iops, true, 1.0, true), Duration::ZERO);
        assert_eq!(feed(&mut ss, &[1800, 2200, 1800]), [false, false, true]);
    }

    #[test]
    fn absolute_limits_are_in_the_metrics_unit() {
        let mut ss = SteadyState::new(
            &spec(SteadyMetric::Bw, false, 409_600.0, false),
            Duration::ZERO,
        );
        // ±100 IOPS of 4 KiB = ±409600 B/s around the mean: just within.
        assert_eq!(feed(&mut ss, &[1900, 2100, 2000]), [false, false, true]);
        let report = ss.report();
        assert_eq!(report.criterion, "bw");
        assert_eq!(report.value, 409_600.0);
    }

    #[test]
    fn samples_wait_for_the_first_io_and_both_ramps() {
        let mut ss = SteadyState::new(
            &spec(SteadyMetric::Iops, false, 50.0, true),
            Duration::from_secs(2),
        );
        let totals = Totals {
            ios: 10,
            bytes: 40960,
        };
        // Nothing done yet: the clock has not started.
        assert!(!ss.observe(5 * S, Totals::default()));
        ss.observe(10 * S, totals);
        // ramp_time 2 s + ss_ramp 1 s after the first I/O at 10 s.
        ss.observe(12 * S, totals);
        assert!(ss.last_sample.is_none());
        ss.observe(13 * S, totals);
        assert_eq!(ss.last_sample, Some((13 * S, totals)));
        // Less than a second later: no sample.
        ss.observe(13 * S + S / 2, totals);
        assert!(ss.iops.is_empty());
    }

    #[test]
    fn a_rate_of_nothing_is_never_steady_in_percent() {
        let mut ss = SteadyState::new(&spec(SteadyMetric::Iops, false, 5.0, true), Duration::ZERO);
        assert_eq!(feed(&mut ss, &[0, 0, 0]), [false; 3]);
    }
}
