//! fio's I/O logs: `write_iolog` records what a worker issued, `read_iolog`
//! replays such a log. The text format (versions 2 and 3) is fio's: a version
//! line, then per line either a file action (`NAME add|open|close`) or an I/O
//! (`NAME read|write|trim|sync|datasync OFFSET LENGTH`); version 3 puts the
//! microseconds since the log started in front of each line. fio 3.33 writes
//! version 3, and so does iolens. `read_iolog` also takes a blktrace binary
//! trace (blktrace.rs).

mod blktrace;
mod read;
mod replay;
mod write;

pub(crate) use blktrace::merge as merge_blktrace;
pub(crate) use read::{parse_line, LogVersion};
pub(crate) use replay::{Op, ReplayReader, ReplaySkip, ReplaySpec, Timed};
pub(crate) use write::IologWriter;

/// The first line of a version 2 log.
pub(crate) const VERSION_2: &str = "fio version 2 iolog";
/// The first line of a version 3 log (what `write_iolog` writes).
pub(crate) const VERSION_3: &str = "fio version 3 iolog";

/// What a log line does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Add,
    Open,
    Close,
    Read,
    Write,
    Trim,
    Sync,
    Datasync,
    /// Version 2 only: pause for the given microseconds.
    Wait,
}

impl Action {
    /// The word a log uses for the action.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Open => "open",
            Action::Close => "close",
            Action::Read => "read",
            Action::Write => "write",
            Action::Trim => "trim",
            Action::Sync => "sync",
            Action::Datasync => "datasync",
            Action::Wait => "wait",
        }
    }

    fn from_word(word: &str) -> Option<Action> {
        [
            Action::Add,
            Action::Open,
            Action::Close,
            Action::Read,
            Action::Write,
            Action::Trim,
            Action::Sync,
            Action::Datasync,
            Action::Wait,
        ]
        .into_iter()
        .find(|a| a.word() == word)
    }

    /// True for the actions on a file itself (no offset or length).
    pub(crate) fn is_file_action(self) -> bool {
        matches!(self, Action::Add | Action::Open | Action::Close)
    }
}
