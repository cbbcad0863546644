//! Property tests of the latency histogram: merging is associative and
//! commutative, and percentiles never decrease as the percentage grows.

use super::*;
use proptest::prelude::*;

fn histogram() -> impl Strategy<Value = LatHistogram> {
    // Latencies from 1 ns to about 10 minutes, skewed towards small values like real I/O.
    prop::collection::vec(
        (0u32..40).prop_flat_map(|bits| 0u64..(1u64 << bits).max(2)),
        0..200,
    )
    .prop_map(|values| {
        let mut h = LatHistogram::new();
        values.into_iter().for_each(|v| h.record(v));
        h
    })
}

fn merged(a: &LatHistogram, b: &LatHistogram) -> LatHistogram {
    let mut out = a.clone();
    out.merge(b);
    out
}

proptest! {
    #[test]
    fn merge_is_associative_and_commutative(a in histogram(), b in histogram(), c in histogram()) {
        prop_assert_eq!(merged(&merged(&a, &b), &c), merged(&a, &merged(&b, &c)));
        prop_assert_eq!(merged(&a, &b), merged(&b, &a));
        prop_assert_eq!(merged(&a, &LatHistogram::new()), a);
    }

    #[test]
    fn percentiles_are_monotone(h in histogram(), mut pcts in prop::collection::vec(0.0f64..=100.0, 1..20)) {
        pcts.sort_by(f64::total_cmp);
        let values: Vec<u64> = h.percentiles(&pcts).into_iter().map(|(_, v)| v).collect();
        prop_assert!(values.windows(2).all(|w| w[0] <= w[1]), "{:?} → {:?}", pcts, values);
        if h.count() > 0 {
            // A bucket midpoint can sit past the largest value, never below the bucket of the smallest.
            prop_assert!(h.percentile(100.0) >= bucket_value(bucket_index(h.max())).min(h.max()));
        }
    }
}
