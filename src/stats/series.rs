//! Per-interval rate samples (fio's `bw` and `iops` lines) and their summaries.

use serde::{Deserialize, Serialize};

use crate::job::spec::DDIRS;
use crate::model::SampleSummary;
use crate::stats::WorkerStats;

/// One direction's rates, one sample per sampling interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RateSeries {
    /// Bandwidth per interval, bytes/s.
    pub bw_bytes_per_sec: Vec<f64>,
    /// Completed I/Os per interval, per second.
    pub iops: Vec<f64>,
}

impl RateSeries {
    /// Adds the sample for one interval of `interval_ns` in which `bytes`
    /// and `ios` completed. A zero-length interval carries no rate and is skipped.
    pub fn push_interval(&mut self, bytes: u64, ios: u64, interval_ns: u64) {
        if interval_ns == 0 {
            return;
        }
        let seconds = interval_ns as f64 / 1e9;
        self.bw_bytes_per_sec.push(bytes as f64 / seconds);
        self.iops.push(ios as f64 / seconds);
    }

    pub fn bw_summary(&self) -> SampleSummary {
        summarize(&self.bw_bytes_per_sec)
    }

    pub fn iops_summary(&self) -> SampleSummary {
        summarize(&self.iops)
    }

    /// The group's series for group_reporting: sample `i` is the sum of every
    /// worker's sample `i`. Samples are taken on common ticks, so a series
    /// that is shorter belongs to a worker that had already finished and
    /// contributes nothing to the later samples.
    pub fn sum_of(series: &[&RateSeries]) -> RateSeries {
        RateSeries {
            bw_bytes_per_sec: sum_samplewise(series.iter().map(|s| s.bw_bytes_per_sec.as_slice())),
            iops: sum_samplewise(series.iter().map(|s| s.iops.as_slice())),
        }
    }
}

/// How much earlier than a full interval an interval may end and still be a
/// sample (fio allows its helper thread the same millisecond).
const SLACK_NS: u64 = 1_000_000;

/// Makes one worker's per-interval bandwidth and IOPS samples from its running
/// totals; the worker calls it at completion time, so no other thread reads
/// its state. Every sample is the bytes and I/Os of one (nearly) full interval
/// over that interval's real length: an interval that ends early, like the
/// partial one at the end of a run, is not a sample (its few completions over
/// a short time would make an impossible rate), as in fio. It is no thread:
/// the one `Sampler`, which watches the system, is `observe::sampler::Sampler`.
#[derive(Debug, Clone)]
pub struct IntervalSampler {
    interval_ns: u64,
    last_ns: u64,
    last_bytes: [u64; DDIRS],
    last_ios: [u64; DDIRS],
    rates: [RateSeries; DDIRS],
}

impl IntervalSampler {
    /// Samples every `interval_ns` from `start_ns`, with room for `expected` samples.
    pub fn new(interval_ns: u64, start_ns: u64, expected: usize) -> Self {
        let series = || RateSeries {
            bw_bytes_per_sec: Vec::with_capacity(expected),
            iops: Vec::with_capacity(expected),
        };
        Self {
            interval_ns: interval_ns.max(1),
            last_ns: start_ns,
            last_bytes: [0; DDIRS],
            last_ios: [0; DDIRS],
            rates: [series(), series(), series()],
        }
    }

    /// Forget every sample and start again at `start_ns` from zero totals (the ramp ended).
    pub fn restart(&mut self, start_ns: u64) {
        self.last_ns = start_ns;
        self.last_bytes = [0; DDIRS];
        self.last_ios = [0; DDIRS];
        for series in &mut self.rates {
            series.bw_bytes_per_sec.clear();
            series.iops.clear();
        }
    }

    /// A full interval has passed since the last sample.
    #[inline]
    pub fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.last_ns.saturating_add(self.interval_ns)
    }

    /// Close the interval ending at `now_ns`, given the running totals, if it
    /// lasted (nearly) a full interval; a shorter one is left open.
    pub fn take(&mut self, now_ns: u64, stats: &WorkerStats, used: [bool; DDIRS]) {
        let elapsed = now_ns.saturating_sub(self.last_ns);
        let shortest = self.interval_ns - SLACK_NS.min(self.interval_ns / 2);
        if elapsed < shortest.max(1) {
            return;
        }
        for (d, used) in used.into_iter().enumerate() {
            let (bytes, ios) = (stats.dirs[d].bytes, stats.dirs[d].ios);
            if used {
                self.rates[d].push_interval(
                    bytes - self.last_bytes[d],
                    ios - self.last_ios[d],
                    elapsed,
                );
            }
            self.last_bytes[d] = bytes;
            self.last_ios[d] = ios;
        }
        self.last_ns = now_ns;
    }

    /// The samples so far, [read, write, trim].
    pub fn rates(&self) -> &[RateSeries; DDIRS] {
        &self.rates
    }

    /// Hand over the samples of the run ending at `end_ns`: the last interval
    /// is one only when it lasted (nearly) a full interval.
    pub fn finish(
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
pub fn summarize(samples: &[f64]) -> SampleSummary {
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
        let mut sampler = IntervalSampler::new(500 * MS, 7 * MS, 4);
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
        let mut sampler = IntervalSampler::new(500 * MS, 0, 1);
        sampler.take(MS, &read_totals(1 << 20, 1), READS);
        let rates = sampler.finish(2 * MS, &read_totals(2 << 20, 2), READS);
        assert_eq!(
            rates[0].bw_summary().samples,
            0,
            "expected no sample of a 2 ms run, saw {rates:?}"
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
    fn group_series_sums_samples_not_summaries() {
        let a = RateSeries {
            bw_bytes_per_sec: vec![10.0, 30.0, 20.0],
            iops: vec![1.0, 3.0, 2.0],
        };
        let b = RateSeries {
            bw_bytes_per_sec: vec![30.0, 10.0],
            iops: vec![3.0, 1.0],
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
