//! `latency_target` / `latency_window` / `latency_percentile` / `latency_run`:
//! find the deepest queue whose I/Os still meet a latency.
//!
//! Each worker searches on its own: it starts at depth 1 and tries each depth
//! for one window. A window in which at least `latency_percentile` per cent of
//! the completed I/Os took at most `latency_target` is met: the depth doubles
//! (up to `iodepth`), or, once a deeper depth has missed, moves halfway towards
//! it. A missed window moves halfway back towards the deepest met depth. The
//! search settles when the met and missed depths are neighbours (or the met one
//! is `iodepth`); then the job ends, unless `latency_run` keeps it adjusting
//! one step at a time for the rest of the run.

use crate::job::spec::LatencyTargetSpec;

#[derive(Debug, Clone)]
pub(super) struct LatencyTarget {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    keep_adjusting: bool,
    max_depth: u32,
    depth: u32,
    /// The deepest depth that met the target (0: none yet).
    met: u32,
    /// The shallowest depth deeper than `met` that missed it.
    missed: Option<u32>,
    settled: bool,
    window_end_ns: u64,
    ios: u64,
    within_target: u64,
}

/// What the worker does after a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Keep at most this many I/Os in flight.
    Depth(u32),
    /// The search settled at this depth and the job ends.
    Settled(u32),
}

impl LatencyTarget {
    /// The search over depths 1..=`max_depth`, its first window starting at `now_ns`.
    pub(super) fn new(spec: &LatencyTargetSpec, max_depth: u32, now_ns: u64) -> Self {
        let window_ns = u64::try_from(spec.window.as_nanos()).unwrap_or(u64::MAX);
        Self {
            target_ns: spec.target_ns,
            window_ns,
            percentile: spec.percentile,
            keep_adjusting: spec.keep_adjusting,
            max_depth: max_depth.max(1),
            depth: 1,
            met: 0,
            missed: None,
            settled: false,
            window_end_ns: now_ns.saturating_add(window_ns),
            ios: 0,
            within_target: 0,
        }
    }

    /// The deepest depth found to meet the target (1 when none did).
    pub(super) fn found_depth(&self) -> u32 {
        self.met.max(1)
    }

    /// One completed I/O.
    #[inline]
    pub(super) fn record(&mut self, lat_ns: u64) {
        self.ios += 1;
        if lat_ns <= self.target_ns {
            self.within_target += 1;
        }
    }

    /// The current window has ended by `now_ns`.
    #[inline]
    pub(super) fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.window_end_ns
    }

    /// Judge the window that ended at `now_ns` and choose the next depth.
    #[cold]
    pub(super) fn close_window(&mut self, now_ns: u64) -> Step {
        // A window without a completion met nothing.
        let met =
            self.ios > 0 && self.within_target as f64 >= self.ios as f64 * self.percentile / 100.0;
        self.ios = 0;
        self.within_target = 0;
        self.window_end_ns = now_ns.saturating_add(self.window_ns);
        if self.settled {
            // latency_run: one step towards the target at a time.
            self.depth = if met {
                self.met = self.depth;
                (self.depth + 1).min(self.max_depth)
            } else {
                (self.depth - 1).max(1)
            };
            return Step::Depth(self.depth);
        }
        let next = if met {
            self.met = self.depth;
            match self.missed {
                Some(missed) => self.depth + (missed - self.depth) / 2,
                None => (self.depth * 2).min(self.max_depth),
            }
        } else {
            self.missed = Some(self.depth);
            self.met + (self.depth - self.met) / 2
        };
        // Nowhere new to go: the met and missed depths are neighbours, or the
        // deepest allowed depth met the target.
        if next == self.depth || next == self.met {
            self.settled = true;
            self.depth = self.found_depth();
            if !self.keep_adjusting {
                return Step::Settled(self.depth);
            }
        } else {
            self.depth = next;
        }
        Step::Depth(self.depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const WINDOW: u64 = 1_000_000;

    fn spec(keep_adjusting: bool) -> LatencyTargetSpec {
        LatencyTargetSpec {
            target_ns: 100_000,
            window: Duration::from_nanos(WINDOW),
            percentile: 90.0,
            keep_adjusting,
        }
    }

    /// A fake device: each I/O takes 30 µs per I/O in flight, so depths up to 3
    /// stay within 100 µs. Runs windows of 20 I/Os; the steps taken.
    fn search(target: &mut LatencyTarget, windows: usize) -> Vec<Step> {
        (1..=windows as u64)
            .map(|w| {
                let lat_ns = 30_000 * u64::from(target.depth);
                for _ in 0..20 {
                    target.record(lat_ns);
                }
                assert!(target.due(w * WINDOW));
                target.close_window(w * WINDOW)
            })
            .collect()
    }

    #[test]
    fn doubles_while_met_then_bisects_to_the_deepest_met_depth() {
        let mut target = LatencyTarget::new(&spec(false), 16, 0);
        assert!(!target.due(WINDOW - 1));
        // 1 met, 2 met, 4 missed, 3 met: 3 and 4 are neighbours.
        let steps = search(&mut target, 4);
        assert_eq!(
            steps,
            [
                Step::Depth(2),
                Step::Depth(4),
                Step::Depth(3),
                Step::Settled(3)
            ]
        );
        assert_eq!(target.found_depth(), 3);
    }

    #[test]
    fn a_device_that_meets_the_target_everywhere_settles_at_iodepth() {
        let mut target = LatencyTarget::new(&spec(false), 2, 0);
        assert_eq!(search(&mut target, 2), [Step::Depth(2), Step::Settled(2)]);
    }

    #[test]
    fn missing_at_depth_1_settles_at_1() {
        let mut target = LatencyTarget::new(&spec(false), 8, 0);
        for _ in 0..10 {
            target.record(500_000);
        }
        assert_eq!(target.close_window(WINDOW), Step::Settled(1));
        // An empty window misses too.
        let mut target = LatencyTarget::new(&spec(false), 8, 0);
        assert_eq!(target.close_window(WINDOW), Step::Settled(1));
    }

    #[test]
    fn the_percentile_decides_how_many_may_be_slow() {
        let mut target = LatencyTarget::new(&spec(false), 8, 0);
        // 9 of 10 within: exactly the 90th percentile.
        (0..9).for_each(|_| target.record(50_000));
        target.record(200_000);
        assert_eq!(target.close_window(WINDOW), Step::Depth(2));
        (0..8).for_each(|_| target.record(50_000));
        (0..2).for_each(|_| target.record(200_000));
        assert_eq!(target.close_window(2 * WINDOW), Step::Settled(1));
    }

    #[test]
    fn latency_run_keeps_adjusting_one_step_at_a_time() {
        let mut target = LatencyTarget::new(&spec(true), 16, 0);
        let steps = search(&mut target, 6);
        // Settled at 3, then 4 is tried, misses, and back to 3.
        assert_eq!(
            steps,
            [
                Step::Depth(2),
                Step::Depth(4),
                Step::Depth(3),
                Step::Depth(3),
                Step::Depth(4),
                Step::Depth(3)
            ]
        );
        assert_eq!(target.found_depth(), 3);
    }
}
