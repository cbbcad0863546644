//! Bounded observation series for runs of any length: the sampler keeps the last
//! `RECENT` samples at full resolution and rolls older ones up, two adjacent
//! samples into one, whenever the series reach `CAP` samples. Old samples so get
//! coarser the older they are (1, 2, 4 … intervals each) while the number kept
//! stays below `CAP`, so a day-long run holds as many samples as a 6-minute one.
//!
//! A rolled-up sample keeps what findings and charts read off it:
//! - a cumulative counter (device I/Os, vmstat, CPU and pressure time) keeps its
//!   later value, so every total and every rate over the merged interval is exact;
//! - a level (dirty or cached bytes, pages of a target in the cache, I/Os in
//!   flight) keeps its peak over the two, so no high-water mark is lost (a CPU
//!   clock keeps its lowest non-zero reading: a drop is the evidence there);
//! - a per-interval amount (a job's I/Os, bytes, CPU time) is summed, its mean
//!   latency weighted by I/Os and its maximum kept.

use crate::model::cgroup::{CgroupIoCounters, CgroupSample};
use crate::model::ledger::TaskIo;
use crate::model::stack::ZramStat;
use crate::model::{
    CachePages, DeviceCounters, JobInterval, MemorySample, Observations, PressureSample,
    SystemCpuSample, WaitTime,
};

/// Samples kept at most, per series.
pub(crate) const CAP: usize = 3600;
/// The newest samples, never rolled up (one minute at the default 100 ms).
pub(crate) const RECENT: usize = 600;

/// A sample that can take in the one just before it, becoming the sample of
/// both intervals.
pub(crate) trait Rollup {
    /// By default the sample holds only cumulative counters: the later values stand.
    fn absorb_earlier(&mut self, _earlier: &Self) {}
}

/// Roll the older samples of every series up once the series reach `CAP`;
/// how many samples fewer there are (indexes of the recent ones move down by it).
pub(crate) fn bound(obs: &mut Observations) -> usize {
    let samples = obs.t_ns.len();
    if samples < CAP {
        return 0;
    }
    // An even count of the oldest samples, merged pairwise.
    let old = (samples - RECENT) & !1;
    merge_oldest(&mut obs.t_ns, samples, old);
    merge_oldest(&mut obs.memory_series, samples, old);
    merge_oldest(&mut obs.pressure_series, samples, old);
    merge_oldest(&mut obs.system_cpu_series, samples, old);
    merge_oldest(&mut obs.cpu_freq_khz_series, samples, old);
    merge_oldest(&mut obs.cgroup_series, samples, old);
    for target in &mut obs.targets {
        merge_oldest(&mut target.cache_series, samples, old);
    }
    for device in &mut obs.devices {
        merge_oldest(&mut device.counter_series, samples, old);
        merge_oldest(&mut device.zram_series, samples, old);
    }
    for io in &mut obs.cgroup_io {
        merge_oldest(&mut io.counter_series, samples, old);
    }
    for job in &mut obs.jobs {
        merge_oldest(&mut job.intervals, samples, old);
    }
    obs.rolled_up += (old / 2) as u64;
    old / 2
}

/// Merge the first `old` of `samples` samples pairwise in `series`, which holds
/// the last `series.len()` of them (a series may start late, or be empty when
/// its source is missing).
fn merge_oldest<T: Rollup + Clone>(series: &mut Vec<T>, samples: usize, old: usize) {
    let Some(skipped) = samples.checked_sub(series.len()) else {
        return;
    };
    let merged: Vec<T> = (0..old)
        .step_by(2)
        .filter_map(|sample| {
            let earlier = sample.checked_sub(skipped).and_then(|i| series.get(i));
            let later = (sample + 1)
                .checked_sub(skipped)
                .and_then(|i| series.get(i));
            match (earlier, later) {
                (Some(e), Some(l)) => {
                    let mut both = l.clone();
                    both.absorb_earlier(e);
                    Some(both)
                }
                (None, l) => l.cloned(),
                (Some(e), None) => Some(e.clone()),
            }
        })
        .collect();
    let first_kept = old.saturating_sub(skipped).min(series.len());
    series.splice(..first_kept, merged);
}

fn peak(later: &mut u64, earlier: u64) {
    *later = (*later).max(earlier);
}

/// A sample time: the merged sample ends where the later one did.
impl Rollup for u64 {}

impl Rollup for MemorySample {
    fn absorb_earlier(&mut self, e: &Self) {
        peak(&mut self.cached_bytes, e.cached_bytes);
        peak(&mut self.dirty_bytes, e.dirty_bytes);
        peak(&mut self.writeback_bytes, e.writeback_bytes);
        // Free memory's low-water mark is its evidence.
        self.free_bytes = self.free_bytes.min(e.free_bytes);
    }
}

impl Rollup for PressureSample {}

impl Rollup for SystemCpuSample {}

impl Rollup for Vec<u64> {
    /// Each CPU's clock: its lowest reading (0 is "unreadable", not a clock).
    fn absorb_earlier(&mut self, e: &Self) {
        for (later, &earlier) in self.iter_mut().zip(e) {
            if *later == 0 || (earlier != 0 && earlier < *later) {
                *later = earlier;
            }
        }
    }
}

impl Rollup for CgroupSample {
    fn absorb_earlier(&mut self, e: &Self) {
        peak(&mut self.memory_usage_bytes, e.memory_usage_bytes);
        peak(&mut self.file_bytes, e.file_bytes);
        peak(&mut self.dirty_bytes, e.dirty_bytes);
        peak(&mut self.writeback_bytes, e.writeback_bytes);
    }
}

impl Rollup for Option<CachePages> {
    /// A target's pages (None: not read at that sample, to bound the cost).
    fn absorb_earlier(&mut self, e: &Self) {
        match (self.as_mut(), e) {
            (Some(later), Some(earlier)) => {
                peak(&mut later.cached, earlier.cached);
                peak(&mut later.dirty, earlier.dirty);
                peak(&mut later.writeback, earlier.writeback);
            }
            (None, Some(earlier)) => *self = Some(*earlier),
            _ => {}
        }
    }
}

impl Rollup for DeviceCounters {
    fn absorb_earlier(&mut self, e: &Self) {
        peak(&mut self.in_flight, e.in_flight);
    }
}

impl Rollup for ZramStat {
    fn absorb_earlier(&mut self, e: &Self) {
        peak(&mut self.orig_data_bytes, e.orig_data_bytes);
        peak(&mut self.compr_data_bytes, e.compr_data_bytes);
        peak(&mut self.mem_used_bytes, e.mem_used_bytes);
        peak(&mut self.same_pages, e.same_pages);
        peak(&mut self.huge_pages, e.huge_pages);
    }
}

impl Rollup for CgroupIoCounters {}

impl Rollup for JobInterval {
    fn absorb_earlier(&mut self, e: &Self) {
        let ios = |i: &JobInterval| i.ios[0] + i.ios[1];
        let (n_later, n_earlier) = (ios(self), ios(e));
        if n_later + n_earlier > 0 {
            let weighted = u128::from(self.lat_mean_ns) * u128::from(n_later)
                + u128::from(e.lat_mean_ns) * u128::from(n_earlier);
            self.lat_mean_ns = (weighted / u128::from(n_later + n_earlier)) as u64;
        }
        for d in 0..2 {
            self.ios[d] += e.ios[d];
            self.bytes[d] += e.bytes[d];
        }
        peak(&mut self.lat_max_ns, e.lat_max_ns);
        peak(&mut self.lat_p99_ns, e.lat_p99_ns);
        self.in_io_ns += e.in_io_ns;
        self.cpu_ns += e.cpu_ns;
        self.run_delay_ns += e.run_delay_ns;
        add_waits(&mut self.waits, &e.waits);
        add_task_io(&mut self.caused, &e.caused);
    }
}

fn add_waits(later: &mut Vec<WaitTime>, earlier: &[WaitTime]) {
    for wait in earlier {
        match later.iter_mut().find(|w| w.wchan == wait.wchan) {
            Some(same) => same.time_ns += wait.time_ns,
            None => later.push(wait.clone()),
        }
    }
}

fn add_task_io(later: &mut TaskIo, earlier: &TaskIo) {
    later.read_bytes += earlier.read_bytes;
    later.write_bytes += earlier.write_bytes;
    later.cancelled_write_bytes += earlier.cancelled_write_bytes;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DeviceObservation, JobSeries, TargetObservation};

    /// Sample `i` of a synthetic run: counters that grow, a level with one spike.
    fn push(obs: &mut Observations, i: u64, spike_at: u64) {
        obs.t_ns.push((i + 1) * 100_000_000);
        obs.memory_series.push(MemorySample {
            dirty_bytes: if i == spike_at { 9 << 30 } else { i % 1000 },
            pgpgout_kib: i * 4,
            ..MemorySample::default()
        });
        obs.devices[0].counter_series.push(DeviceCounters {
            write_ios: i * 10,
            ..DeviceCounters::default()
        });
        obs.targets[0]
            .cache_series
            .push((!i.is_multiple_of(3)).then_some(CachePages {
                cached: i % 50,
                ..CachePages::default()
            }));
        obs.jobs[0].intervals.push(JobInterval {
            ios: [0, 10],
            bytes: [0, 40960],
            lat_mean_ns: 1000 + i % 7,
            lat_max_ns: if i == spike_at { 5_000_000 } else { 2000 },
            ..JobInterval::default()
        });
    }

    fn run_of(samples: u64, spike_at: u64) -> Observations {
        let mut obs = Observations {
            devices: vec![DeviceObservation::default()],
            targets: vec![TargetObservation::default()],
            jobs: vec![JobSeries::default()],
            ..Observations::default()
        };
        for i in 0..samples {
            push(&mut obs, i, spike_at);
            bound(&mut obs);
            assert!(obs.t_ns.len() < CAP, "sample {i}: {} kept", obs.t_ns.len());
        }
        obs
    }

    #[test]
    fn a_million_samples_stay_bounded_with_totals_exact_and_peaks_kept() {
        // 10^6 samples: 28 hours at 100 ms.
        let n = 1_000_000;
        let obs = run_of(n, 12_345);
        let kept = obs.t_ns.len();
        assert!(kept < CAP);
        assert_eq!(
            kept as u64 + obs.rolled_up,
            n,
            "every sample taken is counted"
        );
        for len in [
            obs.memory_series.len(),
            obs.devices[0].counter_series.len(),
            obs.targets[0].cache_series.len(),
            obs.jobs[0].intervals.len(),
        ] {
            assert_eq!(len, kept, "every series keeps one entry per sample time");
        }
        assert!(
            obs.t_ns.windows(2).all(|w| w[0] < w[1]),
            "times stay in order"
        );
        assert_eq!(*obs.t_ns.last().unwrap(), n * 100_000_000);
        // Counters: the last value stands, so totals and rates over any span are exact.
        assert_eq!(
            obs.devices[0].counter_series.last().unwrap().write_ios,
            (n - 1) * 10
        );
        // Amounts per interval add up to the whole run.
        let ios: u64 = obs.jobs[0].intervals.iter().map(|i| i.ios[1]).sum();
        assert_eq!(ios, n * 10);
        // The early spike survived every roll-up.
        assert_eq!(
            obs.memory_series.iter().map(|m| m.dirty_bytes).max(),
            Some(9 << 30)
        );
        assert_eq!(
            obs.jobs[0].intervals.iter().map(|i| i.lat_max_ns).max(),
            Some(5_000_000)
        );
        assert!(obs.jobs[0]
            .intervals
            .iter()
            .all(|i| (1000..1007).contains(&i.lat_mean_ns)));
    }

    #[test]
    fn the_recent_samples_stay_as_taken() {
        let n = 50_000;
        let obs = run_of(n, 0);
        let recent = &obs.t_ns[obs.t_ns.len() - RECENT..];
        let expected: Vec<u64> = (n - RECENT as u64..n)
            .map(|i| (i + 1) * 100_000_000)
            .collect();
        assert_eq!(recent, expected.as_slice());
        let dirty: Vec<u64> = obs.memory_series[obs.t_ns.len() - RECENT..]
            .iter()
            .map(|m| m.dirty_bytes)
            .collect();
        let taken: Vec<u64> = (n - RECENT as u64..n).map(|i| i % 1000).collect();
        assert_eq!(dirty, taken);
    }

    #[test]
    fn a_series_that_started_late_stays_aligned_with_the_sample_times() {
        let mut obs = Observations::default();
        let mut late: Vec<u64> = Vec::new();
        for i in 0..CAP as u64 {
            obs.t_ns.push(i);
            if i >= 10 {
                late.push(i);
            }
        }
        let samples = obs.t_ns.len();
        let old = (samples - RECENT) & !1;
        merge_oldest(&mut obs.t_ns, samples, old);
        merge_oldest(&mut late, samples, old);
        // Each kept entry of the late series is the time of its sample (u64 keeps the later).
        let offset = obs.t_ns.len() - late.len();
        assert_eq!(&obs.t_ns[offset..], late.as_slice());
    }
}
