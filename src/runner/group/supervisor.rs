//! The supervisor of one running group: at each tick it looks at which workers
//! have ended and passes that on to what the group's workers are governed by
//! (the group's control: exitall, wait_for and the run's stop; fio's flow
//! control; steady state; the watchdog; the peers of a run on several hosts),
//! and says whether the group still runs; then it joins the workers. Time
//! comes from a clock it is given and the workers are anything `Worker`, so
//! its tests run it with fake workers and a hand-set clock.

use super::peers::Peers;
use crate::job::spec::JobSpec;
use crate::observe::live::{LiveBoard, LiveTotals};
use crate::runner::group_control::GroupControl;
use crate::runner::result::{IoFailure, WorkerResult};
use crate::runner::status::StatusSlot;
use crate::runner::steadystate::GroupSteadyState;
use crate::runner::watchdog::GroupWatch;
use std::thread::ScopedJoinHandle;
use std::time::Instant;

/// A running worker as its supervisor sees it.
pub(in crate::runner) trait Worker {
    fn is_finished(&self) -> bool;
    /// Its result, or what it panicked with; called once it has finished.
    fn join(self) -> std::thread::Result<WorkerResult>;
}

/// A worker thread, or the proxy thread of a worker process.
impl Worker for ScopedJoinHandle<'_, WorkerResult> {
    fn is_finished(&self) -> bool {
        ScopedJoinHandle::is_finished(self)
    }

    fn join(self) -> std::thread::Result<WorkerResult> {
        ScopedJoinHandle::join(self)
    }
}

/// What the supervisor is given of the group and the run.
pub(in crate::runner) struct Supervised<'g> {
    /// The run's jobs, and the group's (indices into them).
    pub jobs: &'g [JobSpec],
    pub group: &'g [usize],
    pub board: &'g LiveBoard,
    pub control: &'g GroupControl<'g>,
    pub peers: &'g mut dyn Peers,
    /// The latest snapshot each worker published (`--status-interval`), by
    /// position in the group, then worker.
    pub slots: &'g [Vec<StatusSlot>],
    pub clock: &'g dyn Fn() -> Instant,
    /// When the group began (its workers were spawned): steady state and the
    /// peers count from here.
    pub started: Instant,
}

/// How a group's workers came back.
pub(in crate::runner) enum Joined {
    /// Each job's workers' results; whether the watchdog stopped the group.
    Ended(Vec<Vec<WorkerResult>>, bool),
    /// Worker threads stuck in the kernel did not come back: their results are
    /// what their live counters say, and the run must be finished without them.
    LeftBehind(Vec<Vec<WorkerResult>>),
}

pub(in crate::runner) struct GroupSupervisor<'g, W> {
    on: Supervised<'g>,
    /// By position in the group, then worker.
    workers: Vec<Vec<W>>,
    steady: GroupSteadyState,
    watch: GroupWatch<'g>,
    /// The first end of any host ends the group everywhere (time-based, exitall).
    ends_together: bool,
}

impl<'g, W: Worker> GroupSupervisor<'g, W> {
    pub(super) fn new(on: Supervised<'g>, watch: GroupWatch<'g>, workers: Vec<Vec<W>>) -> Self {
        let ends_together = on.group.iter().any(|&j| on.jobs[j].exec.time_based)
            || on.jobs.iter().any(|j| j.control.exitall);
        GroupSupervisor {
            steady: GroupSteadyState::new(on.jobs, on.group),
            on,
            workers,
            watch,
            ends_together,
        }
    }

    /// One look at the group; true while it still runs (here, or on a peer
    /// this host waits for).
    pub(super) fn tick(&mut self) -> bool {
        let on = &mut self.on;
        let control = on.control;
        let finished: Vec<Vec<bool>> = self
            .workers
            .iter()
            .map(|ws| ws.iter().map(W::is_finished).collect())
            .collect();
        control.observe(finished.iter().map(|f| f.iter().all(|&done| done)));
        // fio's flow control: an ended worker leaves its flow once noticed,
        // unless its end stops the group (exitall): a worker process hears
        // of a stop later than a thread, and must not run free meanwhile
        if !control.stopping() {
            for (&j, done) in on.group.iter().zip(&finished) {
                for w in (0..).zip(done).filter_map(|(w, &done)| done.then_some(w)) {
                    on.board.worker(j, w).leave_flow();
                }
            }
        }
        let now = (on.clock)();
        let now_ns = now.saturating_duration_since(on.started).as_nanos() as u64;
        self.steady.observe(now_ns, on.board, |position, workers| {
            control.stop_workers(position, workers)
        });
        self.watch.look(now, &finished, control);
        let here = finished.iter().flatten().any(|&done| !done);
        if self.watch.leaves_threads_behind() {
            return false;
        }
        let (board, jobs, group) = (on.board, on.jobs, on.group);
        let word = on
            .peers
            .tick(now_ns, here, &|| group_totals(board, jobs, group));
        if (word.first_end && self.ends_together) || word.gave_up {
            control.stop_group();
        }
        here || word.waiting
    }

    /// The run's results so far (by job index, the groups before this one)
    /// with this group's latest snapshots in place: an interim report's.
    pub(super) fn interim(&self, mut so_far: Vec<Vec<WorkerResult>>) -> Vec<Vec<WorkerResult>> {
        for (&j, job_slots) in self.on.group.iter().zip(self.on.slots) {
            if so_far.len() <= j {
                so_far.resize_with(j + 1, Vec::new);
            }
            so_far[j] = job_slots
                .iter()
                .map(|slot| slot.latest().unwrap_or_else(WorkerResult::empty))
                .collect();
        }
        so_far
    }

    /// The workers' results, by position in the group; a worker still running
    /// is stuck in the kernel (the watchdog gave up on it) and is left behind.
    pub(super) fn join(self) -> Joined {
        let GroupSupervisor {
            on,
            workers,
            steady,
            watch,
            ..
        } = self;
        let mut left_behind = false;
        let mut results: Vec<Vec<WorkerResult>> = workers
            .into_iter()
            .enumerate()
            .map(|(position, ws)| {
                let j = on.group[position];
                let name = &on.jobs[j].name;
                (0..)
                    .zip(ws)
                    .map(|(w, worker)| {
                        if !worker.is_finished() {
                            // Stuck in the kernel: joining would wait with it.
                            left_behind = true;
                            let live = on.board.worker(j, w);
                            return WorkerResult::from_live(
                                &live.totals(),
                                live.thread().map_or(0, |(_, tid)| tid),
                                (on.clock)().saturating_duration_since(on.started),
                                IoFailure {
                                    message: format!(
                                        "job '{name}' worker {w}: left behind, stuck in the kernel"
                                    ),
                                    errno: libc::ETIMEDOUT,
                                },
                            );
                        }
                        let mut result = worker.join().unwrap_or_else(|panic| {
                            WorkerResult::failed(IoFailure {
                                message: format!(
                                    "job '{name}' worker {w}: panicked: {}",
                                    panic_message(panic.as_ref())
                                ),
                                errno: 0,
                            })
                        });
                        result.steadystate = steady.report_for(position, w);
                        result
                    })
                    .collect()
            })
            .collect();
        for &j in on.group {
            (0..on.jobs[j].exec.numjobs).for_each(|w| on.board.worker(j, w).leave_flow());
        }
        watch.mark_stuck(&mut results);
        if left_behind {
            Joined::LeftBehind(results)
        } else {
            Joined::Ended(results, watch.stopped())
        }
    }
}

/// The live counters of the group's workers, summed.
fn group_totals(board: &LiveBoard, specs: &[JobSpec], jobs: &[usize]) -> LiveTotals {
    let mut sum = LiveTotals::default();
    for &j in jobs {
        for w in 0..specs[j].exec.numjobs {
            sum += &board.worker(j, w).totals();
        }
    }
    sum
}

/// The text a panic was raised with (`panic!` hands over a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests;
