//! `read_iolog`: the worker's I/Os come from the log instead of the generator,
//! each when the log says (unless `replay_no_stall`), its syncs with the queue
//! drained.

use super::Worker;
use crate::engine::Engine;
use crate::iolog::{Op, ReplayReader, Timed};
use crate::job::spec::ReplaySpec;
use crate::runner::result::IoFailure;
use crate::workload::pacing::Clock;
use crate::workload::NextIo;

/// The log a worker replays and where it is in it.
pub(super) struct Replayer<'a> {
    reader: ReplayReader<'a>,
    /// The worker's clock when the replay started, ns.
    start_ns: u64,
    /// When the I/O last read is due, ns on the worker's clock.
    due_ns: u64,
    /// A logged sync waiting for the queue to drain: (file, datasync).
    sync: Option<(u32, bool)>,
}

impl<'a> Replayer<'a> {
    pub(super) fn open(spec: &'a ReplaySpec, now_ns: u64) -> Result<Self, String> {
        Ok(Replayer {
            reader: ReplayReader::open(spec).map_err(|e| format!("read_iolog: {e}"))?,
            start_ns: now_ns,
            due_ns: 0,
            sync: None,
        })
    }
}

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// The next logged I/O; None at the end of the log, at a sync (issuing
    /// pauses until the queue drained and the sync ran) or on a bad line.
    pub(super) fn next_replayed(&mut self) -> Option<NextIo> {
        let replay = self.replay.as_mut()?;
        match replay.reader.next_op() {
            Ok(Some(Timed {
                op: Op::Io(io),
                due_us,
            })) => {
                replay.due_ns = due_us.map_or(0, |us| replay.start_ns + us * 1000);
                Some(io)
            }
            Ok(Some(Timed {
                op: Op::Sync { file, datasync },
                ..
            })) => {
                replay.sync = Some((file, datasync));
                None
            }
            Ok(None) => None,
            Err(message) => {
                let message = format!("read_iolog: {message}");
                self.fail(IoFailure { message, errno: 0 });
                None
            }
        }
    }

    /// A logged sync waits for the queue to drain.
    #[inline]
    pub(super) fn replay_sync_due(&self) -> bool {
        self.replay.as_ref().is_some_and(|r| r.sync.is_some())
    }

    /// Run the logged sync that is due, if one is: true when it ran.
    pub(super) fn replay_sync(&mut self) -> bool {
        let Some((file, datasync)) = self.replay.as_mut().and_then(|r| r.sync.take()) else {
            return false;
        };
        self.sync_file(file as usize, datasync, true);
        true
    }

    /// Wait until the I/O just read is due (its time in the log, scaled).
    pub(super) fn wait_for_replay_time(&mut self) {
        let Some(due) = self.replay.as_ref().map(|r| r.due_ns) else {
            return;
        };
        if due > self.clock.now_ns() {
            self.commit_pending();
            self.clock
                .pause_until_ns(due.min(self.end_ns), self.ctx.stop);
        }
    }
}
