//! The `lockfile=` gate: the worker's [`FileLocks`](crate::fileset::FileLocks)
//! hold a file while an I/O to it is handed to the engine; a lock that fails
//! fails the job.

use super::super::Worker;
use crate::engine::Engine;
use crate::runner::result::IoFailure;
use crate::workload::pacing::Clock;

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    #[cold]
    pub(in crate::runner::worker) fn lock_failed(&mut self, e: std::io::Error) {
        self.fail(IoFailure {
            message: format!("lockfile: {}", crate::errno::describe(&e)),
            errno: e.raw_os_error().unwrap_or(0),
        });
    }
}
