//! A run on several ranks (hosts), as the runner sees it: `ClusterLink`, what
//! the runner needs of the other ranks, and what travels between them: each
//! rank's worker results (`RankResults`), merged on the first rank by the code
//! that merges workers (`collect`), and the rank files `iolens merge` reads.
//! Who uses the link when is elsewhere: `group/peers.rs` (the cluster barrier,
//! a group's ends, the rank files as each group ends), `gather.rs` (the
//! gathering at the run's end). The link that carries them is
//! `cluster::MpiLink`; the runner knows only `ClusterLink`, so everything here
//! runs (and is tested) without MPI.

use super::collect;
use super::result::WorkerResult;
use super::RunRequest;
use crate::job::spec::JobSpec;
use crate::model::{
    ClusterReport, CpuWait, DiskUtil, Environment, JobInterval, JobSeries, Observations,
    ObservedHost, RankGroup, RankRun, RunReport, WorkerObservation,
};
use crate::observe::wchan::WaitTally;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// The other ranks of the run.
pub(crate) trait ClusterLink {
    /// Which rank this process is.
    fn rank(&self) -> &RankId;
    /// How many ranks the run has.
    fn ranks(&self) -> u32;
    /// The host of rank `rank`.
    fn host_of(&self, rank: u32) -> &str;
    /// Say `message` on stderr and end every rank of the run (exit 1).
    fn abort(&self, message: &str) -> !;
    /// The same number on every rank of one run, another on the next run: which
    /// rank files belong together.
    fn run_key(&self) -> u64;
    /// True once every rank has called it (each before the same group); false
    /// as soon as `stop` is set while it waits (the run was stopped) or
    /// `waiting`, called as it waits, returns false (a rank was taken as hung).
    fn barrier(&self, stop: &AtomicBool, waiting: &mut dyn FnMut() -> bool) -> bool;
    /// Tells the other ranks that this rank's workers of the group ended, `at_ns`
    /// after the group started.
    fn announce_done(&self, at_ns: u64);
    /// The other ranks' announcements that arrived since the last call, (rank,
    /// at_ns); never waits.
    fn heard_done(&self) -> Vec<(u32, u64)>;
    /// Sends `news` (a few bytes: runner/alive.rs) to rank `to`; never waits for
    /// it to be read.
    fn tell(&self, to: u32, news: &[u8]);
    /// The news that arrived since the last call, (from rank, bytes); never waits.
    fn heard(&self) -> Vec<(u32, Vec<u8>)>;
    /// Every rank hands in its bytes; the first rank gets every rank's, in rank
    /// order, the others None.
    fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>>;
}

/// A rank: its number, its number on its host, and its host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RankId {
    pub rank: u32,
    pub local_rank: u32,
    pub hostname: String,
}

/// What a rank sends to the first rank when its groups are done.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct RankResults {
    pub id: RankId,
    /// Each group as this rank saw it.
    pub groups: Vec<RankGroup>,
    /// Per job, its workers' results (as `collect` takes them).
    pub results: Vec<Vec<WorkerResult>>,
    /// Its host's disks over the run, from the host's first rank only.
    #[serde(default)]
    pub disks: Vec<DiskUtil>,
    /// When its run (and its sampler's clock) started, ms since the Unix epoch.
    #[serde(default)]
    pub started_unix_ms: u64,
    /// Its jobs' I/O per sampling interval, as its sampler saw them.
    #[serde(default)]
    pub series: Vec<JobSeries>,
    /// Its worker threads' CPU and run-queue wait.
    #[serde(default)]
    pub workers: Vec<WorkerObservation>,
    /// What its sampler saw of its host, from the first rank of each host but
    /// rank 0's (whose are the report's own).
    #[serde(default)]
    pub host: Option<Box<HostSeen>>,
}

/// A host as its first rank's sampler saw it, and where it ran.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct HostSeen {
    pub observations: Observations,
    pub environment: Environment,
}

impl RankResults {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("worker results have only string keys")
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Result<RankResults, UnreadRank> {
        serde_json::from_slice(bytes).map_err(UnreadRank)
    }
}

/// A rank's gathered results that do not parse: the run is reported without the cluster.
#[derive(Debug, thiserror::Error)]
#[error("a rank's results do not read: {0}")]
pub(crate) struct UnreadRank(#[source] serde_json::Error);

/// What a rank writes as each group ends, so that a run that loses a rank can
/// still be reported (`iolens merge DIR`): its results so far and how to read them.
#[derive(Serialize, Deserialize)]
pub(crate) struct RankFile {
    pub run_key: u64,
    pub ranks: u32,
    pub groups: usize,
    pub command_line: Vec<String>,
    pub started_unix_ms: u64,
    pub jobs: Vec<JobSpec>,
    pub rank: RankResults,
    /// The run was stopped (SIGINT/SIGTERM) on this rank.
    #[serde(default)]
    pub stopped: bool,
    /// Which run of `--warmup`/`--repeat` it holds; None for a run on its own.
    #[serde(default)]
    pub series: Option<SeriesRun>,
}

/// One run of `--warmup K --repeat N`: every rank runs the same series, and a
/// rank's file holds the run it is in (the runs before it were gathered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SeriesRun {
    pub warmup: bool,
    /// 1-based, among the warm-up runs or among the repetitions.
    pub number: u32,
    /// How many warm-up runs, or repetitions, there are.
    pub of: u32,
}

impl SeriesRun {
    /// The series' runs in order: `warmup` warm-up runs, then `repetitions`.
    pub(crate) fn all(warmup: u32, repetitions: u32) -> impl Iterator<Item = SeriesRun> {
        let run = |warmup, of| move |number| SeriesRun { warmup, number, of };
        (1..=warmup)
            .map(run(true, warmup))
            .chain((1..=repetitions).map(run(false, repetitions)))
    }

    /// Later runs of the series sort after earlier ones.
    fn order(&self) -> (bool, u32) {
        (!self.warmup, self.number)
    }
}

impl std::fmt::Display for SeriesRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.warmup {
            "warm-up run"
        } else {
            "repetition"
        };
        write!(f, "{what} {}/{}", self.number, self.of)
    }
}

impl RankFile {
    /// Where rank `rank`'s file is in `dir`.
    pub(crate) fn path(dir: &Path, rank: u32) -> PathBuf {
        dir.join(format!("rank-{rank:05}.json"))
    }

    /// Write it whole or not at all (a new file renamed over the old).
    pub(crate) fn write(&self, path: &Path) -> std::io::Result<()> {
        let part = path.with_extension("json.part");
        std::fs::write(
            &part,
            serde_json::to_vec(self).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&part, path)
    }
}

/// Why `iolens merge DIR` found nothing to merge.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MergeError {
    /// The directory or a rank file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The directory or file.
        path: PathBuf,
        /// Why the read failed.
        #[source]
        source: std::io::Error,
    },
    /// A `rank-*.json` file that does not parse.
    #[error("{}: not an iolens rank file: {source}", path.display())]
    NotRankFile {
        /// The file.
        path: PathBuf,
        /// Why it did not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The directory holds no rank file.
    #[error(
        "{}: no rank files (rank-NNNNN.json, written by each rank of `mpirun … iolens run`)",
        .0.display()
    )]
    NoRankFiles(PathBuf),
}

/// The report of the rank files in `dir` (of the newest run among them), its
/// findings not yet judged, and notes on what is missing: ranks without a file,
/// ranks that did not end every group. Any such gap marks the report interrupted.
pub(crate) fn merge_files(dir: &Path) -> Result<(RunReport, Vec<String>), MergeError> {
    let entries = std::fs::read_dir(dir).map_err(|source| MergeError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<RankFile> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !(name.starts_with("rank-") && name.ends_with(".json")) {
            continue;
        }
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(source) => return Err(MergeError::Read { path, source }),
        };
        match serde_json::from_slice(&bytes) {
            Ok(file) => files.push(file),
            Err(source) => return Err(MergeError::NotRankFile { path, source }),
        }
    }
    let newest = files
        .iter()
        .map(|f| f.run_key)
        .max()
        .ok_or_else(|| MergeError::NoRankFiles(dir.to_path_buf()))?;
    files.retain(|f| f.run_key == newest);
    // a rank that ended a run of the series before the others were lost holds a later one
    let latest = files
        .iter()
        .map(|f| f.series.map(|s| s.order()))
        .max()
        .flatten();
    files.retain(|f| f.series.map(|s| s.order()) == latest);
    files.sort_by_key(|f| f.rank.id.rank);
    let head = &files[0];
    let mut notes: Vec<String> = (0..head.ranks)
        .filter(|r| !files.iter().any(|f| f.rank.id.rank == *r))
        .map(|r| format!("rank {r} of {}: no result file", head.ranks))
        .collect();
    notes.extend(
        files
            .iter()
            .filter(|f| f.rank.groups.len() < f.groups)
            .map(|f| {
                format!(
                    "rank {} on {}: {} of {} groups ended",
                    f.rank.id.rank,
                    f.rank.id.hostname,
                    f.rank.groups.len(),
                    f.groups
                )
            }),
    );
    notes.extend(files.iter().filter(|f| f.stopped).map(|f| {
        format!(
            "rank {} on {}: stopped by a signal",
            f.rank.id.rank, f.rank.id.hostname
        )
    }));
    let stop = AtomicBool::new(false);
    let req = RunRequest::of_files(&head.jobs, head.command_line.clone(), &stop);
    let ranks: Vec<RankResults> = files.iter().map(|f| f.rank.clone()).collect();
    let (merged, cluster) = merge(&req, &ranks, head.started_unix_ms);
    let mut report = collect::report(&req, &merged, Vec::new(), head.started_unix_ms);
    report.cluster = Some(Box::new(cluster));
    report.interrupted = !notes.is_empty();
    if let Some(series) = head.series {
        notes.push(format!(
            "these rank files hold {series} of the run (--warmup/--repeat); the runs before it are not in them"
        ));
    }
    Ok((report, notes))
}

/// fio's name for the entry of every client merged.
pub(crate) const ALL_CLIENTS: &str = "All clients";

/// The ranks' results merged: each job's workers of every rank (in rank order),
/// as one process running all of them would hold them, and the cluster's part
/// of the report: each rank's own report and the "All clients" entry.
pub(super) fn merge(
    req: &RunRequest,
    ranks: &[RankResults],
    started_unix_ms: u64,
) -> (Vec<Vec<WorkerResult>>, ClusterReport) {
    let merged = workers_by_job(ranks.iter());
    let cluster = ClusterReport {
        ranks: ranks
            .iter()
            .map(|r| RankRun {
                rank: r.id.rank,
                local_rank: r.id.local_rank,
                hostname: r.id.hostname.clone(),
                groups: r.groups.clone(),
                report: collect::report(req, &r.results, r.disks.clone(), started_unix_ms),
                total: collect::one_entry(req, &r.results, &format!("rank {}", r.id.rank))
                    .jobs
                    .pop(),
            })
            .collect(),
        all_clients: collect::one_entry(req, &merged, ALL_CLIENTS),
        observed_hosts: Vec::new(),
    };
    (merged, cluster)
}

/// Per job, the workers of `ranks` (in their order), as `collect` takes one process's.
fn workers_by_job<'r>(
    ranks: impl Iterator<Item = &'r RankResults> + Clone,
) -> Vec<Vec<WorkerResult>> {
    let jobs = ranks.clone().map(|r| r.results.len()).max().unwrap_or(0);
    (0..jobs)
        .map(|j| {
            ranks
                .clone()
                .flat_map(|r| r.results.get(j).into_iter().flatten().cloned())
                .collect()
        })
        .collect()
}

/// Pairs `obs`, what `observer`'s sampler saw of its host, with the ranks that
/// ran on that host: their jobs merged (the workers' merge) and their I/O per
/// interval added to the observer's series, each rank's moved onto the
/// observer's sample times by the difference of their clocks' starts (ranks on
/// one host read one clock). The other hosts go unobserved.
fn pair_host(
    req: &RunRequest,
    ranks: &[RankResults],
    observer: &RankId,
    obs: &mut Observations,
    started_unix_ms: u64,
) -> ObservedHost {
    let on_host: Vec<&RankResults> = ranks
        .iter()
        .filter(|r| r.id.hostname == observer.hostname)
        .collect();
    let interval_ms = (obs.interval_ns / 1_000_000).max(1) as i64;
    for other in on_host.iter().filter(|r| r.id.rank != observer.rank) {
        let late_ms = other.started_unix_ms as i64 - started_unix_ms as i64;
        let shift = (late_ms + interval_ms / 2).div_euclid(interval_ms);
        for series in &other.series {
            if let Some(mine) = obs.jobs.iter_mut().find(|s| s.name == series.name) {
                add_series(mine, series, shift);
            }
        }
        obs.workers.extend(other.workers.iter().cloned());
    }
    // Derived from the series, which now hold the host's other ranks' I/O too.
    for series in &mut obs.jobs {
        series.cpu_wait = CpuWait::of(series, &obs.t_ns);
    }
    obs.ledger = crate::observe::ledger::build(obs);
    let jobs = workers_by_job(on_host.iter().copied());
    ObservedHost {
        hostname: observer.hostname.clone(),
        observer: observer.rank,
        ranks: on_host.iter().map(|r| r.id.rank).collect(),
        jobs: collect::report(req, &jobs, Vec::new(), started_unix_ms).jobs,
    }
}

/// Pairs each observed host with the ranks that ran on it (`pair_host`):
/// `observer`'s (`observations`, the report's own) and every other host whose
/// first rank sent what it saw, which goes into that rank's report in `cluster`.
pub(super) fn pair_hosts(
    req: &RunRequest,
    ranks: &[RankResults],
    observer: &RankId,
    observations: &mut Observations,
    started_unix_ms: u64,
    cluster: &mut ClusterReport,
) {
    let mut hosts = vec![pair_host(
        req,
        ranks,
        observer,
        observations,
        started_unix_ms,
    )];
    for (rank, run) in ranks.iter().zip(&mut cluster.ranks) {
        let Some(seen) = &rank.host else {
            continue;
        };
        if hosts.iter().any(|h| h.hostname == rank.id.hostname) {
            continue;
        }
        let mut observations = seen.observations.clone();
        hosts.push(pair_host(
            req,
            ranks,
            &rank.id,
            &mut observations,
            rank.started_unix_ms,
        ));
        run.report.observations = observations;
        run.report.environment = seen.environment.clone();
        crate::observe::cgroup::record_workers_elsewhere(
            &mut run.report.environment,
            &run.report.observations.workers,
        );
    }
    cluster.observed_hosts = hosts;
}

/// Adds another rank's series of the same job into `into`, its interval `i`
/// into `i + shift` (the first or last interval when that falls outside, so no
/// byte is lost).
fn add_series(into: &mut JobSeries, from: &JobSeries, shift: i64) {
    let Some(last) = into.intervals.len().checked_sub(1) else {
        return;
    };
    into.workers += from.workers;
    for (i, interval) in (0..).zip(&from.intervals) {
        let at = (i + shift).clamp(0, last as i64) as usize;
        add_interval(&mut into.intervals[at], interval);
    }
}

/// Two ranks' I/O in one interval: counts and times add, the mean is weighted
/// by I/Os, and the max and p99 are the larger (an upper bound for the p99:
/// percentiles do not add).
fn add_interval(into: &mut JobInterval, from: &JobInterval) {
    let (a, b) = (into.ios.iter().sum::<u64>(), from.ios.iter().sum::<u64>());
    if a + b > 0 {
        into.lat_mean_ns = ((u128::from(into.lat_mean_ns) * u128::from(a)
            + u128::from(from.lat_mean_ns) * u128::from(b))
            / u128::from(a + b)) as u64;
    }
    for d in 0..2 {
        into.ios[d] += from.ios[d];
        into.bytes[d] += from.bytes[d];
    }
    into.lat_max_ns = into.lat_max_ns.max(from.lat_max_ns);
    into.lat_p99_ns = into.lat_p99_ns.max(from.lat_p99_ns);
    into.in_io_ns += from.in_io_ns;
    into.cpu_ns += from.cpu_ns;
    into.run_delay_ns += from.run_delay_ns;
    into.caused += from.caused;
    let mut waits = WaitTally {
        waits: std::mem::take(&mut into.waits),
    };
    from.waits
        .iter()
        .for_each(|w| waits.add(&w.wchan, w.time_ns));
    into.waits = waits.take_sorted();
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::job::{front::cli_args::parse_fio_args, resolve};
    use crate::runner::RunRequest;
    use crate::stats::histogram::LatHistogram;
    use proptest::prelude::*;

    #[test]
    fn a_directory_without_rank_files_is_named() {
        let dir = tempfile::tempdir().expect("a scratch dir");
        let said = |dir: &Path| merge_files(dir).expect_err("nothing to merge").to_string();
        assert_eq!(
            said(dir.path()),
            format!(
                "{}: no rank files (rank-NNNNN.json, written by each rank of `mpirun … iolens run`)",
                dir.path().display()
            )
        );
        std::fs::write(dir.path().join("rank-00000.json"), "{").expect("a rank file");
        assert_eq!(
            said(dir.path()),
            format!(
                "{}: not an iolens rank file: EOF while parsing an object at line 1 column 1",
                dir.path().join("rank-00000.json").display()
            )
        );
        let gone = dir.path().join("gone");
        assert_eq!(
            said(&gone),
            format!("{}: No such file or directory (os error 2)", gone.display())
        );
    }

    #[test]
    fn unreadable_rank_results_are_one_warning() {
        let e = RankResults::from_bytes(b"{").err().expect("not results");
        assert_eq!(
            e.to_string(),
            "a rank's results do not read: EOF while parsing an object at line 1 column 1"
        );
    }

    /// A worker that did `ios` reads of 4 KiB, with latencies from `lats`, in `runtime_ns`.
    fn worker(lats: &[u64], runtime_ns: u64) -> WorkerResult {
        let mut w = WorkerResult::empty();
        let read = &mut w.stats.dirs[0];
        read.ios = lats.len() as u64;
        read.bytes = 4096 * lats.len() as u64;
        let mut hist = LatHistogram::new();
        lats.iter().for_each(|&ns| hist.record(ns));
        read.clat = hist.clone();
        read.lat = hist;
        w.runtime_ns = runtime_ns;
        w
    }

    fn request<'a>(jobs: &'a [crate::job::spec::JobSpec], stop: &'a AtomicBool) -> RunRequest<'a> {
        RunRequest::of_files(jobs, Vec::new(), stop)
    }

    /// A rank of three; the others' announcements and news are queued by the test.
    pub(in crate::runner) struct FakeLink {
        id: RankId,
        /// The other ranks' group ends to be heard, and this rank's announced.
        pub inbox: std::cell::RefCell<Vec<(u32, u64)>>,
        pub sent: std::cell::RefCell<Vec<u64>>,
        /// Liveness news to be heard, and told: (from or to rank, bytes).
        pub news: std::cell::RefCell<Vec<(u32, Vec<u8>)>>,
        pub told: std::cell::RefCell<Vec<(u32, Vec<u8>)>>,
    }

    impl ClusterLink for FakeLink {
        fn rank(&self) -> &RankId {
            &self.id
        }
        fn ranks(&self) -> u32 {
            3
        }
        fn host_of(&self, rank: u32) -> &str {
            ["h0", "h1", "h2"][rank as usize]
        }
        fn abort(&self, message: &str) -> ! {
            panic!("aborted: {message}")
        }
        fn run_key(&self) -> u64 {
            7
        }
        fn barrier(&self, _stop: &AtomicBool, _waiting: &mut dyn FnMut() -> bool) -> bool {
            true
        }
        fn tell(&self, to: u32, news: &[u8]) {
            self.told.borrow_mut().push((to, news.to_vec()));
        }
        fn heard(&self) -> Vec<(u32, Vec<u8>)> {
            std::mem::take(&mut *self.news.borrow_mut())
        }
        fn announce_done(&self, at_ns: u64) {
            self.sent.borrow_mut().push(at_ns);
        }
        fn heard_done(&self) -> Vec<(u32, u64)> {
            std::mem::take(&mut *self.inbox.borrow_mut())
        }
        fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
            Some(vec![mine])
        }
    }

    /// Rank 0 of three.
    pub(in crate::runner) fn fake() -> FakeLink {
        fake_as(0)
    }

    pub(in crate::runner) fn fake_as(rank: u32) -> FakeLink {
        FakeLink {
            id: RankId {
                rank,
                local_rank: 0,
                hostname: format!("h{rank}"),
            },
            inbox: Default::default(),
            sent: Default::default(),
            news: Default::default(),
            told: Default::default(),
        }
    }

    const S: u64 = 1_000_000_000;

    /// A worker that wrote `mib` MiB in 4 KiB writes over a second.
    fn writer(mib: u64) -> WorkerResult {
        let mut w = WorkerResult::empty();
        w.stats.dirs[1].bytes = mib << 20;
        w.stats.dirs[1].ios = (mib << 20) / 4096;
        w.runtime_ns = S;
        w
    }

    #[test]
    fn each_hosts_findings_and_the_system_text_weigh_the_ranks_on_that_host_only() {
        use crate::diagnose::fixture;
        let args: Vec<String> = ["--name=w", "--ioengine=null", "--size=1m"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (global, jobs) = parse_fio_args(&args).unwrap();
        let specs = resolve(&global, &jobs).unwrap().jobs;
        let stop = AtomicBool::new(false);
        let req = request(&specs, &stop);
        // rank 0's sampler: its own 1 MiB per interval for 10 intervals, and a
        // device that wrote 64 MiB (its host's two ranks wrote 20 MiB of them)
        let mut observed = fixture::run(11);
        fixture::add_job(&mut observed, "w", false, fixture::io(0, 256));
        fixture::add_device(&mut observed, |i| crate::model::DeviceCounters {
            write_sectors: i as u64 * (64 << 20) / 10 / 512,
            ..Default::default()
        });
        // the target on it, and the process that did the rest
        fixture::add_target(&mut observed, |_| 0);
        observed.observations.targets[0].devices = vec!["loop7".into()];
        observed.observations.other_processes = vec![crate::model::ProcessIo {
            pid: 77,
            comm: "dd".into(),
            write_bytes: 44 << 20,
            ..Default::default()
        }];
        // h-b's first rank runs in a cgroup its workers are not in
        let mut on_b = observed.clone();
        fixture::add_cgroup(&mut on_b, Default::default(), |_| Default::default());
        on_b.observations.workers[0].cgroup = Some("/elsewhere".into());
        let mut obs = observed.observations;
        let rank = |r: u32, host: &str, late_ms: u64| RankResults {
            id: RankId {
                rank: r,
                local_rank: r % 2,
                hostname: host.into(),
            },
            groups: Vec::new(),
            results: vec![vec![writer(10)]],
            disks: Vec::new(),
            started_unix_ms: 1_000 + late_ms,
            series: obs.jobs.clone(),
            workers: obs.workers.clone(),
            host: None,
        };
        // h-b's first rank saw the same on its host
        let seen_on_b = HostSeen {
            observations: on_b.observations.clone(),
            environment: on_b.environment,
        };
        let ranks = [
            rank(0, "h-a", 0),
            rank(1, "h-a", 250),
            RankResults {
                host: Some(Box::new(seen_on_b)),
                ..rank(2, "h-b", 0)
            },
            RankResults {
                workers: on_b.observations.workers,
                ..rank(3, "h-b", 0)
            },
        ];
        let (merged, mut cluster) = merge(&req, &ranks, 1_000);
        pair_hosts(&req, &ranks, &ranks[0].id, &mut obs, 1_000, &mut cluster);
        let hosts: Vec<(&str, u32, &[u32])> = cluster
            .observed_hosts
            .iter()
            .map(|h| (h.hostname.as_str(), h.observer, h.ranks.as_slice()))
            .collect();
        assert_eq!(
            hosts,
            [("h-a", 0, &[0, 1][..]), ("h-b", 2, &[2, 3][..])],
            "expected each host with its observer and its ranks, rank 0's first"
        );
        let written =
            |o: &Observations| -> u64 { o.jobs[0].intervals.iter().map(|i| i.bytes[1]).sum() };
        let on_b = &cluster.ranks[2].report;
        assert_eq!(
            written(&on_b.observations),
            20 << 20,
            "expected h-b's series, in its first rank's report, to hold its two ranks' writes"
        );
        let elsewhere = on_b
            .environment
            .cgroup
            .as_ref()
            .map(|c| c.workers_elsewhere.len());
        assert_eq!(
            elsewhere,
            Some(2),
            "expected h-b's two ranks' workers outside its cgroup noted in its environment"
        );
        assert_eq!(
            (written(&obs), obs.jobs[0].workers, obs.workers.len()),
            (20 << 20, 2, 2),
            "expected the host's series to hold both its ranks' 10 MiB and workers, rank 1's moved 3 intervals on"
        );
        assert_eq!(
            obs.jobs[0].intervals[4].bytes[1],
            2 << 20,
            "expected interval 4 to hold rank 0's 4th and rank 1's 1st MiB"
        );
        let mut report = collect::report(&req, &merged, Vec::new(), 1_000);
        report.observations = obs;
        report.cluster = Some(Box::new(cluster));
        let mut text = String::new();
        crate::report::text::system::write_system(&mut text, &report).unwrap();
        for line in [
            "observed on h-a by rank 0, where ranks 0, 1 of 4 ran; each other host by its first rank (its findings name it; its observations are in that rank's report in iolens-json)",
            "    the job                                   0 B   20.0 MiB",
            "    loop7 (the target)                        0 B   64.0 MiB",
        ] {
            assert!(text.contains(line), "expected the line {line:?}, saw:\n{text}");
        }
        let findings = crate::diagnose::diagnose(&report);
        let titles: Vec<&str> = findings.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "on h-a: 44.0 MiB of the 64.0 MiB loop7 moved while job 'w' ran was not iolens' (69%): other processes used it, the busiest dd (pid 77)",
                "on h-b: 44.0 MiB of the 64.0 MiB loop7 moved while job 'w' ran was not iolens' (69%): other processes used it, the busiest dd (pid 77)",
            ],
            "expected foreign-io on each host against its own ranks' 20 MiB (all ranks' 40 MiB would hide it)"
        );
    }

    proptest! {
        /// Per-rank results, sent as bytes and merged on the first rank, report what one
        /// process running every rank's workers reports: bytes, I/Os and percentiles
        /// from the merged histograms.
        #[test]
        fn merged_ranks_equal_one_process_doing_the_same_work(
            workers in prop::collection::vec(
                (prop::collection::vec(1_000u64..50_000_000, 1..40), 1_000_000u64..3_000_000_000),
                1..12,
            ),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        ) {
            let args: Vec<String> = ["--name=m", "--ioengine=null", "--size=1m", "--group_reporting"]
                .iter().map(|s| s.to_string()).collect();
            let (global, jobs) = parse_fio_args(&args).unwrap();
            let specs = resolve(&global, &jobs).unwrap().jobs;
            let stop = AtomicBool::new(false);
            let req = request(&specs, &stop);
            let all: Vec<WorkerResult> = workers.iter().map(|(l, t)| worker(l, *t)).collect();
            let mut bounds: Vec<usize> = cuts.iter().map(|c| c.index(all.len() + 1)).collect();
            bounds.extend([0, all.len()]);
            bounds.sort_unstable();
            let ranks: Vec<RankResults> = bounds
                .windows(2)
                .enumerate()
                .map(|(rank, w)| RankResults {
                    id: RankId { rank: rank as u32, local_rank: 0, hostname: format!("h{rank}") },
                    groups: Vec::new(),
                    results: vec![all[w[0]..w[1]].to_vec()],
                    disks: Vec::new(),
                    started_unix_ms: 0,
                    series: Vec::new(),
                    workers: Vec::new(),
                    host: None,
                })
                .map(|r| RankResults::from_bytes(&r.to_bytes()).unwrap())
                .collect();
            let (merged, cluster) = merge(&req, &ranks, 0);
            let one = collect::report(&req, std::slice::from_ref(&all), Vec::new(), 0);
            let together = collect::report(&req, &merged, Vec::new(), 0);
            let (a, b) = (&together.jobs[0].dirs[0], &one.jobs[0].dirs[0]);
            prop_assert_eq!(a.io_bytes, b.io_bytes, "expected the merged bytes of one process");
            prop_assert_eq!(a.total_ios, b.total_ios, "expected the merged I/Os of one process");
            prop_assert_eq!(&a.clat, &b.clat, "expected the percentiles of one process's histogram");
            prop_assert_eq!(together.jobs[0].runtime_ns, one.jobs[0].runtime_ns);
            let all_clients = &cluster.all_clients.jobs[0];
            prop_assert_eq!(&all_clients.name, ALL_CLIENTS);
            prop_assert_eq!(&all_clients.dirs[0].clat, &b.clat, "expected All clients to hold one process's percentiles");
            prop_assert_eq!(all_clients.dirs[0].io_bytes, b.io_bytes);
            let per_rank: u64 = cluster.ranks.iter()
                .flat_map(|r| &r.report.jobs)
                .map(|j| j.dirs[0].io_bytes)
                .sum();
            prop_assert_eq!(per_rank, b.io_bytes, "expected the ranks' bytes to sum to the whole");
        }
    }
}
