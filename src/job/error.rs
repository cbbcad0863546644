//! `JobError`: one line naming where, which option, which value, and how to fix it.

use super::raw::Source;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum JobError {
    #[error("{at}: unknown option '{}'{}", shown(.name), did_you_mean(.suggestion))]
    UnknownOption {
        at: Source,
        name: String,
        suggestion: Option<&'static str>,
    },
    #[error("{at}: {} needs a value (e.g. {}={example})", spelled(.at, .option), spelled(.at, .option))]
    MissingValue {
        at: Source,
        option: &'static str,
        example: &'static str,
    },
    #[error("{at}: '{}' is not a job option (job options look like --bs=4k)", shown(.arg))]
    NotAnOption { at: Source, arg: String },
    #[error("{at}: {option}={}: {} ({hint})", shown(.value), .reason.replace(.value.as_str(), &shown(.value)))]
    InvalidValue {
        at: Source,
        option: &'static str,
        value: String,
        reason: String,
        hint: String,
    },
    /// An option or value fio has and iolens deliberately does not.
    #[error(
        "{at}: {option}={}: not supported by iolens: {reason} (instead: {instead})",
        shown(.value)
    )]
    Unsupported {
        at: Source,
        option: &'static str,
        value: String,
        reason: &'static str,
        instead: &'static str,
    },
    #[error("{at}: job '{job}': {problem}")]
    InvalidJob {
        at: Source,
        job: String,
        problem: String,
    },
    #[error("no job given: start one with --name=NAME or give a job file")]
    NoJobs,
    #[error("{path}: cannot read the job file: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("--section={name}: no job file has a section [{name}] (give the name in brackets)")]
    UnknownSection { name: String },
    /// A job file line that is not a header, an option or an include.
    #[error("{at}: {problem} ({fix})")]
    Syntax {
        at: Source,
        problem: String,
        fix: String,
    },
}

/// An option as its front end writes it: `--bs` on the command line, `bs` in a job file.
fn spelled(at: &Source, option: &str) -> String {
    match at {
        Source::Argument(_) => format!("--{option}"),
        _ => option.to_string(),
    }
}

/// Text from the user as an error line shows it (also where a reason quotes it): whole up to
/// 80 characters, else its start and its length, so a hostile value (100000 parentheses)
/// still gives one short line.
fn shown(text: &str) -> String {
    const MAX_CHARS: usize = 80;
    match text.char_indices().nth(MAX_CHARS) {
        None => text.to_string(),
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
    }
}

fn did_you_mean(suggestion: &Option<&'static str>) -> String {
    suggestion
        .map(|name| format!(" (did you mean '{name}'?)"))
        .unwrap_or_default()
}
