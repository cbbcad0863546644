//! `iolens show-jobs`, `--parse-only`, `--showcmd`, `--cmdhelp` and `--enghelp`: the
//! resolved jobs, option by option with where each value came from, the job files as
//! command lines, and the option and engine tables themselves.

use super::common::{load_jobs, print, with_run_args, CmdError};
use super::EXIT_OK;
use crate::cli::RunArgs;
use crate::debug;
use crate::job::options::{self, Kind, OptionDef, Status, OPTIONS};
use crate::job::raw::RawOption;
use crate::job::spec::EngineKind;
use crate::job::{LayeredJob, RawJob, Source};
use std::fmt::Write;
use std::path::Path;

/// `iolens show-jobs FILE… [--key=value…]`: every option of every job.
pub(super) fn show_jobs_command(words: &[String]) -> Result<i32, CmdError> {
    with_run_args(words, |run| print_jobs(&run, true))
}

/// `iolens run --parse-only`: each job with the options given for it.
pub(super) fn parse_only(run: &RunArgs) -> Result<i32, CmdError> {
    print_jobs(run, false)
}

/// fio's `--merge-blktrace-only`: the jobs are read and checked, and nothing runs
/// (iolens has no blktraces to merge).
pub(super) fn check_only(run: &RunArgs) -> Result<i32, CmdError> {
    load_jobs(&run.flags, &run.args)?;
    Ok(EXIT_OK)
}

/// fio's `--showcmd`: each job file as one `fio --key=value …` line (the jobs given on
/// the command line are one already), and nothing runs.
pub(super) fn showcmd(run: &RunArgs) -> Result<i32, CmdError> {
    let loaded = load_jobs(&run.flags, &run.args)?;
    print(&command_lines(&loaded.layered))
}

/// One line per job file: each `[global]` in effect where it changes, then each job's
/// `--name` and options, in the order fio parses a section's options.
fn command_lines(jobs: &[LayeredJob]) -> String {
    let mut out = String::new();
    let mut file: Option<&Path> = None;
    let mut global: Option<&RawJob> = None;
    for layered in jobs {
        let Source::File { path, .. } = &layered.job.origin else {
            continue;
        };
        if file != Some(path.as_path()) {
            if file.is_some() {
                out.push('\n');
            }
            out.push_str("fio ");
            file = Some(path);
            global = None;
        }
        if global.map(RawJob::options) != Some(layered.global.options()) {
            push_options(&mut out, layered.global.options());
            global = Some(&layered.global);
        }
        let _ = write!(out, "--name={} ", layered.job.name);
        push_options(&mut out, layered.job.options());
    }
    if file.is_some() {
        out.push('\n');
    }
    out
}

/// `--key=value ` per option (`--key ` for a bare flag), those fio must apply first
/// (kb_base, …) first and the file names last, as fio sorts a section's options.
fn push_options(out: &mut String, given: &[RawOption]) {
    let rank = |o: &&RawOption| match o.def.name {
        "lockfile" | "cpus_allowed_policy" | "kb_base" | "unit_base" => 0,
        "filename" | "filename_format" => 2,
        _ => 1,
    };
    // the stonewall a later job file implies was not written in it
    let written = given
        .iter()
        .filter(|o| !matches!(o.source, Source::FileStart { .. }));
    let mut sorted: Vec<&RawOption> = written.collect();
    sorted.sort_by_key(rank);
    for o in sorted {
        let _ = match (o.bare, o.def.name) {
            (true, name) => write!(out, "--{name} "),
            (false, "description") => write!(out, "--description=\"{}\" ", o.value),
            (false, name) => write!(out, "--{name}={} ", o.value),
        };
    }
}

/// fio's `--enghelp`: the engines (empty `request`), the own options of one
/// (`ENGINE`), or one of them described (`ENGINE,OPTION`).
pub(super) fn enghelp(request: &str) -> Result<i32, CmdError> {
    if request.is_empty() {
        let mut out = String::from("Available IO engines:\n");
        for engine in EngineKind::ALL {
            let _ = writeln!(out, "\t{}", engine.name);
        }
        return print(&out);
    }
    let (name, option) = match request.split_once(',') {
        Some((name, option)) => (name, Some(option)),
        None => (request, None),
    };
    let Some(engine) = EngineKind::ALL.iter().find(|e| e.name == name) else {
        return Err(CmdError::usage(format!(
            "--enghelp={request}: no engine '{name}' (--enghelp lists them)"
        )));
    };
    let own = engine.options.iter().map(|o| o.def());
    match option {
        None if engine.options.is_empty() => print(&format!("IO engine {name} has no options\n")),
        None => print(&own.fold(String::new(), |mut out, def| {
            let _ = writeln!(out, "{:<24}: {}", def.name, def.help);
            out
        })),
        Some(option) => match own.clone().find(|def| def.name == option) {
            Some(def) => print(&describe(def)),
            None => Err(CmdError::usage(format!(
                "--enghelp={request}: {name} has no option '{option}' (--enghelp={name} lists its options)"
            ))),
        },
    }
}

fn print_jobs(run: &RunArgs, every_option: bool) -> Result<i32, CmdError> {
    let loaded = load_jobs(&run.flags, &run.args)?;
    print(&(debug::take() + &render(&loaded.layered, every_option)))
}

/// One block per job: a header with where the job starts, then `option value origin` lines;
/// with `every_option` also the supported options left at their defaults (or unset), in
/// table order.
fn render(jobs: &[LayeredJob], every_option: bool) -> String {
    let mut out = String::new();
    for (index, layered) in jobs.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let job = &layered.job;
        let _ = writeln!(out, "job {} '{}' ({})", index + 1, job.name, job.origin);
        for def in OPTIONS.iter().filter(|def| def.name != "name") {
            let (value, origin) = match (job.get(def), layered.global.get(def)) {
                (Some(own), _) => (own.value.as_str(), origin(job, &own.source)),
                (None, Some(global)) => (
                    global.value.as_str(),
                    origin(&layered.global, &global.source),
                ),
                (None, None) if !every_option || def.status != Status::Supported => continue,
                (None, None) => match def.default {
                    Some(default) => (default, "default".to_string()),
                    None => ("-", "not set".to_string()),
                },
            };
            let _ = writeln!(out, "  {:<28} {:<16} {origin}", def.name, value);
        }
    }
    out
}

/// Where a value was given, naming the section it belongs to.
fn origin(layer: &RawJob, source: &Source) -> String {
    match source {
        Source::Argument(_) => "command line".to_string(),
        Source::File { .. } => format!("[{}] {source}", layer.name),
        Source::FileStart { .. } | Source::Default => source.to_string(),
    }
}

/// `--cmdhelp` lists every option; `--cmdhelp=NAME` shows one (`all` also lists them).
pub(super) fn cmdhelp(option: &str) -> Result<i32, CmdError> {
    if option.is_empty() || option == "all" {
        let mut out = String::new();
        for def in OPTIONS {
            let _ = writeln!(
                out,
                "{:<28} {}{}",
                def.name,
                status_tag(def.status),
                def.help
            );
        }
        return print(&out);
    }
    let Some(def) = options::find(option) else {
        let suggestion = options::suggest(option)
            .map(|name| format!(" (did you mean '{name}'?)"))
            .unwrap_or_default();
        return Err(CmdError::usage(format!(
            "--cmdhelp={option}: no such option{suggestion}; --cmdhelp lists them all"
        )));
    };
    print(&describe(def))
}

fn describe(def: &OptionDef) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:>12}: {}", def.name, def.help);
    if !def.aliases.is_empty() {
        let _ = writeln!(out, "{:>12}: {}", "alias", def.aliases.join(", "));
    }
    let _ = writeln!(out, "{:>12}: {}", "type", kind_name(def.kind));
    let status = match def.status {
        Status::Supported => "supported".to_string(),
        Status::Ignored(why) => format!("ignored ({why})"),
        Status::Unsupported { reason, instead } => {
            format!("not supported ({reason}; instead: {instead})")
        }
    };
    let _ = writeln!(out, "{:>12}: {status}", "status");
    let _ = writeln!(out, "{:>12}: {}", "default", def.default.unwrap_or("none"));
    let _ = writeln!(out, "{:>12}: {}={}", "example", def.name, def.example);
    out
}

/// Marks the options that do nothing or are rejected in the `--cmdhelp` list.
fn status_tag(status: Status) -> &'static str {
    match status {
        Status::Supported => "",
        Status::Ignored(_) => "[ignored] ",
        Status::Unsupported { .. } => "[not supported] ",
    }
}

fn kind_name(kind: Kind) -> String {
    match kind {
        Kind::Text => "text".into(),
        Kind::Bool => "boolean (1/0; a bare flag means 1)".into(),
        Kind::Count => "whole number".into(),
        Kind::Percent => "percentage (0-100)".into(),
        Kind::Size => "size (k, m, g suffixes)".into(),
        Kind::SizeOrPercent => "size or percentage of the target".into(),
        Kind::Time(unit) => format!("time (bare numbers in {})", unit.suffix()),
        Kind::SizePerDirection => "size, read,write".into(),
        Kind::CountPerDirection => "whole number, read,write".into(),
        Kind::RangePerDirection => "size range, read,write (1k-4k)".into(),
        Kind::SplitPerDirection => "block size split, read,write (4k/50:64k/50)".into(),
        Kind::FloatList => "numbers separated by ':'".into(),
        Kind::Choice(words) => format!("one of {}", words.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::front::cli_args::parse_fio_args;

    fn layered(args: &[&str]) -> Vec<LayeredJob> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (global, jobs) = parse_fio_args(&args).unwrap();
        jobs.into_iter()
            .map(|job| LayeredJob {
                global: global.clone(),
                job,
            })
            .collect()
    }

    #[test]
    fn every_option_shows_value_and_origin() {
        let text = render(&layered(&["--bs=8k", "--name=a", "--size=1m"]), true);
        assert!(
            text.starts_with("job 1 'a' (command line argument 2)\n"),
            "{text}"
        );
        let line = |name: &str| {
            text.lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("{name} missing:\n{text}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(line("bs"), "bs 8k command line");
        assert_eq!(line("size"), "size 1m command line");
        assert_eq!(line("rw"), "rw read default");
        assert_eq!(line("runtime"), "runtime - not set");
        let supported = OPTIONS.iter().filter(|d| d.status == Status::Supported);
        assert_eq!(text.lines().count(), supported.count());
    }

    #[test]
    fn parse_only_shows_given_options_only() {
        let text = render(
            &layered(&["--name=a", "--size=1m", "--name=b", "--size=2m"]),
            false,
        );
        assert_eq!(text.lines().filter(|l| l.contains("size")).count(), 2);
        assert_eq!(text.lines().count(), 5, "{text}");
    }

    #[test]
    fn showcmd_writes_each_file_as_one_command_line() {
        let at = |line| Source::File {
            path: "j.fio".into(),
            line,
        };
        let mut global = RawJob::new("global", at(1));
        global
            .set(options::opt::RW, Some("randread"), at(2))
            .unwrap();
        let mut a = RawJob::new("a", at(3));
        a.set(options::find("filename").unwrap(), Some("/f"), at(4))
            .unwrap();
        a.set(options::opt::BS, Some("8k"), at(5)).unwrap();
        let mut b = RawJob::new("b", at(6));
        b.set(options::opt::STONEWALL, None, at(7)).unwrap();
        b.set(
            options::find("description").unwrap(),
            Some("two words"),
            at(8),
        )
        .unwrap();
        let jobs = [a, b].map(|job| LayeredJob {
            global: global.clone(),
            job,
        });
        assert_eq!(
            command_lines(&jobs),
            "fio --rw=randread --name=a --bs=8k --filename=/f --name=b --stonewall \
             --description=\"two words\" \n",
            "expected fio's --showcmd line: the file name last, a bare flag without a value"
        );
        assert_eq!(command_lines(&layered(&["--name=x", "--size=1m"])), "");
    }

    #[test]
    fn one_option_help_names_aliases_type_and_default() {
        let text = describe(options::find("bs").unwrap());
        assert!(text.contains("alias: blocksize"), "{text}");
        assert!(text.contains("type: size, read,write"), "{text}");
        assert!(text.contains("default: 4k"), "{text}");
    }
}
