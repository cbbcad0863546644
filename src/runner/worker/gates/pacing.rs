//! Pacing: `rate`/`rate_iops` (the issue schedule of [`Pacer`]), `thinktime`
//! before an I/O (`thinktime_blocks_type=issue`) or after one, and the wait for
//! a replayed I/O's logged time; every wait is on the worker's clock and ends
//! by the job's end. A rate-limited job also records how it kept its schedule:
//! each I/O's due time beside the time it went out and, when it completes (in
//! the issuing call, or reaped from the slot it was queued in), its latency
//! counted from its due time.

use super::super::Worker;
use crate::engine::{Completion, Engine};
use crate::runner::queue::InFlight;
use crate::workload::pacing::Clock;
use crate::workload::NextIo;

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// Wait until `io` may go out: its replayed time, a think time before it,
    /// its place in the rate schedule; what is queued is submitted first.
    #[inline]
    pub(in crate::runner::worker) fn pace(&mut self, io: &NextIo) {
        self.wait_for_replay_time();
        if self.gates.pacer.is_unpaced() {
            return;
        }
        // thinktime_blocks_type=issue: the pause follows the Nth issued I/O.
        let think_ns = self.gates.pacer.think_before_issue();
        if think_ns > 0 {
            self.commit_pending();
            self.think_for(think_ns);
        }
        let now = self.clock.now_ns();
        let bytes = u64::from(io.len);
        let Some(due) = self.gates.pacer.issue_at(now, io.ddir, bytes) else {
            return;
        };
        if due > now {
            self.commit_pending();
            self.clock
                .pause_until_ns(due.min(self.end_ns), self.ctx.stop);
        }
        if let Some(schedule) = &mut self.stats.schedule {
            let interval_ns = self.gates.pacer.interval_ns(io.ddir, bytes);
            schedule.issued(due, now.max(due), interval_ns, self.measure_start_ns);
        }
    }

    /// After an I/O the engine completed in the call that issued it: its
    /// latency from its due time (rate-limited jobs), then the think time due.
    #[inline]
    pub(in crate::runner::worker) fn after_inline_io(
        &mut self,
        io: &InFlight,
        result: i64,
        end_ns: u64,
    ) {
        if self.gates.pacer.is_unpaced() {
            return;
        }
        if let Some(schedule) = &mut self.stats.schedule {
            if result >= 0 {
                schedule.completed_inline(io.ddir.index(), end_ns);
            }
        }
        self.think();
    }

    /// The last I/O issued, `io`, was queued in `slot`: a rate-limited job
    /// keeps its due time until the slot completes.
    #[inline]
    pub(in crate::runner::worker) fn note_queued(&mut self, slot: u32, io: &InFlight) {
        if let Some(schedule) = &mut self.stats.schedule {
            schedule.queued(slot, io.ddir.index());
        }
    }

    /// The queued I/Os of `completions` completed at `end_ns`: a rate-limited
    /// job counts each one's latency from its due time.
    #[inline]
    pub(in crate::runner::worker) fn note_reaped(
        &mut self,
        completions: &[Completion],
        end_ns: u64,
    ) {
        if let Some(schedule) = &mut self.stats.schedule {
            for c in completions.iter().filter(|c| c.result >= 0) {
                schedule.completed_in_slot(c.slot, end_ns);
            }
        }
    }

    /// The think time due after an I/O, if one is.
    pub(in crate::runner::worker) fn think(&mut self) {
        let ns = self.gates.pacer.think_after_io();
        if ns > 0 {
            self.think_for(ns);
        }
    }

    /// Think for `ns` (never past the job's end), its `thinktime_spin` part busy.
    pub(in crate::runner::worker) fn think_for(&mut self, ns: u64) {
        let now = self.clock.now_ns();
        let until = now.saturating_add(ns).min(self.end_ns);
        // thinktime_spin: the first part stands for CPU work on the data.
        let spin = self.gates.pacer.thinktime_spin_ns();
        if spin > 0 {
            self.clock
                .spin_until_ns(now.saturating_add(spin).min(until));
        }
        self.clock.pause_until_ns(until, self.ctx.stop);
    }
}
