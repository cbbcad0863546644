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
    /// --observe-interval=TIME (how often the system is sampled during the run; default 100ms).
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
}
