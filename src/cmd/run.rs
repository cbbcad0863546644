//! `iolens run` (also as `fio`): job files and fio-style options in, a report out;
//! with `--repeat`/`--warmup` statistics over several runs, with `--compare-with`
//! the comparison with a stored run.

use super::common::{
    emit, fail_on, open_report, run_once, run_repeated, run_status, stop_flag, write_html,
    CmdError, HistoryFlags, JobSet, Repetitions,
};
use super::comparison;
use super::output;
use crate::cli::RunArgs;
use crate::debug;
use crate::model::RunReport;
use crate::report::{agg_bw_log, html};
use crate::runner::status::StatusReports;
use crate::runner::RunOutcome;
use std::cell::RefCell;

/// Run the jobs; `command_line` is what the user typed after `run`, for the report.
pub fn run_command(args: &RunArgs, command_line: &[String]) -> Result<i32, CmdError> {
    let flags = &args.flags;
    let history = HistoryFlags::for_run(flags);
    let formats = flags.formats();
    let jobs = JobSet::load(flags, &args.args, command_line)?;
    let stop = stop_flag()?;
    let (repetitions, warmup) = (flags.repeat.unwrap_or(1), flags.warmup.unwrap_or(0));
    if repetitions > 1 || warmup > 0 {
        if flags.debug.is_some() {
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
        return run_repeated(&jobs, &options, &stop);
    }
    // Opened before the run: interim reports (--status-interval) and the final one share it.
    let destination = RefCell::new(open_report(flags.output.as_deref())?);
    // A failed interim report is not worth stopping the run for; the final write reports errors.
    let print_status = |report: &RunReport| {
        let _ = destination
            .borrow_mut()
            .write(&output::render_status(report, &formats));
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
            &output::render(&outcome.report, &formats),
        )?;
        output::print_findings_summary(
            &outcome.report.findings,
            &formats,
            flags.no_finding_lines(),
        );
        if let Some(path) = &flags.html {
            write_html(path, &html::render_run(&outcome.report))?;
        }
        if flags.bandwidth_log {
            write_bandwidth_logs(&outcome.report)?;
        }
        let code = run_status(&outcome.report);
        let reports = [outcome.report];
        history.record(&reports);
        if let Some(id) = flags.compare_with {
            comparison::against_history(id, &reports, &history, None)?;
        }
        Ok(fail_on(code, flags.fail_on, &reports[0].findings))
    };
    let on_abandoned = |outcome| {
        finish(outcome).unwrap_or_else(|e| {
            eprintln!("{e}");
            e.code()
        })
    };
    // A run that fails outright writes no trace, and leaves no trace file behind.
    let outcome = run_once(&jobs, &stop, status, Some(&on_abandoned))
        .inspect_err(|_| debug::discard_io_traces())?;
    finish(outcome)
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
