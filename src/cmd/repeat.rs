//! `iolens run --repeat N [--warmup K]`: the whole job set N times, each a full
//! run; the table (or JSON with every repetition) and the findings.

use super::history::HistoryFlags;
use super::output::Format;
use super::quick::write_html;
use super::run::{emit, run_once, run_status, JobSet};
use super::{compare, EXIT_OK, EXIT_USAGE};
use crate::diagnose::repetitions;
use crate::report::{html, repeat_table};
use std::path::Path;
use std::sync::atomic::AtomicBool;

pub struct Options<'a> {
    pub repetitions: u32,
    pub warmup: u32,
    pub formats: &'a [Format],
    pub output: Option<&'a Path>,
    pub history: &'a HistoryFlags,
    pub compare_with: Option<i64>,
    /// `--html FILE`: the repetitions and their statistics as an HTML report.
    pub html: Option<&'a Path>,
}

/// Run the repetitions; Ok(exit code) when a report was written, Err(exit code) otherwise.
pub fn run_repeated(jobs: &JobSet, o: &Options, stop: &AtomicBool) -> Result<i32, i32> {
    if o.formats
        .iter()
        .any(|f| !matches!(f, Format::Normal | Format::IolensJson))
    {
        eprintln!("iolens: --repeat writes normal or iolens-json output (fio's formats have no place for repetitions)");
        return Err(EXIT_USAGE);
    }
    let total = o.warmup + o.repetitions;
    let mut reports = Vec::with_capacity(o.repetitions as usize);
    let mut code = EXIT_OK;
    for i in 0..total {
        let warming = i < o.warmup;
        eprintln!(
            "iolens: {} {}/{}",
            if warming { "warm-up run" } else { "repetition" },
            if warming { i + 1 } else { i - o.warmup + 1 },
            if warming { o.warmup } else { o.repetitions }
        );
        let outcome = run_once(jobs, stop, None)?;
        let status = run_status(&outcome.report);
        code = code.max(status);
        if !warming {
            reports.push(outcome.report);
        }
        if status != EXIT_OK {
            break;
        }
    }
    if reports.is_empty() {
        return Err(code);
    }
    o.history.record(&reports);
    let result = repetitions::build(reports, o.warmup);
    let mut rendered = String::new();
    for f in o.formats {
        match f {
            Format::Normal => rendered.push_str(&repeat_table::render_table(&result)),
            _ => rendered.push_str(
                &serde_json::to_string_pretty(&result).expect("RepeatReport serializes to JSON"),
            ),
        }
        if !rendered.ends_with('\n') {
            rendered.push('\n');
        }
    }
    emit(&rendered, o.output)?;
    if let Some(path) = o.html {
        write_html(path, &html::render_repeat(&result))?;
    }
    if let Some(id) = o.compare_with {
        compare::against_history(id, &result.repetitions, o.history, None)?;
    }
    Ok(code)
}
