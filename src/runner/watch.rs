//! The runner's side of observation: what the sampler watches, the
//! environment, and the page-cache drop before each job's first I/O.

use super::RunRequest;
use crate::fileset::{self, FileSet};
use crate::job::spec::JobSpec;
use crate::model::{CacheGuard, Environment, Layer, LayoutRecord, Observations, TargetStack};
use crate::observe::cache_drop::{self, GuardedTarget};
use crate::observe::diskstats::devices_of_stack;
use crate::observe::environment;
use crate::observe::live::LiveBoard;
use crate::observe::sampler::{Sampler, SamplerSetup, WatchedJob, WatchedTarget};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The targets jobs do I/O on (not the placeholder null-engine jobs share), each once.
fn watched_targets(files: &FileSet) -> Vec<(usize, &fileset::Target)> {
    let mut indexes: Vec<usize> = (0..files.workers.len())
        .flat_map(|j| files.job_targets(j))
        .collect();
    indexes.sort_unstable();
    indexes.dedup();
    indexes
        .into_iter()
        .map(|t| (t, &files.targets[t]))
        .collect()
}

pub(super) fn capture_environment(files: &FileSet) -> Environment {
    environment::capture(
        watched_targets(files)
            .into_iter()
            .map(|(_, t)| (t.path.as_path(), t.is_block_device)),
    )
}

/// Start the sampler; a run without it still measures, so a failure is a warning.
/// The devices to watch come from `environment`'s stacks (walked once, at its capture).
pub(super) fn start_sampler(
    req: &RunRequest,
    files: &FileSet,
    environment: &Environment,
    board: Arc<LiveBoard>,
    run_start: Instant,
) -> Result<Sampler, String> {
    let setup = SamplerSetup {
        interval: req.observe_interval,
        targets: watched_targets(files)
            .into_iter()
            .map(|(index, t)| {
                let stack = environment
                    .stacks
                    .iter()
                    .find(|s| Path::new(&s.target) == t.path);
                WatchedTarget {
                    path: t.path.clone(),
                    file: t.file.clone(),
                    size: t.size,
                    used_bytes: files.used_span(index),
                    devices: stack.map(devices_of_stack).unwrap_or_default(),
                    is_block_device: t.is_block_device,
                    sparse: t
                        .file
                        .metadata()
                        .is_ok_and(|m| fileset::has_holes(&m, t.size)),
                    unwritten: fileset::has_unwritten_extents(&t.path, t.size),
                    backing_holes: stack
                        .filter(|_| t.is_block_device)
                        .and_then(loop_backing_holes),
                    created: t.created,
                }
            })
            .collect(),
        jobs: req
            .jobs
            .iter()
            .enumerate()
            .map(|(j, job)| WatchedJob {
                name: job.name.clone(),
                buffered_writer: !job.io.direct
                    && job.workload.rw.writes()
                    && !fileset::is_diskless(job),
                direct: job.io.direct,
                invalidate: job.io.invalidate,
                syncs_writes: job.io.fsync > 0
                    || job.io.fdatasync > 0
                    || job.io.end_fsync
                    || job.io.sync != crate::job::spec::SyncMode::None,
                buffers: job.buffers.describe(),
                ramp: job.exec.ramp_time,
                targets: files
                    .job_targets(j)
                    .into_iter()
                    .map(|t| files.targets[t].path.display().to_string())
                    .collect(),
            })
            .collect(),
        on_second: req.on_second,
    };
    Sampler::start(setup, board, run_start).map_err(|e| format!("cannot start the sampler: {e}"))
}

pub(super) fn stop_sampler(
    sampler: Result<Sampler, String>,
    req: &RunRequest,
    board: &LiveBoard,
    warnings: &mut Vec<String>,
) -> Observations {
    let mut observations = match sampler {
        Ok(s) => s.stop(),
        Err(e) => {
            warnings.push(e.clone());
            Observations {
                notes: vec![e],
                ..Default::default()
            }
        }
    };
    // Without shared memory a worker process's counters stay in the child.
    let unshared_processes = req
        .jobs
        .iter()
        .filter(|j| !board.is_shared() && !j.exec.thread && !fileset::is_diskless(j));
    for job in unshared_processes {
        observations.notes.push(format!(
            "job '{}' runs its workers as processes and the live counters could not be shared: their CPU and wait channels are watched, their per-interval I/O is not (use --thread for that)",
            job.name
        ));
    }
    observations
}

/// The backing file of the first loop device in `stack`, when it has holes.
fn loop_backing_holes(stack: &TargetStack) -> Option<String> {
    stack
        .layers
        .iter()
        .find_map(|l| match &l.layer {
            Layer::Loop { backing_file, .. } => Some(backing_file.clone()),
            _ => None,
        })
        .filter(|file| std::fs::metadata(file).is_ok_and(|m| fileset::has_holes(&m, m.len())))
}

/// What laying out the files wrote, for the report.
pub(super) fn layout_records(files: &FileSet) -> Vec<LayoutRecord> {
    files
        .layouts
        .iter()
        .map(|(path, written)| LayoutRecord {
            path: path.display().to_string(),
            from: written.from,
            to: written.to,
            error: written.drop_error.clone(),
            in_memory: written.in_memory,
        })
        .collect()
}

pub(super) struct JobGuards {
    pub records: Vec<CacheGuard>,
    pub warnings: Vec<String>,
}

/// Count (and with invalidate=1 drop) the page cache of each of a job's targets.
pub(super) fn guard_job_targets(
    files: &FileSet,
    job_index: usize,
    job: &JobSpec,
    run_start: Instant,
) -> JobGuards {
    let mut out = JobGuards {
        records: Vec::new(),
        warnings: Vec::new(),
    };
    for t in files.job_targets(job_index) {
        let target = &files.targets[t];
        let guarded = GuardedTarget {
            path: &target.path,
            file: &target.file,
            size: target.size,
        };
        let record = cache_drop::check_target(
            &job.name,
            guarded,
            job.io.invalidate,
            || target.drop_cache(),
            || run_start.elapsed().as_nanos() as u64,
        );
        out.warnings
            .extend(cache_drop::warning(&record, job.io.direct));
        out.records.push(record);
    }
    out
}
