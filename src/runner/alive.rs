//! Whether the other ranks of a run on several hosts are alive, so that no rank
//! waits forever for one that hangs where no time is planned: at the cluster
//! barrier before each group (behind it: laying out, opening, pre_read,
//! exec_prerun, and between groups logs, rank files, exec_postrun), at the end
//! of a group bound by size, and before the results are gathered.
//!
//! Each rank says what it is doing (`Doing`) from the points where it makes
//! progress, at most once a second. Who tells whom keeps the volume linear in
//! the ranks: every rank but the first tells the first, and the first tells
//! every other. A rank sends and receives one message a second, the first rank
//! N−1 of each (the first rank also receives every rank's results: it is the
//! one that must scale anyway); every rank telling every rank would be N²
//! messages a second, a million at 1000 ranks. So the first rank judges the
//! others, and the others judge the first.
//!
//! A rank judges only while it waits for the others (at the barrier; at a
//! group's end once its own workers ended): a rank silent for longer than the
//! limit is taken as hung. The first rank tells the others; they write their
//! rank files and say so, and it ends the run once they did (or after a grace).
//! A rank that finds the first rank silent writes its file, gives the others a
//! moment (they see the same silence) and ends the run.
//!
//! Time this process could not look (it was stopped with SIGSTOP, or starved)
//! is not held against the others: after such a gap every rank gets a fresh
//! limit, so a rank resumed after the others ended the run does not name them.

use super::look_clock::FROZEN_GAP;
use super::ranks::ClusterLink;
use crate::fileset::{Progress, Step};
use crate::units::format_value;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// How often a rank says what it is doing.
const EVERY: Duration = Duration::from_secs(1);
/// How often the others' news is read, when this rank calls in.
const READ_EVERY: Duration = Duration::from_millis(100);
/// The least silence taken as hung: five messages that did not come.
const MIN_LIMIT: Duration = Duration::from_secs(5);
/// How long the first rank waits for the others' files before it ends the run.
const GRACE: Duration = Duration::from_secs(5);
/// How long a rank that found the first rank silent waits before it ends the run.
const PAUSE: Duration = Duration::from_secs(2);

/// How long a rank may stay silent before the others take it as hung: as long as
/// the watchdog lets one I/O of a job bound by size take (a step of setup is
/// such an I/O: a write of a layout, an open, an exec_prerun), or `--io-timeout`
/// when given (the user's own word for a stuck I/O), but never under five of the
/// messages a live rank sends.
pub(super) fn silence_limit(io_timeout: Option<Duration>) -> Duration {
    io_timeout.map_or(super::watchdog::SIZE_BOUND_HANG, |t| t.max(MIN_LIMIT))
}

/// What a rank says it is doing: "laying out /shared/f.3 (1.20 GiB of 4.00 GiB)".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Doing {
    pub what: String,
    /// The file (or command) it works on; empty when none.
    pub on: String,
    pub done: u64,
    /// 0 when the step does not count bytes toward an end.
    pub total: u64,
}

impl Doing {
    pub(super) fn new(what: impl Into<String>) -> Self {
        Doing {
            what: what.into(),
            ..Doing::default()
        }
    }

    fn of(step: Step<'_>) -> Self {
        Doing {
            what: step.doing.to_string(),
            on: step.on.to_string(),
            done: step.done,
            total: step.total,
        }
    }
}

impl std::fmt::Display for Doing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)?;
        if !self.on.is_empty() {
            write!(f, " {}", self.on)?;
        }
        let bytes = |n: u64| format_value(n as f64, "B");
        match (self.done, self.total) {
            (done, total) if total > 0 => write!(f, " ({} of {})", bytes(done), bytes(total)),
            (done, _) if done > 0 => write!(f, " ({} done)", bytes(done)),
            _ => Ok(()),
        }
    }
}

/// What ranks tell each other.
#[derive(Debug, Serialize, Deserialize)]
enum News {
    Alive(Doing),
    /// From the first rank: a rank was taken as hung (why); end the run.
    Hung(String),
    /// To the first rank: this rank's file is written.
    Written,
}

/// A rank as this rank last heard of it.
#[derive(Debug, Clone)]
struct Heard {
    at: Instant,
    doing: Option<Doing>,
    written: bool,
}

/// This rank's side of the liveness messages.
pub(super) struct Liveness<'a> {
    link: &'a dyn ClusterLink,
    limit: Duration,
    clock: Box<dyn Fn() -> Instant + 'a>,
    state: RefCell<State>,
}

struct State {
    /// When this rank last told, last read the others' news, last called in.
    sent: Option<Instant>,
    /// The phase it last told (`Doing::what`).
    said: String,
    read: Option<Instant>,
    called: Instant,
    /// By rank.
    heard: Vec<Heard>,
    /// What the first rank said when it took a rank as hung.
    told_hung: Option<String>,
}

impl<'a> Liveness<'a> {
    pub(super) fn new(link: &'a dyn ClusterLink, limit: Duration) -> Self {
        Self::with_clock(link, limit, Box::new(Instant::now))
    }

    fn with_clock(
        link: &'a dyn ClusterLink,
        limit: Duration,
        clock: Box<dyn Fn() -> Instant + 'a>,
    ) -> Self {
        let now = clock();
        let heard = Heard {
            at: now,
            doing: None,
            written: false,
        };
        Liveness {
            link,
            limit,
            clock,
            state: RefCell::new(State {
                sent: None,
                said: String::new(),
                read: None,
                called: now,
                heard: vec![heard; link.ranks() as usize],
                told_hung: None,
            }),
        }
    }

    pub(super) fn link(&self) -> &'a dyn ClusterLink {
        self.link
    }

    /// The ranks this rank tells and judges: every other on the first rank, the
    /// first on the others.
    fn peers(&self) -> std::ops::Range<u32> {
        match self.link.rank().rank {
            0 => 1..self.link.ranks(),
            _ => 0..1,
        }
    }

    /// Say what this rank does.
    pub(super) fn say(&self, doing: &dyn Fn() -> Doing) {
        self.call_in((self.clock)(), doing);
    }

    /// Read the others' news and tell mine, each when due; true when it read.
    fn call_in(&self, now: Instant, doing: &dyn Fn() -> Doing) -> bool {
        let mut state = self.state.borrow_mut();
        if now.saturating_duration_since(state.called) > FROZEN_GAP {
            for heard in &mut state.heard {
                heard.at = heard.at.max(now);
            }
        }
        state.called = now;
        let send_due = state.sent.is_none_or(|at| now >= at + EVERY);
        let read_due = state.read.is_none_or(|at| now >= at + READ_EVERY);
        // once a second, and at once when the phase changed (the last word
        // before a rank hangs names the step it hangs in)
        let doing = doing();
        if send_due || doing.what != state.said {
            state.sent = Some(now);
            state.said.clone_from(&doing.what);
            let news = serde_json::to_vec(&News::Alive(doing)).expect("news is plain data");
            self.peers().for_each(|rank| self.link.tell(rank, &news));
        }
        if !read_due {
            return false;
        }
        state.read = Some(now);
        for (from, bytes) in self.link.heard() {
            let Some(heard) = state.heard.get_mut(from as usize) else {
                continue;
            };
            heard.at = now;
            match serde_json::from_slice(&bytes) {
                Ok(News::Alive(doing)) => heard.doing = Some(doing),
                Ok(News::Written) => heard.written = true,
                Ok(News::Hung(why)) => state.told_hung = Some(why),
                // a rank of another iolens version: it is alive all the same
                Err(_) => {}
            }
        }
        true
    }

    /// Called while this rank waits for the ranks `awaited` says it waits for,
    /// doing `doing`: why the run must end (ranks silent past the limit, or what
    /// the first rank said), or None while all is well.
    pub(super) fn hung(
        &self,
        awaited: &dyn Fn(u32) -> bool,
        doing: &dyn Fn() -> Doing,
    ) -> Option<String> {
        self.hung_at((self.clock)(), awaited, doing)
    }

    fn hung_at(
        &self,
        now: Instant,
        awaited: &dyn Fn(u32) -> bool,
        doing: &dyn Fn() -> Doing,
    ) -> Option<String> {
        let read = self.call_in(now, doing);
        let state = self.state.borrow();
        if let Some(why) = &state.told_hung {
            return Some(why.clone());
        }
        if !read {
            return None;
        }
        let silent: Vec<String> = self
            .peers()
            .filter(|&rank| awaited(rank))
            .filter_map(|rank| {
                let heard = &state.heard[rank as usize];
                let quiet = now.saturating_duration_since(heard.at);
                (quiet > self.limit).then(|| {
                    let doing = heard
                        .doing
                        .clone()
                        .unwrap_or_else(|| Doing::new("starting"));
                    format!(
                        "rank {rank} on {}: silent for {:.0} s while {doing}",
                        self.link.host_of(rank),
                        quiet.as_secs_f64()
                    )
                })
            })
            .collect();
        (!silent.is_empty()).then(|| {
            format!(
                "{}: taken as hung (no word for over {:.0} s; see --io-timeout)",
                silent.join("; "),
                self.limit.as_secs_f64()
            )
        })
    }

    /// What the first rank said when it took a rank as hung, if it did (as of
    /// the last call).
    pub(super) fn told(&self) -> Option<String> {
        self.state.borrow().told_hung.clone()
    }

    /// End the run for `reason`, this rank's file written (`saved` says where the
    /// files are, when there are any). The first rank tells the others and waits for their files; a
    /// rank the first rank told says its file is written and waits for the end;
    /// a rank that found the first rank silent gives the others a moment.
    pub(super) fn abort(&self, reason: &str, saved: Option<&str>) -> ! {
        let ending = || Doing::new("ending the run");
        if self.link.rank().rank == 0 {
            let news = serde_json::to_vec(&News::Hung(reason.to_string())).expect("plain data");
            self.peers().for_each(|rank| self.link.tell(rank, &news));
            let start = Instant::now();
            while start.elapsed() < GRACE && !self.all_written((self.clock)()) {
                std::thread::sleep(READ_EVERY / 10);
                self.say(&ending);
            }
        } else if self.state.borrow().told_hung.is_some() {
            let news = serde_json::to_vec(&News::Written).expect("plain data");
            self.link.tell(0, &news);
            // the first rank ends the run meanwhile
            std::thread::sleep(2 * GRACE);
        } else {
            std::thread::sleep(PAUSE);
        }
        match saved {
            Some(saved) => self.link.abort(&format!("{reason}; {saved}")),
            None => self.link.abort(reason),
        }
    }

    /// Every rank heard from within the limit has written its file.
    fn all_written(&self, now: Instant) -> bool {
        let state = self.state.borrow();
        self.peers().all(|rank| {
            let heard = &state.heard[rank as usize];
            heard.written || now.saturating_duration_since(heard.at) > self.limit
        })
    }
}

impl Progress for Liveness<'_> {
    fn step(&self, step: Step<'_>) {
        self.say(&|| Doing::of(step));
    }
}

/// What a rank saying it does `doing` sends.
#[cfg(test)]
pub(super) fn alive_news(doing: Doing) -> Vec<u8> {
    serde_json::to_vec(&News::Alive(doing)).unwrap()
}

/// A liveness on `link` whose clock is `clock`, which the test sets.
#[cfg(test)]
pub(super) fn on_clock<'a>(
    link: &'a dyn ClusterLink,
    limit: Duration,
    clock: &'a std::cell::Cell<Instant>,
) -> Liveness<'a> {
    Liveness::with_clock(link, limit, Box::new(|| clock.get()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ranks::tests::{fake, fake_as, FakeLink};

    const S: Duration = Duration::from_secs(1);

    /// A liveness whose clock stays at `start` (the tests give their times).
    fn start_at(link: &FakeLink, limit: Duration, start: Instant) -> Liveness<'_> {
        Liveness::with_clock(link, limit, Box::new(move || start))
    }

    fn news(news: &News) -> Vec<u8> {
        serde_json::to_vec(news).unwrap()
    }

    fn laying_out(done: u64) -> Doing {
        Doing {
            what: "laying out".into(),
            on: "/shared/f.2".into(),
            done,
            total: 4 << 30,
        }
    }

    fn waiting() -> Doing {
        Doing::new("waiting at the cluster barrier")
    }

    /// A message from `from` saying it does `doing`, waiting to be read.
    fn hear(link: &FakeLink, from: u32, doing: Doing) {
        link.news.borrow_mut().push((from, alive_news(doing)));
    }

    #[test]
    fn a_rank_silent_past_the_limit_is_hung_with_the_last_thing_it_said() {
        let link = fake();
        let start = Instant::now();
        let alive = start_at(&link, 30 * S, start);
        hear(&link, 1, waiting());
        hear(&link, 2, laying_out(1288490188));
        assert_eq!(alive.hung_at(start + S, &|_| true, &waiting), None);
        for t in (2..=40).map(|t| start + t * S) {
            hear(&link, 1, waiting());
            let verdict = alive.hung_at(t, &|_| true, &waiting);
            if t <= start + 31 * S {
                assert_eq!(verdict, None, "expected no verdict within the limit");
            } else {
                let why = verdict.expect("expected rank 2 taken as hung past the limit");
                assert!(
                    why.starts_with(
                        "rank 2 on h2: silent for 31 s while laying out /shared/f.2 (1.20 GiB of 4.00 GiB): taken as hung"
                    ),
                    "expected rank 2 named with its host and last step, saw: {why}"
                );
                return;
            }
        }
        panic!("expected a verdict by 40 s");
    }

    #[test]
    fn a_rank_that_keeps_saying_it_lays_out_is_never_hung() {
        let link = fake();
        let start = Instant::now();
        let alive = start_at(&link, 5 * S, start);
        for t in 1..600u32 {
            hear(&link, 1, waiting());
            hear(&link, 2, laying_out(u64::from(t) << 20));
            let verdict = alive.hung_at(start + t * S, &|_| true, &waiting);
            assert_eq!(verdict, None, "expected a slow but alive rank never hung");
        }
    }

    #[test]
    fn ranks_not_awaited_are_not_judged() {
        let link = fake();
        let start = Instant::now();
        let alive = start_at(&link, 5 * S, start);
        for t in 1..=60 {
            let verdict = alive.hung_at(start + t * S, &|_| false, &waiting);
            assert_eq!(verdict, None, "expected ranks not waited for never hung");
        }
        let verdict = alive.hung_at(start + 61 * S, &|rank| rank == 1, &waiting);
        assert!(
            verdict.as_deref().is_some_and(|v| v
                .starts_with("rank 1 on h1: silent for 61 s while starting")
                && !v.contains("rank 2")),
            "expected only the awaited rank 1 judged, saw: {verdict:?}"
        );
    }

    #[test]
    fn time_this_rank_could_not_look_is_not_held_against_the_others() {
        let link = fake();
        let start = Instant::now();
        let alive = start_at(&link, 5 * S, start);
        alive.hung_at(start + S, &|_| true, &waiting);
        // stopped for a minute, then resumed: the others get a fresh limit
        let mut t = start + 61 * S;
        while t <= start + 66 * S {
            let verdict = alive.hung_at(t, &|_| true, &waiting);
            assert_eq!(
                verdict, None,
                "expected no verdict within a limit of the resume"
            );
            t += S / 2;
        }
        let verdict = alive.hung_at(start + 67 * S, &|_| true, &waiting);
        assert!(
            verdict
                .as_deref()
                .is_some_and(|v| v.contains("silent for 6 s")),
            "expected the silence counted from the resume, saw: {verdict:?}"
        );
    }

    #[test]
    fn the_first_rank_tells_everyone_once_a_second_and_the_others_tell_it_only() {
        let link = fake();
        let start = Instant::now();
        let first = start_at(&link, 5 * S, start);
        for ms in (0..3000).step_by(10) {
            first.call_in(start + Duration::from_millis(ms), &waiting);
        }
        let to: Vec<u32> = link.told.borrow().iter().map(|(to, _)| *to).collect();
        assert_eq!(
            to,
            [1, 2, 1, 2, 1, 2],
            "expected ranks 1 and 2 told once a second for 3 s"
        );
        let other = fake_as(2);
        let second = start_at(&other, 5 * S, start);
        for ms in (0..3000).step_by(10) {
            second.call_in(start + Duration::from_millis(ms), &waiting);
        }
        let to: Vec<u32> = other.told.borrow().iter().map(|(to, _)| *to).collect();
        assert_eq!(to, [0, 0, 0], "expected rank 2 to tell rank 0 only");
        let said: News = serde_json::from_slice(&other.told.borrow()[0].1).unwrap();
        assert!(
            matches!(&said, News::Alive(d) if *d == waiting()),
            "expected what the rank does, saw {said:?}"
        );
    }

    #[test]
    fn a_new_phase_is_told_at_once_and_a_new_file_once_a_second() {
        let link = fake_as(1);
        let start = Instant::now();
        let alive = start_at(&link, 5 * S, start);
        let ms = Duration::from_millis;
        let layout = |on: &str| Doing {
            on: on.into(),
            ..laying_out(0)
        };
        alive.call_in(start, &|| layout("/f.1"));
        alive.call_in(start + ms(10), &|| layout("/f.2"));
        alive.call_in(start + ms(20), &waiting);
        alive.call_in(start + ms(30), &waiting);
        let said: Vec<String> = link
            .told
            .borrow()
            .iter()
            .map(|(_, bytes)| match serde_json::from_slice(bytes) {
                Ok(News::Alive(doing)) => doing.to_string(),
                other => panic!("expected what rank 1 does, saw {other:?}"),
            })
            .collect();
        assert_eq!(
            said,
            [
                "laying out /f.1 (0.0 B of 4.00 GiB)",
                "waiting at the cluster barrier"
            ],
            "expected the first step, not the next file within the second, and the new phase at once"
        );
    }

    #[test]
    fn a_rank_other_than_the_first_judges_the_first_and_hears_its_verdict() {
        let link = fake_as(1);
        let start = Instant::now();
        let alive = start_at(&link, 5 * S, start);
        for t in 1..=5 {
            alive.hung_at(start + t * S, &|_| true, &waiting);
        }
        let verdict = alive.hung_at(start + 6 * S, &|_| true, &waiting);
        assert!(
            verdict
                .as_deref()
                .is_some_and(|v| v.starts_with("rank 0 on h0: silent for 6 s")),
            "expected rank 0 judged by rank 1 (rank 2 not), saw: {verdict:?}"
        );
        let link = fake_as(2);
        let alive = start_at(&link, 5 * S, start);
        link.news
            .borrow_mut()
            .push((0, news(&News::Hung("rank 1 on h1: silent".into()))));
        let verdict = alive.hung_at(start + S, &|_| true, &waiting);
        assert_eq!(
            verdict.as_deref(),
            Some("rank 1 on h1: silent"),
            "expected the first rank's verdict"
        );
    }

    #[test]
    fn the_first_rank_waits_for_the_files_of_live_ranks_only() {
        let link = fake();
        let start = Instant::now();
        let alive = start_at(&link, 5 * S, start);
        hear(&link, 1, waiting());
        alive.call_in(start, &waiting);
        assert!(
            !alive.all_written(start + S),
            "expected to wait for rank 1 and 2's files"
        );
        link.news.borrow_mut().push((1, news(&News::Written)));
        alive.call_in(start + 2 * S, &waiting);
        assert!(
            !alive.all_written(start + 2 * S),
            "expected to wait for rank 2 while it may be alive"
        );
        assert!(
            alive.all_written(start + 8 * S),
            "expected silent rank 2 not waited for"
        );
    }

    #[test]
    fn the_first_rank_tells_the_others_and_ends_the_run_once_their_files_are_written() {
        let link = fake();
        let alive = Liveness::new(&link, 5 * S);
        link.news
            .borrow_mut()
            .extend([(1, news(&News::Written)), (2, news(&News::Written))]);
        let started = Instant::now();
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            alive.abort("rank 9 on h9: silent", Some("the files are in d"))
        }));
        let message = ended
            .expect_err("expected the run ended")
            .downcast::<String>()
            .expect("a message");
        assert_eq!(
            *message, "aborted: rank 9 on h9: silent; the files are in d",
            "expected the reason and where the files are"
        );
        assert!(
            started.elapsed() < GRACE,
            "expected no wait for the grace once every file was written"
        );
        let hung: Vec<u32> = link
            .told
            .borrow()
            .iter()
            .filter(|(_, bytes)| matches!(serde_json::from_slice(bytes), Ok(News::Hung(_))))
            .map(|(to, _)| *to)
            .collect();
        assert_eq!(hung, [1, 2], "expected ranks 1 and 2 told why the run ends");
    }

    #[test]
    fn the_limit_is_the_watchdogs_for_one_io_or_the_io_timeout_but_at_least_five_seconds() {
        assert_eq!(silence_limit(None), Duration::from_secs(60));
        assert_eq!(
            silence_limit(Some(Duration::from_secs(20))),
            Duration::from_secs(20)
        );
        assert_eq!(
            silence_limit(Some(Duration::from_millis(500))),
            Duration::from_secs(5)
        );
    }
}
