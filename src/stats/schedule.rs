//! One worker's record of its rate schedule: when each rate-limited I/O was due
//! and when it went out, the stalls in which nothing could be issued though I/Os
//! were due, and the latencies counted from the due times (the "corrected"
//! latency that coordinated omission hides from the usual percentiles).
//! Recording never allocates: the stalls keep a fixed handful, the longest.

use crate::job::spec::DDIRS;
use crate::model::{ScheduleReport, Stall};
use crate::stats::histogram::LatHistogram;
use serde::{Deserialize, Serialize};

/// The stalls kept, the longest ones.
const MAX_STALLS: usize = 4;

/// An I/O is late when it starts more than two intervals at the rate, and more
/// than this, after its due time: a sleep's overshoot or a busy scheduler is not.
const LATE_FLOOR_NS: u64 = 1_000_000;

/// Seconds of the series of I/Os behind kept for a job without `runtime`.
const UNTIMED_SECONDS: usize = 3_600;

/// The longest series of I/Os behind kept, in seconds (a day).
const MAX_SECONDS: usize = 86_400;

const NS_PER_SEC: u64 = 1_000_000_000;

/// What a rate-limited worker's schedule looked like while it was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ScheduleStats {
    ios: u64,
    late_ios: u64,
    max_behind_ns: u64,
    max_behind_at_ns: u64,
    max_behind_ios: u64,
    end_behind_ios: u64,
    /// Longest first, at most `MAX_STALLS`.
    stalls: Vec<Stall>,
    /// [read, write, trim]: due time to completion.
    corrected: [LatHistogram; DDIRS],
    /// Per second of measured time, the most I/Os due and not yet issued; as
    /// long as the last second with a late I/O, never beyond its capacity.
    behind: Vec<u64>,
    /// When the last rate-limited I/O went out (the worker's clock).
    #[serde(skip)]
    last_issue_ns: u64,
    /// When it was due, until its completion is counted or it is queued.
    #[serde(skip)]
    last_due_ns: Option<u64>,
    /// Per buffer slot of an engine that queues: when the I/O in it was due,
    /// and its direction.
    #[serde(skip)]
    due_by_slot: Vec<Option<(u64, usize)>>,
}

impl ScheduleStats {
    /// An empty record for a job of `runtime` (None: until its size is done),
    /// whose series of I/Os behind has room for every second of it, for a
    /// queue of `slots` buffer slots.
    pub(crate) fn new(runtime: Option<std::time::Duration>, slots: usize) -> Self {
        let seconds = runtime.map_or(UNTIMED_SECONDS, |r| r.as_secs() as usize + 2);
        ScheduleStats {
            ios: 0,
            late_ios: 0,
            max_behind_ns: 0,
            max_behind_at_ns: 0,
            max_behind_ios: 0,
            end_behind_ios: 0,
            // one more than kept, so that adding a stall never allocates
            stalls: Vec::with_capacity(MAX_STALLS + 1),
            corrected: Default::default(),
            behind: Vec::with_capacity(seconds.min(MAX_SECONDS)),
            last_issue_ns: 0,
            last_due_ns: None,
            due_by_slot: vec![None; slots],
        }
    }
}

/// How late an I/O may start and still count as on time.
fn late_after_ns(interval_ns: u64) -> u64 {
    (2 * interval_ns).max(LATE_FLOOR_NS)
}

impl ScheduleStats {
    /// An I/O due at `due_ns` goes out at `issue_ns`, `interval_ns` after the one
    /// before it at the rate; the worker began measuring at `since_ns`.
    #[inline]
    pub(crate) fn issued(&mut self, due_ns: u64, issue_ns: u64, interval_ns: u64, since_ns: u64) {
        self.ios += 1;
        self.last_due_ns = Some(due_ns);
        let previous_ns = std::mem::replace(&mut self.last_issue_ns, issue_ns);
        let behind_ns = issue_ns.saturating_sub(due_ns);
        let behind_ios = behind_ns / interval_ns.max(1);
        self.end_behind_ios = behind_ios;
        if behind_ns > late_after_ns(interval_ns) {
            self.late(
                due_ns,
                issue_ns,
                previous_ns,
                behind_ios,
                interval_ns,
                since_ns,
            );
        }
    }

    #[cold]
    fn late(
        &mut self,
        due_ns: u64,
        issue_ns: u64,
        previous_ns: u64,
        behind_ios: u64,
        interval_ns: u64,
        since_ns: u64,
    ) {
        self.late_ios += 1;
        let behind_ns = issue_ns - due_ns;
        if behind_ns > self.max_behind_ns {
            self.max_behind_ns = behind_ns;
            self.max_behind_at_ns = due_ns.saturating_sub(since_ns);
            self.max_behind_ios = behind_ios;
        }
        self.note_behind(due_ns, issue_ns, interval_ns, since_ns);
        // nothing went out from the later of its due time and the I/O before it
        let idle_from_ns = due_ns.max(previous_ns);
        let len_ns = issue_ns.saturating_sub(idle_from_ns);
        if len_ns > late_after_ns(interval_ns) {
            self.add_stall(Stall {
                at_ns: idle_from_ns.saturating_sub(since_ns),
                len_ns,
                missed_ios: len_ns / interval_ns.max(1),
            });
        }
    }

    /// The I/Os behind grew from none at `due_ns` to one per `interval_ns` by
    /// `issue_ns`: each second that spans keeps its most.
    fn note_behind(&mut self, due_ns: u64, issue_ns: u64, interval_ns: u64, since_ns: u64) {
        let second_of = |ns: u64| ns.saturating_sub(since_ns) / NS_PER_SEC;
        for second in second_of(due_ns)..=second_of(issue_ns) {
            let index = second as usize;
            // within the capacity reserved, so that recording never allocates
            if index >= self.behind.capacity() {
                break;
            }
            if index >= self.behind.len() {
                self.behind.resize(index + 1, 0);
            }
            let until_ns = issue_ns.min(since_ns + (second + 1) * NS_PER_SEC);
            let behind = until_ns.saturating_sub(due_ns) / interval_ns.max(1);
            self.behind[index] = self.behind[index].max(behind);
        }
    }

    fn add_stall(&mut self, stall: Stall) {
        self.stalls.push(stall);
        self.stalls
            .sort_unstable_by_key(|s| std::cmp::Reverse(s.len_ns));
        self.stalls.truncate(MAX_STALLS);
    }

    /// The last I/O issued, of direction `ddir`, completed at `end_ns` (the
    /// worker's clock): its latency from its due time. Only for an I/O issued
    /// since this record began, at or after its due time.
    #[inline]
    pub(crate) fn completed_inline(&mut self, ddir: usize, end_ns: u64) {
        let due_ns = self.last_due_ns.take();
        self.record_corrected(ddir, due_ns, end_ns);
    }

    /// The last I/O issued, of direction `ddir`, was queued in buffer slot `slot`.
    #[inline]
    pub(crate) fn queued(&mut self, slot: u32, ddir: usize) {
        let due_ns = self.last_due_ns.take();
        if let Some(entry) = self.due_by_slot.get_mut(slot as usize) {
            *entry = due_ns.map(|due| (due, ddir));
        }
    }

    /// The I/O queued in `slot` completed at `end_ns`: its latency from its due
    /// time, if this record saw it queued.
    #[inline]
    pub(crate) fn completed_in_slot(&mut self, slot: u32, end_ns: u64) {
        let queued = self
            .due_by_slot
            .get_mut(slot as usize)
            .and_then(Option::take);
        if let Some((due_ns, ddir)) = queued {
            self.record_corrected(ddir, Some(due_ns), end_ns);
        }
    }

    #[inline]
    fn record_corrected(&mut self, ddir: usize, due_ns: Option<u64>, end_ns: u64) {
        // an I/O the job's end let out before its due time has no place here
        if let Some(due_ns) = due_ns.filter(|&due| due <= end_ns) {
            self.corrected[ddir].record(end_ns - due_ns);
        }
    }

    pub(crate) fn merge(&mut self, other: &ScheduleStats) {
        self.ios += other.ios;
        self.late_ios += other.late_ios;
        if other.max_behind_ns > self.max_behind_ns {
            self.max_behind_ns = other.max_behind_ns;
            self.max_behind_at_ns = other.max_behind_at_ns;
            self.max_behind_ios = other.max_behind_ios;
        }
        self.end_behind_ios += other.end_behind_ios;
        for &stall in &other.stalls {
            self.add_stall(stall);
        }
        for (mine, theirs) in self.corrected.iter_mut().zip(&other.corrected) {
            mine.merge(theirs);
        }
        if self.behind.len() < other.behind.len() {
            self.behind.resize(other.behind.len(), 0);
        }
        for (mine, theirs) in self.behind.iter_mut().zip(&other.behind) {
            *mine += theirs;
        }
    }

    /// The model's view, with `percentiles` of the corrected latencies.
    pub(crate) fn report(&self, percentiles: &[f64]) -> ScheduleReport {
        ScheduleReport {
            ios: self.ios,
            late_ios: self.late_ios,
            max_behind_ns: self.max_behind_ns,
            max_behind_at_ns: self.max_behind_at_ns,
            max_behind_ios: self.max_behind_ios,
            end_behind_ios: self.end_behind_ios,
            stalls: self.stalls.clone(),
            behind_per_second: self.behind.clone(),
            corrected: self
                .corrected
                .each_ref()
                .map(|h| (h.count() > 0).then(|| h.summary(percentiles))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// 200 IOPS (5 ms apart) from 0, on time but for a stall: nothing goes out
    /// from `stall_from` for `stall_len`, then the backlog goes out at once.
    fn paced_with_stall(ios: u64, stall_from: u64, stall_len: u64) -> ScheduleStats {
        let mut stats = ScheduleStats::new(None, 1);
        let mut now = 0;
        for n in 0..ios {
            let due = n * 5 * MS;
            if due >= stall_from && now < stall_from + stall_len {
                now = stall_from + stall_len;
            }
            now = now.max(due);
            stats.issued(due, now, 5 * MS, 0);
            stats.completed_inline(1, now + 100_000);
        }
        stats
    }

    #[test]
    fn on_time_ios_are_neither_late_nor_stalled() {
        let stats = paced_with_stall(1_000, u64::MAX / 2, 0).report(&[50.0, 99.0]);
        assert_eq!(
            (stats.ios, stats.late_ios, stats.end_behind_ios),
            (1_000, 0, 0)
        );
        assert!(stats.stalls.is_empty());
        assert!(stats.behind_per_second.is_empty());
        assert_eq!(stats.max_behind_ns, 0);
        let corrected = stats.corrected[1].as_ref().unwrap();
        assert!(corrected.max_ns < MS, "{corrected:?}");
        assert!(stats.corrected[0].is_none());
    }

    #[test]
    fn a_stall_is_found_with_when_how_long_and_what_it_missed() {
        let stats = paced_with_stall(1_000, 1_000 * MS, 1_500 * MS).report(&[50.0, 99.0]);
        assert_eq!(stats.stalls.len(), 1, "{:?}", stats.stalls);
        let stall = stats.stalls[0];
        assert_eq!(
            (stall.at_ns, stall.len_ns, stall.missed_ios),
            (1_000 * MS, 1_500 * MS, 300)
        );
        // the I/Os due during the stall went out at its end, late but for the
        // last two (within two intervals of their due times)
        assert_eq!(stats.late_ios, 298);
        assert_eq!(stats.max_behind_ns, 1_500 * MS);
        assert_eq!(stats.max_behind_at_ns, 1_000 * MS);
        assert_eq!(stats.max_behind_ios, 300);
        // behind from 1 s, 200 I/Os by 2 s, 300 at 2.5 s, caught up then
        assert_eq!(stats.behind_per_second, [0, 200, 300]);
        // counted from their due times, the waits show: p99 is over a second
        let p99 = stats.corrected[1].as_ref().unwrap().percentiles[1].1;
        assert!(p99 > 1_000 * MS, "{p99}");
    }

    #[test]
    fn a_completion_counts_only_for_an_io_this_record_saw_issued() {
        let mut stats = ScheduleStats::new(None, 1);
        stats.completed_inline(0, 7 * MS);
        stats.issued(5 * MS, 6 * MS, MS, 0);
        stats.completed_inline(0, 7 * MS);
        stats.completed_inline(0, 9 * MS);
        stats.issued(20 * MS, 10 * MS, MS, 0);
        stats.completed_inline(0, 11 * MS);
        let corrected = stats.report(&[]).corrected[0].clone().unwrap();
        assert_eq!((corrected.samples, corrected.max_ns), (1, 2 * MS));
    }

    #[test]
    fn a_queued_io_is_counted_from_its_due_time_when_its_slot_completes() {
        let mut stats = ScheduleStats::new(None, 4);
        stats.issued(5 * MS, 5 * MS, MS, 0);
        stats.queued(2, 1);
        stats.issued(6 * MS, 6 * MS, MS, 0);
        stats.queued(3, 0);
        // slot 3 first; slot 1 held nothing of this record
        stats.completed_in_slot(3, 9 * MS);
        stats.completed_in_slot(1, 9 * MS);
        stats.completed_in_slot(2, 12 * MS);
        stats.completed_in_slot(2, 13 * MS);
        let report = stats.report(&[]);
        let [read, write, _] = report.corrected.map(|c| c.map(|c| (c.samples, c.max_ns)));
        assert_eq!((read, write), (Some((1, 3 * MS)), Some((1, 7 * MS))));
    }

    #[test]
    fn merging_keeps_the_longest_stalls_and_sums_the_counts() {
        let mut all = ScheduleStats::new(None, 1);
        for len in [10, 50, 30, 20, 40] {
            all.merge(&paced_with_stall(1_000, 1_000 * MS, len * 5 * MS));
        }
        let report = all.report(&[]);
        let lens: Vec<u64> = report.stalls.iter().map(|s| s.missed_ios).collect();
        assert_eq!(lens, [50, 40, 30, 20]);
        assert_eq!(report.ios, 5_000);
        assert_eq!(report.max_behind_ios, 50);
        assert_eq!(report.behind_per_second, [0, 10 + 50 + 30 + 20 + 40]);
    }

    #[test]
    fn the_series_of_ios_behind_stays_within_the_seconds_reserved() {
        let mut stats = ScheduleStats::new(Some(std::time::Duration::from_secs(2)), 1);
        assert_eq!(stats.behind.capacity(), 4);
        // due at 1 s, out at 10 s: the series keeps its first 4 seconds
        stats.issued(NS_PER_SEC, 10 * NS_PER_SEC, NS_PER_SEC / 10, 0);
        assert_eq!(stats.report(&[]).behind_per_second, [0, 10, 20, 30]);
        assert_eq!(stats.behind.capacity(), 4);
    }
}
