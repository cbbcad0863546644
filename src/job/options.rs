//! The option table: one entry per fio option. It decides which names exist (with
//! aliases), which take a bare `--flag`, what an error suggests, each default, and whether
//! iolens supports, ignores or rejects the option.

use super::choice::Choice;
use super::spec::*;
use crate::units::{KbBase, TimeUnit};

/// How an option's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// `1`/`0`; a bare `--flag` means 1.
    Bool,
    /// A whole number (fio allows size suffixes here too: `1k` = 1024).
    Count,
    /// 0..=100 without the `%` sign.
    Percent,
    Size,
    /// Bytes, or a percentage of the target (`50%`).
    SizeOrPercent,
    /// A duration; a bare number is in the given unit.
    Time(TimeUnit),
    /// `read,write,trim` sizes with carry-over (`4k` = all three, `,8k,` = writes only).
    SizePerDirection,
    CountPerDirection,
    /// `read,write,trim` size ranges (`1k-4k,8k-16k`).
    RangePerDirection,
    /// `read,write,trim` block size splits (`4k/50:64k/50`).
    SplitPerDirection,
    /// `:`-separated numbers.
    FloatList,
    /// One of the listed words; some options take a `:parameter` after it.
    Choice(&'static [&'static str]),
}

/// What iolens does with an option fio documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Supported,
    /// Accepted without effect; the reason is shown as a warning when the option is used.
    Ignored(&'static str),
    /// Rejected unless set to its default: why, and the nearest thing iolens does offer.
    Unsupported {
        reason: &'static str,
        instead: &'static str,
    },
}

#[derive(Debug, PartialEq, Eq)]
pub struct OptionDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// The value used when neither the job nor the global section sets it; `None` when
    /// there is none or it depends on other options (the help says which).
    pub default: Option<&'static str>,
    /// A valid value, shown in error hints.
    pub example: &'static str,
    pub help: &'static str,
    pub status: Status,
}

impl OptionDef {
    /// How to write a valid value, for error messages.
    pub fn hint(&self) -> String {
        let example = format!("e.g. {}={}", self.name, self.example);
        match self.kind {
            Kind::Text => example,
            Kind::Bool => format!("use 1 or 0, {example}"),
            Kind::Count | Kind::CountPerDirection => format!("use a whole number, {example}"),
            Kind::Percent => format!("use a number from 0 to 100, {example}"),
            Kind::Size | Kind::SizePerDirection | Kind::RangePerDirection => {
                format!("use a number with k, m, g, {example}")
            }
            Kind::SizeOrPercent => format!("use a number with k, m, g or a percentage, {example}"),
            Kind::Time(_) => format!("use a number with us, ms, s, m, h, {example}"),
            Kind::SplitPerDirection => format!("use size/percent pairs, {example}"),
            Kind::FloatList => format!("use numbers separated by ':', {example}"),
            Kind::Choice(values) => format!("use one of {}, {example}", values.join(", ")),
        }
    }
}

const fn opt(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    default: Option<&'static str>,
    example: &'static str,
    help: &'static str,
) -> OptionDef {
    OptionDef {
        name,
        aliases,
        kind,
        default,
        example,
        help,
        status: Status::Supported,
    }
}

/// An option accepted without effect; `why` doubles as its help line and its warning.
const fn ignored(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    default: Option<&'static str>,
    why: &'static str,
) -> OptionDef {
    OptionDef {
        name,
        aliases,
        kind,
        default,
        example: "1",
        help: why,
        status: Status::Ignored(why),
    }
}

/// An option iolens rejects (unless it is set to `default`, which changes nothing).
const fn unsupported(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    default: Option<&'static str>,
    reason: &'static str,
    instead: &'static str,
) -> OptionDef {
    OptionDef {
        name,
        aliases,
        kind,
        default,
        example: "1",
        help: reason,
        status: Status::Unsupported { reason, instead },
    }
}

/// An option of fio's I/O engines `$engines`, which iolens does not have: the refusal
/// names the engine, so the fix is plain.
macro_rules! engine_only {
    ($engines:literal, $name:literal, $aliases:expr, $kind:expr) => {
        unsupported(
            $name,
            $aliases,
            $kind,
            None,
            concat!(
                "an option of ioengine=",
                $engines,
                ", which iolens does not have"
            ),
            "ioengine=io_uring, libaio or psync",
        )
    };
}

/// Why an external engine (a fio plugin) is refused; `concat!` needs it as a literal.
macro_rules! plugin_reason {
    () => {
        " (a fio plugin, loaded with ioengine=PATH), which iolens cannot load"
    };
}

/// An option of `$engine`, an external engine (a fio plugin built outside fio, loaded
/// with `ioengine=PATH`), which iolens cannot load.
macro_rules! plugin_only {
    ($engine:literal, $name:literal, $kind:expr) => {
        unsupported(
            $name,
            &[],
            $kind,
            None,
            concat!("needs the external engine ", $engine, plugin_reason!()),
            "ioengine=io_uring, libaio or psync",
        )
    };
}

const SECONDS: Kind = Kind::Time(TimeUnit::Seconds);
const MICROS: Kind = Kind::Time(TimeUnit::Micros);

/// Text options that fio also takes as a bare flag, meaning an empty value.
pub const BARE_TEXT_OPTIONS: &[&OptionDef] = &[
    opt::WRITE_BW_LOG,
    opt::WRITE_IOPS_LOG,
    opt::WRITE_LAT_LOG,
    opt::WRITE_HIST_LOG,
];

/// External engines (fio plugins built outside fio) by the names their options use.
const PLUGIN_ENGINES: &[&str] = &["spdk_bdev", "spdk"];

/// Why `ioengine=PATH` (or a plugin's name) is refused, and what to use instead.
const EXTERNAL_ENGINE: (&str, &str) = (
    concat!("an external engine", plugin_reason!()),
    "ioengine=io_uring, libaio or psync",
);

/// Values fio accepts for a choice option that iolens rejects: option, values, why and
/// what to use instead.
pub static UNSUPPORTED_VALUES: &[(&OptionDef, &[&str], &str, &str)] = &[
    (
        opt::VERIFY,
        &[
            "crc32", "crc16", "crc7", "sha1", "sha224", "sha384", "sha512", "sha3-224", "sha3-256",
            "sha3-384", "sha3-512",
        ],
        "this checksum is not implemented",
        "verify=crc32c, crc64, xxhash, sha256 or md5",
    ),
    (
        opt::IOENGINE,
        FIO_ONLY_ENGINES,
        "this ioengine is not implemented",
        "ioengine=io_uring, libaio or psync",
    ),
    (
        opt::IOENGINE,
        PLUGIN_ENGINES,
        EXTERNAL_ENGINE.0,
        EXTERNAL_ENGINE.1,
    ),
    (
        opt::ZONEMODE,
        &["zbd"],
        "zoned block devices are not supported",
        "zonemode=strided",
    ),
    (
        opt::FILE_SERVICE_TYPE,
        &["zipf", "pareto", "normal", "gauss"],
        "skewed file choice is not implemented",
        "file_service_type=random or roundrobin",
    ),
];

/// Why iolens rejects `value` for the choice option `option`, and what to use instead.
pub fn unsupported_value(option: &OptionDef, value: &str) -> Option<(&'static str, &'static str)> {
    if option.name == opt::IOENGINE.name && value.contains('/') {
        return Some(EXTERNAL_ENGINE);
    }
    UNSUPPORTED_VALUES
        .iter()
        .find(|(def, values, _, _)| def.name == option.name && values.contains(&value))
        .map(|&(_, _, reason, instead)| (reason, instead))
}

#[rustfmt::skip]
pub static OPTIONS: &[OptionDef] = &[
    opt("name", &[], Kind::Text, None, "seqread", "Job name; on the command line it starts a new job"),
    opt("filename", &[], Kind::Text, None, "/dev/nvme0n1", "Target file(s) or device(s), ':'-separated"),
    opt("directory", &[], Kind::Text, None, "/mnt/test", "Directory for generated file names"),
    opt("nrfiles", &["nr_files"], Kind::Count, Some("1"), "4", "Files per job when no filename is given"),
    opt("filesize", &[], Kind::Size, None, "1g", "Size of each file (default: size / nrfiles)"),
    opt("size", &[], Kind::SizeOrPercent, None, "1g", "Total bytes of the job's region (not given or 0: all of an existing file or device past the offset)"),
    opt("offset", &["fileoffset"], Kind::SizeOrPercent, Some("0"), "1g", "Start of the region in each file"),
    opt("offset_increment", &[], Kind::SizeOrPercent, Some("0"), "1g", "Added to offset for each numjobs clone"),
    opt("io_size", &["io_limit"], Kind::SizeOrPercent, None, "10g", "Bytes to transfer (default: size)"),
    opt("number_ios", &[], Kind::Count, None, "10000", "Stop after this many I/Os"),
    opt("loops", &[], Kind::Count, Some("1"), "3", "Repeat the workload this many times"),
    opt("rw", &["readwrite"], Kind::Choice(RwPattern::NAMES), Some("read"), "randread", "I/O pattern, optionally with :N"),
    opt("rw_sequencer", &[], Kind::Choice(RwSequencer::NAMES), Some("sequential"), "identical", "Random patterns: I/Os between random offsets continue after the last one (sequential) or repeat it (identical)"),
    opt("rwmixread", &[], Kind::Percent, Some("50"), "70", "Percentage of reads in mixed workloads"),
    opt("rwmixwrite", &[], Kind::Percent, Some("50"), "30", "Percentage of writes in mixed workloads"),
    opt("bs", &["blocksize"], Kind::SizePerDirection, Some("4k"), "4k", "Block size, read,write,trim"),
    opt("bsrange", &["blocksize_range"], Kind::RangePerDirection, None, "4k-64k", "Block size range, read,write,trim"),
    opt("bssplit", &[], Kind::SplitPerDirection, None, "4k/50:64k/50", "Block size mix, read,write,trim"),
    opt("blockalign", &["ba"], Kind::SizePerDirection, None, "4k", "Offset alignment (default: minimum block size)"),
    opt("norandommap", &[], Kind::Bool, Some("0"), "1", "Random offsets may repeat before all blocks are done"),
    opt("randrepeat", &["allrandrepeat"], Kind::Bool, Some("1"), "0", "Same random sequence on every run"),
    opt("randseed", &[], Kind::Count, Some("0x89"), "42", "Seed of the random generators"),
    opt("serialize_overlap", &[], Kind::Bool, Some("0"), "1", "An I/O that overlaps one in flight waits until that one completes (jobs that write or trim, iodepth > 1)"),
    opt("random_generator", &[], Kind::Choice(RandomGenerator::NAMES), Some("tausworthe"), "lfsr", "Uniform random offsets: tausworthe (32-bit) or tausworthe64, fio's generators with norandommap (iolens' own order with the random map; unset: 64-bit from 2^32 blocks), or lfsr (each block once per pass without a random map, in fio's order)"),
    opt("random_distribution", &[], Kind::Choice(DistributionWord::NAMES), Some("random"), "zipf:1.2", "Random offset distribution, with :parameter (sequence:2,0,1: these blocks in turn; fio's default without: zipf 1.1, pareto 0.2, normal fio's own bell)"),
    opt("random_sequence_stride", &[], Kind::Bool, Some("0"), "1", "random_distribution=sequence: each round of the list moves on by its length (2,0,1, 5,3,4, ...)"),
    opt("sprandom", &[], Kind::Bool, Some("0"), "1", "Random write preconditioning to an SSD's steady state: the physical capacity (size plus spr_op) written once, region by region, rewriting a share of each region's blocks (rw=randwrite; sets random_generator=lfsr and norandommap)"),
    opt("spr_op", &[], Kind::FloatList, Some("0.15"), "0.28", "sprandom: over-provisioning ratio of the device, between 0 and 1"),
    opt("spr_num_regions", &[], Kind::Count, Some("100"), "400", "sprandom: number of equal regions"),
    opt("spr_cs", &[], Kind::Size, Some("0"), "4m", "sprandom: the device's cache size; when set, a region's rewrites wait until the next region ends"),
    opt("percentage_random", &[], Kind::CountPerDirection, Some("100"), "80", "Share of a random pattern's I/Os at random offsets, read,write,trim; the rest continue sequentially"),
    opt("file_service_type", &[], Kind::Choice(FileServiceWord::NAMES), Some("roundrobin"), "random:4", "Which file the next I/O goes to: roundrobin, random, sequential; :N I/Os per choice"),
    opt("numjobs", &[], Kind::Count, Some("1"), "4", "Clones of this job"),
    opt("thread", &[], Kind::Bool, Some("0"), "1", "Run clones as threads rather than processes"),
    opt("group_reporting", &[], Kind::Bool, Some("0"), "1", "Report a group's clones as one"),
    opt("stonewall", &["wait_for_previous"], Kind::Bool, Some("0"), "1", "Wait for earlier jobs before starting"),
    opt("new_group", &[], Kind::Bool, Some("0"), "1", "Start a new reporting group"),
    opt("startdelay", &[], SECONDS, Some("0"), "5s", "Delay before the job starts (default unit s)"),
    opt("runtime", &["timeout"], SECONDS, None, "60s", "Stop after this long (default unit s)"),
    opt("time_based", &[], Kind::Bool, Some("0"), "1", "Run for the whole runtime, looping the workload"),
    opt("ramp_time", &[], SECONDS, Some("0"), "10s", "Run this long before measuring (default unit s)"),
    opt("rate", &[], Kind::SizePerDirection, Some("0"), "100m", "Bandwidth cap in bytes/s, read,write,trim"),
    opt("rate_iops", &[], Kind::CountPerDirection, Some("0"), "1000", "IOPS cap, read,write,trim"),
    opt("rate_process", &[], Kind::Choice(RateProcess::NAMES), Some("linear"), "poisson", "How rated I/Os are spaced"),
    opt("thinktime", &[], MICROS, Some("0"), "100us", "Pause between I/Os (default unit us)"),
    opt("thinktime_blocks", &[], Kind::Count, Some("1"), "8", "I/Os between pauses"),
    opt("thinktime_spin", &[], MICROS, Some("0"), "50us", "Part of each think time spent busy instead of asleep (default unit us)"),
    opt("thinktime_blocks_type", &[], Kind::Choice(ThinktimeCounts::NAMES), Some("complete"), "issue", "What thinktime_blocks counts: completed or issued I/Os"),
    opt("exitall", &[], Kind::Bool, Some("0"), "1", "When one job ends, stop the others (for the whole run once any job sets it)"),
    opt("exit_what", &[], Kind::Choice(ExitWhat::NAMES), Some("group"), "all", "What exitall stops: group or stonewall (the running group), all (and every later group)"),
    opt("wait_for", &[], Kind::Text, None, "writer", "Start only after the named earlier job has finished"),
    opt("max_latency", &[], Kind::Text, Some("0"), "100ms", "Fail the job on an I/O slower than this, read,write,trim (default unit us)"),
    opt("rate_min", &["ratemin"], Kind::SizePerDirection, Some("0"), "10m", "Fail the job below this bandwidth over a rate_cycle, read,write,trim"),
    opt("rate_iops_min", &[], Kind::CountPerDirection, Some("0"), "100", "Fail the job below these IOPS over a rate_cycle, read,write,trim"),
    opt("rate_cycle", &["ratecycle"], Kind::Count, Some("1000"), "500", "Window of the rate_min checks, ms"),
    opt("iodepth_low", &[], Kind::Count, None, "4", "Once the queue is full, let it drain to this depth before refilling (default: iodepth)"),
    opt("steadystate", &["ss"], Kind::Choice(SteadyCriterion::NAMES), Some("iops_slope:0.01%"), "iops:5%", "Steady-state criterion and limit (absolute or %): deviation from the mean or slope of IOPS or bandwidth"),
    opt("steadystate_duration", &["ss_dur"], SECONDS, Some("0"), "30s", "End the job once steadystate holds over this window, whole seconds (0 = off)"),
    opt("steadystate_ramp_time", &["ss_ramp"], SECONDS, Some("0"), "10s", "Time after ramp_time before steady-state samples are taken"),
    opt("latency_target", &[], MICROS, None, "2ms", "Search for the deepest queue (up to iodepth) whose I/Os stay under this latency (default unit us)"),
    opt("latency_window", &[], MICROS, None, "1s", "Time each queue depth is tried during the latency_target search (default unit us)"),
    opt("latency_percentile", &[], Kind::Text, Some("100"), "99.9", "Share of a window's I/Os (per cent) that must meet latency_target"),
    opt("latency_run", &[], Kind::Bool, Some("0"), "1", "Keep adjusting the depth to latency_target for the whole run instead of ending the job"),
    opt("direct", &[], Kind::Bool, Some("0"), "1", "Use O_DIRECT (bypass the page cache)"),
    opt("buffered", &[], Kind::Bool, Some("1"), "0", "Use the page cache; buffered=0 means direct=1"),
    opt("sync", &[], Kind::Choice(SyncMode::NAMES), Some("none"), "dsync", "Open with O_SYNC (1, sync) or O_DSYNC (dsync)"),
    opt("fsync", &[], Kind::Count, Some("0"), "32", "fsync after this many writes"),
    opt("fdatasync", &[], Kind::Count, Some("0"), "32", "fdatasync after this many writes"),
    opt("end_fsync", &[], Kind::Bool, Some("0"), "1", "fsync when the job ends"),
    opt("fsync_on_close", &[], Kind::Bool, Some("0"), "1", "fsync a written file when it is closed"),
    opt("invalidate", &[], Kind::Bool, Some("1"), "0", "Drop the target's page cache before starting"),
    opt("overwrite", &[], Kind::Bool, Some("0"), "1", "Lay out files fully before writing"),
    opt("unlink", &[], Kind::Bool, Some("0"), "1", "Delete generated files when done"),
    opt("ioscheduler", &[], Kind::Text, None, "mq-deadline", "Switch the scheduler of the device holding each file (a partition's disk) for the job, and switch it back after"),
    opt("exec_prerun", &[], Kind::Text, None, "CMD", "Run CMD with sh -c once per clone before the job starts, its output in JOBNAME.prerun.txt; a failure fails the job"),
    opt("exec_postrun", &[], Kind::Text, None, "CMD", "Run CMD with sh -c once per clone after the job ends, its output in JOBNAME.postrun.txt"),
    opt("lockfile", &[], Kind::Choice(LockMode::NAMES), Some("none"), "exclusive", "Serialise the I/O of the job's clones on a shared file: exclusive (one I/O at a time) or readwrite (reads together, a write alone)"),
    opt("unlink_each_loop", &[], Kind::Bool, Some("0"), "1", "Empty the job's files before each pass of loops after the first, so each pass writes a fresh file (write jobs)"),
    opt("ioengine", &[], Kind::Choice(EngineKind::NAMES), Some("psync"), "io_uring", "How I/O is issued"),
    opt("iodepth", &[], Kind::Count, Some("1"), "32", "I/Os kept in flight (asynchronous engines)"),
    opt("iodepth_batch_submit", &["iodepth_batch"], Kind::Count, Some("1"), "8", "I/Os submitted at once (0: iodepth)"),
    opt("iodepth_batch_complete_min", &["iodepth_batch_complete"], Kind::Count, Some("1"), "8", "Least completions to wait for"),
    opt("iodepth_batch_complete_max", &[], Kind::Count, None, "16", "Most completions reaped at once (default: iodepth_batch_complete_min)"),
    opt("hipri", &[], Kind::Bool, Some("0"), "1", "Polled completions (io_uring, pvsync2)"),
    opt("fixedbufs", &[], Kind::Bool, Some("0"), "1", "Register buffers with io_uring"),
    opt("registerfiles", &[], Kind::Bool, Some("0"), "1", "Register files with io_uring"),
    opt("cmdprio_percentage", &[], Kind::CountPerDirection, Some("0"), "50", "Share (percent) of reads,writes issued with cmdprio_class/cmdprio (io_uring, libaio)"),
    opt("cmdprio_class", &[], Kind::CountPerDirection, Some("1"), "3", "I/O priority class of those I/Os, reads,writes: 1 realtime, 2 best effort, 3 idle"),
    opt("cmdprio", &[], Kind::CountPerDirection, Some("0"), "4", "I/O priority level of those I/Os, reads,writes: 0 (highest) to 7"),
    opt("cmdprio_bssplit", &[], Kind::Text, None, "4k/50:64k/20/3/1", "Shares of each block size issued with a priority: bs/percent[/class/level]:…, reads,writes"),
    opt("sqthread_poll", &[], Kind::Bool, Some("0"), "1", "Kernel thread polls the io_uring submission queue"),
    opt("stat_type", &[], Kind::Choice(StatType::NAMES), Some("stat"), "statx", "The call filestat and dirstat time: stat, lstat or statx"),
    opt("zero_buffers", &[], Kind::Bool, Some("0"), "1", "Fill write buffers with zeros"),
    opt("refill_buffers", &[], Kind::Bool, Some("0"), "1", "New random data for every write"),
    opt("scramble_buffers", &[], Kind::Bool, Some("1"), "0", "Lightly change buffers between writes"),
    opt("buffer_compress_percentage", &[], Kind::Percent, Some("0"), "50", "Share of each buffer_compress_chunk that compresses (zeros or buffer_pattern after random bytes)"),
    opt("buffer_compress_chunk", &[], Kind::Size, Some("512"), "4k", "Bytes per random-then-compressible run (0: one run per buffer)"),
    opt("buffer_pattern", &[], Kind::Text, None, "0xdeadface\"abcd\"-12", "Fill write buffers with this pattern: 0x hex, decimal, \"string\", 'file', in any order"),
    opt("dedupe_percentage", &[], Kind::Percent, Some("0"), "30", "Share of writes that repeat an earlier write's contents"),
    opt("gtod_reduce", &[], Kind::Bool, Some("0"), "1", "Measure no latencies (disable_lat, _clat, _slat)"),
    opt("disable_lat", &[], Kind::Bool, Some("0"), "1", "Do not measure total latency"),
    opt("disable_clat", &[], Kind::Bool, Some("0"), "1", "Do not measure completion latency"),
    opt("disable_slat", &[], Kind::Bool, Some("0"), "1", "Do not measure submission latency"),
    opt("percentile_list", &[], Kind::FloatList, None, "50:99:99.9", "Latency percentiles to report (default: fio's list)"),
    opt("cpus_allowed", &[], Kind::Text, None, "0-3,6", "CPUs the workers may run on: numbers and ranges"),
    opt("cpumask", &[], Kind::Count, None, "0xf", "CPUs the workers may run on, as a bit mask"),
    opt("cpus_allowed_policy", &[], Kind::Choice(CpuPolicy::NAMES), Some("shared"), "split", "shared: every worker on all the CPUs; split: one CPU each"),
    opt("nice", &[], Kind::Text, None, "5", "CPU nice value of the workers (-20 to 19)"),
    opt("prio", &[], Kind::Count, None, "2", "I/O priority level of the workers (0 highest to 7)"),
    opt("prioclass", &[], Kind::Count, None, "3", "I/O priority class: 1 realtime, 2 best effort, 3 idle"),
    opt("kb_base", &[], Kind::Choice(KbBase::NAMES), Some("1024"), "1000", "1024: k = 1024 (fio's default); 1000: k = 1000, Ki = 1024"),
    // Reporting and logs.
    opt("clat_percentiles", &[], Kind::Bool, Some("1"), "0", "Report completion latency percentiles"),
    opt("lat_percentiles", &[], Kind::Bool, Some("0"), "1", "Report total latency percentiles"),
    opt("slat_percentiles", &[], Kind::Bool, Some("0"), "1", "Report submission latency percentiles"),
    opt("unified_rw_reporting", &[], Kind::Choice(UnifiedRw::NAMES), Some("none"), "mixed", "none: each direction; mixed (1): all directions as one; both (2): each, then as one"),
    opt("significant_figures", &[], Kind::Count, Some("4"), "6", "Digits of IOPS and bandwidth in the normal output (1 to 10)"),
    opt("write_bw_log", &[], Kind::Text, None, "mylog", "Bandwidth log PREFIX_bw.N.log (empty value: job name)"),
    opt("write_iops_log", &[], Kind::Text, None, "mylog", "IOPS log PREFIX_iops.N.log (empty value: job name)"),
    opt("write_lat_log", &[], Kind::Text, None, "mylog", "Latency logs PREFIX_{slat,clat,lat}.N.log (empty value: job name)"),
    opt("write_hist_log", &[], Kind::Text, None, "mylog", "Latency histogram log PREFIX_clat_hist.N.log, needs log_hist_msec"),
    opt("log_avg_msec", &[], Kind::Count, Some("0"), "500", "Average log entries over this many ms (0: one entry per I/O)"),
    opt("log_hist_msec", &[], Kind::Count, Some("0"), "1000", "Histogram log window in ms (0: no histogram entries)"),
    opt("log_window_value", &[], Kind::Choice(LogWindow::NAMES), Some("avg"), "both", "Windowed entries hold the mean (avg, 0), the maximum (max, 1) or both"),
    opt("log_max_value", &[], Kind::Bool, Some("0"), "1", "fio 3.33's spelling of log_window_value=max (newer fio makes it an alias of log_window_value)"),
    opt("log_prio", &[], Kind::Bool, Some("0"), "1", "Log entries carry the I/O priority (0x%04x) instead of 1 for the realtime class"),
    opt("log_issue_time", &[], Kind::Bool, Some("0"), "1", "slat and clat entries end with the issue time in ns (needs write_lat_log and log_offset)"),
    opt("log_offset", &[], Kind::Bool, Some("0"), "1", "Log entries carry the I/O's offset"),
    opt("continue_on_error", &[], Kind::Text, Some("none"), "write", "Keep going after EIO/EILSEQ (or ignore_error's list): none, read, write, io, verify, all"),
    opt("ignore_error", &[], Kind::Text, None, ",ENOSPC", "errno names or numbers continue_on_error tolerates: READ,WRITE,VERIFY lists, ':' within one (as fio runs it)"),
    opt("description", &[], Kind::Text, None, "random reads, cold cache", "Free text shown with the job's results"),
    opt("stats", &[], Kind::Bool, Some("1"), "0", "0: run the job but leave it out of the results"),
    opt("per_job_logs", &[], Kind::Bool, Some("1"), "0", "Number log files per worker; 0: one file per job"),
    // Files: creation, preparation, guards.
    opt("allow_file_create", &[], Kind::Bool, Some("1"), "0", "0: a file that does not exist is an error instead of being created"),
    opt("create_only", &[], Kind::Bool, Some("0"), "1", "Only create and lay out the files; do no I/O"),
    opt("create_on_open", &[], Kind::Bool, Some("0"), "1", "Create a missing file empty when the job's group starts, not at the run's start (write jobs only)"),
    opt("fallocate", &[], Kind::Choice(Fallocate::NAMES), Some("native"), "posix", "How laid-out files get their blocks: none, native, posix, keep, truncate (0 = none, 1 = posix)"),
    opt("pre_read", &[], Kind::Bool, Some("0"), "1", "Read the job's files into the page cache before it starts (turns invalidate off)"),
    opt("fadvise_hint", &[], Kind::Choice(FadviseHint::NAMES), Some("1"), "random", "Readahead advice: 0 none, 1 by the rw pattern, sequential, random"),
    opt("filename_format", &[], Kind::Text, Some("$jobname.$jobnum.$filenum"), "$jobname.$filenum", "Generated file names from $jobname, $jobnum (the clone), $filenum and $clientuid (empty: no client/server mode); a / makes subdirectories inside directory=; without $jobnum the clones share the files"),
    opt("openfiles", &[], Kind::Count, None, "4", "Files a worker uses at a time, moving on as each is done; unlike fio, all stay open (no descriptor limit)"),
    opt("zonemode", &[], Kind::Choice(ZoneMode::NAMES), Some("none"), "strided", "none, or strided: I/O stays in one zone for zonesize bytes, then moves on to the next"),
    opt("zonesize", &[], Kind::Size, Some("0"), "16m", "zonemode=strided: bytes transferred in a zone before the next"),
    opt("zonerange", &[], Kind::Size, Some("0"), "256m", "zonemode=strided: length of a zone (default: zonesize)"),
    opt("zoneskip", &[], Kind::Size, Some("0"), "64m", "zonemode=strided: bytes skipped between one zone's end and the next zone"),
    opt("allow_mounted_write", &[], Kind::Bool, Some("0"), "1", "Allow writing to a mounted block device"),

    // Harmless here: accepted, with a warning saying why nothing changes.
    ignored("clocksource", &[], Kind::Text, None, "iolens picks its own clock (the TSC where the kernel trusts it)"),
    ignored("gtod_cpu", &[], Kind::Count, None, "iolens reads the clock in each worker; no timer thread to pin"),
    ignored("disk_util", &[], Kind::Bool, Some("1"), "device statistics are always collected"),
    ignored("unique_filename", &[], Kind::Bool, Some("1"), "only matters for fio's client/server mode"),
    ignored("error_dump", &[], Kind::Bool, Some("0"), "the first error of each worker is always reported"),
    ignored("iomem", &["mem"], Kind::Text, Some("malloc"), "buffers are always aligned anonymous memory"),
    ignored("iomem_align", &["mem_align"], Kind::Count, Some("0"), "buffers are always aligned to the page and the device"),
    ignored("hugepage-size", &[], Kind::Size, None, "buffers never use huge pages"),
    ignored("lockmem", &[], Kind::Size, Some("0"), "iolens does not pin memory to simulate less of it"),
    ignored("create_serialize", &[], Kind::Bool, Some("1"), "files are laid out one by one anyway, before any job starts"),
    ignored("write_barrier", &[], Kind::Count, Some("0"), "fio marks barrier writes only for ioengine=libpmem and no engine acts on the mark, so with the engines iolens has fio issues plain writes too"),
    ignored("disable_bw_measurement", &["disable_bw"], Kind::Bool, Some("0"), "bandwidth accounting costs nothing measurable"),
    ignored("exit_on_io_done", &[], Kind::Bool, Some("0"), "belongs to ioengine=cpuio"),

    // Rejected unless set to their default: a clear error and the nearest supported option.
    unsupported("exitall_on_error", &[], Kind::Bool, Some("0"), "stopping the other jobs on an error is not implemented", "the default: a job stops on its first error"),
    unsupported("create_fsync", &[], Kind::Bool, Some("1"), "laid-out files are not fsynced separately", "end_fsync"),
    unsupported("opendir", &[], Kind::Text, None, "collecting the files of a directory is not implemented", "filename= with ':'-separated names"),
    unsupported("rate_ignore_thinktime", &[], Kind::Bool, Some("0"), "rated I/O always includes thinktime", "the default"),
    unsupported("thinktime_iotime", &[], SECONDS, Some("0"), "think time after an I/O period is not implemented", "thinktime_blocks"),
    unsupported("numa_cpu_nodes", &[], Kind::Text, None, "NUMA binding is not implemented", "numactl around iolens"),
    unsupported("numa_mem_policy", &[], Kind::Text, None, "NUMA binding is not implemented", "numactl around iolens"),
    unsupported("zonecapacity", &[], Kind::Size, Some("0"), "zoned block devices are not supported", "zonemode=strided with zonerange"),
    unsupported("read_beyond_wp", &[], Kind::Bool, Some("0"), "zoned block devices are not supported", "offset= and size= per job"),
    unsupported("max_open_zones", &[], Kind::Count, Some("0"), "zoned block devices are not supported", "offset= and size= per job"),
    unsupported("job_max_open_zones", &[], Kind::Count, Some("0"), "zoned block devices are not supported", "offset= and size= per job"),
    unsupported("ignore_zone_limits", &[], Kind::Bool, Some("0"), "zoned block devices are not supported", "offset= and size= per job"),
    unsupported("zone_reset_threshold", &[], Kind::Text, None, "zoned block devices are not supported", "offset= and size= per job"),
    unsupported("zone_reset_frequency", &[], Kind::Text, None, "zoned block devices are not supported", "offset= and size= per job"),
    unsupported("unit_base", &[], Kind::Count, Some("0"), "results are always reported in bytes", "the default"),
    unsupported("atomic", &[], Kind::Bool, Some("0"), "atomic writes are not implemented", "direct=1"),
    unsupported("sync_file_range", &[], Kind::Text, None, "sync_file_range is not implemented", "fdatasync="),
    unsupported("write_hint", &[], Kind::Text, Some("none"), "write lifetime hints are not implemented", "the default"),
    unsupported("fill_device", &["fill_fs"], Kind::Bool, Some("0"), "writing until the device is full is not implemented", "size=100%"),
    unsupported("file_append", &[], Kind::Bool, Some("0"), "appending to files is not implemented", "offset="),
    unsupported("offset_align", &[], Kind::Size, Some("0"), "aligning a percentage offset is not implemented", "offset= in bytes"),
    unsupported("softrandommap", &[], Kind::Bool, Some("0"), "the random map is never dropped", "norandommap"),
    unsupported("bs_is_seq_rand", &[], Kind::Bool, Some("0"), "block sizes are per direction only", "bs=read,write"),
    unsupported("blocksize_unaligned", &["bs_unaligned"], Kind::Bool, Some("0"), "block sizes are always sector aligned", "bsrange="),
    unsupported("dedupe_mode", &[], Kind::Text, Some("repeat"), "only dedupe_mode=repeat is implemented (a duplicate repeats the last unique write)", "dedupe_mode=repeat"),
    unsupported("dedupe_working_set_percentage", &[], Kind::Percent, Some("5"), "it sizes dedupe_mode=working_set, which is not implemented", "dedupe_mode=repeat"),
    unsupported("dedupe_global", &[], Kind::Bool, Some("0"), "duplicates shared between jobs are not implemented", "dedupe_percentage per job"),
    opt("io_submit_mode", &[], Kind::Choice(SubmitMode::NAMES), Some("inline"), "offload", "Who submits the I/Os: the job itself (inline), or a pool of iodepth threads with an engine each (offload), so a blocking engine keeps iodepth I/Os in flight"),
    opt("verify", &[], Kind::Choice(Option::<VerifyKind>::NAMES), Some("0"), "crc32c", "Write checkable blocks and verify them after writing (crc32c, crc64, xxhash, sha256, md5, pattern: the pattern alone, pattern_hdr, meta)"),
    opt("do_verify", &[], Kind::Bool, Some("1"), "0", "Run the verify pass after the writes (0: write verifiable blocks only)"),
    opt("verify_only", &[], Kind::Bool, Some("0"), "1", "Do not write: check what an earlier run of the same job wrote"),
    opt("verify_offset", &[], Kind::Size, Some("0"), "512", "Where in each verified block its header sits"),
    opt("verify_interval", &[], Kind::Size, None, "4k", "Size of each verified block (default: the write block size)"),
    opt("verify_pattern", &[], Kind::Text, None, "0xdeadbeef", "Fill verified blocks with this pattern (fio's notation, as buffer_pattern, plus %o: the block's offset); alone it means verify=pattern_hdr"),
    opt("verify_pattern_interval", &[], Kind::Size, Some("0"), "512", "Start verify_pattern (and its %o) again every N bytes of a block (0: once per block)"),
    opt("verify_fatal", &[], Kind::Bool, Some("0"), "1", "Stop verifying at the first bad block"),
    opt("verify_dump", &[], Kind::Bool, Some("0"), "1", "Write the found and expected copies of each bad block to the current directory"),
    ignored("verify_async", &[], Kind::Count, Some("0"), "verification runs in the worker itself, not in helper threads; the same blocks are checked"),
    ignored("verify_async_cpus", &[], Kind::Text, None, "verification runs in the worker itself, not in helper threads; the same blocks are checked"),
    opt("verify_backlog", &[], Kind::Count, Some("0"), "1024", "Verify after every N written blocks, not only at the end"),
    opt("verify_backlog_batch", &[], Kind::Count, None, "8", "How many of the waiting blocks each verify_backlog check reads (default: verify_backlog)"),
    opt("verify_write_sequence", &[], Kind::Bool, Some("1"), "0", "A block holding an earlier (or later) write of its offset is bad"),
    opt("verify_header_seed", &[], Kind::Bool, None, "0", "A good block from another job or worker is bad (default: in jobs that read and write without verify_backlog)"),
    opt("verify_state_save", &[], Kind::Bool, Some("1"), "0", "When a write job with verify ends (also cut short), save how far its writes got to local-<job>-<n>-verify.state (in --aux-path)"),
    opt("verify_state_load", &[], Kind::Bool, Some("0"), "1", "Verify only what the saved verify state says the writer finished"),
    opt("experimental_verify", &[], Kind::Bool, Some("0"), "1", "fio's verifier that replays the offsets: accepted; iolens' write log reads back the same blocks"),
    opt("trim_percentage", &[], Kind::Percent, Some("0"), "10", "With verify= and trim_backlog: the share of written blocks to trim (they then read back as zeros)"),
    opt("trim_verify_zero", &[], Kind::Bool, Some("1"), "0", "A trimmed block must read back as zeros (0: it is not read back)"),
    opt("trim_backlog", &[], Kind::Count, None, "64", "Trim blocks picked by trim_percentage after every N written blocks"),
    opt("trim_backlog_batch", &[], Kind::Count, None, "8", "How many picked blocks each trim_backlog round trims (default: trim_backlog)"),
    unsupported("block_error_percentiles", &[], Kind::Bool, Some("0"), "trim block error histograms are not implemented", "the latency percentiles"),
    opt("write_iolog", &[], Kind::Text, None, "job.iolog", "Append the issued I/Os to FILE as fio's version 3 I/O log"),
    opt("read_iolog", &[], Kind::Text, None, "job.iolog", "Replay the I/Os of fio's I/O log FILE (version 2 or 3) or blktrace trace instead of the workload's"),
    opt("read_iolog_chunked", &[], Kind::Bool, Some("0"), "1", "Read the replayed log as it goes (iolens always does: a log of any length takes little memory)"),
    opt("replay_no_stall", &[], Kind::Bool, Some("0"), "1", "Replay as fast as possible, ignoring the log's times"),
    opt("replay_redirect", &[], Kind::Text, None, "/dev/sdc", "Replay every logged I/O on this one file or device"),
    opt("replay_scale", &[], Kind::Count, None, "8", "Divide the logged offsets by N"),
    opt("replay_align", &[], Kind::Count, None, "4096", "Round the logged offsets down to this power of two"),
    opt("replay_time_scale", &[], Kind::Count, Some("100"), "200", "Replay at this per cent of the logged rate"),
    opt("replay_skip", &[], Kind::Text, None, "write,trim", "Leave these logged I/O kinds out: read, write, trim, sync"),
    opt("merge_blktrace_file", &[], Kind::Text, None, "merged.bin", "Merge the blktrace traces read_iolog lists (NAME:NAME) into FILE by time, then replay it"),
    opt("merge_blktrace_scalars", &[], Kind::Text, None, "50:100", "Per cent of each merged trace's times, in read_iolog's order"),
    opt("merge_blktrace_iters", &[], Kind::Text, None, "2:1", "Passes over each merged trace, in read_iolog's order"),
    unsupported("uid", &[], Kind::Count, None, "switching users is not implemented", "run iolens as that user"),
    unsupported("gid", &[], Kind::Count, None, "switching groups is not implemented", "run iolens as that group"),
    unsupported("cgroup", &[], Kind::Text, None, "cgroups are not managed by iolens", "systemd-run or cgexec around iolens"),
    unsupported("cgroup_weight", &[], Kind::Count, None, "cgroups are not managed by iolens", "systemd-run or cgexec around iolens"),
    unsupported("cgroup_nodelete", &[], Kind::Bool, Some("0"), "cgroups are not managed by iolens", "systemd-run or cgexec around iolens"),
    opt("flow_id", &[], Kind::Count, Some("0"), "1", "Flow control: the jobs with the same flow_id share one flow"),
    opt("flow", &[], Kind::Count, Some("0"), "2", "Flow control weight (1..1000): the jobs of a flow_id issue I/Os in the ratio of their weights"),
    opt("flow_sleep", &[], Kind::Count, Some("0"), "100", "Flow control: microseconds a job ahead of its share waits (after its I/Os in flight) before trying again"),
    ignored("flow_watermark", &[], Kind::Count, None, "fio ignores it too (deprecated: flow control has no watermark)"),
    unsupported("profile", &[], Kind::Text, None, "fio's built-in profiles are not included", "a job file"),
    unsupported("nonvectored", &[], Kind::Count, Some("-1"), "io_uring reads and writes are always vectored", "the default"),
    unsupported("force_async", &[], Kind::Count, Some("0"), "forcing io_uring async punts is not implemented", "the default"),
    unsupported("sqthread_poll_cpu", &[], Kind::Count, None, "pinning the io_uring poll thread is not implemented", "sqthread_poll"),
    ignored("userspace_reap", &[], Kind::Bool, Some("0"), "libaio completions already in the ring are always taken from it in user space, without io_getevents (see docs/fio-differences.md)"),
    unsupported("hipri_percentage", &[], Kind::Percent, Some("100"), "polling a share of the I/Os is not implemented", "hipri"),
    unsupported("nowait", &[], Kind::Bool, Some("0"), "RWF_NOWAIT is not implemented", "the default"),
    unsupported("cmd_type", &[], Kind::Text, None, "belongs to ioengine=io_uring_cmd, which iolens does not have", "ioengine=io_uring"),
    ignored("log_entries", &[], Kind::Count, None, "logs grow as needed"),
    unsupported("bwavgtime", &[], Kind::Count, Some("500"), "bandwidth samples always cover 500 ms", "log_avg_msec for the logs"),
    unsupported("iopsavgtime", &[], Kind::Count, Some("500"), "IOPS samples always cover 500 ms", "log_avg_msec for the logs"),
    unsupported("log_hist_coarseness", &[], Kind::Count, Some("0"), "histogram logs always have every bin", "the default"),
    ignored("log_compression", &[], Kind::Size, Some("0"), "logs go to disk in bounded chunks while the job runs, so they never fill memory; the files are the same"),
    ignored("log_compression_cpus", &[], Kind::Text, None, "logs go to disk in bounded chunks while the job runs: nothing to compress in memory"),
    opt("log_store_compressed", &[], Kind::Bool, Some("0"), "1", "Write the bw/iops/lat logs as fio's compressed .log.fz files (fio 3.33's samples, zlib); --inflate-log prints one as text"),
    unsupported("log_unix_epoch", &[], Kind::Bool, Some("0"), "log times are always relative to the job's start", "the default"),
    unsupported("log_alternate_epoch", &[], Kind::Bool, Some("0"), "log times are always relative to the job's start", "the default"),
    unsupported("log_alternate_epoch_clock_id", &[], Kind::Count, Some("0"), "log times are always relative to the job's start", "the default"),
    engine_only!("gfapi or gfapi_async", "volume", &[], Kind::Text),
    engine_only!("gfapi or gfapi_async", "brick", &[], Kind::Text),
    engine_only!("rdma", "gpu_dev_id", &[], Kind::Count),
    engine_only!("cpuio", "cpuload", &[], Kind::Count),
    engine_only!("cpuio", "cpuchunks", &[], Kind::Count),
    engine_only!("cpuio", "cpumode", &[], Kind::Text),
    engine_only!("libhdfs", "namenode", &[], Kind::Text),
    engine_only!("net, rdma or libhdfs", "port", &[], Kind::Count),
    engine_only!("net, rdma or libhdfs", "hostname", &[], Kind::Text),
    engine_only!("librpma_apm_* or librpma_gpspm_*", "serverip", &[], Kind::Text),
    engine_only!("librpma_apm_* or librpma_gpspm_*", "direct_write_to_pmem", &[], Kind::Bool),
    engine_only!("librpma_apm_* or librpma_gpspm_*", "busy_wait_polling", &[], Kind::Bool),
    engine_only!("net or netsplice", "interface", &[], Kind::Text),
    engine_only!("net or netsplice", "ttl", &[], Kind::Count),
    engine_only!("net or netsplice", "nodelay", &[], Kind::Bool),
    engine_only!("net or netsplice", "protocol", &["proto"], Kind::Text),
    engine_only!("net or netsplice", "listen", &[], Kind::Bool),
    engine_only!("net or netsplice", "pingpong", &[], Kind::Bool),
    engine_only!("net or netsplice", "window_size", &[], Kind::Size),
    engine_only!("net or netsplice", "mss", &[], Kind::Count),
    engine_only!("e4defrag", "donorname", &[], Kind::Text),
    engine_only!("e4defrag", "inplace", &[], Kind::Count),
    engine_only!("rbd or rados", "clustername", &[], Kind::Text),
    engine_only!("rbd", "rbdname", &[], Kind::Text),
    engine_only!("rbd or rados", "clientname", &[], Kind::Text),
    engine_only!("rados", "conf", &[], Kind::Text),
    engine_only!("rbd or rados", "busy_poll", &[], Kind::Bool),
    engine_only!("rados", "touch_objects", &[], Kind::Bool),
    engine_only!("rbd, rados or dfs", "pool", &[], Kind::Text),
    engine_only!("dfs", "cont", &[], Kind::Text),
    engine_only!("dfs or libhdfs", "chunk_size", &[], Kind::Size),
    engine_only!("dfs", "object_class", &[], Kind::Text),
    engine_only!("mtd", "skip_bad", &[], Kind::Bool),
    engine_only!("libhdfs", "hdfsdirectory", &[], Kind::Text),
    engine_only!("rdma", "verb", &[], Kind::Text),
    engine_only!("rdma", "bindname", &[], Kind::Text),
    engine_only!("sg or io_uring_cmd", "readfua", &[], Kind::Bool),
    engine_only!("sg or io_uring_cmd", "writefua", &[], Kind::Bool),
    engine_only!("sg", "sg_write_mode", &[], Kind::Text),
    engine_only!("sg", "stream_id", &[], Kind::Count),
    engine_only!("http", "http_host", &[], Kind::Text),
    engine_only!("http", "http_user", &[], Kind::Text),
    engine_only!("http", "http_pass", &[], Kind::Text),
    engine_only!("http", "https", &[], Kind::Text),
    engine_only!("http", "http_mode", &[], Kind::Text),
    engine_only!("http", "http_s3_region", &[], Kind::Text),
    engine_only!("http", "http_s3_key", &[], Kind::Text),
    engine_only!("http", "http_s3_keyid", &[], Kind::Text),
    engine_only!("http", "http_s3_sse_customer_key", &[], Kind::Text),
    engine_only!("http", "http_s3_sse_customer_algorithm", &[], Kind::Text),
    engine_only!("http", "http_s3_storage_class", &[], Kind::Text),
    engine_only!("http", "http_swift_auth_token", &[], Kind::Text),
    engine_only!("http", "http_verbose", &[], Kind::Count),
    engine_only!("nbd", "uri", &[], Kind::Text),
    engine_only!("libcufile", "gpu_dev_ids", &[], Kind::Text),
    engine_only!("libcufile", "cuda_io", &[], Kind::Text),
    engine_only!("nfs", "nfs_url", &[], Kind::Text),
    engine_only!("exec", "program", &[], Kind::Text),
    engine_only!("exec", "arguments", &[], Kind::Text),
    engine_only!("exec", "grace_time", &[], Kind::Count),
    engine_only!("exec", "std_redirect", &[], Kind::Bool),
    engine_only!("xnvme", "xnvme_async", &[], Kind::Text),
    engine_only!("xnvme", "xnvme_sync", &[], Kind::Text),
    engine_only!("xnvme", "xnvme_admin", &[], Kind::Text),
    engine_only!("xnvme", "xnvme_dev_nsid", &[], Kind::Count),
    engine_only!("xnvme", "xnvme_iovec", &[], Kind::Count),
    // Documented by upstream fio after 3.33 (src/job/fio-options.txt lists them all).
    ignored("comm", &[], Kind::Text, None, "workers keep iolens' own thread names"),
    ignored("filetype", &[], Kind::Text, None, "iolens looks at each target once, when it opens it"),
    unsupported("end_syncfs", &[], Kind::Bool, Some("0"), "syncfs at the end of a job is not implemented", "end_fsync=1"),
    unsupported("job_start_clock_id", &[], Kind::Count, None, "log times are always relative to the job's start", "the default"),
    unsupported("priohint", &[], Kind::Count, None, "I/O priority hints are not implemented", "prio and prioclass"),
    unsupported("cmdprio_hint", &[], Kind::Text, None, "per-command priorities are not implemented", "prio"),
    unsupported("ramp_size", &[], Kind::Size, Some("0"), "the ramp is measured in time only", "ramp_time"),
    unsupported("thinkcycles", &[], Kind::Count, Some("0"), "thinking in CPU cycles is not implemented", "thinktime with thinktime_spin"),
    unsupported("steadystate_check_interval", &["ss_interval"], SECONDS, Some("1"), "steady state is sampled every second", "the default"),
    unsupported("recover_zbd_write_error", &[], Kind::Bool, Some("0"), "zonemode=zbd is not implemented", "zonemode=strided"),
    unsupported("write_zone_remainders", &[], Kind::Bool, Some("0"), "zonemode=zbd is not implemented", "zonemode=strided"),
    unsupported("verify_policy", &[], Kind::Text, Some("completed"), "a saved verify state always covers every completed write", "the default (completed)"),
    unsupported("uncached", &[], Kind::Count, Some("0"), "uncached buffered I/O (RWF_DONTCACHE) is not implemented", "direct=1"),
    unsupported("libaio_vectored", &[], Kind::Bool, Some("0"), "libaio submits each I/O as one buffer", "the default"),
    unsupported("apptag", &[], Kind::Count, None, "end-to-end protection information is not implemented", "verify= for data integrity"),
    unsupported("md_per_io_size", &[], Kind::Size, Some("0"), "end-to-end protection information is not implemented", "verify= for data integrity"),
    unsupported("pi_act", &[], Kind::Count, None, "end-to-end protection information is not implemented", "verify= for data integrity"),
    unsupported("pi_chk", &[], Kind::Text, None, "end-to-end protection information is not implemented", "verify= for data integrity"),
    engine_only!("io_uring_cmd or xnvme", "apptag_mask", &[], Kind::Count),
    engine_only!("io_uring_cmd or xnvme", "fdp", &[], Kind::Bool),
    engine_only!("io_uring_cmd or xnvme", "dataplacement", &[], Kind::Text),
    engine_only!("io_uring_cmd or xnvme", "dp_scheme", &[], Kind::Text),
    engine_only!("io_uring_cmd or xnvme", "plids", &["fdp_pli"], Kind::Text),
    engine_only!("io_uring_cmd or xnvme", "plid_select", &["fdp_pli_select"], Kind::Text),
    engine_only!("io_uring_cmd", "cdb_len", &[], Kind::Count),
    engine_only!("io_uring_cmd", "num_range", &[], Kind::Count),
    engine_only!("io_uring_cmd", "read_mode", &[], Kind::Text),
    engine_only!("io_uring_cmd", "write_mode", &[], Kind::Text),
    engine_only!("io_uring_cmd", "verify_mode", &[], Kind::Text),
    engine_only!("io_uring_cmd", "verify_bytchk", &[], Kind::Count),
    engine_only!("http", "http_object_mode", &[], Kind::Text),
    engine_only!("http", "http_s3_security_token", &[], Kind::Text),
    engine_only!("rbd", "rbd_encryption_format", &[], Kind::Text),
    engine_only!("rbd", "rbd_encryption_passphrase", &[], Kind::Text),
    engine_only!("xnvme", "xnvme_dev_subnqn", &[], Kind::Text),
    engine_only!("xnvme", "xnvme_mem", &[], Kind::Text),
    engine_only!("windowsaio", "no_completion_thread", &[], Kind::Bool),
    engine_only!("libhipfile", "rocm_io", &[], Kind::Text),
    engine_only!("libblkio", "libblkio_driver", &[], Kind::Text),
    engine_only!("libblkio", "libblkio_path", &[], Kind::Text),
    engine_only!("libblkio", "libblkio_pre_connect_props", &[], Kind::Text),
    engine_only!("libblkio", "libblkio_num_entries", &[], Kind::Count),
    engine_only!("libblkio", "libblkio_queue_size", &[], Kind::Count),
    engine_only!("libblkio", "libblkio_pre_start_props", &[], Kind::Text),
    engine_only!("libblkio", "libblkio_vectored", &[], Kind::Bool),
    engine_only!("libblkio", "libblkio_write_zeroes_on_trim", &[], Kind::Bool),
    engine_only!("libblkio", "libblkio_wait_mode", &[], Kind::Text),
    engine_only!("libblkio", "libblkio_force_enable_completion_eventfd", &[], Kind::Bool),
    plugin_only!("spdk_bdev", "spdk_conf", Kind::Text),
    plugin_only!("spdk_bdev", "spdk_json_conf", Kind::Text),
    plugin_only!("spdk_bdev", "spdk_mem", Kind::Count),
    plugin_only!("spdk_bdev", "spdk_single_seg", Kind::Bool),
];

/// Handles to table rows for the code that reads options (`opt::BS` is the `bs` row).
/// Each is found at compile time: a name missing from the table stops the build.
pub mod opt {
    use super::{entry, OptionDef};

    pub const ALLOW_FILE_CREATE: &OptionDef = entry("allow_file_create");
    pub const ALLOW_MOUNTED_WRITE: &OptionDef = entry("allow_mounted_write");
    pub const BLOCKALIGN: &OptionDef = entry("blockalign");
    pub const BS: &OptionDef = entry("bs");
    pub const BSRANGE: &OptionDef = entry("bsrange");
    pub const BSSPLIT: &OptionDef = entry("bssplit");
    pub const BUFFER_COMPRESS_CHUNK: &OptionDef = entry("buffer_compress_chunk");
    pub const BUFFER_COMPRESS_PERCENTAGE: &OptionDef = entry("buffer_compress_percentage");
    pub const BUFFER_PATTERN: &OptionDef = entry("buffer_pattern");
    pub const BUFFERED: &OptionDef = entry("buffered");
    pub const CLAT_PERCENTILES: &OptionDef = entry("clat_percentiles");
    pub const CMDPRIO: &OptionDef = entry("cmdprio");
    pub const CMDPRIO_BSSPLIT: &OptionDef = entry("cmdprio_bssplit");
    pub const CMDPRIO_CLASS: &OptionDef = entry("cmdprio_class");
    pub const CMDPRIO_PERCENTAGE: &OptionDef = entry("cmdprio_percentage");
    pub const CONTINUE_ON_ERROR: &OptionDef = entry("continue_on_error");
    pub const CPUMASK: &OptionDef = entry("cpumask");
    pub const CPUS_ALLOWED: &OptionDef = entry("cpus_allowed");
    pub const CPUS_ALLOWED_POLICY: &OptionDef = entry("cpus_allowed_policy");
    pub const CREATE_ON_OPEN: &OptionDef = entry("create_on_open");
    pub const CREATE_ONLY: &OptionDef = entry("create_only");
    pub const DEDUPE_PERCENTAGE: &OptionDef = entry("dedupe_percentage");
    pub const DESCRIPTION: &OptionDef = entry("description");
    pub const DIRECT: &OptionDef = entry("direct");
    pub const DIRECTORY: &OptionDef = entry("directory");
    pub const DISABLE_CLAT: &OptionDef = entry("disable_clat");
    pub const DISABLE_LAT: &OptionDef = entry("disable_lat");
    pub const DISABLE_SLAT: &OptionDef = entry("disable_slat");
    pub const DO_VERIFY: &OptionDef = entry("do_verify");
    pub const END_FSYNC: &OptionDef = entry("end_fsync");
    pub const EXIT_WHAT: &OptionDef = entry("exit_what");
    pub const EXITALL: &OptionDef = entry("exitall");
    pub const FADVISE_HINT: &OptionDef = entry("fadvise_hint");
    pub const FALLOCATE: &OptionDef = entry("fallocate");
    pub const FDATASYNC: &OptionDef = entry("fdatasync");
    pub const FLOW: &OptionDef = entry("flow");
    pub const SERIALIZE_OVERLAP: &OptionDef = entry("serialize_overlap");
    pub const FLOW_ID: &OptionDef = entry("flow_id");
    pub const FLOW_SLEEP: &OptionDef = entry("flow_sleep");
    pub const FILE_SERVICE_TYPE: &OptionDef = entry("file_service_type");
    pub const FILENAME: &OptionDef = entry("filename");
    pub const FILENAME_FORMAT: &OptionDef = entry("filename_format");
    pub const FILESIZE: &OptionDef = entry("filesize");
    pub const FIXEDBUFS: &OptionDef = entry("fixedbufs");
    pub const FSYNC: &OptionDef = entry("fsync");
    pub const FSYNC_ON_CLOSE: &OptionDef = entry("fsync_on_close");
    pub const GROUP_REPORTING: &OptionDef = entry("group_reporting");
    pub const GTOD_REDUCE: &OptionDef = entry("gtod_reduce");
    pub const HIPRI: &OptionDef = entry("hipri");
    pub const IGNORE_ERROR: &OptionDef = entry("ignore_error");
    pub const INVALIDATE: &OptionDef = entry("invalidate");
    pub const IO_SIZE: &OptionDef = entry("io_size");
    pub const IODEPTH: &OptionDef = entry("iodepth");
    pub const IO_SUBMIT_MODE: &OptionDef = entry("io_submit_mode");
    pub const IODEPTH_BATCH_COMPLETE_MAX: &OptionDef = entry("iodepth_batch_complete_max");
    pub const IODEPTH_BATCH_COMPLETE_MIN: &OptionDef = entry("iodepth_batch_complete_min");
    pub const IODEPTH_BATCH_SUBMIT: &OptionDef = entry("iodepth_batch_submit");
    pub const IODEPTH_LOW: &OptionDef = entry("iodepth_low");
    pub const IOENGINE: &OptionDef = entry("ioengine");
    pub const KB_BASE: &OptionDef = entry("kb_base");
    pub const LAT_PERCENTILES: &OptionDef = entry("lat_percentiles");
    pub const LATENCY_PERCENTILE: &OptionDef = entry("latency_percentile");
    pub const LATENCY_RUN: &OptionDef = entry("latency_run");
    pub const LATENCY_TARGET: &OptionDef = entry("latency_target");
    pub const LATENCY_WINDOW: &OptionDef = entry("latency_window");
    pub const LOG_AVG_MSEC: &OptionDef = entry("log_avg_msec");
    pub const LOG_HIST_MSEC: &OptionDef = entry("log_hist_msec");
    pub const LOG_WINDOW_VALUE: &OptionDef = entry("log_window_value");
    pub const LOG_MAX_VALUE: &OptionDef = entry("log_max_value");
    pub const LOG_PRIO: &OptionDef = entry("log_prio");
    pub const LOG_ISSUE_TIME: &OptionDef = entry("log_issue_time");
    pub const LOG_OFFSET: &OptionDef = entry("log_offset");
    pub const LOG_STORE_COMPRESSED: &OptionDef = entry("log_store_compressed");
    pub const LOOPS: &OptionDef = entry("loops");
    pub const MAX_LATENCY: &OptionDef = entry("max_latency");
    pub const NEW_GROUP: &OptionDef = entry("new_group");
    pub const NICE: &OptionDef = entry("nice");
    pub const NORANDOMMAP: &OptionDef = entry("norandommap");
    pub const NRFILES: &OptionDef = entry("nrfiles");
    pub const NUMBER_IOS: &OptionDef = entry("number_ios");
    pub const NUMJOBS: &OptionDef = entry("numjobs");
    pub const OFFSET: &OptionDef = entry("offset");
    pub const OFFSET_INCREMENT: &OptionDef = entry("offset_increment");
    pub const OPENFILES: &OptionDef = entry("openfiles");
    pub const OVERWRITE: &OptionDef = entry("overwrite");
    pub const PER_JOB_LOGS: &OptionDef = entry("per_job_logs");
    pub const PERCENTAGE_RANDOM: &OptionDef = entry("percentage_random");
    pub const PERCENTILE_LIST: &OptionDef = entry("percentile_list");
    pub const PRE_READ: &OptionDef = entry("pre_read");
    pub const PRIO: &OptionDef = entry("prio");
    pub const PRIOCLASS: &OptionDef = entry("prioclass");
    pub const RAMP_TIME: &OptionDef = entry("ramp_time");
    pub const RANDOM_DISTRIBUTION: &OptionDef = entry("random_distribution");
    pub const RANDOM_GENERATOR: &OptionDef = entry("random_generator");
    pub const RANDREPEAT: &OptionDef = entry("randrepeat");
    pub const RANDSEED: &OptionDef = entry("randseed");
    pub const RANDOM_SEQUENCE_STRIDE: &OptionDef = entry("random_sequence_stride");
    pub const SPRANDOM: &OptionDef = entry("sprandom");
    pub const SPR_OP: &OptionDef = entry("spr_op");
    pub const SPR_NUM_REGIONS: &OptionDef = entry("spr_num_regions");
    pub const SPR_CS: &OptionDef = entry("spr_cs");
    pub const RATE: &OptionDef = entry("rate");
    pub const RATE_CYCLE: &OptionDef = entry("rate_cycle");
    pub const RATE_IOPS: &OptionDef = entry("rate_iops");
    pub const RATE_IOPS_MIN: &OptionDef = entry("rate_iops_min");
    pub const RATE_MIN: &OptionDef = entry("rate_min");
    pub const RATE_PROCESS: &OptionDef = entry("rate_process");
    pub const REFILL_BUFFERS: &OptionDef = entry("refill_buffers");
    pub const REGISTERFILES: &OptionDef = entry("registerfiles");
    pub const RUNTIME: &OptionDef = entry("runtime");
    pub const RW: &OptionDef = entry("rw");
    pub const RW_SEQUENCER: &OptionDef = entry("rw_sequencer");
    pub const RWMIXREAD: &OptionDef = entry("rwmixread");
    pub const RWMIXWRITE: &OptionDef = entry("rwmixwrite");
    pub const SCRAMBLE_BUFFERS: &OptionDef = entry("scramble_buffers");
    pub const SIGNIFICANT_FIGURES: &OptionDef = entry("significant_figures");
    pub const SIZE: &OptionDef = entry("size");
    pub const SLAT_PERCENTILES: &OptionDef = entry("slat_percentiles");
    pub const SQTHREAD_POLL: &OptionDef = entry("sqthread_poll");
    pub const STARTDELAY: &OptionDef = entry("startdelay");
    pub const STAT_TYPE: &OptionDef = entry("stat_type");
    pub const STATS: &OptionDef = entry("stats");
    pub const STEADYSTATE: &OptionDef = entry("steadystate");
    pub const STEADYSTATE_DURATION: &OptionDef = entry("steadystate_duration");
    pub const STEADYSTATE_RAMP_TIME: &OptionDef = entry("steadystate_ramp_time");
    pub const STONEWALL: &OptionDef = entry("stonewall");
    pub const SYNC: &OptionDef = entry("sync");
    pub const THINKTIME: &OptionDef = entry("thinktime");
    pub const THINKTIME_BLOCKS: &OptionDef = entry("thinktime_blocks");
    pub const THINKTIME_BLOCKS_TYPE: &OptionDef = entry("thinktime_blocks_type");
    pub const THINKTIME_SPIN: &OptionDef = entry("thinktime_spin");
    pub const THREAD: &OptionDef = entry("thread");
    pub const TIME_BASED: &OptionDef = entry("time_based");
    pub const UNIFIED_RW_REPORTING: &OptionDef = entry("unified_rw_reporting");
    pub const UNLINK: &OptionDef = entry("unlink");
    pub const UNLINK_EACH_LOOP: &OptionDef = entry("unlink_each_loop");
    pub const IOSCHEDULER: &OptionDef = entry("ioscheduler");
    pub const LOCKFILE: &OptionDef = entry("lockfile");
    pub const EXEC_PRERUN: &OptionDef = entry("exec_prerun");
    pub const EXEC_POSTRUN: &OptionDef = entry("exec_postrun");
    pub const TRIM_BACKLOG: &OptionDef = entry("trim_backlog");
    pub const TRIM_BACKLOG_BATCH: &OptionDef = entry("trim_backlog_batch");
    pub const TRIM_PERCENTAGE: &OptionDef = entry("trim_percentage");
    pub const TRIM_VERIFY_ZERO: &OptionDef = entry("trim_verify_zero");
    pub const VERIFY: &OptionDef = entry("verify");
    pub const VERIFY_BACKLOG: &OptionDef = entry("verify_backlog");
    pub const VERIFY_BACKLOG_BATCH: &OptionDef = entry("verify_backlog_batch");
    pub const VERIFY_HEADER_SEED: &OptionDef = entry("verify_header_seed");
    pub const VERIFY_WRITE_SEQUENCE: &OptionDef = entry("verify_write_sequence");
    pub const VERIFY_DUMP: &OptionDef = entry("verify_dump");
    pub const VERIFY_FATAL: &OptionDef = entry("verify_fatal");
    pub const VERIFY_INTERVAL: &OptionDef = entry("verify_interval");
    pub const VERIFY_OFFSET: &OptionDef = entry("verify_offset");
    pub const VERIFY_ONLY: &OptionDef = entry("verify_only");
    pub const VERIFY_PATTERN: &OptionDef = entry("verify_pattern");
    pub const VERIFY_PATTERN_INTERVAL: &OptionDef = entry("verify_pattern_interval");
    pub const VERIFY_STATE_LOAD: &OptionDef = entry("verify_state_load");
    pub const VERIFY_STATE_SAVE: &OptionDef = entry("verify_state_save");
    pub const WAIT_FOR: &OptionDef = entry("wait_for");
    pub const WRITE_BW_LOG: &OptionDef = entry("write_bw_log");
    pub const WRITE_IOLOG: &OptionDef = entry("write_iolog");
    pub const READ_IOLOG: &OptionDef = entry("read_iolog");
    pub const MERGE_BLKTRACE_FILE: &OptionDef = entry("merge_blktrace_file");
    pub const MERGE_BLKTRACE_ITERS: &OptionDef = entry("merge_blktrace_iters");
    pub const MERGE_BLKTRACE_SCALARS: &OptionDef = entry("merge_blktrace_scalars");
    pub const REPLAY_ALIGN: &OptionDef = entry("replay_align");
    pub const REPLAY_NO_STALL: &OptionDef = entry("replay_no_stall");
    pub const REPLAY_REDIRECT: &OptionDef = entry("replay_redirect");
    pub const REPLAY_SCALE: &OptionDef = entry("replay_scale");
    pub const REPLAY_SKIP: &OptionDef = entry("replay_skip");
    pub const REPLAY_TIME_SCALE: &OptionDef = entry("replay_time_scale");
    pub const WRITE_HIST_LOG: &OptionDef = entry("write_hist_log");
    pub const WRITE_IOPS_LOG: &OptionDef = entry("write_iops_log");
    pub const WRITE_LAT_LOG: &OptionDef = entry("write_lat_log");
    pub const ZERO_BUFFERS: &OptionDef = entry("zero_buffers");
    pub const ZONEMODE: &OptionDef = entry("zonemode");
    pub const ZONERANGE: &OptionDef = entry("zonerange");
    pub const ZONESIZE: &OptionDef = entry("zonesize");
    pub const ZONESKIP: &OptionDef = entry("zoneskip");
}

/// The row named `name` (not an alias), for the `opt` handles; evaluated at compile time.
const fn entry(name: &str) -> &'static OptionDef {
    let mut row = 0;
    while row < OPTIONS.len() {
        if same_bytes(OPTIONS[row].name.as_bytes(), name.as_bytes()) {
            return &OPTIONS[row];
        }
        row += 1;
    }
    panic!("an opt:: handle names an option missing from OPTIONS")
}

const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The entry for `name` or one of its aliases.
pub fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|def| def.name == name || def.aliases.contains(&name))
}

/// The known name closest to an unknown one, if it is close enough to be a typo:
/// a few edits for a long name, one for a short one (a swap of two letters is one
/// edit, and `-` stands for `_`), and only one edit when even the first letter
/// differs. Of several, the one that shares the longest start wins.
pub fn suggest(unknown: &str) -> Option<&'static str> {
    let unknown = unknown.replace('-', "_");
    let limit = ((unknown.len() + 1) / 4).max(1);
    OPTIONS
        .iter()
        .flat_map(|def| std::iter::once(&def.name).chain(def.aliases))
        .map(|&known| (edit_distance(&unknown, known), known))
        .filter(|&(distance, known)| {
            let same_start = unknown.as_bytes().first() == known.as_bytes().first();
            distance <= if same_start { limit } else { 1 }
        })
        .min_by_key(|&(distance, known)| (distance, usize::MAX - common_start(&unknown, known)))
        .map(|(_, known)| known)
}

/// How many leading bytes two names share.
fn common_start(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// Edits between two names (over bytes: option names are ASCII): insertions,
/// deletions, substitutions and swaps of neighbours (optimal string alignment).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut rows = vec![(0..=b.len()).collect::<Vec<usize>>()];
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let above = &rows[i - 1];
            let substitution = above[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            row[j] = substitution.min(above[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(rows[i - 2][j - 2] + 1);
            }
        }
        rows.push(row);
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_handles_are_the_table_rows_of_their_names() {
        for (handle, name) in [
            (opt::BS, "bs"),
            (opt::RW, "rw"),
            (opt::IODEPTH_LOW, "iodepth_low"),
            (opt::VERIFY_PATTERN, "verify_pattern"),
        ] {
            let row = find(name).expect("the name is in the table");
            assert_eq!(
                handle, row,
                "expected opt handle for {name} to be its table row, saw the row of {}",
                handle.name
            );
        }
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = OPTIONS
            .iter()
            .flat_map(|def| std::iter::once(def.name).chain(def.aliases.iter().copied()))
            .collect();
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count);
    }

    #[test]
    fn aliases_find_their_option() {
        assert_eq!(find("readwrite").map(|d| d.name), Some("rw"));
        assert_eq!(find("io_limit").map(|d| d.name), Some("io_size"));
        assert_eq!(find("ba").map(|d| d.name), Some("blockalign"));
        assert!(find("threads").is_none());
    }

    #[test]
    fn did_you_mean_finds_close_names_only() {
        assert_eq!(suggest("threads"), Some("thread"));
        assert_eq!(suggest("iodepht"), Some("iodepth"));
        assert_eq!(suggest("ioengin"), Some("ioengine"));
        assert_eq!(suggest("blocksiz"), Some("blocksize"));
        assert_eq!(suggest("write-bw-log"), Some("write_bw_log"));
        assert_eq!(suggest("completely_different"), None);
        for far in ["alloc-size", "eta-interval", "eta-newline", "zzzqqq", "x"] {
            assert_eq!(suggest(far), None, "expected no suggestion for {far}");
        }
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    /// Every option name and alias in fio 3.33's documentation, except the options of its
    /// built-in profiles (only valid with `profile=`), plus the aliases fio's `--cmdhelp`
    /// shows that the documentation does not.
    #[rustfmt::skip]
    const FIO_DOCUMENTED: &[&str] = &[
        "bwavgtime", "clat_percentiles", "iopsavgtime", "lat_percentiles", "log_alternate_epoch",
        "log_alternate_epoch_clock_id", "log_avg_msec", "log_compression", "log_compression_cpus",
        "log_entries", "log_hist_coarseness", "log_hist_msec", "log_max_value", "log_offset",
        "log_store_compressed", "log_unix_epoch", "per_job_logs", "significant_figures",
        "slat_percentiles", "write_bw_log", "write_hist_log", "write_iops_log", "write_lat_log",
        "fileoffset", "nr_files", "ratecycle", "ratemin",
        "allow_file_create", "allow_mounted_write", "allrandrepeat", "arguments", "atomic",
        "ba", "bindname", "block_error_percentiles", "blockalign", "blocksize",
        "blocksize_range", "blocksize_unaligned", "bs", "bs_is_seq_rand", "bs_unaligned",
        "bsrange", "bssplit", "buffer_compress_chunk", "buffer_compress_percentage",
        "buffer_pattern", "buffered", "busy_poll", "busy_wait_polling", "cgroup",
        "cgroup_nodelete", "cgroup_weight", "chunk_size", "clientname", "clocksource",
        "clustername", "cmd_type", "cmdprio", "cmdprio_bssplit", "cmdprio_class",
        "cmdprio_percentage", "conf", "cont", "continue_on_error", "cpuchunks", "cpuload",
        "cpumask", "cpumode", "cpus_allowed", "cpus_allowed_policy", "create_fsync",
        "create_on_open", "create_only", "create_serialize", "cuda_io", "dedupe_global",
        "dedupe_mode", "dedupe_percentage", "dedupe_working_set_percentage", "description",
        "direct", "direct_write_to_pmem", "directory", "disable_bw", "disable_bw_measurement",
        "disable_clat", "disable_lat", "disable_slat", "disk_util", "do_verify", "donorname",
        "end_fsync", "error_dump", "exec_postrun", "exec_prerun", "exit_on_io_done",
        "exit_what", "exitall", "exitall_on_error", "experimental_verify", "fadvise_hint",
        "fallocate", "fdatasync", "file_append", "file_service_type", "filename",
        "filename_format", "filesize", "fill_device", "fill_fs", "fixedbufs", "flow", "flow_id",
        "flow_sleep", "force_async", "fsync", "fsync_on_close", "gid", "gpu_dev_ids",
        "grace_time", "group_reporting", "gtod_cpu", "gtod_reduce", "hdfsdirectory", "hipri",
        "hipri_percentage", "hostname", "http_host", "http_mode", "http_pass", "http_s3_key",
        "http_s3_keyid", "http_s3_region", "http_s3_sse_customer_algorithm",
        "http_s3_sse_customer_key", "http_s3_storage_class", "http_swift_auth_token",
        "http_user", "http_verbose", "https", "hugepage-size", "ignore_error",
        "ignore_zone_limits", "inplace", "interface", "invalidate", "io_limit", "io_size",
        "io_submit_mode", "iodepth", "iodepth_batch", "iodepth_batch_complete",
        "iodepth_batch_complete_max", "iodepth_batch_complete_min", "iodepth_batch_submit",
        "iodepth_low", "ioengine", "iomem", "iomem_align", "ioscheduler", "job_max_open_zones",
        "kb_base", "latency_percentile", "latency_run", "latency_target", "latency_window",
        "listen", "lockfile", "lockmem", "loops", "max_latency", "max_open_zones", "mem",
        "mem_align", "merge_blktrace_file", "merge_blktrace_iters", "merge_blktrace_scalars",
        "mss", "name", "namenode", "new_group", "nfs_url", "nice", "nodelay", "nonvectored",
        "norandommap", "nowait", "nrfiles", "numa_cpu_nodes", "numa_mem_policy", "number_ios",
        "numjobs", "object_class", "offset", "offset_align", "offset_increment", "opendir",
        "openfiles", "overwrite", "percentage_random", "percentile_list", "pingpong", "pool",
        "port", "pre_read", "prio", "prioclass", "profile", "program", "proto", "protocol",
        "ramp_time", "random_distribution", "random_generator", "randrepeat", "randseed",
        "rate", "rate_cycle", "rate_ignore_thinktime", "rate_iops", "rate_iops_min", "rate_min",
        "rate_process", "rbdname", "read_beyond_wp", "read_iolog", "read_iolog_chunked",
        "readfua", "readwrite", "refill_buffers", "registerfiles", "replay_align",
        "replay_no_stall", "replay_redirect", "replay_scale", "replay_skip",
        "replay_time_scale", "runtime", "rw", "rw_sequencer", "rwmixread", "rwmixwrite",
        "scramble_buffers", "serialize_overlap", "serverip", "sg_write_mode", "size",
        "skip_bad", "softrandommap", "sqthread_poll", "sqthread_poll_cpu", "ss", "ss_dur",
        "ss_ramp", "startdelay", "stat_type", "stats", "std_redirect", "steadystate",
        "steadystate_duration", "steadystate_ramp_time", "stonewall", "stream_id", "sync",
        "sync_file_range", "thinktime", "thinktime_blocks", "thinktime_blocks_type",
        "thinktime_iotime", "thinktime_spin", "thread", "time_based", "timeout",
        "touch_objects", "trim_backlog", "trim_backlog_batch", "trim_percentage",
        "trim_verify_zero", "ttl", "uid", "unified_rw_reporting", "unique_filename",
        "unit_base", "unlink", "unlink_each_loop", "uri", "userspace_reap", "verb", "verify",
        "verify_async", "verify_async_cpus", "verify_backlog", "verify_backlog_batch",
        "verify_dump", "verify_fatal", "verify_interval", "verify_offset", "verify_only",
        "verify_pattern", "verify_state_load", "verify_state_save", "wait_for",
        "wait_for_previous", "window_size", "write_barrier", "write_hint", "write_iolog",
        "writefua", "xnvme_admin", "xnvme_async", "xnvme_dev_nsid", "xnvme_iovec", "xnvme_sync",
        "zero_buffers", "zone_reset_frequency", "zone_reset_threshold", "zonecapacity",
        "zonemode", "zonerange", "zonesize", "zoneskip",
    ];

    /// Every job option upstream fio documents (its HOWTO.rst; the version is on the first
    /// line), as `bench/fio-testsuite-options` extracts them.
    const UPSTREAM_DOCUMENTED: &str = include_str!("fio-options.txt");

    fn without_entry<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        names.filter(|name| find(name).is_none()).collect()
    }

    #[test]
    fn every_option_fio_documents_has_an_entry() {
        let missing = without_entry(FIO_DOCUMENTED.iter().copied());
        assert!(
            missing.is_empty(),
            "expected an entry for every option fio 3.33 documents; none for {missing:?}"
        );
        let upstream = UPSTREAM_DOCUMENTED.lines().filter(|l| !l.starts_with('#'));
        let missing = without_entry(upstream);
        assert!(
            missing.is_empty(),
            "expected an entry for every option upstream fio documents \
             ({}); none for {missing:?}",
            UPSTREAM_DOCUMENTED.lines().next().unwrap_or_default()
        );
    }

    #[test]
    fn rejected_values_are_not_also_accepted() {
        for (option, values, _, _) in UNSUPPORTED_VALUES {
            let Kind::Choice(accepted) = option.kind else {
                panic!("{} is not a choice option", option.name);
            };
            assert!(
                values.iter().all(|v| !accepted.contains(v)),
                "{}",
                option.name
            );
        }
        assert!(unsupported_value(opt::IOENGINE, "splice").is_some());
        assert!(unsupported_value(opt::IOENGINE, "psync").is_none());
    }

    #[test]
    fn examples_are_valid_choices() {
        for def in OPTIONS {
            if let Kind::Choice(values) = def.kind {
                let word = def.example.split(':').next().unwrap_or_default();
                assert!(
                    values.contains(&word),
                    "{}: example {}",
                    def.name,
                    def.example
                );
            }
        }
    }

    /// The README's option status table counts the table's rows.
    #[test]
    fn the_readme_counts_the_options_of_each_status() {
        let readme = include_str!("../../README.md");
        let stated = |status: &str| -> usize {
            let row = format!("| {status} | ");
            let line = readme
                .lines()
                .find(|l| l.starts_with(&row))
                .unwrap_or_else(|| panic!("README has no option status row {row:?}"));
            line[row.len()..]
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("README's row {line:?} has no count"))
        };
        let count =
            |wanted: fn(&Status) -> bool| OPTIONS.iter().filter(|d| wanted(&d.status)).count();
        let counted = [
            ("supported", count(|s| matches!(s, Status::Supported))),
            ("ignored", count(|s| matches!(s, Status::Ignored(_)))),
            (
                "unsupported",
                count(|s| matches!(s, Status::Unsupported { .. })),
            ),
        ];
        for (status, rows) in counted {
            assert_eq!(
                stated(status),
                rows,
                "README's option status table says {} {status} options; the table has {rows}",
                stated(status)
            );
        }
    }
}
