//! `iolens run` (also as `fio`): job files and fio-style options in, a report out;
//! with `--repeat`/`--warmup` statistics over several runs, with `--compare-with`
//! the comparison with a stored run.

use super::common::{
    emit, fail_on, open_report, run_once, run_repeated, run_series, run_status, said_code,
    stop_flag, write_html, CmdError, HistoryFlags, JobSet, Repetitions,
};
use super::comparison;
use super::output;
use crate::cli::RunArgs;
use crate::cluster;
use crate::debug;
use crate::model::RunReport;
use crate::report::{fio::agg_bw_log, fio::json as fio_json};
use crate::runner::ranks::{ClusterLink, RankFile};
use crate::runner::status::StatusReports;
use crate::runner::RunOutcome;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// Run the jobs; `command_line` is what the user typed after `run`, for the report.
pub(super) fn run_command(args: &RunArgs, command_line: &[String]) -> Result<i32, CmdError> {
    let flags = &args.flags;
    let history = HistoryFlags::for_run(flags);
    let formats = flags.formats();
    let launch = cluster::Launch::of_this_process();
    let on_ranks = cluster::decide(
        flags.mpi.unwrap_or_default(),
        launch,
        cluster::BUILT_WITH_MPI,
    )
    .map_err(|e| CmdError::usage(e.to_string()))?;
    let (repetitions, warmup) = (flags.repeat.unwrap_or(1), flags.warmup.unwrap_or(0));
    let series = repetitions > 1 || warmup > 0;
    if series && flags.debug.is_some() {
        return Err(CmdError::usage(
            "--debug traces one run: leave out --repeat and --warmup to use it",
        ));
    }
    let options = Repetitions {
        repetitions,
        warmup,
        formats: &formats,
        output: flags.output.as_deref(),
        history: &history,
        compare_with: flags.compare_with,
        html: flags.html.as_deref(),
        fail_on: flags.fail_on,
        quiet_findings: flags.no_finding_lines(),
    };
    if series {
        // on several ranks every rank refuses alike, before MPI starts
        options.refuse_fio_formats()?;
    }
    let link = cluster::connect(on_ranks).map_err(CmdError::run_failed)?;
    let ran = run_connected(args, command_line, &options, link.as_deref());
    match (ran, link.as_deref()) {
        // a rank that gave up alone would leave the others waiting at the barrier
        (Err(e), Some(link)) if link.ranks() > 1 => {
            let me = link.rank();
            link.abort(&format!(
                "rank {} on {}: {}",
                me.rank,
                me.hostname,
                e.message()
            ))
        }
        (ran, _) => ran,
    }
}

/// The run once MPI is up (or not used): every rank's part, and the first rank's report.
fn run_connected(
    args: &RunArgs,
    command_line: &[String],
    options: &Repetitions,
    link: Option<&dyn ClusterLink>,
) -> Result<i32, CmdError> {
    let flags = &args.flags;
    let series = options.repetitions > 1 || options.warmup > 0;
    let mut jobs = JobSet::load(flags, &args.args, command_line)?;
    // Said by the rank that stores the run, once the jobs are read.
    if link.is_none_or(|l| l.rank().rank == 0) {
        options.history.say_where_stored("iolens run");
    }
    let rank_file = match link {
        Some(link) => {
            jobs.place_on_rank(link.rank().rank);
            Some(rank_file(flags.mpi_results.as_deref(), link.rank().rank)?)
        }
        None => None,
    };
    let cluster = link.zip(rank_file.as_deref());
    let stop = stop_flag()?;
    // Only the first rank reports; the others hand it their results.
    if link.is_some_and(|l| l.rank().rank != 0) {
        let (_, code) = run_series(&jobs, options, &stop, cluster, None)?;
        tidy_rank_dir(flags.mpi_results.as_deref());
        return Ok(code);
    }
    if series {
        let code = run_repeated(&jobs, options, &stop, cluster)?;
        if cluster.is_some() {
            tidy_rank_dir(flags.mpi_results.as_deref());
        }
        return Ok(code);
    }
    // Opened before the run: interim reports (--status-interval) and the final one share it.
    let destination = RefCell::new(open_report(flags.output.as_deref())?);
    // fio's lines before the run (with the normal text), after what parsing traced.
    emit(&mut destination.borrow_mut(), &debug::take())?;
    let version = fio_json::fio_version(env!("CARGO_PKG_VERSION"));
    let preamble = output::preamble(jobs.specs(), options.formats, &version);
    emit(&mut destination.borrow_mut(), &preamble)?;
    // A failed interim report is not worth stopping the run for; the final write reports errors.
    let print_status = |report: &RunReport| {
        let _ = destination
            .borrow_mut()
            .write(&output::render_status(report, options.formats));
    };
    let status = flags.status_interval.map(|interval| StatusReports {
        interval,
        on_report: &print_status,
    });
    // Written, stored and judged alike whether the run returns or its stuck
    // worker threads are left behind (then the process exits with the code).
    let finish = |outcome: RunOutcome| -> Result<i32, CmdError> {
        emit(&mut destination.borrow_mut(), &debug::take())?;
        debug::drain_io_traces(|lines| emit(&mut destination.borrow_mut(), lines))?;
        emit(
            &mut destination.borrow_mut(),
            &output::render(&outcome.report, options.formats),
        )?;
        output::print_findings_summary(
            &outcome.report.findings,
            options.formats,
            flags.no_finding_lines(),
        );
        // With a baseline the page is the comparison, which holds this run's charts too.
        if let (Some(path), None) = (&flags.html, flags.compare_with) {
            write_html(path, &output::render_html(&outcome.report))?;
        }
        if flags.bandwidth_log {
            write_bandwidth_logs(&outcome.report)?;
        }
        let code = run_status(&outcome.report);
        let reports = [outcome.report];
        options.history.record(&reports);
        if let Some(id) = flags.compare_with {
            comparison::against_history(
                id,
                &reports,
                options.history,
                flags.html.as_deref(),
                None,
            )?;
        }
        Ok(fail_on(code, flags.fail_on, &reports[0].findings))
    };
    let on_abandoned = |outcome| said_code(finish(outcome));
    // A run that fails outright writes no trace, and leaves no trace file behind.
    let outcome = run_once(&jobs, &stop, status, Some(&on_abandoned), cluster, None)
        .inspect_err(|_| debug::discard_io_traces())?;
    if cluster.is_some() {
        tidy_rank_dir(flags.mpi_results.as_deref());
    }
    finish(outcome)
}

const DEFAULT_RANK_DIR: &str = "iolens-ranks";

/// Where rank `rank` writes its results as each group ends: in `--mpi-results`'s
/// directory (default `iolens-ranks`), made if missing.
fn rank_file(dir: Option<&Path>, rank: u32) -> Result<PathBuf, CmdError> {
    let dir = dir.unwrap_or(Path::new(DEFAULT_RANK_DIR));
    std::fs::create_dir_all(dir).map_err(|e| {
        CmdError::run_failed(format!(
            "--mpi-results={}: cannot make the directory: {e}",
            dir.display()
        ))
    })?;
    Ok(RankFile::path(dir, rank))
}

/// The default rank directory goes once the last rank file in it has (a run that
/// ended well); one named by `--mpi-results` stays.
fn tidy_rank_dir(given: Option<&Path>) {
    if given.is_none() {
        let _ = std::fs::remove_dir(DEFAULT_RANK_DIR);
    }
}

/// fio's `--bandwidth-log` files, in the current directory as fio writes them.
fn write_bandwidth_logs(report: &RunReport) -> Result<(), CmdError> {
    let logs = agg_bw_log::render(&report.observations);
    for (name, text) in agg_bw_log::FILES.iter().zip(logs) {
        std::fs::write(name, text)
            .map_err(|e| CmdError::run_failed(format!("--bandwidth-log: {name}: {e}")))?;
    }
    Ok(())
}
