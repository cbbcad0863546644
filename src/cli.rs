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
    ///
    /// iolens' own flags: --output-format=normal|json|json+|terse|iolens-json (comma list allowed),
    /// --minimal (= terse), --output=FILE, --status-interval=TIME (an interim report every TIME;
    /// JSON reports one document per line), --eta=auto|always|never (live progress on stderr:
    /// auto when stdout and stderr are terminals, always also in logs, never),
    /// --allow-destructive (alias --allow-device-write: write to a block device that holds data or is in use),
    /// --section=NAME (repeatable: run only these sections), --parse-only (print the jobs, run nothing),
    /// --fio-compat=strict|lenient (lenient: accept what fio silently accepts, with a warning each),
    /// --cmdhelp[=OPTION] (list the options, or describe one),
    /// --observe-interval=TIME (how often the system is sampled during the run; default 100ms),
    /// --timeline (a line per second on stderr while running: MiB/s, IOPS, time in I/O calls, latency,
    /// Dirty/Writeback, cached pages of the targets),
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
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// Unmeasured time before each test (default 1).
    #[arg(long, value_name = "TIME")]
    pub ramp: Option<String>,
    /// Size of the test file iolens creates (default 1g).
    #[arg(long)]
    pub size: Option<String>,
    /// Run only the read tests (needed for a block device without --allow-device-write).
    #[arg(long)]
    pub read_only: bool,
    /// Let the write tests overwrite a block device.
    #[arg(long, alias = "allow-destructive")]
    pub allow_device_write: bool,
    /// Print the full report as iolens-json instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML report to FILE (with --compare-with: both runs side by side).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Compare with a stored run: its history id, or `last` (the latest quick run).
    #[arg(long, value_name = "ID|last")]
    pub compare_with: Option<String>,
    /// Print the suite's job file and exit.
    #[arg(long)]
    pub show_job: bool,
    /// Live progress on stderr: auto (on terminals), always, never.
    #[arg(long, value_name = "WHEN")]
    pub eta: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not store the run in the history.
    #[arg(long)]
    pub no_history: bool,
}
