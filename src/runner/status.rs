//! `--status-interval`: interim reports while the run goes on. Each worker
//! publishes a copy of what it has measured once per interval (one short lock
//! per interval, never per I/O); the runner's main thread turns the latest
//! copies into a `RunReport`. A copy can be up to one interval old.

use super::result::WorkerResult;
use crate::model::RunReport;
use std::sync::Mutex;
use std::time::Duration;

/// How often to report, and where the interim reports go.
pub(crate) struct StatusReports<'a> {
    pub interval: Duration,
    pub on_report: &'a dyn Fn(&RunReport),
}

/// The latest copy one worker published.
#[derive(Default)]
pub(crate) struct StatusSlot {
    latest: Mutex<Option<WorkerResult>>,
}

impl StatusSlot {
    pub(crate) fn publish(&self, snapshot: WorkerResult) {
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(snapshot);
    }

    /// A copy of the latest snapshot, if the worker has published one.
    pub(crate) fn latest(&self) -> Option<WorkerResult> {
        self.latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_latest_snapshot() {
        let slot = StatusSlot::default();
        assert!(slot.latest().is_none());
        for runtime_ns in [1, 2] {
            slot.publish(WorkerResult {
                runtime_ns,
                ..WorkerResult::empty()
            });
        }
        assert_eq!(slot.latest().map(|r| r.runtime_ns), Some(2));
    }
}
