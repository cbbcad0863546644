//! Plans a run (groups, workers, targets opened once), runs each group's
//! workers behind a start barrier, and collects their results into a `RunReport`.

mod collect;
pub mod control;
pub mod plan;
mod watch;
pub mod worker;

use crate::engine;
use crate::fileset::{self, FileSet};
use crate::job::spec::{EngineKind, JobSpec};
use crate::observe::diskstats::DiskWatch;
use crate::observe::live::{LiveBoard, LiveCounters};
use crate::report::model::RunReport;
use crate::workload::rng::worker_seed;
use crate::workload::FileRegion;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use worker::{WorkerCtx, WorkerResult};

/// How the run was asked for, beyond the jobs themselves.
pub struct RunRequest<'a> {
    pub jobs: &'a [JobSpec],
    /// Each job's options as the user gave them (for the report).
    pub job_options: &'a [Vec<(String, String)>],
    pub global_options: Vec<(String, String)>,
    pub command_line: Vec<String>,
    pub allow_device_write: bool,
    /// How often the sampler records the system (`--observe-interval`).
    pub observe_interval: Duration,
    /// Set by SIGINT/SIGTERM: workers stop issuing and the report is partial.
    pub stop: &'a AtomicBool,
}

/// A finished (or interrupted) run.
pub struct RunOutcome {
    pub report: RunReport,
    /// Notes for the user (stderr): fallbacks, sparse files, odd settings.
    pub warnings: Vec<String>,
}

/// Run every job, group by group.
pub fn run(req: &RunRequest) -> Result<RunOutcome, fileset::TargetError> {
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let files = fileset::prepare(req.jobs, req.allow_device_write)?;
    iolens_sys::clock::calibrate();
    let mut warnings = files.warnings.clone();
    let disks = DiskWatch::start(files.targets.iter().map(|t| t.path.as_path()));
    let environment = watch::capture_environment(&files);
    let board = Arc::new(LiveBoard::new(req.jobs.iter().map(|j| j.exec.numjobs)));
    let wall = Instant::now();
    let sampler = watch::start_sampler(req, &files, board.clone(), wall);
    let mut cache_guards = Vec::new();

    let mut results: Vec<Vec<WorkerResult>> = Vec::with_capacity(req.jobs.len());
    for group in plan::groups(req.jobs) {
        if control::stop_requested(req.stop) {
            break;
        }
        for &j in &group.jobs {
            let guards = watch::guard_job_targets(&files, j, &req.jobs[j], wall);
            warnings.extend(guards.warnings);
            cache_guards.extend(guards.records);
        }
        let group_results = run_group(req, &files, &board, &group.jobs);
        for (&j, r) in group.jobs.iter().zip(group_results) {
            for w in &r {
                warnings.extend(
                    w.notes
                        .iter()
                        .map(|n| format!("job '{}': {n}", req.jobs[j].name)),
                );
            }
            if results.len() <= j {
                results.resize_with(j + 1, Vec::new);
            }
            results[j] = r;
            if req.jobs[j].io.unlink {
                files.unlink(j)?;
            }
        }
    }
    warnings.dedup();
    let disks = disks.finish(wall.elapsed());
    let mut report = collect::report(req, &results, disks, started_unix_ms);
    report.observations = watch::stop_sampler(sampler, &mut warnings);
    report.observations.cache_guards = cache_guards;
    report.environment = environment;
    Ok(RunOutcome { report, warnings })
}

/// Run the jobs of one group at once; returns each job's worker results.
fn run_group(
    req: &RunRequest,
    files: &FileSet,
    board: &LiveBoard,
    jobs: &[usize],
) -> Vec<Vec<WorkerResult>> {
    let workers: usize = jobs
        .iter()
        .map(|&j| req.jobs[j].exec.numjobs as usize)
        .sum();
    let barrier = Barrier::new(workers);
    std::thread::scope(|scope| {
        let handles: Vec<Vec<_>> = jobs
            .iter()
            .map(|&j| {
                (0..req.jobs[j].exec.numjobs)
                    .map(|w| {
                        let live = board.worker(j, w);
                        let ctx = worker_ctx(req, files, j, w, &barrier, live);
                        let kind = req.jobs[j].engine.kind;
                        std::thread::Builder::new()
                            .name(format!("{}.{w}", req.jobs[j].name))
                            .spawn_scoped(scope, move || run_worker(kind, ctx))
                            .expect("spawn worker thread")
                    })
                    .collect()
            })
            .collect();
        handles
            .into_iter()
            .map(|hs| {
                hs.into_iter()
                    .map(|h| h.join().expect("worker thread panicked"))
                    .collect()
            })
            .collect()
    })
}

fn worker_ctx<'s>(
    req: &'s RunRequest,
    files: &'s FileSet,
    job_index: usize,
    worker_index: u32,
    barrier: &'s Barrier,
    live: &'s LiveCounters,
) -> WorkerCtx<'s> {
    let job = &req.jobs[job_index];
    let wf = &files.workers[job_index][worker_index as usize].files;
    let targets: Vec<_> = wf.iter().map(|f| &files.targets[f.target]).collect();
    WorkerCtx {
        job,
        files: targets.iter().map(|t| t.file.clone()).collect(),
        file_sizes: targets.iter().map(|t| t.size).collect(),
        paths: targets.iter().map(|t| t.path.clone()).collect(),
        regions: wf
            .iter()
            .enumerate()
            .map(|(i, f)| FileRegion {
                file: i as u32,
                start: f.start,
                len: f.len,
            })
            .collect(),
        buffer_align: files.buffer_align(job_index),
        seed: worker_seed(
            job.workload.randseed,
            job.workload.randrepeat,
            job_index as u32,
            worker_index,
        ),
        start: barrier,
        stop: req.stop,
        live,
    }
}

/// Pick the monomorphised hot loop for the job's engine.
fn run_worker(kind: EngineKind, ctx: WorkerCtx) -> WorkerResult {
    match kind {
        EngineKind::Sync => worker::run::<engine::sync::Sync>(ctx),
        EngineKind::Psync => worker::run::<engine::psync::Psync>(ctx),
        EngineKind::Pvsync => worker::run::<engine::pvsync::Pvsync>(ctx),
        EngineKind::Pvsync2 => worker::run::<engine::pvsync2::Pvsync2>(ctx),
        EngineKind::Libaio => worker::run::<engine::libaio::Libaio>(ctx),
        EngineKind::IoUring => worker::run::<engine::io_uring::IoUring>(ctx),
        EngineKind::Mmap => worker::run::<engine::mmap::Mmap>(ctx),
        EngineKind::Null => worker::run::<engine::null::Null>(ctx),
    }
}
