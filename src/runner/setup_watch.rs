//! Setup (laying out, opening, probing the targets) under watch: a signal ends
//! a long step early, and a step that makes no progress for `STALLED` (a frozen
//! filesystem, a device that does not answer) is named on stderr instead of
//! hanging silently. A write the kernel holds cannot be taken back: iolens says
//! what it waits for, and a third Ctrl-C still ends it (`stop_signal`).

use super::stop_signal;
use crate::fileset::{Progress, Step};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the watcher looks.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// The progress that setup reports to, forwarded to `inner`.
pub(super) struct SetupWatch<'a> {
    inner: &'a dyn Progress,
    stop: &'a AtomicBool,
    beat: Beat,
}

/// What the watcher thread reads: when the last step was heard of, and what it was.
struct Beat {
    stalled: Duration,
    started: Instant,
    /// Milliseconds from `started` to the last step heard of.
    last_step_ms: AtomicU64,
    /// What the last step was doing, on what: "laying out /data/f".
    doing: Mutex<String>,
    finished: AtomicBool,
}

impl<'a> SetupWatch<'a> {
    pub(super) fn new(inner: &'a dyn Progress, stop: &'a AtomicBool, stalled: Duration) -> Self {
        SetupWatch {
            inner,
            stop,
            beat: Beat {
                stalled,
                started: Instant::now(),
                last_step_ms: AtomicU64::new(0),
                doing: Mutex::new("preparing the targets".to_string()),
                finished: AtomicBool::new(false),
            },
        }
    }

    /// Run `setup` while a second thread watches it for a stall.
    pub(super) fn around<T>(&self, setup: impl FnOnce(&Self) -> T) -> T {
        let beat = &self.beat;
        std::thread::scope(|scope| {
            scope.spawn(|| beat.watch());
            let result = setup(self);
            beat.finished.store(true, Ordering::Relaxed);
            result
        })
    }
}

impl Beat {
    /// Say, once per stall, what a silent step waits for.
    fn watch(&self) {
        let mut told_at = None;
        while !self.finished.load(Ordering::Relaxed) {
            std::thread::sleep(LOOK_EVERY);
            let last = self.last_step_ms.load(Ordering::Relaxed);
            let silent = self
                .started
                .elapsed()
                .saturating_sub(Duration::from_millis(last));
            if silent >= self.stalled && told_at != Some(last) {
                told_at = Some(last);
                crate::console::warn(format_args!(
                    "setup: {} has made no progress for {} s (a frozen filesystem, or a device that does not answer?); iolens waits for it; Ctrl-C three times ends iolens",
                    self.doing.lock().map(|d| d.clone()).unwrap_or_default(),
                    silent.as_secs()
                ));
            }
        }
    }
}

impl Progress for SetupWatch<'_> {
    fn step(&self, step: Step<'_>) {
        let beat = &self.beat;
        beat.last_step_ms
            .store(beat.started.elapsed().as_millis() as u64, Ordering::Relaxed);
        if let Ok(mut doing) = beat.doing.lock() {
            doing.clear();
            doing.push_str(step.doing);
            if !step.on.is_empty() {
                doing.push(' ');
                doing.push_str(step.on);
            }
        }
        self.inner.step(step);
    }

    fn stop_asked(&self) -> bool {
        stop_signal::stop_requested(self.stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_seen_by_setup_and_steps_reach_the_inner_progress() {
        struct Counted(std::cell::Cell<u32>);
        impl Progress for Counted {
            fn step(&self, _: Step<'_>) {
                self.0.set(self.0.get() + 1);
            }
        }
        let inner = Counted(std::cell::Cell::new(0));
        let stop = AtomicBool::new(false);
        let watch = SetupWatch::new(&inner, &stop, Duration::from_secs(60));
        let step = Step {
            doing: "laying out",
            on: "/f",
            done: 0,
            total: 1,
        };
        watch.step(step);
        assert!(!watch.stop_asked());
        stop.store(true, Ordering::Relaxed);
        assert!(watch.stop_asked());
        assert_eq!(inner.0.get(), 1);
        assert_eq!(*watch.beat.doing.lock().unwrap(), "laying out /f");
    }
}
