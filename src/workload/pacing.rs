//! When the next I/O may start: rate limits (`rate`, `rate_iops`,
//! `rate_process`) and think time (`thinktime`, `thinktime_spin`, `thinktime_blocks`).
//!
//! Time comes from an injectable [`Clock`], so the schedule is tested on a
//! [`FakeClock`] without sleeping.

use super::rng::{stream_rng, RngStream, WorkerRng};
use crate::job::spec::{Ddir, PacingSpec, RateProcess, DDIRS};
use iolens_sys::FastClock;
use rand_distr::{Distribution, Exp1};
#[cfg(test)]
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const NS_PER_SEC: u128 = 1_000_000_000;

/// A monotonic nanosecond clock that can wait.
pub(crate) trait Clock {
    fn now_ns(&self) -> u64;
    /// Return no earlier than `t` (at once if `t` has passed).
    fn sleep_until_ns(&self, t: u64);
    /// Like `sleep_until_ns`, but busy: think time that stands for CPU work.
    fn spin_until_ns(&self, t: u64) {
        while self.now_ns() < t {
            std::hint::spin_loop();
        }
    }
    /// Like `sleep_until_ns`, but ends early once `stop` is set, looked at every
    /// `STOP_CHECK_NS` at least: a pause (`thinktime=1h`, `rate_iops=1`) never holds a stop.
    fn pause_until_ns(&self, t: u64, stop: &AtomicBool) {
        loop {
            let now = self.now_ns();
            if now >= t || stop.load(Ordering::Relaxed) {
                return;
            }
            self.sleep_until_ns(t.min(now.saturating_add(STOP_CHECK_NS)));
        }
    }
}

/// The longest a pause goes without looking at its stop flag.
const STOP_CHECK_NS: u64 = 50_000_000;

/// A borrowed clock is a clock: a test keeps its [`FakeClock`] to read the
/// time and the waits after lending it to the code under test.
impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }

    fn sleep_until_ns(&self, t: u64) {
        (**self).sleep_until_ns(t)
    }

    fn spin_until_ns(&self, t: u64) {
        (**self).spin_until_ns(t)
    }

    fn pause_until_ns(&self, t: u64, stop: &AtomicBool) {
        (**self).pause_until_ns(t, stop)
    }
}

/// Real time, in nanoseconds since the clock was created (the TSC where the
/// kernel trusts it: timestamps are taken per I/O, so their cost matters).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MonotonicClock {
    clock: FastClock,
}

impl MonotonicClock {
    pub(crate) fn new() -> Self {
        Self {
            clock: FastClock::new(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn sleep_until_ns(&self, t: u64) {
        let now = self.now_ns();
        if t > now {
            std::thread::sleep(Duration::from_nanos(t - now));
        }
    }
}

#[cfg(test)]
/// Test time: stands still until someone sleeps or advances it. It notes the
/// end of each wait that moved it, so a test sees when its code chose to wait.
#[derive(Debug, Default)]
pub(crate) struct FakeClock {
    now: Cell<u64>,
    wakes: RefCell<Vec<u64>>,
}

#[cfg(test)]
impl FakeClock {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn advance(&self, ns: u64) {
        self.now.set(self.now.get() + ns);
    }

    /// The times at which each wait that moved the clock ended, in order.
    pub(crate) fn wakes(&self) -> Vec<u64> {
        self.wakes.borrow().clone()
    }
}

#[cfg(test)]
impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        self.now.get()
    }

    fn sleep_until_ns(&self, t: u64) {
        if t > self.now.get() {
            self.now.set(t);
            self.wakes.borrow_mut().push(t);
        }
    }

    fn spin_until_ns(&self, t: u64) {
        self.sleep_until_ns(t);
    }

    /// One wake at `t`, as a test expects of the decision, unless stopped already.
    fn pause_until_ns(&self, t: u64, stop: &AtomicBool) {
        if !stop.load(Ordering::Relaxed) {
            self.sleep_until_ns(t);
        }
    }
}

/// The schedule of one direction, counted from its anchor (its first I/O) so
/// rounding never accumulates into drift. As in fio, the I/O due next follows
/// from what was booked since then, never from when the last one went out: after
/// a stall the direction catches up on everything it missed, as fast as it can.
#[derive(Debug, Clone)]
struct DirectionSchedule {
    bytes_per_sec: u64,
    ios_per_sec: u64,
    anchor_ns: Option<u64>,
    booked_bytes: u64,
    booked_ios: u64,
    /// Poisson: sum of the random gaps booked since the anchor.
    booked_gaps_ns: f64,
}

impl DirectionSchedule {
    fn new(bytes_per_sec: u64, ios_per_sec: u64) -> Self {
        Self {
            bytes_per_sec,
            ios_per_sec,
            anchor_ns: None,
            booked_bytes: 0,
            booked_ios: 0,
            booked_gaps_ns: 0.0,
        }
    }

    fn is_limited(&self) -> bool {
        self.bytes_per_sec > 0 || self.ios_per_sec > 0
    }

    /// Time the given bytes and I/Os take at the stricter of the two limits.
    #[inline]
    fn cost_ns(&self, bytes: u64, ios: u64) -> u64 {
        let at_rate = |amount: u64, per_sec: u64| match per_sec {
            0 => 0,
            per_sec => (u128::from(amount) * NS_PER_SEC / u128::from(per_sec)) as u64,
        };
        at_rate(bytes, self.bytes_per_sec).max(at_rate(ios, self.ios_per_sec))
    }

    #[inline]
    fn booked_ns(&self, process: RateProcess) -> u64 {
        match process {
            RateProcess::Linear => self.cost_ns(self.booked_bytes, self.booked_ios),
            RateProcess::Poisson => self.booked_gaps_ns as u64,
        }
    }

    #[inline]
    fn book(&mut self, process: RateProcess, bytes: u64, rng: &mut WorkerRng) {
        match process {
            RateProcess::Linear => {
                self.booked_bytes += bytes;
                self.booked_ios += 1;
            }
            RateProcess::Poisson => {
                let mean_gap_ns = self.cost_ns(bytes, 1) as f64;
                let unit_exponential: f64 = Exp1.sample(rng);
                self.booked_gaps_ns += mean_gap_ns * unit_exponential;
            }
        }
    }
}

/// Rate limits per direction plus think time for one worker.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    process: RateProcess,
    schedules: [DirectionSchedule; DDIRS],
    thinktime_ns: u64,
    /// The busy part of each think time (≤ `thinktime_ns`).
    thinktime_spin_ns: u64,
    thinktime_blocks: u32,
    /// `thinktime_blocks_type=issue`: count issued I/Os, not completed ones.
    thinktime_counts_issued: bool,
    ios_since_think: u32,
    rng: WorkerRng,
    /// Nothing to pace (no rate, no think time): the hot loop skips the pacer.
    unpaced: bool,
}

impl Pacer {
    pub(crate) fn new(spec: &PacingSpec, seed: u64) -> Self {
        let schedules = Ddir::ALL.map(|ddir| {
            DirectionSchedule::new(spec.rate[ddir.index()], spec.rate_iops[ddir.index()])
        });
        Self {
            process: spec.rate_process,
            unpaced: spec.thinktime.is_zero()
                && !schedules.iter().any(DirectionSchedule::is_limited),
            schedules,
            thinktime_ns: nanos(spec.thinktime),
            thinktime_spin_ns: nanos(spec.thinktime_spin).min(nanos(spec.thinktime)),
            thinktime_blocks: spec.thinktime_blocks.max(1),
            thinktime_counts_issued: spec.thinktime_counts_issued,
            ios_since_think: 0,
            rng: stream_rng(seed, RngStream::Pacing),
        }
    }

    /// True when there is nothing to pace: the hot loop can skip the pacer.
    #[inline]
    pub(crate) fn is_unpaced(&self) -> bool {
        self.unpaced
    }

    /// True when a rate limits some direction: its I/Os have due times.
    pub(crate) fn is_rate_limited(&self) -> bool {
        self.schedules.iter().any(DirectionSchedule::is_limited)
    }

    /// The time the next I/O of `ddir` (of `bytes`) is due, and books it: None when
    /// no rate limits `ddir`. A due time at or before `now_ns` means it is late
    /// (or just in time) and may start at once.
    #[inline]
    pub(crate) fn issue_at(&mut self, now_ns: u64, ddir: Ddir, bytes: u64) -> Option<u64> {
        let schedule = &mut self.schedules[ddir.index()];
        if !schedule.is_limited() {
            return None;
        }
        let anchor_ns = *schedule.anchor_ns.get_or_insert(now_ns);
        let due_ns = anchor_ns + schedule.booked_ns(self.process);
        schedule.book(self.process, bytes, &mut self.rng);
        Some(due_ns)
    }

    /// The time an I/O of `ddir` of `bytes` takes at the rate (the mean gap
    /// with `rate_process=poisson`); 0 when no rate limits `ddir`.
    pub(crate) fn interval_ns(&self, ddir: Ddir, bytes: u64) -> u64 {
        self.schedules[ddir.index()].cost_ns(bytes, 1)
    }

    /// Nanoseconds to wait after the I/O just completed: the think time after
    /// every `thinktime_blocks` completions, otherwise 0 (always 0 when
    /// `thinktime_blocks` counts issued I/Os).
    #[inline]
    pub(crate) fn think_after_io(&mut self) -> u64 {
        if self.thinktime_counts_issued {
            return 0;
        }
        self.count_toward_think()
    }

    /// Nanoseconds to wait before issuing the next I/O: the think time once
    /// `thinktime_blocks` I/Os have been issued since the last one, otherwise 0
    /// (always 0 when `thinktime_blocks` counts completions).
    #[inline]
    pub(crate) fn think_before_issue(&mut self) -> u64 {
        if !self.thinktime_counts_issued {
            return 0;
        }
        self.count_toward_think()
    }

    /// One more I/O counted; the think time when it completes a block of
    /// `thinktime_blocks`, else 0.
    #[inline]
    fn count_toward_think(&mut self) -> u64 {
        if self.thinktime_ns == 0 {
            return 0;
        }
        self.ios_since_think += 1;
        if self.ios_since_think < self.thinktime_blocks {
            return 0;
        }
        self.ios_since_think = 0;
        self.thinktime_ns
    }

    /// How much of each think time is spent busy rather than asleep.
    #[inline]
    pub(crate) fn thinktime_spin_ns(&self) -> u64 {
        self.thinktime_spin_ns
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Limits for reads and writes; trims unlimited.
    fn spec(rate: [u64; 2], rate_iops: [u64; 2], process: RateProcess) -> PacingSpec {
        PacingSpec {
            rate: [rate[0], rate[1], 0],
            rate_iops: [rate_iops[0], rate_iops[1], 0],
            rate_process: process,
            thinktime: Duration::ZERO,
            thinktime_spin: Duration::ZERO,
            thinktime_blocks: 1,
            thinktime_counts_issued: false,
            flow: None,
        }
    }

    /// Issues `ios` I/Os of `ddirs` in turn, each as early as the pacer allows and
    /// taking `service_ns` to complete; returns the start times per direction.
    fn run(
        pacer: &mut Pacer,
        ddirs: &[Ddir],
        ios: usize,
        bytes: u64,
        service_ns: u64,
    ) -> [Vec<u64>; DDIRS] {
        let clock = FakeClock::new();
        let mut starts = [Vec::new(), Vec::new(), Vec::new()];
        for &ddir in ddirs.iter().cycle().take(ios) {
            if let Some(due) = pacer.issue_at(clock.now_ns(), ddir, bytes) {
                clock.sleep_until_ns(due);
            }
            starts[ddir.index()].push(clock.now_ns());
            clock.advance(service_ns);
        }
        starts
    }

    fn achieved_per_sec(starts: &[u64]) -> f64 {
        let span_ns = (starts[starts.len() - 1] - starts[0]) as f64;
        (starts.len() - 1) as f64 * 1e9 / span_ns
    }

    #[test]
    fn unlimited_pacer_is_unpaced_and_never_waits() {
        let mut pacer = Pacer::new(&spec([0, 0], [0, 0], RateProcess::Linear), 1);
        assert!(pacer.is_unpaced());
        assert!(!pacer.is_rate_limited());
        assert_eq!(pacer.issue_at(500, Ddir::Read, 4096), None);
        assert_eq!(pacer.think_after_io(), 0);
    }

    #[test]
    fn linear_iops_rate_is_met_without_drift() {
        // 3 IOPS: 333 333 333.3 ns apart, where a per-I/O rounding would drift
        let mut pacer = Pacer::new(&spec([0, 0], [3, 0], RateProcess::Linear), 1);
        assert!(!pacer.is_unpaced());
        let starts = run(&mut pacer, &[Ddir::Read], 10_001, 4096, 1_000);
        assert_eq!(starts[0][10_000], 10_000 * NS_PER_SEC as u64 / 3);
    }

    #[test]
    fn linear_byte_rate_within_one_percent() {
        let mut pacer = Pacer::new(&spec([0, 10 << 20], [0, 0], RateProcess::Linear), 1);
        let starts = run(&mut pacer, &[Ddir::Write], 10_000, 4096, 50_000);
        let bytes_per_sec = achieved_per_sec(&starts[1]) * 4096.0;
        assert!(
            (bytes_per_sec / f64::from(10 << 20) - 1.0).abs() < 0.01,
            "{bytes_per_sec}"
        );
    }

    #[test]
    fn the_stricter_limit_wins() {
        // 1 MiB/s of 64 KiB I/Os is 16 IOPS, stricter than 100 IOPS
        let mut pacer = Pacer::new(&spec([1 << 20, 0], [100, 0], RateProcess::Linear), 1);
        let starts = run(&mut pacer, &[Ddir::Read], 1_000, 64 << 10, 1_000);
        assert!((achieved_per_sec(&starts[0]) / 16.0 - 1.0).abs() < 0.01);
    }

    #[test]
    fn mixed_directions_keep_independent_rates() {
        let mut pacer = Pacer::new(&spec([0, 0], [3_000, 1_000], RateProcess::Linear), 1);
        let mix = [Ddir::Read, Ddir::Write, Ddir::Read, Ddir::Read];
        let starts = run(&mut pacer, &mix, 20_000, 4096, 10_000);
        assert!((achieved_per_sec(&starts[0]) / 3_000.0 - 1.0).abs() < 0.01);
        assert!((achieved_per_sec(&starts[1]) / 1_000.0 - 1.0).abs() < 0.01);
    }

    #[test]
    fn trims_have_their_own_rate() {
        let mut limits = spec([0, 0], [0, 0], RateProcess::Linear);
        limits.rate_iops[Ddir::Trim.index()] = 500;
        let mut pacer = Pacer::new(&limits, 1);
        assert!(!pacer.is_unpaced());
        let starts = run(&mut pacer, &[Ddir::Trim, Ddir::Write], 2_000, 4096, 1_000);
        assert!((achieved_per_sec(&starts[2]) / 500.0 - 1.0).abs() < 0.01);
        assert_eq!(starts[1][1] - starts[1][0], starts[2][1] - starts[2][0]);
    }

    #[test]
    fn a_long_stall_is_caught_up_in_full_as_in_fio() {
        let mut pacer = Pacer::new(&spec([0, 0], [1_000, 0], RateProcess::Linear), 1);
        assert!(pacer.is_rate_limited());
        assert_eq!(pacer.interval_ns(Ddir::Read, 4096), 1_000_000);
        let clock = FakeClock::new();
        pacer.issue_at(clock.now_ns(), Ddir::Read, 4096);
        clock.advance(10 * NS_PER_SEC as u64);
        let now = clock.now_ns();
        let immediate = (0..20_000)
            .take_while(|_| pacer.issue_at(now, Ddir::Read, 4096).unwrap() <= now)
            .count();
        // 1 ms per I/O: the 10 s stall owes 10 000 I/Os, all due at once; the
        // 10 001st (the one just taken) is the first on time again
        assert_eq!(immediate, 10_000);
    }

    #[test]
    fn poisson_mean_gap_within_five_percent() {
        let mut pacer = Pacer::new(&spec([0, 0], [2_000, 0], RateProcess::Poisson), 7);
        let starts = run(&mut pacer, &[Ddir::Read], 10_000, 4096, 0);
        let gaps: Vec<u64> = starts[0].windows(2).map(|pair| pair[1] - pair[0]).collect();
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean / 500_000.0 - 1.0).abs() < 0.05, "{mean}");
        // exponential gaps: about 1/e of them are longer than the mean
        let long = gaps.iter().filter(|&&gap| gap as f64 > 500_000.0).count() as f64;
        assert!((long / gaps.len() as f64 - (-1.0f64).exp()).abs() < 0.03);
    }

    #[test]
    fn thinktime_after_every_nth_io() {
        let mut spec = spec([0, 0], [0, 0], RateProcess::Linear);
        spec.thinktime = Duration::from_micros(250);
        spec.thinktime_blocks = 3;
        let mut pacer = Pacer::new(&spec, 1);
        assert!(!pacer.is_unpaced());
        let thinks: Vec<u64> = (0..9).map(|_| pacer.think_after_io()).collect();
        assert_eq!(thinks, [0, 0, 250_000, 0, 0, 250_000, 0, 0, 250_000]);
        // Counting completions, the issue side never thinks.
        assert!((0..9).all(|_| pacer.think_before_issue() == 0));
    }

    #[test]
    fn thinktime_blocks_type_issue_thinks_before_issuing_instead() {
        let mut spec = spec([0, 0], [0, 0], RateProcess::Linear);
        spec.thinktime = Duration::from_micros(100);
        spec.thinktime_blocks = 2;
        spec.thinktime_counts_issued = true;
        let mut pacer = Pacer::new(&spec, 1);
        assert!((0..4).all(|_| pacer.think_after_io() == 0));
        let thinks: Vec<u64> = (0..4).map(|_| pacer.think_before_issue()).collect();
        assert_eq!(thinks, [0, 100_000, 0, 100_000]);
    }

    #[test]
    fn thinktime_spin_is_at_most_the_thinktime() {
        let mut spec = spec([0, 0], [0, 0], RateProcess::Linear);
        spec.thinktime = Duration::from_micros(100);
        spec.thinktime_spin = Duration::from_micros(40);
        assert_eq!(Pacer::new(&spec, 1).thinktime_spin_ns(), 40_000);
        spec.thinktime_spin = Duration::from_micros(400);
        assert_eq!(Pacer::new(&spec, 1).thinktime_spin_ns(), 100_000);
    }

    #[test]
    fn spinning_waits_without_giving_up_the_cpu() {
        let clock = MonotonicClock::new();
        let before = iolens_sys::os::thread_rusage().unwrap();
        let deadline = clock.now_ns() + 5_000_000;
        clock.spin_until_ns(deadline);
        assert!(clock.now_ns() >= deadline);
        // A sleep would switch away voluntarily at least once.
        let after = iolens_sys::os::thread_rusage().unwrap();
        assert_eq!(after.voluntary_ctxsw, before.voluntary_ctxsw);
    }

    #[test]
    fn monotonic_clock_sleeps_until_the_deadline() {
        let clock = MonotonicClock::new();
        let deadline = clock.now_ns() + 2_000_000;
        clock.sleep_until_ns(deadline);
        assert!(clock.now_ns() >= deadline);
    }

    /// Steps through `FakeClock`'s plain sleep, as the real clock's pause does.
    struct Stepping(FakeClock);

    impl Clock for Stepping {
        fn now_ns(&self) -> u64 {
            self.0.now_ns()
        }
        fn sleep_until_ns(&self, t: u64) {
            self.0.sleep_until_ns(t);
        }
    }

    #[test]
    fn a_pause_looks_at_its_stop_flag_every_step_and_ends_once_it_is_set() {
        let clock = Stepping(FakeClock::new());
        let stop = AtomicBool::new(false);
        clock.pause_until_ns(120_000_000, &stop);
        assert_eq!(clock.0.wakes(), [50_000_000, 100_000_000, 120_000_000]);
        stop.store(true, Ordering::Relaxed);
        clock.pause_until_ns(3_600_000_000_000, &stop);
        assert_eq!(clock.0.now_ns(), 120_000_000);
    }
}
