//! The typed values of iolens' own flags, and the clap value parsers that make
//! them: a bad value is refused by clap with one line naming the flag, the
//! value and the fix (`cli::error_line`).

use crate::cluster::MpiMode;
use crate::debug::{self, DebugRequest};
use crate::model::Severity;
use crate::units::{self, TimeUnit};
use clap::builder::{PossibleValue, TypedValueParser};
use clap::ValueEnum;
use clap_complete::Shell;
use std::path::PathBuf;
use std::time::Duration;

/// A flag's value refused by one of these parsers: the whole message, flag and fix included.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FlagValueError(pub String);

impl std::fmt::Display for FlagValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlagValueError {}

type Parsed<T> = Result<T, FlagValueError>;

fn refuse<T>(message: String) -> Parsed<T> {
    Err(FlagValueError(message))
}

/// A report format of `--output-format` (the report's formats but the HTML page,
/// which `--html FILE` writes).
pub(crate) use crate::report::Format;

/// `--output-format=`'s formats, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formats(pub Vec<Format>);

/// Parse `--output-format=` (fio allows a comma list).
pub(super) fn parse_formats(value: &str) -> Parsed<Formats> {
    let formats = value.split(',').map(|f| match f.trim() {
        "normal" => Ok(Format::Normal),
        "json" => Ok(Format::FioJson),
        "json+" => Ok(Format::FioJsonPlus),
        "terse" => Ok(Format::Terse),
        "iolens-json" => Ok(Format::IolensJson),
        other => refuse(format!(
            "--output-format={other}: unknown format (use normal, json, json+, terse or \
             iolens-json; several with commas)"
        )),
    });
    formats.collect::<Parsed<Vec<Format>>>().map(Formats)
}

/// `compare --pair A_JOB=B_JOB`: job A_JOB of A compared with job B_JOB of B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPair {
    /// The job's name on side A.
    pub a: String,
    /// The job's name on side B.
    pub b: String,
}

/// Parse `--pair A_JOB=B_JOB`.
pub(super) fn parse_pair(value: &str) -> Parsed<JobPair> {
    match value.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok(JobPair {
            a: a.into(),
            b: b.into(),
        }),
        _ => refuse(format!(
            "--pair={value}: give a job of A and a job of B as A_JOB=B_JOB"
        )),
    }
}

/// fio's `--terse-version`: fio knows 2 to 5; iolens writes 3 (fio's default).
pub(super) fn parse_terse_version(value: &str) -> Parsed<u32> {
    match value.trim().parse::<u32>() {
        Ok(3) => Ok(3),
        Ok(version @ (2 | 4 | 5)) => refuse(format!(
            "--terse-version={version}: iolens writes terse version 3 only (fio's default); \
             leave the flag out or give 3"
        )),
        _ => refuse(format!(
            "--terse-version={value}: fio's versions are 2, 3, 4 and 5, and iolens writes 3"
        )),
    }
}

/// fio's `--eta-newline` and `--eta-interval`: a positive time.
pub(super) fn parse_eta_period(value: &str) -> Parsed<Duration> {
    let flag = "--eta-newline/--eta-interval";
    let period = time(flag, value, "e.g. 2 or 500ms")?;
    if period.is_zero() {
        return refuse(format!(
            "{flag}={value}: give a positive time, e.g. 2 or 500ms"
        ));
    }
    Ok(period)
}

/// fio's `--eta`: when to show progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EtaMode {
    /// Only when both stdout and stderr are terminals.
    #[default]
    Auto,
    /// Also when they are not (plain lines on stderr instead of redrawn bars).
    Always,
    Never,
}

/// Parse `--eta=`.
pub(super) fn parse_eta(value: &str) -> Parsed<EtaMode> {
    match value {
        "auto" => Ok(EtaMode::Auto),
        "always" => Ok(EtaMode::Always),
        "never" => Ok(EtaMode::Never),
        other => refuse(format!("--eta={other}: use auto, always or never")),
    }
}

/// `--fio-compat`: refuse what fio would silently reinterpret, or accept it with a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FioCompat {
    #[default]
    Strict,
    Lenient,
}

/// Parse `--fio-compat=`.
pub(super) fn parse_fio_compat(value: &str) -> Parsed<FioCompat> {
    match value {
        "strict" => Ok(FioCompat::Strict),
        "lenient" => Ok(FioCompat::Lenient),
        other => refuse(format!("--fio-compat={other}: use strict or lenient")),
    }
}

/// Parse `--mpi=`.
pub(super) fn parse_mpi(value: &str) -> Parsed<MpiMode> {
    match value {
        "auto" => Ok(MpiMode::Auto),
        "on" => Ok(MpiMode::On),
        "off" => Ok(MpiMode::Off),
        other => refuse(format!(
            "--mpi={other}: use auto (MPI when launched as several ranks), on or off"
        )),
    }
}

/// Parse `--fail-on=`: the least severity of a finding that fails the run.
pub(super) fn parse_fail_on(value: &str) -> Parsed<Severity> {
    match value {
        "warning" => Ok(Severity::Warning),
        "info" => Ok(Severity::Info),
        other => refuse(format!(
            "--fail-on={other}: use warning (fail on a warning finding) or info (on any finding)"
        )),
    }
}

/// Parse `--debug=`: fio's debug types iolens traces, or `help`.
pub(super) fn parse_debug(value: &str) -> Parsed<DebugRequest> {
    debug::parse_request(value).map_err(|e| FlagValueError(e.to_string()))
}

/// A whole number given to `flag`.
fn whole_number<T: std::str::FromStr>(flag: &str, value: &str) -> Parsed<T> {
    value
        .parse()
        .or_else(|_| refuse(format!("{flag}={value}: expected a whole number")))
}

/// `--repeat`: at least one repetition.
pub(super) fn parse_repetitions(value: &str) -> Parsed<u32> {
    match whole_number("--repeat", value)? {
        0 => refuse("--repeat=0: give at least one repetition".into()),
        n => Ok(n),
    }
}

/// `--warmup`: unmeasured runs.
pub(super) fn parse_warmup(value: &str) -> Parsed<u32> {
    whole_number("--warmup", value)
}

/// `--compare-with` of run: a history id.
pub(super) fn parse_history_id(value: &str) -> Parsed<i64> {
    whole_number("--compare-with", value)
}

/// `--output`: a file name, not an empty word.
pub(super) fn parse_report_file(value: &str) -> Parsed<PathBuf> {
    if value.is_empty() {
        return refuse("--output= needs a file name (e.g. --output=result.json)".into());
    }
    Ok(PathBuf::from(value))
}

/// `iolens completions SHELL`'s value: a shell clap_complete writes for, refused in one line
/// that names them all; its possible values go into the completions and the man page.
#[derive(Debug, Clone, Copy)]
pub(super) struct ShellParser;

impl ShellParser {
    fn shells() -> impl Iterator<Item = PossibleValue> {
        Shell::value_variants()
            .iter()
            .filter_map(ValueEnum::to_possible_value)
    }

    fn parse(value: &str) -> Parsed<Shell> {
        <Shell as ValueEnum>::from_str(value, false).or_else(|_| {
            let names: Vec<String> = Self::shells().map(|v| v.get_name().to_string()).collect();
            let (last, rest) = names.split_last().expect("clap_complete knows some shells");
            refuse(format!(
                "completions: unknown shell '{value}' (use {} or {last})",
                rest.join(", ")
            ))
        })
    }
}

impl TypedValueParser for ShellParser {
    type Value = Shell;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Shell, clap::Error> {
        // Through a function parser: its error reaches `error_line` as a FlagValueError.
        (Self::parse as fn(&str) -> Parsed<Shell>).parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::shells()))
    }
}

/// A time given to `flag`, in seconds without a unit; `example` shows a good one.
fn time(flag: &str, value: &str, example: &str) -> Parsed<Duration> {
    units::parse_time(value, TimeUnit::Seconds)
        .or_else(|e| refuse(format!("{flag}={value}: {e} ({example})")))
}

/// quick's `--duration`.
pub(super) fn parse_duration(value: &str) -> Parsed<Duration> {
    time("--duration", value, "e.g. --duration=5 or 500ms")
}

/// quick's `--ramp`.
pub(super) fn parse_ramp(value: &str) -> Parsed<Duration> {
    time("--ramp", value, "e.g. --ramp=5 or 500ms")
}

/// fio's `--status-interval`: a positive duration.
pub(super) fn parse_status_interval(value: &str) -> Parsed<Duration> {
    let interval = time(
        "--status-interval",
        value,
        "e.g. --status-interval=1 or 500ms",
    )?;
    if interval.is_zero() {
        return refuse(
            "--status-interval=0: give a positive interval, e.g. --status-interval=1".into(),
        );
    }
    Ok(interval)
}

/// `--io-timeout`: a positive duration.
pub(super) fn parse_io_timeout(value: &str) -> Parsed<Duration> {
    let timeout = time("--io-timeout", value, "e.g. --io-timeout=30s")?;
    if timeout.is_zero() {
        return refuse(
            "--io-timeout=0: give a positive time (e.g. --io-timeout=30s), or leave it out for none"
                .into(),
        );
    }
    Ok(timeout)
}

/// The sampler's interval must leave it cheap (< 1% of a core at 100 ms) and meaningful.
const MIN_OBSERVE_INTERVAL: Duration = Duration::from_millis(10);

/// `--observe-interval`: at least `MIN_OBSERVE_INTERVAL`.
pub(super) fn parse_observe_interval(value: &str) -> Parsed<Duration> {
    let interval = time(
        "--observe-interval",
        value,
        "give a time such as 100ms or 1s",
    )?;
    if interval < MIN_OBSERVE_INTERVAL {
        return refuse(format!(
            "--observe-interval={value}: too short (at least 10ms; the default is 100ms)"
        ));
    }
    Ok(interval)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message<T: std::fmt::Debug>(parsed: Parsed<T>) -> String {
        parsed.expect_err("expected the value to be refused").0
    }

    #[test]
    fn formats_take_comma_lists_and_refuse_unknown_ones() {
        assert_eq!(
            parse_formats("normal,json"),
            Ok(Formats(vec![Format::Normal, Format::FioJson]))
        );
        assert_eq!(
            parse_formats("json+, terse"),
            Ok(Formats(vec![Format::FioJsonPlus, Format::Terse]))
        );
        let err = message(parse_formats("xml"));
        assert!(
            err.starts_with("--output-format=xml: unknown format"),
            "expected the refusal to name the format, got: {err}"
        );
    }

    #[test]
    fn eta_and_fio_compat_take_their_words_only() {
        assert_eq!(parse_eta("auto"), Ok(EtaMode::Auto));
        assert_eq!(parse_eta("always"), Ok(EtaMode::Always));
        assert_eq!(parse_eta("never"), Ok(EtaMode::Never));
        assert_eq!(
            message(parse_eta("sometimes")),
            "--eta=sometimes: use auto, always or never"
        );
        assert_eq!(parse_mpi("on"), Ok(MpiMode::On));
        assert_eq!(
            message(parse_mpi("yes")),
            "--mpi=yes: use auto (MPI when launched as several ranks), on or off"
        );
        assert_eq!(parse_fio_compat("lenient"), Ok(FioCompat::Lenient));
        assert_eq!(parse_fio_compat("strict"), Ok(FioCompat::Strict));
        assert_eq!(
            message(parse_fio_compat("loose")),
            "--fio-compat=loose: use strict or lenient"
        );
    }

    #[test]
    fn fail_on_takes_a_finding_severity() {
        assert_eq!(parse_fail_on("warning"), Ok(Severity::Warning));
        assert_eq!(parse_fail_on("info"), Ok(Severity::Info));
        assert_eq!(
            message(parse_fail_on("error")),
            "--fail-on=error: use warning (fail on a warning finding) or info (on any finding)",
            "expected the refusal to name the value and the two that work"
        );
    }

    #[test]
    fn counts_are_whole_and_repeat_is_at_least_one() {
        assert_eq!(parse_repetitions("5"), Ok(5));
        assert_eq!(
            message(parse_repetitions("0")),
            "--repeat=0: give at least one repetition"
        );
        assert_eq!(
            message(parse_repetitions("x")),
            "--repeat=x: expected a whole number"
        );
        assert_eq!(parse_history_id("12"), Ok(12));
        assert_eq!(
            message(parse_warmup("-1")),
            "--warmup=-1: expected a whole number"
        );
        assert_eq!(parse_report_file("r.json"), Ok(PathBuf::from("r.json")));
        assert!(message(parse_report_file("")).contains("needs a file name"));
    }

    #[test]
    fn times_are_seconds_without_a_unit_and_bounded() {
        assert_eq!(parse_status_interval("2"), Ok(Duration::from_secs(2)));
        assert_eq!(
            parse_status_interval("250ms"),
            Ok(Duration::from_millis(250))
        );
        assert!(
            message(parse_status_interval("0")).starts_with("--status-interval=0: give a positive")
        );
        assert!(message(parse_status_interval("x")).starts_with("--status-interval=x: "));
        assert_eq!(parse_io_timeout("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_io_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert!(message(parse_io_timeout("0")).contains("give a positive time"));
        assert!(message(parse_io_timeout("soon")).ends_with("(e.g. --io-timeout=30s)"));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(
            message(parse_ramp("soon")),
            "--ramp=soon: 'soon' is not a whole number (e.g. --ramp=5 or 500ms)"
        );
        assert_eq!(parse_observe_interval("1"), Ok(Duration::from_secs(1)));
        assert!(message(parse_observe_interval("1ms")).contains("too short"));
        assert!(message(parse_observe_interval("fast")).contains("100ms"));
    }
}
