//! `RunReport`: the one versioned serde model of a run. Every output format
//! (text, iolens JSON, fio JSON) is rendered from it; nothing else is measured
//! at render time. Units are in the field names: `_ns`, `_bytes`, `_pct`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    pub schema_version: u32,
    pub tool_version: String,
    /// Wall-clock start of the run, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The arguments the run was started with (after the program name).
    pub command_line: Vec<String>,
    /// Options given before the first `--name` (fio's "global options").
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobReport>,
    /// One per reporting group (stonewall / new_group), in order.
    pub groups: Vec<GroupReport>,
    /// Block devices behind the targets, counters diffed over the run.
    pub disks: Vec<DiskUtil>,
    /// True when the run was stopped early (signal or error); results are partial.
    pub interrupted: bool,
}

/// One reported job: a single worker, or all `numjobs` workers merged with
/// `group_reporting`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobReport {
    pub name: String,
    pub groupid: u32,
    /// Workers merged into this report (1 unless group_reporting).
    pub workers: u32,
    /// First error of the job ("write /tmp/f at offset 4096: No space left on device (os error 28)").
    pub error: Option<String>,
    /// errno of `error`, 0 when none (fio's "error" key).
    pub errno: i32,
    /// The resolved job options, for the record.
    pub options: Vec<(String, String)>,
    /// [read, write]
    pub dirs: [DirReport; 2],
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
}

/// fio's default `significant_figures`, for reports saved before the field existed.
fn default_significant_figures() -> u32 {
    4
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirReport {
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
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatSummary {
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
pub struct SampleSummary {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stddev: f64,
    pub samples: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SyncReport {
    /// fsync/fdatasync calls issued.
    pub total_ios: u64,
    pub lat: Option<LatSummary>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CpuReport {
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
pub struct DepthReport {
    pub level_pct: [f64; 7],
    pub submit_pct: [f64; 7],
    pub complete_pct: [f64; 7],
}

/// Latency distribution in percent of I/Os, fio's buckets:
/// ns and us: 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000;
/// ms: 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000, >=2000.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatBuckets {
    pub ns_pct: [f64; 10],
    pub us_pct: [f64; 10],
    pub ms_pct: [f64; 12],
}

/// fio's "Run status group" line: totals over the group's jobs, per direction.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GroupReport {
    pub id: u32,
    /// [read, write]
    pub dirs: [GroupDirSummary; 2],
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GroupDirSummary {
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
pub struct DiskUtil {
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

impl JobReport {
    /// Total I/Os completed in both directions.
    pub fn total_ios(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }
}

/// Something a reader of the numbers should know: a rule's conclusion with the
/// evidence behind it and what to do about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable kebab-case identifier ("bimodal-results").
    pub code: String,
    pub severity: Severity,
    pub title: String,
    /// The observations that support the title, one per line.
    pub evidence: Vec<String>,
    pub advice: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
}

/// `iolens run --repeat N`: every measured repetition in full, and per job and
/// metric the statistics over them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RepeatReport {
    pub schema_version: u32,
    pub tool_version: String,
    /// Unmeasured runs before the repetitions.
    pub warmup: u32,
    pub repetitions: Vec<RunReport>,
    pub summary: Vec<MetricSummary>,
    pub findings: Vec<Finding>,
}

/// One metric of one job over the repetitions (see `report::metrics::Metric`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    pub job: String,
    pub metric: String,
    pub unit: String,
    /// One value per repetition, in run order.
    pub values: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stddev: f64,
    pub cv_pct: f64,
    /// Bootstrap 95 % confidence interval of the median.
    pub median_ci95: (f64, f64),
    /// Repetitions (0-based) that are outliers by modified z-score.
    pub outliers: Vec<usize>,
}
