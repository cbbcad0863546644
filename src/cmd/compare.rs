//! `iolens compare A B [--html FILE]`: two result files or history ids, side by
//! side; a side with an interrupted run only with `--allow-interrupted`.

use super::common::{CmdError, HistoryFlags};
use super::comparison::{load_side, refuse_cut_short, show};
use super::EXIT_OK;
use std::path::Path;

pub(super) fn compare_command(
    a: &str,
    b: &str,
    html_path: Option<&Path>,
    allow_interrupted: bool,
    history: &HistoryFlags,
) -> Result<i32, CmdError> {
    let a = load_side(a, history).map_err(|e| CmdError::run_failed(e.to_string()))?;
    let b = load_side(b, history).map_err(|e| CmdError::run_failed(e.to_string()))?;
    refuse_cut_short([&a, &b], allow_interrupted)?;
    show(&a, &b, "", html_path, None)?;
    Ok(EXIT_OK)
}
