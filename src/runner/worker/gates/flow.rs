//! The `flow` gate: fio's flow control holds a worker that is ahead of its
//! share of its flow.

use super::super::Worker;
use crate::engine::Engine;
use crate::workload::pacing::Clock;

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// fio's flow control: false while this worker is ahead of its share of
    /// its flow; it then waits for its I/Os in flight and `flow_sleep` (or
    /// just yields without one) before the loop asks again.
    #[inline]
    pub(in crate::runner::worker) fn flow_admits(&mut self) -> bool {
        let Some(flow) = &mut self.gates.flow else {
            return true;
        };
        if flow.admit() {
            return true;
        }
        let sleep = flow.sleep;
        if sleep.is_zero() {
            std::thread::yield_now();
        } else {
            self.quiesce();
            let now = self.clock.now_ns();
            self.clock.sleep_until_ns(now + sleep.as_nanos() as u64);
        }
        self.last_now_ns = self.clock.now_ns();
        false
    }
}
