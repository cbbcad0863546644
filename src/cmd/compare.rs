//! `iolens compare A B [--html FILE] [--pair A_JOB=B_JOB]`: two result files or
//! history ids, side by side, job by job (by name, or as paired); a side with an
//! interrupted run only with `--allow-interrupted`.

use super::common::{CmdError, HistoryFlags};
use super::comparison::{load_side, pair_jobs, refuse_cut_short, show};
use super::EXIT_OK;
use crate::cli::JobPair;
use std::path::Path;

pub(super) fn compare_command(
    [a, b]: [&str; 2],
    html_path: Option<&Path>,
    allow_interrupted: bool,
    pairs: &[JobPair],
    history: &HistoryFlags,
) -> Result<i32, CmdError> {
    let a = load_side(a, history).map_err(|e| CmdError::run_failed(e.to_string()))?;
    let mut b = load_side(b, history).map_err(|e| CmdError::run_failed(e.to_string()))?;
    refuse_cut_short([&a, &b], allow_interrupted)?;
    pair_jobs(&a, &mut b, pairs)?;
    show(&a, &b, "", html_path, None)?;
    Ok(EXIT_OK)
}
