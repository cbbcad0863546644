//! The file side of the I/O logs: the part files a worker streams its entries to,
//! the rendering of their lines, fio's file names and the final naming per job.

use super::*;
use std::fs::File;
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The part files one worker writes, one per kind of log.
pub(super) struct Sink {
    pub(super) parts: Vec<(Kind, PathBuf, File)>,
    pub(super) columns: Columns,
    /// `log_store_compressed`: each chunk is a zlib stream of fio's binary samples.
    compressed: bool,
    /// Reused for the text of each chunk.
    text: String,
    /// Reused for the binary samples of each chunk when compressed.
    raw: Vec<u8>,
    /// The first failure; the worker then logs nothing more (its I/O goes on).
    pub(super) error: Option<String>,
}

impl Sink {
    pub(super) fn open(spec: &LogSpec, ioprio: Option<(u32, u32)>) -> Sink {
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
    pub(super) fn write(&mut self, entries: &Entries) {
        for (kind, _, file) in &mut self.parts {
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
            // What was written before the failure stays: the log is named and kept.
            if let Err(e) = written {
                self.error = Some(format!("the {} log stopped: {e}", kind.suffix()));
                break;
            }
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

/// Append the lines of one kind of log to `out`.
pub(super) fn render(log: &Entries, kind: Kind, columns: &Columns, out: &mut String) {
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
pub(crate) fn write_job_logs(
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

/// A log that failed while written (a full disk) is still named, with what it
/// holds, and the failure returned naming the files kept; one that could not
/// even be created is only the failure.
fn name_parts(
    spec: &LogSpec,
    logs: &[&IoLog],
    first_worker_number: usize,
) -> io::Result<Vec<PathBuf>> {
    let failure = logs.iter().find_map(|log| log.error.as_deref());
    match failure {
        Some(error) if logs.iter().any(|log| log.parts.is_empty()) => {
            Err(io::Error::other(error.to_string()))
        }
        Some(error) => {
            let kept = name_each_log(spec, logs, first_worker_number)?;
            let kept: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
            Err(io::Error::other(format!(
                "{error}; what was logged before is kept in {}",
                kept.join(", ")
            )))
        }
        None => name_each_log(spec, logs, first_worker_number),
    }
}

fn name_each_log(
    spec: &LogSpec,
    logs: &[&IoLog],
    first_worker_number: usize,
) -> io::Result<Vec<PathBuf>> {
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
    use super::super::tests::{io, part_files, spec};
    use super::*;
    use crate::runner::logs::IoLogger;

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
