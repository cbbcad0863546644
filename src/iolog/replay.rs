//! `read_iolog`: a log's I/Os (fio's text log, or a blktrace trace's queue
//! events), read one line or record at a time, in place of the workload
//! generator's. The job's resolver reads the log once through to
//! check every line and learn its files; each worker streams it again while it
//! runs (so a log of any length takes little memory, whatever
//! `read_iolog_chunked` says).

use super::blktrace::{self, Event, Record, RECORD_LEN};
use super::{parse_line, Action, LogVersion};
use crate::io_unit::{Ddir, NextIo, DDIRS};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::PathBuf;

/// `replay_skip`: the kinds of logged I/O left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReplaySkip {
    /// Per direction (read, write, trim).
    pub ddir: [bool; DDIRS],
    pub sync: bool,
}

/// What a replay does, and what the resolver learnt from the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReplaySpec {
    pub log: PathBuf,
    /// `replay_redirect`: every I/O goes to this file.
    pub redirect: Option<PathBuf>,
    /// `replay_no_stall`: as fast as possible, ignoring the log's times.
    pub no_stall: bool,
    /// `replay_time_scale`: per cent of the logged rate (200: twice as fast).
    pub time_scale: u32,
    /// `replay_scale`: offsets divided by this (0: as logged).
    pub scale: u64,
    /// `replay_align`: offsets rounded down to this power of two (0: as logged).
    pub align: u64,
    pub skip: ReplaySkip,
    /// The files the log adds, in its order (the redirect alone with `replay_redirect`).
    pub files: Vec<PathBuf>,
    /// Bytes and largest I/O per direction over the log.
    pub bytes: [u64; DDIRS],
    pub largest: [u32; DDIRS],
}

impl ReplaySpec {
    /// Where a logged offset is replayed: scaled down, then aligned down (fio's order).
    pub(crate) fn place(&self, offset: u64) -> u64 {
        let scaled = offset.checked_div(self.scale).unwrap_or(offset);
        if self.align > 0 {
            scaled & !(self.align - 1)
        } else {
            scaled
        }
    }
}

/// What a replayed line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Io(NextIo),
    /// `sync` / `datasync` of a file.
    Sync {
        file: u32,
        datasync: bool,
    },
}

/// One op and when it is due, in microseconds after the replay started
/// (`None`: at once, as with `replay_no_stall=1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timed {
    pub op: Op,
    pub due_us: Option<u64>,
}

/// What the log is.
enum Format {
    Text(LogVersion),
    /// A blktrace trace; `swap`: its byte order is not this machine's.
    Trace {
        swap: bool,
        /// File index by device number, for the devices seen so far.
        devices: HashMap<u32, u32>,
    },
}

/// Reads a log's ops in order, applying the job's `replay_*` options.
pub(crate) struct ReplayReader<'s> {
    spec: &'s ReplaySpec,
    reader: BufReader<File>,
    format: Format,
    line: String,
    /// The line (text) or record (trace) read last, from 1.
    line_no: u64,
    /// File index by name, in the order of the log's `add` lines (a trace's devices as met).
    files: HashMap<String, u32>,
    /// The time of the first timed line (version 3).
    first_us: Option<u64>,
    /// Version 2 `wait`: no I/O before this time.
    wait_until_us: u64,
}

impl<'s> ReplayReader<'s> {
    /// Open the log and read its version line.
    pub(crate) fn open(spec: &'s ReplaySpec) -> Result<Self, String> {
        let file = File::open(&spec.log).map_err(|e| {
            format!(
                "cannot open {}: {}; give the path of a log written by write_iolog",
                spec.log.display(),
                crate::errno::describe(&e)
            )
        })?;
        let mut reader = BufReader::with_capacity(64 * 1024, file);
        let failed =
            |e: std::io::Error| format!("{}: {}", spec.log.display(), crate::errno::describe(&e));
        let (format, line_no) = match blktrace::byte_order(reader.fill_buf().map_err(failed)?) {
            Some(swap) => (
                Format::Trace {
                    swap,
                    devices: HashMap::new(),
                },
                0,
            ),
            None => {
                let mut first = Vec::new();
                reader.read_until(b'\n', &mut first).map_err(failed)?;
                let version = LogVersion::from_header(&String::from_utf8_lossy(&first))
                    .map_err(|why| format!("{}:1: {why}", spec.log.display()))?;
                (Format::Text(version), 1)
            }
        };
        Ok(ReplayReader {
            spec,
            reader,
            format,
            line: String::new(),
            line_no,
            files: HashMap::new(),
            first_us: None,
            wait_until_us: 0,
        })
    }

    /// The files the `add` lines named so far, in index order.
    pub(crate) fn files(&self) -> Vec<String> {
        let mut files: Vec<(&String, &u32)> = self.files.iter().collect();
        files.sort_by_key(|(_, &index)| index);
        files.into_iter().map(|(name, _)| name.clone()).collect()
    }

    /// The next op, `None` at the end of the log; Err is one line naming the
    /// log's file and line (or record) and how to fix it.
    pub(crate) fn next_op(&mut self) -> Result<Option<Timed>, String> {
        if let Format::Trace { .. } = self.format {
            return self.next_record();
        }
        loop {
            self.line.clear();
            let read = self.reader.read_line(&mut self.line).map_err(|e| {
                format!(
                    "{}: {}",
                    self.spec.log.display(),
                    crate::errno::describe(&e)
                )
            })?;
            if read == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            if let Some(timed) = self.take_line()? {
                return Ok(Some(timed));
            }
        }
    }

    /// The op of the line just read, if it is one that is replayed.
    fn take_line(&mut self) -> Result<Option<Timed>, String> {
        let spec = self.spec;
        let at = |why: String| {
            format!(
                "{}:{}: {why}; fix the line or write the log again with write_iolog",
                spec.log.display(),
                self.line_no
            )
        };
        let Format::Text(version) = self.format else {
            unreachable!("a text line is read from a text log")
        };
        let Some(line) = parse_line(version, &self.line).map_err(at)? else {
            return Ok(None);
        };
        if let Some(t) = line.time_us {
            // times count from the log's first line, file lines included
            self.first_us.get_or_insert(t);
        }
        if line.action == Action::Add {
            let next = self.files.len() as u32;
            if !self.files.contains_key(line.file) {
                self.files.insert(line.file.to_string(), next);
            }
            return Ok(None);
        }
        let file = match (&spec.redirect, self.files.get(line.file)) {
            (Some(_), _) => 0,
            (None, Some(&index)) => index,
            (None, None) => {
                return Err(at(format!(
                    "file {:?} has no add line above this one",
                    line.file
                )))
            }
        };
        let ddir = match line.action {
            Action::Add | Action::Open | Action::Close => return Ok(None),
            Action::Wait => {
                self.wait_until_us = line.offset.saturating_mul(1000);
                return Ok(None);
            }
            Action::Sync | Action::Datasync if spec.skip.sync => return Ok(None),
            Action::Sync | Action::Datasync => None,
            Action::Read => Some(Ddir::Read),
            Action::Write => Some(Ddir::Write),
            Action::Trim => Some(Ddir::Trim),
        };
        if ddir.is_some_and(|d| spec.skip.ddir[d.index()]) {
            return Ok(None);
        }
        let op = match ddir {
            Some(ddir) => Op::Io(NextIo {
                ddir,
                file,
                offset: spec.place(line.offset),
                len: line.len,
            }),
            None => Op::Sync {
                file,
                datasync: line.action == Action::Datasync,
            },
        };
        Ok(Some(Timed {
            op,
            due_us: self.due_us(line.time_us),
        }))
    }

    /// The next replayed queue event of a trace; `None` at its end (a record
    /// cut short ends it too, as in fio).
    fn next_record(&mut self) -> Result<Option<Timed>, String> {
        let mut raw = [0u8; RECORD_LEN];
        loop {
            let log = self.spec.log.display();
            match self.reader.read_exact(&mut raw) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
                Err(e) => return Err(format!("{log}: {}", crate::errno::describe(&e))),
            }
            self.line_no += 1;
            let Format::Trace { swap, .. } = self.format else {
                unreachable!("a record is read from a trace")
            };
            let record = Record::parse(&raw, swap).map_err(|why| {
                format!(
                    "{log}: record {}: {why}; give a trace as blkparse -d writes it",
                    self.line_no
                )
            })?;
            self.reader
                .seek_relative(i64::from(record.pdu_len))
                .map_err(|e| format!("{log}: {}", crate::errno::describe(&e)))?;
            if record.is_queued() {
                self.first_us.get_or_insert(record.time_ns / 1000);
            }
            if let Some(timed) = self.take_record(&record)? {
                return Ok(Some(timed));
            }
        }
    }

    /// The op of a trace record, if it is one that is replayed.
    fn take_record(&mut self, record: &Record) -> Result<Option<Timed>, String> {
        let spec = self.spec;
        let op = match record.event() {
            None => return Ok(None),
            Some(Event::Flush) if spec.skip.sync => return Ok(None),
            Some(Event::Io(ddir)) if spec.skip.ddir[ddir.index()] => return Ok(None),
            Some(Event::Flush) => Op::Sync {
                file: self.device_file(record)?,
                datasync: false,
            },
            Some(Event::Io(ddir)) => {
                // fio rounds a trace's lengths up to replay_align
                let len = match spec.align {
                    0 => record.bytes,
                    align => u32::try_from(u64::from(record.bytes).next_multiple_of(align))
                        .unwrap_or(u32::MAX),
                };
                Op::Io(NextIo {
                    ddir,
                    file: self.device_file(record)?,
                    offset: spec.place(record.sector.saturating_mul(512)),
                    len,
                })
            }
        };
        Ok(Some(Timed {
            op,
            due_us: self.due_us(Some(record.time_ns / 1000)),
        }))
    }

    /// The file index of the record's device: the redirect, else the block
    /// device under /dev with its numbers.
    fn device_file(&mut self, record: &Record) -> Result<u32, String> {
        if self.spec.redirect.is_some() {
            return Ok(0);
        }
        let Format::Trace { devices, .. } = &mut self.format else {
            unreachable!("a record is read from a trace")
        };
        if let Some(&index) = devices.get(&record.device) {
            return Ok(index);
        }
        let (major, minor) = record.major_minor();
        let path = blktrace::find_device(major, minor).ok_or_else(|| {
            format!(
                "{}: record {}: the traced device {major}:{minor} is not under /dev; \
                 give replay_redirect=PATH to replay the trace on a file or device",
                self.spec.log.display(),
                self.line_no
            )
        })?;
        let name = path.display().to_string();
        let next = self.files.len() as u32;
        let index = *self.files.entry(name).or_insert(next);
        devices.insert(record.device, index);
        Ok(index)
    }

    /// When an op logged at `time_us` is due, after `replay_time_scale`.
    fn due_us(&mut self, time_us: Option<u64>) -> Option<u64> {
        if self.spec.no_stall {
            return None;
        }
        let logged = match time_us {
            Some(t) => t.saturating_sub(self.first_us.unwrap_or(t)),
            None => 0,
        };
        let scaled = (u128::from(logged) * 100 / u128::from(self.spec.time_scale.max(1))) as u64;
        Some(scaled.max(self.wait_until_us))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn spec(log: &Path) -> ReplaySpec {
        ReplaySpec {
            log: log.to_path_buf(),
            redirect: None,
            no_stall: false,
            time_scale: 100,
            scale: 0,
            align: 0,
            skip: ReplaySkip::default(),
            files: Vec::new(),
            bytes: [0; DDIRS],
            largest: [0; DDIRS],
        }
    }

    /// Every op of `text` read with `edit` applied to the spec.
    fn ops(text: &str, edit: impl FnOnce(&mut ReplaySpec)) -> Result<Vec<Timed>, String> {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        std::fs::write(&log, text).unwrap();
        let mut spec = spec(&log);
        edit(&mut spec);
        let mut reader = ReplayReader::open(&spec)?;
        let mut ops = Vec::new();
        while let Some(op) = reader.next_op()? {
            ops.push(op);
        }
        Ok(ops)
    }

    fn io(ddir: Ddir, file: u32, offset: u64, len: u32) -> Op {
        Op::Io(NextIo {
            ddir,
            file,
            offset,
            len,
        })
    }

    const V3: &str = "fio version 3 iolog\n10 a add\n11 b add\n20 a open\n\
                      100 a write 8192 4096\n300 b read 12288 512\n400 b trim 0 4096\n\
                      500 a sync 8192 0\n900 a close\n";

    #[test]
    fn a_v3_log_gives_its_ios_in_order_timed_from_the_first_line() {
        let got = ops(V3, |_| ()).unwrap();
        let expected = [
            (io(Ddir::Write, 0, 8192, 4096), 0),
            (io(Ddir::Read, 1, 12288, 512), 200),
            (io(Ddir::Trim, 1, 0, 4096), 300),
            (
                Op::Sync {
                    file: 0,
                    datasync: false,
                },
                400,
            ),
        ]
        .map(|(op, us)| Timed {
            op,
            due_us: Some(us + 90),
        });
        assert_eq!(
            got, expected,
            "expected the log's ops, due from its first line"
        );
    }

    #[test]
    fn time_scale_no_stall_scale_align_skip_and_redirect_shape_the_ops() {
        let faster = ops(V3, |s| s.time_scale = 200).unwrap();
        let dues: Vec<_> = faster.iter().map(|t| t.due_us).collect();
        assert_eq!(
            dues,
            [45, 145, 195, 245].map(Some),
            "expected twice the logged rate"
        );
        let no_stall = ops(V3, |s| s.no_stall = true).unwrap();
        assert!(
            no_stall.iter().all(|t| t.due_us.is_none()),
            "expected no times, saw {no_stall:?}"
        );
        let placed = ops(V3, |s| (s.scale, s.align) = (3, 1024)).unwrap();
        let offsets: Vec<_> = placed
            .iter()
            .filter_map(|t| match t.op {
                Op::Io(io) => Some(io.offset),
                Op::Sync { .. } => None,
            })
            .collect();
        assert_eq!(
            offsets,
            [2048, 4096, 0],
            "expected offsets / 3 rounded down to 1k"
        );
        let skipped = ops(V3, |s| {
            s.skip = ReplaySkip {
                ddir: [true, false, true],
                sync: true,
            }
        })
        .unwrap();
        let ops_left: Vec<_> = skipped.iter().map(|t| t.op).collect();
        assert_eq!(
            ops_left,
            [io(Ddir::Write, 0, 8192, 4096)],
            "expected the write alone"
        );
        let redirected = ops(V3, |s| s.redirect = Some(PathBuf::from("/dev/x"))).unwrap();
        assert!(
            redirected.iter().all(|t| match t.op {
                Op::Io(io) => io.file == 0,
                Op::Sync { file, .. } => file == 0,
            }),
            "expected every op on the one file, saw {redirected:?}"
        );
    }

    #[test]
    fn a_v2_wait_holds_the_ios_after_it() {
        let text = "fio version 2 iolog\nf add\nf read 0 4096\nf wait 5 0\nf read 4096 4096\n";
        let dues: Vec<_> = ops(text, |_| ())
            .unwrap()
            .iter()
            .map(|t| t.due_us)
            .collect();
        assert_eq!(
            dues,
            [Some(0), Some(5000)],
            "expected the second read 5 ms in"
        );
    }

    #[test]
    fn bad_logs_name_the_file_and_line() {
        let undeclared =
            ops("fio version 3 iolog\n0 a add\n5 b read 0 4096\n", |_| ()).unwrap_err();
        assert!(
            undeclared.ends_with("x.log:3: file \"b\" has no add line above this one; fix the line or write the log again with write_iolog"),
            "expected line 3 named with the fix, saw {undeclared:?}"
        );
        let malformed = ops("fio version 3 iolog\n0 a add\n5 a read 0\n", |_| ()).unwrap_err();
        assert!(
            malformed.contains("x.log:3: read needs an offset and a length"),
            "saw {malformed:?}"
        );
        let header = ops("0 a add\n", |_| ()).unwrap_err();
        assert!(
            header.contains("x.log:1: the first line is"),
            "saw {header:?}"
        );
    }

    #[test]
    fn a_trace_replays_its_queue_events_on_the_redirect() {
        use crate::iolog::blktrace::tests::{queued, record};
        let write = queued(1 << 1);
        let mut trace = Vec::new();
        trace.extend(record(1_000_000, 8, 4096, write, 8 << 20));
        // a notification with a payload of 5 bytes, which is skipped
        let mut note = record(1_500_000, 0, 0, queued(1 << 10), 8 << 20);
        note[46..48].copy_from_slice(&5u16.to_ne_bytes());
        note.extend(b"hello");
        trace.extend(note);
        // the write's completion is no queue event
        trace.extend(record(
            1_700_000,
            8,
            4096,
            8 | (1 << 1 | 1 << 7) << 16,
            8 << 20,
        ));
        trace.extend(record(3_000_000, 64, 1024, queued(0), 8 << 20));
        trace.extend(record(4_000_000, 0, 0, queued(1 << 1 | 1 << 2), 8 << 20));
        trace.extend(record(
            5_000_000,
            16,
            8192,
            queued(1 << 1 | 1 << 13),
            8 << 20,
        ));
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.bin");
        std::fs::write(&log, &trace).unwrap();
        let mut spec = spec(&log);
        spec.redirect = Some(PathBuf::from("target"));
        spec.align = 4096;
        let mut reader = ReplayReader::open(&spec).unwrap();
        let mut got = Vec::new();
        while let Some(op) = reader.next_op().unwrap() {
            got.push(op);
        }
        let expected = [
            (io(Ddir::Write, 0, 4096, 4096), 0),
            (io(Ddir::Read, 0, 32768, 4096), 2000),
            (
                Op::Sync {
                    file: 0,
                    datasync: false,
                },
                3000,
            ),
            (io(Ddir::Trim, 0, 8192, 8192), 4000),
        ]
        .map(|(op, us)| Timed {
            op,
            due_us: Some(us),
        });
        assert_eq!(
            got, expected,
            "expected the queued write, read (1k rounded up to replay_align), flush and discard"
        );
    }

    #[test]
    fn a_trace_of_an_unknown_device_needs_replay_redirect() {
        use crate::iolog::blktrace::tests::{queued, record};
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.bin");
        std::fs::write(&log, record(0, 0, 4096, queued(0), 4095 << 20 | 99_999)).unwrap();
        let err = match ReplayReader::open(&spec(&log)).unwrap().next_op() {
            Err(err) => err,
            Ok(op) => panic!("expected the unknown device refused, saw {op:?}"),
        };
        assert!(
            err.ends_with("t.bin: record 1: the traced device 4095:99999 is not under /dev; give replay_redirect=PATH to replay the trace on a file or device"),
            "expected the record and the fix named, saw {err:?}"
        );
    }
}
