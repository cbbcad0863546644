//! `--timeline`: one line per second while the run goes on, summing every
//! job's I/O over the samples of that second (in the spirit of the seed 004
//! tester): throughput, IOPS, the share of time the workers spent inside I/O
//! calls, latency, dirty-page state and the targets' cached pages.

use crate::model::{JobInterval, Observations};

/// The column heads, printed once before the first line.
pub(crate) const HEADER: &str = "timeline:     t     MiB/s      IOPS  in-I/O  lat avg  lat max       Dirty   Writeback  cached pages";

/// The line for samples `from..` of `obs` (the second just ended).
pub(crate) fn line(obs: &Observations, from: usize) -> String {
    let to = obs.t_ns.len();
    let end_ns = obs.t_ns.last().copied().unwrap_or(0);
    // Rates cover the intervals long enough for one (see `rate_secs`).
    let timed: Vec<(usize, f64)> = (from..to)
        .filter_map(|i| Some((i, obs.rate_secs(i)?)))
        .collect();
    let secs: f64 = timed.iter().map(|&(_, s)| s).sum::<f64>().max(1e-9);
    let (mut bytes, mut ios, mut in_io_ns, mut lat_sum, mut lat_max, mut workers) =
        (0u64, 0u64, 0u64, 0f64, 0u64, 0u64);
    for series in &obs.jobs {
        let intervals: Vec<&JobInterval> = timed
            .iter()
            .filter_map(|&(i, _)| series.intervals.get(i))
            .collect();
        let job_ios: u64 = intervals.iter().map(|i| i.ios[0] + i.ios[1]).sum();
        if job_ios > 0 {
            workers += u64::from(series.workers);
        }
        for i in intervals {
            let n = i.ios[0] + i.ios[1];
            bytes += i.bytes[0] + i.bytes[1];
            ios += n;
            in_io_ns += i.in_io_ns;
            lat_sum += i.lat_mean_ns as f64 * n as f64;
            lat_max = lat_max.max(i.lat_max_ns);
        }
    }
    let in_io_pct = in_io_ns as f64 / (workers.max(1) as f64 * secs * 1e9) * 100.0;
    let lat_avg_us = if ios > 0 {
        lat_sum / ios as f64 / 1e3
    } else {
        0.0
    };
    let memory = obs.memory_series.last().copied().unwrap_or_default();
    let cached: u64 = obs
        .targets
        .iter()
        .filter_map(|t| t.cache_series.iter().rev().flatten().next())
        .map(|p| p.cached)
        .sum();
    format!(
        "timeline: {:>5.1}s {:>9.1} {:>9.0} {:>6.1}% {:>6.0}us {:>6.0}us {:>7.1} MiB {:>7.1} MiB  {cached:>12}",
        end_ns as f64 / 1e9,
        bytes as f64 / secs / (1u64 << 20) as f64,
        ios as f64 / secs,
        in_io_pct.min(100.0),
        lat_avg_us,
        lat_max as f64 / 1e3,
        memory.dirty_bytes as f64 / (1u64 << 20) as f64,
        memory.writeback_bytes as f64 / (1u64 << 20) as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CachePages, JobSeries, MemorySample, TargetObservation};

    #[test]
    fn a_second_of_samples_becomes_one_line() {
        let interval = JobInterval {
            ios: [2560, 0],
            bytes: [2560 * 4096, 0],
            lat_mean_ns: 50_000,
            lat_max_ns: 900_000,
            in_io_ns: 50_000_000,
            ..Default::default()
        };
        let obs = Observations {
            interval_ns: 100_000_000,
            t_ns: (0..=20).map(|i| i * 100_000_000).collect(),
            jobs: vec![JobSeries {
                name: "r".into(),
                workers: 1,
                intervals: vec![interval; 21],
                ..Default::default()
            }],
            memory_series: vec![MemorySample {
                dirty_bytes: 3 << 20,
                ..Default::default()
            }],
            targets: vec![TargetObservation {
                cache_series: vec![
                    Some(CachePages {
                        cached: 77,
                        ..Default::default()
                    }),
                    None,
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let line = line(&obs, 11);
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            fields,
            [
                "timeline:",
                "2.0s",
                "100.0",
                "25600",
                "50.0%",
                "50us",
                "900us",
                "3.0",
                "MiB",
                "0.0",
                "MiB",
                "77"
            ],
            "{line}"
        );
    }

    #[test]
    fn a_last_sliver_of_a_second_gives_no_impossible_rate() {
        let obs = Observations {
            interval_ns: 100_000_000,
            // The stop sample, 20 µs after the tick at 1.0 s.
            t_ns: vec![900_000_000, 1_000_000_000, 1_000_020_000],
            jobs: vec![JobSeries {
                name: "r".into(),
                workers: 1,
                intervals: vec![
                    JobInterval::default(),
                    JobInterval {
                        ios: [100, 0],
                        bytes: [100 << 20, 0],
                        ..Default::default()
                    },
                    JobInterval {
                        ios: [8, 0],
                        bytes: [8 << 20, 0],
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let line = line(&obs, 2);
        let mib_s = line.split_whitespace().nth(2).unwrap();
        assert_eq!(
            mib_s, "0.0",
            "expected no rate over a 20 µs sliver (8 MiB in it would read 400000 MiB/s), saw {line}"
        );
        let whole = super::line(&obs, 1);
        assert_eq!(
            whole.split_whitespace().nth(2),
            Some("1000.0"),
            "expected 100 MiB over the full 100 ms interval only, saw {whole}"
        );
    }
}
