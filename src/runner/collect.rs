//! Turn worker results into the `RunReport` model: merge workers with
//! group_reporting, compute rates over the exact measured time, and fill
//! fio's per-group totals.

use super::error_tally::ErrorTally;
use super::plan;
use super::result::WorkerResult;
use super::RunRequest;
use crate::job::spec::{JobSpec, UnifiedRw};
use crate::model::{
    CpuReport, DirReport, DiskUtil, GroupDirSummary, GroupReport, JobReport, LatencyTargetReport,
    Mixed, RunReport, ToleratedErrors, SCHEMA_VERSION,
};
use crate::stats::{PercentileChoice, RateSeries, WorkerStats};
use iolens_sys::os::Rusage;

pub(super) fn report(
    req: &RunRequest,
    results: &[Vec<WorkerResult>],
    disks: Vec<DiskUtil>,
    started_unix_ms: u64,
) -> RunReport {
    let group_ids = plan::group_ids(req.jobs);
    let jobs: Vec<JobReport> = entries(req.jobs, &group_ids, results)
        .iter()
        .map(|members| {
            let (first, _) = members[0];
            job_report(req, group_ids[first], members)
        })
        .collect();
    let groups = group_reports(&jobs);
    RunReport {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix_ms,
        // Filled in by `run`, which knows when the run started.
        elapsed_ns: None,
        command_line: req.command_line.clone(),
        // fio's report has one global section; with several [global]s, the first job's.
        global_options: req
            .jobs
            .first()
            .map(|job| job.given.global.clone())
            .unwrap_or_default(),
        jobs,
        groups,
        disks,
        interrupted: super::stop_signal::stop_requested(req.stop),
        // Filled in by `run` too, from the sampler and the environment capture.
        observations: Default::default(),
        environment: Default::default(),
        findings: Vec::new(),
        terminated: super::stop_signal::received_signal().map(|_| "signal".to_string()),
        verify: results
            .iter()
            .flatten()
            .filter_map(|w| w.verify.clone())
            .collect(),
        cluster: None,
    }
}

/// Every worker of `results` with stats in one entry named `name`, with its
/// group's totals: fio's "All clients" entry of a run on several hosts.
pub(super) fn one_entry(req: &RunRequest, results: &[Vec<WorkerResult>], name: &str) -> RunReport {
    let group_ids = plan::group_ids(req.jobs);
    let members: Vec<Member<'_>> = entries(req.jobs, &group_ids, results)
        .into_iter()
        .flatten()
        .collect();
    let jobs: Vec<JobReport> = members
        .first()
        .map(|&(first, _)| JobReport {
            name: name.to_string(),
            ..job_report(req, group_ids[first], &members)
        })
        .into_iter()
        .collect();
    let groups = group_reports(&jobs);
    RunReport {
        jobs,
        groups,
        ..report(req, &[], Vec::new(), 0)
    }
}

/// A worker of the run: its job's index and its result.
type Member<'a> = (usize, &'a WorkerResult);

/// The workers of each reported entry, as fio forms them: walking every worker
/// in job order, one joins the entry before it when its job has
/// `group_reporting` and it is in the same group as the worker before it
/// (whatever that worker's job says); jobs with `stats=0` are left out.
fn entries<'a>(
    jobs: &[JobSpec],
    group_ids: &[u32],
    results: &'a [Vec<WorkerResult>],
) -> Vec<Vec<Member<'a>>> {
    let mut entries: Vec<Vec<Member<'a>>> = Vec::new();
    let mut last_group = None;
    for (j, job) in jobs.iter().enumerate() {
        if !job.measure.stats {
            continue;
        }
        for w in results.get(j).map_or(&[][..], Vec::as_slice) {
            let joins = job.exec.group_reporting && last_group == Some(group_ids[j]);
            match entries.last_mut() {
                Some(entry) if joins => entry.push((j, w)),
                _ => entries.push(vec![(j, w)]),
            }
            last_group = Some(group_ids[j]);
        }
    }
    entries
}

/// A worker's measured time in each direction, as fio counts it: the time of
/// the job's own I/O in the directions its pattern issues (when it moved
/// data in them; a `verify_only` job's writes take none), plus, for reads,
/// the verify passes after the writes.
fn direction_runtimes(job: &JobSpec, w: &WorkerResult) -> [u64; 3] {
    let mut issued = job.workload.rw.directions();
    issued[1] &= !job.verify.as_ref().is_some_and(|v| v.only);
    let io_ns = w.runtime_ns.saturating_sub(w.verify_ns);
    let mut runtimes = [0, 1, 2].map(|d| {
        if issued[d] && w.stats.dirs[d].ios > 0 {
            io_ns
        } else {
            0
        }
    });
    runtimes[0] += w.verify_ns;
    runtimes
}

/// One job report from one or more workers (merged by addition). Like fio, the
/// entry takes its name, description, figures and unified reporting from its
/// first worker's job, and its options, percentiles, latency target and
/// error policy from its last.
fn job_report(req: &RunRequest, groupid: u32, members: &[Member<'_>]) -> JobReport {
    let (first, _) = members[0];
    let (last, _) = members[members.len() - 1];
    let (head, job) = (&req.jobs[first], &req.jobs[last]);
    let mut merged = WorkerStats::default();
    let mut cpu = Rusage::default();
    let mut dir_runtimes = [0u64; 3];
    for &(j, w) in members {
        merged.merge(&w.stats);
        cpu = cpu.plus(&w.cpu);
        let runtimes = direction_runtimes(&req.jobs[j], w);
        for (merged, own) in dir_runtimes.iter_mut().zip(runtimes) {
            *merged = (*merged).max(own);
        }
    }
    let workers: Vec<&WorkerResult> = members.iter().map(|&(_, w)| w).collect();
    // Workers run side by side: the job's time is the longest worker's.
    let runtime_ns = workers.iter().map(|w| w.runtime_ns).max().unwrap_or(0);
    let cpu_time_ns: u64 = workers.iter().map(|w| w.runtime_ns).sum();
    let percentiles = percentile_choice(job);
    let dirs = [0, 1, 2].map(|d| {
        let rates: Vec<&RateSeries> = workers.iter().map(|w| &w.rates[d]).collect();
        let stats = &merged.dirs[d];
        let runtime = if stats.ios > 0 { dir_runtimes[d] } else { 0 };
        stats.report(runtime, percentiles, &RateSeries::sum_of(&rates))
    });
    let mixed = (head.measure.unified_rw != UnifiedRw::Separate).then(|| {
        let mut all = merged.dirs[0].clone();
        for dir in &merged.dirs[1..] {
            all.merge(dir);
        }
        let rates: Vec<&RateSeries> = workers.iter().flat_map(|w| &w.rates).collect();
        let runtime = if all.ios > 0 { runtime_ns } else { 0 };
        Mixed {
            only: head.measure.unified_rw == UnifiedRw::Mixed,
            report: all.report(runtime, percentiles, &RateSeries::sum_of(&rates)),
        }
    });
    let total_ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let pct = |ns: u64| {
        if cpu_time_ns == 0 {
            0.0
        } else {
            ns as f64 / cpu_time_ns as f64 * 100.0
        }
    };
    let error = workers.iter().find_map(|w| w.error.clone());
    let mut tolerated = ErrorTally::default();
    for w in &workers {
        tolerated.merge(&w.tolerated);
    }
    JobReport {
        name: head.name.clone(),
        description: head.description.clone(),
        groupid,
        workers: workers.len() as u32,
        // fio shows the first worker's, merged or not.
        pid: Some(workers[0].tid).filter(|&tid| tid != 0),
        // fio's "error" is the first failure even when the job went on after it.
        errno: error.as_ref().map_or(tolerated.first_errno, |e| e.errno),
        tolerated_errors: (!job.errors.stops_on_every_error()).then_some(ToleratedErrors {
            total: tolerated.count,
            first_errno: tolerated.first_errno,
        }),
        error: error.map(|e| e.message),
        options: job.given.job.clone(),
        dirs,
        mixed,
        // fio gives sync latencies percentiles along with clat.
        sync: merged.sync_report(percentiles.clat),
        cpu: CpuReport {
            usr_ns: cpu.user_ns,
            sys_ns: cpu.system_ns,
            usr_pct: pct(cpu.user_ns),
            sys_pct: pct(cpu.system_ns),
            ctx: cpu.voluntary_ctxsw + cpu.involuntary_ctxsw,
            majf: cpu.major_faults,
            minf: cpu.minor_faults,
            cpu_ns_per_io: if total_ios == 0 {
                0.0
            } else {
                (cpu.user_ns + cpu.system_ns) as f64 / total_ios as f64
            },
        },
        depth: merged.depth.report(),
        lat_buckets: merged.lat_buckets(),
        runtime_ns,
        significant_figures: head.measure.significant_figures,
        // The workers of a job are judged together, so any one holds its check;
        // of several jobs, fio keeps the last one's.
        steadystate: workers.iter().rev().find_map(|w| w.steadystate.clone()),
        latency_target: job
            .control
            .latency_target
            .as_ref()
            .map(|spec| LatencyTargetReport {
                target_ns: spec.target_ns,
                window_ns: u64::try_from(spec.window.as_nanos()).unwrap_or(u64::MAX),
                percentile: spec.percentile,
                // Merged workers each searched: the depth all of them met.
                depth: workers
                    .iter()
                    .filter_map(|w| w.latency_depth)
                    .min()
                    .unwrap_or(1),
            }),
        schedule: merged
            .schedule
            .as_ref()
            .map(|s| s.report(&job.measure.percentile_list)),
    }
}

/// The job's percentile list for each latency its `*_percentiles` options switch on.
fn percentile_choice(job: &JobSpec) -> PercentileChoice<'_> {
    let m = &job.measure;
    let list = |on: bool| if on { &m.percentile_list[..] } else { &[][..] };
    PercentileChoice {
        slat: list(m.slat_percentiles),
        clat: list(m.clat_percentiles),
        lat: list(m.lat_percentiles),
    }
}

/// fio's "Run status group" totals.
fn group_reports(jobs: &[JobReport]) -> Vec<GroupReport> {
    let mut ids: Vec<u32> = jobs.iter().map(|j| j.groupid).collect();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let members: Vec<&JobReport> = jobs.iter().filter(|j| j.groupid == id).collect();
            let dirs = [0, 1, 2].map(|d| group_summary(members.iter().map(|j| &j.dirs[d])));
            let mixed_members: Vec<&Mixed<DirReport>> =
                members.iter().filter_map(|j| j.mixed.as_ref()).collect();
            let mixed = mixed_members.first().map(|first| Mixed {
                only: first.only,
                report: group_summary(mixed_members.iter().map(|m| &m.report)),
            });
            GroupReport { id, dirs, mixed }
        })
        .collect()
}

/// One direction's totals over the jobs of a group that did I/O in it.
fn group_summary<'a>(dirs: impl Iterator<Item = &'a DirReport>) -> GroupDirSummary {
    let active: Vec<&DirReport> = dirs.filter(|d| d.total_ios > 0).collect();
    if active.is_empty() {
        return GroupDirSummary::default();
    }
    let io_bytes = active.iter().map(|d| d.io_bytes).sum();
    let max_runtime_ns = active.iter().map(|d| d.runtime_ns).max().unwrap_or(0);
    let bws = active.iter().map(|d| d.bw_bytes_per_sec);
    GroupDirSummary {
        io_bytes,
        bw_bytes_per_sec: if max_runtime_ns == 0 {
            0.0
        } else {
            io_bytes as f64 / (max_runtime_ns as f64 / 1e9)
        },
        min_bw_bytes_per_sec: bws.clone().fold(f64::INFINITY, f64::min),
        max_bw_bytes_per_sec: bws.fold(0.0, f64::max),
        min_runtime_ns: active.iter().map(|d| d.runtime_ns).min().unwrap_or(0),
        max_runtime_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{front::cli_args::parse_fio_args, resolve};

    /// Resolved jobs from fio-style arguments (1 MiB of /tmp/f each).
    fn jobs(args: &[&str]) -> Vec<JobSpec> {
        let given = ["--filename=/tmp/f", "--size=1m"].iter().chain(args);
        let args: Vec<String> = given.map(|s| s.to_string()).collect();
        let (global, jobs) = parse_fio_args(&args).unwrap();
        resolve(&global, &jobs).unwrap().jobs
    }

    /// A worker that did `ios` I/Os per direction in `runtime_ns`, `verify_ns` of it reading back.
    fn worker(ios: [u64; 3], runtime_ns: u64, verify_ns: u64) -> WorkerResult {
        let mut w = WorkerResult::empty();
        for (dir, n) in w.stats.dirs.iter_mut().zip(ios) {
            dir.ios = n;
        }
        w.runtime_ns = runtime_ns;
        w.verify_ns = verify_ns;
        w
    }

    #[test]
    fn entries_are_formed_as_fio_forms_them() {
        let specs = jobs(&[
            "--ioengine=null",
            "--name=a",
            "--name=b",
            "--group_reporting",
            "--numjobs=2",
            "--name=c",
            "--name=d",
            "--group_reporting",
            "--stonewall",
            "--name=e",
            "--group_reporting",
            "--stats=0",
        ]);
        let group_ids = plan::group_ids(&specs);
        let results: Vec<Vec<WorkerResult>> = specs
            .iter()
            .map(|s| (0..s.exec.numjobs).map(|_| WorkerResult::empty()).collect())
            .collect();
        let formed: Vec<Vec<usize>> = entries(&specs, &group_ids, &results)
            .iter()
            .map(|members| members.iter().map(|&(j, _)| j).collect())
            .collect();
        assert_eq!(
            formed,
            [vec![0, 1, 1], vec![2], vec![3]],
            "b's workers join a's entry (same group, b reports by group); c does not; \
             d starts the stonewalled group; e has stats=0"
        );
    }

    #[test]
    fn each_direction_takes_the_time_fio_gives_it() {
        let write = &jobs(&["--name=w", "--rw=write", "--verify=crc32c"])[0];
        assert_eq!(
            direction_runtimes(write, &worker([16, 16, 0], 30, 10)),
            [10, 20, 0],
            "a write job's reads are its read-back, timed by the read-back pass"
        );
        let mixed = &jobs(&["--name=m", "--rw=readwrite", "--verify=crc32c"])[0];
        assert_eq!(
            direction_runtimes(mixed, &worker([16, 6, 0], 30, 10)),
            [30, 20, 0],
            "a job that reads has its own reading time plus the read-back"
        );
        let only = &jobs(&["--name=o", "--rw=write", "--verify=crc32c", "--verify_only"])[0];
        assert_eq!(
            direction_runtimes(only, &worker([16, 16, 0], 10, 10)),
            [10, 0, 0],
            "verify_only's replayed writes take no time"
        );
        let reads = &jobs(&["--name=r", "--rw=read"])[0];
        assert_eq!(
            direction_runtimes(reads, &worker([0, 0, 0], 30, 0)),
            [0, 0, 0],
            "no I/O, no time"
        );
    }
}
