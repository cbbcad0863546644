//! `LatHistogram`: a log-linear latency histogram laid out like fio's, so
//! percentiles computed from it are the numbers fio would print.
//!
//! Layout (fio's documented scheme): values below 128 ns get one exact bucket
//! each. Above that, every power-of-two range `[2^m, 2^(m+1))` is split into
//! 64 equal sub-buckets, so a bucket is at most 1/64 of its lower bound wide.
//! 29 groups of 64 give 1856 buckets and cover values below 2^34 ns (~17 s);
//! larger values land in the last bucket, as in fio. A bucket is reported at
//! its midpoint, which keeps the error of any reported value under 1/128.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::model::{LatBuckets, LatSummary};

/// Sub-buckets per power of two, as bits (64 sub-buckets).
const SUB_BITS: u32 = 6;
const SUB_BUCKETS: usize = 1 << SUB_BITS;
/// Groups of `SUB_BUCKETS`; the first two hold the exact values 0..128.
const GROUPS: usize = 29;
/// Number of buckets (1856).
pub(crate) const BUCKETS: usize = GROUPS * SUB_BUCKETS;
/// Values below this get a bucket of their own.
const EXACT_LIMIT: u64 = 2 << SUB_BITS;

/// Index of the bucket that holds `ns`.
#[inline]
pub(crate) const fn bucket_index(ns: u64) -> usize {
    if ns < EXACT_LIMIT {
        return ns as usize;
    }
    // Keep the 6 bits below the most significant one; drop the rest.
    let msb = 63 - ns.leading_zeros();
    let dropped_bits = msb - SUB_BITS;
    let group = (dropped_bits + 1) as usize;
    let sub = (ns >> dropped_bits) as usize & (SUB_BUCKETS - 1);
    let index = (group << SUB_BITS) + sub;
    if index < BUCKETS {
        index
    } else {
        BUCKETS - 1
    }
}

/// The value a bucket is reported as: exact below 128, else the midpoint.
pub(crate) const fn bucket_value(index: usize) -> u64 {
    if index < EXACT_LIMIT as usize {
        return index as u64;
    }
    let dropped_bits = (index >> SUB_BITS) as u32 - 1;
    let group_start = 1u64 << (dropped_bits + SUB_BITS);
    let sub = (index & (SUB_BUCKETS - 1)) as u64;
    let width = 1u64 << dropped_bits;
    group_start + sub * width + width / 2
}

/// Latency distribution in nanoseconds, plus exact count, min, max, mean
/// and sample standard deviation of the recorded values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "CompactHistogram", try_from = "CompactHistogram")]
pub(crate) struct LatHistogram {
    buckets: Box<[u64; BUCKETS]>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_of_squares: u128,
}

impl Default for LatHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatHistogram {
    /// An empty histogram; its bucket array is the only allocation it makes.
    pub(crate) fn new() -> Self {
        Self {
            buckets: Box::new([0; BUCKETS]),
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_of_squares: 0,
        }
    }

    /// Records one latency. Called per I/O: no allocation, no branch beyond
    /// the small-value case in `bucket_index`.
    #[inline]
    pub(crate) fn record(&mut self, ns: u64) {
        self.buckets[bucket_index(ns)] += 1;
        self.count += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        let wide = u128::from(ns);
        self.sum += wide;
        self.sum_of_squares += wide * wide;
    }

    /// Adds everything recorded in `other` to `self`.
    pub(crate) fn merge(&mut self, other: &LatHistogram) {
        for (mine, theirs) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *mine += theirs;
        }
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_of_squares += other.sum_of_squares;
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Smallest recorded value, 0 when empty.
    pub(crate) fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// Largest recorded value, 0 when empty.
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    /// Exact mean of the recorded values, 0 when empty.
    pub(crate) fn mean(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        self.sum as f64 / self.count as f64
    }

    /// Sample (n - 1) standard deviation of the recorded values, as fio
    /// reports it; 0 with fewer than two values.
    pub(crate) fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = u128::from(self.count);
        // n·Σx² − (Σx)² is exact in integers, which avoids the cancellation
        // the floating-point form suffers when the spread is small.
        let exact_numerator = n
            .checked_mul(self.sum_of_squares)
            .zip(self.sum.checked_mul(self.sum))
            .map(|(scaled_squares, squared_sum)| scaled_squares - squared_sum);
        let variance = match exact_numerator {
            Some(numerator) => numerator as f64 / (n as f64 * (n - 1) as f64),
            None => {
                let mean = self.mean();
                (self.sum_of_squares as f64 - self.sum as f64 * mean) / (n - 1) as f64
            }
        };
        variance.max(0.0).sqrt()
    }

    #[cfg(test)]
    /// Value (bucket midpoint) at percentile `pct` (0..=100): fio's rule, the
    /// first bucket whose cumulative count reaches `pct`% of all values.
    /// 0 when empty.
    pub(crate) fn percentile(&self, pct: f64) -> u64 {
        self.percentiles(&[pct])[0].1
    }

    /// `(pct, value)` for each of `pcts`, in the given order.
    pub(crate) fn percentiles(&self, pcts: &[f64]) -> Vec<(f64, u64)> {
        if self.count == 0 {
            return pcts.iter().map(|&pct| (pct, 0)).collect();
        }
        let cumulative: Vec<u64> = self
            .buckets
            .iter()
            .scan(0u64, |running, &n| {
                *running += n;
                Some(*running)
            })
            .collect();
        pcts.iter()
            .map(|&pct| {
                let index = cumulative
                    .partition_point(|&below| !reaches_percent(below, self.count, pct))
                    .min(BUCKETS - 1);
                (pct, bucket_value(index))
            })
            .collect()
    }

    /// The model's summary. Pass an empty `percentiles` for none; an empty
    /// histogram also gets no percentiles (fio prints none then). Bins come
    /// with percentiles, as in fio's json+.
    pub(crate) fn summary(&self, percentiles: &[f64]) -> LatSummary {
        let detailed = self.count > 0 && !percentiles.is_empty();
        LatSummary {
            min_ns: self.min(),
            max_ns: self.max(),
            mean_ns: self.mean(),
            stddev_ns: self.stddev(),
            samples: self.count,
            percentiles: if detailed {
                self.percentiles(percentiles)
            } else {
                Vec::new()
            },
            bins: if detailed {
                self.bins()
            } else {
                BTreeMap::new()
            },
        }
    }

    /// Count of every non-empty bucket keyed by the bucket's reported value
    /// (fio's json+ `bins`).
    pub(crate) fn bins(&self) -> BTreeMap<u64, u64> {
        self.buckets
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(index, &n)| (bucket_value(index), n))
            .collect()
    }

    /// How many recorded values are below `ns`. Exact for `ns <= 128`;
    /// above, a bucket counts as below when its midpoint is, so a value
    /// within one bucket width (< 1/64) of `ns` may be counted on the wrong
    /// side.
    pub(crate) fn count_below(&self, ns: u64) -> u64 {
        self.buckets
            .iter()
            .enumerate()
            .take_while(|&(index, _)| bucket_value(index) < ns)
            .map(|(_, &n)| n)
            .sum()
    }

    /// fio's latency distribution ("lat (usec): 2=…%, 4=…%") derived from
    /// this histogram; see `count_below` for its accuracy. Each fio bucket
    /// `k` holds values from the previous bound up to, not including, `k`.
    pub(crate) fn lat_buckets(&self) -> LatBuckets {
        const STEPS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
        const US: u64 = 1_000;
        const MS: u64 = 1_000_000;
        let mut buckets = LatBuckets::default();
        if self.count == 0 {
            return buckets;
        }
        let pct = |lower: u64, upper: u64| {
            let n = self.count_below(upper) - self.count_below(lower);
            n as f64 * 100.0 / self.count as f64
        };
        // The first ns bucket starts at 0; each later range starts where
        // the previous one ended.
        let mut lower = 0;
        for (slot, step) in buckets.ns_pct.iter_mut().zip(STEPS) {
            *slot = pct(lower, step);
            lower = step;
        }
        for (slot, step) in buckets.us_pct.iter_mut().zip(STEPS) {
            *slot = pct(lower, step * US);
            lower = step * US;
        }
        let ms_steps = STEPS.iter().copied().chain([2000]);
        for (slot, step) in buckets.ms_pct.iter_mut().zip(ms_steps) {
            *slot = pct(lower, step * MS);
            lower = step * MS;
        }
        buckets.ms_pct[11] =
            (self.count - self.count_below(lower)) as f64 * 100.0 / self.count as f64;
        buckets
    }
}

/// A histogram as it crosses a process boundary: most of the 1856 buckets
/// are empty, so only the others travel, as (index, count) pairs.
#[derive(Serialize, Deserialize)]
struct CompactHistogram {
    buckets: Vec<(u32, u64)>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_of_squares: u128,
}

impl From<LatHistogram> for CompactHistogram {
    fn from(h: LatHistogram) -> Self {
        let buckets = h
            .buckets
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(index, &n)| (index as u32, n))
            .collect();
        CompactHistogram {
            buckets,
            count: h.count,
            min: h.min,
            max: h.max,
            sum: h.sum,
            sum_of_squares: h.sum_of_squares,
        }
    }
}

/// Why a stored histogram was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HistogramError {
    /// A bucket index past the last bucket.
    #[error("histogram bucket {0} is out of range")]
    BucketOutOfRange(u32),
    /// The buckets do not add up to the count.
    #[error("histogram buckets hold {buckets} values but its count is {count}")]
    CountMismatch {
        /// The values in the buckets.
        buckets: u64,
        /// The count stored.
        count: u64,
    },
}

impl TryFrom<CompactHistogram> for LatHistogram {
    type Error = HistogramError;

    /// Rejects what no `LatHistogram` could have produced, so a garbled
    /// document fails here rather than as odd percentiles later.
    fn try_from(c: CompactHistogram) -> Result<Self, HistogramError> {
        let mut h = LatHistogram::new();
        for (index, n) in c.buckets {
            let slot = h
                .buckets
                .get_mut(index as usize)
                .ok_or(HistogramError::BucketOutOfRange(index))?;
            *slot += n;
        }
        let bucket_total: u64 = h.buckets.iter().sum();
        if bucket_total != c.count {
            return Err(HistogramError::CountMismatch {
                buckets: bucket_total,
                count: c.count,
            });
        }
        h.count = c.count;
        h.min = c.min;
        h.max = c.max;
        h.sum = c.sum;
        h.sum_of_squares = c.sum_of_squares;
        Ok(h)
    }
}

impl AddAssign<&LatHistogram> for LatHistogram {
    fn add_assign(&mut self, other: &LatHistogram) {
        self.merge(other);
    }
}

/// Whether `count` values reach `pct` percent of `total`, that is
/// `100·count >= pct·total`, decided exactly. fio decides it in extended
/// precision; an f64 product can round across the boundary (e.g. the 99.95th
/// of 2000 values) and pick a different bucket.
fn reaches_percent(count: u64, total: u64, pct: f64) -> bool {
    debug_assert!(
        (0.0..=100.0).contains(&pct),
        "percentile {pct} out of range"
    );
    // pct = mantissa · 2^exponent, exactly.
    let bits = pct.to_bits();
    let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, exponent) = if biased_exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased_exponent - 1075)
    };
    let needed = u128::from(mantissa) * u128::from(total);
    let have = 100 * u128::from(count);
    if exponent >= 0 {
        // pct <= 100 keeps this shift far from overflowing.
        have >= needed << exponent
    } else {
        let shift = exponent.unsigned_abs();
        // `have` is an integer, so comparing with the rounded-up quotient is exact.
        let needed_whole = if shift >= 128 {
            u128::from(needed > 0)
        } else {
            needed.div_ceil(1u128 << shift)
        };
        have >= needed_whole
    }
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn from_values(values: &[u64]) -> LatHistogram {
        let mut h = LatHistogram::new();
        for &v in values {
            h.record(v);
        }
        h
    }

    /// fio's percentile over sorted values: the bucket of the first value at
    /// which the cumulative count reaches the percentile. Plain f64 is a fair
    /// reference only away from exact boundaries, hence the prime counts below.
    fn reference_percentile(sorted: &[u64], pct: f64) -> u64 {
        let threshold = pct / 100.0 * sorted.len() as f64;
        let k = (1..=sorted.len()).find(|&k| k as f64 >= threshold).unwrap();
        bucket_value(bucket_index(sorted[k - 1]))
    }

    #[test]
    fn json_round_trip_keeps_everything_and_sends_only_used_buckets() {
        let h = from_values(&[3, 3, 900, 1_000_000, 70_000_000_000]);
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json.matches("],[").count() + 1, 4, "{json}");
        let back: LatHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
        let empty: LatHistogram =
            serde_json::from_str(&serde_json::to_string(&LatHistogram::new()).unwrap()).unwrap();
        assert_eq!(empty, LatHistogram::new());
    }

    #[test]
    fn garbled_json_is_rejected() {
        let out_of_range =
            r#"{"buckets":[[1856,1]],"count":1,"min":1,"max":1,"sum":1,"sum_of_squares":1}"#;
        let said = |json| {
            serde_json::from_str::<LatHistogram>(json)
                .expect_err("a garbled histogram")
                .to_string()
        };
        assert_eq!(said(out_of_range), "histogram bucket 1856 is out of range");
        let miscounted =
            r#"{"buckets":[[5,1]],"count":2,"min":5,"max":5,"sum":10,"sum_of_squares":50}"#;
        assert_eq!(
            said(miscounted),
            "histogram buckets hold 1 values but its count is 2"
        );
    }

    #[test]
    fn has_fios_bucket_count() {
        assert_eq!(BUCKETS, 1856);
        assert_eq!(bucket_index(u64::MAX), 1855);
    }

    #[test]
    fn small_values_are_exact() {
        for v in 0..128 {
            assert_eq!(bucket_index(v), v as usize);
            assert_eq!(bucket_value(v as usize), v);
        }
    }

    #[test]
    fn index_value_round_trip() {
        for index in 0..BUCKETS {
            assert_eq!(bucket_index(bucket_value(index)), index, "bucket {index}");
        }
    }

    #[test]
    fn matches_fio_bucket_midpoints() {
        // Values observed in real fio output (clat percentiles, ns).
        assert_eq!(bucket_value(bucket_index(1130)), 1128);
        assert_eq!(bucket_value(bucket_index(16_050)), 16_064);
        assert_eq!(bucket_value(bucket_index(66_000)), 66_048);
    }

    #[test]
    fn relative_error_below_one_sixty_fourth() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for _ in 0..100_000 {
            let v = rng.random_range(128..1u64 << 34);
            let reported = bucket_value(bucket_index(v));
            let error = reported.abs_diff(v) as f64 / v as f64;
            assert!(error < 1.0 / 64.0, "{v} reported as {reported}");
        }
    }

    #[test]
    fn percentiles_match_sorted_reference() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
        for n in [1usize, 2, 7, 101, 1999, 10_007] {
            let mut values: Vec<u64> = (0..n)
                .map(|_| {
                    let scale = 1u64 << rng.random_range(0..30);
                    rng.random_range(0..scale.max(2))
                })
                .collect();
            let h = from_values(&values);
            values.sort_unstable();
            for &(pct, got) in &h.percentiles(&crate::job::spec::DEFAULT_PERCENTILES) {
                assert_eq!(got, reference_percentile(&values, pct), "n={n} p={pct}");
            }
        }
    }

    #[test]
    fn percentile_boundary_is_decided_exactly() {
        // 99.95 as an f64 is slightly above 99.95, so 1999 of 2000 values do
        // not reach it: fio reports the largest value's bucket.
        let mut values = vec![100u64; 1999];
        values.push(100_000);
        let h = from_values(&values);
        assert_eq!(h.percentile(99.95), bucket_value(bucket_index(100_000)));
        assert_eq!(h.percentile(99.9), 100);
        assert!(reaches_percent(9999, 10_000, 99.99));
    }

    #[test]
    fn merge_equals_recording_everything() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let a: Vec<u64> = (0..5000).map(|_| rng.random_range(0..10_000_000)).collect();
        let b: Vec<u64> = (0..3000).map(|_| rng.random_range(0..100_000)).collect();
        let mut merged = from_values(&a);
        merged += &from_values(&b);
        let all: Vec<u64> = a.iter().chain(&b).copied().collect();
        assert_eq!(merged, from_values(&all));
    }

    #[test]
    fn exact_moments() {
        let h = from_values(&[2, 4, 4, 4, 5, 5, 7, 9]);
        assert_eq!((h.count(), h.min(), h.max()), (8, 2, 9));
        assert_eq!(h.mean(), 5.0);
        assert!((h.stddev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let empty = LatHistogram::new();
        assert_eq!(
            (empty.min(), empty.max(), empty.mean(), empty.stddev()),
            (0, 0, 0.0, 0.0)
        );
    }

    #[test]
    fn summary_of_empty_has_no_percentiles() {
        let summary = LatHistogram::new().summary(&[50.0]);
        assert!(summary.percentiles.is_empty());
        assert_eq!(summary.samples, 0);
        assert!(summary.bins.is_empty());
        let summary = from_values(&[10, 20]).summary(&[50.0]);
        assert_eq!(summary.percentiles, vec![(50.0, 10)]);
        assert!(from_values(&[10]).summary(&[]).bins.is_empty());
    }

    #[test]
    fn bins_are_keyed_by_bucket_value_and_sum_to_the_count() {
        let h = from_values(&[5, 5, 1130, 1131, 66_000]);
        let bins = h.bins();
        assert_eq!(bins, BTreeMap::from([(5, 2), (1128, 2), (66_048, 1)]));
        assert_eq!(h.summary(&[50.0]).bins, bins);
    }

    #[test]
    fn lat_buckets_follow_fio_ranges() {
        // 1 ns → "2" (ns); 1500 ns → "2" (us); 3 ms → "4" (ms); 5 s → ">=2000".
        let h = from_values(&[1, 1500, 3_000_000, 5_000_000_000]);
        let b = h.lat_buckets();
        assert_eq!(b.ns_pct[0], 25.0);
        assert_eq!(b.us_pct[0], 25.0);
        assert_eq!(b.ms_pct[1], 25.0);
        assert_eq!(b.ms_pct[11], 25.0);
        let total: f64 = b.ns_pct.iter().chain(&b.us_pct).chain(&b.ms_pct).sum();
        assert_eq!(total, 100.0);
    }

    #[test]
    fn count_below_is_exact_for_small_values() {
        let h = from_values(&[0, 1, 2, 3, 127, 128]);
        assert_eq!(h.count_below(2), 2);
        assert_eq!(h.count_below(128), 5);
        // 128 shares a bucket with 129, reported as 129.
        assert_eq!(h.count_below(129), 5);
        assert_eq!(h.count_below(130), 6);
    }
}
