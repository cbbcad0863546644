//! The issue gates: what acts before an I/O goes out (pacing and thinktime,
//! `flow`, `serialize_overlap`, `lockfile`, `cmdprio`), each gate in its own
//! file, their state gathered in [`IssueGates`] so the worker holds one field
//! for all of them. A new pre-issue feature is a file here, its state a field
//! of `IssueGates` and one call in the worker's issue path.

mod cmdprio;
mod flow;
mod lockfile;
mod overlap;
mod pacing;

use crate::fileset::FileLocks;
use crate::job::spec::JobSpec;
use crate::runner::flow::FlowControl;
use crate::stats::{ScheduleStats, WorkerStats};
use crate::workload::pacing::Pacer;
use crate::workload::prio::PrioChooser;
use std::time::Duration;

/// The state of the gates of one worker.
pub(super) struct IssueGates<'a> {
    /// `rate*`, `thinktime*`: when the next I/O may start.
    pub(super) pacer: Pacer,
    /// `flow`: this worker's part in its flow.
    pub(super) flow: Option<FlowControl<'a>>,
    /// `lockfile=`: held while an I/O is handed to the engine.
    pub(super) locks: FileLocks,
    /// `cmdprio_*`: the priority of each I/O; None when the job sets none.
    pub(super) prio: Option<PrioChooser>,
    /// The job's `runtime`: the seconds a rate-limited job's schedule record keeps.
    runtime: Option<Duration>,
    /// The worker's buffer slots: the queued I/Os whose due times the record holds.
    slots: usize,
}

impl<'a> IssueGates<'a> {
    /// The gates `job` asks for; `locks` and `flow` were set up before the
    /// group's start barrier, as their setup must be.
    pub(super) fn new(
        job: &JobSpec,
        seed: u64,
        locks: FileLocks,
        flow: Option<FlowControl<'a>>,
    ) -> Self {
        let cmdprio = &job.engine.cmdprio;
        IssueGates {
            pacer: Pacer::new(&job.pacing, seed),
            flow,
            locks,
            prio: cmdprio
                .is_used()
                .then(|| PrioChooser::new(cmdprio.clone(), job.exec.sched.ioprio, seed)),
            runtime: job.exec.runtime,
            slots: job.queue.depth.max(1) as usize,
        }
    }

    /// Nothing measured yet, with room for what the gates record: the latencies
    /// of each `cmdprio_*` priority, the schedule of a rate-limited job.
    pub(super) fn fresh_stats(&self) -> WorkerStats {
        let mut stats = WorkerStats::default();
        cmdprio::add_prio_stats(&mut stats, self.prio.as_ref());
        if self.pacer.is_rate_limited() {
            stats.schedule = Some(ScheduleStats::new(self.runtime, self.slots));
        }
        stats
    }
}
