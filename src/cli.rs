//! The command line: clap for subcommands and help; job options stay in fio's
//! `--key=value` form and go to `job` unparsed.

mod values;

use crate::cluster::MpiMode;
use crate::debug::DebugRequest;
use crate::job::front::cli_args::option_text;
use crate::model::Severity;
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;
use values::{
    parse_debug, parse_duration, parse_eta, parse_eta_period, parse_fail_on, parse_fio_compat,
    parse_formats, parse_history_id, parse_io_timeout, parse_mpi, parse_observe_interval,
    parse_pair, parse_ramp, parse_repetitions, parse_report_file, parse_status_interval,
    parse_terse_version, parse_warmup, FlagValueError, ShellParser,
};
pub(crate) use values::{EtaMode, FioCompat, Format, Formats, JobPair};

/// The process's words as text: the program's name as it is (only a name), each argument
/// as UTF-8 or the error naming the first that is not.
pub(crate) fn text_words(
    mut words: impl Iterator<Item = OsString>,
) -> Result<Vec<String>, NotText> {
    let program = words.next().unwrap_or_default();
    let mut text = vec![program.to_string_lossy().into_owned()];
    for (place, word) in words.enumerate() {
        text.push(word.into_string().map_err(|word| NotText {
            place: place + 1,
            word,
        })?);
    }
    Ok(text)
}

/// An argument that is not UTF-8: its place (1 is the first after the program's name) and bytes.
#[derive(Debug, thiserror::Error)]
#[error(
    "argument {place} is not UTF-8 text: {word:?} (iolens reads its arguments as text; \
     give it in UTF-8, renaming the file if it is a file's name)"
)]
pub(crate) struct NotText {
    place: usize,
    word: OsString,
}

/// Parse the process's command line (its words as text, see `text_words`). `run`'s own
/// flags may stand anywhere among the job options, so they are moved in front of them
/// first (see `order_run_words`). A usage error, `--help` and `--version` come back as
/// clap's error for `cmd/` to print.
pub(crate) fn parse(words: &[String]) -> Result<Cli, clap::Error> {
    let mut words = words.to_vec();
    if words.get(1).is_some_and(|w| w == "run") {
        let rest = words.split_off(2);
        words.extend(order_run_words(&rest));
    }
    Cli::try_parse_from(words)
}

/// `iolens run WORDS…` for words given as a list (the fio shim's, show-jobs'): clap's `RunArgs`.
pub(crate) fn parse_run_line(words: &[String]) -> Result<RunArgs, clap::Error> {
    let line = ["iolens".to_string(), "run".to_string()]
        .into_iter()
        .chain(order_run_words(words));
    match Cli::try_parse_from(line)?.command {
        Some(Command::Run(args)) => Ok(*args),
        _ => unreachable!("the words start with the run subcommand"),
    }
}

/// A clap error as one line, without clap's usage block: a flag's own value
/// check already names the flag, the value and the fix; clap's own complaints
/// point to --help.
pub(crate) fn error_line(e: &clap::Error) -> String {
    let own = std::error::Error::source(e).and_then(|s| s.downcast_ref::<FlagValueError>());
    if let Some(own) = own {
        return own.to_string();
    }
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    format!(
        "{} (see --help)",
        first.strip_prefix("error: ").unwrap_or(first)
    )
}

/// `run`'s words with iolens' own flags (as clap defines them in `RunFlags`, with
/// a value given as `--flag=V` or `--flag V`) first, then `--` and the job options
/// and files in their order: clap reads every word after the first job option as
/// a job option otherwise, and fio's options do not go through clap.
pub(crate) fn order_run_words(words: &[String]) -> Vec<String> {
    let command = RunArgs::augment_args(clap::Command::new("run"));
    let own = |name: &str| {
        command.get_arguments().find(|a| {
            a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name))
        })
    };
    let (mut flags, mut jobs) = (Vec::new(), Vec::new());
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        if word == "--" {
            jobs.extend(rest.by_ref().cloned());
            break;
        }
        if word == "-h" || word == "-v" {
            flags.push(word.clone());
            continue;
        }
        let Some(flag) = option_text(word) else {
            jobs.push(word.clone());
            continue;
        };
        let (name, value) = match flag.split_once('=') {
            Some((name, _)) => (name, true),
            None => (flag, false),
        };
        let arg = own(name);
        if arg.is_none() && name != "help" {
            jobs.push(word.clone());
            continue;
        }
        // Like fio, one dash works too: `-output-format=json` reaches clap as `--output-format=json`.
        flags.push(format!("--{flag}"));
        let Some(arg) = arg else { continue };
        if !value && arg.get_action().takes_values() && !arg.is_require_equals_set() {
            flags.extend(rest.next().cloned());
        }
    }
    if !jobs.is_empty() {
        flags.push("--".into());
        flags.extend(jobs);
    }
    flags
}

/// `iolens --version`'s words after the name: the version (the one reports carry), the git
/// commit it was built from (build.rs) and whether the `mpi` feature is built in.
macro_rules! version_line {
    ($mpi:literal) => {
        concat!(
            env!("CARGO_PKG_VERSION"),
            " (git ",
            env!("IOLENS_GIT_COMMIT"),
            ", mpi: ",
            $mpi,
            ")"
        )
    };
}
#[cfg(feature = "mpi")]
pub(crate) const VERSION: &str = version_line!("yes");
#[cfg(not(feature = "mpi"))]
pub(crate) const VERSION: &str = version_line!("no");

#[derive(Debug, Parser)]
#[command(
    name = "iolens",
    version = VERSION,
    // As in fio, a flag given twice takes its last value (fio's scripts repeat --output-format).
    args_override_self = true,
    about = "A storage I/O benchmark that tells you when its numbers are suspect",
    long_about = "A storage I/O benchmark that tells you when its numbers are suspect.\n\n\
                  Without a subcommand, runs `iolens quick`: the quick suite on a temporary file in the current directory."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run fio job files and/or jobs given as fio options: --name=JOB starts a job, options before the first --name apply to all.
    ///
    /// Job files and options mix as with fio: `iolens run a.fio b.fio --runtime=10`. Each file after the
    /// first starts a new stonewalled group; options before any --name sit below each file's [global].
    /// iolens' own flags (below) may stand anywhere among the job options.
    ///
    /// Example: iolens run --name=rr --filename=/tmp/t --size=1g --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --runtime=10 --time_based
    Run(Box<RunArgs>),
    /// The quick suite (the default without a subcommand): sequential 1 MiB at queue depth 8 and 1,
    /// random 4 KiB at 32 and 1, each read and write, direct I/O, one table.
    ///
    /// TARGET: a directory (default: the current one; a temporary 1 GiB file is created there and
    /// removed afterwards), a file, or a block device (write tests need --allow-device-write, or
    /// give --read-only). `--show-job` prints the suite's job file.
    Quick(QuickArgs),
    /// Write a stored run as a self-contained HTML report.
    Report {
        id: i64,
        /// The HTML file to write.
        #[arg(long, value_name = "FILE")]
        html: PathBuf,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Compare two results: iolens-json result files or history ids (a stored
    /// `--repeat` compares all its repetitions).
    Compare {
        a: String,
        b: String,
        /// Also write both results side by side as a self-contained HTML page.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Compare even when a side holds an interrupted run (partial results),
        /// with a warning; without it such a comparison is refused.
        #[arg(long)]
        allow_interrupted: bool,
        /// Compare job A_JOB of A with job B_JOB of B: jobs are compared by name, this
        /// pairs two that are named differently (repeat it for more pairs).
        #[arg(long, value_name = "A_JOB=B_JOB", value_parser = parse_pair)]
        pair: Vec<JobPair>,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Run two job variants interleaved A B B A … and compare them.
    ///
    /// Example: iolens ab "--name=x --filename=/tmp/t --size=64m --bs=4k" "--name=x --filename=/tmp/t --size=64m --bs=64k" --pairs 5
    Ab {
        /// Job A as fio-style options in one string ("--name=x --bs=4k …").
        #[arg(allow_hyphen_values = true)]
        a: String,
        /// Job B as fio-style options in one string.
        #[arg(allow_hyphen_values = true)]
        b: String,
        /// A/B pairs to run (2 × pairs runs).
        #[arg(long, default_value_t = 3)]
        pairs: u32,
        #[command(flatten)]
        db: DbArgs,
        /// Do not store the runs in the history.
        #[arg(long)]
        no_history: bool,
    },
    /// List stored runs, or follow one metric over time.
    History {
        /// Only runs whose target contains this text.
        #[arg(long)]
        target: Option<String>,
        /// Only runs with a job of this name.
        #[arg(long)]
        job: Option<String>,
        /// Only runs since a date (2024-05-31) or within an age (12h, 7d, 2w).
        #[arg(long)]
        since: Option<String>,
        /// Show a metric per job over time and flag regressions beyond the noise:
        /// iops, bw, clat_mean, clat_p99, cpu_per_io.
        #[arg(long, value_name = "METRIC")]
        trend: Option<String>,
        /// In --trend, show interrupted runs (partial results) too, marked and not
        /// judged; without it they are left out.
        #[arg(long)]
        with_interrupted: bool,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Print a stored run.
    Show {
        id: i64,
        /// normal, json, iolens-json (comma list allowed).
        #[arg(long, default_value = "normal", value_parser = parse_formats)]
        output_format: Formats,
        #[command(flatten)]
        db: DbArgs,
    },
    /// The report of a run on several MPI ranks from the result files its ranks wrote as each
    /// group ended (`--mpi-results`, default iolens-ranks): for a run that lost a rank. Missing
    /// ranks and groups are listed on stderr and the report is marked interrupted.
    Merge {
        /// The directory of the rank files (rank-NNNNN.json).
        dir: PathBuf,
        /// normal, json, json+ or iolens-json (comma list allowed).
        #[arg(long, default_value = "normal", value_parser = parse_formats)]
        output_format: Formats,
    },
    /// One worker process of a run (started by iolens itself; task on stdin, result on stdout).
    // The name runner::process spawns (its WORKER_SUBCOMMAND): tests/it/processes.rs
    // fails if the two ever part.
    #[command(name = "__worker", hide = true)]
    Worker,
    /// Print every option of every job with its value and where it came from (default, [global], [section], command line).
    ///
    /// Takes the same job files and options as `run` (also --section and --fio-compat) and runs nothing.
    ShowJobs {
        /// Job files and fio-style job options.
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "FILES_AND_OPTIONS"
        )]
        args: Vec<String>,
    },
    /// Inspect a file, directory or block device before a benchmark: what would distort it, and the fix for each.
    ///
    /// Checks cached pages, mounts and filesystem signatures, holes in files, the device's scheduler,
    /// write cache and stable writes, the CPU governor, udev, the dirty limits, DAMON and free page reporting.
    Doctor {
        /// The file, directory or block device to benchmark.
        target: PathBuf,
    },
    /// Create DIR/fio, a symlink to iolens: invoked as `fio`, iolens acts as `iolens run` with fio's command line.
    InstallFioShim {
        /// Directory for the link, created when missing (put it first in PATH).
        dir: PathBuf,
        /// Replace an existing DIR/fio.
        #[arg(long)]
        force: bool,
    },
    /// Print the completion script for SHELL on stdout.
    ///
    /// Packages install it; by hand, e.g. for bash: iolens completions bash > ~/.local/share/bash-completion/completions/iolens
    Completions {
        /// The shell to write the script for.
        #[arg(value_name = "SHELL", value_parser = ShellParser)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages (iolens.1, and iolens-SUBCOMMAND.1 for each subcommand) into DIR,
    /// from these same definitions; packaging/build-deb uses it.
    #[command(hide = true)]
    Manpages {
        /// Directory for the pages, created when missing.
        dir: PathBuf,
    },
}

/// Where the history lives.
#[derive(Debug, Default, clap::Args)]
pub struct DbArgs {
    /// History database (default: $IOLENS_DB, else $XDG_DATA_HOME/iolens/history.db
    /// or ~/.local/share/iolens/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
}

/// `iolens quick`'s flags; all default to the zero-configuration run.
#[derive(Debug, Default, clap::Args)]
pub struct QuickArgs {
    /// Directory, file or block device to test (default: the current directory).
    pub target: Option<PathBuf>,
    /// Measured time of each test (seconds without a unit; default 5).
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Unmeasured time before each test (default 1).
    #[arg(long, value_name = "TIME", value_parser = parse_ramp)]
    pub ramp: Option<Duration>,
    /// Size of the test file iolens creates (default 1g).
    #[arg(long)]
    pub size: Option<String>,
    /// Run only the read tests (needed for a block device or an existing file without --allow-destructive).
    #[arg(long)]
    pub read_only: bool,
    /// Let the write tests overwrite a block device or an existing file.
    #[arg(long, alias = "allow-destructive")]
    pub allow_device_write: bool,
    /// Print the full report as iolens-json instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML report to FILE (with --compare-with: both runs side by side).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Compare with a stored run: its history id, or `last` (the latest quick run), and
    /// all repetitions of its --repeat; verdicts need repetitions on both sides.
    #[arg(long, value_name = "ID|last")]
    pub compare_with: Option<String>,
    /// Run the suite N times: per test the median, spread and 95 % CI over the runs
    /// (default 1).
    #[arg(long, value_name = "N", value_parser = parse_repetitions)]
    pub repeat: Option<u32>,
    /// Print the suite's job file and exit.
    #[arg(long)]
    pub show_job: bool,
    /// Exit 3 after writing the reports when a finding of this severity or worse fired:
    /// warning, or info (any finding).
    #[arg(long, value_name = "SEVERITY", value_parser = parse_fail_on)]
    pub fail_on: Option<Severity>,
    /// Live progress on stderr: auto (on terminals), always, never.
    #[arg(long, value_name = "WHEN", value_parser = parse_eta)]
    pub eta: Option<EtaMode>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store the run in the history.
    #[arg(long)]
    pub no_history: bool,
}

/// `iolens run`: iolens' own flags, parsed by clap wherever they stand, and the
/// rest (fio-style `--key=value` job options and job files) as given.
#[derive(Debug, Default, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub flags: RunFlags,
    /// fio-style job options (--key=value or --flag) and job files.
    #[arg(allow_hyphen_values = true, value_name = "OPTIONS_AND_FILES")]
    pub args: Vec<String>,
}

/// iolens' own flags of `iolens run` (README: "iolens' own flags" lists the same).
#[derive(Debug, Default, clap::Args)]
pub struct RunFlags {
    /// normal, json, json+, terse or iolens-json; a comma list prints several.
    #[arg(long, value_name = "FORMATS", value_parser = parse_formats)]
    pub output_format: Option<Formats>,
    /// The same as --output-format=terse.
    #[arg(long)]
    pub minimal: bool,
    /// Write the report to FILE instead of stdout.
    #[arg(long, value_name = "FILE", value_parser = parse_report_file)]
    pub output: Option<PathBuf>,
    /// An interim report every TIME (seconds without a unit); JSON reports one document per line.
    #[arg(long, value_name = "TIME", value_parser = parse_status_interval)]
    pub status_interval: Option<Duration>,
    /// Live progress on stderr: auto (when stdout and stderr are terminals), always (also in logs), never.
    #[arg(long, value_name = "WHEN", value_parser = parse_eta)]
    pub eta: Option<EtaMode>,
    /// Also write the self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// No line per finding on stderr (printed when the report has no normal text).
    #[arg(long)]
    pub quiet_findings: bool,
    /// Write to a block device that holds data or is in use.
    #[arg(long, visible_alias = "allow-device-write")]
    pub allow_destructive: bool,
    /// fio's --readonly: refuse jobs that write or trim, and files that would have to be laid out.
    #[arg(long)]
    pub readonly: bool,
    /// How often the system is sampled during the run (default 100ms, at least 10ms).
    #[arg(long, value_name = "TIME", value_parser = parse_observe_interval)]
    pub observe_interval: Option<Duration>,
    /// An I/O in flight longer than TIME fails its job with ETIMEDOUT (default: off).
    #[arg(long, value_name = "TIME", value_parser = parse_io_timeout)]
    pub io_timeout: Option<Duration>,
    /// A line per second on stderr while running: MiB/s, IOPS, time in I/O calls, latency,
    /// Dirty/Writeback, cached pages of the targets.
    #[arg(long)]
    pub timeline: bool,
    /// Run only this job-file section (repeatable).
    #[arg(long, value_name = "NAME")]
    pub section: Vec<String>,
    /// Print the jobs and run nothing.
    #[arg(long)]
    pub parse_only: bool,
    /// strict (default) or lenient: accept what fio silently accepts, with a warning each.
    #[arg(long, value_name = "MODE", value_parser = parse_fio_compat)]
    pub fio_compat: Option<FioCompat>,
    /// List the job options, or describe one (--cmdhelp=OPTION).
    #[arg(long, value_name = "OPTION", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub cmdhelp: Option<String>,
    /// Statistics over N full runs.
    #[arg(long, value_name = "N", value_parser = parse_repetitions)]
    pub repeat: Option<u32>,
    /// Unmeasured runs before the measured ones.
    #[arg(long, value_name = "K", value_parser = parse_warmup)]
    pub warmup: Option<u32>,
    /// Compare the result with stored run ID (and its repetitions).
    #[arg(long, value_name = "ID", value_parser = parse_history_id)]
    pub compare_with: Option<i64>,
    /// Exit 3 after writing the reports when a finding of this severity or worse fired:
    /// warning, or info (any finding).
    #[arg(long, value_name = "SEVERITY", value_parser = parse_fail_on)]
    pub fail_on: Option<Severity>,
    /// fio's --bandwidth-log: the run's bandwidth per direction every 500 ms in
    /// agg-read_bw.log, agg-write_bw.log and agg-trim_bw.log.
    #[arg(long)]
    pub bandwidth_log: bool,
    /// fio's --aux-path: the directory for verify state files (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub aux_path: Option<PathBuf>,
    /// fio's limit on its job count; accepted, and without effect as in fio.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_jobs: Option<u32>,
    /// fio's --debug=TYPES: parse and random trace lines in fio's shape, before the report
    /// (a comma list, all, or help to list them).
    #[arg(long, value_name = "TYPES", value_parser = parse_debug)]
    pub debug: Option<DebugRequest>,
    /// fio's --inflate-log=FILE: print a log stored with log_store_compressed (.log.fz)
    /// as text, and run nothing.
    #[arg(long, value_name = "FILE")]
    pub inflate_log: Option<PathBuf>,
    /// For the fio drop-in (iolens invoked as `fio`, see install-fio-shim): print
    /// iolens' own notes on stderr (warnings, findings, the history line) as `iolens run`
    /// does; the drop-in leaves them out because fio would not print them.
    #[arg(long)]
    pub iolens_notes: bool,
    /// auto (default): run as one of several MPI ranks when a launcher (mpirun, srun)
    /// started several; on: always start MPI; off: every rank runs on its own.
    #[arg(long, value_name = "MODE", value_parser = parse_mpi)]
    pub mpi: Option<MpiMode>,
    /// On several MPI ranks: the directory where each rank writes its results as each
    /// group ends (default iolens-ranks), for `iolens merge` when a rank is lost.
    #[arg(long, value_name = "DIR")]
    pub mpi_results: Option<PathBuf>,
    /// fio's --terse-version=N (2 to 5): iolens writes version 3, fio's default, and
    /// refuses the others.
    #[arg(long, value_name = "N", value_parser = parse_terse_version)]
    pub terse_version: Option<u32>,
    /// fio's --warnings-fatal: a warning about the jobs stops iolens before the run (exit 2).
    #[arg(long)]
    pub warnings_fatal: bool,
    /// fio's --showcmd: print each job file as one fio command line, and run nothing.
    #[arg(long)]
    pub showcmd: bool,
    /// fio's --enghelp: list the engines; =ENGINE lists its own options, =ENGINE,OPTION describes one.
    #[arg(long, value_name = "ENGINE[,OPTION]", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub enghelp: Option<String>,
    /// fio's -v/--version: print the version iolens gives in fio's formats, and exit.
    #[arg(long, short = 'v')]
    pub version: bool,
    /// fio's --merge-blktrace-only: read the jobs and run nothing (iolens merges no blktraces).
    #[arg(long)]
    pub merge_blktrace_only: bool,
    /// fio's --eta-newline=TIME: accepted and ignored (it paces fio's own status line).
    #[arg(long, value_name = "TIME", value_parser = parse_eta_period)]
    pub eta_newline: Option<Duration>,
    /// fio's --eta-interval=TIME: accepted and ignored (it paces fio's own status line).
    #[arg(long, value_name = "TIME", value_parser = parse_eta_period)]
    pub eta_interval: Option<Duration>,
    /// fio's --alloc-size=KB: accepted and ignored (the size of fio's shared memory pool).
    #[arg(long, value_name = "KB", value_parser = clap::value_parser!(u64).range(1..))]
    pub alloc_size: Option<u64>,
    /// fio's --idle-prof=MODE: accepted and ignored (iolens' system section shows the CPU).
    #[arg(long, value_name = "MODE")]
    pub idle_prof: Option<String>,
    /// Started as `fio` (set by the drop-in, not a flag).
    #[arg(skip)]
    pub started_as_fio: bool,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store the run in the history.
    #[arg(long)]
    pub no_history: bool,
}

impl RunFlags {
    /// Whether iolens' own notes (warnings, finding lines, the history line) go to stderr:
    /// always for `iolens run`, only with `--iolens-notes` when started as `fio`.
    pub fn notes_on_stderr(&self) -> bool {
        !self.started_as_fio || self.iolens_notes
    }

    /// No line per finding on stderr: `--quiet-findings`, or iolens' notes kept off it.
    pub fn no_finding_lines(&self) -> bool {
        self.quiet_findings || !self.notes_on_stderr()
    }

    /// What iolens says on stderr about fio flags it accepts and ignores.
    pub fn ignored_fio_flags(&self) -> Vec<String> {
        let console = "it paces fio's own status line; iolens' progress is --eta's";
        let ignored = [
            ("--eta-newline", self.eta_newline.is_some(), console),
            ("--eta-interval", self.eta_interval.is_some(), console),
            (
                "--alloc-size",
                self.alloc_size.is_some(),
                "it sizes fio's shared memory pool, which iolens does not have",
            ),
            (
                "--idle-prof",
                self.idle_prof.is_some(),
                "iolens does not measure idle CPU; its system section shows the CPU's use",
            ),
        ];
        ignored
            .iter()
            .filter(|(_, given, _)| *given)
            .map(|(flag, _, why)| format!("{flag} is accepted and ignored: {why}"))
            .collect()
    }

    /// The report formats: `--output-format`, else `--minimal`'s terse, else normal.
    pub fn formats(&self) -> Vec<Format> {
        match (&self.output_format, self.minimal) {
            (Some(Formats(formats)), _) => formats.clone(),
            (None, true) => vec![Format::Terse],
            (None, false) => vec![Format::Normal],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::strings;

    #[test]
    fn own_flags_anywhere_go_first_and_job_options_keep_their_order() {
        let ordered = order_run_words(&strings(&[
            "a.fio",
            "--name=x",
            "--repeat",
            "3",
            "--bs=4k",
            "--output-format=json",
            "--cmdhelp",
            "--allow-device-write",
            "--time_based",
        ]));
        assert_eq!(
            ordered,
            strings(&[
                "--repeat",
                "3",
                "--output-format=json",
                "--cmdhelp",
                "--allow-device-write",
                "--",
                "a.fio",
                "--name=x",
                "--bs=4k",
                "--time_based",
            ]),
            "expected own flags (with a spaced value, an optional value, an alias) first"
        );
    }

    #[test]
    fn own_flags_take_one_dash_like_fio_and_max_jobs_is_accepted() {
        let run = run_line(&[
            "-name=x",
            "-output-format",
            "json",
            "--max-jobs=16",
            "-iodepth",
            "4",
            "-section=a",
            "-",
        ]);
        assert_eq!(
            (run.flags.formats(), run.flags.max_jobs, run.flags.section),
            (vec![Format::FioJson], Some(16), vec!["a".to_string()]),
            "expected -output-format json, --max-jobs=16 and -section=a to be read as own flags"
        );
        assert_eq!(
            run.args,
            strings(&["-name=x", "-iodepth", "4", "-"]),
            "expected the job options and the stdin job file to stay as given"
        );
        assert!(
            refusal(&["--max-jobs=0"]).contains("--max-jobs"),
            "expected --max-jobs=0 to be refused naming the flag"
        );
    }

    #[test]
    fn fios_console_flags_are_own_flags() {
        let run = run_line(&[
            "--name=x",
            "-v",
            "--terse-version=3",
            "--eta-newline=2",
            "--eta-interval",
            "500ms",
            "--enghelp",
            "--showcmd",
            "--warnings-fatal",
        ]);
        let flags = &run.flags;
        assert!(flags.version && flags.showcmd && flags.warnings_fatal);
        assert_eq!(flags.terse_version, Some(3));
        assert_eq!(flags.enghelp.as_deref(), Some(""));
        assert_eq!(run.args, strings(&["--name=x"]));
        assert_eq!(
            flags.ignored_fio_flags().len(),
            2,
            "expected a note for --eta-newline and --eta-interval"
        );
        assert!(refusal(&["--terse-version=4"]).contains("terse version 3 only"));
        assert!(refusal(&["--terse-version=x"]).contains("2, 3, 4 and 5"));
        assert!(refusal(&["--eta-newline=0"]).contains("positive"));
    }

    #[test]
    fn an_argument_that_is_not_utf8_is_named_by_its_place() {
        use std::os::unix::ffi::OsStringExt;
        let words = |w: &[&[u8]]| {
            w.iter()
                .map(|b| OsString::from_vec(b.to_vec()))
                .collect::<Vec<_>>()
                .into_iter()
        };
        let program_is_only_a_name = text_words(words(&[b"/opt/\xff/iolens", b"run"])).unwrap();
        assert_eq!(program_is_only_a_name[1], "run");
        let refused = text_words(words(&[b"iolens", b"run", b"--name=\xff"])).unwrap_err();
        assert_eq!(refused.place, 2);
        assert!(refused
            .to_string()
            .starts_with(r#"argument 2 is not UTF-8 text: "--name=\xFF""#));
    }

    fn run_line(words: &[&str]) -> RunArgs {
        parse_run_line(&strings(words)).expect("expected the words to parse")
    }

    fn refusal(words: &[&str]) -> String {
        error_line(&parse_run_line(&strings(words)).expect_err("expected a refusal"))
    }

    #[test]
    fn repeat_and_history_flags_take_both_spellings() {
        let run = run_line(&[
            "--repeat",
            "5",
            "--warmup=1",
            "--name=a",
            "--compare-with=12",
            "--html",
            "r.html",
            "--db",
            "h.db",
            "--no-history",
        ]);
        let flags = &run.flags;
        assert_eq!((flags.repeat, flags.warmup), (Some(5), Some(1)));
        assert_eq!(flags.compare_with, Some(12));
        assert_eq!(flags.html, Some(PathBuf::from("r.html")));
        assert_eq!(flags.db.db, Some(PathBuf::from("h.db")));
        assert!(flags.no_history);
        assert_eq!(run.args, strings(&["--name=a"]));
    }

    #[test]
    fn typed_flags_come_out_of_the_job_options() {
        let run = run_line(&[
            "--output-format=json",
            "--name=a",
            "--allow-device-write",
            "--output=r.json",
            "--observe-interval=250ms",
            "--bs=4k",
            "--status-interval=2",
            "--eta=never",
            "--fio-compat=lenient",
            "--io-timeout=500ms",
            "--mpi=off",
        ]);
        let flags = &run.flags;
        assert_eq!(flags.formats(), vec![Format::FioJson]);
        assert_eq!(flags.output, Some(PathBuf::from("r.json")));
        assert!(flags.allow_destructive);
        assert_eq!(flags.observe_interval, Some(Duration::from_millis(250)));
        assert_eq!(flags.status_interval, Some(Duration::from_secs(2)));
        assert_eq!(flags.eta, Some(EtaMode::Never));
        assert_eq!(flags.fio_compat, Some(FioCompat::Lenient));
        assert_eq!(flags.io_timeout, Some(Duration::from_millis(500)));
        assert_eq!(flags.mpi, Some(MpiMode::Off));
        assert_eq!(run.args, strings(&["--name=a", "--bs=4k"]));
        assert_eq!(
            run_line(&["--minimal"]).flags.formats(),
            vec![Format::Terse]
        );
        assert_eq!(run_line(&[]).flags.formats(), vec![Format::Normal]);
    }

    #[test]
    fn a_bad_value_is_one_line_naming_the_flag_and_the_fix() {
        assert_eq!(
            refusal(&["--name=a", "--repeat=0"]),
            "--repeat=0: give at least one repetition",
            "expected the flag's own message, without clap's wrapping"
        );
        assert_eq!(
            refusal(&["--status-interval", "0"]),
            "--status-interval=0: give a positive interval, e.g. --status-interval=1"
        );
        assert_eq!(
            refusal(&["--repeat"]),
            "a value is required for '--repeat <N>' but none was supplied (see --help)",
            "expected clap's own complaint on one line, pointing to --help"
        );
        let twice = run_line(&["--repeat=2", "--repeat=3"]);
        assert_eq!(
            twice.flags.repeat,
            Some(3),
            "expected a flag given twice to take its last value, as fio does"
        );
    }

    /// The long flags named in the first cell of each row of the README's table.
    fn readme_run_flags() -> Vec<String> {
        let readme = include_str!("../docs/usage.md");
        let table = readme
            .split("iolens' own flags (anywhere among the options;")
            .nth(1)
            .expect("README has the table of run's own flags");
        let mut flags = Vec::new();
        for row in table
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
        {
            let first_cell = row.trim_start_matches('|').split(" | ").next().unwrap();
            for quoted in first_cell.split('`').skip(1).step_by(2) {
                let name: String = quoted
                    .trim_start_matches("--")
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                flags.push(format!("--{name}"));
            }
        }
        flags
    }

    #[test]
    fn the_readme_table_lists_exactly_runs_own_flags() {
        let command = RunArgs::augment_args(clap::Command::new("run"));
        let mut defined: Vec<String> = command
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        let mut documented = readme_run_flags();
        defined.sort();
        documented.sort();
        assert_eq!(
            documented, defined,
            "expected the README's table of run's own flags (left) to match clap's RunFlags (right)"
        );
    }

    /// The doc comments of the fields that are no flag (`#[arg(skip)]`), from this
    /// file: clap shows none of them, and no flag's help may read as one of them.
    fn skipped_field_docs() -> Vec<String> {
        let source = include_str!("cli.rs");
        let lines: Vec<&str> = source.lines().map(str::trim).collect();
        let mut docs = Vec::new();
        for (i, _) in lines
            .iter()
            .enumerate()
            .filter(|(_, l)| **l == "#[arg(skip)]")
        {
            let above = lines[..i].iter().rev().take_while(|l| l.starts_with("///"));
            let mut doc: Vec<&str> = above.map(|l| l.trim_start_matches('/').trim()).collect();
            doc.reverse();
            docs.push(doc.join(" "));
        }
        docs
    }

    /// Every text of `command` and its subcommands a user reads in `--help`.
    fn help_texts(command: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
        let about = [command.get_about(), command.get_long_about()];
        for text in about.into_iter().flatten() {
            out.push((path.to_string(), text.to_string()));
        }
        for arg in command.get_arguments() {
            let texts = [arg.get_help(), arg.get_long_help()];
            for text in texts.into_iter().flatten() {
                out.push((format!("{path} {}", arg.get_id()), text.to_string()));
            }
        }
        for sub in command.get_subcommands() {
            help_texts(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn no_help_text_reads_as_a_comment_for_the_code() {
        let mut texts = Vec::new();
        help_texts(
            &<Cli as clap::CommandFactory>::command(),
            "iolens",
            &mut texts,
        );
        let docs = skipped_field_docs();
        assert!(
            !docs.is_empty(),
            "expected the fields that are no flag to be found"
        );
        // A skipped field's doc up to its first bracket or colon: the words it opens with.
        let openings: Vec<&str> = docs
            .iter()
            .map(|d| d.split(['(', ':', '.']).next().unwrap_or(d).trim())
            .collect();
        const FOR_THE_CODE: [&str; 8] = [
            "///",
            "//!",
            "[`",
            "crate::",
            "Self",
            "(set by",
            "not a flag",
            "TODO",
        ];
        for (place, text) in &texts {
            for marker in FOR_THE_CODE.iter().chain(&openings) {
                assert!(
                    !text.contains(marker),
                    "expected the help of `{place}` to be for users, but it has {marker:?}: {text}"
                );
            }
        }
    }
}
