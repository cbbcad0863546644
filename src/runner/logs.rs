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
//!
//! `window` holds the worker's `IoLogger` and its open windows, `sink` the files:
//! the part files a worker streams to, fio's file names and their final naming; this
//! module the entries and lines both share.

use crate::job::spec::{Ddir, LogSpec, LogWindow, DDIRS};
use crate::stats::histogram::BUCKETS;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::PathBuf;

mod fz;
mod sink;
mod window;
pub(crate) use fz::inflate;
pub(crate) use sink::write_job_logs;
pub(crate) use window::IoLogger;

/// Entries a worker holds before it writes them out: what bounds its memory.
const CHUNK_ENTRIES: usize = 16 * 1024;
const NS_PER_MS: u64 = 1_000_000;

/// One completed I/O, with times relative to the start of measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LoggedIo {
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

/// One histogram line: the window's non-empty buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct HistEntry {
    time_ms: u64,
    ddir: u8,
    bs: u32,
    /// (bucket index, count), increasing index.
    buckets: Vec<(u32, u64)>,
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

/// What a worker logged: its part files, ready to be named (it travels from worker
/// processes as JSON), or why it could not log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct IoLog {
    parts: Vec<(Kind, PathBuf)>,
    error: Option<String>,
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

#[cfg(test)]
mod tests {
    //! Helpers the window and sink tests share.
    use super::*;

    pub(super) fn io(end_ms: f64, ddir: Ddir, clat_ns: u64) -> LoggedIo {
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
    pub(super) fn spec(dir: &tempfile::TempDir) -> LogSpec {
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

    pub(super) fn part_files(dir: &tempfile::TempDir) -> Vec<String> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".part"))
            .collect()
    }
}
