//! The fio-style command line: `--name=a --bs=4k --name=b …`. Options before the first
//! `--name` are global; each `--name` starts a job. As with fio's getopt_long_only, an
//! option may be written with one dash (`-name=a -iodepth 1`), and `--key value` works like
//! `--key=value`, except for the flags fio reads without a separate value
//! (`NO_SEPARATE_VALUE`). Other words are job files.

use crate::job::error::JobError;
use crate::job::raw::{lookup, RawJob, Source};
use std::path::PathBuf;

/// A whole fio command line: options (global, then per `--name`) and job files.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandLine {
    pub global: RawJob,
    pub jobs: Vec<RawJob>,
    pub files: Vec<PathBuf>,
}

/// Splits a command line into its options and job files (words without `--`).
pub(crate) fn parse_command_line(args: &[String]) -> Result<CommandLine, JobError> {
    let mut files = Vec::new();
    let (global, jobs) = parse(args, |word, _| {
        files.push(PathBuf::from(word));
        Ok(())
    })?;
    Ok(CommandLine {
        global,
        jobs,
        files,
    })
}

/// Splits job arguments into the global options and one `RawJob` per `--name`; any other
/// word is an error. Sources are 1-based positions in `args`.
pub(crate) fn parse_fio_args(args: &[String]) -> Result<(RawJob, Vec<RawJob>), JobError> {
    parse(args, |word, at| {
        Err(JobError::NotAnOption {
            at,
            arg: word.to_string(),
        })
    })
}

/// The options fio reads without a separate value (its "set" options: `-thread job.fio`
/// leaves job.fio a job file); `-thread=0` still sets one. Every other option takes the
/// next word as its value when no `=` follows it (`-direct 1`, `-iodepth 16`).
pub(crate) const NO_SEPARATE_VALUE: &[&str] = &[
    "blocksize_unaligned",
    "norandommap",
    "time_based",
    "verify_only",
    "exitall",
    "exitall_on_error",
    "stonewall",
    "new_group",
    "thread",
    "group_reporting",
    "zero_buffers",
    "refill_buffers",
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "userspace_reap",
    "listen",
    "pingpong",
];

/// The option in a word: `--key[=value]` or `-key[=value]` (fio takes long options with
/// one dash too); `None` for a job file, `-` alone, and a negative number given as a value.
pub(crate) fn option_text(word: &str) -> Option<&str> {
    let option = word.strip_prefix("--").or_else(|| word.strip_prefix('-'))?;
    let starts_a_name = option.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    starts_a_name.then_some(option)
}

fn parse(
    args: &[String],
    mut on_word: impl FnMut(&str, Source) -> Result<(), JobError>,
) -> Result<(RawJob, Vec<RawJob>), JobError> {
    let mut global = RawJob::new("global", Source::Argument(1));
    let mut jobs: Vec<RawJob> = Vec::new();
    let mut position = 0;
    while position < args.len() {
        let source = Source::Argument(position + 1);
        let arg = &args[position];
        position += 1;
        let Some(option) = option_text(arg) else {
            on_word(arg, source)?;
            continue;
        };
        let (key, mut value) = match option.split_once('=') {
            Some((key, value)) => (key, Some(value.to_string())),
            None => (option, None),
        };
        let def = lookup(key, &source)?;
        if value.is_none() && !NO_SEPARATE_VALUE.contains(&def.name) {
            if let Some(next) = args
                .get(position)
                .filter(|next| option_text(next).is_none())
            {
                value = Some(next.clone());
                position += 1;
            }
        }
        if def.name == "name" {
            let name = value.ok_or(JobError::MissingValue {
                at: source.clone(),
                option: def.name,
                example: def.example,
            })?;
            jobs.push(RawJob::named(name, source));
            continue;
        }
        jobs.last_mut()
            .unwrap_or(&mut global)
            .set(def, value.as_deref(), source)?;
    }
    Ok((global, jobs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::opt;
    use crate::testutil::strings as args;

    #[test]
    fn options_before_the_first_name_are_global() {
        let (global, jobs) =
            parse_fio_args(&args(&["--bs=8k", "--name=a", "--rw=write", "--name=b"])).unwrap();
        assert_eq!(global.get(opt::BS).unwrap().value, "8k");
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "a");
        assert_eq!(jobs[0].origin, Source::Argument(2));
        assert_eq!(jobs[0].get(opt::RW).unwrap().source, Source::Argument(3));
        assert!(jobs[1].get(opt::RW).is_none());
    }

    #[test]
    fn separate_values_and_bare_flags() {
        let (_, jobs) = parse_fio_args(&args(&[
            "--name",
            "a",
            "--bs",
            "16k",
            "--thread",
            "--size=1g",
        ]))
        .unwrap();
        assert_eq!(jobs[0].name, "a");
        assert_eq!(jobs[0].get(opt::BS).unwrap().value, "16k");
        assert_eq!(jobs[0].get(opt::BS).unwrap().source, Source::Argument(3));
        assert_eq!(jobs[0].get(opt::THREAD).unwrap().value, "1");
        assert_eq!(jobs[0].get(opt::SIZE).unwrap().source, Source::Argument(6));
    }

    #[test]
    fn one_dash_spells_an_option_as_two_do() {
        let (global, jobs) = parse_fio_args(&args(&[
            "-ioengine=libaio",
            "-name",
            "x",
            "-rw=randread",
            "-iodepth",
            "16",
            "-group_reporting",
            "-direct",
            "1",
            "--bs",
            "4k",
            "-thread=0",
        ]))
        .unwrap();
        let value = |option| jobs[0].get(option).map(|o| o.value.as_str());
        assert_eq!(global.get(opt::IOENGINE).unwrap().value, "libaio");
        assert_eq!(jobs[0].name, "x", "expected -name x to start job x");
        assert_eq!(
            [
                value(opt::RW),
                value(opt::IODEPTH),
                value(opt::GROUP_REPORTING),
                value(opt::DIRECT),
                value(opt::BS),
                value(opt::THREAD)
            ],
            [
                Some("randread"),
                Some("16"),
                Some("1"),
                Some("1"),
                Some("4k"),
                Some("0")
            ],
            "expected rw, iodepth, group_reporting, direct, bs, thread as fio reads them"
        );
    }

    #[test]
    fn set_flags_leave_the_next_word_alone() {
        let line = parse_command_line(&args(&[
            "-thread",
            "a.fio",
            "-time_based",
            "-",
            "-runtime",
            "10",
        ]))
        .unwrap();
        assert_eq!(
            line.files,
            [PathBuf::from("a.fio"), PathBuf::from("-")],
            "expected the words after -thread and -time_based to stay job files"
        );
        assert_eq!(line.global.get(opt::RUNTIME).unwrap().value, "10");
        let error = parse_fio_args(&args(&["-filename=/tmp/x", "-name=a", "-nosuch=1"]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error, "command line argument 3: unknown option 'nosuch'",
            "expected a one-dash word to be read as an option, not a job file"
        );
        let (_, jobs) = parse_fio_args(&args(&["--name=a", "--nice", "-5"])).unwrap();
        assert_eq!(
            jobs[0].get(opt::NICE).map(|o| o.value.as_str()),
            Some("-5"),
            "expected a negative number to be a value, not an option"
        );
    }

    #[test]
    fn every_flag_without_a_separate_value_is_a_boolean_row() {
        for name in NO_SEPARATE_VALUE {
            let def = crate::job::options::find(name);
            assert!(
                def.is_some_and(|d| d.name == *name && d.kind == crate::job::options::Kind::Bool),
                "expected {name} to be a boolean row of the option table under its own name, got {def:?}"
            );
        }
    }

    #[test]
    fn unknown_option_suggests_the_closest() {
        let error = parse_fio_args(&args(&["--name=a", "--threads"])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "command line argument 2: unknown option 'threads' (did you mean 'thread'?)"
        );
    }

    #[test]
    fn positional_words_and_valueless_options_are_errors() {
        let error = parse_fio_args(&args(&["--name=a", "job.fio"])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "command line argument 2: 'job.fio' is not a job option (job options look like --bs=4k)"
        );
        let error = parse_fio_args(&args(&["--name=a", "--bs"])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "command line argument 2: --bs needs a value (e.g. --bs=4k)"
        );
        assert!(parse_fio_args(&args(&["--name"])).is_err());
    }

    #[test]
    fn words_are_job_files_wherever_they_stand() {
        let line = parse_command_line(&args(&[
            "a.fio", "--bs=8k", "b.fio", "--name=x", "--size", "1m",
        ]))
        .unwrap();
        assert_eq!(line.files, [PathBuf::from("a.fio"), PathBuf::from("b.fio")]);
        assert_eq!(
            line.global.get(opt::BS).unwrap().source,
            Source::Argument(2)
        );
        assert_eq!(line.jobs[0].get(opt::SIZE).unwrap().value, "1m");
    }
}
