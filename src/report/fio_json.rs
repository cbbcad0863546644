//! fio's `--output-format=json` and `json+` layouts, so tools that parse fio's
//! JSON read iolens runs. fio's key names live only here. iolens adds
//! `cpu_ns_per_io` per job and, last, one top-level object `iolens` with the
//! run's findings (fio parsers ignore unknown keys). Every float goes
//! through `finite`, so the output is valid JSON even if a figure is NaN.
//! json+ adds each latency histogram as `bins` (count per bucket, keyed by the
//! bucket's value in ns) wherever there are percentiles, as fio does.

use serde::ser::{Serialize, Serializer};

use crate::model::{
    window_mean, ClusterReport, DirReport, DiskUtil, Finding, JobReport, LatSummary, PrioReport,
    RankRun, RunReport, SteadyStateReport,
};
use crate::report::fio_style::{
    ctime_utc, depth_pct, group_bw, lat_pct, runtime_ms, share_of_group, shown_dirs,
    DEPTH_BATCH_LABELS, DEPTH_LEVEL_LABELS, LAT_LABELS, LAT_MS_LABELS,
};

/// Whether latency histograms (`bins`) are included: fio's `json` or `json+`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    Json,
    JsonPlus,
}

/// The report as fio's JSON document (fio's client-mode document for a run on
/// several ranks).
pub fn render(report: &RunReport, detail: Detail) -> String {
    serde_json::to_string_pretty(&Document::new(report, detail))
        .expect("fio JSON has only string keys and finite numbers")
}

/// The same document on one line (for `--status-interval`: one document per line).
pub fn render_line(report: &RunReport, detail: Detail) -> String {
    serde_json::to_string(&Document::new(report, detail))
        .expect("fio JSON has only string keys and finite numbers")
}

/// fio's document of a run on one host, or the one its client writes for several.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Document<'a> {
    Jobs(FioOutput<'a>),
    Clients(FioClientOutput<'a>),
}

impl<'a> Document<'a> {
    fn new(report: &'a RunReport, detail: Detail) -> Self {
        match &report.cluster {
            Some(cluster) => Document::Clients(FioClientOutput::new(report, cluster, detail)),
            None => Document::Jobs(FioOutput::new(report, detail)),
        }
    }
}

/// Keys in insertion order (fio's order), serialized as a JSON object.
struct OrderedMap<V>(Vec<(String, V)>);

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<V> OrderedMap<V> {
    fn labelled(labels: &[&str], values: impl IntoIterator<Item = V>) -> Self {
        OrderedMap(labels.iter().map(|l| l.to_string()).zip(values).collect())
    }
}

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// The fio release whose options and output iolens follows.
pub const FIO_RELEASE: &str = "fio-3.33";

/// The version fio's formats carry: fio's `fio-MAJOR.MINOR` first, so parsers
/// that check for `fio-` (as in `fio --version`) accept it, then iolens' own.
pub fn fio_version(tool_version: &str) -> String {
    format!("{FIO_RELEASE}-iolens-{tool_version}")
}

#[derive(serde::Serialize)]
struct FioOutput<'a> {
    #[serde(rename = "fio version")]
    fio_version: String,
    timestamp: u64,
    timestamp_ms: u64,
    time: String,
    #[serde(rename = "global options", skip_serializing_if = "Option::is_none")]
    global_options: Option<OrderedMap<String>>,
    jobs: Vec<FioJob>,
    /// Left out, as fio does, when no target is on a block device.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    disk_util: Vec<FioDisk>,
    iolens: IolensPart<'a>,
}

/// What iolens adds to fio's document, in one object fio's readers skip.
#[derive(serde::Serialize)]
struct IolensPart<'a> {
    findings: &'a [Finding],
}

impl<'a> FioOutput<'a> {
    fn new(report: &'a RunReport, detail: Detail) -> Self {
        let options = |pairs: &[(String, String)]| OrderedMap(pairs.to_vec());
        FioOutput {
            fio_version: fio_version(&report.tool_version),
            timestamp: report.started_unix_ms / 1000,
            timestamp_ms: report.started_unix_ms,
            time: ctime_utc(report.started_unix_ms / 1000),
            global_options: (!report.global_options.is_empty())
                .then(|| options(&report.global_options)),
            jobs: report
                .jobs
                .iter()
                .map(|job| FioJob::new(job, report, detail))
                .collect(),
            disk_util: report.disks.iter().map(FioDisk::new).collect(),
            iolens: IolensPart {
                findings: &report.findings,
            },
        }
    }
}

/// What fio's client (`fio --client=…`) writes: each server's job entries, each
/// with the server's host, and when there are several servers one entry of all
/// of them, "All clients". A rank is one of fio's servers here; `rank` is iolens'.
#[derive(serde::Serialize)]
struct FioClientOutput<'a> {
    #[serde(rename = "fio version")]
    fio_version: String,
    timestamp: u64,
    time: String,
    /// fio 3.33 writes one object, from the first server.
    #[serde(rename = "global options")]
    global_options: OrderedMap<String>,
    client_stats: Vec<FioClientJob>,
    /// Each host's disks, each with its host, as fio's client gives each server's.
    disk_util: Vec<FioClientDisk>,
    iolens: IolensPart<'a>,
}

/// A disk of one host: fio's keys, then the server's host and port as fio's
/// client adds them; `rank` (the rank that sampled it) is iolens'.
#[derive(serde::Serialize)]
struct FioClientDisk {
    #[serde(flatten)]
    disk: FioDisk,
    hostname: String,
    port: u16,
    rank: u32,
}

#[derive(serde::Serialize)]
struct FioClientJob {
    #[serde(flatten)]
    job: FioJob,
    hostname: String,
    /// fio's server port; ranks have none.
    port: u16,
    rank: u32,
}

impl<'a> FioClientOutput<'a> {
    fn new(report: &'a RunReport, cluster: &'a ClusterReport, detail: Detail) -> Self {
        // fio's client leaves out eta and elapsed, and of "All clients" the job's options
        let entry = |job: &JobReport, of: &RunReport, rank: &RankRun, all: bool| {
            let mut job = FioJob::new(job, of, detail);
            (job.eta, job.elapsed) = (None, None);
            if all {
                (job.job_options, job.latency_target) = (None, None);
            }
            FioClientJob {
                job,
                hostname: rank.hostname.clone(),
                port: 0,
                rank: rank.rank,
            }
        };
        let mut client_stats: Vec<FioClientJob> = cluster
            .ranks
            .iter()
            .flat_map(|rank| {
                let jobs = rank.report.jobs.iter();
                jobs.map(move |job| entry(job, &rank.report, rank, false))
            })
            .collect();
        // fio sums its clients when there are several, and gives the sum the last one's host
        if let (Some(last), true) = (cluster.ranks.last(), cluster.ranks.len() > 1) {
            let all = &cluster.all_clients;
            client_stats.extend(all.jobs.iter().map(|job| entry(job, all, last, true)));
        }
        FioClientOutput {
            fio_version: fio_version(&report.tool_version),
            timestamp: report.started_unix_ms / 1000,
            time: ctime_utc(report.started_unix_ms / 1000),
            global_options: OrderedMap(report.global_options.clone()),
            client_stats,
            disk_util: cluster
                .host_disks()
                .flat_map(|rank| {
                    rank.report.disks.iter().map(|disk| FioClientDisk {
                        disk: FioDisk::new(disk),
                        hostname: rank.hostname.clone(),
                        port: 0,
                        rank: rank.rank,
                    })
                })
                .collect(),
            iolens: IolensPart {
                findings: &report.findings,
            },
        }
    }
}

#[derive(serde::Serialize)]
struct FioJob {
    jobname: String,
    groupid: u32,
    error: i32,
    /// eta and elapsed are left out of fio's client document.
    #[serde(skip_serializing_if = "Option::is_none")]
    eta: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    elapsed: Option<u64>,
    /// Left out of fio's "All clients" entry, as the latency target below.
    #[serde(rename = "job options", skip_serializing_if = "Option::is_none")]
    job_options: Option<OrderedMap<String>>,
    /// The directions and sync are left out when `unified_rw_reporting=mixed` (as fio).
    #[serde(flatten)]
    dirs: Option<FioDirs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mixed: Option<FioDir>,
    job_runtime: u64,
    usr_cpu: f64,
    sys_cpu: f64,
    ctx: u64,
    majf: u64,
    minf: u64,
    iodepth_level: OrderedMap<f64>,
    iodepth_submit: OrderedMap<f64>,
    iodepth_complete: OrderedMap<f64>,
    latency_ns: OrderedMap<f64>,
    latency_us: OrderedMap<f64>,
    latency_ms: OrderedMap<f64>,
    /// Only for jobs with `continue_on_error`, as fio.
    #[serde(skip_serializing_if = "Option::is_none")]
    total_err: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_error: Option<i32>,
    #[serde(flatten)]
    latency_target: Option<FioLatencyTarget>,
    /// fio writes the job's description here, and only when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    desc: Option<String>,
    /// Only for jobs with `steadystate`, as fio.
    #[serde(skip_serializing_if = "Option::is_none")]
    steadystate: Option<FioSteadyState>,
    cpu_ns_per_io: f64,
}

#[derive(serde::Serialize)]
struct FioLatencyTarget {
    latency_depth: u64,
    latency_target: u64,
    latency_percentile: f64,
    latency_window: u64,
}

#[derive(serde::Serialize)]
struct FioSteadyState {
    ss: String,
    duration: u64,
    attained: u8,
    criterion: String,
    max_deviation: f64,
    slope: f64,
    data: FioSteadyStateData,
}

#[derive(serde::Serialize)]
struct FioSteadyStateData {
    bw_mean: u64,
    iops_mean: u64,
    iops: Vec<u64>,
    bw: Vec<u64>,
}

impl FioSteadyState {
    fn new(ss: &SteadyStateReport) -> Self {
        let percent = if ss.limit_is_percent { "%" } else { "" };
        let (iops, bw) = ss.full_window();
        FioSteadyState {
            ss: format!("{}:{:.6}{percent}", ss.criterion, ss.limit),
            duration: ss.duration_s,
            attained: u8::from(ss.attained),
            criterion: format!("{:.6}{percent}", finite(ss.value)),
            max_deviation: finite(ss.max_deviation),
            slope: finite(ss.slope),
            data: FioSteadyStateData {
                bw_mean: window_mean(&bw),
                iops_mean: window_mean(&iops),
                iops,
                bw,
            },
        }
    }
}

/// fio's `elapsed`: the run's time so far in whole seconds, rounded up from whole
/// ms; a saved report without it gives the job's runtime.
fn elapsed_s(report: &RunReport, job: &JobReport) -> u64 {
    let ns = report.elapsed_ns.unwrap_or(job.runtime_ns);
    (ns / 1_000_000).div_ceil(1000)
}

#[derive(serde::Serialize)]
struct FioDirs {
    read: FioDir,
    write: FioDir,
    trim: FioDir,
    sync: FioSync,
}

impl FioJob {
    fn new(job: &JobReport, report: &RunReport, detail: Detail) -> Self {
        let group_bw = group_bw(report, job.groupid);
        let depth = |labels: &[&str], pcts: &[f64; 7]| {
            OrderedMap::labelled(labels, pcts.map(|p| finite(depth_pct(p))))
        };
        let lat = |labels: &[&str], pcts: &[f64]| {
            OrderedMap::labelled(labels, pcts.iter().map(|&p| finite(lat_pct(p))))
        };
        let buckets = &job.lat_buckets;
        let target = job.latency_target.as_ref();
        // iodepth as resolved for the job; fio reports it as latency_depth.
        let iodepth = job
            .options
            .iter()
            .find(|(key, _)| key == "iodepth")
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(1);
        FioJob {
            jobname: job.name.clone(),
            groupid: job.groupid,
            error: job.errno,
            eta: Some(0),
            elapsed: Some(elapsed_s(report, job)),
            job_options: Some(OrderedMap(job.options.clone())),
            dirs: (!job.mixed.as_ref().is_some_and(|m| m.only)).then(|| FioDirs {
                read: FioDir::new(&job.dirs[0], group_bw[0], detail),
                write: FioDir::new(&job.dirs[1], group_bw[1], detail),
                trim: FioDir::new(&job.dirs[2], group_bw[2], detail),
                sync: FioSync {
                    total_ios: job.sync.total_ios,
                    lat_ns: FioLat::new(job.sync.lat.as_ref(), detail),
                },
            }),
            mixed: shown_dirs(report, job)
                .into_iter()
                .find(|(name, _, _)| *name == "mixed")
                .map(|(_, dir, group_bw)| FioDir::new(dir, group_bw, detail)),
            job_runtime: job.runtime_ns / 1_000_000,
            usr_cpu: finite(job.cpu.usr_pct),
            sys_cpu: finite(job.cpu.sys_pct),
            ctx: job.cpu.ctx,
            majf: job.cpu.majf,
            minf: job.cpu.minf,
            iodepth_level: depth(&DEPTH_LEVEL_LABELS, &job.depth.level_pct),
            iodepth_submit: depth(&DEPTH_BATCH_LABELS, &job.depth.submit_pct),
            iodepth_complete: depth(&DEPTH_BATCH_LABELS, &job.depth.complete_pct),
            latency_ns: lat(&LAT_LABELS, &buckets.ns_pct),
            latency_us: lat(&LAT_LABELS, &buckets.us_pct),
            latency_ms: lat(&LAT_MS_LABELS, &buckets.ms_pct),
            total_err: job.tolerated_errors.map(|e| e.total),
            first_error: job.tolerated_errors.map(|e| e.first_errno),
            // Without a target these are fio's values: the job's iodepth and no target.
            latency_target: Some(FioLatencyTarget {
                latency_depth: target.map_or(iodepth, |t| u64::from(t.depth)),
                latency_target: target.map_or(0, |t| t.target_ns),
                latency_percentile: target.map_or(100.0, |t| t.percentile),
                // fio gives the window in microseconds.
                latency_window: target.map_or(0, |t| t.window_ns / 1000),
            }),
            desc: job.description.clone(),
            steadystate: job.steadystate.as_ref().map(FioSteadyState::new),
            cpu_ns_per_io: finite(job.cpu.cpu_ns_per_io),
        }
    }
}

#[derive(serde::Serialize)]
struct FioDir {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    /// KiB/s
    bw: u64,
    iops: f64,
    /// ms
    runtime: u64,
    total_ios: u64,
    short_ios: u64,
    drop_ios: u64,
    slat_ns: FioLat,
    clat_ns: FioLat,
    lat_ns: FioLat,
    /// Per-priority latencies (`cmdprio_*`), only with two priorities or more, as fio.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    prios: Vec<FioPrio>,
    bw_min: u64,
    bw_max: u64,
    bw_agg: f64,
    bw_mean: f64,
    bw_dev: f64,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: f64,
    iops_stddev: f64,
    iops_samples: u64,
}

impl FioDir {
    fn new(dir: &DirReport, group_bw: f64, detail: Detail) -> Self {
        const KIB: f64 = 1024.0;
        let bw = &dir.bw_samples;
        let iops = &dir.iops_samples;
        // `as u64` saturates, and maps NaN to 0.
        FioDir {
            io_bytes: dir.io_bytes,
            io_kbytes: dir.io_bytes / 1024,
            bw_bytes: dir.bw_bytes_per_sec as u64,
            bw: (dir.bw_bytes_per_sec / KIB) as u64,
            iops: finite(dir.iops),
            runtime: runtime_ms(dir.runtime_ns),
            total_ios: dir.total_ios,
            short_ios: dir.short_ios,
            drop_ios: 0,
            slat_ns: FioLat::new(dir.slat.as_ref(), detail),
            clat_ns: FioLat::new(dir.clat.as_ref(), detail),
            lat_ns: FioLat::new(dir.lat.as_ref(), detail),
            prios: dir.prios.iter().map(|p| FioPrio::new(p, detail)).collect(),
            bw_min: (bw.min / KIB) as u64,
            bw_max: (bw.max / KIB) as u64,
            bw_agg: if bw.samples > 0 {
                finite(share_of_group(bw.mean, group_bw))
            } else {
                0.0
            },
            bw_mean: finite(bw.mean / KIB),
            bw_dev: finite(bw.stddev / KIB),
            bw_samples: bw.samples,
            iops_min: iops.min as u64,
            iops_max: iops.max as u64,
            iops_mean: finite(iops.mean),
            iops_stddev: finite(iops.stddev),
            iops_samples: iops.samples,
        }
    }
}

/// One priority's latencies: fio names them `clat_ns`, or `lat_ns` with lat_percentiles.
#[derive(serde::Serialize)]
struct FioPrio {
    prioclass: u16,
    prio: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    clat_ns: Option<FioLat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lat_ns: Option<FioLat>,
}

impl FioPrio {
    fn new(p: &PrioReport, detail: Detail) -> Self {
        let lat = Some(FioLat::new(Some(&p.lat), detail));
        let (clat_ns, lat_ns) = if p.total_latency {
            (None, lat)
        } else {
            (lat, None)
        };
        FioPrio {
            prioclass: p.prioclass,
            prio: p.prio,
            clat_ns,
            lat_ns,
        }
    }
}

#[derive(serde::Serialize)]
struct FioLat {
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    #[serde(rename = "N")]
    n: u64,
    /// Only when there are percentiles, as fio does.
    #[serde(skip_serializing_if = "Option::is_none")]
    percentile: Option<OrderedMap<u64>>,
    /// json+ only, and only beside percentiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    bins: Option<OrderedMap<u64>>,
}

impl FioLat {
    /// Zeros for a latency that was not measured, like fio.
    fn new(summary: Option<&LatSummary>, detail: Detail) -> Self {
        let Some(s) = summary else {
            return FioLat {
                min: 0,
                max: 0,
                mean: 0.0,
                stddev: 0.0,
                n: 0,
                percentile: None,
                bins: None,
            };
        };
        let with_bins = detail == Detail::JsonPlus && !s.percentiles.is_empty();
        FioLat {
            min: s.min_ns,
            max: s.max_ns,
            mean: finite(s.mean_ns),
            stddev: finite(s.stddev_ns),
            n: s.samples,
            percentile: (!s.percentiles.is_empty()).then(|| {
                OrderedMap(
                    s.percentiles
                        .iter()
                        .map(|&(p, ns)| (format!("{p:.6}"), ns))
                        .collect(),
                )
            }),
            bins: with_bins
                .then(|| OrderedMap(s.bins.iter().map(|(ns, &n)| (ns.to_string(), n)).collect())),
        }
    }
}

#[derive(serde::Serialize)]
struct FioSync {
    total_ios: u64,
    lat_ns: FioLat,
}

#[derive(serde::Serialize)]
struct FioDisk {
    name: String,
    read_ios: u64,
    write_ios: u64,
    read_merges: u64,
    write_merges: u64,
    read_ticks: u64,
    write_ticks: u64,
    in_queue: u64,
    util: f64,
}

impl FioDisk {
    fn new(d: &DiskUtil) -> Self {
        FioDisk {
            name: d.name.clone(),
            read_ios: d.read_ios,
            write_ios: d.write_ios,
            read_merges: d.read_merges,
            write_merges: d.write_merges,
            read_ticks: d.read_ticks_ms,
            write_ticks: d.write_ticks_ms,
            in_queue: d.in_queue_ms,
            util: finite(d.util_pct),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        CpuReport, DepthReport, GroupDirSummary, GroupReport, LatBuckets, SampleSummary,
        SyncReport, SCHEMA_VERSION,
    };
    use serde_json::Value;
    use std::collections::BTreeMap;

    // Key sets of fio 3.33's JSON output (`--output-format=json`, a randrw
    // libaio job with fsync), by object.
    const TOP_KEYS: &[&str] = &[
        "fio version",
        "timestamp",
        "timestamp_ms",
        "time",
        "jobs",
        "disk_util",
    ];
    const JOB_KEYS: &[&str] = &[
        "jobname",
        "groupid",
        "error",
        "eta",
        "elapsed",
        "job options",
        "read",
        "write",
        "trim",
        "sync",
        "job_runtime",
        "usr_cpu",
        "sys_cpu",
        "ctx",
        "majf",
        "minf",
        "iodepth_level",
        "iodepth_submit",
        "iodepth_complete",
        "latency_ns",
        "latency_us",
        "latency_ms",
        "latency_depth",
        "latency_target",
        "latency_percentile",
        "latency_window",
    ];
    const DIR_KEYS: &[&str] = &[
        "io_bytes",
        "io_kbytes",
        "bw_bytes",
        "bw",
        "iops",
        "runtime",
        "total_ios",
        "short_ios",
        "drop_ios",
        "slat_ns",
        "clat_ns",
        "lat_ns",
        "bw_min",
        "bw_max",
        "bw_agg",
        "bw_mean",
        "bw_dev",
        "bw_samples",
        "iops_min",
        "iops_max",
        "iops_mean",
        "iops_stddev",
        "iops_samples",
    ];
    const LAT_KEYS: &[&str] = &["min", "max", "mean", "stddev", "N"];
    const SYNC_KEYS: &[&str] = &["total_ios", "lat_ns"];
    const DISK_KEYS: &[&str] = &[
        "name",
        "read_ios",
        "write_ios",
        "read_merges",
        "write_merges",
        "read_ticks",
        "write_ticks",
        "in_queue",
        "util",
    ];
    const PERCENTILE_KEYS: &[&str] = &[
        "1.000000",
        "5.000000",
        "10.000000",
        "20.000000",
        "30.000000",
        "40.000000",
        "50.000000",
        "60.000000",
        "70.000000",
        "80.000000",
        "90.000000",
        "95.000000",
        "99.000000",
        "99.500000",
        "99.900000",
        "99.950000",
        "99.990000",
    ];

    /// Compares key sets; `Value` keeps keys sorted, so order is checked on the text.
    fn assert_keys(v: &Value, expected: &[&str]) {
        let mut expected = expected.to_vec();
        expected.sort_unstable();
        let actual: Vec<&str> = v
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(actual, expected);
    }

    fn summary(samples: u64, percentiles: Vec<(f64, u64)>) -> LatSummary {
        LatSummary {
            min_ns: 40_000,
            max_ns: 400_000,
            mean_ns: 69_685.2,
            stddev_ns: 20_310.4,
            samples,
            percentiles,
            bins: Default::default(),
        }
    }

    fn report(mean_ns: f64) -> RunReport {
        let percentiles: Vec<(f64, u64)> = crate::job::spec::DEFAULT_PERCENTILES
            .iter()
            .map(|&p| (p, 66_048))
            .collect();
        let bins = BTreeMap::from([(1128, 1000), (66_048, 992)]);
        let read = DirReport {
            io_bytes: 8_159_232,
            total_ios: 1992,
            short_ios: 0,
            runtime_ns: 157_400_000,
            bw_bytes_per_sec: 51_969_630.0,
            iops: 12_687.9,
            slat: None,
            clat: Some(LatSummary {
                bins: bins.clone(),
                ..summary(1992, percentiles.clone())
            }),
            lat: Some(LatSummary {
                mean_ns,
                ..summary(1992, Vec::new())
            }),
            bw_samples: SampleSummary {
                min: 105_455_616.0,
                max: 121_053_184.0,
                mean: 114_660_693.0,
                stddev: 8_170_313.0,
                samples: 3,
            },
            iops_samples: SampleSummary {
                min: 25_746.0,
                max: 29_554.0,
                mean: 27_993.3,
                stddev: 1994.7,
                samples: 3,
            },
            prios: Vec::new(),
        };
        let job = JobReport {
            description: None,
            tolerated_errors: None,
            name: "t\u{1}\"x".into(),
            groupid: 0,
            workers: 1,
            pid: None,
            error: None,
            errno: 0,
            options: vec![
                ("rw".into(), "randrw".into()),
                ("iodepth".into(), "8".into()),
            ],
            dirs: [read, DirReport::default(), DirReport::default()],
            mixed: None,
            sync: SyncReport {
                total_ios: 3,
                lat: Some(LatSummary {
                    bins: BTreeMap::from([(192_512, 3)]),
                    ..summary(3, percentiles)
                }),
            },
            cpu: CpuReport {
                usr_pct: 5.35,
                sys_pct: 28.75,
                ctx: 23157,
                minf: 15,
                cpu_ns_per_io: 1234.5,
                ..Default::default()
            },
            depth: DepthReport {
                level_pct: [0.004, 0.0, 0.0, 99.996, 0.0, 0.0, 0.0],
                ..Default::default()
            },
            lat_buckets: LatBuckets {
                ns_pct: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.001, 0.0, 0.0],
                ..Default::default()
            },
            runtime_ns: 157_400_000,
            significant_figures: 4,
            steadystate: None,
            latency_target: None,
        };
        RunReport {
            schema_version: SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            started_unix_ms: 1_795_305_010_426,
            elapsed_ns: None,
            command_line: Vec::new(),
            global_options: Vec::new(),
            jobs: vec![job],
            groups: vec![GroupReport {
                id: 0,
                mixed: None,
                dirs: [
                    GroupDirSummary {
                        bw_bytes_per_sec: 117_392_055.0,
                        ..Default::default()
                    },
                    GroupDirSummary::default(),
                    GroupDirSummary::default(),
                ],
            }],
            disks: vec![DiskUtil {
                name: "vda".into(),
                read_ios: 53_398,
                util_pct: 76.75,
                ..Default::default()
            }],
            interrupted: false,
            observations: Default::default(),
            environment: Default::default(),
            findings: Vec::new(),
            terminated: None,
            verify: Vec::new(),
            cluster: None,
        }
    }

    fn parse(report: &RunReport) -> Value {
        serde_json::from_str(&render(report, Detail::Json)).expect("valid JSON")
    }

    #[test]
    fn a_steady_state_window_not_yet_full_is_padded_with_zeros_as_in_fio() {
        let ss = crate::testutil::steady_state(4, &[200, 100], &[8192, 4096]);
        let json = serde_json::to_value(FioSteadyState::new(&ss)).unwrap();
        let data = &json["data"];
        assert_eq!(
            data["iops"],
            serde_json::json!([200, 100, 0, 0]),
            "fio writes one sample per second of ss_dur, zeros where none was taken: {data}"
        );
        assert_eq!(data["bw"], serde_json::json!([8192, 4096, 0, 0]), "{data}");
        assert_eq!(
            data["iops_mean"], 75,
            "the mean is over the whole window: {data}"
        );
        assert_eq!(
            data["bw_mean"], 3072,
            "the mean is over the whole window: {data}"
        );
    }

    #[test]
    fn key_sets_match_fio() {
        let text = render(&report(69_716.2), Detail::Json);
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        let mut top_keys = TOP_KEYS.to_vec();
        top_keys.push("iolens");
        assert_keys(&doc, &top_keys);
        let positions: Vec<usize> = top_keys
            .iter()
            .map(|key| text.find(&format!("\"{key}\"")).unwrap())
            .collect();
        assert!(positions.is_sorted(), "top-level keys out of fio's order");
        let job = &doc["jobs"][0];
        let mut expected_job_keys = JOB_KEYS.to_vec();
        expected_job_keys.push("cpu_ns_per_io");
        assert_keys(job, &expected_job_keys);
        for dir in ["read", "write", "trim"] {
            assert_keys(&job[dir], DIR_KEYS);
            assert_keys(&job[dir]["slat_ns"], LAT_KEYS);
            assert_keys(&job[dir]["lat_ns"], LAT_KEYS);
        }
        let mut with_percentiles = LAT_KEYS.to_vec();
        with_percentiles.push("percentile");
        assert_keys(&job["read"]["clat_ns"], &with_percentiles);
        assert_keys(&job["write"]["clat_ns"], LAT_KEYS);
        assert_keys(&job["read"]["clat_ns"]["percentile"], PERCENTILE_KEYS);
        assert_keys(&job["sync"], SYNC_KEYS);
        assert_keys(&job["sync"]["lat_ns"], &with_percentiles);
        assert_keys(&job["iodepth_level"], &DEPTH_LEVEL_LABELS);
        assert_keys(&job["iodepth_submit"], &DEPTH_BATCH_LABELS);
        assert_keys(&job["iodepth_complete"], &DEPTH_BATCH_LABELS);
        assert_keys(&job["latency_ns"], &LAT_LABELS);
        assert_keys(&job["latency_us"], &LAT_LABELS);
        assert_keys(&job["latency_ms"], &LAT_MS_LABELS);
        assert_keys(&doc["disk_util"][0], DISK_KEYS);
    }

    #[test]
    fn findings_are_in_the_iolens_object_after_fios_keys() {
        let mut with_finding = report(69_716.2);
        with_finding.findings.push(Finding {
            code: "served-from-cache".into(),
            severity: crate::model::Severity::Warning,
            title: "cached".into(),
            evidence: vec!["the job read 16 MiB while the device read 0 B".into()],
            advice: "drop the cache".into(),
            at_ns: Some(5_000),
        });
        for detail in [Detail::Json, Detail::JsonPlus] {
            let doc: Value =
                serde_json::from_str(&render(&with_finding, detail)).expect("valid JSON");
            let finding = &doc["iolens"]["findings"][0];
            assert_eq!(
                finding,
                &serde_json::json!({
                    "code": "served-from-cache",
                    "severity": "warning",
                    "title": "cached",
                    "evidence": ["the job read 16 MiB while the device read 0 B"],
                    "advice": "drop the cache",
                    "at_ns": 5000,
                }),
                "{detail:?}: expected the finding in iolens.findings, saw {doc}"
            );
        }
        let without = parse(&report(69_716.2));
        assert_eq!(
            without["iolens"],
            serde_json::json!({ "findings": [] }),
            "expected an empty findings list without findings, saw {}",
            without["iolens"]
        );
    }

    #[test]
    fn elapsed_is_the_runs_time_for_every_job_as_fio() {
        let mut two = report(69_716.2);
        let mut second = two.jobs[0].clone();
        second.runtime_ns = 2_000_000_000;
        two.jobs.push(second);
        two.elapsed_ns = Some(3_001_000_000);
        let doc = parse(&two);
        let elapsed: Vec<Option<u64>> = doc["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|job| job["elapsed"].as_u64())
            .collect();
        assert_eq!(
            elapsed,
            [Some(4), Some(4)],
            "expected the run's 3001 ms rounded up to whole seconds for both jobs"
        );
        two.elapsed_ns = Some(3_000_999_999);
        assert_eq!(
            parse(&two)["jobs"][1]["elapsed"],
            3,
            "expected whole ms first, as fio"
        );
    }

    #[test]
    fn values_use_fios_units() {
        let doc = parse(&report(69_716.2));
        assert_eq!(doc["fio version"], "fio-3.33-iolens-0.1.0");
        assert_eq!(doc["timestamp"], 1_795_305_010u64);
        assert_eq!(doc["time"], "Sat Nov 21 23:50:10 2026");
        let job = &doc["jobs"][0];
        assert_eq!(job["jobname"], "t\u{1}\"x");
        assert_eq!(job["job options"]["iodepth"], "8");
        assert_eq!(job["latency_depth"], 8);
        assert_eq!(
            (job["elapsed"].as_u64(), job["job_runtime"].as_u64()),
            (Some(1), Some(157))
        );
        let read = &job["read"];
        assert_eq!(
            (read["io_kbytes"].as_u64(), read["bw"].as_u64()),
            (Some(7968), Some(50_751))
        );
        assert_eq!(
            (read["runtime"].as_u64(), read["bw_min"].as_u64()),
            (Some(158), Some(102_984)),
            "fio rounds a direction's runtime up to whole ms: 157.4 ms is 158"
        );
        assert!((read["bw_agg"].as_f64().unwrap() - 97.673).abs() < 1e-3);
        assert_eq!(read["clat_ns"]["percentile"]["99.990000"], 66_048);
        assert_eq!(read["slat_ns"]["N"], 0);
        assert_eq!(job["iodepth_level"]["1"], 0.1);
        assert_eq!(job["latency_ns"]["500"], 0.01);
        assert_eq!(job["cpu_ns_per_io"], 1234.5);
    }

    #[test]
    fn global_options_only_when_given() {
        let mut r = report(1.0);
        r.global_options = vec![("bs".into(), "4k".into())];
        assert_eq!(parse(&r)["global options"]["bs"], "4k");
        // fio's order: after "time", before "jobs".
        let text = render(&r, Detail::Json);
        let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap();
        assert!(at("time") < at("global options") && at("global options") < at("jobs"));
    }

    #[test]
    fn json_plus_adds_bins_beside_percentiles_only() {
        let r = report(1.0);
        let plain: Value = parse(&r);
        assert!(plain["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
        let plus: Value = serde_json::from_str(&render(&r, Detail::JsonPlus)).unwrap();
        let job = &plus["jobs"][0];
        let bins = job["read"]["clat_ns"]["bins"]
            .as_object()
            .expect("clat bins");
        assert_eq!(bins["1128"], 1000);
        let total: u64 = bins.values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(total, job["read"]["total_ios"].as_u64().unwrap());
        assert_eq!(job["sync"]["lat_ns"]["bins"]["192512"], 3);
        // No percentiles, no bins: fio's tools read "bins" as a non-empty histogram.
        assert!(job["read"]["lat_ns"].get("bins").is_none());
        assert!(job["write"]["clat_ns"].get("bins").is_none());
        // Numeric order, not text order ("66048" sorts before "1128" as text).
        let text = render(&r, Detail::JsonPlus);
        assert!(text.find("\"1128\"").unwrap() < text.find("\"66048\"").unwrap());
        let line = render_line(&r, Detail::JsonPlus);
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), plus);
    }

    #[test]
    fn any_figures_give_valid_json_without_nan() {
        for odd in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            1e300,
            f64::MIN_POSITIVE,
        ] {
            let mut r = report(odd);
            let dir = &mut r.jobs[0].dirs[0];
            dir.iops = odd;
            dir.bw_bytes_per_sec = odd;
            dir.bw_samples.mean = odd;
            r.jobs[0].cpu.cpu_ns_per_io = odd;
            r.disks[0].util_pct = odd;
            let text = render(&r, Detail::Json);
            assert!(
                !text.contains("NaN") && !text.contains("null"),
                "{odd}: {text}"
            );
            let doc: Value = serde_json::from_str(&text).expect("valid JSON");
            assert!(doc["jobs"][0]["read"]["iops"].is_number());
        }
    }

    /// An object's keys in the order its text has them (`Value` sorts them).
    struct KeyOrder(Vec<String>);

    impl<'de> serde::Deserialize<'de> for KeyOrder {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Keys;
            impl<'de> serde::de::Visitor<'de> for Keys {
                type Value = KeyOrder;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<KeyOrder, A::Error> {
                    let mut keys = Vec::new();
                    while let Some((key, _)) = map.next_entry::<String, serde::de::IgnoredAny>()? {
                        keys.push(key);
                    }
                    Ok(KeyOrder(keys))
                }
            }
            d.deserialize_map(Keys)
        }
    }

    /// The key order of a client document: the top level's, each disk entry's
    /// and each client entry's.
    #[derive(serde::Deserialize)]
    struct ClientKeys {
        client_stats: Vec<KeyOrder>,
        disk_util: Vec<KeyOrder>,
    }

    fn key_orders(text: &str) -> (Vec<String>, ClientKeys) {
        let top: KeyOrder = serde_json::from_str(text).expect("a JSON object");
        (
            top.0,
            serde_json::from_str(text).expect("a client document"),
        )
    }

    /// fio 3.33's client document: `fio --client=A job --client=B job
    /// --output-format=json` with two `fio --server`s on this machine.
    const FIO_CLIENTS: &str = include_str!("../../tests/fixtures/fio_client/two_servers.json");

    /// Two hosts of two ranks each; each host's first rank sampled its disk `vda`
    /// (h0: 100 reads, h1: 7 reads).
    fn two_hosts() -> RunReport {
        let rank = |rank: u32, reads: Option<u64>| {
            let mut report = report(69_716.2);
            report.disks = reads.map_or(Vec::new(), |read_ios| {
                vec![DiskUtil {
                    name: "vda".into(),
                    read_ios,
                    util_pct: 50.0,
                    ..Default::default()
                }]
            });
            RankRun {
                rank,
                local_rank: rank % 2,
                hostname: format!("h{}", rank / 2),
                total: report.jobs.first().cloned(),
                report,
                ..Default::default()
            }
        };
        let mut all_clients = report(69_716.2);
        all_clients.jobs[0].name = crate::runner::ranks::ALL_CLIENTS.into();
        let mut merged = report(69_716.2);
        merged.disks.clear();
        merged.cluster = Some(Box::new(ClusterReport {
            ranks: vec![
                rank(0, Some(100)),
                rank(1, None),
                rank(2, Some(7)),
                rank(3, None),
            ],
            all_clients,
            observed_hosts: Vec::new(),
        }));
        merged
    }

    #[test]
    fn each_hosts_disks_are_in_disk_util_with_their_host_where_fios_client_puts_them() {
        let text = render(&two_hosts(), Detail::Json);
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        let disks: Vec<(&str, &str, u64, u64)> = doc["disk_util"]
            .as_array()
            .expect("a disk_util array")
            .iter()
            .map(|d| {
                let host = d["hostname"].as_str().unwrap_or("no hostname");
                let name = d["name"].as_str().unwrap_or("no name");
                (
                    host,
                    name,
                    d["rank"].as_u64().unwrap(),
                    d["read_ios"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            disks,
            [("h0", "vda", 0, 100), ("h1", "vda", 2, 7)],
            "expected each host's vda once, with its own reads (never added across hosts), saw {disks:?}"
        );
        let (fio_top, fio) = key_orders(FIO_CLIENTS);
        let (our_top, ours) = key_orders(&text);
        assert_eq!(
            our_top,
            [fio_top, vec!["iolens".to_string()]].concat(),
            "expected fio's client document's top-level keys in its order, then iolens'"
        );
        let fio_disk = fio.disk_util[0].0.clone();
        for disk in &ours.disk_util {
            assert_eq!(
                disk.0,
                [fio_disk.clone(), vec!["rank".to_string()]].concat(),
                "expected the keys of a disk of fio's client document in its order, then rank"
            );
        }
        let fio_job = &fio.client_stats[0].0;
        let our_job: Vec<&String> = ours.client_stats[0]
            .0
            .iter()
            .filter(|k| !["cpu_ns_per_io", "rank"].contains(&k.as_str()))
            .collect();
        assert_eq!(
            our_job,
            fio_job.iter().collect::<Vec<_>>(),
            "expected a rank's entry to have the keys of a client's in fio's document"
        );
    }
}
