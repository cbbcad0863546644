//! The option table: one entry per supported fio option. It decides which names exist
//! (with aliases), which take a bare `--flag`, what an error suggests, and each default.

use crate::units::TimeUnit;

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
    /// `read,write` sizes with carry-over (`4k` = both, `,8k` = writes only).
    SizePerDirection,
    CountPerDirection,
    /// `read,write` size ranges (`1k-4k,8k-16k`).
    RangePerDirection,
    /// `read,write` block size splits (`4k/50:64k/50`).
    SplitPerDirection,
    /// `:`-separated numbers.
    FloatList,
    /// One of the listed words; some options take a `:parameter` after it.
    Choice(&'static [&'static str]),
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
    }
}

const SECONDS: Kind = Kind::Time(TimeUnit::Seconds);
const MICROS: Kind = Kind::Time(TimeUnit::Micros);

pub const RW_PATTERNS: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
];
pub const ENGINES: &[&str] = &[
    "sync", "psync", "pvsync", "pvsync2", "libaio", "io_uring", "mmap", "null",
];
pub const DISTRIBUTIONS: &[&str] = &["random", "zipf", "pareto", "normal", "zoned"];
pub const RATE_PROCESSES: &[&str] = &["linear", "poisson"];
pub const SYNC_MODES: &[&str] = &["0", "none", "1", "sync", "dsync"];
pub const KB_BASES: &[&str] = &["1024", "1000"];

#[rustfmt::skip]
pub static OPTIONS: &[OptionDef] = &[
    opt("name", &[], Kind::Text, None, "seqread", "Job name; on the command line it starts a new job"),
    opt("filename", &[], Kind::Text, None, "/dev/nvme0n1", "Target file(s) or device(s), ':'-separated"),
    opt("directory", &[], Kind::Text, None, "/mnt/test", "Directory for generated file names"),
    opt("nrfiles", &[], Kind::Count, Some("1"), "4", "Files per job when no filename is given"),
    opt("filesize", &[], Kind::Size, None, "1g", "Size of each file (default: size / nrfiles)"),
    opt("size", &[], Kind::SizeOrPercent, None, "1g", "Total bytes of the job's region"),
    opt("offset", &[], Kind::SizeOrPercent, Some("0"), "1g", "Start of the region in each file"),
    opt("offset_increment", &[], Kind::SizeOrPercent, Some("0"), "1g", "Added to offset for each numjobs clone"),
    opt("io_size", &["io_limit"], Kind::SizeOrPercent, None, "10g", "Bytes to transfer (default: size)"),
    opt("number_ios", &[], Kind::Count, None, "10000", "Stop after this many I/Os"),
    opt("loops", &[], Kind::Count, Some("1"), "3", "Repeat the workload this many times"),
    opt("rw", &["readwrite"], Kind::Choice(RW_PATTERNS), Some("read"), "randread", "I/O pattern, optionally with :N"),
    opt("rwmixread", &[], Kind::Percent, Some("50"), "70", "Percentage of reads in mixed workloads"),
    opt("rwmixwrite", &[], Kind::Percent, Some("50"), "30", "Percentage of writes in mixed workloads"),
    opt("bs", &["blocksize"], Kind::SizePerDirection, Some("4k"), "4k", "Block size, read,write"),
    opt("bsrange", &["blocksize_range"], Kind::RangePerDirection, None, "4k-64k", "Block size range, read,write"),
    opt("bssplit", &[], Kind::SplitPerDirection, None, "4k/50:64k/50", "Block size mix, read,write"),
    opt("blockalign", &["ba"], Kind::SizePerDirection, None, "4k", "Offset alignment (default: minimum block size)"),
    opt("norandommap", &[], Kind::Bool, Some("0"), "1", "Random offsets may repeat before all blocks are done"),
    opt("randrepeat", &[], Kind::Bool, Some("1"), "0", "Same random sequence on every run"),
    opt("randseed", &[], Kind::Count, Some("0x89"), "42", "Seed of the random generators"),
    opt("random_distribution", &[], Kind::Choice(DISTRIBUTIONS), Some("random"), "zipf:1.2", "Random offset distribution, with :parameter"),
    opt("numjobs", &[], Kind::Count, Some("1"), "4", "Clones of this job"),
    opt("thread", &[], Kind::Bool, Some("0"), "1", "Run clones as threads rather than processes"),
    opt("group_reporting", &[], Kind::Bool, Some("0"), "1", "Report a group's clones as one"),
    opt("stonewall", &["wait_for_previous"], Kind::Bool, Some("0"), "1", "Wait for earlier jobs before starting"),
    opt("new_group", &[], Kind::Bool, Some("0"), "1", "Start a new reporting group"),
    opt("startdelay", &[], SECONDS, Some("0"), "5s", "Delay before the job starts (default unit s)"),
    opt("runtime", &["timeout"], SECONDS, None, "60s", "Stop after this long (default unit s)"),
    opt("time_based", &[], Kind::Bool, Some("0"), "1", "Run for the whole runtime, looping the workload"),
    opt("ramp_time", &[], SECONDS, Some("0"), "10s", "Run this long before measuring (default unit s)"),
    opt("rate", &[], Kind::SizePerDirection, Some("0"), "100m", "Bandwidth cap in bytes/s, read,write"),
    opt("rate_iops", &[], Kind::CountPerDirection, Some("0"), "1000", "IOPS cap, read,write"),
    opt("rate_process", &[], Kind::Choice(RATE_PROCESSES), Some("linear"), "poisson", "How rated I/Os are spaced"),
    opt("thinktime", &[], MICROS, Some("0"), "100us", "Pause between I/Os (default unit us)"),
    opt("thinktime_blocks", &[], Kind::Count, Some("1"), "8", "I/Os between pauses"),
    opt("direct", &[], Kind::Bool, Some("0"), "1", "Use O_DIRECT (bypass the page cache)"),
    opt("buffered", &[], Kind::Bool, Some("1"), "0", "Use the page cache; buffered=0 means direct=1"),
    opt("sync", &[], Kind::Choice(SYNC_MODES), Some("none"), "dsync", "Open with O_SYNC (1, sync) or O_DSYNC (dsync)"),
    opt("fsync", &[], Kind::Count, Some("0"), "32", "fsync after this many writes"),
    opt("fdatasync", &[], Kind::Count, Some("0"), "32", "fdatasync after this many writes"),
    opt("end_fsync", &[], Kind::Bool, Some("0"), "1", "fsync when the job ends"),
    opt("invalidate", &[], Kind::Bool, Some("1"), "0", "Drop the target's page cache before starting"),
    opt("overwrite", &[], Kind::Bool, Some("0"), "1", "Lay out files fully before writing"),
    opt("unlink", &[], Kind::Bool, Some("0"), "1", "Delete generated files when done"),
    opt("ioengine", &[], Kind::Choice(ENGINES), Some("psync"), "io_uring", "How I/O is issued"),
    opt("iodepth", &[], Kind::Count, Some("1"), "32", "I/Os kept in flight (asynchronous engines)"),
    opt("iodepth_batch_submit", &["iodepth_batch"], Kind::Count, Some("1"), "8", "I/Os submitted at once"),
    opt("iodepth_batch_complete_min", &["iodepth_batch_complete"], Kind::Count, Some("1"), "8", "Least completions to wait for"),
    opt("iodepth_batch_complete_max", &[], Kind::Count, None, "16", "Most completions reaped at once (default: iodepth)"),
    opt("hipri", &[], Kind::Bool, Some("0"), "1", "Polled completions (io_uring, pvsync2)"),
    opt("fixedbufs", &[], Kind::Bool, Some("0"), "1", "Register buffers with io_uring"),
    opt("registerfiles", &[], Kind::Bool, Some("0"), "1", "Register files with io_uring"),
    opt("sqthread_poll", &[], Kind::Bool, Some("0"), "1", "Kernel thread polls the io_uring submission queue"),
    opt("zero_buffers", &[], Kind::Bool, Some("0"), "1", "Fill write buffers with zeros"),
    opt("refill_buffers", &[], Kind::Bool, Some("0"), "1", "New random data for every write"),
    opt("scramble_buffers", &[], Kind::Bool, Some("1"), "0", "Lightly change buffers between writes"),
    opt("buffer_compress_percentage", &[], Kind::Percent, Some("0"), "50", "Share of each buffer that compresses"),
    opt("gtod_reduce", &[], Kind::Bool, Some("0"), "1", "Measure no latencies (disable_lat, _clat, _slat)"),
    opt("disable_lat", &[], Kind::Bool, Some("0"), "1", "Do not measure total latency"),
    opt("disable_clat", &[], Kind::Bool, Some("0"), "1", "Do not measure completion latency"),
    opt("disable_slat", &[], Kind::Bool, Some("0"), "1", "Do not measure submission latency"),
    opt("percentile_list", &[], Kind::FloatList, None, "50:99:99.9", "Latency percentiles to report (default: fio's list)"),
    opt("kb_base", &[], Kind::Choice(KB_BASES), Some("1024"), "1000", "1024: k = 1024 (fio's default); 1000: k = 1000, Ki = 1024"),
    // Reporting and logs.
    opt("clat_percentiles", &[], Kind::Bool, Some("1"), "0", "Report completion latency percentiles"),
    opt("lat_percentiles", &[], Kind::Bool, Some("0"), "1", "Report total latency percentiles"),
    opt("slat_percentiles", &[], Kind::Bool, Some("0"), "1", "Report submission latency percentiles"),
    opt("significant_figures", &[], Kind::Count, Some("4"), "6", "Digits of IOPS and bandwidth in the normal output (1 to 10)"),
    opt("write_bw_log", &[], Kind::Text, None, "mylog", "Bandwidth log PREFIX_bw.N.log (empty value: job name)"),
    opt("write_iops_log", &[], Kind::Text, None, "mylog", "IOPS log PREFIX_iops.N.log (empty value: job name)"),
    opt("write_lat_log", &[], Kind::Text, None, "mylog", "Latency logs PREFIX_{slat,clat,lat}.N.log (empty value: job name)"),
    opt("write_hist_log", &[], Kind::Text, None, "mylog", "Latency histogram log PREFIX_clat_hist.N.log, needs log_hist_msec"),
    opt("log_avg_msec", &[], Kind::Count, Some("0"), "500", "Average log entries over this many ms (0: one entry per I/O)"),
    opt("log_hist_msec", &[], Kind::Count, Some("0"), "1000", "Histogram log window in ms (0: no histogram entries)"),
    opt("log_max_value", &[], Kind::Bool, Some("0"), "1", "Windowed latency entries hold the maximum, not the mean"),
    opt("log_offset", &[], Kind::Bool, Some("0"), "1", "Log entries carry the I/O's offset"),
    opt("per_job_logs", &[], Kind::Bool, Some("1"), "0", "Number log files per worker; 0: one file per job"),
];

/// The entry for `name` or one of its aliases.
pub fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|def| def.name == name || def.aliases.contains(&name))
}

/// The known name closest to an unknown one, if it is close enough to be a typo.
pub fn suggest(unknown: &str) -> Option<&'static str> {
    let limit = (unknown.len() / 3).max(1);
    OPTIONS
        .iter()
        .flat_map(|def| std::iter::once(&def.name).chain(def.aliases))
        .map(|&known| (edit_distance(unknown, known), known))
        .filter(|&(distance, _)| distance <= limit)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, known)| known)
}

/// Levenshtein distance over bytes (option names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.as_bytes().iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(suggest("completely_different"), None);
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
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
}
