//! Is B different from A? Welch's t-test on two sets of repetitions (it does
//! not assume equal spreads, and unlike Mann-Whitney U it can reach significance
//! with three runs per side), on the log of the ratio B/A, the change in percent
//! with its 95 % interval (never below −100 %), and a baseline test for a history
//! of values.

use super::summary::{median, robust_sd, sample_stddev};

/// Two-sided significance level of the verdicts.
pub(crate) const ALPHA: f64 = 0.05;

/// A trend point is flagged when it is this many noise units from the baseline.
const TREND_SHIFT_IN_SD: f64 = 3.0;

/// Noise of a trend baseline is never taken as smaller than this fraction of its
/// median: a perfectly stable history would otherwise flag any wobble.
const TREND_NOISE_FLOOR: f64 = 0.01;

/// Earlier points a trend point is judged against: the most recent ones of the
/// same configuration, up to this many.
pub(crate) const TREND_WINDOW: usize = 10;

/// Fewest earlier points a trend point is judged against. The noise is their
/// median absolute deviation, and with fewer than five a single odd run sets it.
pub(crate) const TREND_MIN_BASELINE: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// B is significantly larger than A.
    Increase,
    /// B is significantly smaller than A.
    Decrease,
    /// The difference is within the noise.
    NoChange,
    /// One side has a single value: no spread, no test.
    Undecidable,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Comparison {
    /// (mean B − mean A) / mean A, percent.
    pub change_pct: f64,
    /// 95 % interval of `change_pct` (Welch, on the log ratio: never below −100 %);
    /// None without repetitions on both sides.
    pub ci95_pct: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    pub direction: Direction,
}

/// Compare repetitions `b` against `a` (both non-empty, values ≥ 0: rates,
/// latencies, CPU time).
///
/// The test and the interval are on the log of the ratio of the means (Welch's t
/// with the delta-method standard error, the relative spreads of both sides), so
/// the interval, taken back to percent, can never fall below −100 %: a positive
/// quantity cannot lose more than all of itself. An interval on the raw difference
/// can (a noisy A and a much smaller B gave `[-119.0 %, -66.7 %]`).
pub(crate) fn compare(a: &[f64], b: &[f64]) -> Comparison {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "compare needs values on both sides"
    );
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let mean_a = a.iter().sum::<f64>() / na;
    let mean_b = b.iter().sum::<f64>() / nb;
    let change_pct = if mean_a == 0.0 {
        0.0
    } else {
        100.0 * (mean_b - mean_a) / mean_a.abs()
    };
    let undecidable = Comparison {
        change_pct,
        ci95_pct: None,
        p_value: None,
        direction: Direction::Undecidable,
    };
    if a.len() < 2 || b.len() < 2 {
        return undecidable;
    }
    if mean_a <= 0.0 || mean_b <= 0.0 {
        // No ratio to take the log of: only "both nothing" can be judged.
        return if mean_a == mean_b {
            Comparison {
                change_pct,
                ci95_pct: Some((0.0, 0.0)),
                p_value: Some(1.0),
                direction: Direction::NoChange,
            }
        } else {
            undecidable
        };
    }
    // Variance of each side's log mean, by the delta method: Var(mean) / mean².
    let ra = sample_stddev(a, mean_a).powi(2) / na / mean_a.powi(2);
    let rb = sample_stddev(b, mean_b).powi(2) / nb / mean_b.powi(2);
    let se = (ra + rb).sqrt();
    let log_ratio = (mean_b / mean_a).ln();
    let (p_value, half_width) = if se == 0.0 {
        (if log_ratio == 0.0 { 1.0 } else { 0.0 }, 0.0)
    } else {
        let df = (ra + rb).powi(2) / (ra.powi(2) / (na - 1.0) + rb.powi(2) / (nb - 1.0));
        (
            t_two_sided_p(log_ratio / se, df),
            t_critical(ALPHA, df) * se,
        )
    };
    let direction = if p_value >= ALPHA {
        Direction::NoChange
    } else if log_ratio > 0.0 {
        Direction::Increase
    } else {
        Direction::Decrease
    };
    let to_pct = |log: f64| 100.0 * log.exp_m1();
    Comparison {
        change_pct,
        ci95_pct: Some((
            to_pct(log_ratio - half_width),
            to_pct(log_ratio + half_width),
        )),
        p_value: Some(p_value),
        direction,
    }
}

/// Where a new value lies against the values before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shift {
    Above,
    Below,
    Within,
    /// Too few earlier values to say.
    NoBaseline,
}

/// Judge `value` against `baseline` (earlier values): more than three robust
/// standard deviations from their median is a shift.
pub(crate) fn shift_from_baseline(baseline: &[f64], value: f64) -> Shift {
    if baseline.len() < TREND_MIN_BASELINE {
        return Shift::NoBaseline;
    }
    let center = median(baseline);
    let noise = robust_sd(baseline).max(TREND_NOISE_FLOOR * center.abs());
    if value > center + TREND_SHIFT_IN_SD * noise {
        Shift::Above
    } else if value < center - TREND_SHIFT_IN_SD * noise {
        Shift::Below
    } else {
        Shift::Within
    }
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom.
pub(crate) fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    regularized_incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
}

/// The t with P(|T| ≥ t) = alpha, by bisection (the p-value falls as t grows).
fn t_critical(alpha: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1e4);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if t_two_sided_p(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// I_x(a, b) by its continued fraction (modified Lentz), using the symmetry
/// I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges slowly.
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - regularized_incomplete_beta(1.0 - x, b, a);
    }
    let ln_front = a * x.ln() + b * (1.0 - x).ln() + ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b);
    const TINY: f64 = 1e-300;
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - (a + b) * x / (a + 1.0));
    let mut fraction = d;
    for m in 1..500 {
        let m = m as f64;
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / clamp(1.0 + even * d);
        c = clamp(1.0 + even / c);
        fraction *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / clamp(1.0 + odd * d);
        c = clamp(1.0 + odd / c);
        let step = d * c;
        fraction *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    ln_front.exp() * fraction / a
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, nine terms).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + G + 0.5;
    let series = COEF[1..]
        .iter()
        .enumerate()
        .fold(COEF[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-12
        ));
    }

    #[test]
    fn t_distribution_matches_table_values() {
        // Two-sided 5 % critical values: df=1 → 12.706, df=4 → 2.776, df=30 → 2.042.
        assert!(close(t_critical(0.05, 1.0), 12.706, 1e-3));
        assert!(close(t_critical(0.05, 4.0), 2.776, 1e-3));
        assert!(close(t_critical(0.05, 30.0), 2.042, 1e-3));
        assert!(close(t_two_sided_p(0.0, 10.0), 1.0, 1e-12));
    }

    #[test]
    fn welch_finds_a_clear_difference_and_its_sign() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [120.0, 118.0, 122.0, 121.0, 119.0];
        let c = compare(&a, &b);
        assert_eq!(c.direction, Direction::Increase);
        assert!(close(c.change_pct, 20.0, 1e-9));
        let (lo, hi) = c.ci95_pct.unwrap();
        assert!(lo < 20.0 && 20.0 < hi && lo > 15.0, "{lo}..{hi}");
        assert_eq!(compare(&b, &a).direction, Direction::Decrease);
    }

    #[test]
    fn overlapping_noise_is_no_significant_difference() {
        let a = [100.0, 106.0, 95.0, 103.0];
        let b = [101.0, 97.0, 107.0, 99.0];
        let c = compare(&a, &b);
        assert_eq!(c.direction, Direction::NoChange);
        let (lo, hi) = c.ci95_pct.unwrap();
        assert!(lo < 0.0 && 0.0 < hi);
    }

    #[test]
    fn the_log_ratio_test_matches_a_worked_example() {
        // A = 90, 110 and B = 180, 220: each log mean has variance (s²/n)/mean² = 0.01,
        // so se = √0.02, t = ln 2 / se = 4.901, df = 2. With two degrees of freedom
        // P(|T| ≥ t) = 1 − t/√(2 + t²) and the 5 % critical value is √(2·0.95²/(1 − 0.95²)).
        let c = compare(&[90.0, 110.0], &[180.0, 220.0]);
        let se = 0.02f64.sqrt();
        let t = 2f64.ln() / se;
        let p = 1.0 - t / (2.0 + t * t).sqrt();
        let t_crit = (2.0 * 0.95f64.powi(2) / (1.0 - 0.95f64.powi(2))).sqrt();
        let expected_ci = (
            100.0 * ((2f64.ln() - t_crit * se).exp() - 1.0),
            100.0 * ((2f64.ln() + t_crit * se).exp() - 1.0),
        );
        let seen_p = c.p_value.unwrap();
        assert!(close(seen_p, p, 1e-6), "expected p = {p}, got {seen_p}");
        let (lo, hi) = c.ci95_pct.unwrap();
        assert!(
            close(lo, expected_ci.0, 1e-3) && close(hi, expected_ci.1, 1e-3),
            "expected the interval {expected_ci:?} (about +8.8 % to +267.5 %), got ({lo}, {hi})"
        );
        assert_eq!(c.direction, Direction::Increase, "p = {seen_p} < 0.05");
        assert!(close(c.change_pct, 100.0, 1e-9), "{}", c.change_pct);
    }

    #[test]
    fn a_large_drop_from_a_noisy_side_stays_above_minus_100_percent() {
        // A's runs spread widely, B is far lower and steady. Welch on the raw
        // difference gave about [−209 %, +39 %] here, and [−119 %, −67 %] for the IOPS
        // in the report that found this; a positive quantity cannot lose more than 100 %.
        let cases: [(&[f64], &[f64]); 2] = [
            (&[1000.0, 3000.0, 2000.0], &[300.0, 310.0, 290.0]),
            (
                &[41_000.0, 52_000.0, 35_000.0, 60_000.0, 30_000.0],
                &[3_100.0, 3_600.0, 2_900.0, 3_300.0, 3_500.0],
            ),
        ];
        for (a, b) in cases {
            let c = compare(a, b);
            let (lo, hi) = c.ci95_pct.unwrap();
            assert!(
                lo > -100.0 && lo < c.change_pct && c.change_pct < hi,
                "expected −100 % < low < change {} < high for A={a:?} B={b:?}, got ({lo}, {hi})",
                c.change_pct
            );
        }
    }

    #[test]
    fn sides_that_are_all_zero_compare_without_a_logarithm() {
        let c = compare(&[0.0, 0.0], &[0.0, 0.0]);
        assert_eq!(
            (c.direction, c.ci95_pct),
            (Direction::NoChange, Some((0.0, 0.0))),
            "two sides of nothing: expected no change"
        );
        let c = compare(&[0.0, 0.0], &[5.0, 6.0]);
        assert_eq!(
            (c.direction, c.ci95_pct),
            (Direction::Undecidable, None),
            "a ratio to zero: expected no verdict and no interval"
        );
    }

    #[test]
    fn single_runs_cannot_be_judged() {
        let c = compare(&[100.0], &[150.0, 151.0]);
        assert_eq!(c.direction, Direction::Undecidable);
        assert!(close(c.change_pct, 50.5, 1e-9));
        assert_eq!(c.ci95_pct, None);
    }

    #[test]
    fn a_trend_point_outside_the_noise_is_a_shift() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        assert_eq!(shift_from_baseline(&base, 100.5), Shift::Within);
        assert_eq!(shift_from_baseline(&base, 80.0), Shift::Below);
        assert_eq!(shift_from_baseline(&base, 120.0), Shift::Above);
        assert_eq!(
            shift_from_baseline(&base[..TREND_MIN_BASELINE - 1], 10.0),
            Shift::NoBaseline,
            "expected no verdict with fewer than {TREND_MIN_BASELINE} earlier points"
        );
    }
}
