//! fio's `--debug=TYPE[,TYPE…]`: trace lines in fio's shape (`TYPE PID message`, the type
//! padded to 8 columns and the process id to 5), which fio's own test scripts read.
//!
//! iolens has three of fio's types: `parse` (what an option was read as; today the
//! `steadystate=` threshold), `random` (the seed of every random stream a worker
//! draws from) and `io` (each I/O as it is filled, prepared, queued and completed).
//! `parse` and `random` lines gather here while the jobs are read and the workers are
//! set up; each worker writes its `io` lines to a file of its own (`IoTrace`: worker
//! processes too), kept here by the run. The command writes all of them where the
//! report goes, before the report.

use std::fmt::Display;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// One of fio's debug types that iolens traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugType {
    Parse,
    Random,
    Io,
}

impl DebugType {
    const ALL: [DebugType; 3] = [DebugType::Parse, DebugType::Random, DebugType::Io];

    fn name(self) -> &'static str {
        match self {
            DebugType::Parse => "parse",
            DebugType::Random => "random",
            DebugType::Io => "io",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The set of this one type.
    pub fn alone(self) -> DebugTypes {
        DebugTypes(self.bit())
    }
}

/// The value of `--debug=`: the types to trace, or `help` (list them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugRequest {
    Help,
    Trace(DebugTypes),
}

/// A set of debug types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DebugTypes(u8);

impl DebugTypes {
    pub fn contains(self, kind: DebugType) -> bool {
        self.0 & kind.bit() != 0
    }
}

/// Read `--debug=`'s value: `help`, or a comma list of types (`all` for every one).
pub(crate) fn parse_request(value: &str) -> Result<DebugRequest, UnknownDebugType> {
    if value == "help" {
        return Ok(DebugRequest::Help);
    }
    let mut types = DebugTypes::default();
    for word in value.split(',').map(str::trim) {
        match DebugType::ALL.iter().find(|kind| kind.name() == word) {
            Some(kind) => types.0 |= kind.bit(),
            None if word == "all" => types.0 |= DebugType::ALL.iter().map(|k| k.bit()).sum::<u8>(),
            None => {
                return Err(UnknownDebugType {
                    value: value.into(),
                    word: word.into(),
                })
            }
        }
    }
    Ok(DebugRequest::Trace(types))
}

/// A `--debug=` word that names no type iolens traces.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "--debug={value}: '{word}' is not a debug type iolens has; use {} \
     (fio's other types, e.g. file, are not built)",
    help_list()
)]
pub(crate) struct UnknownDebugType {
    /// The flag's whole value.
    value: String,
    /// The word in it that names no type.
    word: String,
}

/// What `--debug=help` prints: the types, comma-separated.
pub(crate) fn help_list() -> String {
    let mut names: Vec<&str> = DebugType::ALL.iter().map(|kind| kind.name()).collect();
    names.push("all");
    names.join(",")
}

static ENABLED: AtomicU8 = AtomicU8::new(0);
static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The workers' `io` trace files, in the order they are to be written.
static IO_TRACES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Trace `types` from now on in this process.
pub(crate) fn enable(types: DebugTypes) {
    ENABLED.store(types.0, Ordering::Relaxed);
}

/// Whether `kind` is traced: one load, so an untraced call site costs a branch.
#[inline]
pub(crate) fn enabled(kind: DebugType) -> bool {
    DebugTypes(ENABLED.load(Ordering::Relaxed)).contains(kind)
}

/// Keep one line of `kind` when it is traced; `message` is only formatted then.
pub(crate) fn trace(kind: DebugType, message: impl Display) {
    if enabled(kind) {
        let text = line(kind, std::process::id(), message);
        LINES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(text);
    }
}

/// The lines kept so far, each ending in a newline; the next call starts afresh.
pub(crate) fn take() -> String {
    let mut lines = LINES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    std::mem::take(&mut *lines).concat()
}

/// One line in fio's shape.
fn line(kind: DebugType, pid: u32, message: impl Display) -> String {
    let mut text = Vec::new();
    let _ = write_line(&mut text, kind, pid, message);
    String::from_utf8(text).expect("lines are UTF-8")
}

fn write_line(
    out: &mut impl Write,
    kind: DebugType,
    pid: u32,
    message: impl Display,
) -> io::Result<()> {
    writeln!(out, "{:<8} {:<5} {message}", kind.name(), pid)
}

/// Keep a worker's `io` trace file to be written out with the other lines.
pub(crate) fn keep_io_trace(path: PathBuf) {
    IO_TRACES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(path);
}

/// Hand each kept `io` trace to `write`, a piece of whole lines at a time, and remove
/// the files (all of them, also after a failed write).
pub(crate) fn drain_io_traces<E>(mut write: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let mut result = Ok(());
    for path in &take_io_traces() {
        if result.is_ok() {
            result = copy_lines(path, &mut write);
        }
        let _ = std::fs::remove_file(path);
    }
    result
}

/// Remove the kept `io` trace files unwritten.
pub(crate) fn discard_io_traces() {
    for path in take_io_traces() {
        let _ = std::fs::remove_file(path);
    }
}

fn take_io_traces() -> Vec<PathBuf> {
    std::mem::take(
        &mut *IO_TRACES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    )
}

/// `path`'s text to `write` in pieces of about 1 MiB, each ending at a line's end.
fn copy_lines<E>(path: &Path, write: &mut impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    const PIECE: usize = 1 << 20;
    let Ok(mut file) = File::open(path) else {
        return Ok(());
    };
    let mut piece = Vec::with_capacity(PIECE + 4096);
    loop {
        let start = piece.len();
        piece.resize(start + PIECE, 0);
        let read = file.read(&mut piece[start..]).unwrap_or(0);
        piece.truncate(start + read);
        let end = if read == 0 {
            piece.len()
        } else {
            piece.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
        };
        write(&String::from_utf8_lossy(&piece[..end]))?;
        piece.drain(..end);
        if read == 0 {
            return Ok(());
        }
    }
}

/// fio's `--debug=io` lines of one worker, written to a file of its own while it runs.
pub(crate) struct IoTrace {
    out: BufWriter<File>,
    path: PathBuf,
    pid: u32,
    /// What fio prints as the io_u's address: here one number per worker.
    io_u: usize,
    /// The worker's files as the lines name them.
    names: Vec<String>,
}

impl IoTrace {
    /// A trace for a worker with these files, in a fresh file under the temporary directory.
    pub(crate) fn create(paths: &[&Path]) -> Result<IoTrace, IoTraceError> {
        let (file, path) = tempfile::Builder::new()
            .prefix("iolens-debug-io-")
            .tempfile()
            .and_then(|named| named.keep().map_err(|e| e.error))
            .map_err(IoTraceError::Create)?;
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        Ok(IoTrace {
            out: BufWriter::with_capacity(64 * 1024, file),
            path,
            pid: std::process::id(),
            io_u: names.as_ptr() as usize,
            names,
        })
    }

    /// fio's lines for an I/O given out: filled, prepared and queued.
    #[inline(never)]
    pub(crate) fn issued(&mut self, ddir: usize, file: u32, offset: u64, len: u32) {
        for step in ["fill", "prep", "queue"] {
            self.io_line(step, ddir, file, offset, len);
        }
    }

    /// fio's line for a completed I/O.
    #[inline(never)]
    pub(crate) fn completed(&mut self, ddir: usize, file: u32, offset: u64, len: u32) {
        self.io_line("complete", ddir, file, offset, len);
    }

    fn io_line(&mut self, step: &str, ddir: usize, file: u32, offset: u64, len: u32) {
        let name = self.names.get(file as usize).map_or("", String::as_str);
        let _ = write_line(
            &mut self.out,
            DebugType::Io,
            self.pid,
            format_args!(
                "{step}: io_u {:#x}: off={offset:#x},len={len:#x},ddir={ddir},file={name}",
                self.io_u
            ),
        );
    }

    /// Write out what is buffered; the trace file's path, for `keep_io_trace`.
    pub(crate) fn finish(mut self) -> Result<PathBuf, IoTraceError> {
        match self.out.flush() {
            Ok(()) => Ok(self.path),
            Err(e) => {
                let _ = std::fs::remove_file(&self.path);
                Err(IoTraceError::Write(e))
            }
        }
    }
}

/// Why a worker's `--debug=io` trace file failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IoTraceError {
    /// The file could not be created.
    #[error("--debug=io: cannot create its trace file: {0}")]
    Create(#[source] std::io::Error),
    /// What was buffered could not be written.
    #[error("--debug=io: cannot write its trace file: {0}")]
    Write(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_fios_columns() {
        assert_eq!(
            line(DebugType::Random, 3213, "rand_seeds[0]=7"),
            "random   3213  rand_seeds[0]=7\n",
            "expected the type padded to 8 and the pid to 5, each then a space"
        );
        assert_eq!(
            line(DebugType::Parse, 1234567, "x"),
            "parse    1234567 x\n",
            "expected a long pid to widen its column as fio's does"
        );
    }

    #[test]
    fn requests_read_lists_all_and_help() {
        let types = |value| match parse_request(value) {
            Ok(DebugRequest::Trace(types)) => {
                DebugType::ALL.map(|kind| types.contains(kind)).to_vec()
            }
            other => panic!("expected --debug={value} to trace, saw {other:?}"),
        };
        assert_eq!(types("parse"), [true, false, false]);
        assert_eq!(types("random,parse"), [true, true, false]);
        assert_eq!(types("io"), [false, false, true]);
        assert_eq!(types("all"), [true, true, true]);
        assert_eq!(parse_request("help"), Ok(DebugRequest::Help));
        assert_eq!(help_list(), "parse,random,io,all");
    }

    #[test]
    fn an_unknown_type_is_refused_with_the_known_ones() {
        let error = parse_request("random,file").expect_err("expected file to be refused");
        assert_eq!(
            error.to_string(),
            "--debug=random,file: 'file' is not a debug type iolens has; use \
             parse,random,io,all (fio's other types, e.g. file, are not built)",
            "expected the flag, the type and the list"
        );
        let denied = || std::io::Error::from_raw_os_error(13);
        assert_eq!(
            [
                IoTraceError::Create(denied()),
                IoTraceError::Write(denied())
            ]
            .map(|e| e.to_string()),
            [
                "--debug=io: cannot create its trace file: Permission denied (os error 13)",
                "--debug=io: cannot write its trace file: Permission denied (os error 13)",
            ]
        );
    }

    #[test]
    fn io_lines_name_each_step_in_fios_fields_and_drain_in_line_pieces() {
        let mut trace = IoTrace::create(&[Path::new("d/t.0.0")]).expect("a trace file");
        trace.issued(1, 0, 0x2000, 0x1000);
        trace.completed(1, 0, 0x2000, 0x1000);
        let (pid, io_u) = (trace.pid, trace.io_u);
        let path = trace.finish().expect("the trace written");
        keep_io_trace(path.clone());
        let mut pieces = Vec::new();
        drain_io_traces(|text: &str| {
            pieces.push(text.to_string());
            Ok::<_, ()>(())
        })
        .expect("drained");
        let expected: String = ["fill", "prep", "queue", "complete"]
            .map(|step| {
                line(
                    DebugType::Io,
                    pid,
                    format!("{step}: io_u {io_u:#x}: off=0x2000,len=0x1000,ddir=1,file=d/t.0.0"),
                )
            })
            .concat();
        assert_eq!(
            pieces.concat(),
            expected,
            "expected fio's four lines per I/O"
        );
        assert!(
            !path.exists(),
            "expected the trace file to be removed once written out"
        );
        let unwritten = IoTrace::create(&[]).expect("a trace file").finish();
        let unwritten = unwritten.expect("the trace written");
        keep_io_trace(unwritten.clone());
        discard_io_traces();
        assert!(
            !unwritten.exists(),
            "expected a discarded trace file to be removed"
        );
    }
}
