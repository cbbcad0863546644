//! Run control beyond time and size: when a job stops early (`exitall`, `max_latency`,
//! `rate_min`, `steadystate`), waits (`wait_for`), and the queue depth `latency_target`
//! searches for.

use super::*;
use crate::debug::{self, DebugType};
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::{Chosen, Layers};
use crate::job::options::opt;
use crate::units;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What `exit_what` stops when a job of a run with `exitall` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ExitWhat {
    /// The other jobs of the running group (fio's `group`, and `stonewall`: only one
    /// group runs at a time here, so both mean the same).
    Group,
    /// The running group and every group after it.
    All,
}

choice_words!(ExitWhat {
    "group" => ExitWhat::Group,
    "stonewall" => ExitWhat::Group,
    "all" => ExitWhat::All,
});

/// Run control beyond time and size: when a job stops early, waits, or fails on
/// being too slow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunControlSpec {
    /// `exitall`: when this job ends, stop the others (fio applies it to the whole
    /// run once any job sets it; the runner does the same).
    pub exitall: bool,
    pub exit_what: ExitWhat,
    /// `wait_for`: the name of an earlier job this one starts after.
    pub wait_for: Option<String>,
    /// `max_latency` per direction, ns (0 = none): a slower I/O fails the job.
    pub max_latency_ns: [u64; DDIRS],
    /// `rate_min` (bytes/s) and `rate_iops_min` per direction, 0 = none: a job that
    /// falls below over a `rate_cycle` window fails.
    pub rate_min: [u64; DDIRS],
    pub rate_iops_min: [u64; DDIRS],
    pub rate_cycle: Duration,
    /// `steadystate` with `ss_dur`: the job ends once its rate holds steady.
    #[serde(default)]
    pub steadystate: Option<SteadyStateSpec>,
    /// `latency_target`: search for the deepest queue that meets a latency.
    #[serde(default)]
    pub latency_target: Option<LatencyTargetSpec>,
}

impl RunControlSpec {
    /// True when a minimum rate is enforced.
    pub(crate) fn has_rate_min(&self) -> bool {
        self.rate_min
            .iter()
            .chain(&self.rate_iops_min)
            .any(|&r| r > 0)
    }
}

/// What fio's `steadystate=` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum SteadyMetric {
    Iops,
    /// Bytes per second.
    Bw,
}

/// The `--debug=parse` line for a `steadystate=` limit, worded as fio words it.
fn threshold_trace(metric: SteadyMetric, limit: f64, limit_is_percent: bool) -> String {
    match (limit_is_percent, metric) {
        (true, _) => format!("set steady state threshold to {limit:.6}%"),
        (false, SteadyMetric::Iops) => format!("set steady state IOPS threshold to {limit:.6}"),
        (false, SteadyMetric::Bw) => format!("set steady state BW threshold to {limit}"),
    }
}

/// A `steadystate=` word: the metric sampled, and whether the slope of the samples is
/// judged rather than their deviation from the mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SteadyCriterion {
    metric: SteadyMetric,
    slope: bool,
}

choice_words!(SteadyCriterion {
    "iops" => SteadyCriterion { metric: SteadyMetric::Iops, slope: false },
    "iops_slope" => SteadyCriterion { metric: SteadyMetric::Iops, slope: true },
    "bw" => SteadyCriterion { metric: SteadyMetric::Bw, slope: false },
    "bw_slope" => SteadyCriterion { metric: SteadyMetric::Bw, slope: true },
});

/// fio's `steadystate=METRIC[_slope]:LIMIT[%]`, `ss_dur` and `ss_ramp`: once per
/// second the job's rate (both directions together) is sampled; the job ends when
/// the last `duration` of samples meets the criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SteadyStateSpec {
    pub metric: SteadyMetric,
    /// Judge the least-squares slope of the samples; else their largest
    /// deviation from the mean.
    pub slope: bool,
    pub limit: f64,
    /// The limit is a percentage of the mean rather than in the metric's unit.
    pub limit_is_percent: bool,
    /// `ss_dur`: the window judged, whole seconds (one sample each).
    pub duration: Duration,
    /// `ss_ramp`: time after `ramp_time` before the first sample.
    pub ramp: Duration,
}

/// The longest `ss_dur`: its samples are kept and reported, one a second.
const MAX_STEADY_WINDOW: Duration = Duration::from_secs(86_400);

/// fio's `latency_target`, `latency_window`, `latency_percentile`, `latency_run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencyTargetSpec {
    pub target_ns: u64,
    /// Each queue depth is tried for one window.
    pub window: Duration,
    /// The share of a window's I/Os (per cent) that must finish within the target.
    pub percentile: f64,
    /// `latency_run`: keep adjusting the depth for the whole run instead of
    /// ending the job once the search settles.
    pub keep_adjusting: bool,
}

impl Layers<'_> {
    /// `pacing` holds the rate caps the minimum rates must stay under.
    pub(crate) fn control(&self, pacing: &PacingSpec) -> Result<RunControlSpec, JobError> {
        let exit_what = self.choice(opt::EXIT_WHAT)?;
        let max_latency = self.per_direction(opt::MAX_LATENCY, |t| {
            units::parse_time(t, units::TimeUnit::Micros)
        })?;
        let rate_min = self
            .per_direction(opt::RATE_MIN, |t| units::parse_size(t, self.kb_base))?
            .map(Option::unwrap_or_default);
        let rate_iops_min = self
            .per_direction(opt::RATE_IOPS_MIN, |t| units::parse_count(t, self.kb_base))?
            .map(Option::unwrap_or_default);
        self.check_rate_min_below_rate(pacing, rate_min, rate_iops_min)?;
        let rate_cycle_ms = self.count(opt::RATE_CYCLE)?.unwrap_or_default();
        if rate_cycle_ms == 0 {
            let setting = self.given(opt::RATE_CYCLE).expect("the default is not 0");
            return Err(setting.invalid("must be at least 1 ms"));
        }
        Ok(RunControlSpec {
            exitall: self.bool(opt::EXITALL)?,
            exit_what,
            wait_for: self
                .given(opt::WAIT_FOR)
                .map(|s| s.text.trim().to_string())
                .filter(|name| !name.is_empty()),
            max_latency_ns: max_latency
                .map(|d| d.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))),
            rate_min,
            rate_iops_min,
            rate_cycle: Duration::from_millis(rate_cycle_ms),
            steadystate: self.steadystate()?,
            latency_target: self.latency_target()?,
        })
    }

    /// `steadystate` is off unless `ss_dur` is set.
    fn steadystate(&self) -> Result<Option<SteadyStateSpec>, JobError> {
        let duration = self.time(opt::STEADYSTATE_DURATION)?.unwrap_or_default();
        if duration.is_zero() {
            return Ok(None);
        }
        let Chosen {
            value: criterion,
            word,
            parameter: limit,
            setting,
        } = self.choice_with_parameter::<SteadyCriterion>(opt::STEADYSTATE)?;
        let limit = limit.unwrap_or_default().trim();
        let (number, limit_is_percent) = match units::strip_percent_sign(limit) {
            Some(number) => (number, true),
            None => (limit, false),
        };
        let limit = number
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|l| l.is_finite() && *l >= 0.0)
            .ok_or_else(|| {
                setting.invalid(format!(
                    "{word} needs a limit: ':{number}' is not a number of 0 or more"
                ))
            })?;
        debug::trace(
            DebugType::Parse,
            threshold_trace(criterion.metric, limit, limit_is_percent),
        );
        if duration > MAX_STEADY_WINDOW {
            let setting = self
                .given(opt::STEADYSTATE_DURATION)
                .expect("a window was given");
            return Err(setting.invalid_with_hint(
                "a window of more than 1 day is not kept",
                "its samples, one a second, are kept and reported: use at most 1d",
            ));
        }
        // One sample per second: a window shorter than a second holds none.
        let duration = Duration::from_secs(duration.as_secs().max(1));
        Ok(Some(SteadyStateSpec {
            metric: criterion.metric,
            slope: criterion.slope,
            limit,
            limit_is_percent,
            duration,
            ramp: self.time(opt::STEADYSTATE_RAMP_TIME)?.unwrap_or_default(),
        }))
    }

    /// `latency_target` is off unless set to more than 0; it needs `latency_window`.
    fn latency_target(&self) -> Result<Option<LatencyTargetSpec>, JobError> {
        let target = self.time(opt::LATENCY_TARGET)?.unwrap_or_default();
        if target.is_zero() {
            return Ok(None);
        }
        let window = self.time(opt::LATENCY_WINDOW)?.unwrap_or_default();
        if window.is_zero() {
            return Err(self.problem(
                "latency_target needs latency_window, the time each queue depth is tried (e.g. latency_window=1s)",
            ));
        }
        let percentile = self
            .setting(opt::LATENCY_PERCENTILE)
            .expect("latency_percentile has a default");
        let percentile_value = percentile
            .text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| percentile.invalid("must be a number above 0 and at most 100"))?;
        Ok(Some(LatencyTargetSpec {
            target_ns: u64::try_from(target.as_nanos()).unwrap_or(u64::MAX),
            window,
            percentile: percentile_value,
            keep_adjusting: self.bool(opt::LATENCY_RUN)?,
        }))
    }

    /// fio refuses a minimum rate above the rate cap of the same direction.
    fn check_rate_min_below_rate(
        &self,
        pacing: &PacingSpec,
        rate_min: [u64; DDIRS],
        rate_iops_min: [u64; DDIRS],
    ) -> Result<(), JobError> {
        for ddir in Ddir::ALL {
            let d = ddir.index();
            // a cap of 0 is no cap
            let above = |cap: u64, min: u64| cap > 0 && min > cap;
            if above(pacing.rate[d], rate_min[d]) || above(pacing.rate_iops[d], rate_iops_min[d]) {
                return Err(self.problem(format!(
                    "the minimum {} rate is above its rate cap",
                    ddir.name()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job};

    #[test]
    fn steadystate_thresholds_are_traced_in_fios_words() {
        let cases = [
            (
                SteadyMetric::Iops,
                10.0,
                false,
                "set steady state IOPS threshold to 10.000000",
            ),
            (
                SteadyMetric::Iops,
                0.1,
                true,
                "set steady state threshold to 0.100000%",
            ),
            (
                SteadyMetric::Bw,
                10.0,
                true,
                "set steady state threshold to 10.000000%",
            ),
            (
                SteadyMetric::Bw,
                12.0,
                false,
                "set steady state BW threshold to 12",
            ),
        ];
        for (metric, limit, percent, expected) in cases {
            assert_eq!(
                threshold_trace(metric, limit, percent),
                expected,
                "expected fio's wording for {metric:?} {limit} (percent: {percent})"
            );
        }
    }

    #[test]
    fn steadystate_needs_ss_dur_and_parses_its_criterion() {
        assert_eq!(job(&["--steadystate=iops:5%"]).control.steadystate, None);
        let ss = job(&["--ss=bw_slope:2000000", "--ss_dur=30s", "--ss_ramp=5"])
            .control
            .steadystate
            .unwrap();
        assert_eq!(
            ss,
            SteadyStateSpec {
                metric: SteadyMetric::Bw,
                slope: true,
                limit: 2e6,
                limit_is_percent: false,
                duration: Duration::from_secs(30),
                ramp: Duration::from_secs(5),
            }
        );
        let ss = job(&["--ss_dur=500ms"]).control.steadystate.unwrap();
        assert_eq!((ss.metric, ss.slope), (SteadyMetric::Iops, true));
        assert_eq!((ss.limit, ss.limit_is_percent), (0.01, true));
        assert_eq!(ss.duration, Duration::from_secs(1));
        let escaped = job(&["--ss=iops:50%%", "--ss_dur=5"]).control.steadystate;
        let escaped = escaped.unwrap();
        assert_eq!((escaped.limit, escaped.limit_is_percent), (50.0, true));
        assert_eq!(
            job(&["--ss_dur=1d"]).control.steadystate.unwrap().duration,
            MAX_STEADY_WINDOW
        );
        let e = error(&["--name=t", "--size=1m", "--ss_dur=50000d"]);
        assert!(
            e.ends_with(
                "steadystate_duration=50000d: a window of more than 1 day is not kept \
                 (its samples, one a second, are kept and reported: use at most 1d)"
            ),
            "{e}"
        );
        for bad in ["--ss=iops", "--ss=iops:x%", "--ss=iops:-1", "--ss=lat:5%"] {
            let e = error(&["--name=t", "--size=1m", "--ss_dur=5", bad]);
            assert!(e.contains("steadystate"), "{bad}: {e}");
        }
    }

    #[test]
    fn latency_target_needs_a_window_and_a_percentile_in_range() {
        assert_eq!(job(&[]).control.latency_target, None);
        let target = job(&[
            "--latency_target=2ms",
            "--latency_window=500ms",
            "--latency_percentile=99.9",
            "--latency_run=1",
        ])
        .control
        .latency_target
        .unwrap();
        assert_eq!(
            target,
            LatencyTargetSpec {
                target_ns: 2_000_000,
                window: Duration::from_millis(500),
                percentile: 99.9,
                keep_adjusting: true,
            }
        );
        // A bare number is in microseconds.
        let target = job(&["--latency_target=250", "--latency_window=1s"]).control;
        assert_eq!(target.latency_target.unwrap().target_ns, 250_000);
        let e = error(&["--name=t", "--size=1m", "--latency_target=2ms"]);
        assert!(e.contains("needs latency_window"), "{e}");
        for bad in ["0", "101", "x"] {
            let arg = format!("--latency_percentile={bad}");
            let args = ["--name=t", "--size=1m", "--latency_target=1ms"];
            let e = error(&[&args[..], &["--latency_window=1s", &arg]].concat());
            assert!(e.contains("latency_percentile"), "{bad}: {e}");
        }
    }

    #[test]
    fn run_control_options() {
        let c = job(&[]).control;
        assert!(!c.exitall && c.exit_what == ExitWhat::Group && c.wait_for.is_none());
        assert_eq!(
            (c.max_latency_ns, c.rate_cycle),
            ([0; 3], Duration::from_secs(1))
        );
        assert_eq!(job(&[]).queue.refill_depth, 1);
        let spec = job(&[
            "--exitall",
            "--exit_what=all",
            "--max_latency=250,2ms",
            "--rate_min=1m,",
            "--rate_iops_min=,50",
            "--rate_cycle=250",
            "--iodepth=32",
            "--iodepth_low=8",
            "--ioengine=io_uring",
        ]);
        assert_eq!(spec.queue.refill_depth, 8);
        let c = spec.control;
        assert!(c.exitall && c.exit_what == ExitWhat::All);
        assert_eq!(c.max_latency_ns, [250_000, 2_000_000, 2_000_000]);
        assert_eq!(
            (c.rate_min, c.rate_iops_min),
            ([1 << 20, 0, 0], [0, 50, 50])
        );
        assert_eq!(c.rate_cycle, Duration::from_millis(250));
        // 0 or deeper than the queue: keep it full, as fio.
        for low in ["--iodepth_low=0", "--iodepth_low=64"] {
            assert_eq!(
                job(&["--iodepth=16", "--ioengine=libaio", low])
                    .queue
                    .refill_depth,
                16
            );
        }
        assert_eq!(
            job(&["--exit_what=stonewall"]).control.exit_what,
            ExitWhat::Group
        );
        assert!(
            error(&["--name=t", "--size=1m", "--rate=1m", "--rate_min=2m"])
                .contains("the minimum read rate is above its rate cap")
        );
        assert!(error(&["--name=t", "--size=1m", "--rate_cycle=0"]).contains("at least 1 ms"));
        assert!(
            error(&["--name=a", "--size=1m", "--wait_for=b", "--name=b"])
                .contains("names no earlier job")
        );
    }
}
