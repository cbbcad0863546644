//! A cheap monotonic nanosecond clock for per-I/O timestamps.
//!
//! Every I/O is timestamped at least twice, so the clock's cost is part of the
//! tool's cost per I/O. Where the kernel itself keeps time with the TSC (its
//! current clocksource is `tsc`, so the counter is invariant and synchronised
//! across CPUs), reading the TSC directly is about half the cost of
//! `clock_gettime`; elsewhere the clock falls back to `std::time::Instant`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the TSC is compared against CLOCK_MONOTONIC to learn its rate.
const CALIBRATION: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy)]
enum Source {
    /// `ns = ticks * ns_per_tick_q32 >> 32`
    Tsc {
        start_ticks: u64,
        ns_per_tick_q32: u64,
    },
    Monotonic {
        start: Instant,
    },
}

/// Nanoseconds since the clock was created.
#[derive(Debug, Clone, Copy)]
pub struct FastClock {
    source: Source,
}

impl FastClock {
    /// A clock that starts at 0 now (the TSC when the kernel trusts it, else CLOCK_MONOTONIC).
    pub fn new() -> Self {
        let source = match tsc_rate() {
            Some(ns_per_tick_q32) => Source::Tsc {
                start_ticks: read_tsc(),
                ns_per_tick_q32,
            },
            None => Source::Monotonic {
                start: Instant::now(),
            },
        };
        FastClock { source }
    }

    /// Nanoseconds since `new`.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        match self.source {
            Source::Tsc {
                start_ticks,
                ns_per_tick_q32,
            } => {
                let ticks = read_tsc().wrapping_sub(start_ticks);
                ((u128::from(ticks) * u128::from(ns_per_tick_q32)) >> 32) as u64
            }
            Source::Monotonic { start } => start.elapsed().as_nanos() as u64,
        }
    }

    /// "tsc" or "clock_gettime", for the record.
    pub fn source_name(&self) -> &'static str {
        match self.source {
            Source::Tsc { .. } => "tsc",
            Source::Monotonic { .. } => "clock_gettime",
        }
    }
}

impl Default for FastClock {
    fn default() -> Self {
        Self::new()
    }
}

/// Learn the TSC's rate now (it takes about 20 ms, once per process) rather
/// than inside the first worker's timed run.
pub fn calibrate() {
    tsc_rate();
}

/// `CLOCK_MONOTONIC` in nanoseconds: one time base for every process of a run.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The TSC's rate in ns per tick (Q32 fixed point), learned once per process;
/// None where the TSC is not the kernel's clocksource.
fn tsc_rate() -> Option<u64> {
    static RATE: OnceLock<Option<u64>> = OnceLock::new();
    *RATE.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") || !kernel_trusts_tsc() {
            return None;
        }
        let (t0, c0) = (Instant::now(), read_tsc());
        std::thread::sleep(CALIBRATION);
        let (t1, c1) = (Instant::now(), read_tsc());
        let ticks = c1.checked_sub(c0).filter(|&t| t > 0)?;
        let ns = (t1 - t0).as_nanos();
        u64::try_from((ns << 32) / u128::from(ticks)).ok()
    })
}

fn kernel_trusts_tsc() -> bool {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .is_ok_and(|s| s.trim() == "tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter; every x86_64 CPU has it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn read_tsc() -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_ns_advances_with_real_time() {
        let before = monotonic_ns();
        std::thread::sleep(Duration::from_millis(5));
        assert!(monotonic_ns() - before >= 5_000_000);
    }

    #[test]
    fn is_monotonic_and_agrees_with_the_system_clock() {
        let clock = FastClock::new();
        let wall = Instant::now();
        let mut last = clock.now_ns();
        for _ in 0..100_000 {
            let now = clock.now_ns();
            assert!(now >= last, "went backwards: {last} -> {now}");
            last = now;
        }
        std::thread::sleep(Duration::from_millis(50));
        let ours = clock.now_ns() as f64;
        let theirs = wall.elapsed().as_nanos() as f64;
        // Both measure the same interval; they agree to well within 1%.
        assert!(
            (ours / theirs - 1.0).abs() < 0.01,
            "{} vs {theirs} ({})",
            ours,
            clock.source_name()
        );
    }
}
