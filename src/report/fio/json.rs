//! fio's `--output-format=json` and `json+` layouts, so tools that parse fio's
//! JSON read iolens runs. fio's key names live only here. iolens adds
//! `cpu_ns_per_io` per job and, last, one top-level object `iolens` with the
//! run's findings and each rate-limited job's schedule (fio parsers ignore
//! unknown keys). Every float goes
//! through `finite`, so the output is valid JSON even if a figure is NaN.
//! json+ adds each latency histogram as `bins` (count per bucket, keyed by the
//! bucket's value in ns) wherever there are percentiles, as fio does.

use serde::ser::{Serialize, Serializer};

use crate::model::{
    window_mean, ClusterReport, DirReport, DiskUtil, Finding, JobReport, LatSummary, PrioReport,
    RankRun, RunReport, ScheduleReport, SteadyStateReport,
};
use crate::report::fio::{
    ctime_utc, depth_pct, group_bw, lat_pct, runtime_ms, share_of_group, shown_dirs,
    DEPTH_BATCH_LABELS, DEPTH_LEVEL_LABELS, LAT_LABELS, LAT_MS_LABELS,
};

/// Whether latency histograms (`bins`) are included: fio's `json` or `json+`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    Json,
    JsonPlus,
}

/// The report as fio's JSON document (fio's client-mode document for a run on
/// several ranks).
pub(in crate::report) fn render(report: &RunReport, detail: Detail) -> String {
    serde_json::to_string_pretty(&Document::new(report, detail))
        .expect("fio JSON has only string keys and finite numbers")
}

/// The same document on one line (for `--status-interval`: one document per line).
pub(in crate::report) fn render_line(report: &RunReport, detail: Detail) -> String {
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
pub(crate) const FIO_RELEASE: &str = "fio-3.33";

/// The version fio's formats carry: fio's `fio-MAJOR.MINOR` first, so parsers
/// that check for `fio-` (as in `fio --version`) accept it, then iolens' own.
pub(crate) fn fio_version(tool_version: &str) -> String {
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
    /// The rate-limited jobs' schedules, as in iolens' own model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    schedules: Vec<JobSchedule<'a>>,
}

/// One job's schedule, named with the job.
#[derive(serde::Serialize)]
struct JobSchedule<'a> {
    jobname: &'a str,
    #[serde(flatten)]
    schedule: &'a ScheduleReport,
}

impl<'a> IolensPart<'a> {
    fn of(report: &'a RunReport) -> Self {
        IolensPart {
            findings: &report.findings,
            schedules: report
                .jobs
                .iter()
                .filter_map(|job| {
                    Some(JobSchedule {
                        jobname: &job.name,
                        schedule: job.schedule.as_ref()?,
                    })
                })
                .collect(),
        }
    }
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
            iolens: IolensPart::of(report),
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
            iolens: IolensPart::of(report),
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
mod tests;
