//! The command line: clap for subcommands and help; job options stay in fio's
//! `--key=value` form and go to `job` unparsed.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "iolens",
    version,
    about = "A storage I/O benchmark that tells you when its numbers are suspect",
    long_about = "A storage I/O benchmark that tells you when its numbers are suspect.\n\n\
                  Without a subcommand, runs a short default workload on a temporary file in the current directory."
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
    ///
    /// iolens' own flags: --output-format=normal|json|json+|terse|iolens-json (comma list allowed),
    /// --minimal (= terse), --output=FILE, --status-interval=TIME (an interim report every TIME;
    /// JSON reports one document per line), --eta=auto|always|never (accepted for fio scripts;
    /// there is no live progress line yet, so it changes nothing),
    /// --allow-destructive (alias --allow-device-write: write to a block device that holds data or is in use),
    /// --section=NAME (repeatable: run only these sections), --parse-only (print the jobs, run nothing),
    /// --fio-compat=strict|lenient (lenient: accept what fio silently accepts, with a warning each),
    /// --cmdhelp[=OPTION] (list the options, or describe one),
    /// --observe-interval=TIME (how often the system is sampled during the run; default 100ms),
    /// --repeat N and --warmup K (statistics over N full runs after K unmeasured ones),
    /// --compare-with ID (compare with a stored run), --db PATH, --no-history.
    ///
    /// Example: iolens run --name=rr --filename=/tmp/t --size=1g --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --runtime=10 --time_based
    Run {
        /// fio-style job options (--key=value or --flag).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "OPTIONS"
        )]
        args: Vec<String>,
    },
    /// Compare two results: iolens-json result files or history ids (a stored
    /// `--repeat` compares all its repetitions).
    Compare {
        a: String,
        b: String,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Run two job variants interleaved A B B A … and compare them.
    ///
    /// Example: iolens ab "--name=x --filename=/tmp/t --size=64m --bs=4k" "--name=x --filename=/tmp/t --size=64m --bs=64k" --pairs 5
    Ab {
        /// Job A as fio-style options in one string.
        a: String,
        /// Job B as fio-style options in one string.
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
        #[command(flatten)]
        db: DbArgs,
    },
    /// Print a stored run.
    Show {
        id: i64,
        /// normal, json, iolens-json (comma list allowed).
        #[arg(long, default_value = "normal")]
        output_format: String,
        #[command(flatten)]
        db: DbArgs,
    },
    /// One worker process of a run (started by iolens itself; task on stdin, result on stdout).
    #[command(name = crate::runner::process::WORKER_SUBCOMMAND, hide = true)]
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
    /// Create DIR/fio, a symlink to iolens: invoked as `fio`, iolens acts as `iolens run` with fio's command line.
    InstallFioShim {
        /// Directory for the link (put it first in PATH).
        dir: PathBuf,
        /// Replace an existing DIR/fio.
        #[arg(long)]
        force: bool,
    },
}

/// Where the history lives.
#[derive(Debug, clap::Args)]
pub struct DbArgs {
    /// History database (default: $IOLENS_DB, else $XDG_DATA_HOME/iolens/history.db
    /// or ~/.local/share/iolens/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
}
