//! `JobSpec`: one fully resolved and validated job. Nothing downstream parses text.
//!
//! Both front ends (fio-style `--key=value` arguments now, job files later) fill a
//! `RawJob`; `job::resolve` turns it into this owned, checked value.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

mod engine;

pub use engine::*;

/// Data direction of one I/O. It indexes the per-direction arrays below
/// ([read, write, trim], fio's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    /// Discard a range: `fallocate(PUNCH_HOLE)` on a file, `BLKDISCARD` on a block device.
    Trim = 2,
}

/// Number of directions, the length of every per-direction array.
pub const DDIRS: usize = 3;

impl Ddir {
    pub const ALL: [Ddir; DDIRS] = [Ddir::Read, Ddir::Write, Ddir::Trim];
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    /// The direction as fio names it in messages and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Trim => "trim",
        }
    }
}

/// fio's `rw=`: the pattern and which directions it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RwPattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// `rw` / `readwrite`: sequential mixed.
    ReadWrite,
    RandRw,
    Trim,
    RandTrim,
    /// Sequential: trim a block, then write the same block.
    TrimWrite,
}

impl RwPattern {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Self::RandRead | Self::RandWrite | Self::RandRw | Self::RandTrim
        )
    }
    pub fn reads(self) -> bool {
        matches!(
            self,
            Self::Read | Self::RandRead | Self::ReadWrite | Self::RandRw
        )
    }
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::Write | Self::RandWrite | Self::ReadWrite | Self::RandRw | Self::TrimWrite
        )
    }
    pub fn trims(self) -> bool {
        matches!(self, Self::Trim | Self::RandTrim | Self::TrimWrite)
    }
    /// Which directions the pattern issues, indexed by `Ddir::index`.
    pub fn directions(self) -> [bool; DDIRS] {
        [self.reads(), self.writes(), self.trims()]
    }
}

/// Block sizes for one direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlockSizes {
    Fixed(u64),
    /// `bsrange=min-max`: uniformly chosen, multiples of `min` (as fio).
    Range {
        min: u64,
        max: u64,
    },
    /// `bssplit=4k/50:64k/50`: (size, percent); percentages sum to 100.
    Split(Vec<(u64, u32)>),
}

impl BlockSizes {
    pub fn min(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, .. } => *min,
            Self::Split(v) => v.iter().map(|(b, _)| *b).min().unwrap_or(0),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { max, .. } => *max,
            Self::Split(v) => v.iter().map(|(b, _)| *b).max().unwrap_or(0),
        }
    }
}

/// A byte quantity that may be given as a percentage of the target (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SizeOrPercent {
    Bytes(u64),
    /// Per cent of the target's size, 1..=100.
    Percent(u32),
}

impl SizeOrPercent {
    /// Resolve against a target of `total` bytes.
    pub fn resolve(self, total: u64) -> u64 {
        match self {
            Self::Bytes(b) => b,
            Self::Percent(p) => total / 100 * u64::from(p) + total % 100 * u64::from(p) / 100,
        }
    }
}

/// fio's `random_distribution=`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Distribution {
    Random,
    Zipf(f64),
    Pareto(f64),
    /// Gaussian with the given sigma as a percentage of the region (fio's `normal:σ`).
    Normal(f64),
    /// `zoned:pct_access/pct_region:…` (both in percent, each list sums to 100).
    Zoned(Vec<(f64, f64)>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RateProcess {
    Linear,
    Poisson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SyncMode {
    None,
    /// `sync=1` / `sync=sync`: O_SYNC.
    Sync,
    /// `sync=dsync`: O_DSYNC.
    Dsync,
}

/// Where the job does I/O.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetSpec {
    /// Explicit `filename=` entries (split on `:`); empty = generated names.
    pub filenames: Vec<PathBuf>,
    /// `directory=` for generated names.
    pub directory: Option<PathBuf>,
    /// `filename_format=`: how generated names are built from `$jobname`, `$jobnum`
    /// (the worker) and `$filenum` (fio's default `$jobname.$jobnum.$filenum`).
    pub filename_format: String,
    /// `nrfiles=` (generated files per worker when no filename is given).
    pub nrfiles: u32,
    /// `filesize=` of each file (default: size / nrfiles).
    pub filesize: Option<u64>,
    /// `size=`: total bytes of the job's region over all its files.
    pub size: Option<SizeOrPercent>,
    pub offset: SizeOrPercent,
    pub offset_increment: SizeOrPercent,
    /// `io_size=`: bytes to transfer (default: `size`).
    pub io_size: Option<SizeOrPercent>,
    pub number_ios: Option<u64>,
    pub loops: u32,
    /// fio's `allow_mounted_write=1`: the destructive-write guard lets writes to a
    /// mounted device (or one behind a mounted filesystem or swap) through.
    #[serde(default)]
    pub allow_mounted_write: bool,
}

/// fio's `fallocate=`: how a file that is laid out gets its blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fallocate {
    /// Nothing reserved: a new file of a write job starts empty and grows as it is written.
    None,
    /// `fallocate(2)`; where the filesystem lacks it, the file is only extended.
    Native,
    /// `posix_fallocate(3)` (emulated by writing where the filesystem lacks fallocate).
    Posix,
    /// Blocks reserved but the length left as it is (`FALLOC_FL_KEEP_SIZE`).
    Keep,
    /// Extended to its size with no blocks reserved (a sparse file).
    Truncate,
}

/// fio's `fadvise_hint=`: access advice given on each file before the first I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FadviseHint {
    None,
    /// Random for random patterns, sequential for the others (fio's default, `1`).
    ByPattern,
    Sequential,
    Random,
}

/// How a job's files are created, prepared and guarded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesSpec {
    /// `allow_file_create=0`: a file that does not exist is an error.
    pub allow_file_create: bool,
    /// `create_only`: lay out the files and do no I/O.
    pub create_only: bool,
    /// `create_on_open`: a missing file is created empty when the job's group starts, not laid out.
    pub create_on_open: bool,
    pub fallocate: Fallocate,
    /// `pre_read`: read the job's regions into the page cache before it starts.
    pub pre_read: bool,
    pub fadvise: FadviseHint,
    /// `allow_mounted_write`: writing to a mounted block device is allowed.
    pub allow_mounted_write: bool,
}

/// What the workers do and in what order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub rw: RwPattern,
    /// The `:N` modifier of `rw=`: sequential jobs skip N bytes after each I/O
    /// (fio's `rw=write:4k`; 0 = no holes), random jobs take N I/Os at consecutive
    /// offsets before a new random offset (0 or 1 = a new offset every I/O).
    pub rw_modifier: u64,
    /// `rw_sequencer=identical`: in random patterns, the I/Os that are not at a new
    /// random offset (the rest of an `rw=randread:N` run, or `percentage_random`'s
    /// share) repeat the previous offset instead of continuing after it.
    pub repeat_offsets: bool,
    /// Percentage of reads in mixed workloads (0..=100).
    pub rwmixread: u32,
    /// Block sizes per direction [read, write, trim].
    pub bs: [BlockSizes; DDIRS],
    /// Offsets are multiples of this per direction (default: the minimum block size).
    pub blockalign: [u64; DDIRS],
    pub randommap: bool,
    /// True: seed the generators from `randseed` (fio's default, or any explicit `randseed=`).
    /// False: seed from entropy, so each run differs.
    pub randrepeat: bool,
    pub randseed: u64,
    pub distribution: Distribution,
    /// `percentage_random` per direction: in random patterns, the share of I/Os at a
    /// random offset; the others continue where the previous I/O ended (100 = all random).
    pub percentage_random: [u32; DDIRS],
    pub file_service: FileService,
    /// `openfiles`: how many of a worker's files it uses at a time (`None`: all);
    /// the others wait until one is done. Every file stays open all the same.
    #[serde(default)]
    pub open_files: Option<u32>,
    /// `zonemode=strided`: I/O stays in one zone at a time; `None` for `zonemode=none`.
    #[serde(default)]
    pub zones: Option<StridedZones>,
}

impl WorkloadSpec {
    /// The block sizes of the directions the pattern uses.
    pub fn used_block_sizes(&self) -> impl Iterator<Item = &BlockSizes> {
        self.rw
            .directions()
            .into_iter()
            .zip(&self.bs)
            .filter(|(used, _)| *used)
            .map(|(_, bs)| bs)
    }
}

/// fio's `zonemode=strided`: the region is cut into zones of `range` bytes, the
/// next zone starting `skip` bytes after the previous one ends; each zone gets
/// `size` bytes of I/O before the next, and after the last fitting zone the
/// first comes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StridedZones {
    /// `zonesize`: bytes transferred in a zone per visit (> 0).
    pub size: u64,
    /// `zonerange`: the zone's length (`zonesize` when not given).
    pub range: u64,
    /// `zoneskip`: the gap between one zone's end and the next zone's start.
    pub skip: u64,
}

impl StridedZones {
    /// Distance from one zone's start to the next's.
    pub fn stride(&self) -> u64 {
        self.range + self.skip
    }
}

/// fio's `file_service_type`: which of a worker's files the next I/O goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileService {
    /// In turn, `ios` I/Os per file (fio's default: one).
    RoundRobin { ios: u32 },
    /// Uniformly chosen, `ios` I/Os per choice.
    Random { ios: u32 },
    /// One file to its end before the next.
    Sequential,
}

/// Pacing: rate limits and think time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PacingSpec {
    /// Bytes per second per direction, 0 = unlimited.
    pub rate: [u64; DDIRS],
    /// I/Os per second per direction, 0 = unlimited.
    pub rate_iops: [u64; DDIRS],
    pub rate_process: RateProcess,
    pub thinktime: Duration,
    /// `thinktime_spin`: the first part of each think time is spent busy (≤ `thinktime`).
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
    /// `thinktime_blocks_type=issue`: `thinktime_blocks` counts issued I/Os, so the
    /// pause comes after that many are sent; false (`complete`) counts completed ones.
    #[serde(default)]
    pub thinktime_counts_issued: bool,
}

/// How data reaches the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoModeSpec {
    pub direct: bool,
    pub sync: SyncMode,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub invalidate: bool,
    pub overwrite: bool,
    pub unlink: bool,
}

/// Buffer contents for writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferSpec {
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    /// 0..=100: share of each buffer that compresses well (filled with zeros).
    pub compress_percentage: u32,
}

/// What is measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureSpec {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
    /// Percentiles reported for clat (and lat), fio's default list unless given.
    pub percentile_list: Vec<f64>,
    /// Interval of the bandwidth/IOPS samples (fio's `bw_avg_time`/`iops_avg_time`, 500 ms).
    pub avg_time: Duration,
    /// Which latencies get percentiles (and json+ bins): fio's `slat_percentiles`,
    /// `clat_percentiles` and `lat_percentiles`.
    pub slat_percentiles: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    /// fio's `significant_figures` (1..=10) for IOPS and bandwidth in the normal output.
    pub significant_figures: u32,
    /// fio's `unified_rw_reporting`.
    pub unified_rw: UnifiedRw,
    /// fio's `stats`: false runs the job but leaves it out of every report and group total.
    pub stats: bool,
}

/// fio's `unified_rw_reporting`: report each direction, their merge, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnifiedRw {
    /// `none` / `0`: each direction on its own.
    Separate,
    /// `mixed` / `1`: one report for all directions.
    Mixed,
    /// `both` / `2`: each direction, then the merged report.
    Both,
}

/// Per-I/O and per-interval log files (fio's `write_*_log`): each `Some` holds the
/// file name prefix (the job name when the option is given without a value).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LogSpec {
    pub bw: Option<String>,
    pub iops: Option<String>,
    /// slat, clat and lat logs.
    pub lat: Option<String>,
    /// Completion latency histograms, one line per `hist_msec` window.
    pub hist: Option<String>,
    /// Window of averaged entries, ms; 0 logs every I/O.
    pub avg_msec: u64,
    /// Window of histogram entries, ms; 0 writes no histogram entries (as fio).
    pub hist_msec: u64,
    /// Windowed latency entries hold the window's maximum instead of its mean.
    pub max_value: bool,
    /// Entries carry the I/O's offset.
    pub offset: bool,
    /// File names carry the worker's number (`name_bw.1.log`); off, a job's
    /// workers share one file.
    pub per_job: bool,
}

impl LogSpec {
    /// True when any log is written; the hot loop checks only this.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }
}

/// How each worker thread is scheduled (fio's `cpus_allowed`, `nice`, `prio`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedSpec {
    /// CPUs the workers may run on (`cpus_allowed=`, `cpumask=`); empty = no pinning.
    pub cpus: Vec<usize>,
    /// `cpus_allowed_policy=split`: worker N runs only on the Nth of `cpus` (wrapping).
    pub split_cpus: bool,
    /// `nice=` (-20..=19); `None` keeps the inherited value.
    pub nice: Option<i32>,
    /// `prioclass=` and `prio=` as (class, level); `None` keeps the inherited priority.
    pub ioprio: Option<(u32, u32)>,
}

/// Execution: workers, timing, grouping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecSpec {
    pub numjobs: u32,
    /// Workers as threads (`thread`) or processes (fio's default).
    pub thread: bool,
    pub group_reporting: bool,
    /// Wait for the previous jobs to finish before starting (starts a new group).
    pub stonewall: bool,
    pub new_group: bool,
    pub startdelay: Duration,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Duration,
    pub sched: SchedSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    /// fio's `description`: free text shown with the job's results.
    pub description: Option<String>,
    pub engine: EngineSpec,
    pub target: TargetSpec,
    pub workload: WorkloadSpec,
    pub pacing: PacingSpec,
    pub io: IoModeSpec,
    pub buffers: BufferSpec,
    pub measure: MeasureSpec,
    pub exec: ExecSpec,
    pub logs: LogSpec,
    /// `continue_on_error` / `ignore_error`.
    pub errors: super::errors::ErrorSpec,
    pub files: FilesSpec,
    pub control: RunControlSpec,
    /// fio's `verify=`; None when off (`verify=0` or `verify=null`).
    #[serde(default)]
    pub verify: Option<VerifySpec>,
}

/// How the checksum of a verified block is computed (fio's `verify=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum VerifyKind {
    Crc32c,
    Crc64,
    Xxhash,
    Sha256,
    Md5,
    /// The payload must equal `verify_pattern`; no checksum.
    Pattern,
    /// Only the block header (offset, generation, writer) is checked.
    Meta,
}

/// Bytes of the header at `header_offset` in each verified block.
pub const VERIFY_HEADER_LEN: u64 = 80;

/// Data verification: every written block carries a header and a checksum that a
/// read-back pass checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifySpec {
    pub kind: VerifyKind,
    /// `verify_pattern`: bytes repeated over each block's payload; None: seeded random data.
    pub pattern: Option<Vec<u8>>,
    /// `verify_interval`: bytes per header; None: the smallest write block size.
    pub interval: Option<u64>,
    /// `verify_offset`: where in each block its header sits.
    pub header_offset: u64,
    /// `do_verify`: run the read-back pass after the writes.
    pub after_writes: bool,
    /// `verify_only`: write nothing; check what an earlier run of this job wrote.
    pub only: bool,
    /// `verify_backlog`: also verify after every N written blocks (0: only at the end).
    pub backlog: u64,
    /// `verify_fatal`: stop at the first bad block.
    pub fatal: bool,
    /// `verify_dump`: write found and expected copies of bad blocks.
    pub dump: bool,
}

/// What `exit_what` stops when a job of a run with `exitall` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExitWhat {
    /// The other jobs of the running group (fio's `group`, and `stonewall`: only one
    /// group runs at a time here, so both mean the same).
    Group,
    /// The running group and every group after it.
    All,
}

/// Run control beyond time and size: when a job stops early, waits, or fails on
/// being too slow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunControlSpec {
    /// `exitall`: when this job ends, stop the others (fio applies it to the whole
    /// run once any job sets it; the runner does the same).
    pub exitall: bool,
    pub exit_what: ExitWhat,
    /// `wait_for`: the name of an earlier job this one starts after.
    pub wait_for: Option<String>,
    /// `max_latency` per direction, ns (0 = none): a slower I/O fails the job.
    pub max_latency_ns: [u64; DDIRS],
    /// `rate_min` (bytes/s) and `rate_iops_min` per direction, 0 = none: a job that
    /// falls below over a `rate_cycle` window fails.
    pub rate_min: [u64; DDIRS],
    pub rate_iops_min: [u64; DDIRS],
    pub rate_cycle: Duration,
    /// `iodepth_low`: once the queue is full, let it drain to this depth before
    /// refilling (equal to iodepth: keep it full).
    pub iodepth_low: u32,
    /// `steadystate` with `ss_dur`: the job ends once its rate holds steady.
    #[serde(default)]
    pub steadystate: Option<SteadyStateSpec>,
    /// `latency_target`: search for the deepest queue that meets a latency.
    #[serde(default)]
    pub latency_target: Option<LatencyTargetSpec>,
}

/// What fio's `steadystate=` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SteadyMetric {
    Iops,
    /// Bytes per second.
    Bw,
}

/// fio's `steadystate=METRIC[_slope]:LIMIT[%]`, `ss_dur` and `ss_ramp`: once per
/// second the job's rate (both directions together) is sampled; the job ends when
/// the last `duration` of samples meets the criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateSpec {
    pub metric: SteadyMetric,
    /// Judge the least-squares slope of the samples; else their largest
    /// deviation from the mean.
    pub slope: bool,
    pub limit: f64,
    /// The limit is a percentage of the mean rather than in the metric's unit.
    pub limit_is_percent: bool,
    /// `ss_dur`: the window judged, whole seconds (one sample each).
    pub duration: Duration,
    /// `ss_ramp`: time after `ramp_time` before the first sample.
    pub ramp: Duration,
}

/// fio's `latency_target`, `latency_window`, `latency_percentile`, `latency_run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyTargetSpec {
    pub target_ns: u64,
    /// Each queue depth is tried for one window.
    pub window: Duration,
    /// The share of a window's I/Os (per cent) that must finish within the target.
    pub percentile: f64,
    /// `latency_run`: keep adjusting the depth for the whole run instead of
    /// ending the job once the search settles.
    pub keep_adjusting: bool,
}

impl RunControlSpec {
    /// True when a minimum rate is enforced.
    pub fn has_rate_min(&self) -> bool {
        self.rate_min
            .iter()
            .chain(&self.rate_iops_min)
            .any(|&r| r > 0)
    }
}

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];
