//! Per-interval rate samples (fio's `bw` and `iops` lines) and their summaries.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::job::spec::{LogSpec, DDIRS};
use crate::model::SampleSummary;
use crate::stats::WorkerStats;

/// One direction's rates: one sample per sampling interval, or fio's per-I/O samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RateSeries {
    /// Bandwidth per interval, bytes/s.
    pub bw_bytes_per_sec: Vec<f64>,
    /// Completed I/Os per interval, per second.
    pub iops: Vec<f64>,
    /// Bandwidth sampled per I/O (`Sampling::PerIo`), in place of the intervals:
    /// running sums, as a run can have millions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_per_io: Option<Running>,
    /// IOPS sampled per I/O: 1 each, as fio counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_per_io: Option<Running>,
}

impl RateSeries {
    #[cfg(test)]
    /// Adds the sample for one interval of `interval_ns` in which `bytes`
    /// and `ios` completed. A zero-length interval carries no rate and is skipped.
    pub(crate) fn push_interval(&mut self, bytes: u64, ios: u64, interval_ns: u64) {
        if let Some(seconds) = seconds(interval_ns) {
            self.bw_bytes_per_sec.push(bytes as f64 / seconds);
            self.iops.push(ios as f64 / seconds);
        }
    }

    pub(crate) fn bw_summary(&self) -> SampleSummary {
        match &self.bw_per_io {
            Some(running) => running.summary(),
            None => summarize(&self.bw_bytes_per_sec),
        }
    }

    pub(crate) fn iops_summary(&self) -> SampleSummary {
        match &self.iops_per_io {
            Some(running) => running.summary(),
            None => summarize(&self.iops),
        }
    }

    /// The group's series for group_reporting: sample `i` is the sum of every
    /// worker's sample `i`. Samples are taken on common ticks, so a series
    /// that is shorter belongs to a worker that had already finished and
    /// contributes nothing to the later samples. Per-I/O samples have no
    /// common ticks: their minimums, maximums, means and counts are added, as fio does.
    pub(crate) fn sum_of(series: &[&RateSeries]) -> RateSeries {
        let per_io = |of: fn(&RateSeries) -> Option<&Running>| {
            series
                .iter()
                .filter_map(|s| of(s))
                .fold(None, |sum: Option<Running>, r| {
                    Some(sum.map_or(*r, |sum| sum.plus(r)))
                })
        };
        RateSeries {
            bw_bytes_per_sec: sum_samplewise(series.iter().map(|s| s.bw_bytes_per_sec.as_slice())),
            iops: sum_samplewise(series.iter().map(|s| s.iops.as_slice())),
            bw_per_io: per_io(|s| s.bw_per_io.as_ref()),
            iops_per_io: per_io(|s| s.iops_per_io.as_ref()),
        }
    }
}

fn seconds(interval_ns: u64) -> Option<f64> {
    (interval_ns > 0).then(|| interval_ns as f64 / 1e9)
}

/// fio's running statistics of one kind of sample (its `io_stat`): no sample is kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Running {
    min: f64,
    max: f64,
    mean: f64,
    /// Sum of squared deviations from the mean (Welford's method, as fio).
    squares: f64,
    samples: u64,
}

impl Running {
    #[inline]
    fn add(&mut self, value: f64) {
        if self.samples == 0 {
            (self.min, self.max) = (value, value);
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        self.samples += 1;
        let delta = value - self.mean;
        self.mean += delta / self.samples as f64;
        self.squares += delta * (value - self.mean);
    }

    /// fio's group sum of two workers' statistics: each figure added.
    fn plus(self, other: &Running) -> Running {
        Running {
            min: self.min + other.min,
            max: self.max + other.max,
            mean: self.mean + other.mean,
            squares: self.squares + other.squares,
            samples: self.samples + other.samples,
        }
    }

    fn summary(&self) -> SampleSummary {
        let stddev = if self.samples > 1 {
            (self.squares / (self.samples - 1) as f64).sqrt()
        } else {
            0.0
        };
        SampleSummary {
            min: self.min,
            max: self.max,
            mean: self.mean,
            stddev,
            samples: self.samples,
        }
    }
}

/// How the report samples bandwidth or IOPS (fio's `bw_avg_time`, `iops_avg_time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sampling {
    /// One sample per interval of this many ns.
    Every(u64),
    /// One sample per I/O.
    PerIo,
}

impl Sampling {
    /// fio's: every `default` unless the job writes this log (`logged`); then its
    /// averaging window (fio sets `bw_avg_time` to `log_avg_msec`), and every I/O
    /// when the log has a line per I/O or is stored compressed (its `per_unit_log`).
    pub(crate) fn of(logged: bool, logs: &LogSpec, default: Duration) -> Sampling {
        match logged {
            false => Sampling::Every(default.as_nanos() as u64),
            true if logs.per_io_rates() => Sampling::PerIo,
            true => Sampling::Every(logs.avg_msec * 1_000_000),
        }
    }
}

/// How much earlier than a full interval an interval may end and still be a
/// sample (fio allows its helper thread the same millisecond).
const SLACK_NS: u64 = 1_000_000;

/// The intervals of one kind of sample, bandwidth or IOPS. They keep to a grid
/// from the start, as fio's helper thread does (and the logs' windows): a sample
/// taken late does not push every later interval's end back.
#[derive(Debug, Clone)]
struct Track {
    /// 0 when sampled per I/O.
    interval_ns: u64,
    /// Where the open interval started on the grid.
    start_ns: u64,
    /// When the last sample was taken: each rate is over its real length.
    last_ns: u64,
    /// The running totals (bytes or I/Os) at the last sample.
    last: [u64; DDIRS],
    /// Where the job's `runtime` ends: fio stops the job there, before its helper
    /// thread samples an interval ending then or later.
    until_ns: u64,
}

impl Track {
    fn new(sampling: Sampling, start_ns: u64, runtime_ns: Option<u64>) -> Track {
        let interval_ns = match sampling {
            Sampling::Every(ns) => ns.max(1),
            Sampling::PerIo => 0,
        };
        let mut track = Track {
            interval_ns,
            start_ns,
            last_ns: start_ns,
            last: [0; DDIRS],
            until_ns: u64::MAX,
        };
        track.restart(start_ns, runtime_ns);
        track
    }

    /// Start again at `start_ns` from zero totals, the runtime counted from there.
    fn restart(&mut self, start_ns: u64, runtime_ns: Option<u64>) {
        (self.start_ns, self.last_ns, self.last) = (start_ns, start_ns, [0; DDIRS]);
        self.until_ns = runtime_ns.map_or(u64::MAX, |r| start_ns.saturating_add(r));
    }

    #[inline]
    fn due(&self, now_ns: u64) -> bool {
        self.interval_ns > 0 && now_ns >= self.start_ns.saturating_add(self.interval_ns)
    }

    /// Close the interval at `now_ns` if it reached (nearly) its end on the grid:
    /// per direction used, the rate of what moved since the last sample
    /// (`totals`), if anything did.
    fn take(
        &mut self,
        now_ns: u64,
        totals: [u64; DDIRS],
        used: [bool; DDIRS],
    ) -> [Option<f64>; DDIRS] {
        let mut rates = [None; DDIRS];
        let slack = SLACK_NS.min(self.interval_ns / 2);
        let end = self.start_ns.saturating_add(self.interval_ns);
        if self.interval_ns == 0 || now_ns + slack < end || end >= self.until_ns {
            return rates;
        }
        let elapsed = now_ns.saturating_sub(self.last_ns);
        for d in 0..DDIRS {
            let moved = totals[d] - self.last[d];
            // fio: "No entries for interval", no sample.
            if used[d] && moved > 0 {
                rates[d] = seconds(elapsed).map(|s| moved as f64 / s);
            }
            self.last[d] = totals[d];
        }
        self.last_ns = now_ns;
        // The next interval starts at the last grid point reached.
        let passed = (now_ns.max(end) - self.start_ns) / self.interval_ns;
        self.start_ns += passed * self.interval_ns;
        rates
    }
}

/// Makes one worker's bandwidth and IOPS samples from its running totals; the
/// worker calls it at completion time, so no other thread reads its state.
/// Every sample is what moved in one (nearly) full interval over that
/// interval's real length: an interval that ends early, like the partial one
/// at the end of a run, is not a sample (its few completions over a short time
/// would make an impossible rate), and one in which a direction moved nothing
/// is no sample of it, as in fio. It is no thread: the one `Sampler`, which
/// watches the system, is `observe::sampler::Sampler`.
#[derive(Debug, Clone)]
pub(crate) struct IntervalSampler {
    bw: Track,
    iops: Track,
    rates: [RateSeries; DDIRS],
    /// The job's `runtime`, when it has one.
    planned_ns: Option<u64>,
    /// Bandwidth or IOPS sampled per I/O: `record_io` has work to do.
    per_io: bool,
}

/// The most samples a rate series reserves room for before the first.
const MAX_RESERVED: usize = 7200;

impl IntervalSampler {
    /// Samples from `start_ns`, with room for the samples of `planned_ns` when known.
    pub(crate) fn new(
        bw: Sampling,
        iops: Sampling,
        start_ns: u64,
        planned_ns: Option<u64>,
    ) -> Self {
        // Reserved up to an hour of 500 ms windows: past that the vectors grow as
        // they fill (runtime=50000d must not allocate its whole plan up front).
        let room = |sampling| match (sampling, planned_ns) {
            (Sampling::Every(ns), Some(planned)) => {
                ((planned / ns.max(1)) as usize + 2).min(MAX_RESERVED)
            }
            (Sampling::Every(_), None) => 64,
            (Sampling::PerIo, _) => 0,
        };
        let series = || RateSeries {
            bw_bytes_per_sec: Vec::with_capacity(room(bw)),
            iops: Vec::with_capacity(room(iops)),
            ..RateSeries::default()
        };
        Self {
            bw: Track::new(bw, start_ns, planned_ns),
            iops: Track::new(iops, start_ns, planned_ns),
            rates: [series(), series(), series()],
            planned_ns,
            per_io: matches!(bw, Sampling::PerIo) || matches!(iops, Sampling::PerIo),
        }
    }

    /// Forget every sample and start again at `start_ns` from zero totals (the ramp ended).
    pub(crate) fn restart(&mut self, start_ns: u64) {
        for track in [&mut self.bw, &mut self.iops] {
            track.restart(start_ns, self.planned_ns);
        }
        for series in &mut self.rates {
            series.bw_bytes_per_sec.clear();
            series.iops.clear();
            series.bw_per_io = None;
            series.iops_per_io = None;
        }
    }

    /// A full interval has passed since the last sample.
    #[inline]
    pub(crate) fn due(&self, now_ns: u64) -> bool {
        self.bw.due(now_ns) || self.iops.due(now_ns)
    }

    /// One I/O of direction `ddir` moved `bytes` in `clat_ns`: a sample of each
    /// kind sampled per I/O. fio's per-I/O bandwidth is in bytes per ms of the
    /// completion latency, which it shows where KiB/s go: kept so, ×1024 here.
    #[inline]
    pub(crate) fn record_io(&mut self, ddir: usize, bytes: u64, clat_ns: u64) {
        if self.per_io {
            self.record_per_io(ddir, bytes, clat_ns);
        }
    }

    #[cold]
    fn record_per_io(&mut self, ddir: usize, bytes: u64, clat_ns: u64) {
        if self.bw.interval_ns == 0 {
            let per_ms = (u128::from(bytes) * 1_000_000)
                .checked_div(u128::from(clat_ns))
                .unwrap_or(0);
            let running = self.rates[ddir]
                .bw_per_io
                .get_or_insert_with(Running::default);
            running.add(per_ms as f64 * 1024.0);
        }
        if self.iops.interval_ns == 0 {
            let running = self.rates[ddir]
                .iops_per_io
                .get_or_insert_with(Running::default);
            running.add(1.0);
        }
    }

    /// Close the intervals ending at `now_ns`, given the running totals, that
    /// lasted (nearly) a full interval; a shorter one is left open.
    pub(crate) fn take(&mut self, now_ns: u64, stats: &WorkerStats, used: [bool; DDIRS]) {
        let bytes = [0, 1, 2].map(|d| stats.dirs[d].bytes);
        let ios = [0, 1, 2].map(|d| stats.dirs[d].ios);
        let bw = self.bw.take(now_ns, bytes, used);
        let iops = self.iops.take(now_ns, ios, used);
        for (d, series) in self.rates.iter_mut().enumerate() {
            series.bw_bytes_per_sec.extend(bw[d]);
            series.iops.extend(iops[d]);
        }
    }

    /// The samples so far, [read, write, trim].
    pub(crate) fn rates(&self) -> &[RateSeries; DDIRS] {
        &self.rates
    }

    /// Hand over the samples of the run ending at `end_ns`: the last interval
    /// is one only when it lasted (nearly) a full interval.
    pub(crate) fn finish(
        &mut self,
        end_ns: u64,
        stats: &WorkerStats,
        used: [bool; DDIRS],
    ) -> [RateSeries; DDIRS] {
        self.take(end_ns, stats, used);
        std::mem::take(&mut self.rates)
    }
}

/// Sums sample by sample; the result is as long as the longest input.
fn sum_samplewise<'a>(series: impl Iterator<Item = &'a [f64]>) -> Vec<f64> {
    let mut total: Vec<f64> = Vec::new();
    for samples in series {
        if samples.len() > total.len() {
            total.resize(samples.len(), 0.0);
        }
        for (sum, sample) in total.iter_mut().zip(samples) {
            *sum += sample;
        }
    }
    total
}

/// min, max, mean and sample (n - 1) standard deviation; all zero when empty.
pub(crate) fn summarize(samples: &[f64]) -> SampleSummary {
    if samples.is_empty() {
        return SampleSummary::default();
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let stddev = if samples.len() < 2 {
        0.0
    } else {
        let squared_deviations: f64 = samples.iter().map(|s| (s - mean).powi(2)).sum();
        (squared_deviations / (n - 1.0)).sqrt()
    };
    SampleSummary {
        min: samples.iter().copied().fold(f64::INFINITY, f64::min),
        max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean,
        stddev,
        samples: samples.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_reserved_by_the_runtime_asked_for() {
        // runtime=50000d: 8.6e9 windows of 500 ms (69 GB of f64s) planned.
        let days = 50_000 * 86_400 * 1_000_000_000u64;
        let sampler = IntervalSampler::new(HALF_SECOND, HALF_SECOND, 0, Some(days));
        for series in &sampler.rates {
            assert!(series.bw_bytes_per_sec.capacity() <= MAX_RESERVED);
            assert!(series.iops.capacity() <= MAX_RESERVED);
        }
    }

    #[test]
    fn summary_uses_sample_stddev() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((s.min, s.max, s.mean, s.samples), (2.0, 9.0, 5.0, 8));
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(summarize(&[3.0]).stddev, 0.0);
        assert_eq!(summarize(&[]), SampleSummary::default());
    }

    #[test]
    fn push_interval_converts_to_per_second() {
        let mut series = RateSeries::default();
        series.push_interval(4096 * 50, 50, 500_000_000);
        series.push_interval(1, 1, 0);
        assert_eq!(series.bw_bytes_per_sec, vec![409_600.0]);
        assert_eq!(series.iops, vec![100.0]);
    }

    const MS: u64 = 1_000_000;
    const HALF_SECOND: Sampling = Sampling::Every(500 * MS);

    /// Totals after `bytes` read in `ios` I/Os.
    fn read_totals(bytes: u64, ios: u64) -> WorkerStats {
        let mut stats = WorkerStats::default();
        stats.dirs[0].bytes = bytes;
        stats.dirs[0].ios = ios;
        stats
    }

    const READS: [bool; DDIRS] = [true, false, false];

    /// A worker at 1 MiB per ms (1000 I/Os per second of 1 MiB) that samples
    /// every 500 ms on a clock the test drives, from t=7 ms.
    fn steady_run(intervals: u64) -> (IntervalSampler, WorkerStats, u64) {
        let mut sampler = IntervalSampler::new(HALF_SECOND, HALF_SECOND, 7 * MS, None);
        let mut now = 7 * MS;
        let mut moved = 0;
        for _ in 0..intervals {
            // Completions land a little after each interval's end, as they do.
            now += 500 * MS + 3;
            moved += 500 << 20;
            assert!(sampler.due(now), "an interval is due after 500 ms");
            sampler.take(now, &read_totals(moved, moved >> 20), READS);
        }
        (sampler, read_totals(moved, moved >> 20), now)
    }

    #[test]
    fn a_final_partial_interval_is_no_sample() {
        let (mut sampler, mut totals, now) = steady_run(10);
        // Eight 1 MiB I/Os complete in the last microsecond before the end.
        totals.dirs[0].bytes += 8 << 20;
        totals.dirs[0].ios += 8;
        assert!(!sampler.due(now + 1000));
        let rates = sampler.finish(now + 1000, &totals, READS);
        let bw = rates[0].bw_summary();
        let per_ms = (1u64 << 20) as f64 * 1000.0;
        assert_eq!(
            bw.samples, 10,
            "expected the 10 full intervals as samples, saw {bw:?}"
        );
        assert!(
            bw.min <= bw.mean && bw.mean <= bw.max,
            "expected min <= mean <= max, saw {bw:?}"
        );
        assert!(
            bw.max <= per_ms * 1.001,
            "expected no sample above the steady 1000 MiB/s, saw max {} MiB/s",
            bw.max / (1u64 << 20) as f64
        );
        assert!(
            rates[1].bw_bytes_per_sec.is_empty() && rates[2].iops.is_empty(),
            "expected no samples of unused directions, saw {rates:?}"
        );
    }

    #[test]
    fn a_nearly_full_final_interval_is_a_sample_over_its_real_length() {
        let (mut sampler, mut totals, now) = steady_run(2);
        // 499.5 ms: within fio's millisecond of a full interval.
        totals.dirs[0].bytes += 999 << 19;
        totals.dirs[0].ios += 499;
        let rates = sampler.finish(now + 499_500_000, &totals, READS);
        let last = *rates[0].bw_bytes_per_sec.last().unwrap();
        assert_eq!(
            rates[0].bw_bytes_per_sec.len(),
            3,
            "expected 2 full intervals and the nearly full last one, saw {rates:?}"
        );
        let expected = (999u64 << 19) as f64 / 0.4995;
        assert!(
            (last - expected).abs() < 1.0,
            "expected {expected} B/s over the last 499.5 ms, saw {last}"
        );
    }

    #[test]
    fn a_run_shorter_than_one_interval_has_no_samples() {
        let mut sampler = IntervalSampler::new(HALF_SECOND, HALF_SECOND, 0, None);
        sampler.take(MS, &read_totals(1 << 20, 1), READS);
        let rates = sampler.finish(2 * MS, &read_totals(2 << 20, 2), READS);
        assert_eq!(
            rates[0].bw_summary().samples,
            0,
            "expected no sample of a 2 ms run, saw {rates:?}"
        );
    }

    #[test]
    fn no_interval_ending_at_the_runtime_is_a_sample() {
        // runtime=1s of 500 ms intervals: fio stops the job as the second ends,
        // before its helper thread samples it; after a ramp the runtime counts anew.
        let mut sampler = IntervalSampler::new(HALF_SECOND, HALF_SECOND, 0, Some(1000 * MS));
        sampler.restart(200 * MS);
        sampler.take(700 * MS, &read_totals(500 << 20, 500), READS);
        let rates = sampler.finish(1200 * MS + 40_000, &read_totals(1 << 30, 1000), READS);
        assert_eq!(
            rates[0].iops,
            vec![1000.0],
            "expected only the interval ending before the runtime"
        );
    }

    #[test]
    fn restart_forgets_the_ramp() {
        let (mut sampler, totals, now) = steady_run(3);
        sampler.restart(now);
        assert!(
            sampler.rates()[0].iops.is_empty(),
            "expected no samples after a restart, saw {:?}",
            sampler.rates()
        );
        // Totals start again from zero at the restart.
        sampler.take(now + 500 * MS, &read_totals(1 << 20, 1), READS);
        assert_eq!(
            sampler.rates()[0].iops,
            vec![2.0],
            "expected one I/O in 500 ms after the restart (totals {totals:?} forgotten)"
        );
    }

    #[test]
    fn a_direction_that_moved_nothing_in_an_interval_has_no_sample_of_it() {
        let (mut sampler, totals, now) = steady_run(2);
        // Nothing moves for the next 500 ms, then one I/O in the 500 ms after.
        sampler.take(now + 500 * MS, &totals, READS);
        let mut after = totals.clone();
        after.dirs[0].bytes += 1 << 20;
        after.dirs[0].ios += 1;
        sampler.take(now + 1000 * MS, &after, READS);
        let iops = &sampler.rates()[0].iops;
        assert_eq!(
            (iops.len(), iops.last()),
            (3, Some(&2.0)),
            "expected the idle interval left out, as fio's \"no entries for interval\", saw {iops:?}"
        );
    }

    #[test]
    fn a_late_sample_does_not_push_the_next_intervals_end_back() {
        let mut sampler = IntervalSampler::new(HALF_SECOND, HALF_SECOND, 0, None);
        // Taken 3 ms late (the worker waited for a CPU); the run ends 0.5 ms
        // before the second interval's end on the grid: still (nearly) full.
        sampler.take(503 * MS, &read_totals(503 << 20, 503), READS);
        let rates = sampler.finish(999_500_000, &read_totals(999 << 20, 999), READS);
        assert_eq!(
            rates[0].iops.len(),
            2,
            "expected the second interval kept to the grid, saw {rates:?}"
        );
        let last = rates[0].iops[1];
        assert!(
            (last - 496.0 / 0.4965).abs() < 1e-6,
            "expected the rate over the 496.5 ms since the late sample, saw {last}"
        );
    }

    #[test]
    fn per_io_samples_are_fios_running_statistics() {
        let mut sampler = IntervalSampler::new(Sampling::PerIo, Sampling::PerIo, 0, None);
        // 4 KiB in 1 µs and in 4 µs: 4_096_000 and 1_024_000 bytes per ms.
        sampler.record_io(1, 4096, 1_000);
        sampler.record_io(1, 4096, 4_000);
        sampler.record_io(1, 4096, 0);
        assert!(!sampler.due(u64::MAX), "expected no interval to close");
        let rates = sampler.finish(10 * MS, &WorkerStats::default(), [false, true, false]);
        let bw = rates[1].bw_summary();
        assert_eq!(
            (bw.samples, bw.min / 1024.0, bw.max / 1024.0),
            (3, 0.0, 4_096_000.0),
            "expected one sample per I/O in fio's bytes per ms (0 without a latency), saw {bw:?}"
        );
        assert!((bw.mean / 1024.0 - 5_120_000.0 / 3.0).abs() < 1e-6);
        assert!(
            (bw.stddev / 1024.0 - 2_131_625.98).abs() < 1.0,
            "saw {bw:?}"
        );
        let iops = rates[1].iops_summary();
        assert_eq!(
            (iops.samples, iops.min, iops.max, iops.mean, iops.stddev),
            (3, 1.0, 1.0, 1.0, 0.0),
            "expected each I/O a sample of 1, as fio"
        );
        assert_eq!(rates[0].bw_summary().samples, 0);
    }

    #[test]
    fn bandwidth_and_iops_are_sampled_each_their_own_way() {
        let mut sampler = IntervalSampler::new(Sampling::PerIo, HALF_SECOND, 0, None);
        sampler.record_io(0, 4096, 1_000);
        assert!(sampler.due(500 * MS));
        sampler.take(500 * MS, &read_totals(4096, 1), READS);
        let rates = sampler.rates();
        assert_eq!(rates[0].bw_summary().samples, 1);
        assert!(rates[0].bw_bytes_per_sec.is_empty());
        assert_eq!(rates[0].iops, vec![2.0]);
        assert_eq!(rates[0].iops_per_io, None);
    }

    #[test]
    fn a_log_sets_how_its_rate_is_sampled_as_in_fio() {
        let default = Duration::from_millis(500);
        let logs = |avg_msec, store_compressed| LogSpec {
            avg_msec,
            store_compressed,
            ..LogSpec::default()
        };
        assert_eq!(
            Sampling::of(false, &logs(0, false), default),
            Sampling::Every(500 * MS)
        );
        assert_eq!(
            Sampling::of(true, &logs(0, false), default),
            Sampling::PerIo
        );
        assert_eq!(
            Sampling::of(true, &logs(1000, false), default),
            Sampling::Every(1000 * MS),
            "expected bw_avg_time to follow log_avg_msec"
        );
        assert_eq!(
            Sampling::of(true, &logs(1000, true), default),
            Sampling::PerIo
        );
    }

    #[test]
    fn group_series_sums_per_io_statistics_figure_by_figure_as_fio() {
        let per_io = |clat_ns: &[u64]| {
            let mut sampler = IntervalSampler::new(Sampling::PerIo, Sampling::PerIo, 0, None);
            for &ns in clat_ns {
                sampler.record_io(0, 1000, ns);
            }
            sampler.finish(MS, &WorkerStats::default(), READS)[0].clone()
        };
        let (a, b) = (per_io(&[1_000, 2_000]), per_io(&[4_000]));
        let group = RateSeries::sum_of(&[&a, &b]);
        let bw = group.bw_summary();
        assert_eq!(
            (
                bw.samples,
                bw.min / 1024.0,
                bw.max / 1024.0,
                bw.mean / 1024.0
            ),
            (3, 750_000.0, 1_250_000.0, 1_000_000.0),
            "expected fio's sums of the workers' figures, saw {bw:?}"
        );
        assert_eq!(group.iops_summary().samples, 3);
    }

    #[test]
    fn group_series_sums_samples_not_summaries() {
        let a = RateSeries {
            bw_bytes_per_sec: vec![10.0, 30.0, 20.0],
            iops: vec![1.0, 3.0, 2.0],
            ..RateSeries::default()
        };
        let b = RateSeries {
            bw_bytes_per_sec: vec![30.0, 10.0],
            iops: vec![3.0, 1.0],
            ..RateSeries::default()
        };
        let group = RateSeries::sum_of(&[&a, &b]);
        assert_eq!(group.bw_bytes_per_sec, vec![40.0, 40.0, 20.0]);
        assert_eq!(group.iops, vec![4.0, 4.0, 2.0]);
        // The first two samples are flat: the group's spread is not the sum of spreads.
        let summary = group.bw_summary();
        assert_eq!((summary.min, summary.max, summary.samples), (20.0, 40.0, 3));
        assert!(RateSeries::sum_of(&[]).iops.is_empty());
    }
}
