//! `print!`, `println!` and `eprintln!` for the whole crate (nothing uses `eprint!`).
//!
//! Rust starts every program with SIGPIPE ignored, so writing to a closed pipe
//! (`iolens … | head`) fails with EPIPE, and std's printing macros turn that
//! failure into a panic (exit 101). These macros shadow std's in every module
//! declared after this one in `lib.rs` (that is, all of them): a closed stdout or
//! stderr drops the text quietly and the command goes on to its normal end (the
//! run is still stored, temporary files are still removed). Any other error
//! writing stdout is named once on stderr.

use std::fmt;
use std::io::{ErrorKind, Write};

macro_rules! print {
    ($($arg:tt)*) => {
        $crate::console::out(format_args!($($arg)*))
    };
}

macro_rules! println {
    () => {
        $crate::console::out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::console::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

macro_rules! eprintln {
    () => {
        $crate::console::err(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::console::err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Write to stdout; a closed pipe is not an error, another failure is named on stderr.
pub(crate) fn out(args: fmt::Arguments) {
    if let Err(e) = write_quietly(&mut std::io::stdout().lock(), args) {
        err(format_args!("iolens: cannot write to stdout: {e}\n"));
    }
}

/// Write `text` to stdout; a closed pipe (`iolens … | head`) is not an error,
/// another failure is the caller's to report.
pub(crate) fn write_stdout(text: &str) -> std::io::Result<()> {
    write_quietly(&mut std::io::stdout().lock(), format_args!("{text}"))
}

/// Write to stderr; there is nowhere left to report a failure, so none is.
pub(crate) fn err(args: fmt::Arguments) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// A warning or note for the user from a module outside `cmd/` (which alone prints
/// results): one line on stderr, after "iolens: ". The layering test holds every
/// other module to this one door.
pub(crate) fn warn(args: fmt::Arguments) {
    err(format_args!("iolens: {args}\n"));
}

/// Write `args` and flush; EPIPE (the reader went away) counts as done.
fn write_quietly(w: &mut impl Write, args: fmt::Arguments) -> std::io::Result<()> {
    match w.write_fmt(args).and_then(|()| w.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone away, or that fails another way.
    struct Failing(ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_not_an_error_but_a_full_disk_is() {
        let closed = write_quietly(&mut Failing(ErrorKind::BrokenPipe), format_args!("x"));
        assert!(
            closed.is_ok(),
            "expected EPIPE to count as written, got {closed:?}"
        );
        let full = write_quietly(&mut Failing(ErrorKind::StorageFull), format_args!("x"));
        assert!(
            full.is_err(),
            "expected ENOSPC to be reported, got {full:?}"
        );
    }
}
