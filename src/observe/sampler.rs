//! The sampler: one thread per run that records, every interval, the page
//! cache of each target, the counters of the devices behind them, memory and
//! dirty-throttling state, pressure, system and per-worker CPU, each CPU's
//! clock (when cpufreq is exposed), each job's
//! I/O from the live counters, changes of `vm.dirty_*`, and the run's cgroup
//! (usage, limit hits, throttling, io; see cgroup/sample.rs). While a buffered
//! writer runs it also samples the writers' kernel wait channels on a fast
//! tick (~100 Hz) of the same thread. When a direct-I/O target's cached pages
//! grow it looks for the other processes holding the target open (openers).
//!
//! Cheap by construction: every file is read into a reused buffer, paths are
//! built once, and the thread sleeps between ticks (parked, so `stop` wakes it).

use super::cgroup::{self, sample::CgroupProbe};
use super::cpu::{parse_proc_stat, parse_schedstat, SchedStat};
use super::cpufreq::{ClockControl, FreqProbe, SYS_CPU};
use super::diskstats::parse_stat;
use super::live::{LatencyBuckets, LiveBoard, LiveTotals};
use super::openers::{OpenerWatch, PROC};
use super::pagecache::CacheProbe;
use super::rollup;
use super::task_io::{self, ProcessIoWatch};
use super::tunables::{DirtyTunables, PROC_SYS_VM};
use super::wchan::WaitTally;
use super::{ledger, meminfo, pressure, read_into, stack, vmstat, wchan};
use crate::model::{
    CgroupPlace, CgroupSample, CpuWait, DeviceObservation, JobInterval, JobSeries, MemorySample,
    Observations, PressureSample, TargetObservation, TaskIo, WorkerObservation,
};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The default `--observe-interval`.
pub(crate) const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);

/// How often writers' wait channels are sampled (~100 Hz, as in the lab notes).
const WCHAN_PERIOD: Duration = Duration::from_millis(10);

/// A target to watch.
pub(crate) struct WatchedTarget {
    pub path: PathBuf,
    pub file: Arc<File>,
    pub size: u64,
    /// The bytes of it the jobs address.
    pub used_bytes: u64,
    /// The block devices behind it, with how each was reached (`diskstats::devices_of_stack`).
    pub devices: Vec<(String, String)>,
    pub is_block_device: bool,
    /// The file had holes at the start (recorded for the read-from-holes finding).
    pub sparse: bool,
    /// …or preallocated extents never written.
    pub unwritten: bool,
    /// A loop device's backing file with holes.
    pub backing_holes: Option<String>,
    /// iolens created the file in this run.
    pub created: bool,
}

/// A job whose workers publish live counters (board index = position here).
pub(crate) struct WatchedJob {
    pub name: String,
    /// Buffered writes: its workers' wait channels are sampled.
    pub buffered_writer: bool,
    pub direct: bool,
    pub invalidate: bool,
    /// It syncs its own writes (fsync=, fdatasync=, end_fsync, sync=).
    pub syncs_writes: bool,
    /// Paths of the targets it does I/O on.
    pub targets: Vec<String>,
    /// What its write buffers hold (`BufferSpec::describe`).
    pub buffers: String,
    /// Its `ramp_time`: I/O the report does not count, from each worker's start.
    pub ramp: Duration,
}

/// Called from the sampler thread about once a second with everything recorded
/// so far and the index of the first sample of that second (`--timeline`).
pub(crate) type SecondHook = fn(&Observations, usize);

pub(crate) struct SamplerSetup {
    pub interval: Duration,
    pub targets: Vec<WatchedTarget>,
    pub jobs: Vec<WatchedJob>,
    pub on_second: Option<SecondHook>,
}

/// The running sampler thread.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Observations>,
}

impl Sampler {
    /// Start sampling; `run_start` is time zero of every timestamp.
    pub(crate) fn start(
        setup: SamplerSetup,
        board: Arc<LiveBoard>,
        run_start: Instant,
    ) -> std::io::Result<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let (first_taken, first_sample) = std::sync::mpsc::sync_channel(1);
        let handle = std::thread::Builder::new()
            .name("iolens-sampler".into())
            .spawn(move || {
                let mut state = State::new(setup, board, run_start);
                state.run(&thread_stop, Some(first_taken));
                state.finish()
            })?;
        // Every rule diffs against the first sample, so it must precede the
        // first I/O: on a loaded machine the thread can start late, and a
        // short job's I/O would then all fall before it. An Err means the
        // thread died; `stop` reports that.
        let _ = first_sample.recv();
        Ok(Sampler { stop, handle })
    }

    /// Take a last sample, end the thread and return what it recorded.
    pub(crate) fn stop(self) -> Observations {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.thread().unpark();
        self.handle.join().expect("sampler thread panicked")
    }
}

/// cachestat walks the cached pages of its range, so on a target with GiBs
/// cached one call can take milliseconds. Each probe may spend this share of
/// the interval; a costlier probe is read every few samples instead.
const CACHE_BUDGET_DIVISOR: u32 = 1000;

#[derive(Debug, Clone, Copy, Default)]
struct CacheSkip {
    /// Read the probe once every `every` samples (1 = every sample).
    every: u32,
    /// Samples left before the next read.
    left: u32,
}

/// One worker as the sampler tracks it.
struct WorkerTrack {
    job: usize,
    /// Thread whose files the paths below name; 0 until the worker started.
    tid: u32,
    schedstat_path: PathBuf,
    wchan_path: PathBuf,
    io_path: PathBuf,
    last_live: LiveTotals,
    last_sched: SchedStat,
    last_io: TaskIo,
    /// Wait channels since the last sample.
    interval_waits: WaitTally,
    obs: WorkerObservation,
}

struct State {
    interval: Duration,
    run_start: Instant,
    /// `run_start` on `CLOCK_MONOTONIC`, the clock workers' origins are on.
    run_start_monotonic_ns: u64,
    /// Each job's `ramp_time`.
    ramps: Vec<Duration>,
    board: Arc<LiveBoard>,
    page_size: u64,
    ticks_per_sec: u64,
    probes: Vec<CacheProbe>,
    /// Per probe: samples to skip before the next cachestat (see `sample_cache`).
    cache_skips: Vec<CacheSkip>,
    device_stat_paths: Vec<PathBuf>,
    has_pressure: bool,
    freq_probe: FreqProbe,
    jobs_buffered_writer: Vec<bool>,
    workers: Vec<WorkerTrack>,
    tunables: DirtyTunables,
    /// The run's cgroup files (None: no cgroup mounted, or none readable).
    cgroup: Option<CgroupProbe>,
    /// The run's cgroups, which each worker's are compared with when it starts.
    cgroup_place: Option<CgroupPlace>,
    /// Who has a direct-I/O target open when its cache grows.
    openers: OpenerWatch,
    /// Every other process's storage I/O (who else used the devices).
    others: ProcessIoWatch,
    /// A live worker's io file could not be read: the ledger cannot say what iolens caused.
    task_io_unreadable: bool,
    on_second: Option<SecondHook>,
    /// First sample of the second the hook has not been shown yet.
    second_first_sample: usize,
    /// Reused for every file read.
    buf: String,
    obs: Observations,
}

impl State {
    fn new(setup: SamplerSetup, board: Arc<LiveBoard>, run_start: Instant) -> State {
        let mut obs = Observations {
            interval_ns: setup.interval.as_nanos() as u64,
            page_size_bytes: iolens_sys::page_size() as u64,
            ..Default::default()
        };
        let mut probes = Vec::new();
        for t in &setup.targets {
            let (probe, note) = CacheProbe::new(t.file.clone(), t.size);
            if let Some(note) = note {
                obs.notes.push(format!("{}: {note}", t.path.display()));
            }
            obs.targets.push(TargetObservation {
                path: t.path.display().to_string(),
                is_block_device: t.is_block_device,
                used_bytes: t.used_bytes,
                sparse: t.sparse,
                unwritten: t.unwritten,
                backing_holes: t.backing_holes.clone(),
                created: t.created,
                method: probe.method(),
                cache_series: Vec::new(),
                devices: t.devices.iter().map(|(name, _)| name.clone()).collect(),
            });
            probes.push(probe);
            for (name, via) in &t.devices {
                if !obs.devices.iter().any(|d| d.name == *name) {
                    obs.devices.push(DeviceObservation {
                        zram_series: Vec::new(),
                        name: name.clone(),
                        via: via.clone(),
                        counter_series: Vec::new(),
                    });
                }
            }
        }
        let device_stat_paths = obs
            .devices
            .iter()
            .map(|d| Path::new("/sys/block").join(&d.name).join("stat"))
            .collect();
        let device_names: Vec<String> = obs.devices.iter().map(|d| d.name.clone()).collect();
        let cgroup_place = cgroup::live_place("self");
        let cgroup = match cgroup_place
            .as_ref()
            .map(|p| cgroup::live_probe(p, &device_names))
        {
            Some(Ok((probe, io))) => {
                obs.cgroup_io = io;
                Some(probe)
            }
            Some(Err(note)) => {
                obs.notes.push(note);
                None
            }
            None => None,
        };
        let has_pressure = Path::new("/proc/pressure/io").exists();
        if !has_pressure {
            obs.notes
                .push("no /proc/pressure: the kernel has no pressure stall information".into());
        }
        let freq_probe = FreqProbe::discover(Path::new(SYS_CPU));
        if freq_probe.is_empty() {
            obs.notes.push(ClockControl::NotExposed.describe());
        }
        obs.cpu_freq_cpus = freq_probe.cpus().to_vec();
        let mut workers = Vec::new();
        for (j, job) in setup.jobs.iter().enumerate() {
            let counters = board.job(j);
            obs.jobs.push(JobSeries {
                name: job.name.clone(),
                workers: counters.len() as u32,
                direct: job.direct,
                invalidate: job.invalidate,
                syncs_writes: job.syncs_writes,
                targets: job.targets.clone(),
                buffers: job.buffers.clone(),
                measured_from_ns: None,
                intervals: Vec::new(),
                cpu_wait: None,
            });
            for w in 0..counters.len() {
                workers.push(WorkerTrack {
                    job: j,
                    tid: 0,
                    schedstat_path: PathBuf::new(),
                    wchan_path: PathBuf::new(),
                    io_path: PathBuf::new(),
                    last_live: LiveTotals::default(),
                    last_sched: SchedStat::default(),
                    last_io: TaskIo::default(),
                    interval_waits: WaitTally::default(),
                    obs: WorkerObservation {
                        job: job.name.clone(),
                        worker: w as u32,
                        wchan_period_ns: if job.buffered_writer {
                            WCHAN_PERIOD.as_nanos() as u64
                        } else {
                            0
                        },
                        ..Default::default()
                    },
                });
            }
        }
        let direct_targets = setup.targets.iter().enumerate().filter(|(_, t)| {
            let path = t.path.display().to_string();
            setup
                .jobs
                .iter()
                .any(|j| j.direct && j.targets.contains(&path))
        });
        let openers = OpenerWatch::new(
            PROC.into(),
            std::process::id(),
            direct_targets.map(|(i, t)| (i, &*t.file)),
            Some(run_start),
        );
        State {
            interval: setup.interval.max(Duration::from_millis(1)),
            run_start,
            run_start_monotonic_ns: iolens_sys::clock::monotonic_ns()
                .saturating_sub(run_start.elapsed().as_nanos() as u64),
            ramps: setup.jobs.iter().map(|j| j.ramp).collect(),
            page_size: obs.page_size_bytes,
            ticks_per_sec: iolens_sys::clock_ticks_per_sec(),
            cache_skips: vec![CacheSkip::default(); probes.len()],
            probes,
            device_stat_paths,
            has_pressure,
            freq_probe,
            jobs_buffered_writer: setup.jobs.iter().map(|j| j.buffered_writer).collect(),
            workers,
            tunables: DirtyTunables::read(Path::new(PROC_SYS_VM)),
            cgroup,
            cgroup_place,
            openers,
            others: ProcessIoWatch::new(PROC.into(), std::process::id()),
            task_io_unreadable: false,
            on_second: setup.on_second,
            second_first_sample: 0,
            buf: String::with_capacity(8192),
            board,
            obs,
        }
    }

    fn run(&mut self, stop: &AtomicBool, mut first_taken: Option<std::sync::mpsc::SyncSender<()>>) {
        let mut next_sample = Instant::now();
        let mut next_wchan = next_sample;
        let mut next_second = next_sample + Duration::from_secs(1);
        // The first pass (the first sample) runs however soon the run
        // stops: the rules diff every counter against that sample.
        let mut first = true;
        while std::mem::take(&mut first) || !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= next_sample {
                self.sample(now, false);
                if let Some(taken) = first_taken.take() {
                    let _ = taken.send(());
                }
                next_sample = (next_sample + self.interval).max(now);
                if now >= next_second {
                    self.end_second();
                    next_second += Duration::from_secs(1);
                }
            }
            let sampling_wchan = self.track_threads();
            if sampling_wchan && now >= next_wchan {
                self.sample_wchan();
                next_wchan = (next_wchan + WCHAN_PERIOD).max(now);
            }
            let wake = if sampling_wchan {
                next_sample.min(next_wchan)
            } else {
                next_sample
            };
            std::thread::park_timeout(wake.saturating_duration_since(Instant::now()));
        }
        self.sample(Instant::now(), true);
        // The run's last, partial second.
        if self.obs.t_ns.len() > self.second_first_sample {
            self.end_second();
        }
    }

    /// Hand the samples of the second just ended to the `--timeline` hook.
    fn end_second(&mut self) {
        if let Some(hook) = self.on_second {
            hook(&self.obs, self.second_first_sample);
        }
        self.second_first_sample = self.obs.t_ns.len();
    }

    /// Notice workers that started or finished; true while a buffered writer runs.
    fn track_threads(&mut self) -> bool {
        let mut buffered_writer_running = false;
        for track in &mut self.workers {
            let Some((pid, tid)) = self.board.worker(track.job, track.obs.worker).thread() else {
                continue;
            };
            if tid != track.tid {
                let task = PathBuf::from(format!("/proc/{pid}/task/{tid}"));
                track.schedstat_path = task.join("schedstat");
                track.wchan_path = task.join("wchan");
                track.io_path = task.join("io");
                track.last_io = TaskIo::default();
                track.tid = tid;
                track.obs.tid = tid;
                if let Some(run) = &self.cgroup_place {
                    track.obs.cgroup = cgroup::thread_elsewhere(run, pid, tid);
                }
            }
            buffered_writer_running |= self.jobs_buffered_writer[track.job];
        }
        buffered_writer_running
    }

    /// One ~100 Hz tick: where each running buffered writer is blocked.
    fn sample_wchan(&mut self) {
        let period_ns = WCHAN_PERIOD.as_nanos() as u64;
        for track in &mut self.workers {
            if track.tid == 0 || !self.jobs_buffered_writer[track.job] {
                continue;
            }
            if !read_into(&track.wchan_path, &mut self.buf) {
                continue;
            }
            track.obs.wchan_samples += 1;
            if let Some(channel) = wchan::parse(&self.buf) {
                track.interval_waits.add(channel, period_ns);
            }
        }
    }

    /// One sample of everything; `last` is the one taken at stop.
    fn sample(&mut self, now: Instant, last: bool) {
        let t_ns = now.saturating_duration_since(self.run_start).as_nanos() as u64;
        self.obs.t_ns.push(t_ns);
        self.sample_cache(last);
        self.openers
            .after_sample(t_ns, now, &self.obs.targets, &mut self.obs.opener_scans);
        self.others.after_sample(now);
        for (path, device) in self.device_stat_paths.iter().zip(&mut self.obs.devices) {
            let counters = if read_into(path, &mut self.buf) {
                parse_stat(&self.buf).unwrap_or_default()
            } else {
                Default::default()
            };
            device.counter_series.push(counters);
            if device.name.starts_with("zram") {
                let stored = read_into(path.with_file_name("mm_stat"), &mut self.buf)
                    .then(|| stack::parse_mm_stat(&self.buf))
                    .flatten();
                device.zram_series.push(stored.unwrap_or_default());
            }
        }
        self.sample_memory();
        self.sample_cgroup();
        if self.has_pressure {
            self.sample_pressure();
        }
        let cpu = if read_into("/proc/stat", &mut self.buf) {
            parse_proc_stat(&self.buf, self.ticks_per_sec).unwrap_or_default()
        } else {
            Default::default()
        };
        self.obs.system_cpu_series.push(cpu);
        if !self.freq_probe.is_empty() {
            self.obs.cpu_freq_khz_series.push(self.freq_probe.sample());
        }
        self.track_threads();
        self.sample_jobs();
        self.tunables.check(t_ns, &mut self.obs.tunable_changes);
        // Memory and the report stay bounded however long the run: older samples coarsen.
        let fewer = rollup::bound(&mut self.obs);
        self.second_first_sample = self.second_first_sample.saturating_sub(fewer);
    }

    /// Each target's pages, within the cost budget; the first and last sample always read.
    fn sample_cache(&mut self, last: bool) {
        let budget = self.interval / CACHE_BUDGET_DIVISOR;
        let first = self.obs.t_ns.len() == 1;
        let targets = self.obs.targets.iter_mut();
        for ((probe, skip), target) in self
            .probes
            .iter_mut()
            .zip(&mut self.cache_skips)
            .zip(targets)
        {
            if skip.left > 0 && !first && !last {
                skip.left -= 1;
                target.cache_series.push(None);
                continue;
            }
            let started = Instant::now();
            target.cache_series.push(probe.sample());
            let cost = started.elapsed();
            skip.every = (cost.as_nanos() / budget.as_nanos().max(1)).clamp(1, 100) as u32;
            skip.left = skip.every - 1;
        }
    }

    fn sample_memory(&mut self) {
        let mut memory = MemorySample::default();
        if read_into("/proc/meminfo", &mut self.buf) {
            meminfo::parse_into(&self.buf, &mut memory);
        }
        if read_into("/proc/vmstat", &mut self.buf) {
            vmstat::parse_into(&self.buf, self.page_size, &mut memory);
        }
        self.obs.memory_series.push(memory);
    }

    /// The run's cgroup; a note the first time one of its files cannot be read.
    fn sample_cgroup(&mut self) {
        let Some(probe) = &mut self.cgroup else {
            return;
        };
        let global = self.obs.memory_series.last().copied().unwrap_or_default();
        let mut sample = CgroupSample::default();
        let all_read = probe.sample(&global, &mut sample, &mut self.obs.cgroup_io);
        self.obs.cgroup_series.push(sample);
        let note =
            "cgroup: some of the run's cgroup files could not be read (zeros in those samples)";
        if !all_read && !self.obs.notes.iter().any(|n| n == note) {
            self.obs.notes.push(note.into());
        }
    }

    fn sample_pressure(&mut self) {
        let mut read = |path: &str| {
            if read_into(path, &mut self.buf) {
                pressure::parse_totals(&self.buf).unwrap_or_default()
            } else {
                (0, 0)
            }
        };
        let (io_some_us, io_full_us) = read("/proc/pressure/io");
        let (memory_some_us, memory_full_us) = read("/proc/pressure/memory");
        self.obs.pressure_series.push(PressureSample {
            io_some_us,
            io_full_us,
            memory_some_us,
            memory_full_us,
        });
    }

    /// Each job's interval from its workers' live counters and schedstat.
    fn sample_jobs(&mut self) {
        let mut intervals: Vec<JobInterval> = vec![JobInterval::default(); self.obs.jobs.len()];
        let mut lat_sums = vec![0u64; self.obs.jobs.len()];
        let mut latencies = vec![LatencyBuckets::default(); self.obs.jobs.len()];
        let mut job_waits: Vec<WaitTally> = vec![WaitTally::default(); self.obs.jobs.len()];
        for track in &mut self.workers {
            let live = self.board.worker(track.job, track.obs.worker);
            let totals = live.totals();
            let delta = totals.since(&track.last_live);
            track.last_live = totals;
            let interval = &mut intervals[track.job];
            for d in 0..2 {
                interval.ios[d] += delta.ios[d];
                interval.bytes[d] += delta.bytes[d];
            }
            lat_sums[track.job] += delta.lat_sum_ns;
            latencies[track.job] += &delta.latencies;
            interval.in_io_ns += delta.in_io_ns;
            interval.lat_max_ns = interval.lat_max_ns.max(live.take_max_lat_ns());
            if live.thread().is_some() && read_into(&track.schedstat_path, &mut self.buf) {
                if let Some(sched) = parse_schedstat(&self.buf) {
                    interval.cpu_ns += sched.cpu_ns.saturating_sub(track.last_sched.cpu_ns);
                    interval.run_delay_ns += sched
                        .run_delay_ns
                        .saturating_sub(track.last_sched.run_delay_ns);
                    track.last_sched = sched;
                    track.obs.cpu_ns = sched.cpu_ns;
                    track.obs.run_delay_ns = sched.run_delay_ns;
                    track.obs.timeslices = sched.timeslices;
                }
            }
            if live.thread().is_some() {
                match read_into(&track.io_path, &mut self.buf)
                    .then(|| task_io::parse(&self.buf))
                    .flatten()
                {
                    Some(io) => {
                        interval.caused += io.since(&track.last_io);
                        track.last_io = io;
                        track.obs.caused = io;
                    }
                    // Gone between the check and the read, or no accounting (CONFIG_TASK_IO_ACCOUNTING).
                    None if track.io_path.exists() => self.task_io_unreadable = true,
                    None => {}
                }
            } else if let Some(io) = live.final_io().filter(|io| *io != track.last_io) {
                // Its last I/Os, after the previous sample read its io file.
                interval.caused += io.since(&track.last_io);
                track.last_io = io;
                track.obs.caused = io;
            }
            job_waits[track.job].absorb(&track.interval_waits);
            let mut total = WaitTally {
                waits: std::mem::take(&mut track.obs.waits),
            };
            total.absorb(&track.interval_waits);
            track.obs.waits = total.take_sorted();
            track.interval_waits.waits.clear();
        }
        for (j, mut interval) in intervals.into_iter().enumerate() {
            let ios = interval.ios[0] + interval.ios[1];
            interval.lat_mean_ns = lat_sums[j].checked_div(ios).unwrap_or(0);
            interval.lat_p99_ns = latencies[j].percentile_ns(99.0).unwrap_or(0);
            interval.waits = job_waits[j].take_sorted();
            self.obs.jobs[j].intervals.push(interval);
        }
    }

    /// When job `j`'s last worker ended its ramp, on the run's clock; None
    /// without a ramp or before any worker set its clock.
    fn measured_from_ns(&self, j: usize) -> Option<u64> {
        let ramp = self.ramps[j];
        if ramp.is_zero() {
            return None;
        }
        let origin = self
            .board
            .job(j)
            .filter_map(|w| w.clock_origin_ns())
            .max()?;
        Some((origin + ramp.as_nanos() as u64).saturating_sub(self.run_start_monotonic_ns))
    }

    fn finish(mut self) -> Observations {
        let measured_from: Vec<Option<u64>> = (0..self.obs.jobs.len())
            .map(|j| self.measured_from_ns(j))
            .collect();
        self.openers.finish(&mut self.obs);
        self.obs.other_processes = self.others.finish();
        if self.task_io_unreadable {
            self.obs.notes.push(ledger::TASK_IO_UNREADABLE.into());
        }
        self.obs.workers = self.workers.into_iter().map(|t| t.obs).collect();
        for (series, from) in self.obs.jobs.iter_mut().zip(measured_from) {
            series.cpu_wait = CpuWait::of(series, &self.obs.t_ns);
            series.measured_from_ns = from;
        }
        self.obs.ledger = ledger::build(&self.obs);
        self.obs.sampler_cpu_ns = iolens_sys::thread_rusage()
            .map(|r| r.user_ns + r.system_ns)
            .unwrap_or(0);
        self.obs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CacheMethod;
    use crate::observe::diskstats::devices_of_stack;
    use crate::testutil::scratch_dir;
    use std::os::unix::fs::FileExt;

    const FILE_BYTES: usize = 4 << 20;

    /// A file on disk, written, synced and dropped from the cache.
    fn cold_file(dir: &Path) -> (PathBuf, Arc<File>) {
        let path = dir.join("target");
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.write_all_at(&vec![5u8; FILE_BYTES], 0).unwrap();
        file.sync_all().unwrap();
        iolens_sys::fadvise_dontneed(&file, 0, 0).unwrap();
        (path, Arc::new(file))
    }

    #[test]
    fn records_a_buffered_read_while_it_runs() {
        let dir = scratch_dir();
        let (path, file) = cold_file(dir.path());
        let board = Arc::new(LiveBoard::new([1]));
        let setup = SamplerSetup {
            interval: Duration::from_millis(20),
            targets: vec![WatchedTarget {
                path: path.clone(),
                file: file.clone(),
                size: FILE_BYTES as u64,
                used_bytes: FILE_BYTES as u64,
                devices: devices_of_stack(&stack::walk(&path)),
                is_block_device: false,
                sparse: false,
                unwritten: false,
                backing_holes: None,
                created: false,
            }],
            jobs: vec![WatchedJob {
                buffers: String::new(),
                name: "reader".into(),
                // Exercises the wait-channel tick too.
                buffered_writer: true,
                direct: false,
                invalidate: false,
                syncs_writes: false,
                targets: vec![path.display().to_string()],
                ramp: Duration::from_millis(50),
            }],
            on_second: None,
        };
        let run_start = Instant::now();
        let sampler = Sampler::start(setup, board.clone(), run_start).unwrap();
        let live = board.worker(0, 0);
        live.worker_started();
        let before_origin = run_start.elapsed();
        live.set_clock_origin(0);
        let after_origin = run_start.elapsed();
        std::thread::sleep(Duration::from_millis(60));
        let mut buf = vec![0u8; 64 << 10];
        for offset in (0..FILE_BYTES).step_by(buf.len()) {
            let start = Instant::now();
            file.read_exact_at(&mut buf, offset as u64).unwrap();
            let ns = start.elapsed().as_nanos() as u64;
            live.record_io(0, buf.len() as u64, ns);
            live.add_in_io(ns);
        }
        std::thread::sleep(Duration::from_millis(60));
        live.worker_finished();
        let obs = sampler.stop();

        let n = obs.t_ns.len();
        assert!(n >= 4, "only {n} samples");
        assert!(obs.t_ns.windows(2).all(|w| w[0] < w[1]), "{:?}", obs.t_ns);
        assert_eq!(obs.memory_series.len(), n);
        assert_eq!(obs.system_cpu_series.len(), n);
        let cpufreq_notes = obs
            .notes
            .iter()
            .filter(|n| n.starts_with("cpufreq not exposed"))
            .count();
        let cpus = obs.cpu_freq_cpus.len();
        if cpus == 0 {
            assert_eq!(cpufreq_notes, 1, "{:?}", obs.notes);
            assert!(obs.cpu_freq_khz_series.is_empty());
        } else {
            assert_eq!(cpufreq_notes, 0, "{:?}", obs.notes);
            assert_eq!(obs.cpu_freq_khz_series.len(), n);
            assert!(obs.cpu_freq_khz_series.iter().all(|s| s.len() == cpus));
        }
        assert_eq!(obs.targets[0].cache_series.len(), n);
        assert_eq!(obs.jobs[0].intervals.len(), n);
        assert!(obs.devices.iter().all(|d| d.counter_series.len() == n));
        assert!(obs.memory_series[0].dirty_threshold_bytes > 0);
        if cgroup::live_place("self").is_some() {
            let noted = obs.notes.iter().any(|n| n.starts_with("cgroup"));
            assert!(
                obs.cgroup_series.len() == n || noted,
                "expected a cgroup sample per sample ({n}) or a note, got {} and {:?}",
                obs.cgroup_series.len(),
                obs.notes
            );
        }
        assert!(obs
            .cgroup_io
            .iter()
            .all(|d| d.counter_series.len() == obs.cgroup_series.len()));

        let read: u64 = obs.jobs[0].intervals.iter().map(|i| i.bytes[0]).sum();
        assert_eq!(read, FILE_BYTES as u64);
        // Within a millisecond: the run's start is put on the monotonic clock by two clock reads.
        let ramp_end = |since: Duration| (since + Duration::from_millis(50)).as_nanos() as u64;
        let measured_from = obs.jobs[0].measured_from_ns.expect("a ramp end");
        let ms = 1_000_000;
        assert!(
            (ramp_end(before_origin) - ms..=ramp_end(after_origin) + ms).contains(&measured_from),
            "expected the ramp to end 50 ms after the worker's clock started ({before_origin:?}), saw {measured_from} ns"
        );
        assert!(obs.jobs[0].intervals.iter().any(|i| i.lat_max_ns > 0));
        // An I/O recorded while a sample is read may have its count, bucket
        // and max land in neighbouring intervals (see `record_io`): one I/O
        // per interval may disagree, never more.
        let intervals = &obs.jobs[0].intervals;
        let max = intervals.iter().map(|i| i.lat_max_ns).max().unwrap_or(0);
        assert!(
            intervals
                .iter()
                .all(|i| (i.ios[0] < 2 || i.lat_p99_ns > 0) && i.lat_p99_ns <= max * 9 / 8),
            "expected a p99 in every interval with I/Os, within the run's max {max}, saw {intervals:?}"
        );
        let worker = &obs.workers[0];
        assert_ne!(worker.tid, 0);
        assert!(worker.cpu_ns > 0 && worker.wchan_samples > 0, "{worker:?}");

        let pages = FILE_BYTES as u64 / obs.page_size_bytes;
        let cached: Vec<Option<u64>> = obs.targets[0]
            .cache_series
            .iter()
            .map(|p| p.map(|p| p.cached))
            .collect();
        if obs.targets[0].method != CacheMethod::Unavailable {
            assert_eq!(cached[0], Some(0), "{cached:?}");
            assert_eq!(*cached.last().unwrap(), Some(pages), "{cached:?}");
        }
        eprintln!(
            "sampler: {} samples over {} ms at 20 ms, {} us of CPU",
            n,
            obs.t_ns[n - 1] / 1_000_000,
            obs.sampler_cpu_ns / 1000
        );
    }

    /// Nothing to watch, and samples an hour apart: only the first and the last.
    fn idle_setup() -> (SamplerSetup, Arc<LiveBoard>) {
        let setup = SamplerSetup {
            interval: Duration::from_secs(3600),
            targets: Vec::new(),
            jobs: Vec::new(),
            on_second: None,
        };
        (setup, Arc::new(LiveBoard::new([])))
    }

    #[test]
    fn stop_returns_promptly_with_a_final_sample() {
        let (setup, board) = idle_setup();
        let started = Instant::now();
        // Stopped at once: the thread may not have looked at the clock yet.
        let sampler = Sampler::start(setup, board, started).unwrap();
        let obs = sampler.stop();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(obs.t_ns.len(), 2);
    }

    #[test]
    fn the_first_sample_is_taken_before_start_returns() {
        let (setup, board) = idle_setup();
        let started = Instant::now();
        let sampler = Sampler::start(setup, board, started).unwrap();
        // Workers start after `start` returns: their first I/O must come after
        // the sample every rule diffs against.
        let first_io_ns = started.elapsed().as_nanos() as u64;
        let obs = sampler.stop();
        assert!(
            obs.t_ns[0] <= first_io_ns,
            "expected the first sample ({} ns) before start returned ({first_io_ns} ns)",
            obs.t_ns[0]
        );
    }
}
