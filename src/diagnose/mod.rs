//! The diagnose rules: each a small pure function over a finished `RunReport`
//! that turns what the sampler saw into findings ("this number is suspect,
//! here is the evidence, here is what to do"). Thresholds come from the lab
//! measurements: identical runs differ by ±5–8 %, so a rule fires only on an
//! effect well beyond that, and every rule has a test that it stays silent on
//! a clean run.

mod amplification;
mod cache_eviction;
mod cgroup_cpu;
mod cgroup_io;
mod cgroup_memory;
mod compressed;
mod cpu_frequency;
mod cpu_starvation;
mod device_traffic;
mod foreign_io;
mod fresh_space;
mod holes;
mod media;
pub(crate) mod missed_schedule;
mod pagecache;
mod rules;
mod still_moving;
pub(crate) mod straggler;
mod tool_bound;
mod tunables;
mod unstable;
mod writeback;
mod writes_in_ram;

use crate::model::{Observations, ObservedHost, RunReport, TargetStack};
use crate::units::{human_bytes, ByteUnits};
use rules::{run_rules, Scope};

/// Every rule's findings for one run, in a fixed order.
///
/// On several ranks each host's sampler (its first rank's) watched that host
/// only, while the report's jobs are every rank's. The rules that weigh the
/// jobs' I/O or CPU against what a host did (its devices, page cache, memory,
/// CPUs, cgroup) read that host's ranks only (`ObservedHost`: their jobs
/// merged; the host's series already hold their I/O), once per observed host,
/// and their findings name the host: pagecache-under-direct-io,
/// served-from-cache, direct-io-not-honoured, writeback-stall,
/// cgroup-memory-limit, cgroup-io-limit, cgroup-cpu-quota, tool-bound,
/// read-from-holes, foreign-io, unstable-throughput, still-moving and
/// first-pass-allocates (the host's series), cpu-frequency,
/// cache-evicted-mid-run, cache-evicted-without-pressure, tunables-changed and
/// cpu-starvation. The rules about the jobs alone (straggler) read every rank.
/// The rules and their order are `RULES`'.
/// A run on one host has no `ObservedHost`: every rule reads the report as it is.
pub(crate) fn diagnose(report: &RunReport) -> Vec<Finding> {
    let hosts = report
        .cluster
        .as_ref()
        .map_or(&[][..], |c| &c.observed_hosts);
    let mut findings = if hosts.is_empty() {
        host_findings(report)
    } else {
        hosts
            .iter()
            .flat_map(|host| on_host(report, host))
            .collect()
    };
    findings.extend(run_rules(report, Scope::Ranks));
    findings
}

/// The host-level findings of `host`, each named with it: its ranks' jobs
/// against what its observer saw (rank 0's: the report's own observations).
fn on_host(report: &RunReport, host: &ObservedHost) -> Vec<Finding> {
    let observer = report
        .cluster
        .iter()
        .flat_map(|c| &c.ranks)
        .find(|r| r.rank == host.observer && host.observer != 0)
        .map_or(report, |r| &r.report);
    let seen = RunReport {
        jobs: host.jobs.clone(),
        observations: observer.observations.clone(),
        environment: observer.environment.clone(),
        cluster: None,
        ..report.clone()
    };
    let mut findings = host_findings(&seen);
    for finding in &mut findings {
        finding.title = format!("on {}: {}", host.hostname, finding.title);
    }
    findings
}

/// The findings of the rules that compare the jobs with their host.
fn host_findings(report: &RunReport) -> Vec<Finding> {
    run_rules(report, Scope::Host)
}

pub(crate) use crate::model::Finding;

/// The I/O stack the run recorded for target `path`.
pub(crate) fn stack_of<'a>(report: &'a RunReport, path: &str) -> Option<&'a TargetStack> {
    report.environment.stacks.iter().find(|s| s.target == path)
}

/// Seconds since the run started at sample `i`.
pub(crate) fn seconds_at(obs: &Observations, i: usize) -> f64 {
    obs.t_ns.get(i).copied().unwrap_or(0) as f64 / 1e9
}

/// "1.9 GiB", "12.0 MiB", "512 KiB".
pub(crate) fn bytes_text(bytes: u64) -> String {
    human_bytes(bytes, ByteUnits::KibToGib)
}

/// "2.5 ms", "150 ms", "1.20 s".
pub(crate) fn duration_text(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// Synthetic reports for the rules' tests: samples every 100 ms, jobs and
/// targets added as each test needs.
#[cfg(test)]
pub(crate) mod fixture {
    use crate::model::*;

    pub(crate) const STEP_NS: u64 = 100_000_000;
    pub(crate) const TARGET: &str = "/dev/loop7";

    /// A run of `samples` samples 100 ms apart, with nothing in it yet.
    pub(crate) fn run(samples: usize) -> RunReport {
        RunReport {
            schema_version: SCHEMA_VERSION,
            tool_version: "test".into(),
            started_unix_ms: 0,
            elapsed_ns: None,
            command_line: Vec::new(),
            global_options: Vec::new(),
            jobs: Vec::new(),
            groups: Vec::new(),
            disks: Vec::new(),
            interrupted: false,
            observations: Observations {
                interval_ns: STEP_NS,
                page_size_bytes: 4096,
                t_ns: (0..samples as u64).map(|i| i * STEP_NS).collect(),
                memory_series: vec![
                    MemorySample {
                        free_bytes: 8 << 30,
                        dirty_threshold_bytes: 2 << 30,
                        dirty_background_threshold_bytes: 1 << 30,
                        ..Default::default()
                    };
                    samples
                ],
                ..Default::default()
            },
            environment: Environment::default(),
            findings: Vec::new(),
            terminated: None,
            verify: Vec::new(),
            cluster: None,
        }
    }

    /// Add job `name` on `TARGET` whose every interval but the first is `each`
    /// (one worker), with the matching job report.
    pub(crate) fn add_job(report: &mut RunReport, name: &str, direct: bool, each: JobInterval) {
        let n = report.observations.t_ns.len();
        let mut intervals = vec![each.clone(); n];
        intervals[0] = JobInterval::default();
        let mut dirs: [DirReport; 3] = Default::default();
        for (d, dir) in dirs.iter_mut().take(2).enumerate() {
            dir.io_bytes = each.bytes[d] * (n as u64 - 1);
            dir.total_ios = each.ios[d] * (n as u64 - 1);
        }
        let runtime_ns = (n as u64 - 1) * STEP_NS;
        report.jobs.push(JobReport {
            name: name.into(),
            workers: 1,
            dirs,
            runtime_ns,
            ..Default::default()
        });
        report.observations.jobs.push(JobSeries {
            measured_from_ns: None,
            buffers: String::new(),
            name: name.into(),
            workers: 1,
            direct,
            invalidate: true,
            syncs_writes: false,
            targets: vec![TARGET.into()],
            intervals,
            cpu_wait: None,
        });
        report.observations.workers.push(WorkerObservation {
            job: name.into(),
            tid: 1,
            cpu_ns: runtime_ns / 2,
            run_delay_ns: runtime_ns / 100,
            ..Default::default()
        });
    }

    /// One interval of 4 KiB I/Os: `reads` and `writes` of them, 100 µs mean, 500 µs p99, 1 ms max.
    pub(crate) fn io(reads: u64, writes: u64) -> JobInterval {
        JobInterval {
            ios: [reads, writes],
            bytes: [reads * 4096, writes * 4096],
            lat_mean_ns: 100_000,
            lat_max_ns: 1_000_000,
            lat_p99_ns: 500_000,
            in_io_ns: STEP_NS / 2,
            cpu_ns: STEP_NS / 2,
            run_delay_ns: STEP_NS / 100,
            waits: Vec::new(),
            // direct I/O: storage moved what the job asked for
            caused: TaskIo {
                read_bytes: reads * 4096,
                write_bytes: writes * 4096,
                cancelled_write_bytes: 0,
            },
        }
    }

    /// `TARGET` with the given cached pages at each sample.
    pub(crate) fn add_target(report: &mut RunReport, cached: impl Fn(usize) -> u64) {
        let n = report.observations.t_ns.len();
        report.observations.targets.push(TargetObservation {
            path: TARGET.into(),
            is_block_device: true,
            method: CacheMethod::Cachestat,
            cache_series: (0..n)
                .map(|i| {
                    Some(CachePages {
                        cached: cached(i),
                        ..Default::default()
                    })
                })
                .collect(),
            ..Default::default()
        });
    }

    /// A device whose cumulative counters at sample `i` are `at(i)`.
    pub(crate) fn add_device(report: &mut RunReport, at: impl Fn(usize) -> DeviceCounters) {
        let n = report.observations.t_ns.len();
        report.observations.devices.push(DeviceObservation {
            zram_series: Vec::new(),
            name: "loop7".into(),
            via: "the target".into(),
            counter_series: (0..n).map(at).collect(),
        });
    }

    /// The run inside cgroup v1 group `/bench` (memory, blkio and cpu) with
    /// `limits`, the group's sample `i` being `at(i)`.
    pub(crate) fn add_cgroup(
        report: &mut RunReport,
        limits: CgroupLimits,
        at: impl Fn(usize) -> CgroupSample,
    ) {
        let n = report.observations.t_ns.len();
        let dir = |controller: &str| {
            Some(CgroupDir {
                version: CgroupVersion::V1,
                path: "/bench".into(),
                dir: format!("/sys/fs/cgroup/{controller}/bench"),
                mount_point: format!("/sys/fs/cgroup/{controller}"),
            })
        };
        report.environment.cgroup = Some(CgroupRecord {
            place: CgroupPlace {
                memory: dir("memory"),
                io: dir("blkio"),
                cpu: dir("cpu"),
                ..Default::default()
            },
            limits,
            workers_elsewhere: Vec::new(),
        });
        report.observations.cgroup_series = (0..n).map(at).collect();
    }

    /// Job `job`'s ramp ends at sample `at`: the I/O before it is not measured.
    pub(crate) fn ramp_until(report: &mut RunReport, job: usize, at: usize) {
        report.observations.jobs[job].measured_from_ns = Some(report.observations.t_ns[at]);
    }

    /// `level` with a deterministic ±7 % wobble at interval `i`.
    pub(crate) fn wobble(i: usize, level: f64) -> u64 {
        let pct: [f64; 7] = [0.0, 7.0, -5.0, 3.0, -7.0, 5.0, -2.0];
        (level * (100.0 + pct[i % 7]) / 100.0) as u64
    }

    /// An 8 s run (80 intervals) of one direct writer whose interval `i`
    /// completes `ios(i)` writes.
    pub(crate) fn writes_per_interval(ios: impl Fn(usize) -> u64) -> RunReport {
        let mut report = run(80);
        add_job(&mut report, "w", true, io(0, 1));
        for (i, interval) in report.observations.jobs[0]
            .intervals
            .iter_mut()
            .enumerate()
            .skip(1)
        {
            interval.ios[1] = ios(i);
        }
        report
    }

    pub(crate) fn codes(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.code.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::*;
    use super::*;

    #[test]
    fn a_clean_run_has_no_findings() {
        let mut report = run(50);
        add_job(&mut report, "rr", true, io(1000, 0));
        add_target(&mut report, |_| 0);
        add_device(&mut report, |i| crate::model::DeviceCounters {
            read_ios: i as u64 * 1000,
            read_sectors: i as u64 * 8000,
            ..Default::default()
        });
        assert_eq!(codes(&diagnose(&report)), Vec::<&str>::new());
    }

    #[test]
    fn active_span_brackets_the_busy_intervals() {
        let mut report = run(6);
        add_job(&mut report, "j", false, io(1, 0));
        let series = &mut report.observations.jobs[0];
        series.intervals[5] = Default::default();
        assert_eq!(series.active_span(), Some((0, 4)));
        series
            .intervals
            .iter_mut()
            .for_each(|i| *i = Default::default());
        assert_eq!(series.active_span(), None);
    }

    #[test]
    fn the_measured_window_leaves_the_ramp_out() {
        let mut report = run(10);
        add_job(&mut report, "j", false, io(1, 0));
        let t = report.observations.t_ns.clone();
        let series = &mut report.observations.jobs[0];
        assert_eq!(series.measured_span(&t), Some((0, 9)));
        // The ramp ended inside interval 4 (t=0.3–0.4 s): measuring starts at sample 4.
        series.measured_from_ns = Some(350_000_000);
        assert_eq!(series.measured_span(&t), Some((4, 9)));
        series.measured_from_ns = Some(400_000_000);
        assert_eq!(series.measured_span(&t), Some((4, 9)));
        // The job ended inside its ramp: nothing measured.
        series.measured_from_ns = Some(950_000_000);
        assert_eq!(series.measured_span(&t), None);
    }

    #[test]
    fn quantities_read_naturally() {
        assert_eq!(bytes_text(1_932_735_283), "1.8 GiB");
        assert_eq!(bytes_text(25 << 20), "25.0 MiB");
        assert_eq!(bytes_text(512 << 10), "512 KiB");
        assert_eq!(duration_text(150_000_000), "150 ms");
        assert_eq!(duration_text(2_500_000), "2.5 ms");
        assert_eq!(duration_text(1_200_000_000), "1.20 s");
    }
}
