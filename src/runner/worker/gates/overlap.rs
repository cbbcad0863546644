//! The `serialize_overlap` gate: an I/O waits for the queued or in-flight I/Os
//! it overlaps.

use super::super::Worker;
use crate::engine::Engine;
use crate::workload::pacing::Clock;
use crate::workload::NextIo;

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// `serialize_overlap`: the I/Os queued or in flight that `io` overlaps
    /// complete before it goes out.
    #[inline]
    pub(in crate::runner::worker) fn wait_out_overlap(&mut self, io: &NextIo) {
        while self.queue.overlaps_in_flight(io.file, io.offset, io.len) {
            self.commit_pending();
            if self.queue.in_flight() == 0 {
                break;
            }
            self.reap_at_least(1);
        }
    }
}
