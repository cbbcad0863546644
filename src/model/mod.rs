//! `RunReport`: the one versioned serde model of a run, the data the runner,
//! stats, observe, diagnose, store and the renderers share. Every output
//! format (text, iolens JSON, fio JSON) is rendered from it; nothing else is
//! measured at render time. Units are in the field names: `_ns`, `_bytes`,
//! `_pct`. `metrics`: the headline metrics tracked across runs.

pub(crate) mod cgroup;
pub(crate) mod cluster;
pub(crate) mod ledger;
pub(crate) mod metrics;
pub(crate) mod schedule;
pub(crate) mod stack;

pub(crate) use cgroup::{
    CgroupDir, CgroupIoCounters, CgroupIoSeries, CgroupLimits, CgroupPlace, CgroupRecord,
    CgroupSample, CgroupVersion, IoLimit, WorkerCgroup,
};
pub(crate) use cluster::{ClusterReport, ObservedHost, RankGroup, RankRun};
pub(crate) use ledger::{JobLedger, LayerTraffic, ProcessIo, TaskIo};
pub(crate) use schedule::{ScheduleReport, Stall};
pub(crate) use stack::{Layer, NoDevice, StackLayer, TargetStack, ZramStat};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or disappears.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// The names of the per-direction arrays' entries (`JobReport::dirs`, a
/// schedule's corrected latencies), in their order, as fio's reports write them.
pub(crate) const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct RunReport {
    pub schema_version: u32,
    pub tool_version: String,
    /// Wall-clock start of the run, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// How long the run took, from its jobs' start (files laid out) to its report:
    /// fio's `elapsed`, the same for every job. None in reports saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
    /// The arguments the run was started with (after the program name).
    pub command_line: Vec<String>,
    /// Options given before the first `--name` (fio's "global options").
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobReport>,
    /// One per reporting group (stonewall / new_group), in order.
    pub groups: Vec<GroupReport>,
    /// Block devices behind the targets, counters diffed over the run. Empty in
    /// the report of a run on several ranks, whose disks are per host
    /// (`ClusterReport::host_disks`).
    pub disks: Vec<DiskUtil>,
    /// True when the run was stopped early (signal or error); results are partial.
    pub interrupted: bool,
    /// What the system did while the run went on (the sampler's time series and the pre-run cache checks).
    #[serde(default)]
    pub observations: Observations,
    /// The machine the run measured, captured once before the first I/O.
    #[serde(default)]
    pub environment: Environment,
    /// What the diagnose rules concluded about this run: why a number may be suspect.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Why the run ended early: "signal" (SIGINT/SIGTERM); None when it ran its course.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<String>,
    /// Data verification (`verify=`), one entry per verifying worker.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify: Vec<VerifyReport>,
    /// A run on several ranks (MPI): each rank's report and every rank merged; on
    /// the first rank only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Box<ClusterReport>>,
}

/// What one worker's verify pass checked and what it found wrong.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VerifyReport {
    pub job: String,
    pub verified_blocks: u64,
    /// Reads that read the job's writes back (one per write, as fio's verify);
    /// the job's read figures include them, as fio's do.
    #[serde(default)]
    pub read_back_ios: u64,
    #[serde(default)]
    pub read_back_bytes: u64,
    /// Every bad block found; `bad_blocks` lists the first of them.
    pub bad_blocks_total: u64,
    pub bad_blocks: Vec<BadBlock>,
}

/// The fields of a block header, as expected or as found; a report's bad
/// blocks hold them as they are (`BadBlock::expected`, `BadBlock::found`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HeaderFields {
    pub offset: u64,
    pub len: u32,
    /// FNV-1a hash of the job name.
    pub job: u32,
    /// How many times the run had written this block.
    pub generation: u32,
    /// The writing worker's seed.
    pub seed: u64,
}

/// A verified block that did not hold what was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BadBlock {
    pub file: String,
    pub offset: u64,
    pub len: u64,
    /// zeroed, no_header, corrupt_header, misdirected, foreign_writer, stale, torn, corrupt
    pub fault: String,
    pub message: String,
    /// The header the block should hold (None when any writer was accepted).
    pub expected: Option<HeaderFields>,
    /// The header found there, when it was readable.
    pub found: Option<HeaderFields>,
}

/// fio's `total_err` and `first_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ToleratedErrors {
    pub total: u64,
    /// errno of the first failed I/O.
    pub first_errno: i32,
}

/// One reported job: a single worker, or all `numjobs` workers merged with
/// `group_reporting`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JobReport {
    pub name: String,
    /// The job's `description=`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub groupid: u32,
    /// Workers merged into this report (1 unless group_reporting).
    pub workers: u32,
    /// The process id of the first worker, or its thread id with `thread` (fio's `pid=`);
    /// None when it never ran, and in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// First error of the job ("write /tmp/f at offset 4096: No space left on device (os error 28)").
    pub error: Option<String>,
    /// errno of `error`, 0 when none (fio's "error" key).
    pub errno: i32,
    /// Failed I/Os of a job with `continue_on_error` (None without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerated_errors: Option<ToleratedErrors>,
    /// The resolved job options, for the record.
    pub options: Vec<(String, String)>,
    /// [read, write, trim] (`DIRECTIONS`)
    #[serde(deserialize_with = "per_direction")]
    pub dirs: [DirReport; 3],
    /// fio's `unified_rw_reporting`: both directions as one (absent when it is off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<Mixed<DirReport>>,
    pub sync: SyncReport,
    pub cpu: CpuReport,
    pub depth: DepthReport,
    /// Distribution of total latency (lat) over fio's buckets.
    pub lat_buckets: LatBuckets,
    /// Measured time of the job (ramp excluded), nanoseconds.
    pub runtime_ns: u64,
    /// Digits of IOPS and bandwidth in the normal output (fio's `significant_figures`).
    #[serde(default = "default_significant_figures")]
    pub significant_figures: u32,
    /// `steadystate`: what was judged and whether the job reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadyStateReport>,
    /// `latency_target`: the target and the queue depth the search found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTargetReport>,
    /// `rate`, `rate_iops`: how the job kept its schedule (absent without a rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleReport>,
}

impl Default for JobReport {
    /// An empty job report with fio's default significant figures (for tests and partial reports).
    fn default() -> Self {
        JobReport {
            name: String::new(),
            description: None,
            groupid: 0,
            workers: 0,
            pid: None,
            error: None,
            errno: 0,
            tolerated_errors: None,
            options: Vec::new(),
            dirs: Default::default(),
            mixed: None,
            sync: Default::default(),
            cpu: Default::default(),
            depth: Default::default(),
            lat_buckets: Default::default(),
            runtime_ns: 0,
            significant_figures: default_significant_figures(),
            steadystate: None,
            latency_target: None,
            schedule: None,
        }
    }
}

/// The steady-state check of a job: its criterion, the last window of
/// once-a-second samples (both directions together) and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SteadyStateReport {
    /// `iops`, `iops_slope`, `bw` or `bw_slope`.
    pub criterion: String,
    pub limit: f64,
    /// The limit (and `value`) are per cent of the window's mean.
    pub limit_is_percent: bool,
    pub duration_s: u64,
    pub attained: bool,
    /// What was compared with the limit: the largest deviation from the mean or
    /// the slope's size, per cent of the mean when the limit is.
    pub value: f64,
    /// Largest deviation from the mean (deviation criteria; 0 for slopes).
    pub max_deviation: f64,
    /// Least-squares slope per second (slope criteria; 0 for deviations).
    pub slope: f64,
    pub iops_samples: Vec<u64>,
    pub bw_samples_bytes_per_sec: Vec<u64>,
}

impl SteadyStateReport {
    /// The window as fio reports it: one sample a second over `duration_s`, zeros
    /// where none was taken yet; (iops, bw).
    pub(crate) fn full_window(&self) -> (Vec<u64>, Vec<u64>) {
        let window = |samples: &[u64]| {
            let mut all = samples.to_vec();
            all.resize(all.len().max(self.duration_s as usize), 0);
            all
        };
        (
            window(&self.iops_samples),
            window(&self.bw_samples_bytes_per_sec),
        )
    }
}

/// fio's mean of a steady-state window: over the whole window, in whole units.
pub(crate) fn window_mean(window: &[u64]) -> u64 {
    window.iter().sum::<u64>() / (window.len() as u64).max(1)
}

/// The outcome of a `latency_target` search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatencyTargetReport {
    pub target_ns: u64,
    pub window_ns: u64,
    pub percentile: f64,
    /// The deepest queue that met the target (the smallest over merged workers).
    pub depth: u32,
}

/// fio's default `significant_figures`, for reports saved before the field existed.
fn default_significant_figures() -> u32 {
    4
}

/// A per-direction array [read, write, trim]; reports saved before trims
/// existed hold [read, write], and their trims read as nothing done.
fn per_direction<'de, D, T>(deserializer: D) -> Result<[T; 3], D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    use serde::de::Error;
    let mut dirs = Vec::<T>::deserialize(deserializer)?;
    let given = dirs.len();
    if given == 2 {
        dirs.push(T::default());
    }
    dirs.try_into()
        .map_err(|_| D::Error::invalid_length(given, &"2 or 3 directions"))
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DirReport {
    pub io_bytes: u64,
    pub total_ios: u64,
    /// I/Os that transferred fewer bytes than asked.
    pub short_ios: u64,
    pub runtime_ns: u64,
    /// io_bytes / runtime.
    pub bw_bytes_per_sec: f64,
    pub iops: f64,
    pub slat: Option<LatSummary>,
    pub clat: Option<LatSummary>,
    pub lat: Option<LatSummary>,
    /// Per-interval bandwidth samples, bytes/s.
    pub bw_samples: SampleSummary,
    /// Per-interval IOPS samples.
    pub iops_samples: SampleSummary,
    /// fio's per-priority latencies (`cmdprio_*`): each I/O priority with samples, the job's
    /// own first; empty unless at least two priorities have samples, as in fio.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prios: Vec<PrioReport>,
}

/// The latencies of the I/Os of one priority: completion latency, or total latency
/// with `lat_percentiles` (fio keeps one of them per priority).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PrioReport {
    pub prioclass: u16,
    pub prio: u16,
    /// `lat` holds total latencies (lat_percentiles), not completion latencies.
    pub total_latency: bool,
    pub lat: LatSummary,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LatSummary {
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    pub samples: u64,
    /// (percentile, value in ns at fio's bucket midpoint); empty when not asked for
    /// (slat and lat by default).
    pub percentiles: Vec<(f64, u64)>,
    /// Histogram: I/O count per non-empty bucket, keyed by the bucket's value in ns
    /// (fio's json+ `bins`); present whenever `percentiles` are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bins: BTreeMap<u64, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SampleSummary {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stddev: f64,
    pub samples: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SyncReport {
    /// fsync/fdatasync calls issued.
    pub total_ios: u64,
    pub lat: Option<LatSummary>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CpuReport {
    pub usr_ns: u64,
    pub sys_ns: u64,
    /// usr/sys as a percentage of the job's runtime (fio's usr_cpu/sys_cpu).
    pub usr_pct: f64,
    pub sys_pct: f64,
    /// Voluntary + involuntary context switches.
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// (usr + sys) CPU time per completed I/O, nanoseconds.
    pub cpu_ns_per_io: f64,
}

/// Queue-depth distributions in percent, over fio's buckets:
/// level: 1, 2, 4, 8, 16, 32, >=64; submit/complete: 0, 4, 8, 16, 32, 64, >=64.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DepthReport {
    pub level_pct: [f64; 7],
    pub submit_pct: [f64; 7],
    pub complete_pct: [f64; 7],
}

/// Latency distribution in percent of I/Os, fio's buckets:
/// ns and us: 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000;
/// ms: 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000, >=2000.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct LatBuckets {
    pub ns_pct: [f64; 10],
    pub us_pct: [f64; 10],
    pub ms_pct: [f64; 12],
}

/// fio's "Run status group" line: totals over the group's jobs, per direction.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GroupReport {
    pub id: u32,
    /// [read, write, trim]
    #[serde(deserialize_with = "per_direction")]
    pub dirs: [GroupDirSummary; 3],
    /// The group's `mixed` totals when its jobs use `unified_rw_reporting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<Mixed<GroupDirSummary>>,
}

/// The directions merged into one figure (fio's `unified_rw_reporting`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Mixed<T> {
    /// `mixed`: shown instead of the directions; `both`: shown after them.
    pub only: bool,
    pub report: T,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GroupDirSummary {
    pub io_bytes: u64,
    /// Aggregate bandwidth: io_bytes / longest job runtime.
    pub bw_bytes_per_sec: f64,
    pub min_bw_bytes_per_sec: f64,
    pub max_bw_bytes_per_sec: f64,
    pub min_runtime_ns: u64,
    pub max_runtime_ns: u64,
}

/// Counters of one block device, diffed over the run (from /sys/block/<dev>/stat).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_sectors: u64,
    pub write_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    pub in_queue_ms: u64,
    pub io_ticks_ms: u64,
    /// io_ticks over the run's wall time, percent.
    pub util_pct: f64,
}

impl DiskUtil {
    /// fio's counters of a disk in fio's order: read and write I/Os, read and
    /// write merges, read and write ticks (ms), time in queue (ms).
    pub(crate) fn fio_counters(&self) -> [u64; 7] {
        [
            self.read_ios,
            self.write_ios,
            self.read_merges,
            self.write_merges,
            self.read_ticks_ms,
            self.write_ticks_ms,
            self.in_queue_ms,
        ]
    }
}

impl JobReport {
    /// Total I/Os completed in both directions.
    pub(crate) fn total_ios(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }
}

/// Something a reader of the numbers should know: a rule's conclusion with the
/// evidence behind it and what to do about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Finding {
    /// Stable kebab-case identifier ("bimodal-results").
    pub code: String,
    pub severity: Severity,
    pub title: String,
    /// The observations that support the title, one per line.
    pub evidence: Vec<String>,
    pub advice: String,
    /// When it happened or began, nanoseconds since the run started (the HTML
    /// report marks it on the time charts); None for a finding about the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<u64>,
}

/// Ordered: `Info < Warning` (`--fail-on` fails on its severity or a worse one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
}

impl Severity {
    /// Its name as the JSON formats write it ("warning").
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
        }
    }
}

/// `iolens run --repeat N`: every measured repetition in full, and per job and
/// metric the statistics over them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RepeatReport {
    pub schema_version: u32,
    pub tool_version: String,
    /// Unmeasured runs before the repetitions.
    pub warmup: u32,
    pub repetitions: Vec<RunReport>,
    pub summary: Vec<MetricSummary>,
    pub findings: Vec<Finding>,
}

/// One metric of one job over the repetitions (see `model::metrics::Metric`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MetricSummary {
    pub job: String,
    pub metric: String,
    pub unit: String,
    /// One value per repetition, in run order.
    pub values: Vec<f64>,
    /// Their location and spread; saved beside the fields above, not nested.
    #[serde(flatten)]
    pub stats: Summary,
}

/// Location and spread of repeated measurements of one quantity, as
/// `stats::summary::summarize` works them out (a `--repeat` report holds one
/// per job and metric, `MetricSummary`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one value.
    pub stddev: f64,
    /// stddev / mean in percent; 0 when the mean is 0.
    pub cv_pct: f64,
    /// Bootstrap 95 % confidence interval of the median (percentile method).
    pub median_ci95: (f64, f64),
    /// Indices of the outliers by modified z-score.
    pub outliers: Vec<usize>,
}

/// Cumulative counters of one `/sys/block/<dev>/stat` line. Sectors are 512 bytes
/// whatever the device's sector size; times are milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DeviceCounters {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    /// I/Os in flight at the moment of reading (not cumulative).
    pub in_flight: u64,
    /// Time the device had at least one I/O in flight.
    pub io_ticks_ms: u64,
    pub in_queue_ms: u64,
    /// Discards (kernel 4.18+) and flushes (5.5+); zero where the kernel has
    /// no such fields. Left out when zero: files saved before them load and save unchanged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discard_ios: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discard_merges: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discard_sectors: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discard_ticks_ms: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_ios: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_ticks_ms: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// The sampler's record of the run. Every `*_series` vector has one entry per
/// element of `t_ns`, in the same order. Counters named "cumulative" are the
/// kernel's running totals: diff neighbours to get per-interval values.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Observations {
    /// The sampling interval asked for (`--observe-interval`), nanoseconds.
    pub interval_ns: u64,
    /// Bytes per page (cachestat and vmstat count pages).
    pub page_size_bytes: u64,
    /// Time of each sample, nanoseconds since the run started.
    pub t_ns: Vec<u64>,
    /// Samples merged into others to keep the series bounded (`observe::rollup`):
    /// those taken are `t_ns.len()` plus these.
    #[serde(skip_serializing_if = "is_zero")]
    pub rolled_up: u64,
    /// Page cache of every target, before the first I/O of each job.
    pub cache_guards: Vec<CacheGuard>,
    /// Files iolens laid out before the jobs.
    pub layouts: Vec<LayoutRecord>,
    pub targets: Vec<TargetObservation>,
    /// The block devices serving the targets (through filesystems, partitions and loop devices).
    pub devices: Vec<DeviceObservation>,
    pub memory_series: Vec<MemorySample>,
    /// Empty when the kernel has no pressure stall information.
    pub pressure_series: Vec<PressureSample>,
    pub system_cpu_series: Vec<SystemCpuSample>,
    /// CPU number of each column of `cpu_freq_khz_series`.
    pub cpu_freq_cpus: Vec<u32>,
    /// Each CPU's clock (cpufreq `scaling_cur_freq`, kHz; 0: unreadable) at
    /// every sample. Empty when the kernel exposes no cpufreq (most VMs).
    pub cpu_freq_khz_series: Vec<Vec<u64>>,
    pub jobs: Vec<JobSeries>,
    pub workers: Vec<WorkerObservation>,
    /// `vm.dirty_*` settings that changed while the run went on (someone else changed them).
    pub tunable_changes: Vec<TunableChange>,
    /// The run's cgroup (`Environment::cgroup`) at each sample; empty when
    /// the run was in no cgroup whose files could be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroup_series: Vec<CgroupSample>,
    /// The cgroup's io counters on each device behind the targets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroup_io: Vec<CgroupIoSeries>,
    /// CPU time the sampler thread itself used (user + system), nanoseconds.
    pub sampler_cpu_ns: u64,
    /// What could not be observed, and why.
    pub notes: Vec<String>,
    /// Who had a direct-I/O target open when its cached pages grew (see `OpenerScan`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opener_scans: Vec<OpenerScan>,
    /// Direct-I/O targets whose opens were watched (see `TargetOpen`); fanotify,
    /// for regular files, needs root.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opens_watched: Vec<String>,
    /// Every open of a direct-I/O target by another process, as it happened.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub target_opens: Vec<TargetOpen>,
    /// The busiest other processes' storage I/O over the run (all devices).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_processes: Vec<ProcessIo>,
    /// Where every byte of each job went (see `JobLedger`), worked out from
    /// the series above once the run ended.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ledger: Vec<JobLedger>,
}

impl Observations {
    /// Seconds interval `i` really lasted (from the previous sample, or the
    /// run's start, to sample `i`), for a rate over it; None when it lasted
    /// less than half the nominal interval (the one taken at stop may end
    /// just after a tick): the few completions such a sliver holds arrive in
    /// a burst and divided by its length would be an impossible rate. A late
    /// tick makes a longer interval; rates never divide by the nominal one.
    pub(crate) fn rate_secs(&self, i: usize) -> Option<f64> {
        let end = self.t_ns.get(i).copied()?;
        let start = i
            .checked_sub(1)
            .and_then(|p| self.t_ns.get(p).copied())
            .unwrap_or(0);
        let length = end.saturating_sub(start);
        (length > 0 && length >= self.interval_ns / 2).then(|| length as f64 / 1e9)
    }

    /// The cache samples of `target`, (time, pages), that were read once the
    /// first job on it had started (its cache guard was over). Earlier ones
    /// show the layout and the state the guard then changed, not a job's run.
    /// All of them when no job on it was guarded.
    pub(crate) fn cache_during_jobs(&self, target: &TargetObservation) -> Vec<(u64, CachePages)> {
        let start = self
            .cache_guards
            .iter()
            .filter(|g| g.path == target.path)
            .map(|g| g.t_ns)
            .min()
            .unwrap_or(0);
        self.t_ns
            .iter()
            .zip(&target.cache_series)
            .filter(|&(&t, _)| t >= start)
            .filter_map(|(&t, pages)| Some((t, (*pages)?)))
            .collect()
    }
}

/// The page cache of one target before a job's first I/O, and what iolens did about it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CacheGuard {
    pub job: String,
    pub path: String,
    /// When the check (and purge) was over, the job's start: nanoseconds since the run started.
    pub t_ns: u64,
    /// Cached pages found before the job started; None when the cache cannot be read.
    pub pages_before: Option<u64>,
    /// iolens dropped the cache (invalidate=1: fadvise DONTNEED, or BLKFLSBUF on a block device).
    pub purged: bool,
    /// Cached pages left after the purge (equal to `pages_before` when not purged).
    pub pages_after: Option<u64>,
    /// Why the purge failed, if it did.
    pub error: Option<String>,
}

/// A look through `/proc/*/fd`, at the sample where a direct-I/O target's
/// cached pages grew, for the other processes that had the target open then
/// (the same device number for a block device, the same inode for a file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct OpenerScan {
    /// The sample's time, nanoseconds since the run started.
    pub t_ns: u64,
    pub path: String,
    /// Processes other than iolens and its workers that had it open.
    pub openers: Vec<Opener>,
    /// Processes whose descriptors could not be read (another user's, without root).
    pub unreadable: u32,
    /// The scan stopped at its bound before it had looked at every process.
    pub truncated: bool,
}

/// An open of a direct-I/O target by another process, seen as it happened (a
/// short-lived reader such as blkid is gone before the next sample): fanotify
/// names the opener of a regular file; for a device node, where fanotify
/// reports nothing, an inotify open alarm makes a scan find the new holder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TargetOpen {
    /// Nanoseconds since the run started.
    pub t_ns: u64,
    pub path: String,
    /// Its comm and cmdline are empty when it was gone before it could be named.
    pub opener: Opener,
}

/// A process seen holding a target open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Opener {
    pub pid: u32,
    /// Its name (`/proc/PID/comm`).
    pub comm: String,
    /// Its command line, shortened.
    pub cmdline: String,
}

/// A file iolens laid out (wrote with data) before the jobs, and the page
/// cache that left: the written pages are dropped again, as fio does, so a
/// first read goes to the device; pages cached before iolens touched the
/// file stay (whatever invalidate= says). A file in RAM (tmpfs) keeps them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct LayoutRecord {
    pub path: String,
    /// The bytes written, `from..to`.
    pub from: u64,
    pub to: u64,
    /// Why the written pages could not be dropped from the page cache (None: they were).
    pub error: Option<String>,
    /// The file lives in RAM (tmpfs, ramfs): there is no device, and its pages stay.
    // Left out when false: files saved before it existed load and save unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_memory: bool,
}

/// How a target's page cache is counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CacheMethod {
    /// `cachestat(2)`: cached, dirty, writeback and evicted pages.
    Cachestat,
    /// `mincore(2)` over a mapping of the file: cached pages only.
    Mincore,
    /// Neither works for this target.
    #[default]
    Unavailable,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TargetObservation {
    pub path: String,
    pub is_block_device: bool,
    /// The bytes of it the jobs address (lowest region start to furthest end).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub used_bytes: u64,
    pub method: CacheMethod,
    /// The file had holes when the run started: reads of them return zeros without touching the device.
    #[serde(default)]
    pub sparse: bool,
    /// Fully allocated, yet part of it was never written (preallocated,
    /// unwritten extents): those reads return zeros without touching the device.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unwritten: bool,
    /// A loop device whose backing file has holes (that file's path): reads of
    /// them return zeros without touching the disk below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_holes: Option<String>,
    /// The block devices behind it, the one holding it first (names in `Observations::devices`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// iolens created the file in this run: every page of it comes from the run.
    // Left out when false: files saved before it existed load and save unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created: bool,
    /// One entry per sample; pages of the whole target. None when not read at
    /// that sample: the read failed, or it was skipped because cachestat on a
    /// target with many cached pages is costly (the first and last sample are always read).
    pub cache_series: Vec<Option<CachePages>>,
}

/// Page counts of a target at one moment. With mincore only `cached` is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CachePages {
    pub cached: u64,
    pub dirty: u64,
    pub writeback: u64,
    /// Cumulative: pages of this file evicted since it was opened by anyone.
    pub evicted: u64,
    /// Evicted pages that would still be cached with a little more memory.
    pub recently_evicted: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DeviceObservation {
    /// Name under /sys/block.
    pub name: String,
    /// How the device was found from a target ("filesystem of /mnt/f", "backing file of loop1").
    pub via: String,
    /// Cumulative counters, one entry per sample (all zero when a read failed).
    pub counter_series: Vec<DeviceCounters>,
    /// A zram device's memory use (`mm_stat`), one entry per sample; empty for other devices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zram_series: Vec<ZramStat>,
}

/// `/proc/meminfo` and `/proc/vmstat` at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MemorySample {
    pub free_bytes: u64,
    pub cached_bytes: u64,
    /// Dirty and Writeback are what dirty throttling compares with the thresholds.
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
    /// vmstat nr_dirty_threshold: writers are throttled hard above it.
    pub dirty_threshold_bytes: u64,
    /// vmstat nr_dirty_background_threshold: background writeback starts above it.
    pub dirty_background_threshold_bytes: u64,
    /// Cumulative KiB read from / written to block devices system-wide.
    pub pgpgin_kib: u64,
    pub pgpgout_kib: u64,
    /// Cumulative file pages read back soon after eviction.
    pub workingset_refault_file: u64,
    /// Cumulative pages scanned by reclaim (kswapd + direct): memory pressure.
    pub pgscan_pages: u64,
}

/// Cumulative stall time from `/proc/pressure/{io,memory}`, microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PressureSample {
    pub io_some_us: u64,
    pub io_full_us: u64,
    pub memory_some_us: u64,
    pub memory_full_us: u64,
}

/// Cumulative CPU time of the whole system from `/proc/stat`, summed over all CPUs, nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SystemCpuSample {
    pub user_ns: u64,
    pub nice_ns: u64,
    pub system_ns: u64,
    pub idle_ns: u64,
    pub iowait_ns: u64,
    pub irq_ns: u64,
    pub softirq_ns: u64,
    pub steal_ns: u64,
}

/// One job's I/O per sampling interval, from its workers' live counters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct JobSeries {
    pub name: String,
    pub workers: u32,
    /// The job bypasses the page cache (direct=1).
    #[serde(default)]
    pub direct: bool,
    /// The job asked for its targets' cache to be dropped before its first I/O (invalidate=1).
    #[serde(default)]
    pub invalidate: bool,
    /// Paths of the targets it does I/O on (empty for jobs that touch no file, like the null engine).
    #[serde(default)]
    pub targets: Vec<String>,
    /// The job makes its writes durable itself (fsync=, fdatasync=, end_fsync,
    /// sync=): its waits for that writeback are what it measures.
    // Left out when false: files saved before it existed load and save unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub syncs_writes: bool,
    /// What its write buffers hold ("zero_buffers", "random data", …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub buffers: String,
    /// When its `ramp_time` ended and what the report counts began (its last
    /// worker's), nanoseconds since the run started; None without a ramp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_from_ns: Option<u64>,
    /// One entry per sample: what happened since the previous sample (all zero while the job does not run).
    pub intervals: Vec<JobInterval>,
    /// The job's CPU wait (see `CpuWait`); None when its I/O could not be followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait: Option<CpuWait>,
}

impl JobSeries {
    /// Samples `(before, last)` bounding the time the job did I/O: interval
    /// `i` covers `t_ns[i-1]..t_ns[i]`, so counters diffed between these two
    /// samples cover exactly the job's active intervals. None when it
    /// completed nothing.
    pub(crate) fn active_span(&self) -> Option<(usize, usize)> {
        let busy = |i: &JobInterval| i.ios[0] + i.ios[1] > 0;
        let first = self.intervals.iter().position(busy)?;
        let last = self.intervals.iter().rposition(busy)?;
        Some((first.saturating_sub(1), last))
    }

    /// The measured window of the job on the sample times `t_ns`: samples
    /// `(before, last)` bounding the I/O its report counts, as `active_span`
    /// bounds all of it. The sampler watches the ramp (`ramp_time`) too, but
    /// the report does not count it: a warm-up there is what the ramp is for,
    /// and its bytes are not the job's. So the window starts at the first
    /// sample at or after the ramp's end (the interval the ramp ended in is
    /// left out with it). Every diagnose rule that sums a job's bytes or reads
    /// its series, and the ledger, take their window from here. None when the
    /// job measured nothing the sampler saw (it ended inside its ramp).
    pub(crate) fn measured_span(&self, t_ns: &[u64]) -> Option<(usize, usize)> {
        let (from, to) = self.active_span()?;
        let Some(ramp_end_ns) = self.measured_from_ns else {
            return Some((from, to));
        };
        let before = (from..to).find(|&i| t_ns.get(i).is_some_and(|&t| t >= ramp_end_ns))?;
        Some((before, to))
    }
}

/// CPU wait: the share of its workers' time while the job ran that they were
/// runnable but waiting for a CPU (run-queue delay from schedstat), over
/// workers × the job's wall time. The one definition the `cpu-starvation`
/// finding, the system block and the HTML report print.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CpuWait {
    /// Run-queue delay of the job's workers while it ran, summed.
    pub run_delay_ns: u64,
    /// Workers × the job's wall time, from the sample before its first I/O to the one after its last.
    pub worker_ns: u64,
    /// `run_delay_ns` in percent of `worker_ns`.
    pub pct: f64,
}

impl CpuWait {
    /// The CPU wait of `series` on the sample times `t_ns`.
    pub(crate) fn of(series: &JobSeries, t_ns: &[u64]) -> Option<CpuWait> {
        let (from, to) = series.active_span()?;
        let wall_ns = t_ns.get(to)?.saturating_sub(*t_ns.get(from)?);
        let worker_ns = wall_ns.saturating_mul(u64::from(series.workers.max(1)));
        if worker_ns == 0 {
            return None;
        }
        let run_delay_ns = series.intervals[from + 1..=to]
            .iter()
            .map(|i| i.run_delay_ns)
            .sum();
        Some(CpuWait {
            run_delay_ns,
            worker_ns,
            pct: run_delay_ns as f64 * 100.0 / worker_ns as f64,
        })
    }

    /// "CPU wait 26.0% (0.52 s waiting for a CPU in 2.00 s of worker time)": how every report says it.
    pub(crate) fn describe(&self) -> String {
        format!(
            "CPU wait {:.1}% ({:.2} s waiting for a CPU in {:.2} s of worker time)",
            self.pct,
            self.run_delay_ns as f64 / 1e9,
            self.worker_ns as f64 / 1e9
        )
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct JobInterval {
    /// [read, write]
    pub ios: [u64; 2],
    pub bytes: [u64; 2],
    /// Mean and max total latency of the I/Os completed in the interval (0 without I/Os).
    pub lat_mean_ns: u64,
    pub lat_max_ns: u64,
    /// Their 99th percentile from the live counters' coarse histogram (within 12.5 %; 0 without I/Os).
    #[serde(default)]
    pub lat_p99_ns: u64,
    /// Time the workers spent inside I/O calls, summed over workers.
    pub in_io_ns: u64,
    /// CPU time the workers used, summed (from schedstat).
    pub cpu_ns: u64,
    /// Time the workers were runnable but waiting for a CPU, summed.
    pub run_delay_ns: u64,
    /// Time in each kernel wait channel, estimated from ~100 Hz samples (buffered writers only).
    pub waits: Vec<WaitTime>,
    /// What the workers made storage read and write below the page cache
    /// (per-task io accounting; see `TaskIo`).
    #[serde(default, skip_serializing_if = "TaskIo::is_zero")]
    pub caused: TaskIo,
}

/// Time one or more threads spent blocked in one kernel function (`/proc/<tid>/wchan`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WaitTime {
    pub wchan: String,
    /// Samples that found the thread there × the sampling period.
    pub time_ns: u64,
}

/// One worker thread's totals over its life.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WorkerObservation {
    pub job: String,
    pub worker: u32,
    /// Kernel thread id.
    pub tid: u32,
    /// CPU time and run-queue wait from `/proc/<pid>/task/<tid>/schedstat` at the last sample
    /// the thread was alive for.
    pub cpu_ns: u64,
    pub run_delay_ns: u64,
    pub timeslices: u64,
    /// Wait-channel sampling period, nanoseconds (0: not sampled, the job is not a buffered writer).
    pub wchan_period_ns: u64,
    pub wchan_samples: u64,
    pub waits: Vec<WaitTime>,
    /// Its cgroup when it started, as `/proc/PID/cgroup` names it, when that
    /// was not the run's (someone moved it); None otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// What the thread made storage read and write below the page cache, at
    /// the last sample it was alive for.
    #[serde(default, skip_serializing_if = "TaskIo::is_zero")]
    pub caused: TaskIo,
}

/// A `vm.dirty_*` setting that changed during the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TunableChange {
    /// First sample that saw the new value, nanoseconds since the run started.
    pub t_ns: u64,
    pub name: String,
    pub from: String,
    pub to: String,
}

/// The machine a run measured; what two runs must share to be compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Environment {
    pub tool_version: String,
    pub kernel_release: String,
    pub cpu_model: String,
    pub cpu_count: u32,
    /// Distinct cpufreq governors of the CPUs (empty: no cpufreq, as in most VMs).
    pub cpufreq_governors: Vec<String>,
    /// cpuidle driver ("haltpoll" in KVM guests) and its polling window when it has one.
    pub cpuidle_driver: Option<String>,
    pub guest_halt_poll_ns: Option<u64>,
    pub clocksource: String,
    /// udevd listens (`/run/udev/control`): closing a device opened for writing makes it run blkid.
    pub udev_running: bool,
    /// A DAMON kdamond is on: page cache may be reclaimed without memory pressure.
    pub damon_running: bool,
    /// Free page reporting (virtio-balloon) is active: KiB reported to the host since
    /// boot, a running total (a page reused and freed again is reported again), not
    /// what the host holds now.
    pub page_reporting_kib: Option<u64>,
    /// `vm.dirty_*` sysctls at the start (name, value).
    pub vm_dirty: Vec<(String, String)>,
    pub devices: Vec<DeviceInfo>,
    pub filesystems: Vec<FilesystemInfo>,
    /// The I/O stack under each target, down to what stores its bytes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<TargetStack>,
    /// The run's control groups and the limits that applied (None: no cgroup mounted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupRecord>,
}

/// Queue settings of a block device (`/sys/block/<dev>/…`); None where the file is absent.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DeviceInfo {
    pub name: String,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    /// The active I/O scheduler.
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    /// "write back" or "write through".
    pub write_cache: Option<String>,
    pub logical_block_bytes: Option<u64>,
    pub physical_block_bytes: Option<u64>,
    /// Writes to pages under writeback wait (stable pages).
    pub stable_writes: Option<bool>,
    /// A loop device's backing file.
    pub backing_file: Option<String>,
}

/// The filesystem holding a file target.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct FilesystemInfo {
    pub target: String,
    pub fs_type: String,
    pub mount_point: String,
    pub source: String,
    /// Mount options and the filesystem's own options, as the kernel lists them.
    pub mount_options: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of a file written by iolens 0.1.0 (schema 1), under tests/fixtures/schema1/.
    fn schema_1_fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/schema1/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).expect("read the fixture")
    }

    /// `text` with every number replaced by `#`: the layout, the keys and their
    /// order. (serde_json's reader may round a float's last digit, so a value
    /// read and written again can differ there; the values are compared as JSON.)
    fn shape(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let starts_number =
                c.is_ascii_digit() || (c == '-' && chars.peek().is_some_and(char::is_ascii_digit));
            if !starts_number {
                out.push(c);
                continue;
            }
            out.push('#');
            while chars
                .peek()
                .is_some_and(|&n| n.is_ascii_digit() || ".eE+-".contains(n))
            {
                chars.next();
            }
        }
        out
    }

    /// `saved` read as a `T` and written again as iolens writes it: the same
    /// fields in the same order with the same values.
    fn assert_saves_unchanged<T: Serialize + serde::de::DeserializeOwned>(saved: &str) -> T {
        let loaded: T = serde_json::from_str(saved).expect("the fixture loads");
        let again = serde_json::to_string_pretty(&loaded).unwrap();
        assert_eq!(
            shape(&again),
            shape(saved.trim_end()),
            "expected the fields and their order as saved"
        );
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        assert!(
            value(&again) == value(saved),
            "expected the values as saved"
        );
        loaded
    }

    #[test]
    fn result_files_of_schema_1_load_and_save_unchanged() {
        assert_saves_unchanged::<RepeatReport>(&schema_1_fixture("repeat.json"));
        let run: RunReport = assert_saves_unchanged(&schema_1_fixture("verify.json"));
        let bad = &run.verify[0].bad_blocks[0];
        assert_eq!(
            (bad.expected.map(|h| h.offset), bad.found.map(|h| h.offset)),
            (Some(28672), Some(12288)),
            "expected the misdirected block's headers, got {bad:?}"
        );
    }

    #[test]
    fn reports_saved_with_two_directions_load_with_no_trims() {
        let mut group = serde_json::to_value(GroupReport::default()).unwrap();
        assert_eq!(group["dirs"].as_array().unwrap().len(), 3);
        group["dirs"].as_array_mut().unwrap().pop();
        let read = GroupDirSummary {
            io_bytes: 4096,
            ..Default::default()
        };
        group["dirs"][0] = serde_json::to_value(&read).unwrap();
        let loaded: GroupReport = serde_json::from_value(group.clone()).unwrap();
        assert_eq!(loaded.dirs[0].io_bytes, 4096);
        assert_eq!(loaded.dirs[2].io_bytes, 0);
        group["dirs"].as_array_mut().unwrap().pop();
        let error = serde_json::from_value::<GroupReport>(group).unwrap_err();
        assert!(error.to_string().contains("2 or 3 directions"), "{error}");
    }
}
