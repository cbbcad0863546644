//! `JobSpec`: one fully resolved and validated job. Nothing downstream parses text.
//!
//! Both front ends (fio-style `--key=value` arguments now, job files later) fill a
//! `RawJob`; `job::resolve` turns it into this owned, checked value.

use serde::{Deserialize, Serialize};

mod buffers;
mod control;
mod engine;
mod errors;
mod exec;
mod files;
mod io;
mod iolog;
mod logs;
mod measure;
mod pacing;
mod pattern;
mod queue;
mod target;
mod verify;
mod workload;

pub(crate) use buffers::*;
pub(crate) use control::*;
pub(crate) use engine::*;
pub(crate) use errors::*;
pub(crate) use exec::*;
pub(crate) use files::*;
pub(crate) use io::*;
pub(crate) use iolog::*;
pub(crate) use logs::*;
pub(crate) use measure::*;
pub(crate) use pacing::*;
pub(crate) use pattern::*;
pub(crate) use queue::*;
pub(crate) use target::*;
pub(crate) use verify::*;
pub(crate) use workload::*;

pub(crate) use crate::io_unit::{Ddir, DDIRS};

/// A job's options as given, in fio's "job options" order (`RawJob::listed_options`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct GivenOptions {
    /// The job's own options.
    pub job: Vec<(String, String)>,
    /// The global options in effect for the job (the command line's, with a job file's
    /// `[global]` sections above the job laid over them).
    pub global: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct JobSpec {
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
    /// `write_iolog`.
    #[serde(default)]
    pub iolog: IologSpec,
}
