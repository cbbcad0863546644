//! The other hosts of a run, as its groups meet them: `Peers` is called at four
//! points (before a group starts, at each tick of its supervisor, when it has
//! ended, when the run ends). A run on one host has none (`OneHost`, which
//! does nothing); a run on several MPI ranks has `RankPeers`: the cluster
//! barrier, the liveness news, the ranks' ends of each group and the rank files
//! written as each group ends. A rank taken as hung ends the run at any of
//! these points, once this rank's file is written (`ClusterLink::abort`).

use super::rank_ends::GroupEnds;
use crate::observe::live::LiveTotals;
use crate::runner::alive::{Doing, Liveness};
use crate::runner::ranks::{self, ClusterLink};
use crate::runner::{plan, stop_signal, Gathered, RunRequest};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What the other hosts take part in.
pub(in crate::runner) trait Peers {
    /// Before group `number`'s workers go (they wait at its start barrier):
    /// wait until every peer is there too. False when the run was stopped
    /// meanwhile: the group does not start here. `deadline`: past this a peer
    /// that has not ended the group is taken as hung (None: bound by size).
    fn before_start(
        &mut self,
        number: usize,
        deadline: Option<Duration>,
        so_far: &Gathered,
    ) -> bool;
    /// Each tick of the group's supervisor, `now_ns` after the group's start:
    /// `here` says whether this host's workers still run, `totals` reads their
    /// counters.
    fn tick(&mut self, now_ns: u64, here: bool, totals: &dyn Fn() -> LiveTotals) -> PeersWord;
    /// The group has ended here and its results are in `so_far`.
    fn group_end(&mut self, so_far: &mut Gathered);
    /// Every group has ended here (or the run was stopped): wait for the peers.
    fn run_end(&mut self, so_far: &Gathered);
}

/// What the peers say at a tick.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(in crate::runner) struct PeersWord {
    /// The group's first end, any host's, was heard of just now: a group that
    /// ends together (time-based, exitall) stops here too.
    pub first_end: bool,
    /// A peer was taken as hung: the group stops here.
    pub gave_up: bool,
    /// The supervisor keeps waiting for the peers to end the group.
    pub waiting: bool,
}

/// A run on one host: nobody to wait for or tell.
pub(in crate::runner) struct OneHost;

impl Peers for OneHost {
    fn before_start(&mut self, _: usize, _: Option<Duration>, _: &Gathered) -> bool {
        true
    }

    fn tick(&mut self, _: u64, _: bool, _: &dyn Fn() -> LiveTotals) -> PeersWord {
        PeersWord::default()
    }

    fn group_end(&mut self, _: &mut Gathered) {}

    fn run_end(&mut self, _: &Gathered) {}
}

/// The other ranks of a run on several hosts (MPI).
pub(in crate::runner) struct RankPeers<'a> {
    req: &'a RunRequest<'a>,
    alive: &'a Liveness<'a>,
    started_unix_ms: u64,
    /// The running group's number (1-based), for what this rank says it does.
    group: usize,
    /// The running group's ends; None before it starts (or when it did not).
    ends: Option<GroupEnds<'a>>,
    /// When the running group's workers went, ns since the Unix epoch.
    group_started_unix_ns: u64,
}

impl<'a> RankPeers<'a> {
    pub(crate) fn new(
        req: &'a RunRequest<'a>,
        alive: &'a Liveness<'a>,
        started_unix_ms: u64,
    ) -> Self {
        RankPeers {
            req,
            alive,
            started_unix_ms,
            group: 0,
            ends: None,
            group_started_unix_ns: 0,
        }
    }

    /// The cluster barrier, `doing` what this rank says while it waits: why the
    /// run must end when a rank was taken as hung meanwhile (None once every
    /// rank is there, or this rank was stopped).
    fn barrier(&self, doing: &Doing) -> Option<String> {
        // the barrier polls every 100 µs; the others are looked at every 10 ms
        const LOOK_EVERY: Duration = Duration::from_millis(10);
        let mut hung = None;
        let mut looked: Option<Instant> = None;
        self.alive.link().barrier(self.req.stop, &mut || {
            if looked.is_none_or(|at| at.elapsed() >= LOOK_EVERY) {
                looked = Some(Instant::now());
                hung = self.alive.hung(&|_| true, &|| doing.clone());
            }
            hung.is_none()
        });
        hung
    }

    /// Write this rank's results so far (when it keeps a rank file); when a rank
    /// was taken as hung (`hung` says why), then end the run.
    fn save(&self, so_far: &Gathered, hung: Option<String>) {
        let saved = self.req.rank_file.map(|path| {
            write_rank_file(
                self.req,
                self.alive.link(),
                path,
                so_far,
                self.started_unix_ms,
            );
            format!(
                "every rank's results so far are in {} (iolens merge DIR reports them)",
                path.parent().unwrap_or(path).display()
            )
        });
        if let Some(why) = hung {
            self.alive.abort(&why, saved.as_deref());
        }
    }
}

impl Peers for RankPeers<'_> {
    fn before_start(
        &mut self,
        number: usize,
        deadline: Option<Duration>,
        so_far: &Gathered,
    ) -> bool {
        self.group = number;
        let waiting = Doing::new(format!(
            "waiting at the cluster barrier before group {number}"
        ));
        if let Some(why) = self.barrier(&waiting) {
            self.save(so_far, Some(why));
        }
        if stop_signal::stop_requested(self.req.stop) {
            return false;
        }
        self.ends = Some(GroupEnds::new(self.alive, deadline));
        self.group_started_unix_ns = unix_ns();
        true
    }

    fn tick(&mut self, now_ns: u64, here: bool, totals: &dyn Fn() -> LiveTotals) -> PeersWord {
        let Some(ends) = &mut self.ends else {
            return PeersWord::default();
        };
        if here {
            self.alive.say(&|| Doing {
                done: totals().bytes.iter().sum(),
                ..Doing::new(format!("running group {}", self.group))
            });
        }
        let first_end = ends.look(now_ns, !here, totals);
        let waiting = ends.waiting(now_ns, stop_signal::stop_requested(self.req.stop));
        PeersWord {
            first_end,
            gave_up: ends.gave_up(),
            waiting,
        }
    }

    fn group_end(&mut self, so_far: &mut Gathered) {
        let (group, hung) = self
            .ends
            .take()
            .map(|ends| ends.finish(self.group_started_unix_ns))
            .unzip();
        so_far.rank_groups.extend(group);
        let why = hung.flatten().or_else(|| self.alive.told());
        self.save(so_far, why);
    }

    fn run_end(&mut self, so_far: &Gathered) {
        // the ranks' results are gathered once every rank is here
        let waiting = Doing::new("waiting for the other ranks to end the run");
        if let Some(why) = self.barrier(&waiting) {
            self.save(so_far, Some(why));
        }
    }
}

/// What this rank has measured so far, for `iolens merge` if the run loses a rank.
pub(in crate::runner) fn write_rank_file(
    req: &RunRequest,
    link: &dyn ClusterLink,
    path: &Path,
    so_far: &Gathered,
    started_unix_ms: u64,
) {
    let file = ranks::RankFile {
        stopped: stop_signal::stop_requested(req.stop),
        series: req.series,
        run_key: link.run_key(),
        ranks: link.ranks(),
        groups: plan::groups(req.jobs).len(),
        command_line: req.command_line.clone(),
        started_unix_ms,
        jobs: req.jobs.to_vec(),
        rank: ranks::RankResults {
            id: link.rank().clone(),
            groups: so_far.rank_groups.clone(),
            results: so_far.results.clone(),
            disks: Vec::new(),
            started_unix_ms,
            series: Vec::new(),
            workers: Vec::new(),
            host: None,
        },
    };
    if let Err(e) = file.write(path) {
        crate::console::warn(format_args!(
            "warning: cannot write {}: {e}",
            path.display()
        ));
    }
}

/// Now, in ns since the Unix epoch.
fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ranks::tests::fake;
    use std::sync::atomic::{AtomicBool, Ordering};

    const S: u64 = 1_000_000_000;

    fn no_totals() -> LiveTotals {
        LiveTotals::default()
    }

    #[test]
    fn rank_peers_wait_for_every_rank_to_end_the_group_and_record_it_at_its_end() {
        let link = fake();
        let alive = Liveness::new(&link, Duration::from_secs(60));
        let stop = AtomicBool::new(false);
        let req = RunRequest::of_files(&[], Vec::new(), &stop);
        let mut peers = RankPeers::new(&req, &alive, 0);
        let mut so_far = Gathered::default();
        assert!(
            peers.before_start(1, None, &so_far),
            "expected the group started once every rank met at the barrier"
        );
        let word = peers.tick(S, true, &no_totals);
        assert_eq!(
            word,
            PeersWord {
                waiting: true,
                ..PeersWord::default()
            },
            "expected the others awaited while no rank ended"
        );
        link.inbox.borrow_mut().extend([(1, S), (2, 2 * S)]);
        let word = peers.tick(2 * S, false, &no_totals);
        assert_eq!(
            word,
            PeersWord {
                first_end: true,
                ..PeersWord::default()
            },
            "expected rank 1's end heard as the first, and no more waiting once all ended"
        );
        peers.group_end(&mut so_far);
        let ends: Vec<(u64, u64)> = so_far
            .rank_groups
            .iter()
            .map(|g| (g.end_ns, g.first_end_ns))
            .collect();
        assert_eq!(
            ends,
            [(2 * S, S)],
            "expected this rank's end and the first end kept for the group"
        );
    }

    #[test]
    fn a_rank_stopped_at_the_barrier_does_not_start_the_group_nor_record_it() {
        let link = fake();
        let alive = Liveness::new(&link, Duration::from_secs(60));
        let stop = AtomicBool::new(false);
        stop.store(true, Ordering::Relaxed);
        let req = RunRequest::of_files(&[], Vec::new(), &stop);
        let mut peers = RankPeers::new(&req, &alive, 0);
        let mut so_far = Gathered::default();
        assert!(!peers.before_start(1, None, &so_far));
        assert_eq!(
            peers.tick(S, false, &no_totals),
            PeersWord::default(),
            "expected nothing heard of a group that did not start"
        );
        peers.group_end(&mut so_far);
        assert!(so_far.rank_groups.is_empty());
    }
}
