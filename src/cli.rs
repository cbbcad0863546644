//! The command line: clap for subcommands and help; job options stay in fio's
//! `--key=value` form and go to `job` unparsed.

use clap::{Parser, Subcommand};

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
    /// Run jobs given as fio options: --name=JOB starts a job, options before the first --name apply to all.
    ///
    /// iolens' own flags: --output-format=normal|json|iolens-json (comma list allowed),
    /// --output=FILE, --allow-device-write (write to a block device that holds a filesystem or partition table),
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
}

/// Where the history lives.
#[derive(Debug, clap::Args)]
pub struct DbArgs {
    /// History database (default: $IOLENS_DB, else $XDG_DATA_HOME/iolens/history.db
    /// or ~/.local/share/iolens/history.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
}
