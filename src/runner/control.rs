//! Run control: SIGINT/SIGTERM set a flag; workers see it, stop issuing,
//! drain what is in flight, and the run reports what it measured.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Register SIGINT and SIGTERM to set the returned flag instead of killing the process.
/// A second signal terminates at once (the user really means it).
pub fn install_stop_handler() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())?;
        signal_hook::flag::register(sig, stop.clone())?;
    }
    Ok(stop)
}

pub fn stop_requested(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}
