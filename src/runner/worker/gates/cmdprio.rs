//! The `cmdprio_*` gate: each I/O's priority, handed to the engine before the
//! I/O, and the per-priority latency histograms fio's `prios` report needs.

use super::super::Worker;
use crate::engine::Engine;
use crate::job::spec::Ddir;
use crate::stats::{PrioLat, WorkerStats};
use crate::workload::pacing::Clock;
use crate::workload::prio::PrioChooser;
use crate::workload::NextIo;

/// With `cmdprio_*`, a latency histogram in `stats` for each priority an I/O of
/// each direction can carry.
pub(super) fn add_prio_stats(stats: &mut WorkerStats, prio: Option<&PrioChooser>) {
    if let Some(chooser) = prio {
        for ddir in [Ddir::Read, Ddir::Write] {
            stats.dirs[ddir.index()].prios = chooser
                .priorities(ddir)
                .into_iter()
                .map(|ioprio| PrioLat {
                    ioprio,
                    ..PrioLat::default()
                })
                .collect();
        }
    }
}

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// The priority of `io` (0 without `cmdprio_*`), already set on the engine.
    #[inline(always)]
    pub(in crate::runner::worker) fn pick_ioprio(&mut self, io: &NextIo) -> u16 {
        let Some(chooser) = &mut self.gates.prio else {
            return 0;
        };
        let ioprio = chooser.pick(io.ddir, io.len);
        self.engine.set_ioprio(ioprio);
        ioprio
    }
}
