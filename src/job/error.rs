//! `JobError`: one line naming where, which option, which value, and how to fix it.

use super::raw::Source;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobError {
    #[error("{at}: unknown option '{name}'{}", did_you_mean(.suggestion))]
    UnknownOption {
        at: Source,
        name: String,
        suggestion: Option<&'static str>,
    },
    #[error("{at}: --{option} needs a value (e.g. --{option}={example})")]
    MissingValue {
        at: Source,
        option: &'static str,
        example: &'static str,
    },
    #[error("{at}: '{arg}' is not a job option (job options look like --bs=4k)")]
    NotAnOption { at: Source, arg: String },
    #[error("{at}: {option}={value}: {reason} ({hint})")]
    InvalidValue {
        at: Source,
        option: &'static str,
        value: String,
        reason: String,
        hint: String,
    },
    #[error("{at}: job '{job}': {problem}")]
    InvalidJob {
        at: Source,
        job: String,
        problem: String,
    },
    #[error("no job given: start one with --name=NAME")]
    NoJobs,
}

fn did_you_mean(suggestion: &Option<&'static str>) -> String {
    suggestion
        .map(|name| format!(" (did you mean '{name}'?)"))
        .unwrap_or_default()
}
