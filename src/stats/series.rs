//! Per-interval rate samples (fio's `bw` and `iops` lines) and their summaries.

use serde::{Deserialize, Serialize};

use crate::report::model::SampleSummary;

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
