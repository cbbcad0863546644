//! What one I/O is: its direction and where it goes. The job, the offset
//! generators, the replayed logs and the worker all speak of it, so it lives
//! below them all and none of them depends on another for it.

use serde::{Deserialize, Serialize};

/// Data direction of one I/O. It indexes every per-direction array
/// ([read, write, trim], fio's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Ddir {
    Read = 0,
    Write = 1,
    /// Discard a range: `fallocate(PUNCH_HOLE)` on a file, `BLKDISCARD` on a block device.
    Trim = 2,
}

/// Number of directions, the length of every per-direction array.
pub(crate) const DDIRS: usize = 3;

impl Ddir {
    pub(crate) const ALL: [Ddir; DDIRS] = [Ddir::Read, Ddir::Write, Ddir::Trim];
    #[inline]
    pub(crate) fn index(self) -> usize {
        self as usize
    }
    /// The direction as fio names it in messages and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Trim => "trim",
        }
    }
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NextIo {
    pub ddir: Ddir,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
}
