//! fio's `--bandwidth-log`: the whole run's bandwidth per direction, from the sampler's
//! series, in `agg-read_bw.log`, `agg-write_bw.log` and `agg-trim_bw.log`, one line per
//! window of at least 500 ms (fio's bandwidth averaging time) in fio's log format:
//! `time_ms, KiB/s, ddir, 0, 0` (block size and priority 0, as fio writes them). The
//! sampler counts reads and writes; the trim log's lines hold 0.

use crate::model::Observations;
use std::fmt::Write as _;

/// The files, in fio's direction order (read, write, trim).
pub(crate) const FILES: [&str; 3] = ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"];
const WINDOW_NS: u64 = 500_000_000;

/// The text of each of `FILES`, in its order.
pub(crate) fn render(obs: &Observations) -> [String; 3] {
    let mut logs: [String; 3] = Default::default();
    let (mut window_start_ns, mut bytes) = (0, [0u64; 2]);
    for (sample, &t_ns) in obs.t_ns.iter().enumerate() {
        for interval in obs.jobs.iter().filter_map(|j| j.intervals.get(sample)) {
            bytes[0] += interval.bytes[0];
            bytes[1] += interval.bytes[1];
        }
        let length_ns = t_ns.saturating_sub(window_start_ns);
        if length_ns < WINDOW_NS {
            continue;
        }
        for (ddir, log) in logs.iter_mut().enumerate() {
            let moved = bytes.get(ddir).copied().unwrap_or(0);
            let kib_per_sec = u128::from(moved) * 1_000_000_000 / u128::from(length_ns) / 1024;
            let _ = writeln!(log, "{}, {kib_per_sec}, {ddir}, 0, 0", t_ns / 1_000_000);
        }
        (window_start_ns, bytes) = (t_ns, [0; 2]);
    }
    logs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{JobInterval, JobSeries};

    fn job(bytes: &[[u64; 2]]) -> JobSeries {
        JobSeries {
            measured_from_ns: None,
            buffers: String::new(),
            name: "j".into(),
            workers: 1,
            direct: false,
            invalidate: false,
            syncs_writes: false,
            targets: Vec::new(),
            intervals: bytes
                .iter()
                .map(|&bytes| JobInterval {
                    bytes,
                    ..JobInterval::default()
                })
                .collect(),
            cpu_wait: None,
        }
    }

    #[test]
    fn windows_of_half_a_second_sum_every_job() {
        let obs = Observations {
            t_ns: (1..=6).map(|i| i * 200_000_000).collect(),
            jobs: vec![
                job(&[[1 << 20, 0]; 6]),
                job(&[
                    [0, 1 << 19],
                    [0, 1 << 19],
                    [0, 1 << 19],
                    [0; 2],
                    [0; 2],
                    [0; 2],
                ]),
            ],
            ..Observations::default()
        };
        let [read, write, trim] = render(&obs);
        // 600 ms windows (the first sample past 500 ms closes one): 3 MiB read in the
        // first, 1.5 MiB written in it, nothing written in the second.
        assert_eq!(
            (read.as_str(), write.as_str(), trim.as_str()),
            (
                "600, 5120, 0, 0, 0\n1200, 5120, 0, 0, 0\n",
                "600, 2560, 1, 0, 0\n1200, 0, 1, 0, 0\n",
                "600, 0, 2, 0, 0\n1200, 0, 2, 0, 0\n"
            ),
            "expected one line per window and direction with the summed KiB/s"
        );
    }
}
