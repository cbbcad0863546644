//! `rate_min` / `rate_iops_min`: a job that moves less than its floor over a
//! `rate_cycle` window fails.
//!
//! As in fio, the first seconds are a settling period that is never judged
//! (queues fill, caches warm); after it each window of `rate_cycle` is
//! judged on its own, per direction.

use crate::job::spec::{Ddir, RunControlSpec, DDIRS};

/// Time after the start of measuring before the first window opens.
const SETTLE_NS: u64 = 2_000_000_000;

/// Bytes and I/Os done so far in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Done {
    pub bytes: u64,
    pub ios: u64,
}

#[derive(Debug, Clone)]
pub(super) struct RateFloor {
    min_bytes_per_sec: [u64; DDIRS],
    min_ios_per_sec: [u64; DDIRS],
    cycle_ns: u64,
    window_start_ns: u64,
    /// False during the settling period: the first window has not opened.
    judging: bool,
    at_window_start: [Done; DDIRS],
}

impl RateFloor {
    /// None when the job sets no minimum rate.
    pub(super) fn new(spec: &RunControlSpec, measure_start_ns: u64) -> Option<Self> {
        spec.has_rate_min().then(|| Self {
            min_bytes_per_sec: spec.rate_min,
            min_ios_per_sec: spec.rate_iops_min,
            cycle_ns: (spec.rate_cycle.as_nanos() as u64).max(1),
            window_start_ns: measure_start_ns + SETTLE_NS,
            judging: false,
            at_window_start: [Done::default(); DDIRS],
        })
    }

    /// True when a window (or the settling period) has ended by `now_ns`.
    #[inline]
    pub(super) fn due(&self, now_ns: u64) -> bool {
        let end = if self.judging {
            self.window_start_ns + self.cycle_ns
        } else {
            self.window_start_ns
        };
        now_ns >= end
    }

    /// Close the window at `now_ns` given the running totals [read, write, trim]; the
    /// reason the job fails when a direction fell below its floor.
    #[cold]
    pub(super) fn check(&mut self, now_ns: u64, done: [Done; DDIRS]) -> Result<(), FloorMissed> {
        let spent_ns = now_ns.saturating_sub(self.window_start_ns).max(1);
        let was_judging = self.judging;
        let before = std::mem::replace(&mut self.at_window_start, done);
        self.window_start_ns = now_ns;
        self.judging = true;
        if !was_judging {
            return Ok(());
        }
        for ddir in Ddir::ALL {
            let d = ddir.index();
            let per_sec = |now: u64, then: u64| {
                (u128::from(now - then) * 1_000_000_000 / u128::from(spent_ns)) as u64
            };
            let window_ms = spent_ns / 1_000_000;
            let bytes_per_sec = per_sec(done[d].bytes, before[d].bytes);
            let floor = self.min_bytes_per_sec[d];
            if floor > 0 && bytes_per_sec < floor {
                return Err(FloorMissed::Bytes {
                    ddir,
                    floor,
                    rate: bytes_per_sec,
                    window_ms,
                });
            }
            let ios_per_sec = per_sec(done[d].ios, before[d].ios);
            let floor = self.min_ios_per_sec[d];
            if floor > 0 && ios_per_sec < floor {
                return Err(FloorMissed::Ios {
                    ddir,
                    floor,
                    rate: ios_per_sec,
                    window_ms,
                });
            }
        }
        Ok(())
    }
}

/// A direction that moved less than its floor over a window: why the job fails.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum FloorMissed {
    /// Below `rate_min`.
    #[error("{} rate_min={floor}B/s not met: {rate}B/s over {window_ms} ms", ddir.name())]
    Bytes {
        /// The direction.
        ddir: Ddir,
        /// Its floor, bytes/s.
        floor: u64,
        /// What it moved, bytes/s.
        rate: u64,
        /// The window's length.
        window_ms: u64,
    },
    /// Below `rate_iops_min`.
    #[error("{} rate_iops_min={floor} not met: {rate} IOPS over {window_ms} ms", ddir.name())]
    Ios {
        /// The direction.
        ddir: Ddir,
        /// Its floor, IOPS.
        floor: u64,
        /// What it did, IOPS.
        rate: u64,
        /// The window's length.
        window_ms: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const MS: u64 = 1_000_000;

    fn spec(rate_min: [u64; DDIRS], rate_iops_min: [u64; DDIRS], cycle_ms: u64) -> RunControlSpec {
        RunControlSpec {
            exitall: false,
            exit_what: crate::job::spec::ExitWhat::Group,
            wait_for: None,
            max_latency_ns: [0; DDIRS],
            rate_min,
            rate_iops_min,
            rate_cycle: Duration::from_millis(cycle_ms),
            steadystate: None,
            latency_target: None,
        }
    }

    fn reads(bytes: u64, ios: u64) -> [Done; DDIRS] {
        [Done { bytes, ios }, Done::default(), Done::default()]
    }

    #[test]
    fn off_without_a_floor() {
        assert!(RateFloor::new(&spec([0; DDIRS], [0; DDIRS], 1000), 0).is_none());
    }

    #[test]
    fn the_settling_period_is_never_judged_then_each_window_is() {
        let mut floor = RateFloor::new(&spec([0; DDIRS], [100, 0, 0], 500), 0).unwrap();
        assert!(!floor.due(1_999 * MS));
        assert!(floor.due(2_000 * MS));
        // Nothing at all during the settling period: not judged.
        assert_eq!(floor.check(2_000 * MS, reads(0, 0)), Ok(()));
        assert!(!floor.due(2_499 * MS));
        // 60 I/Os in 500 ms = 120 IOPS: above the floor.
        assert_eq!(floor.check(2_500 * MS, reads(0, 60)), Ok(()));
        // 40 more in the next 500 ms = 80 IOPS: below.
        let failure = floor.check(3_000 * MS, reads(0, 100)).unwrap_err();
        assert_eq!(
            failure.to_string(),
            "read rate_iops_min=100 not met: 80 IOPS over 500 ms"
        );
    }

    #[test]
    fn bandwidth_floors_are_per_direction() {
        let mut floor = RateFloor::new(&spec([0, 1 << 20, 0], [0; DDIRS], 1000), 0).unwrap();
        floor.check(2_000 * MS, [Done::default(); DDIRS]).unwrap();
        // Reads are not limited; writes moved 2 MiB in a second.
        let done = [
            Done { bytes: 0, ios: 0 },
            Done {
                bytes: 2 << 20,
                ios: 512,
            },
            Done::default(),
        ];
        assert_eq!(floor.check(3_000 * MS, done), Ok(()));
        let done = [
            Done { bytes: 0, ios: 0 },
            Done {
                bytes: 5 << 19,
                ios: 640,
            },
            Done::default(),
        ];
        let failure = floor.check(4_000 * MS, done).unwrap_err();
        assert_eq!(
            failure.to_string(),
            "write rate_min=1048576B/s not met: 524288B/s over 1000 ms"
        );
    }
}
