//! Building the stack ledger (`model::JobLedger`) from what the sampler
//! recorded: for each job's measured window (its ramp left out), its bytes,
//! what its threads caused below the page cache, what the cache kept, and
//! each device behind its targets.
//! Pure: it reads `Observations` only, so it is tested on synthetic series.

use crate::model::{
    CachePages, DeviceCounters, JobLedger, JobSeries, LayerTraffic, Observations, TaskIo,
};

/// The note the sampler leaves when a worker's per-task io could not be read:
/// the ledger then knows nothing of what iolens caused.
pub(crate) const TASK_IO_UNREADABLE: &str =
    "per-task io accounting (/proc/PID/task/TID/io) could not be read: what iolens caused below the page cache is unknown";

/// One ledger per job that did I/O, in job order.
pub(crate) fn build(obs: &Observations) -> Vec<JobLedger> {
    let task_io_known = !obs.notes.iter().any(|n| n == TASK_IO_UNREADABLE);
    obs.jobs
        .iter()
        .filter_map(|series| job_ledger(obs, series, task_io_known))
        .collect()
}

fn job_ledger(obs: &Observations, series: &JobSeries, task_io_known: bool) -> Option<JobLedger> {
    let (from, to) = series.measured_span(&obs.t_ns)?;
    let window = from + 1..=to;
    let mut job_bytes = [0u64; 2];
    let mut caused = TaskIo::default();
    for interval in series.intervals.get(window.clone())? {
        job_bytes[0] += interval.bytes[0];
        job_bytes[1] += interval.bytes[1];
        caused += interval.caused;
    }
    let mut iolens_caused = TaskIo::default();
    for other in &obs.jobs {
        for interval in other.intervals.get(window.clone()).unwrap_or(&[]) {
            iolens_caused += interval.caused;
        }
    }
    let (caused, iolens_caused) = if task_io_known {
        (Some(caused), Some(iolens_caused))
    } else {
        (None, None)
    };
    Some(JobLedger {
        job: series.name.clone(),
        from_ns: obs.t_ns.get(from).copied().unwrap_or(0),
        to_ns: obs.t_ns.get(to).copied().unwrap_or(0),
        job_read_bytes: job_bytes[0],
        job_write_bytes: job_bytes[1],
        cache_served_bytes: caused.map(|c| job_bytes[0].saturating_sub(c.read_bytes)),
        caused,
        iolens_caused,
        dirty_at_end_bytes: dirty_at(obs, series, to),
        layers: layers(obs, series, from, to),
    })
}

/// Dirty and writeback bytes of the job's targets at sample `at` (or the last
/// one read before it: costly probes skip samples); None when no target's
/// cache could be read.
fn dirty_at(obs: &Observations, series: &JobSeries, at: usize) -> Option<u64> {
    let mut pages = None;
    for target in obs
        .targets
        .iter()
        .filter(|t| series.targets.contains(&t.path))
    {
        let last_read: Option<&CachePages> = target
            .cache_series
            .get(..=at)
            .unwrap_or(&target.cache_series)
            .iter()
            .rev()
            .find_map(Option::as_ref);
        if let Some(p) = last_read {
            *pages.get_or_insert(0) += p.dirty + p.writeback;
        }
    }
    pages.map(|p: u64| p * obs.page_size_bytes)
}

/// Each device behind the job's targets, in the order they were walked.
fn layers(obs: &Observations, series: &JobSeries, from: usize, to: usize) -> Vec<LayerTraffic> {
    let mut names: Vec<&str> = Vec::new();
    for target in obs
        .targets
        .iter()
        .filter(|t| series.targets.contains(&t.path))
    {
        for name in &target.devices {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let device = obs.devices.iter().find(|d| d.name == name)?;
            let (a, b) = (
                device.counter_series.get(from)?,
                device.counter_series.get(to)?,
            );
            let mut row = traffic(&device.name, &device.via, a, b);
            row.zram = device.zram_series.get(to).copied();
            Some(row)
        })
        .collect()
}

fn traffic(name: &str, via: &str, a: &DeviceCounters, b: &DeviceCounters) -> LayerTraffic {
    let diff = |f: fn(&DeviceCounters) -> u64| f(b).saturating_sub(f(a));
    LayerTraffic {
        device: name.into(),
        via: via.into(),
        read_bytes: diff(|c| c.read_sectors) * 512,
        write_bytes: diff(|c| c.write_sectors) * 512,
        read_ios: diff(|c| c.read_ios),
        write_ios: diff(|c| c.write_ios),
        read_merges: diff(|c| c.read_merges),
        write_merges: diff(|c| c.write_merges),
        discard_bytes: diff(|c| c.discard_sectors) * 512,
        flush_ios: diff(|c| c.flush_ios),
        zram: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DeviceObservation, JobInterval, TargetObservation};

    /// A job on /f over device `dev` (behind it: `below`), 5 samples, I/O in intervals 1..=3.
    fn observations() -> Observations {
        let interval = |read: u64, caused_read: u64| JobInterval {
            ios: [read / 4096, 0],
            bytes: [read, 0],
            caused: TaskIo {
                read_bytes: caused_read,
                ..Default::default()
            },
            ..Default::default()
        };
        let counters = |i: u64, sectors: u64| DeviceCounters {
            read_ios: i * 10,
            read_sectors: i * sectors,
            flush_ios: i,
            ..Default::default()
        };
        Observations {
            page_size_bytes: 4096,
            t_ns: vec![0, 100, 200, 300, 400],
            jobs: vec![JobSeries {
                name: "r".into(),
                targets: vec!["/f".into()],
                intervals: vec![
                    interval(0, 0),
                    interval(8 << 20, 4 << 20),
                    interval(8 << 20, 4 << 20),
                    interval(8 << 20, 4 << 20),
                    interval(0, 0),
                ],
                ..Default::default()
            }],
            targets: vec![TargetObservation {
                path: "/f".into(),
                devices: vec!["loop3".into(), "vda".into()],
                cache_series: vec![
                    None,
                    None,
                    Some(CachePages {
                        dirty: 3,
                        writeback: 1,
                        ..Default::default()
                    }),
                    None,
                    None,
                ],
                ..Default::default()
            }],
            devices: vec![
                DeviceObservation {
                    zram_series: Vec::new(),
                    name: "vda".into(),
                    via: "backing file of loop3".into(),
                    counter_series: (0..5).map(|i| counters(i, 100)).collect(),
                },
                DeviceObservation {
                    zram_series: Vec::new(),
                    name: "loop3".into(),
                    via: "holds /f".into(),
                    counter_series: (0..5).map(|i| counters(i, 8192)).collect(),
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn a_jobs_window_holds_its_bytes_what_it_caused_and_each_layer() {
        let ledger = build(&observations());
        assert_eq!(ledger.len(), 1);
        let l = &ledger[0];
        assert_eq!((l.from_ns, l.to_ns), (0, 300));
        assert_eq!(l.job_read_bytes, 24 << 20);
        assert_eq!(l.caused.unwrap().read_bytes, 12 << 20);
        assert_eq!(l.cache_served_bytes, Some(12 << 20));
        assert_eq!(l.dirty_at_end_bytes, Some(4 * 4096));
        let devices: Vec<(&str, u64, u64)> = l
            .layers
            .iter()
            .map(|d| (d.device.as_str(), d.read_bytes, d.flush_ios))
            .collect();
        assert_eq!(
            devices,
            [("loop3", 3 * 8192 * 512, 3), ("vda", 3 * 100 * 512, 3)]
        );
    }

    #[test]
    fn the_ramp_is_not_in_the_window() {
        let mut obs = observations();
        // ramp_time ended at 150 ns: interval 2 (100–200) held its end, so measuring starts at 200.
        obs.jobs[0].measured_from_ns = Some(150);
        let l = &build(&obs)[0];
        assert_eq!((l.from_ns, l.to_ns), (200, 300));
        assert_eq!(l.job_read_bytes, 8 << 20);
        let devices: Vec<(&str, u64)> = l
            .layers
            .iter()
            .map(|d| (d.device.as_str(), d.read_bytes))
            .collect();
        assert_eq!(devices, [("loop3", 8192 * 512), ("vda", 100 * 512)]);
    }

    #[test]
    fn without_task_accounting_nothing_is_said_of_what_iolens_caused() {
        let mut obs = observations();
        obs.notes.push(TASK_IO_UNREADABLE.into());
        let l = &build(&obs)[0];
        assert_eq!((l.caused, l.cache_served_bytes), (None, None));
        assert_eq!(l.layers.len(), 2, "the devices are still known");
    }
}
