//! Plans a run (groups, workers, targets opened once), runs each group's
//! workers behind a start barrier, and collects their results into a `RunReport`.

mod alive;
mod budget;
mod checks;
mod collect;
pub(crate) mod ctx;
pub(crate) mod error_tally;
mod flow;
mod gather;
mod group;
mod group_control;
mod job_hooks;
mod latency_target;
pub(crate) mod logs;
mod look_clock;
mod offload;
pub(crate) mod plan;
pub(crate) mod process;
mod queue;
pub(crate) mod ranks;
mod rate_floor;
pub(crate) mod result;
mod sched;
mod setup_watch;
pub(crate) mod status;
mod steadystate;
pub(crate) mod stop_signal;
mod verify;
mod watch;
mod watchdog;
pub(crate) mod worker;

use crate::engine;
use crate::fileset::{self, FileSet};
use crate::job::spec::{EngineKind, JobSpec, SubmitMode};
use crate::model::{CacheGuard, Environment, RankGroup, RunReport};
use crate::observe::cgroup;
use crate::observe::diskstats::DiskWatch;
use crate::observe::live::LiveBoard;
use crate::observe::sampler::Sampler;
use crate::workload::rng::{trace_seeds, worker_seed};
use ctx::{task_files, OpenFile, StartSignal, WorkerCtx};
use result::WorkerResult;
use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How the run was asked for, beyond the jobs themselves.
pub(crate) struct RunRequest<'a> {
    pub jobs: &'a [JobSpec],
    pub command_line: Vec<String>,
    pub allow_device_write: bool,
    /// `--readonly`: nothing may write to the targets (fio's flag).
    pub readonly: bool,
    /// How often the sampler records the system (`--observe-interval`).
    pub observe_interval: Duration,
    /// `--timeline`: called from the sampler about once a second.
    pub on_second: Option<crate::observe::sampler::SecondHook>,
    /// Set by SIGINT/SIGTERM: workers stop issuing and the report is partial.
    pub stop: &'a AtomicBool,
    /// `--status-interval`: interim reports while running.
    pub status: Option<status::StatusReports<'a>>,
    /// Told when each group starts and ends (the live progress display).
    pub progress: Option<&'a dyn GroupProgress>,
    /// `--io-timeout`: an I/O in flight longer than this fails its job.
    pub io_timeout: Option<Duration>,
    /// The other ranks of a run on several hosts (MPI); None for a run on its own.
    pub cluster: Option<&'a dyn ranks::ClusterLink>,
    /// Where this rank writes its results as each group ends (a run on several ranks).
    pub rank_file: Option<&'a std::path::Path>,
    /// Which run of `--warmup`/`--repeat` this is, said in the rank file.
    pub series: Option<ranks::SeriesRun>,
}

impl<'a> RunRequest<'a> {
    /// A request that only reports results already measured (merged rank files).
    pub(crate) fn of_files(
        jobs: &'a [JobSpec],
        command_line: Vec<String>,
        stop: &'a AtomicBool,
    ) -> Self {
        RunRequest {
            jobs,
            command_line,
            allow_device_write: false,
            readonly: true,
            observe_interval: Duration::from_millis(100),
            on_second: None,
            stop,
            status: None,
            progress: None,
            io_timeout: None,
            cluster: None,
            rank_file: None,
            series: None,
        }
    }
}

/// Follows the run group by group, e.g. to draw live progress from the workers' counters.
pub(crate) trait GroupProgress {
    /// The jobs `group` (indices into `jobs`) start now; their counters are on `board`.
    fn group_started(&self, jobs: &[JobSpec], group: &[usize], board: Arc<LiveBoard>);
    /// The group's workers have all finished.
    fn group_finished(&self);
}

/// A finished (or interrupted) run.
pub(crate) struct RunOutcome {
    pub report: RunReport,
    /// Notes for the user (stderr): fallbacks, sparse files, odd settings.
    pub warnings: Vec<String>,
}

/// Run every job, group by group. Worker threads stuck in the kernel cannot be
/// joined, so a run left with them does not return: its partial outcome is
/// handed to `left_behind`, whose caller ends the process. The findings of an
/// outcome are left to the caller to judge (`diagnose`).
pub(crate) fn run(
    req: &RunRequest,
    left_behind: &dyn Fn(RunOutcome) -> std::convert::Infallible,
) -> Result<RunOutcome, fileset::TargetError> {
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    // on several ranks, setup says that this rank is alive as it goes
    let alive = req
        .cluster
        .map(|link| alive::Liveness::new(link, alive::silence_limit(req.io_timeout)));
    let progress: &dyn fileset::Progress = match &alive {
        Some(alive) => alive,
        None => &(),
    };
    // A setup step may stay silent as long as the ranks of a run on several hosts allow
    // each other (a minute, or --io-timeout): a write of a layout is one I/O.
    let stalled = alive::silence_limit(req.io_timeout);
    let setup = setup_watch::SetupWatch::new(progress, req.stop, stalled);
    let progress: &dyn fileset::Progress = &setup;
    let mut files = setup
        .around(|setup| fileset::prepare(req.jobs, req.allow_device_write, req.readonly, setup))?;
    iolens_sys::clock::calibrate();
    let gathered = RefCell::new(Gathered {
        warnings: files.warnings.clone(),
        ..Gathered::default()
    });
    let disks = DiskWatch::start(files.targets.iter().map(|t| t.path.as_path()));
    let environment = watch::capture_environment(&files);
    let board = Arc::new(LiveBoard::new(req.jobs.iter().map(|j| j.exec.numjobs)));
    let wall = Instant::now();
    let tail = RefCell::new(Some(Tail {
        disks,
        sampler: watch::start_sampler(req, &files, &environment, board.clone(), wall),
        environment,
        wall,
        started_unix_ms,
    }));
    // The way out when worker threads are stuck in the kernel: they cannot be
    // joined, so the report is finished here and handed on.
    let abandon = |files: &FileSet, group: &[usize], group_results| {
        let mut so_far = gathered.take();
        let ran = group.iter().copied().zip(group_results).collect();
        if let Err(e) = end_group(req, files, &mut so_far, ran, std::iter::empty(), progress) {
            so_far.warnings.push(e.to_string());
        }
        let tail = tail.take().expect("a run is finished once");
        left_behind(finish(req, so_far, tail, files, &board, true))
    };
    let run_so_far = RunSoFar {
        gathered: &gathered,
        started_unix_ms,
        abandon: &abandon,
    };
    let mut ranks = alive
        .as_ref()
        .map(|alive| group::RankPeers::new(req, alive, started_unix_ms));
    let peers: &mut dyn group::Peers = match &mut ranks {
        Some(ranks) => ranks,
        None => &mut group::OneHost,
    };

    let mut watchdog_stopped_run = false;
    for group in plan::groups(req.jobs) {
        if stop_signal::stop_requested(req.stop) {
            break;
        }
        for &j in &group.jobs {
            files.open_on_start(j, &req.jobs[j], progress)?;
        }
        // create_only jobs are done once their files are laid out: no worker runs.
        let (create_only, io_jobs): (Vec<usize>, Vec<usize>) = group
            .jobs
            .iter()
            .partition(|&&j| req.jobs[j].files.create_only);
        let (io_jobs, refused) = {
            let so_far = &mut *gathered.borrow_mut();
            so_far
                .hooks
                .start(req.jobs, io_jobs, &files, &mut so_far.warnings, progress)?
        };
        for &j in &io_jobs {
            let guards = watch::guard_job_targets(&files, j, &req.jobs[j], wall);
            let mut so_far = gathered.borrow_mut();
            so_far.warnings.extend(guards.warnings);
            so_far.cache_guards.extend(guards.records);
            if req.jobs[j].files.pre_read {
                files.pre_read(j, progress)?;
            }
        }
        if let Some(progress) = req.progress {
            progress.group_started(req.jobs, &io_jobs, board.clone());
        }
        let outcome = group::run_group(req, &files, &board, &io_jobs, &run_so_far, &mut *peers);
        if let Some(progress) = req.progress {
            progress.group_finished();
        }
        let mut so_far = gathered.borrow_mut();
        let idle = create_only.iter().map(|&j| {
            let workers = req.jobs[j].exec.numjobs as usize;
            (
                j,
                std::iter::repeat_with(WorkerResult::empty)
                    .take(workers)
                    .collect(),
            )
        });
        let ran = io_jobs.iter().copied().zip(outcome.results).collect();
        end_group(req, &files, &mut so_far, ran, idle.chain(refused), progress)?;
        peers.group_end(&mut so_far);
        if outcome.ends_run || outcome.watchdog_stopped {
            watchdog_stopped_run = outcome.watchdog_stopped;
            break;
        }
    }
    peers.run_end(&gathered.borrow());
    let tail = tail.take().expect("a run is finished once");
    Ok(finish(
        req,
        gathered.take(),
        tail,
        &files,
        &board,
        watchdog_stopped_run,
    ))
}

/// What the run has gathered, group by group.
#[derive(Default)]
struct Gathered {
    /// By job index.
    results: Vec<Vec<WorkerResult>>,
    warnings: Vec<String>,
    cache_guards: Vec<CacheGuard>,
    /// On a run on several ranks: each group as this rank saw it.
    rank_groups: Vec<RankGroup>,
    /// The running group's scheduler switches and postrun commands, for its end
    /// (also when its stuck workers are left behind).
    hooks: job_hooks::GroupHooks,
}

impl Gathered {
    /// The results of the jobs `group` (indices), in its order.
    fn place(&mut self, group: &[usize], results: Vec<Vec<WorkerResult>>) {
        for (&j, r) in group.iter().zip(results) {
            if self.results.len() <= j {
                self.results.resize_with(j + 1, Vec::new);
            }
            self.results[j] = r;
        }
    }
}

/// The end of a group: the postrun commands of the jobs that `ran` (with their
/// workers' results) and the schedulers put back, then every job's results
/// (those that ran and the `others`: create_only, refused by their prerun) kept
/// with their notes, I/O traces and logs, and files unlinked as asked;
/// `progress` hears of the postrun commands and the logs.
fn end_group(
    req: &RunRequest,
    files: &FileSet,
    so_far: &mut Gathered,
    ran: Vec<(usize, Vec<WorkerResult>)>,
    others: impl Iterator<Item = (usize, Vec<WorkerResult>)>,
    progress: &dyn fileset::Progress,
) -> Result<(), fileset::TargetError> {
    std::mem::take(&mut so_far.hooks).finish(
        req.jobs,
        ran.iter().map(|(j, r)| (*j, r.as_slice())),
        &mut so_far.warnings,
        progress,
    );
    let first_worker_numbers = first_worker_numbers(req.jobs);
    for (j, mut r) in ran.into_iter().chain(others) {
        for w in &r {
            if let Some(trace) = &w.io_trace {
                crate::debug::keep_io_trace(trace.clone());
            }
            so_far.warnings.extend(
                w.notes
                    .iter()
                    .map(|n| format!("job '{}': {n}", req.jobs[j].name)),
            );
        }
        progress.step(fileset::Step {
            doing: "writing the logs of job",
            on: &req.jobs[j].name,
            done: 0,
            total: 0,
        });
        if let Err(e) = write_logs(&req.jobs[j], &r, first_worker_numbers[j]) {
            // The job failed as a whole (exit 1), with its measured results reported.
            let message = format!("cannot write a log: {e}");
            match r.iter_mut().find(|w| w.error.is_none()) {
                Some(first) => {
                    first.error = Some(result::IoFailure {
                        message,
                        errno: e.raw_os_error().unwrap_or(libc::EIO),
                    })
                }
                None => so_far
                    .warnings
                    .push(format!("job '{}': {message}", req.jobs[j].name)),
            }
        }
        so_far.place(&[j], vec![r]);
        if req.jobs[j].io.unlink {
            files.unlink(j)?;
        }
    }
    Ok(())
}

/// What finishing the report takes, once.
struct Tail {
    disks: DiskWatch,
    sampler: Result<Sampler, String>,
    environment: Environment,
    wall: Instant,
    started_unix_ms: u64,
}

/// What a group needs of the run around it.
struct RunSoFar<'r> {
    gathered: &'r RefCell<Gathered>,
    started_unix_ms: u64,
    /// Finish the run with the group `jobs`' results, its stuck worker threads
    /// left behind, and hand it to the caller, which ends the process.
    abandon: &'r Abandon<'r>,
}

/// The files, the group's jobs and their results → never returns.
type Abandon<'r> =
    dyn Fn(&FileSet, &[usize], Vec<Vec<WorkerResult>>) -> std::convert::Infallible + 'r;

/// The report of the run from what it gathered; `partial` when the watchdog ended it early.
fn finish(
    req: &RunRequest,
    mut gathered: Gathered,
    tail: Tail,
    files: &FileSet,
    board: &LiveBoard,
    partial: bool,
) -> RunOutcome {
    let warnings = &mut gathered.warnings;
    warnings.dedup();
    let disks = tail.disks.finish(tail.wall.elapsed());
    let mut observations = watch::stop_sampler(tail.sampler, req, board, warnings);
    observations.cache_guards = std::mem::take(&mut gathered.cache_guards);
    observations.layouts = watch::layout_records(files);
    let cluster = req.cluster.and_then(|link| {
        let at = gather::RankTail {
            started_unix_ms: tail.started_unix_ms,
            environment: &tail.environment,
            disks: &disks,
        };
        gather::gather_ranks(req, link, &mut gathered, at, &mut observations)
    });
    // a run on several ranks has its disks per host, in its ranks' reports
    let disks = if cluster.is_some() { Vec::new() } else { disks };
    let mut report = collect::report(req, &gathered.results, disks, tail.started_unix_ms);
    report.cluster = cluster;
    report.interrupted |= partial;
    report.elapsed_ns = Some(tail.wall.elapsed().as_nanos() as u64);
    report.observations = observations;
    report.environment = tail.environment;
    cgroup::record_workers_elsewhere(&mut report.environment, &report.observations.workers);
    RunOutcome {
        report,
        warnings: gathered.warnings,
    }
}

/// fio numbers workers 1, 2, … across the whole run, in job order; log file
/// names carry that number.
fn first_worker_numbers(jobs: &[JobSpec]) -> Vec<usize> {
    jobs.iter()
        .scan(1, |next, job| {
            let first = *next;
            *next += job.exec.numjobs as usize;
            Some(first)
        })
        .collect()
}

/// Write the I/O logs of one finished job, if it asked for any.
fn write_logs(
    job: &JobSpec,
    workers: &[WorkerResult],
    first_worker_number: usize,
) -> std::io::Result<()> {
    let logs: Vec<&logs::IoLog> = workers.iter().filter_map(|w| w.logs.as_ref()).collect();
    if logs.is_empty() {
        return Ok(());
    }
    logs::write_job_logs(&job.logs, &logs, first_worker_number).map(drop)
}

fn worker_ctx<'s>(
    req: &'s RunRequest,
    files: &'s FileSet,
    job_index: usize,
    worker_index: u32,
    start: &'s dyn StartSignal,
    stop: &'s AtomicBool,
    board: &'s LiveBoard,
) -> WorkerCtx<'s> {
    let job = &req.jobs[job_index];
    let handles = files.workers[job_index][worker_index as usize]
        .files
        .iter()
        .map(|wf| files.targets[wf.target].file.clone())
        .collect();
    WorkerCtx {
        job,
        files: OpenFile::list(task_files(files, job_index, worker_index), handles),
        buffer_align: files.buffer_align(job_index),
        seed: seed_of(job, job_index, worker_index),
        worker_number: worker_number(req.jobs, job_index, worker_index),
        start,
        stop,
        live: board.worker(job_index, worker_index),
        flow_members: flow::member_slots(req.jobs, job_index)
            .into_iter()
            .map(|slot| board.slot(slot))
            .collect(),
        status: None,
        io_timeout: req.io_timeout,
    }
}

/// fio's 1-based number of a worker in the run.
fn worker_number(jobs: &[JobSpec], job_index: usize, worker_index: u32) -> u64 {
    (first_worker_numbers(jobs)[job_index] + worker_index as usize) as u64
}

/// A worker's seed, traced for `--debug=random`; called once per worker and run.
fn seed_of(job: &JobSpec, job_index: usize, worker_index: u32) -> u64 {
    let seed = worker_seed(
        job.workload.randseed,
        job.workload.randrepeat,
        job_index as u32,
        worker_index,
    );
    trace_seeds(seed);
    seed
}

/// Schedule the worker thread as its job asks, then pick the monomorphised hot loop for
/// the job's engine.
fn run_worker(kind: EngineKind, ctx: WorkerCtx, worker_index: u32) -> WorkerResult {
    let mut result = match sched::apply(&ctx.job.exec.sched, worker_index) {
        Ok(()) => engine::with_engine(kind, RunWorker(ctx)),
        Err(failure) => {
            // Still meet the others at the start barrier, or they would wait forever.
            ctx.start.wait();
            WorkerResult::failed(failure)
        }
    };
    result.tid = iolens_sys::gettid();
    result
}

/// The hot loop of one worker, for the engine `with_engine` picks: the engine itself, or
/// with `io_submit_mode=offload` the pool of submit threads over it.
struct RunWorker<'a>(WorkerCtx<'a>);

impl engine::ForEngine for RunWorker<'_> {
    type Output = WorkerResult;
    fn run<E: engine::Engine>(self) -> WorkerResult {
        match self.0.job.engine.submit_mode {
            SubmitMode::Inline => worker::run::<E>(self.0),
            SubmitMode::Offload => worker::run::<offload::Offload<E>>(self.0),
        }
    }
}
