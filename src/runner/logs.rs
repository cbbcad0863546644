//! fio's I/O logs (`write_bw_log`, `write_iops_log`, `write_lat_log`,
//! `write_hist_log`): recorded by each worker while it runs, written to files
//! after its group finishes, in fio's file names and line format so fio's
//! plotting scripts read them.
//!
//! Line format: `time_ms, value, ddir, bs[, offset], priority`. With
//! `log_avg_msec=0` every I/O is a line (bandwidth in bytes per ms of its
//! completion latency, IOPS 1, latencies in ns, as fio logs them); otherwise
//! one line per direction per window, with bs and offset 0. Histogram lines
//! are `time_ms, ddir, bs, count per bucket…` over fio's 1856 buckets.

use crate::job::spec::{Ddir, LogSpec, DDIRS};
use crate::stats::histogram::{bucket_index, BUCKETS};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::PathBuf;

/// Per-I/O entries reserved up front (fio's default `log_entries`); more grow amortised.
const INITIAL_ENTRIES: usize = 1024;
const NS_PER_MS: u64 = 1_000_000;

/// One completed I/O, with times relative to the start of measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedIo {
    pub end_ns: u64,
    pub ddir: Ddir,
    pub len: u32,
    pub offset: u64,
    /// None for engines that complete inside submit (no submission latency).
    pub slat_ns: Option<u64>,
    pub clat_ns: u64,
    pub lat_ns: u64,
}

/// A windowed (averaged or maximum) line's values, per direction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
struct WindowEntry {
    time_ms: u64,
    ddir: u8,
    ios: u64,
    bw_kib_per_sec: u64,
    iops: u64,
    /// slat, clat, lat: mean or maximum, None when the window had none.
    lat_ns: [Option<u64>; 3],
}

/// Running totals of the open window of one direction.
#[derive(Debug, Clone, Copy, Default)]
struct WindowTotals {
    ios: u64,
    bytes: u64,
    /// slat, clat, lat.
    lat_sum: [u64; 3],
    lat_max: [u64; 3],
    lat_count: [u64; 3],
}

/// One histogram line: the window's non-empty buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct HistEntry {
    time_ms: u64,
    ddir: u8,
    bs: u32,
    /// (bucket index, count), increasing index.
    buckets: Vec<(u32, u64)>,
}

/// The open histogram window of one direction.
struct HistWindow {
    counts: Box<[u64; BUCKETS]>,
    ios: u64,
    last_bs: u32,
}

/// What one worker logs; created only when the job asks for a log.
pub struct IoLogger {
    avg_ns: u64,
    hist_ns: u64,
    max_value: bool,
    /// The directions the job uses: their bandwidth/IOPS windows are logged even when idle.
    used: [bool; DDIRS],
    per_io: Vec<LoggedIo>,
    windows: Vec<WindowEntry>,
    open: [WindowTotals; DDIRS],
    window_end_ns: u64,
    hist: Vec<HistEntry>,
    hist_open: Option<[HistWindow; DDIRS]>,
    hist_end_ns: u64,
}

/// What a worker logged, ready to be written (it travels from worker processes as JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoLog {
    per_io: Vec<LoggedIo>,
    windows: Vec<WindowEntry>,
    hist: Vec<HistEntry>,
}

impl IoLogger {
    pub fn new(spec: &LogSpec, used: [bool; DDIRS]) -> Self {
        let avg_ns = spec.avg_msec * NS_PER_MS;
        let hist_ns = spec.hist_msec * NS_PER_MS;
        let wants_entries = spec.bw.is_some() || spec.iops.is_some() || spec.lat.is_some();
        let hist_window = || HistWindow {
            counts: Box::new([0; BUCKETS]),
            ios: 0,
            last_bs: 0,
        };
        IoLogger {
            avg_ns,
            hist_ns,
            max_value: spec.max_value,
            used,
            per_io: Vec::with_capacity(if wants_entries && avg_ns == 0 {
                INITIAL_ENTRIES
            } else {
                0
            }),
            windows: Vec::new(),
            open: Default::default(),
            window_end_ns: avg_ns,
            hist: Vec::new(),
            hist_open: (spec.hist.is_some() && hist_ns > 0)
                .then(|| [hist_window(), hist_window(), hist_window()]),
            hist_end_ns: hist_ns,
        }
    }

    /// Account one I/O. Per I/O: a push that grows amortised, or a few additions.
    #[inline]
    pub fn record(&mut self, io: &LoggedIo) {
        if self.avg_ns == 0 {
            self.per_io.push(*io);
        } else {
            while io.end_ns >= self.window_end_ns {
                self.close_window(self.window_end_ns, self.avg_ns);
                self.window_end_ns += self.avg_ns;
            }
            let totals = &mut self.open[io.ddir.index()];
            totals.ios += 1;
            totals.bytes += u64::from(io.len);
            for (k, ns) in [io.slat_ns, Some(io.clat_ns), Some(io.lat_ns)]
                .into_iter()
                .enumerate()
            {
                if let Some(ns) = ns {
                    totals.lat_sum[k] += ns;
                    totals.lat_max[k] = totals.lat_max[k].max(ns);
                    totals.lat_count[k] += 1;
                }
            }
        }
        if self.hist_open.is_some() {
            while io.end_ns >= self.hist_end_ns {
                self.close_hist_window(self.hist_end_ns);
                self.hist_end_ns += self.hist_ns;
            }
            if let Some(windows) = &mut self.hist_open {
                let window = &mut windows[io.ddir.index()];
                window.counts[bucket_index(io.clat_ns)] += 1;
                window.ios += 1;
                window.last_bs = io.len;
            }
        }
    }

    /// Close the window ending at `end_ns` that lasted `length_ns`.
    fn close_window(&mut self, end_ns: u64, length_ns: u64) {
        for (d, totals) in self.open.iter_mut().enumerate() {
            if !self.used[d] && totals.ios == 0 {
                continue;
            }
            let per_second =
                |n: u64| (u128::from(n) * 1_000_000_000 / u128::from(length_ns.max(1))) as u64;
            let lat_ns = [0, 1, 2].map(|k| {
                (totals.lat_count[k] > 0).then(|| {
                    if self.max_value {
                        totals.lat_max[k]
                    } else {
                        totals.lat_sum[k] / totals.lat_count[k]
                    }
                })
            });
            self.windows.push(WindowEntry {
                time_ms: end_ns / NS_PER_MS,
                ddir: d as u8,
                ios: totals.ios,
                bw_kib_per_sec: per_second(totals.bytes) / 1024,
                iops: per_second(totals.ios),
                lat_ns,
            });
            *totals = WindowTotals::default();
        }
    }

    fn close_hist_window(&mut self, end_ns: u64) {
        let Some(windows) = &mut self.hist_open else {
            return;
        };
        for (d, window) in windows.iter_mut().enumerate() {
            if window.ios == 0 {
                continue;
            }
            let buckets = window
                .counts
                .iter_mut()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(index, n)| (index as u32, std::mem::take(n)))
                .collect();
            self.hist.push(HistEntry {
                time_ms: end_ns / NS_PER_MS,
                ddir: d as u8,
                bs: window.last_bs,
                buckets,
            });
            window.ios = 0;
        }
    }

    /// Close the last, partial windows at `end_ns` (the end of measurement).
    pub fn finish(mut self, end_ns: u64) -> IoLog {
        if self.avg_ns > 0 {
            let window_start = self.window_end_ns - self.avg_ns;
            if self.open.iter().any(|t| t.ios > 0) && end_ns > window_start {
                self.close_window(end_ns, end_ns - window_start);
            }
        }
        self.close_hist_window(end_ns);
        IoLog {
            per_io: self.per_io,
            windows: self.windows,
            hist: self.hist,
        }
    }
}

/// The kinds of log file, with fio's name for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bw,
    Iops,
    Slat,
    Clat,
    Lat,
    ClatHist,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Bw => "bw",
            Kind::Iops => "iops",
            Kind::Slat => "slat",
            Kind::Clat => "clat",
            Kind::Lat => "lat",
            Kind::ClatHist => "clat_hist",
        }
    }
}

/// fio's file name: `PREFIX_KIND.N.log`, or `PREFIX_KIND.log` without `per_job_logs`.
fn file_name(prefix: &str, kind: Kind, worker_number: Option<usize>) -> PathBuf {
    match worker_number {
        Some(n) => PathBuf::from(format!("{prefix}_{}.{n}.log", kind.suffix())),
        None => PathBuf::from(format!("{prefix}_{}.log", kind.suffix())),
    }
}

/// The lines of one kind of log.
fn render(log: &IoLog, kind: Kind, with_offset: bool) -> String {
    let mut out = String::new();
    if kind == Kind::ClatHist {
        for entry in &log.hist {
            let _ = write!(out, "{}, {}, {}", entry.time_ms, entry.ddir, entry.bs);
            let mut next = entry.buckets.iter().peekable();
            for index in 0..BUCKETS as u32 {
                let count = next.next_if(|(i, _)| *i == index).map_or(0, |&(_, n)| n);
                let _ = write!(out, ", {count}");
            }
            out.push('\n');
        }
        return out;
    }
    let lat_slot = |kind| match kind {
        Kind::Slat => 0,
        Kind::Clat => 1,
        _ => 2,
    };
    for io in &log.per_io {
        let value = match kind {
            Kind::Bw => Some(u64::from(io.len) * NS_PER_MS / io.clat_ns.max(1)),
            Kind::Iops => Some(1),
            Kind::Slat => io.slat_ns,
            Kind::Clat => Some(io.clat_ns),
            _ => Some(io.lat_ns),
        };
        if let Some(value) = value {
            let _ = write!(
                out,
                "{}, {value}, {}, {}",
                io.end_ns / NS_PER_MS,
                io.ddir.index(),
                io.len
            );
            if with_offset {
                let _ = write!(out, ", {}", io.offset);
            }
            out.push_str(", 0\n");
        }
    }
    for w in &log.windows {
        let value = match kind {
            Kind::Bw => Some(w.bw_kib_per_sec),
            Kind::Iops => Some(w.iops),
            kind => w.lat_ns[lat_slot(kind)],
        };
        if let Some(value) = value {
            let _ = write!(out, "{}, {value}, {}, 0", w.time_ms, w.ddir);
            if with_offset {
                out.push_str(", 0");
            }
            out.push_str(", 0\n");
        }
    }
    out
}

/// Write the logs `spec` asks for, from one job's workers. `first_worker_number`
/// is the 1-based number of the job's first worker in the whole run (fio numbers
/// log files by worker). Returns the files written.
pub fn write_job_logs(
    spec: &LogSpec,
    logs: &[&IoLog],
    first_worker_number: usize,
) -> io::Result<Vec<PathBuf>> {
    let wanted = [
        (&spec.bw, Kind::Bw),
        (&spec.iops, Kind::Iops),
        (&spec.lat, Kind::Slat),
        (&spec.lat, Kind::Clat),
        (&spec.lat, Kind::Lat),
        (&spec.hist, Kind::ClatHist),
    ];
    let mut written = Vec::new();
    for (prefix, kind) in wanted {
        let Some(prefix) = prefix else { continue };
        if spec.per_job {
            for (i, log) in logs.iter().enumerate() {
                let path = file_name(prefix, kind, Some(first_worker_number + i));
                std::fs::write(&path, render(log, kind, spec.offset))
                    .map_err(|e| name_path(&path, e))?;
                written.push(path);
            }
        } else {
            let path = file_name(prefix, kind, None);
            let mut file = std::fs::File::create(&path).map_err(|e| name_path(&path, e))?;
            for log in logs {
                file.write_all(render(log, kind, spec.offset).as_bytes())
                    .map_err(|e| name_path(&path, e))?;
            }
            written.push(path);
        }
    }
    Ok(written)
}

fn name_path(path: &std::path::Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram::bucket_value;

    fn io(end_ms: f64, ddir: Ddir, clat_ns: u64) -> LoggedIo {
        LoggedIo {
            end_ns: (end_ms * 1e6) as u64,
            ddir,
            len: 4096,
            offset: 8192,
            slat_ns: None,
            clat_ns,
            lat_ns: clat_ns + 100,
        }
    }

    fn spec() -> LogSpec {
        LogSpec {
            bw: Some("b".into()),
            iops: Some("i".into()),
            lat: Some("l".into()),
            hist: None,
            per_job: true,
            ..Default::default()
        }
    }

    fn fields(text: &str) -> Vec<Vec<u64>> {
        text.lines()
            .map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect())
            .collect()
    }

    #[test]
    fn every_io_is_a_line_without_averaging() {
        let mut logger = IoLogger::new(&spec(), [true, false, false]);
        logger.record(&io(0.5, Ddir::Read, 424_111));
        logger.record(&LoggedIo {
            slat_ns: Some(700),
            ..io(1.2, Ddir::Write, 2_000)
        });
        let log = logger.finish(2_000_000);
        // fio's per-I/O bandwidth: bytes per ms of completion latency.
        assert_eq!(
            fields(&render(&log, Kind::Bw, false)),
            vec![vec![0, 9657, 0, 4096, 0], vec![1, 2_048_000, 1, 4096, 0]]
        );
        assert_eq!(
            fields(&render(&log, Kind::Iops, false))[0],
            vec![0, 1, 0, 4096, 0]
        );
        assert_eq!(
            fields(&render(&log, Kind::Clat, true))[0],
            vec![0, 424_111, 0, 4096, 8192, 0]
        );
        assert_eq!(fields(&render(&log, Kind::Lat, false))[1][1], 2_100);
        // Only I/Os with a submission latency are in the slat log.
        assert_eq!(
            fields(&render(&log, Kind::Slat, false)),
            vec![vec![1, 700, 1, 4096, 0]]
        );
    }

    #[test]
    fn windows_average_or_take_the_maximum() {
        for (max_value, expected_clat) in [(false, 2_000), (true, 3_000)] {
            let spec = LogSpec {
                avg_msec: 100,
                max_value,
                ..spec()
            };
            let mut logger = IoLogger::new(&spec, [true, false, false]);
            logger.record(&io(10.0, Ddir::Read, 1_000));
            logger.record(&io(50.0, Ddir::Read, 3_000));
            // Nothing in 100..200 ms: an idle line for the used direction.
            logger.record(&io(250.0, Ddir::Read, 5_000));
            let log = logger.finish(300_000_000);
            let bw = fields(&render(&log, Kind::Bw, true));
            assert_eq!(
                bw,
                vec![
                    vec![100, 80, 0, 0, 0, 0],
                    vec![200, 0, 0, 0, 0, 0],
                    vec![300, 40, 0, 0, 0, 0]
                ]
            );
            assert_eq!(
                fields(&render(&log, Kind::Iops, false))[0],
                vec![100, 20, 0, 0, 0]
            );
            let clat = fields(&render(&log, Kind::Clat, false));
            assert_eq!(clat.len(), 2, "idle windows have no latency");
            assert_eq!(clat[0], vec![100, expected_clat, 0, 0, 0]);
        }
    }

    #[test]
    fn histogram_lines_count_each_window_over_all_buckets() {
        let spec = LogSpec {
            hist: Some("h".into()),
            hist_msec: 100,
            ..LogSpec::default()
        };
        let mut logger = IoLogger::new(&spec, [true, true, false]);
        logger.record(&io(10.0, Ddir::Read, 1_130));
        logger.record(&io(20.0, Ddir::Read, 1_131));
        logger.record(&io(120.0, Ddir::Write, 66_000));
        let log = logger.finish(150_000_000);
        let lines = fields(&render(&log, Kind::ClatHist, false));
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), 3 + BUCKETS);
        assert_eq!(&lines[0][..3], [100, 0, 4096]);
        assert_eq!(lines[0][3 + bucket_index(1_130)], 2);
        assert_eq!(lines[0][3..].iter().sum::<u64>(), 2);
        assert_eq!(&lines[1][..3], [150, 1, 4096]);
        assert_eq!(bucket_value(bucket_index(66_000)), 66_048);
        assert_eq!(lines[1][3 + bucket_index(66_000)], 1);
    }

    #[test]
    fn file_names_follow_fio() {
        assert_eq!(
            file_name("job", Kind::Bw, Some(3)),
            PathBuf::from("job_bw.3.log")
        );
        assert_eq!(
            file_name("d/x", Kind::ClatHist, None),
            PathBuf::from("d/x_clat_hist.log")
        );
    }

    #[test]
    fn writes_one_file_per_worker_or_one_per_job() {
        let dir = crate::testutil::scratch_dir();
        let prefix = dir.path().join("j").display().to_string();
        let mut logger = IoLogger::new(&spec(), [true, false, false]);
        logger.record(&io(1.0, Ddir::Read, 1_000));
        let log = logger.finish(2_000_000);
        let spec = LogSpec {
            bw: Some(prefix.clone()),
            lat: Some(prefix.clone()),
            per_job: true,
            ..LogSpec::default()
        };
        let written = write_job_logs(&spec, &[&log, &log], 4).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "j_bw.4.log",
                "j_bw.5.log",
                "j_slat.4.log",
                "j_slat.5.log",
                "j_clat.4.log",
                "j_clat.5.log",
                "j_lat.4.log",
                "j_lat.5.log"
            ]
        );
        let shared = LogSpec {
            per_job: false,
            ..spec
        };
        let written = write_job_logs(&shared, &[&log, &log], 1).unwrap();
        assert_eq!(written[0], PathBuf::from(format!("{prefix}_bw.log")));
        let text = std::fs::read_to_string(&written[0]).unwrap();
        assert_eq!(text.lines().count(), 2, "both workers in one file");
    }
}
