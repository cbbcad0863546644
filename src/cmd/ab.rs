//! `iolens ab A B --pairs N`: two job variants interleaved A B B A A B B A …,
//! so that drift of the machine during the session hits both arms alike.

use super::common::{print, run_once, run_status, stop_flag, CmdError, HistoryFlags, JobSet};
use super::comparison::{self, Side};
use super::EXIT_OK;
use crate::cli::RunFlags;

/// The arm (0 = A, 1 = B) of the `i`-th run in ABBA order.
fn arm_of(i: usize) -> usize {
    // Pairs alternate AB, BA: run i is A when i mod 4 is 0 or 3.
    usize::from(matches!(i % 4, 1 | 2))
}

/// `a` and `b` are fio-style option strings ("--name=x --rw=read …").
pub fn ab_command(a: &str, b: &str, pairs: u32, history: &HistoryFlags) -> Result<i32, CmdError> {
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
    let mut arms: [Vec<_>; 2] = [Vec::new(), Vec::new()];
    let mut code = EXIT_OK;
    for i in 0..2 * pairs as usize {
        let arm = arm_of(i);
        eprintln!("iolens: run {}/{}: {}", i + 1, 2 * pairs, ["A", "B"][arm]);
        let report = run_once(&jobs[arm], &stop, None, None, None, None)?.report;
        code = code.max(run_status(&report));
        arms[arm].push(report);
        if code != EXIT_OK {
            return Ok(code);
        }
    }
    for runs in &arms {
        history.record(runs);
    }
    let [a, b] = arms;
    print(&comparison::render(
        &Side {
            label: format!("A `{}`", variants[0]),
            runs: a,
        },
        &Side {
            label: format!("B `{}`", variants[1]),
            runs: b,
        },
    ))?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_interleaved_abba() {
        let order: String = (0..8).map(|i| ["A", "B"][arm_of(i)]).collect();
        assert_eq!(order, "ABBAABBA");
    }
}
