//! The control groups a run lived in: where (`CgroupPlace`), the limits that
//! applied to it (`CgroupLimits`, each the tightest over the group and its
//! ancestors) and, per sample, what the group used (`CgroupSample`,
//! `CgroupIoSeries`). cgroup v1 (one hierarchy per controller) and v2 (the
//! unified hierarchy) are recorded in the same types; a field the version
//! has no file for stays None or 0, as its doc comment says.

use serde::{Deserialize, Serialize};

/// cgroup v1 (a hierarchy per controller) or v2 (the unified hierarchy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum CgroupVersion {
    V1,
    #[default]
    V2,
}

impl CgroupVersion {
    pub(crate) fn name(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        }
    }
}

/// One controller's group: the hierarchy's version, the group's path as
/// `/proc/PID/cgroup` names it and the directory holding its files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CgroupDir {
    pub version: CgroupVersion,
    /// The group as the process sees it ("/bench"; "/" at the root of its namespace).
    pub path: String,
    /// Where the group's files are (under the hierarchy's mount point).
    pub dir: String,
    /// The hierarchy's mount point: ancestors are read up to it, not above.
    pub mount_point: String,
}

/// The groups of a process for the controllers iolens reads; None where the
/// controller is not mounted (v1) or not enabled for the group (v2).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CgroupPlace {
    pub memory: Option<CgroupDir>,
    /// v2 `io`, v1 `blkio`.
    pub io: Option<CgroupDir>,
    pub cpu: Option<CgroupDir>,
    pub cpuset: Option<CgroupDir>,
    /// The v2 unified group even when it has none of the controllers above
    /// (its `memory.pressure` and `cpu.stat` are there regardless).
    pub unified: Option<CgroupDir>,
}

impl CgroupPlace {
    /// The group that names the place in a report: the memory group, else
    /// the first controller's, else the unified one.
    pub(crate) fn main(&self) -> Option<&CgroupDir> {
        [
            &self.memory,
            &self.io,
            &self.cpu,
            &self.cpuset,
            &self.unified,
        ]
        .into_iter()
        .find_map(Option::as_ref)
    }
}

/// The io controller's limits on one device (v2 `io.max`, v1
/// `blkio.throttle.{read,write}_{bps,iops}_device`); None: no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct IoLimit {
    /// "major:minor".
    pub device: String,
    /// The device's kernel name ("loop3") when known.
    pub name: String,
    pub read_bytes_per_sec: Option<u64>,
    pub write_bytes_per_sec: Option<u64>,
    pub read_iops: Option<u64>,
    pub write_iops: Option<u64>,
}

impl IoLimit {
    /// Any of the four limits set.
    pub(crate) fn is_set(&self) -> bool {
        self.read_bytes_per_sec.is_some()
            || self.write_bytes_per_sec.is_some()
            || self.read_iops.is_some()
            || self.write_iops.is_some()
    }
}

/// The limits that applied to the run: for each, the tightest value over the
/// group and its ancestors up to the hierarchy's root; None where unlimited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CgroupLimits {
    /// v2 `memory.max`, v1 `memory.limit_in_bytes`, bytes.
    pub memory_max_bytes: Option<u64>,
    /// v2 `memory.high` (reclaim and throttling above it), bytes; v1 has none.
    pub memory_high_bytes: Option<u64>,
    /// v2 `memory.swap.max`; v1 `memory.memsw.limit_in_bytes` minus the memory limit, bytes.
    pub swap_max_bytes: Option<u64>,
    /// The io limits on the devices behind the targets, where any is set.
    pub io: Vec<IoLimit>,
    /// CPU time the group may use per period (v2 `cpu.max`, v1
    /// `cpu.cfs_quota_us`), microseconds; None: no quota.
    pub cpu_quota_us: Option<u64>,
    /// The period of `cpu_quota_us`, microseconds.
    pub cpu_period_us: Option<u64>,
    /// The CPUs the group may run on (`cpuset.cpus.effective`, v1
    /// `cpuset.effective_cpus`) when not all the machine's online CPUs.
    pub cpuset_cpus: Option<String>,
    /// The dirty-page thresholds of the group's own writeback domain at the
    /// start (cgroup v2 with a memory limit and the io controller: the
    /// kernel throttles a writer at the lower of these and the global
    /// ones): `vm.dirty_ratio` (or `dirty_bytes`' share of the machine) of
    /// the memory the group could dirty, bytes. None under v1, which has
    /// no per-group dirty limits: the global thresholds apply there.
    pub dirty_threshold_bytes: Option<u64>,
    pub dirty_background_threshold_bytes: Option<u64>,
}

impl CgroupLimits {
    /// Any limit that changes what a benchmark measures (memory, io or CPU).
    pub(crate) fn any(&self) -> bool {
        self.memory_max_bytes.is_some()
            || self.memory_high_bytes.is_some()
            || self.io.iter().any(IoLimit::is_set)
            || self.cpu_quota_us.is_some()
            || self.cpuset_cpus.is_some()
    }

    /// The CPU quota in CPUs (0.5: half of one CPU's time).
    pub(crate) fn cpu_quota_cpus(&self) -> Option<f64> {
        let (quota, period) = (self.cpu_quota_us?, self.cpu_period_us?);
        (period > 0).then(|| quota as f64 / period as f64)
    }
}

/// A worker whose process was in another group than the run's when it started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct WorkerCgroup {
    pub job: String,
    pub worker: u32,
    /// Its group (the memory controller's, else the first listed), as `/proc/PID/cgroup` names it.
    pub path: String,
}

/// The run's control groups and their limits, found when the run started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CgroupRecord {
    pub place: CgroupPlace,
    pub limits: CgroupLimits,
    pub workers_elsewhere: Vec<WorkerCgroup>,
}

/// The run's group at one sample (counters cumulative since the group was
/// made). 0 where the version has no such file or the read failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CgroupSample {
    /// v2 `memory.current`, v1 `memory.usage_in_bytes`, bytes.
    pub memory_usage_bytes: u64,
    /// Page cache charged to the group (`memory.stat` v2 `file`, v1 `total_cache`), bytes.
    pub file_bytes: u64,
    /// v2 `file_dirty`, v1 `total_dirty`, bytes.
    pub dirty_bytes: u64,
    /// v2 `file_writeback`, v1 `total_writeback`, bytes.
    pub writeback_bytes: u64,
    /// Times the group hit its memory limit, cumulative (v2 `memory.events`
    /// `max`, v1 `memory.failcnt`).
    pub memory_max_events: u64,
    /// Times it went over `memory.high`, cumulative (v2 only).
    pub memory_high_events: u64,
    /// OOM kills in the group, cumulative (v2 `memory.events` `oom_kill`,
    /// v1 `memory.oom_control` `oom_kill`).
    pub oom_kills: u64,
    /// Pages scanned and reclaimed in the group, cumulative (v2 `memory.stat`
    /// `pgscan`/`pgsteal`; v1 has no such counters: 0).
    pub pgscan_pages: u64,
    pub pgsteal_pages: u64,
    /// Stall time on memory of the group's tasks (v2 `memory.pressure`),
    /// cumulative microseconds; v1: 0.
    pub memory_some_us: u64,
    pub memory_full_us: u64,
    /// CFS periods, the periods the group was throttled in, and the time it
    /// was throttled (`cpu.stat`), cumulative; nanoseconds.
    pub cpu_periods: u64,
    pub cpu_throttled_periods: u64,
    pub cpu_throttled_ns: u64,
    /// The group's own dirty thresholds at this sample (see
    /// `CgroupLimits::dirty_threshold_bytes`; they follow the group's
    /// page cache and free room), bytes; 0 where the group has none.
    pub dirty_threshold_bytes: u64,
    pub dirty_background_threshold_bytes: u64,
}

/// The io controller's counters of the run's group on one device, cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CgroupIoCounters {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
}

/// One device's io counters for the run's group (v2 `io.stat` rbytes/wbytes/
/// rios/wios, v1 `blkio.throttle.io_service_bytes`/`io_serviced`), one entry per sample.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CgroupIoSeries {
    /// "major:minor".
    pub device: String,
    /// The device's kernel name ("loop3").
    pub name: String,
    pub counter_series: Vec<CgroupIoCounters>,
}
