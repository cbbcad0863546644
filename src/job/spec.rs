//! `JobSpec`: one fully resolved and validated job. Nothing downstream parses text.
//!
//! Both front ends (fio-style `--key=value` arguments now, job files later) fill a
//! `RawJob`; `job::resolve` turns it into this owned, checked value.

use serde::{Deserialize, Serialize};

mod control;
mod exec;
mod measure;
mod target;
mod tolerated_errors;
mod verify;
mod workload;

pub use control::*;
pub use exec::*;
pub use measure::*;
pub use target::*;
pub use tolerated_errors::*;
pub use verify::*;
pub use workload::*;

/// Data direction of one I/O. It indexes the per-direction arrays below
/// ([read, write, trim], fio's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    /// Discard a range: `fallocate(PUNCH_HOLE)` on a file, `BLKDISCARD` on a block device.
    Trim = 2,
}

/// Number of directions, the length of every per-direction array.
pub const DDIRS: usize = 3;

impl Ddir {
    pub const ALL: [Ddir; DDIRS] = [Ddir::Read, Ddir::Write, Ddir::Trim];
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    /// The direction as fio names it in messages and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Trim => "trim",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineKind {
    Sync,
    Psync,
    Pvsync,
    Pvsync2,
    Libaio,
    IoUring,
    Mmap,
    Null,
}

impl EngineKind {
    /// The fio name of the engine.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sync => "sync",
            Self::Psync => "psync",
            Self::Pvsync => "pvsync",
            Self::Pvsync2 => "pvsync2",
            Self::Libaio => "libaio",
            Self::IoUring => "io_uring",
            Self::Mmap => "mmap",
            Self::Null => "null",
        }
    }
    /// True for engines that keep several I/Os in flight (iodepth > 1 is meaningful);
    /// null emulates a queue so the tool's async path can be measured.
    pub fn is_async(self) -> bool {
        matches!(self, Self::Libaio | Self::IoUring | Self::Null)
    }
}

/// Engine settings: queue depth, batching, io_uring options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSpec {
    pub kind: EngineKind,
    pub iodepth: u32,
    /// `iodepth_batch_submit` (0 or 1 = submit each I/O as queued; fio's default 1).
    pub batch_submit: u32,
    /// `iodepth_batch_complete_min` (fio default 1).
    pub batch_complete_min: u32,
    /// `iodepth_batch_complete_max` (fio default = iodepth).
    pub batch_complete_max: u32,
    /// io_uring / pvsync2 `hipri`: polled completions.
    pub hipri: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
}

/// A job's options as given, in fio's "job options" order (`RawJob::listed_options`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GivenOptions {
    /// The job's own options.
    pub job: Vec<(String, String)>,
    /// The global options in effect for the job (the command line's, with a job file's
    /// `[global]` sections above the job laid over them).
    pub global: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    /// fio's `description`: free text shown with the job's results.
    pub description: Option<String>,
    pub engine: EngineSpec,
    pub target: TargetSpec,
    pub workload: WorkloadSpec,
    pub pacing: PacingSpec,
    pub io: IoModeSpec,
    pub buffers: BufferSpec,
    pub measure: MeasureSpec,
    pub exec: ExecSpec,
    pub logs: LogSpec,
    /// `continue_on_error` / `ignore_error`.
    pub errors: ErrorSpec,
    pub files: FilesSpec,
    pub control: RunControlSpec,
    /// The options as the user gave them, for the report.
    pub given: GivenOptions,
    /// The queue the worker keeps (depth, refill depth, batches), resolved once.
    pub queue: QueueSpec,
    /// fio's `verify=`; None when off (`verify=0` or `verify=null`).
    #[serde(default)]
    pub verify: Option<VerifySpec>,
}
