//! Kernel wait channels (`/proc/<pid>/task/<tid>/wchan`): the function a
//! sleeping thread is blocked in. Sampled at ~100 Hz, the share of samples in
//! `balance_dirty_pages` or `folio_wait_bit*` measures writeback throttling.

use crate::model::WaitTime;

/// The wait channel in a `wchan` file's text; None while the thread runs
/// (the kernel writes "0") or when the file is empty.
#[inline]
pub(crate) fn parse(text: &str) -> Option<&str> {
    let name = text.trim();
    (!name.is_empty() && name != "0").then_some(name)
}

/// Time per wait channel, from periodic samples. Allocates only when a
/// channel is seen for the first time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WaitTally {
    pub waits: Vec<WaitTime>,
}

impl WaitTally {
    /// Count one sample of `period_ns` spent in `wchan`.
    pub(crate) fn add(&mut self, wchan: &str, period_ns: u64) {
        match self.waits.iter_mut().find(|w| w.wchan == wchan) {
            Some(w) => w.time_ns += period_ns,
            None => self.waits.push(WaitTime {
                wchan: wchan.to_string(),
                time_ns: period_ns,
            }),
        }
    }

    /// Merge another tally into this one.
    pub(crate) fn absorb(&mut self, other: &WaitTally) {
        for w in &other.waits {
            self.add(&w.wchan, w.time_ns);
        }
    }

    /// The tally, longest wait first, leaving this one empty.
    pub(crate) fn take_sorted(&mut self) -> Vec<WaitTime> {
        let mut waits = std::mem::take(&mut self.waits);
        waits.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.wchan.cmp(&b.wchan)));
        waits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_threads_have_no_channel() {
        assert_eq!(parse("0"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("balance_dirty_pages\n"), Some("balance_dirty_pages"));
        assert_eq!(
            parse("folio_wait_bit_common"),
            Some("folio_wait_bit_common")
        );
    }

    #[test]
    fn tally_adds_per_channel_and_sorts_longest_first() {
        let mut t = WaitTally::default();
        t.add("folio_wait_bit_common", 10);
        t.add("balance_dirty_pages", 10);
        t.add("balance_dirty_pages", 10);
        let mut other = WaitTally::default();
        other.add("do_get_write_access", 5);
        other.add("folio_wait_bit_common", 5);
        t.absorb(&other);
        let sorted = t.take_sorted();
        let pairs: Vec<(&str, u64)> = sorted
            .iter()
            .map(|w| (w.wchan.as_str(), w.time_ns))
            .collect();
        assert_eq!(
            pairs,
            [
                ("balance_dirty_pages", 20),
                ("folio_wait_bit_common", 15),
                ("do_get_write_access", 5)
            ]
        );
        assert!(t.waits.is_empty());
    }
}
