//! `iolens ab A B --pairs N`: two job variants interleaved A B B A A B B A …,
//! so that drift of the machine during the session hits both arms alike.

use super::common::{
    print, run_once, run_status, said_code, stop_flag, CmdError, HistoryFlags, JobSet,
};
use super::comparison::{self, Side};
use super::EXIT_OK;
use crate::cli::RunFlags;
use crate::model::RunReport;
use crate::report::text::repeat_table::partial_run;
use crate::runner::RunOutcome;
use std::cell::RefCell;

/// The arm (0 = A, 1 = B) of the `i`-th run in ABBA order.
fn arm_of(i: usize) -> usize {
    // Pairs alternate AB, BA: run i is A when i mod 4 is 0 or 3.
    usize::from(matches!(i % 4, 1 | 2))
}

/// `a` and `b` are fio-style option strings ("--name=x --rw=read …").
pub(super) fn ab_command(
    a: &str,
    b: &str,
    pairs: u32,
    history: &HistoryFlags,
) -> Result<i32, CmdError> {
    if pairs == 0 {
        return Err(CmdError::usage("--pairs 0: give at least one pair"));
    }
    let variants = [a, b];
    let args = variants.map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>());
    let jobs = [
        JobSet::load(&RunFlags::default(), &args[0], &args[0])?,
        JobSet::load(&RunFlags::default(), &args[1], &args[1])?,
    ];
    let stop = stop_flag()?;
    let labels = variants.map(|v| format!("`{v}`"));
    let arms: RefCell<[Vec<RunReport>; 2]> = RefCell::default();
    // A run that fails, or whose stuck workers are left behind, ends the session:
    // the runs so far and this one are stored and compared, and it is marked.
    let ended_early = |i: usize, arm: usize, report: RunReport, code: i32| {
        let line = partial_run(&format!("run {} ({})", i + 1, ARMS[arm]), &report);
        let mut runs = arms.take();
        runs[arm].push(report);
        let shown = finish(&labels, runs, history, code);
        // under the comparison (a quiet broken pipe is no news here)
        if let Some(line) = line {
            let _ = print(&format!("{line}\n"));
        }
        shown
    };
    for i in 0..2 * pairs as usize {
        let arm = arm_of(i);
        eprintln!("iolens: run {}/{}: {}", i + 1, 2 * pairs, ARMS[arm]);
        let on_abandoned = |outcome: RunOutcome| {
            let code = run_status(&outcome.report);
            said_code(ended_early(i, arm, outcome.report, code))
        };
        let report = run_once(&jobs[arm], &stop, None, Some(&on_abandoned), None, None)?.report;
        let code = run_status(&report);
        if code != EXIT_OK {
            return ended_early(i, arm, report, code);
        }
        arms.borrow_mut()[arm].push(report);
    }
    finish(&labels, arms.into_inner(), history, EXIT_OK)
}

const ARMS: [&str; 2] = ["A", "B"];

/// Both arms' runs stored, then compared when each has one; `code` is returned.
fn finish(
    labels: &[String; 2],
    arms: [Vec<RunReport>; 2],
    history: &HistoryFlags,
    code: i32,
) -> Result<i32, CmdError> {
    for runs in &arms {
        history.record(runs);
    }
    if arms.iter().any(Vec::is_empty) {
        eprintln!("iolens: no comparison: it needs a run of A and one of B");
        return Ok(code);
    }
    let [a, b] = arms;
    let [label_a, label_b] = labels;
    let a = Side {
        label: format!("A {label_a}"),
        runs: a,
    };
    let b = Side {
        label: format!("B {label_b}"),
        runs: b,
    };
    comparison::check_jobs_match(&a, &b, false)?;
    print(&comparison::text(&a, &b))?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_interleaved_abba() {
        let order: String = (0..8).map(|i| ARMS[arm_of(i)]).collect();
        assert_eq!(order, "ABBAABBA");
    }
}
