//! fio's I/O logs (`write_bw_log`, `write_iops_log`, `write_lat_log`,
//! `write_hist_log`), in fio's file names and line format so fio's plotting
//! scripts read them. Each worker streams its lines to its own part files
//! while it runs, a chunk of entries at a time (memory stays bounded however
//! many I/Os it logs); after the group the parts get their final names, or
//! are joined into one file per job without `per_job_logs`.
//!
//! Line format: `time_ms, value[, max], ddir, bs[, offset], priority[, issue_ns]`.
//! With `log_avg_msec=0` every I/O is a line (bandwidth in bytes per ms of its
//! completion latency, IOPS 1, latencies in ns, as fio logs them); otherwise
//! one line per direction per window, with bs, offset, priority and issue time 0,
//! closed by fio's rules (stat.c): the job's rate at each window's end, the
//! latencies (and with `log_store_compressed` the per-I/O rates) at the I/O that
//! reaches it, histograms at the I/O that fills theirs.
//! `log_window_value=both` adds the window's maximum after its mean (0 on
//! per-I/O lines); a per-I/O line's priority is 1 for the realtime class, or with `log_prio`
//! the I/O priority as `0x%04x` (class << 13 | level); `log_issue_time` adds
//! when the I/O was issued, in ns since the start, in the slat and clat logs (0
//! in the others). Histogram lines are `time_ms, ddir, bs, count per bucket…`
//! over fio's 1856 buckets.

use crate::job::spec::{Ddir, LogSpec, LogWindow, DDIRS};
use crate::stats::histogram::{bucket_index, BUCKETS};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

mod fz;
pub use fz::inflate;

/// Entries a worker holds before it writes them out: what bounds its memory.
const CHUNK_ENTRIES: usize = 16 * 1024;
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

/// One windowed line: a window's mean and maximum of one kind of log and direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct WindowEntry {
    kind: Kind,
    time_ms: u64,
    ddir: u8,
    mean: u64,
    max: u64,
}

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
    /// Where the window started, ms; 0 until an I/O completes after the first
    /// millisecond (fio's `hist_last`, set by the first I/O that finds it 0).
    start_ms: u64,
}

/// What one worker logs; created only when the job asks for a log.
pub struct IoLogger {
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

/// Log entries in the order they are written.
#[derive(Debug, Default)]
struct Entries {
    per_io: Vec<LoggedIo>,
    windows: Vec<WindowEntry>,
    hist: Vec<HistEntry>,
}

impl Entries {
    fn len(&self) -> usize {
        self.per_io.len() + self.windows.len() + self.hist.len()
    }

    fn clear(&mut self) {
        self.per_io.clear();
        self.windows.clear();
        self.hist.clear();
    }
}

/// The part files one worker writes, one per kind of log.
struct Sink {
    parts: Vec<(Kind, PathBuf, File)>,
    columns: Columns,
    /// `log_store_compressed`: each chunk is a zlib stream of fio's binary samples.
    compressed: bool,
    /// Reused for the text of each chunk.
    text: String,
    /// Reused for the binary samples of each chunk when compressed.
    raw: Vec<u8>,
    /// The first failure; the worker then logs nothing more (its I/O goes on).
    error: Option<String>,
}

impl Sink {
    fn open(spec: &LogSpec, ioprio: Option<(u32, u32)>) -> Sink {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut sink = Sink {
            parts: Vec::new(),
            columns: Columns::of(spec, ioprio),
            compressed: spec.store_compressed,
            text: String::new(),
            raw: Vec::new(),
            error: None,
        };
        for (prefix, kind) in wanted(spec) {
            // Unique among every worker of the run, threads and processes alike.
            let part = PathBuf::from(format!(
                "{prefix}_{}.{}-{}.part",
                kind.suffix(),
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match File::create(&part) {
                Ok(file) => sink.parts.push((kind, part, file)),
                Err(e) => {
                    sink.error = Some(name_path(&part, e).to_string());
                    sink.remove_parts();
                    break;
                }
            }
        }
        sink
    }

    /// Append the lines of `entries` to every part file.
    fn write(&mut self, entries: &Entries) {
        for (kind, path, file) in &mut self.parts {
            let written = if self.compressed {
                self.raw.clear();
                let (columns, raw) = (&self.columns, &mut self.raw);
                each_sample(entries, *kind, columns.ioprio, |sample| {
                    fz::push_sample(columns, &sample, raw)
                });
                fz::write_stream(file, &self.raw)
            } else {
                self.text.clear();
                render(entries, *kind, &self.columns, &mut self.text);
                file.write_all(self.text.as_bytes())
            };
            if let Err(e) = written {
                self.error = Some(name_path(path, e).to_string());
                break;
            }
        }
        if self.error.is_some() {
            self.remove_parts();
        }
    }

    fn remove_parts(&mut self) {
        for (_, path, _) in self.parts.drain(..) {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Sink {
    /// A logger dropped before `finish` (restarted after the ramp) leaves no part files.
    fn drop(&mut self) {
        self.remove_parts();
    }
}

/// What a worker logged: its part files, ready to be named (it travels from worker
/// processes as JSON), or why it could not log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoLog {
    parts: Vec<(Kind, PathBuf)>,
    error: Option<String>,
}

impl IoLogger {
    /// `ioprio` is the job's (class, level), for the priority column.
    pub fn new(spec: &LogSpec, ioprio: Option<(u32, u32)>) -> Self {
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
    pub fn with_runtime(mut self, runtime: Option<std::time::Duration>) -> Self {
        self.rates_until_ns = runtime.map_or(u64::MAX, |r| r.as_nanos() as u64);
        self
    }

    /// Account one I/O. Per I/O: a push or a few additions, and once a chunk is
    /// full, writing it out.
    #[inline]
    pub fn record(&mut self, io: &LoggedIo) {
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
    pub fn finish(mut self, end_ns: u64) -> IoLog {
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

/// fio's bandwidth of one I/O: bytes per ms of its completion latency (0 without one).
fn per_io_bw(io: &LoggedIo) -> u64 {
    (u64::from(io.len) * NS_PER_MS)
        .checked_div(io.clat_ns)
        .unwrap_or(0)
}

/// The kinds of log file, with fio's name for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// fio's file name: `PREFIX_KIND.N.log`, or `PREFIX_KIND.log` without `per_job_logs`;
/// `.log.fz` when stored compressed.
fn file_name(prefix: &str, kind: Kind, worker_number: Option<usize>, compressed: bool) -> PathBuf {
    let ext = if compressed { "log.fz" } else { "log" };
    match worker_number {
        Some(n) => PathBuf::from(format!("{prefix}_{}.{n}.{ext}", kind.suffix())),
        None => PathBuf::from(format!("{prefix}_{}.{ext}", kind.suffix())),
    }
}

/// The logs `spec` asks for: each kind with its file name prefix.
fn wanted(spec: &LogSpec) -> impl Iterator<Item = (&str, Kind)> {
    [
        (&spec.bw, Kind::Bw),
        (&spec.iops, Kind::Iops),
        (&spec.lat, Kind::Slat),
        (&spec.lat, Kind::Clat),
        (&spec.lat, Kind::Lat),
        (&spec.hist, Kind::ClatHist),
    ]
    .into_iter()
    .filter_map(|(prefix, kind)| prefix.as_deref().map(|p| (p, kind)))
}

/// What a line holds beyond time, value, direction and size (fio's `log_*` options).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Columns {
    window: LogWindow,
    offset: bool,
    prio: bool,
    issue_time: bool,
    /// The job's I/O priority as the kernel spells it: class << 13 | level.
    ioprio: u32,
}

/// One line of a per-I/O or windowed log, before it is written as text or as one of
/// fio's binary samples (`log_store_compressed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sample {
    time_ms: u64,
    mean: u64,
    /// A window's maximum; None on per-I/O lines.
    max: Option<u64>,
    ddir: u32,
    bs: u64,
    offset: u64,
    /// class << 13 | level.
    prio: u32,
    issue_ns: u64,
}

impl Columns {
    fn of(spec: &LogSpec, ioprio: Option<(u32, u32)>) -> Columns {
        Columns {
            window: spec.window,
            offset: spec.offset,
            prio: spec.prio,
            issue_time: spec.issue_time,
            ioprio: ioprio.map_or(0, |(class, level)| class << 13 | level),
        }
    }

    /// The value a line shows first: the mean, or with `log_window_value=max` the maximum.
    fn value(&self, sample: &Sample) -> u64 {
        match self.window {
            LogWindow::Max => sample.max.unwrap_or(sample.mean),
            LogWindow::Avg | LogWindow::Both => sample.mean,
        }
    }

    /// `time, value[, value1], ddir, bs[, offset], priority[, issue_ns]\n`; per-I/O lines
    /// have no maximum: 0 under `both`, as in fio.
    fn line(&self, sample: &Sample, out: &mut String) {
        let _ = write!(out, "{}, {}", sample.time_ms, self.value(sample));
        if self.window == LogWindow::Both {
            let _ = write!(out, ", {}", sample.max.unwrap_or(0));
        }
        let _ = write!(out, ", {}, {}", sample.ddir, sample.bs);
        if self.offset {
            let _ = write!(out, ", {}", sample.offset);
        }
        let _ = match self.prio {
            true => write!(out, ", 0x{:04x}", sample.prio),
            false => write!(out, ", {}", u8::from(sample.prio >> 13 == 1)),
        };
        if self.issue_time {
            let _ = write!(out, ", {}", sample.issue_ns);
        }
        out.push('\n');
    }
}

/// Append the lines of one kind of log to `out`.
fn render(log: &Entries, kind: Kind, columns: &Columns, out: &mut String) {
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
        return;
    }
    each_sample(log, kind, columns.ioprio, |sample| {
        columns.line(&sample, out)
    });
}

/// The samples of one kind of log (not the histogram), in order.
fn each_sample(log: &Entries, kind: Kind, prio: u32, mut each: impl FnMut(Sample)) {
    for io in &log.per_io {
        let value = match kind {
            Kind::Bw => Some(per_io_bw(io)),
            Kind::Iops => Some(1),
            Kind::Slat => io.slat_ns,
            Kind::Clat => Some(io.clat_ns),
            _ => Some(io.lat_ns),
        };
        if let Some(mean) = value {
            let issue_ns = match kind {
                Kind::Slat | Kind::Clat => io.end_ns.saturating_sub(io.clat_ns),
                _ => 0,
            };
            each(Sample {
                time_ms: io.end_ns / NS_PER_MS,
                mean,
                max: None,
                ddir: io.ddir.index() as u32,
                bs: u64::from(io.len),
                offset: io.offset,
                prio,
                issue_ns,
            });
        }
    }
    // fio's windowed lines have no size, offset or priority.
    for w in log.windows.iter().filter(|w| w.kind == kind) {
        each(Sample {
            time_ms: w.time_ms,
            mean: w.mean,
            max: Some(w.max),
            ddir: u32::from(w.ddir),
            bs: 0,
            offset: 0,
            prio: 0,
            issue_ns: 0,
        });
    }
}

/// Give the part files of one job's workers their final names: fio's per-worker
/// names, or one file per job (workers in order) without `per_job_logs`.
/// `first_worker_number` is the 1-based number of the job's first worker in the
/// whole run (fio numbers log files by worker). Returns the files written.
pub fn write_job_logs(
    spec: &LogSpec,
    logs: &[&IoLog],
    first_worker_number: usize,
) -> io::Result<Vec<PathBuf>> {
    let result = name_parts(spec, logs, first_worker_number);
    // Whatever happened, no part file stays behind.
    for log in logs {
        for (_, part) in &log.parts {
            let _ = std::fs::remove_file(part);
        }
    }
    result
}

fn name_parts(
    spec: &LogSpec,
    logs: &[&IoLog],
    first_worker_number: usize,
) -> io::Result<Vec<PathBuf>> {
    if let Some(error) = logs.iter().find_map(|log| log.error.as_deref()) {
        return Err(io::Error::other(error.to_string()));
    }
    let mut written = Vec::new();
    for (prefix, kind) in wanted(spec) {
        let parts = logs.iter().map(|log| {
            log.parts
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, part)| part.as_path())
                .ok_or_else(|| io::Error::other(format!("no {} log was recorded", kind.suffix())))
        });
        if spec.per_job {
            for (i, part) in parts.enumerate() {
                let path = file_name(
                    prefix,
                    kind,
                    Some(first_worker_number + i),
                    spec.store_compressed,
                );
                std::fs::rename(part?, &path).map_err(|e| name_path(&path, e))?;
                written.push(path);
            }
        } else {
            let path = file_name(prefix, kind, None, spec.store_compressed);
            let mut file = File::create(&path).map_err(|e| name_path(&path, e))?;
            for part in parts {
                let part = part?;
                let mut from = File::open(part).map_err(|e| name_path(part, e))?;
                io::copy(&mut from, &mut file).map_err(|e| name_path(&path, e))?;
            }
            written.push(path);
        }
    }
    Ok(written)
}

fn name_path(path: &Path, e: io::Error) -> io::Error {
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

    /// bw, iops and lat logs with prefixes in `dir`.
    fn spec(dir: &tempfile::TempDir) -> LogSpec {
        let prefix = |name: &str| Some(dir.path().join(name).display().to_string());
        LogSpec {
            bw: prefix("b"),
            iops: prefix("i"),
            lat: prefix("l"),
            hist: None,
            per_job: true,
            ..Default::default()
        }
    }

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
    fn file_names_follow_fio() {
        assert_eq!(
            file_name("job", Kind::Bw, Some(3), false),
            PathBuf::from("job_bw.3.log")
        );
        assert_eq!(
            file_name("d/x", Kind::ClatHist, None, false),
            PathBuf::from("d/x_clat_hist.log")
        );
        assert_eq!(
            file_name("j", Kind::Lat, None, true),
            PathBuf::from("j_lat.log.fz"),
            "expected log_store_compressed's suffix"
        );
    }

    #[test]
    fn writes_one_file_per_worker_or_one_per_job() {
        let dir = crate::testutil::scratch_dir();
        let prefix = dir.path().join("j").display().to_string();
        let spec = LogSpec {
            bw: Some(prefix.clone()),
            lat: Some(prefix.clone()),
            per_job: true,
            ..LogSpec::default()
        };
        let logs = |spec: &LogSpec| {
            [1, 2].map(|_| {
                let mut logger = IoLogger::new(spec, None);
                logger.record(&io(1.0, Ddir::Read, 1_000));
                logger.finish(2_000_000)
            })
        };
        let [a, b] = logs(&spec);
        let written = write_job_logs(&spec, &[&a, &b], 4).unwrap();
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
        let [a, b] = logs(&shared);
        let written = write_job_logs(&shared, &[&a, &b], 1).unwrap();
        assert_eq!(written[0], PathBuf::from(format!("{prefix}_bw.log")));
        let text = std::fs::read_to_string(&written[0]).unwrap();
        assert_eq!(text.lines().count(), 2, "both workers in one file");
        assert_eq!(
            part_files(&dir),
            Vec::<String>::new(),
            "expected no part file left"
        );
    }

    fn part_files(dir: &tempfile::TempDir) -> Vec<String> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".part"))
            .collect()
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

    #[test]
    fn a_logger_dropped_before_finishing_leaves_no_part_file() {
        let dir = crate::testutil::scratch_dir();
        let mut logger = IoLogger::new(&spec(&dir), None);
        logger.record(&io(1.0, Ddir::Read, 1_000));
        drop(logger);
        assert_eq!(
            part_files(&dir),
            Vec::<String>::new(),
            "expected the ramp's parts gone"
        );
    }

    #[test]
    fn a_log_that_cannot_be_created_is_an_error_naming_the_file() {
        let dir = crate::testutil::scratch_dir();
        let spec = LogSpec {
            lat: Some(dir.path().join("missing/l").display().to_string()),
            per_job: true,
            ..LogSpec::default()
        };
        let mut logger = IoLogger::new(&spec, None);
        logger.record(&io(1.0, Ddir::Read, 1_000));
        let error = write_job_logs(&spec, &[&logger.finish(2_000_000)], 1).unwrap_err();
        assert!(
            error.to_string().contains("missing/l_slat"),
            "expected the error to name the file, got: {error}"
        );
    }
}
