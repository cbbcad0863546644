//! One group of the run: its workers spawned (threads, or processes behind a
//! proxy thread each), let go together once every peer is ready, supervised
//! until they end (with interim reports for `--status-interval`), and joined.
//! `supervisor.rs` holds the supervision, `peers.rs` what the other hosts of a
//! run on several ranks take part in, `rank_ends.rs` the ranks' ends of a group.

mod peers;
mod rank_ends;
mod supervisor;

pub(super) use peers::{write_rank_file, OneHost, Peers, RankPeers};

use super::group_control::{GroupControl, JobStart, StartGate};
use super::result::{IoFailure, WorkerResult};
use super::status::StatusSlot;
use super::{
    collect, process, run_worker, stop_signal, watchdog, worker_ctx, RunRequest, RunSoFar,
};
use crate::fileset::FileSet;
use crate::observe::live::LiveBoard;
use std::sync::atomic::AtomicBool;
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};
use supervisor::{GroupSupervisor, Joined, Supervised};

/// How a group ended.
pub(super) struct GroupOutcome {
    /// Each job's worker results, by position in the group.
    pub results: Vec<Vec<WorkerResult>>,
    /// The watchdog stopped the group: the run ends, its report partial.
    pub watchdog_stopped: bool,
    /// `exit_what=all` stopped the run: no later group starts.
    pub ends_run: bool,
}

/// Run the jobs of one group at once. All the workers start together at one
/// barrier, once `peers` are ready too; the group ends when every worker has
/// (and the peers say so). The group's control stops and holds back its
/// workers. `run` holds the results of the groups before, for interim
/// reports, and the way out when worker threads are stuck.
pub(super) fn run_group(
    req: &RunRequest,
    files: &FileSet,
    board: &LiveBoard,
    jobs: &[usize],
    run: &RunSoFar,
    peers: &mut dyn Peers,
) -> GroupOutcome {
    let control = &GroupControl::new(req.jobs, jobs, req.stop);
    let workers: usize = jobs
        .iter()
        .map(|&j| req.jobs[j].exec.numjobs as usize)
        .sum();
    // The workers and this thread, which lets them go once every peer is ready.
    let gate = StartGate::new(workers + 1);
    let starts: Vec<_> = (0..jobs.len())
        .map(|position| control.start_signal(&gate, position))
        .collect();
    let slots: Vec<Vec<StatusSlot>> = jobs
        .iter()
        .map(|&j| {
            (0..req.jobs[j].exec.numjobs)
                .map(|_| StatusSlot::default())
                .collect()
        })
        .collect();
    let group_start = Instant::now();
    let given_up = AtomicBool::new(false);
    let (results, watchdog_stopped, refused) = std::thread::scope(|scope| {
        let spawning = Spawning {
            req,
            files,
            board,
            control,
            given_up: &given_up,
        };
        let spawned = spawning.spawn(scope, jobs, &slots, &starts);
        let refused = spawned.call_off(control, &gate, workers);
        let handles = spawned.handles;
        let number = run.gathered.borrow().rank_groups.len() + 1;
        let deadline = watchdog::cluster_deadline(req.jobs, jobs, req.io_timeout);
        if !peers.before_start(number, deadline, &run.gathered.borrow()) {
            // stopped while the peers were awaited: the group does not start here,
            // its workers are let go to end at once
            control.stop_group();
            gate.wait();
            for h in handles.into_iter().flatten() {
                let _ = h.join();
            }
            return (Vec::new(), false, refused);
        }
        gate.wait();
        // the watchdog counts from the workers' go, not from the wait for the peers
        let clock = Instant::now;
        let watch = watchdog::GroupWatch::new(
            req.jobs,
            jobs,
            board,
            files,
            req.io_timeout,
            &given_up,
            clock(),
        );
        let supervised = Supervised {
            jobs: req.jobs,
            group: jobs,
            board,
            control,
            peers,
            slots: &slots,
            clock: &clock,
            started: group_start,
        };
        let mut supervisor = GroupSupervisor::new(supervised, watch, handles);
        // Without interim reports, wake only to look after the group.
        let every = req.status.as_ref().map_or(Duration::MAX, |s| s.interval);
        while stop_signal::sleep_while(every, || supervisor.tick()) {
            let Some(status) = &req.status else { continue };
            let interim = supervisor.interim(run.gathered.borrow().results.clone());
            let report = collect::report(req, &interim, Vec::new(), run.started_unix_ms);
            (status.on_report)(&report);
        }
        let (mut results, watchdog_stopped) = match supervisor.join() {
            Joined::Ended(results, watchdog_stopped) => (results, watchdog_stopped),
            Joined::LeftBehind(results) => match (run.abandon)(files, jobs, results) {},
        };
        if let Some(refusal) = &refused {
            // The first worker not started carries the refusal (one line on stderr); the
            // others did nothing.
            let mut refusal = Some(refusal);
            for (position, &j) in jobs.iter().enumerate() {
                let name = &req.jobs[j].name;
                let job_results = &mut results[position];
                for w in job_results.len()..req.jobs[j].exec.numjobs as usize {
                    job_results.push(refusal.take().map_or_else(WorkerResult::empty, |r| {
                        WorkerResult::failed(IoFailure {
                            message: format!("job '{name}' worker {w}: {}", r.message),
                            errno: r.errno,
                        })
                    }));
                }
            }
        }
        (results, watchdog_stopped, refused)
    });
    GroupOutcome {
        results,
        watchdog_stopped,
        // A group short of workers ends the run: the next would be refused alike.
        ends_run: control.ends_run() || refused.is_some(),
    }
}

/// What spawning a group's workers takes.
struct Spawning<'s> {
    req: &'s RunRequest<'s>,
    files: &'s FileSet,
    board: &'s LiveBoard,
    control: &'s GroupControl<'s>,
    /// Set by the watchdog once it gave up on stuck workers: their proxies stop waiting.
    given_up: &'s AtomicBool,
}

impl<'s> Spawning<'s> {
    /// Every worker of the group's `jobs` (by position, then worker): a thread
    /// with `thread`, else a process with a proxy thread here; each waits at
    /// its job's `starts` and publishes interim results in its `slots`. The
    /// spawning stops at the first thread the system refuses.
    fn spawn<'scope>(
        &self,
        scope: &'scope Scope<'scope, '_>,
        jobs: &[usize],
        slots: &'scope [Vec<StatusSlot>],
        starts: &'scope [JobStart<'s>],
    ) -> Spawned<'scope>
    where
        's: 'scope,
    {
        let Spawning {
            req,
            files,
            board,
            control,
            given_up,
        } = *self;
        let mut spawned = Spawned {
            handles: jobs.iter().map(|_| Vec::new()).collect(),
            refused: None,
        };
        for (position, ((&j, job_slots), start)) in jobs.iter().zip(slots).zip(starts).enumerate() {
            for w in 0..req.jobs[j].exec.numjobs {
                let job = &req.jobs[j];
                let live = board.worker(j, w);
                // Publishing twice per report keeps each copy at most half an interval old.
                let status = req
                    .status
                    .as_ref()
                    .map(|s| (&job_slots[w as usize], s.interval / 2));
                let thread = std::thread::Builder::new().name(format!("{}.{w}", job.name));
                let stop = control.stop_flag(position, w);
                let handle = if job.exec.thread {
                    let mut ctx = worker_ctx(req, files, j, w, start, stop, board);
                    ctx.status = status;
                    thread.spawn_scoped(scope, move || run_worker(job.engine.kind, ctx, w))
                } else {
                    let every = status.map(|(_, every)| every);
                    let slot = status.map(|(slot, _)| slot);
                    let shared = board.shared_slot(j, w);
                    let task = process::WorkerTask::new(req, files, j, w, every, shared);
                    thread.spawn_scoped(scope, move || {
                        process::run_in_process(&task, start, stop, given_up, slot, live)
                    })
                };
                match handle {
                    Ok(handle) => spawned.handles[position].push(handle),
                    Err(e) => {
                        spawned.refused = Some(e);
                        return spawned;
                    }
                }
            }
        }
        spawned
    }
}

/// The group's workers that could be spawned, by position then worker; with the error
/// that stopped the spawning, when the system refused a thread.
struct Spawned<'scope> {
    handles: Vec<Vec<ScopedJoinHandle<'scope, WorkerResult>>>,
    refused: Option<std::io::Error>,
}

impl Spawned<'_> {
    /// The started workers are told to stop and let go (else they would wait at the start
    /// for the one that is not coming); the others' result is the refusal, in one line.
    fn call_off(
        &self,
        control: &GroupControl,
        gate: &StartGate,
        workers: usize,
    ) -> Option<IoFailure> {
        let refused = self.refused.as_ref()?;
        control.stop_group();
        gate.call_off();
        let started: usize = self.handles.iter().map(Vec::len).sum();
        Some(IoFailure {
            message: format!(
                "{started} of the group's {workers} workers had started, the others did not: \
                 cannot start a thread: {}",
                process::refused_start(refused)
            ),
            errno: refused.raw_os_error().unwrap_or(0),
        })
    }
}
