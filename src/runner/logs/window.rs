//! The windowing side of the I/O logs: `IoLogger` takes each completed I/O and
//! closes fio's rate, value and histogram windows into entries, a chunk at a time.

use super::sink::Sink;
use super::*;
use crate::stats::histogram::bucket_index;

/// The job's bytes and I/Os of one direction in the open rate window.
#[derive(Debug, Clone, Copy, Default)]
struct RateTotals {
    ios: u64,
    bytes: u64,
}

/// The open window of per-I/O values of one kind of log and direction (fio's `avg_window`).
#[derive(Debug, Clone, Copy, Default)]
struct ValueWindow {
    sum: u128,
    max: u64,
    count: u64,
    /// Where the window started, ms (fio's `avg_last`).
    start_ms: u64,
}

/// The kinds averaged from per-I/O values, in the order of `IoLogger::value_windows`.
const VALUE_KINDS: [Kind; 5] = [Kind::Bw, Kind::Iops, Kind::Slat, Kind::Clat, Kind::Lat];

/// How far short of a full window fio still closes a window of per-I/O bandwidth
/// or IOPS (its `LOG_MSEC_SLACK`); latency windows get none.
const SLACK_MS: u64 = 1;

/// The open histogram window of one direction.
struct HistWindow {
    counts: Box<[u64; BUCKETS]>,
    /// Where the window started, ms; 0 until an I/O completes after the first
    /// millisecond (fio's `hist_last`, set by the first I/O that finds it 0).
    start_ms: u64,
}

/// What one worker logs; created only when the job asks for a log.
pub(crate) struct IoLogger {
    avg_ms: u64,
    hist_ms: u64,
    /// fio's `per_unit_log`: the bandwidth and IOPS logs average per-I/O values
    /// like the latency logs, instead of logging the job's rate per window.
    per_io_rates: bool,
    /// Which of `VALUE_KINDS` the job logs.
    logged: [bool; 5],
    /// Entries not yet written to the part files (at most about `CHUNK_ENTRIES`).
    pending: Entries,
    rates_open: [RateTotals; DDIRS],
    rate_window_end_ns: u64,
    /// The job's time limit (`runtime`), ns after measuring starts: fio stops the job
    /// there before its helper thread samples a rate window ending at or after it.
    rates_until_ns: u64,
    value_windows: [[ValueWindow; DDIRS]; 5],
    hist_open: Option<[HistWindow; DDIRS]>,
    sink: Sink,
}

impl IoLogger {
    /// `ioprio` is the job's (class, level), for the priority column.
    pub(crate) fn new(spec: &LogSpec, ioprio: Option<(u32, u32)>) -> Self {
        let hist_window = || HistWindow {
            counts: Box::new([0; BUCKETS]),
            start_ms: 0,
        };
        let per_io_rates = spec.per_io_rates();
        IoLogger {
            avg_ms: spec.avg_msec,
            hist_ms: spec.hist_msec,
            per_io_rates,
            logged: [
                spec.bw.is_some() && per_io_rates,
                spec.iops.is_some() && per_io_rates,
                spec.lat.is_some(),
                spec.lat.is_some(),
                spec.lat.is_some(),
            ],
            pending: Entries::default(),
            rates_open: Default::default(),
            rate_window_end_ns: spec.avg_msec * NS_PER_MS,
            rates_until_ns: u64::MAX,
            value_windows: Default::default(),
            hist_open: (spec.hist.is_some() && spec.hist_msec > 0)
                .then(|| [hist_window(), hist_window(), hist_window()]),
            sink: Sink::open(spec, ioprio),
        }
    }

    /// The job stops after `runtime` (measured from the end of its ramp): no rate
    /// window ending then or later is written, as in fio.
    pub(crate) fn with_runtime(mut self, runtime: Option<std::time::Duration>) -> Self {
        self.rates_until_ns = runtime.map_or(u64::MAX, |r| r.as_nanos() as u64);
        self
    }

    /// Account one I/O. Per I/O: a push or a few additions, and once a chunk is
    /// full, writing it out.
    #[inline]
    pub(crate) fn record(&mut self, io: &LoggedIo) {
        if self.avg_ms == 0 {
            self.pending.per_io.push(*io);
        } else {
            if !self.per_io_rates {
                self.count_rate(io);
            }
            let values = [
                Some(per_io_bw(io)),
                Some(1),
                io.slat_ns,
                Some(io.clat_ns),
                Some(io.lat_ns),
            ];
            for (k, value) in values.into_iter().enumerate() {
                if let (true, Some(value)) = (self.logged[k], value) {
                    self.add_value(k, io.ddir.index(), value, io.end_ns / NS_PER_MS);
                }
            }
        }
        if self.hist_open.is_some() {
            self.add_to_hist(io);
        }
        if self.pending.len() >= CHUNK_ENTRIES {
            self.write_pending();
        }
    }

    /// The job's rate per window, as fio's helper thread samples it: every window
    /// an I/O has passed the end of is closed, and the I/O counts in the next.
    fn count_rate(&mut self, io: &LoggedIo) {
        while io.end_ns >= self.rate_window_end_ns && self.rate_window_end_ns < self.rates_until_ns
        {
            self.close_rate_window();
        }
        let totals = &mut self.rates_open[io.ddir.index()];
        totals.ios += 1;
        totals.bytes += u64::from(io.len);
    }

    /// One line per direction that moved anything in the window ending at
    /// `rate_window_end_ns`: fio has no sample of an idle direction.
    fn close_rate_window(&mut self) {
        let end_ms = self.rate_window_end_ns / NS_PER_MS;
        let per_second = |n: u64| n * 1000 / self.avg_ms;
        for (d, totals) in self.rates_open.iter_mut().enumerate() {
            if totals.ios == 0 {
                continue;
            }
            let kib = per_second(totals.bytes) / 1024;
            let iops = per_second(totals.ios);
            for (kind, value) in [(Kind::Bw, kib), (Kind::Iops, iops)] {
                self.pending.windows.push(WindowEntry {
                    kind,
                    time_ms: end_ms,
                    ddir: d as u8,
                    mean: value,
                    max: value,
                });
            }
            *totals = RateTotals::default();
        }
        self.rate_window_end_ns += self.avg_ms * NS_PER_MS;
    }

    /// fio's `add_log_sample`: the value joins its window, and the I/O that
    /// reaches the window's end closes it, stamped with its own time.
    #[inline]
    fn add_value(&mut self, k: usize, d: usize, value: u64, now_ms: u64) {
        let window = &mut self.value_windows[k][d];
        window.sum += u128::from(value);
        window.max = window.max.max(value);
        window.count += 1;
        let Some(this_window) = now_ms.checked_sub(window.start_ms) else {
            return;
        };
        if this_window < self.avg_ms {
            let latency = k >= 2;
            if latency || self.avg_ms - this_window > SLACK_MS {
                return;
            }
        }
        Self::close_value_window(&mut self.pending, k, d, window, now_ms);
        window.start_ms = now_ms - now_ms % self.avg_ms;
    }

    /// A line of the window's mean (rounded to nearest, as fio) and maximum.
    fn close_value_window(
        pending: &mut Entries,
        k: usize,
        d: usize,
        window: &mut ValueWindow,
        time_ms: u64,
    ) {
        if window.count == 0 {
            return;
        }
        let count = u128::from(window.count);
        pending.windows.push(WindowEntry {
            kind: VALUE_KINDS[k],
            time_ms,
            ddir: d as u8,
            mean: ((2 * window.sum + count) / (2 * count)) as u64,
            max: window.max,
        });
        *window = ValueWindow {
            start_ms: window.start_ms,
            ..ValueWindow::default()
        };
    }

    /// fio's histogram windows: each direction's first starts at its first I/O
    /// after the first millisecond; the I/O that reaches a window's length closes
    /// it (counted in it, its time and size on the line), and the next starts
    /// where that one should have ended.
    fn add_to_hist(&mut self, io: &LoggedIo) {
        let (d, hist_ms) = (io.ddir.index(), self.hist_ms);
        let Some(windows) = &mut self.hist_open else {
            return;
        };
        let window = &mut windows[d];
        window.counts[bucket_index(io.clat_ns)] += 1;
        let now_ms = io.end_ns / NS_PER_MS;
        if window.start_ms == 0 {
            window.start_ms = now_ms;
        }
        let this_window = now_ms.saturating_sub(window.start_ms);
        if this_window < hist_ms {
            return;
        }
        let buckets = window
            .counts
            .iter_mut()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(index, n)| (index as u32, std::mem::take(n)))
            .collect();
        self.pending.hist.push(HistEntry {
            time_ms: now_ms,
            ddir: d as u8,
            bs: io.len,
            buckets,
        });
        window.start_ms = now_ms - (this_window - hist_ms);
    }

    fn write_pending(&mut self) {
        if self.sink.error.is_none() {
            self.sink.write(&self.pending);
        }
        self.pending.clear();
    }

    /// The end of measurement at `end_ns`, as fio's `finalize_logs`: the open
    /// windows of per-I/O values become lines stamped `end_ns`; the job's rate
    /// has no partial window (its last counts only when (nearly) full), nor the histograms.
    fn close(&mut self, end_ns: u64) {
        if self.avg_ms == 0 {
            return;
        }
        let in_time = self.rate_window_end_ns < self.rates_until_ns;
        if !self.per_io_rates && in_time && end_ns + SLACK_MS * NS_PER_MS >= self.rate_window_end_ns
        {
            self.close_rate_window();
        }
        for (k, windows) in self.value_windows.iter_mut().enumerate() {
            for (d, window) in windows.iter_mut().enumerate() {
                Self::close_value_window(&mut self.pending, k, d, window, end_ns / NS_PER_MS);
            }
        }
    }

    /// Close the last windows at `end_ns` and write what is left.
    pub(crate) fn finish(mut self, end_ns: u64) -> IoLog {
        self.close(end_ns);
        self.write_pending();
        IoLog {
            parts: std::mem::take(&mut self.sink.parts)
                .into_iter()
                .map(|(kind, path, _)| (kind, path))
                .collect(),
            error: self.sink.error.take(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sink::render;
    use super::super::tests::{io, part_files, spec};
    use super::*;
    use crate::stats::histogram::bucket_value;

    /// The lines of one kind the logger holds, after closing its windows at `end_ns`.
    fn text(logger: &mut IoLogger, end_ns: u64, kind: Kind, with_offset: bool) -> String {
        logger.close(end_ns);
        let columns = Columns {
            offset: with_offset,
            ..logger.sink.columns
        };
        let mut out = String::new();
        render(&logger.pending, kind, &columns, &mut out);
        out
    }

    fn fields(text: &str) -> Vec<Vec<u64>> {
        text.lines()
            .map(|l| {
                l.split(", ")
                    .map(|f| match f.strip_prefix("0x") {
                        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
                        None => f.parse().unwrap(),
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_io_is_a_line_without_averaging() {
        let dir = crate::testutil::scratch_dir();
        let mut logger = IoLogger::new(&spec(&dir), None);
        logger.record(&io(0.5, Ddir::Read, 424_111));
        logger.record(&LoggedIo {
            slat_ns: Some(700),
            ..io(1.2, Ddir::Write, 2_000)
        });
        let mut render = |kind, with_offset| text(&mut logger, 2_000_000, kind, with_offset);
        // fio's per-I/O bandwidth: bytes per ms of completion latency.
        assert_eq!(
            fields(&render(Kind::Bw, false)),
            vec![vec![0, 9657, 0, 4096, 0], vec![1, 2_048_000, 1, 4096, 0]]
        );
        assert_eq!(
            fields(&render(Kind::Iops, false))[0],
            vec![0, 1, 0, 4096, 0]
        );
        assert_eq!(
            fields(&render(Kind::Clat, true))[0],
            vec![0, 424_111, 0, 4096, 8192, 0]
        );
        assert_eq!(fields(&render(Kind::Lat, false))[1][1], 2_100);
        // Only I/Os with a submission latency are in the slat log.
        assert_eq!(
            fields(&render(Kind::Slat, false)),
            vec![vec![1, 700, 1, 4096, 0]]
        );
    }

    #[test]
    fn windows_average_or_take_the_maximum() {
        let dir = crate::testutil::scratch_dir();
        for (window, expected_clat) in [(LogWindow::Avg, 2_000), (LogWindow::Max, 3_000)] {
            let spec = LogSpec {
                avg_msec: 100,
                window,
                ..spec(&dir)
            };
            let mut logger = IoLogger::new(&spec, None);
            logger.record(&io(10.0, Ddir::Read, 1_000));
            logger.record(&io(50.0, Ddir::Read, 3_000));
            // Nothing in 100..200 ms: no line of the idle window, as fio.
            logger.record(&io(250.0, Ddir::Read, 5_000));
            let mut render = |kind, with_offset| text(&mut logger, 300_000_000, kind, with_offset);
            assert_eq!(
                fields(&render(Kind::Bw, true)),
                vec![vec![100, 80, 0, 0, 0, 0], vec![300, 40, 0, 0, 0, 0]]
            );
            assert_eq!(
                fields(&render(Kind::Iops, false))[0],
                vec![100, 20, 0, 0, 0]
            );
            // The I/O at 250 ms closes the first latency window, counted in it.
            let clat = fields(&render(Kind::Clat, false));
            let expected = match window {
                LogWindow::Max => 5_000,
                _ => 3_000,
            };
            assert_eq!(clat, vec![vec![250, expected, 0, 0, 0]]);
            let mut logger = IoLogger::new(&spec, None);
            logger.record(&io(10.0, Ddir::Read, 1_000));
            logger.record(&io(50.0, Ddir::Read, 3_000));
            let clat = fields(&text(&mut logger, 70_000_000, Kind::Clat, false));
            assert_eq!(clat, vec![vec![70, expected_clat, 0, 0, 0]]);
        }
    }

    #[test]
    fn latency_windows_close_at_the_io_that_ends_them_as_fio() {
        let dir = crate::testutil::scratch_dir();
        let spec = LogSpec {
            avg_msec: 500,
            ..spec(&dir)
        };
        let mut logger = IoLogger::new(&spec, None);
        for ms in [0.2, 300.0, 501.7, 700.0, 999.9, 1000.0, 1800.0] {
            logger.record(&io(ms, Ddir::Read, 1_000 * ms as u64 + 1));
        }
        logger.record(&io(1800.0, Ddir::Write, 7));
        let clat = fields(&text(&mut logger, 1_900_000_000, Kind::Clat, false));
        let times: Vec<[u64; 2]> = clat.iter().map(|l| [l[0], l[2]]).collect();
        // 501 closes [0, 500), the next starts at 500; 1000 closes [500, 1000);
        // 1800 closes [1000, ..) and starts [1500, ..), empty at the end. The first
        // write is past its direction's first window, which starts at 0: it closes it.
        assert_eq!(times, vec![[501, 0], [1000, 0], [1800, 0], [1800, 1]]);
        assert_eq!(
            clat[0][1], 267_001,
            "expected the mean of 1, 300_001 and 501_001 ns, rounded"
        );
        assert_eq!(clat[3][1], 7);
        let mut logger = IoLogger::new(&spec, None);
        logger.record(&io(1000.0, Ddir::Read, 10));
        logger.record(&io(1000.5, Ddir::Read, 20));
        let clat = fields(&text(&mut logger, 1_000_600_000, Kind::Clat, false));
        assert_eq!(
            clat,
            vec![vec![1000, 10, 0, 0, 0], vec![1000, 20, 0, 0, 0]],
            "expected what completed after the last window's I/O in a line at the end, as fio's finalize_logs"
        );
    }

    #[test]
    fn rate_windows_have_no_partial_last_window() {
        let dir = crate::testutil::scratch_dir();
        let spec = LogSpec {
            avg_msec: 1000,
            ..spec(&dir)
        };
        let busy = |end_ms: f64| {
            let mut logger = IoLogger::new(&spec, None);
            let mut ms = 0.5;
            while ms <= end_ms {
                logger.record(&io(ms, Ddir::Read, 1_000));
                ms += 1.0;
            }
            fields(&text(&mut logger, (end_ms * 1e6) as u64, Kind::Bw, false))
        };
        // 2000.6 ms: an I/O after the second window, no line of it (the spike of
        // a few I/Os over a fraction of a ms a partial window would show).
        assert_eq!(
            busy(2000.6),
            vec![vec![1000, 4000, 0, 0, 0], vec![2000, 4000, 0, 0, 0]]
        );
        assert_eq!(busy(1999.5).len(), 2, "expected a nearly full window kept");
        assert_eq!(busy(1700.0).len(), 1, "expected a partial window dropped");
        // runtime=2s: the job stops as the second window ends, before fio samples it
        // (fio 3.33, time_based: runtime=2 logs 500/1000/1500 of 500 ms windows,
        // runtime=2010ms adds 2000)
        let timed = |runtime_ms: u64| {
            let runtime = std::time::Duration::from_millis(runtime_ms);
            let mut logger = IoLogger::new(&spec, None).with_runtime(Some(runtime));
            for ms in [0.5, 999.5, 1500.0, 2000.3, 2000.6] {
                logger.record(&io(ms, Ddir::Read, 1_000));
            }
            fields(&text(&mut logger, 2_000_700_000, Kind::Bw, false)).len()
        };
        assert_eq!(timed(2000), 1, "expected no window ending at the runtime");
        assert_eq!(
            timed(2010),
            2,
            "expected the window ending before the runtime"
        );
    }

    #[test]
    fn compressed_rate_logs_average_per_io_values_as_fio() {
        let dir = crate::testutil::scratch_dir();
        let spec = LogSpec {
            avg_msec: 100,
            store_compressed: true,
            ..spec(&dir)
        };
        let mut logger = IoLogger::new(&spec, None);
        logger.record(&io(10.0, Ddir::Read, 1_000));
        // 1 ms short of the window: fio's slack closes it.
        logger.record(&io(99.0, Ddir::Read, 3_000));
        logger.record(&io(150.0, Ddir::Read, 2_000));
        assert_eq!(
            fields(&text(&mut logger, 170_000_000, Kind::Bw, false)),
            vec![vec![99, 2_730_667, 0, 0, 0], vec![150, 2_048_000, 0, 0, 0]],
            "expected the mean of 4096 B per µs and per 3 µs, then a window from 0 again (99 rounds down to it)"
        );
        assert_eq!(
            fields(&text(&mut logger, 170_000_000, Kind::Iops, false))[0],
            vec![99, 1, 0, 0, 0]
        );
    }

    #[test]
    fn both_values_priority_and_issue_time_columns_follow_fio() {
        let dir = crate::testutil::scratch_dir();
        let spec = LogSpec {
            window: LogWindow::Both,
            prio: true,
            issue_time: true,
            offset: true,
            ..spec(&dir)
        };
        let mut logger = IoLogger::new(&spec, Some((2, 3)));
        logger.record(&io(3.0, Ddir::Read, 500_000));
        let mut render = |kind| text(&mut logger, 4_000_000, kind, true);
        // time, value, 0 (no maximum per I/O), ddir, bs, offset, 0x4003, issued at 2.5 ms.
        assert_eq!(
            fields(&render(Kind::Clat)),
            vec![vec![3, 500_000, 0, 0, 4096, 8192, 0x4003, 2_500_000]],
            "expected a clat line with a zero second value, the priority and the issue time"
        );
        assert_eq!(
            fields(&render(Kind::Lat))[0][7],
            0,
            "expected the lat log's issue time to be 0, as in fio"
        );
        let spec = LogSpec {
            avg_msec: 100,
            window: LogWindow::Both,
            ..spec
        };
        let mut logger = IoLogger::new(&spec, Some((1, 0)));
        logger.record(&io(10.0, Ddir::Read, 1_000));
        logger.record(&io(50.0, Ddir::Read, 3_000));
        assert_eq!(
            fields(&text(&mut logger, 100_000_000, Kind::Clat, true)),
            vec![vec![100, 2_000, 3_000, 0, 0, 0, 0, 0]],
            "expected a window's mean then maximum, and no priority or issue time (fio's windows have none)"
        );
        let rt = LogSpec {
            prio: false,
            issue_time: false,
            ..spec
        };
        let mut logger = IoLogger::new(&rt, Some((1, 4)));
        logger.record(&io(10.0, Ddir::Read, 1_000));
        assert_eq!(
            fields(&text(&mut logger, 100_000_000, Kind::Bw, false)),
            vec![vec![100, 40, 40, 0, 0, 0]],
            "expected bandwidth twice and no realtime class on a window"
        );
    }

    #[test]
    fn histogram_windows_start_at_the_first_io_and_end_at_the_io_that_fills_them() {
        let dir = crate::testutil::scratch_dir();
        let spec = LogSpec {
            hist: Some(dir.path().join("h").display().to_string()),
            hist_msec: 100,
            ..LogSpec::default()
        };
        let mut logger = IoLogger::new(&spec, None);
        // Before 1 ms the window has no start yet; the I/O at 1.2 ms starts it.
        logger.record(&io(0.3, Ddir::Read, 1_130));
        logger.record(&io(1.2, Ddir::Read, 1_130));
        logger.record(&io(20.0, Ddir::Read, 1_131));
        logger.record(&io(101.4, Ddir::Read, 66_000));
        logger.record(&io(150.0, Ddir::Write, 66_000));
        logger.record(&io(230.0, Ddir::Read, 1_000));
        logger.record(&io(260.0, Ddir::Read, 1_000));
        let lines = fields(&text(&mut logger, 290_000_000, Kind::ClatHist, false));
        let heads: Vec<&[u64]> = lines.iter().map(|l| &l[..3]).collect();
        // [1, 101) closes at 101 with it; [101, 201) at 230; [201, 301) is open at the
        // end and, as the write's, written by no one.
        assert_eq!(heads, [[101, 0, 4096], [230, 0, 4096]]);
        assert_eq!(lines[0].len(), 3 + BUCKETS);
        assert_eq!(lines[0][3 + bucket_index(1_130)], 3);
        assert_eq!(lines[0][3 + bucket_index(66_000)], 1);
        assert_eq!(lines[0][3..].iter().sum::<u64>(), 4);
        assert_eq!(bucket_value(bucket_index(66_000)), 66_048);
        assert_eq!(lines[1][3..].iter().sum::<u64>(), 1);
    }

    #[test]
    fn entries_stream_to_disk_a_chunk_at_a_time() {
        let dir = crate::testutil::scratch_dir();
        let spec = spec(&dir);
        let ios = 5 * CHUNK_ENTRIES as u64 + 7;
        let mut logger = IoLogger::new(&spec, None);
        for n in 0..ios {
            logger.record(&io(n as f64 / 1000.0, Ddir::Read, 1_000));
            assert!(
                logger.pending.len() < CHUNK_ENTRIES,
                "expected fewer than {CHUNK_ENTRIES} entries held after {n} I/Os, saw {}",
                logger.pending.len()
            );
        }
        assert_eq!(
            part_files(&dir).len(),
            5,
            "expected bw, iops, slat, clat and lat parts while logging"
        );
        let log = logger.finish(ios * 1_000);
        let written = write_job_logs(&spec, &[&log], 1).unwrap();
        let clat = std::fs::read_to_string(dir.path().join("l_clat.1.log")).unwrap();
        assert_eq!(
            clat.lines().count() as u64,
            ios,
            "expected one clat line per I/O"
        );
        let bw = std::fs::read_to_string(dir.path().join("b_bw.1.log")).unwrap();
        assert_eq!(
            bw.lines().last(),
            Some(format!("{}, 4096000, 0, 4096, 0", (ios - 1) / 1000).as_str()),
            "expected the last I/O last"
        );
        assert_eq!(written.len(), 5, "expected five files, got {written:?}");
        assert_eq!(
            part_files(&dir),
            Vec::<String>::new(),
            "expected no part file left"
        );
    }
}
