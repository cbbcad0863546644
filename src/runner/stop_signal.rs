//! Run control: SIGINT, SIGTERM and SIGHUP set a flag; workers see it, stop
//! issuing, drain what is in flight, and the run reports what it measured.
//!
//! A second signal within `GRACE` of the first (`timeout` sends two at once, an
//! impatient Ctrl-C is pressed twice) is counted and answered on stderr, and the
//! report still comes. A third signal, or a second one after `GRACE`, aborts: a
//! thread of its own (not a signal handler, where removing files is unsafe)
//! removes the temporary files registered with `remove_on_abort` and exits with
//! 128 + the signal, as shells do.

use crate::console;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long after the first signal a second one is taken for the same request
/// (the twin signals of `timeout`, a double Ctrl-C) rather than a demand to
/// abort: long enough for a hurried second key press, short enough that a user
/// who waits for a stuck end can still abort soon.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// The signals that stop a run.
const STOPPING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// The process's one stop flag, the last signal received, and what an abort removes.
#[derive(Default)]
struct Control {
    stop: Arc<AtomicBool>,
    received: Arc<AtomicUsize>,
    /// Set once the handlers and the watching thread are in place.
    installed: Mutex<bool>,
    temporaries: Mutex<Vec<PathBuf>>,
}

static CONTROL: OnceLock<Control> = OnceLock::new();

fn control() -> &'static Control {
    CONTROL.get_or_init(Control::default)
}

/// A mutex's contents even when a thread panicked holding it: an abort must
/// still find the files to remove.
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Register SIGINT, SIGTERM and SIGHUP to set the returned flag instead of
/// killing the process, and start the thread that counts them (see the module
/// doc). `announce`: say on stderr what a second signal did and what an abort
/// removed (a worker process stays quiet: its parent speaks). Installing twice
/// returns the same flag.
pub(crate) fn install_stop_handler(announce: bool) -> std::io::Result<Arc<AtomicBool>> {
    let c = control();
    let mut installed = locked(&c.installed);
    if !*installed {
        for sig in STOPPING {
            signal_hook::flag::register(sig, c.stop.clone())?;
            signal_hook::flag::register_usize(sig, c.received.clone(), sig as usize)?;
        }
        let signals = Signals::new(STOPPING)?;
        std::thread::Builder::new()
            .name("iolens-signals".into())
            .spawn(move || watch(signals, announce))?;
        *installed = true;
    }
    Ok(c.stop.clone())
}

/// What one more signal does, given how many came before it and when the first did.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// The first: the run stops and reports.
    Stop,
    /// A second within the grace: counted, the report still comes.
    Counted,
    /// A third, or a second after the grace: exit now.
    Abort,
}

fn answer(earlier: usize, since_first: Duration) -> Answer {
    match earlier {
        0 => Answer::Stop,
        1 if since_first < GRACE => Answer::Counted,
        _ => Answer::Abort,
    }
}

/// The watching thread: every stopping signal, answered in turn. Signals that
/// arrive together (before this thread reads the first) count as one.
fn watch(mut signals: Signals, announce: bool) {
    let mut first = Instant::now();
    for (earlier, sig) in signals.forever().enumerate() {
        // The handlers of signals that come together run on any threads at once, so which
        // of them stored `received` last is a race; this thread answers them in one order
        // (the lower number first), and the one it answers last is the exit code's.
        control().received.store(sig as usize, Ordering::Relaxed);
        let said = match answer(earlier, first.elapsed()) {
            Answer::Stop => {
                first = Instant::now();
                format!(
                    "{}: stopping: the report of what was measured follows (another signal after {}s, or two more, abort without it)",
                    name(sig),
                    GRACE.as_secs()
                )
            }
            Answer::Counted => format!(
                "{} again: still finishing the report; one more signal aborts without it",
                name(sig)
            ),
            Answer::Abort => abort(sig, announce),
        };
        if announce {
            console::warn(format_args!("{said}"));
        }
    }
}

/// Remove the registered temporary files and exit with 128 + `sig`.
fn abort(sig: i32, announce: bool) -> ! {
    let removed: Vec<String> = locked(&control().temporaries)
        .iter()
        .filter(|path| remove(path))
        .map(|path| path.display().to_string())
        .collect();
    if announce {
        let what = if removed.is_empty() {
            String::new()
        } else {
            format!("; removed {}", removed.join(", "))
        };
        console::warn(format_args!(
            "{}: aborted without a report{what}",
            name(sig)
        ));
    }
    std::process::exit(128 + sig)
}

/// Remove a file or a directory with what it holds; true when something was removed.
fn remove(path: &Path) -> bool {
    if path.is_dir() {
        std::fs::remove_dir_all(path).is_ok()
    } else {
        std::fs::remove_file(path).is_ok()
    }
}

fn name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    }
}

/// A temporary file or directory that an abort removes; dropping this (once the
/// owner removed it on its normal way out, or kept it) takes it off the list.
#[must_use = "the path is removed on abort only while this lives"]
pub(crate) struct RemovedOnAbort(PathBuf);

/// Remove `path` (a file, or a directory and all it holds) if a signal aborts the process.
pub(crate) fn remove_on_abort(path: &Path) -> RemovedOnAbort {
    locked(&control().temporaries).push(path.to_path_buf());
    RemovedOnAbort(path.to_path_buf())
}

impl Drop for RemovedOnAbort {
    fn drop(&mut self) {
        locked(&control().temporaries).retain(|p| *p != self.0);
    }
}

pub(crate) fn stop_requested(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

/// Sleep up to `duration` in short steps while `running` holds; true when the
/// whole duration passed with it still holding.
pub(crate) fn sleep_while(duration: Duration, mut running: impl FnMut() -> bool) -> bool {
    const STEP: Duration = Duration::from_millis(10);
    let start = Instant::now();
    while running() {
        let elapsed = start.elapsed();
        if elapsed >= duration {
            return true;
        }
        std::thread::sleep(STEP.min(duration - elapsed));
    }
    false
}

/// The signal (SIGINT, SIGTERM or SIGHUP; the last one) that asked the run to stop, if one did.
pub(crate) fn received_signal() -> Option<i32> {
    let sig = CONTROL.get()?.received.load(Ordering::Relaxed);
    (sig != 0).then_some(sig as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_signal_within_the_grace_is_counted_a_third_or_a_late_one_aborts() {
        let soon = Duration::from_millis(10);
        assert_eq!(answer(0, Duration::ZERO), Answer::Stop);
        assert_eq!(
            answer(1, soon),
            Answer::Counted,
            "the twin of timeout's signal"
        );
        assert_eq!(answer(2, soon), Answer::Abort, "a third");
        assert_eq!(answer(1, GRACE), Answer::Abort, "a second after the grace");
    }

    #[test]
    fn an_abort_removes_registered_paths_and_only_while_they_are_registered() {
        let dir = crate::testutil::scratch_dir();
        let file = dir.path().join("t");
        std::fs::write(&file, "x").unwrap();
        let registered = remove_on_abort(&file);
        assert!(locked(&control().temporaries).contains(&file));
        drop(registered);
        assert!(
            !locked(&control().temporaries).contains(&file),
            "expected a dropped registration to leave the list"
        );
        let inner = dir.path().join("d");
        std::fs::create_dir(&inner).unwrap();
        std::fs::write(inner.join("f"), "x").unwrap();
        assert!(remove(&file) && remove(&inner), "expected both removed");
        assert!(!file.exists() && !inner.exists());
        assert!(!remove(&file), "expected nothing to remove the second time");
    }
}
