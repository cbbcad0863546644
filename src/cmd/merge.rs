//! `iolens merge DIR`: the report of a run on several MPI ranks from the files
//! its ranks wrote as each group ended, when the run lost a rank before rank 0
//! could gather the results.

use super::common::{print, CmdError};
use super::output;
use crate::cli::Formats;
use crate::diagnose::diagnose;
use crate::runner::ranks::merge_files;
use std::path::Path;

pub(super) fn merge_command(dir: &Path, formats: &Formats) -> Result<i32, CmdError> {
    let (mut report, missing) = merge_files(dir).map_err(|e| CmdError::usage(e.to_string()))?;
    report.findings = diagnose(&report);
    for gap in &missing {
        eprintln!("iolens merge: {gap}");
    }
    print(&output::render(&report, &formats.0))?;
    Ok(super::common::run_status(&report))
}
