//! What a worker is given: its job, its files and the run's shared signals.

use super::status::StatusSlot;
use crate::fileset::{FileSet, OpenMode};
use crate::job::spec::JobSpec;
use crate::observe::live::LiveCounters;
use crate::workload::FileRegion;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Everything one worker needs; built by the runner before the start barrier.
pub(crate) struct WorkerCtx<'a> {
    pub job: &'a JobSpec,
    /// The worker's files, in the order its I/Os name them.
    pub files: Vec<OpenFile>,
    pub buffer_align: usize,
    pub seed: u64,
    /// fio's number of this worker: 1, 2, … across the run, in job order.
    pub worker_number: u64,
    pub start: &'a dyn StartSignal,
    pub stop: &'a AtomicBool,
    /// Running totals the sampler reads while the worker runs.
    pub live: LiveCounters<'a>,
    /// `flow`: the live counters of every worker in this job's flow (its own included).
    pub flow_members: Vec<LiveCounters<'a>>,
    /// `--status-interval`: where to publish interim results, and how often
    /// (the runner asks more often than it reports).
    pub status: Option<(&'a StatusSlot, Duration)>,
    /// `--io-timeout`: an async I/O in flight longer fails the job (ETIMEDOUT).
    pub io_timeout: Option<Duration>,
}

/// What a worker waits on, after its engine is set up, before its first I/O:
/// the group's barrier for a thread, the parent's `go` for a worker process.
pub(crate) trait StartSignal: Sync {
    fn wait(&self);
}

impl StartSignal for Barrier {
    fn wait(&self) {
        Barrier::wait(self);
    }
}

/// Where one of a worker's files is, how to open it, and the worker's region
/// of it: what a worker process is sent, and what a worker thread starts from.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct TaskFile {
    pub path: PathBuf,
    /// What a worker process opens: the parent's descriptor of the file (`/proc/PID/fd/N`),
    /// so it reaches the file the run resolved `path` to, whatever the name is now.
    pub open_at: PathBuf,
    pub open_mode: OpenMode,
    /// Size of the whole target.
    pub size: u64,
    pub region_start: u64,
    pub region_len: u64,
}

/// The files of worker `worker_index` of job `job_index`, in order.
pub(crate) fn task_files(files: &FileSet, job_index: usize, worker_index: u32) -> Vec<TaskFile> {
    files.workers[job_index][worker_index as usize]
        .files
        .iter()
        .map(|wf| {
            let target = &files.targets[wf.target];
            TaskFile {
                path: target.path.clone(),
                open_at: target.open_path(),
                open_mode: target.open_mode,
                size: target.size,
                region_start: wf.start,
                region_len: wf.len,
            }
        })
        .collect()
}

/// One of a worker's files: the open target, its size and path, and the part
/// of it the worker's I/Os address.
#[derive(Clone)]
pub(crate) struct OpenFile {
    pub file: Arc<File>,
    /// Size of the whole target.
    pub size: u64,
    pub path: PathBuf,
    /// The worker's region of the file; `region.file` is the file's index.
    pub region: FileRegion,
}

impl OpenFile {
    /// A worker's files from where they are and their open handles (same
    /// order): the one place a region gets its file's index.
    pub(crate) fn list(places: Vec<TaskFile>, handles: Vec<Arc<File>>) -> Vec<OpenFile> {
        places
            .into_iter()
            .zip(handles)
            .enumerate()
            .map(|(i, (place, file))| OpenFile {
                region: FileRegion::new(i as u32, place.region_start, place.region_len)
                    .in_file(place.size),
                file,
                size: place.size,
                path: place.path,
            })
            .collect()
    }

    /// Drop the cached pages of the worker's region, as fio's invalidate does:
    /// fadvise(DONTNEED) on a file, BLKFLSBUF on a block device (which flushes
    /// the whole device). The caller says what a failure costs.
    pub(crate) fn drop_cached_region(&self) -> std::io::Result<()> {
        match iolens_sys::fd::is_block_device(&self.file) {
            Ok(true) => iolens_sys::fd::blk_flush_buffers(self.file.as_ref()),
            _ => iolens_sys::fd::fadvise_dontneed(
                self.file.as_ref(),
                self.region.start,
                self.region.len,
            ),
        }
    }
}

/// The handles of a worker's files, in order (what engines and fadvise take).
pub(crate) fn handles(files: &[OpenFile]) -> Vec<Arc<File>> {
    files.iter().map(|f| f.file.clone()).collect()
}
