//! fio's `--debug=TYPE[,TYPE…]`: trace lines in fio's shape (`TYPE PID message`, the type
//! padded to 8 columns and the process id to 5), which fio's own test scripts read.
//!
//! iolens has two of fio's types: `parse` (what an option was read as; today the
//! `steadystate=` threshold) and `random` (the seed of every random stream a worker
//! draws from). Lines gather here while the jobs are read and the workers are set up,
//! and the command writes them where the report goes, before the report.

use std::fmt::Display;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// One of fio's debug types that iolens traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugType {
    Parse,
    Random,
}

impl DebugType {
    const ALL: [DebugType; 2] = [DebugType::Parse, DebugType::Random];

    fn name(self) -> &'static str {
        match self {
            DebugType::Parse => "parse",
            DebugType::Random => "random",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
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
pub fn parse_request(value: &str) -> Result<DebugRequest, String> {
    if value == "help" {
        return Ok(DebugRequest::Help);
    }
    let mut types = DebugTypes::default();
    for word in value.split(',').map(str::trim) {
        match DebugType::ALL.iter().find(|kind| kind.name() == word) {
            Some(kind) => types.0 |= kind.bit(),
            None if word == "all" => types.0 |= DebugType::ALL.iter().map(|k| k.bit()).sum::<u8>(),
            None => {
                return Err(format!(
                    "--debug={value}: '{word}' is not a debug type iolens has; use {} \
                     (fio's other types, e.g. io, are not built)",
                    help_list()
                ))
            }
        }
    }
    Ok(DebugRequest::Trace(types))
}

/// What `--debug=help` prints: the types, comma-separated.
pub fn help_list() -> String {
    let mut names: Vec<&str> = DebugType::ALL.iter().map(|kind| kind.name()).collect();
    names.push("all");
    names.join(",")
}

static ENABLED: AtomicU8 = AtomicU8::new(0);
static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Trace `types` from now on in this process.
pub fn enable(types: DebugTypes) {
    ENABLED.store(types.0, Ordering::Relaxed);
}

/// Whether `kind` is traced: one load, so an untraced call site costs a branch.
#[inline]
pub fn enabled(kind: DebugType) -> bool {
    DebugTypes(ENABLED.load(Ordering::Relaxed)).contains(kind)
}

/// Keep one line of `kind` when it is traced; `message` is only formatted then.
pub fn trace(kind: DebugType, message: impl Display) {
    if enabled(kind) {
        let text = line(kind, std::process::id(), message);
        LINES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(text);
    }
}

/// The lines kept so far, each ending in a newline; the next call starts afresh.
pub fn take() -> String {
    let mut lines = LINES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    std::mem::take(&mut *lines).concat()
}

/// One line in fio's shape.
fn line(kind: DebugType, pid: u32, message: impl Display) -> String {
    format!("{:<8} {:<5} {message}\n", kind.name(), pid)
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
        assert_eq!(types("parse"), [true, false]);
        assert_eq!(types("random,parse"), [true, true]);
        assert_eq!(types("all"), [true, true]);
        assert_eq!(parse_request("help"), Ok(DebugRequest::Help));
        assert_eq!(help_list(), "parse,random,all");
    }

    #[test]
    fn an_unknown_type_is_refused_with_the_known_ones() {
        let error = parse_request("random,io").expect_err("expected io to be refused");
        assert!(
            error.starts_with("--debug=random,io: 'io' is not a debug type")
                && error.contains("parse,random,all"),
            "expected the flag, the type and the list, saw: {error}"
        );
    }
}
