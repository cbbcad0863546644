//! A run on several ranks, at the end of each group: this rank's end is
//! announced to the others and theirs heard, a rank silent past the group's
//! deadline (or the liveness limit) is taken as hung, and what this rank moved
//! while every rank was active is noted for the report.

use crate::model::RankGroup;
use crate::observe::live::LiveTotals;
use crate::runner::alive::{Doing, Liveness};
use crate::runner::look_clock::LookClock;
use crate::runner::ranks::ClusterLink;

/// Follows the other ranks through one group: this rank's end is announced and
/// theirs heard (never a blocking wait); at the first end, any rank's, this
/// rank's counters are noted: what it moved while every rank was active.
pub(super) struct GroupEnds<'a> {
    link: &'a dyn ClusterLink,
    alive: &'a Liveness<'a>,
    /// Per rank, when its workers ended, ns after the group's start.
    ends: Vec<Option<u64>>,
    first: Option<FirstEnd>,
    /// Past this (ns after the group's start) a rank not heard from is taken as
    /// hung; None when the group has no planned time (bound by size): then a
    /// rank silent past the liveness limit is.
    deadline_ns: Option<u64>,
    /// The group's time less the time this process was stopped.
    clock: LookClock,
    /// Why the wait was given up: the ranks taken as hung.
    hung: Option<String>,
}

/// A group's end on this rank: what it saw, and why other ranks were taken as hung.
pub(super) type RankEnd = (RankGroup, Option<String>);

/// The first end of a group on any rank, and this rank's counters when it heard of it.
struct FirstEnd {
    at_ns: u64,
    totals: LiveTotals,
    heard_at_ns: u64,
}

impl<'a> GroupEnds<'a> {
    pub(super) fn new(alive: &'a Liveness<'a>, deadline: Option<std::time::Duration>) -> Self {
        let link = alive.link();
        GroupEnds {
            link,
            alive,
            ends: vec![None; link.ranks() as usize],
            first: None,
            deadline_ns: deadline.map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
            clock: LookClock::default(),
            hung: None,
        }
    }

    /// Whether the supervisor waits on: until every rank ended, or one is taken as
    /// hung, or the run was `stopped` (a stopped rank waits for no other, and
    /// judges none: it may have been stopped for long, as the others ended the run).
    pub(super) fn waiting(&mut self, now_ns: u64, stopped: bool) -> bool {
        if stopped {
            return false;
        }
        // time this process could not look does not count against the others
        let now = self.clock.at(std::time::Duration::from_nanos(now_ns));
        if let Some(now) = now.filter(|_| self.hung.is_none()) {
            self.hung = self.overdue(now.as_nanos() as u64);
        }
        !self.all_done() && self.hung.is_none()
    }

    /// A rank was taken as hung: the group ends here too.
    pub(super) fn gave_up(&self) -> bool {
        self.hung.is_some()
    }

    /// Why the group's wait ends without the ranks not heard from: what the first
    /// rank said; else, once this rank's workers ended, those ranks past the
    /// deadline, or with no deadline, those silent past the liveness limit.
    fn overdue(&self, now_ns: u64) -> Option<String> {
        let mine = self.link.rank().rank as usize;
        let group = || Doing::new("waiting for the other ranks to end the group");
        if self.ends[mine].is_none() {
            return self.alive.told();
        }
        let Some(deadline) = self.deadline_ns else {
            return self
                .alive
                .hung(&|rank| self.ends[rank as usize].is_none(), &group);
        };
        if let Some(why) = self.alive.hung(&|_| false, &group) {
            return Some(why);
        }
        if now_ns <= deadline {
            return None;
        }
        let silent: Vec<String> = (0..)
            .zip(&self.ends)
            .filter(|(_, end)| end.is_none())
            .map(|(rank, _)| format!("rank {rank} on {}", self.link.host_of(rank)))
            .collect();
        (!silent.is_empty()).then(|| {
            format!(
                "{} did not end the group within {:.0} s (its planned time and three of the watchdog's margins): taken as hung",
                silent.join(", "),
                deadline as f64 / 1e9
            )
        })
    }

    /// One look by the group's supervisor, `now_ns` after the group's start: `done`
    /// says whether this rank's workers all ended, `totals` reads its counters.
    /// True when the group's first end was heard of just now.
    pub(super) fn look(
        &mut self,
        now_ns: u64,
        done: bool,
        totals: impl FnOnce() -> LiveTotals,
    ) -> bool {
        let mine = self.link.rank().rank as usize;
        if done && self.ends[mine].is_none() {
            self.ends[mine] = Some(now_ns);
            self.link.announce_done(now_ns);
        }
        for (rank, at_ns) in self.link.heard_done() {
            if let Some(end) = self.ends.get_mut(rank as usize) {
                *end = Some(at_ns);
            }
        }
        let first = self.ends.iter().flatten().min().copied();
        match (first, &self.first) {
            (Some(at_ns), None) => {
                self.first = Some(FirstEnd {
                    at_ns,
                    totals: totals(),
                    heard_at_ns: now_ns,
                });
                true
            }
            _ => false,
        }
    }

    /// Every rank's workers of the group ended.
    fn all_done(&self) -> bool {
        self.ends.iter().all(Option::is_some)
    }

    /// The group as this rank saw it (`start_unix_ns`: when the barrier let it
    /// go), and why other ranks were taken as hung, if they were.
    pub(super) fn finish(self, start_unix_ns: u64) -> RankEnd {
        (self.record(start_unix_ns), self.hung.clone())
    }

    fn record(&self, start_unix_ns: u64) -> RankGroup {
        let mine = self.link.rank().rank as usize;
        let first = self.first.as_ref();
        RankGroup {
            start_unix_ns,
            end_ns: self.ends[mine].unwrap_or(0),
            first_end_ns: first.map_or(0, |f| f.at_ns),
            active_ns: first.map_or(0, |f| f.heard_at_ns),
            active_bytes: first.map_or([0; 2], |f| f.totals.bytes),
            active_ios: first.map_or([0; 2], |f| f.totals.ios),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ranks::tests::fake;

    const S: u64 = 1_000_000_000;

    fn totals(bytes: u64) -> LiveTotals {
        LiveTotals {
            bytes: [bytes, 0],
            ..Default::default()
        }
    }

    #[test]
    fn the_first_end_heard_snapshots_this_ranks_counters_once() {
        let link = fake();
        let alive = Liveness::new(&link, std::time::Duration::from_secs(60));
        let mut ends = GroupEnds::new(&alive, None);
        assert!(!ends.look(S, false, || totals(1)), "expected no end yet");
        assert!(
            ends.waiting(S, false),
            "expected to wait while no rank ended"
        );
        link.inbox.borrow_mut().push((2, S / 2));
        assert!(
            ends.look(S + 1, false, || totals(100)),
            "expected rank 2's end heard as the first"
        );
        assert!(
            !ends.look(2 * S, true, || totals(999)),
            "expected the snapshot taken once"
        );
        assert_eq!(
            *link.sent.borrow(),
            [2 * S],
            "expected this rank's end announced once"
        );
        link.inbox.borrow_mut().push((1, 3 * S));
        ends.look(3 * S, true, || totals(999));
        assert!(
            !ends.waiting(3 * S, false),
            "expected the wait over once every rank ended"
        );
        let (group, hung) = ends.finish(5);
        assert_eq!(
            (
                group.end_ns,
                group.first_end_ns,
                group.active_ns,
                group.active_bytes[0],
                hung
            ),
            (2 * S, S / 2, S + 1, 100, None),
            "expected this rank's end, rank 2's first end and the snapshot when it was heard"
        );
    }

    #[test]
    fn a_rank_silent_past_the_deadline_is_named_as_hung_and_a_stopped_rank_waits_for_none() {
        let link = fake();
        let alive = Liveness::new(&link, std::time::Duration::from_secs(60));
        let mut ends = GroupEnds::new(&alive, Some(std::time::Duration::from_secs(5)));
        link.inbox.borrow_mut().push((1, S));
        ends.look(S, true, || totals(0));
        for t in (1..=10).map(|t| t * S / 2) {
            assert!(
                ends.waiting(t, false),
                "expected to wait for rank 2 until the deadline, not at {t} ns"
            );
        }
        assert!(
            !ends.waiting(11 * S / 2, false),
            "expected the wait given up past the deadline"
        );
        let (_, hung) = ends.finish(0);
        let hung = hung.expect("expected a reason");
        assert!(
            hung.starts_with("rank 2 on h2 did not end the group within 5 s"),
            "expected rank 2 and its host named, saw: {hung}"
        );
        let mut stopped = GroupEnds::new(&alive, Some(std::time::Duration::from_secs(5)));
        stopped.look(S, true, || totals(0));
        assert!(
            !stopped.waiting(S, true),
            "expected a stopped rank to end its group without the silent ranks"
        );
        assert!(
            !stopped.waiting(1000 * S, true) && stopped.finish(0).1.is_none(),
            "expected a stopped rank to name no rank"
        );
    }

    #[test]
    fn a_rank_resumed_after_being_stopped_does_not_count_its_own_stop_against_the_others() {
        let link = fake();
        let alive = Liveness::new(&link, std::time::Duration::from_secs(60));
        let mut ends = GroupEnds::new(&alive, Some(std::time::Duration::from_secs(5)));
        ends.look(S, true, || totals(0));
        assert!(ends.waiting(S, false), "expected to wait for ranks 1 and 2");
        // SIGSTOP at 1 s, SIGCONT at 40 s: past the deadline, but the others had 4 s
        assert!(
            ends.waiting(40 * S, false),
            "expected the time this rank was stopped not to count"
        );
        assert!(
            ends.waiting(41 * S, false),
            "expected the rest of the deadline given after the resume"
        );
    }

    #[test]
    fn a_size_bound_group_gives_up_on_a_rank_silent_past_the_limit_once_its_own_workers_ended() {
        use crate::runner::alive::{alive_news, on_clock};
        let link = fake();
        let start = std::time::Instant::now();
        let clock = std::cell::Cell::new(start);
        let alive = on_clock(&link, std::time::Duration::from_secs(5), &clock);
        let mut ends = GroupEnds::new(&alive, None);
        let running = || alive_news(Doing::new("running the group"));
        link.inbox.borrow_mut().push((1, S));
        let mut hung_at = None;
        for t in (1..=60).map(|t| t * S / 2) {
            clock.set(start + std::time::Duration::from_nanos(t));
            // rank 2 says it is alive for 10 s, then falls silent
            if t <= 10 * S {
                link.news.borrow_mut().push((2, running()));
            }
            // this rank's workers end at 20 s: no judging before (the
            // supervisor says the rank runs the group meanwhile)
            if t < 20 * S {
                alive.say(&|| Doing::new("running the group"));
            }
            ends.look(t, t >= 20 * S, || totals(0));
            if !ends.waiting(t, false) {
                hung_at = Some(t);
                break;
            }
        }
        assert_eq!(
            hung_at,
            Some(20 * S),
            "expected rank 2 given up on once this rank's workers ended, rank 2 silent past 5 s"
        );
        let (_, hung) = ends.finish(0);
        let hung = hung.expect("expected a reason");
        assert!(
            hung.starts_with(
                "rank 2 on h2: silent for 10 s while running the group: taken as hung"
            ),
            "expected rank 2, its host and its last word named, saw: {hung}"
        );
    }
}
