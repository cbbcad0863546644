//! Run control: SIGINT/SIGTERM set a flag; workers see it, stop issuing,
//! drain what is in flight, and the run reports what it measured.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The signal that stopped the run, for the exit code (128 + signal, as shells do).
static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Register SIGINT and SIGTERM to set the returned flag instead of killing the process.
/// A second signal terminates at once (the user really means it), with the shell's code.
pub(crate) fn install_stop_handler() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let received = RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, stop.clone())?;
        signal_hook::flag::register(sig, stop.clone())?;
        signal_hook::flag::register_usize(sig, received.clone(), sig as usize)?;
    }
    Ok(stop)
}

pub(crate) fn stop_requested(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

/// The signal (SIGINT or SIGTERM) that asked the run to stop, if one did.
pub(crate) fn received_signal() -> Option<i32> {
    let sig = RECEIVED.get()?.load(Ordering::Relaxed);
    (sig != 0).then_some(sig as i32)
}
