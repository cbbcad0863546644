//! The time of a supervising loop without the time this process was stopped
//! (SIGSTOP, a suspended machine) or starved: what it watches did not run
//! meanwhile, so neither the watchdog nor a rank waiting for the others may
//! hold that time against them.

use std::time::Duration;

/// A call this long after the one before: this process was stopped or starved,
/// and the others' silence meanwhile is not theirs to answer for.
pub(super) const FROZEN_GAP: Duration = Duration::from_secs(2);

/// The time of a loop that looks at something every few milliseconds, less the
/// gaps longer than `FROZEN_GAP` between its looks: time this process was
/// stopped or starved, in which what it watches did not run either.
#[derive(Debug, Default)]
pub(super) struct LookClock {
    last: Duration,
    frozen: Duration,
}

impl LookClock {
    /// The time at a look `elapsed` after the start; None at the first look after a gap.
    pub(super) fn at(&mut self, elapsed: Duration) -> Option<Duration> {
        let gap = elapsed.saturating_sub(self.last);
        self.last = elapsed;
        if gap > FROZEN_GAP {
            self.frozen += gap;
            return None;
        }
        Some(elapsed.saturating_sub(self.frozen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_clock_leaves_out_the_gaps_between_looks() {
        let mut clock = LookClock::default();
        let ms = Duration::from_millis;
        assert_eq!(clock.at(ms(10)), Some(ms(10)));
        assert_eq!(
            clock.at(ms(1900)),
            Some(ms(1900)),
            "expected a short gap kept"
        );
        assert_eq!(
            clock.at(ms(31_900)),
            None,
            "expected nothing at the first look after a gap"
        );
        assert_eq!(
            clock.at(ms(31_910)),
            Some(ms(1910)),
            "expected the 30 s gap left out"
        );
    }
}
