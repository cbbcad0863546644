//! The optional setup steps of a worker that can fail: `verify_state_load`,
//! the verifier, the trim methods, `write_iolog`, `read_iolog` and
//! `--debug=io`. Each yields its part or the one-line failure the worker
//! reports when it starts (after the group's start barrier, so no worker is
//! left waiting for one that failed); [`Extras`] is what they made.

use super::replay::Replayer;
use super::trim::trim_methods;
use crate::debug::{self, DebugType, IoTrace};
use crate::engine::TrimMethod;
use crate::iolog::IologWriter;
use crate::runner::checks::Checks;
use crate::runner::ctx::WorkerCtx;
use crate::runner::result::IoFailure;
use crate::runner::verify::{Verifier, VerifierFor, VerifyState};
use crate::workload::pacing::Clock;

/// What the optional setup steps made for one worker.
pub(super) struct Extras<'a> {
    /// The seed of the worker's I/Os: the job's, or the writer's of a loaded
    /// verify state, so a replay issues the writer's offsets.
    pub(super) seed: u64,
    /// A reading job with a loaded verify state issues the writes it recorded.
    pub(super) replayed_writes: Option<u64>,
    /// The per-I/O checks, with the verifier and the logs the job asks for.
    pub(super) checks: Checks<'a>,
    /// How each file is trimmed; empty unless the job trims.
    pub(super) trim_methods: Vec<TrimMethod>,
    /// `read_iolog`: the log the I/Os come from.
    pub(super) replay: Option<Replayer<'a>>,
    /// The first step that failed; the worker then issues nothing.
    pub(super) error: Option<IoFailure>,
}

impl<'a> Extras<'a> {
    /// The steps the job of `ctx` asks for, for a queue of `depth` whose
    /// measuring starts at `ramp_end_ns`; the logs start at `clock`'s now.
    pub(super) fn prepare(
        ctx: &WorkerCtx<'a>,
        depth: u32,
        ramp_end_ns: u64,
        clock: &impl Clock,
    ) -> Self {
        let job = ctx.job;
        let loaded = job
            .verify
            .as_ref()
            .filter(|spec| spec.state_load)
            .map(|spec| VerifyState::load(spec, &job.name, ctx.worker_number));
        let (loaded, load_error) = split_setup(loaded);
        let seed = loaded.as_ref().map_or(ctx.seed, |s| s.seed);
        let replayed_writes = loaded
            .as_ref()
            .filter(|_| !job.workload.rw.writes())
            .map(|state| state.writes);
        // A state that failed to load: no verifier, so none saves a state either.
        let verify = job
            .verify
            .as_ref()
            .filter(|_| load_error.is_none())
            .map(|spec| {
                let owner = VerifierFor {
                    seed,
                    worker_number: ctx.worker_number,
                    loaded,
                };
                Verifier::new(spec, job, owner, &ctx.files, ctx.buffer_align)
            });
        let (verify, verify_error) = split_setup(verify);
        let (trim_methods, trim_error) = match trim_methods(job, &ctx.files) {
            Ok(methods) => (methods, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        let paths: Vec<&std::path::Path> = ctx.files.iter().map(|f| f.path.as_path()).collect();
        let iolog = job
            .iolog
            .write
            .as_ref()
            .map(|path| IologWriter::create(path, &paths, clock.now_ns()));
        let (iolog, iolog_error) = split_setup(iolog);
        let replay = job
            .iolog
            .replay
            .as_ref()
            .map(|spec| Replayer::open(spec, clock.now_ns()));
        let (replay, replay_error) = split_setup(replay);
        let io_trace = debug::enabled(DebugType::Io).then(|| IoTrace::create(&paths));
        let (io_trace, io_trace_error) = split_setup(io_trace);
        let error = load_error
            .or(verify_error)
            .or(trim_error)
            .or(iolog_error)
            .or(replay_error)
            .or(io_trace_error);
        let mut checks = Checks::new(job, verify, ctx.status, depth, ramp_end_ns);
        checks.iolog = iolog;
        checks.io_trace = io_trace;
        Extras {
            seed,
            replayed_writes,
            checks,
            trim_methods,
            replay,
            error,
        }
    }
}

/// A setup step's value, or the one-line failure the worker reports when it starts;
/// neither when the job does not ask for the step.
fn split_setup<T, E: std::fmt::Display>(
    step: Option<Result<T, E>>,
) -> (Option<T>, Option<IoFailure>) {
    match step {
        Some(Ok(value)) => (Some(value), None),
        Some(Err(e)) => (
            None,
            Some(IoFailure {
                message: e.to_string(),
                errno: 0,
            }),
        ),
        None => (None, None),
    }
}
