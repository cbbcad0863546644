//! The option table: one entry per fio option. It decides which names exist (with
//! aliases), which take a bare `--flag`, what an error suggests, each default, and whether
//! iolens supports, ignores or rejects the option.

use super::choice::Choice;
use super::spec::*;
use crate::units::TimeUnit;

/// How an option's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
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
pub(crate) enum Status {
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
pub(crate) struct OptionDef {
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
    pub(crate) fn hint(&self) -> String {
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
pub(crate) const BARE_TEXT_OPTIONS: &[&OptionDef] = &[
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
pub(crate) static UNSUPPORTED_VALUES: &[(&OptionDef, &[&str], &str, &str)] = &[
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
pub(crate) fn unsupported_value(
    option: &OptionDef,
    value: &str,
) -> Option<(&'static str, &'static str)> {
    if option.name == opt::IOENGINE.name && value.contains('/') {
        return Some(EXTERNAL_ENGINE);
    }
    UNSUPPORTED_VALUES
        .iter()
        .find(|(def, values, _, _)| def.name == option.name && values.contains(&value))
        .map(|&(_, _, reason, instead)| (reason, instead))
}

/// Declares the table: each row once, as `HANDLE = row`. It generates `OPTIONS` (the rows
/// in this order, which `--cmdhelp` and `show-jobs` keep) and `opt::HANDLE`, a reference to
/// that row for the code that reads options, so a row and its handle cannot drift apart.
macro_rules! option_table {
    ($($handle:ident = $row:expr,)*) => {
        /// Every option fio documents, in `--cmdhelp` order.
        pub(crate) static OPTIONS: &[OptionDef] = &[$($row),*];

        /// Handles to table rows for the code that reads options (`opt::BS` is the `bs`
        /// row): the option's name in capitals, `-` as `_`.
        #[allow(dead_code, reason = "a handle for every row of fio's list, read by iolens or not")]
        pub(crate) mod opt {
            use super::{OptionDef, OPTIONS};

            /// The position of each row, so each handle finds its row without a search (a
            /// variant per handle, spelled as the handle is).
            #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
            enum Row {
                $($handle),*
            }

            $(pub(crate) const $handle: &OptionDef = &OPTIONS[Row::$handle as usize];)*

            /// Every handle with its name, for the test that names follow the rows.
            #[cfg(test)]
            pub(in crate::job::options) const ALL: &[(&str, &OptionDef)] =
                &[$((stringify!($handle), $handle)),*];
        }
    };
}

mod table;
pub(crate) use table::{opt, OPTIONS};

/// The entry for `name` or one of its aliases.
pub(crate) fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|def| def.name == name || def.aliases.contains(&name))
}

/// The known name closest to an unknown one, if it is close enough to be a typo:
/// a few edits for a long name, one for a short one (a swap of two letters is one
/// edit, and `-` stands for `_`), and only one edit when even the first letter
/// differs. Of several, the one that shares the longest start wins.
pub(crate) fn suggest(unknown: &str) -> Option<&'static str> {
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
    fn every_row_has_a_handle_named_after_it() {
        assert_eq!(opt::ALL.len(), OPTIONS.len());
        for ((handle_name, handle), row) in opt::ALL.iter().zip(OPTIONS) {
            assert_eq!(
                *handle, row,
                "expected opt::{handle_name} to be the row of {}, saw the row of {}",
                row.name, handle.name
            );
            assert_eq!(*handle_name, row.name.to_uppercase().replace('-', "_"));
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

    /// The README's option status table counts the table's rows: each status row gives
    /// the number of options with that status.
    #[test]
    fn the_readme_counts_the_options_of_each_status() {
        let readme = include_str!("../../docs/fio-compatibility.md");
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
            let start = format!("| {status} | ");
            let line = readme
                .lines()
                .find(|l| l.starts_with(&start))
                .unwrap_or_else(|| {
                    panic!("docs/fio-compatibility.md has no option status row {start:?}")
                });
            let (_, after_count) = line[start.len()..]
                .split_once(' ')
                .unwrap_or_else(|| panic!("docs/fio-compatibility.md's row {line:?} has no count"));
            let expected = format!("{start}{rows} {after_count}");
            assert_eq!(
                line, expected,
                "docs/fio-compatibility.md's option status table is out of date; replace its line\n{line}\nwith\n{expected}"
            );
        }
    }
}
