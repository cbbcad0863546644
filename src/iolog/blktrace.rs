//! blktrace binary traces (as `blkparse -d` writes them): fixed 48-byte
//! records, each followed by `pdu_len` bytes of payload. As in fio, only the
//! queue events of reads, writes, discards (trims) and flushes (syncs) are
//! replayed; every other event is a side effect inside the block layer.

use crate::io_unit::Ddir;

/// Bytes of one record before its payload.
pub(super) const RECORD_LEN: usize = 48;
/// The magic in the top 24 bits of a record's first word; the low byte is the version.
const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
/// Category bits sit above the action's low 16 bits.
const CATEGORY_SHIFT: u32 = 16;
const CATEGORY_WRITE: u32 = 1 << 1;
const CATEGORY_FLUSH: u32 = 1 << 2;
const CATEGORY_NOTIFY: u32 = 1 << 10;
const CATEGORY_DISCARD: u32 = 1 << 13;
/// The action "queued" (blktrace's 'Q').
const ACTION_QUEUE: u32 = 1;

/// The byte order of a trace from its first bytes: Some(true) when its
/// numbers need swapping here, None when it is no blktrace trace.
pub(super) fn byte_order(start: &[u8]) -> Option<bool> {
    let word: [u8; 4] = start.get(..4)?.try_into().ok()?;
    let native = u32::from_ne_bytes(word);
    if native & 0xffff_ff00 == MAGIC {
        Some(false)
    } else if native.swap_bytes() & 0xffff_ff00 == MAGIC {
        Some(true)
    } else {
        None
    }
}

/// The fields of a record replay needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Record {
    pub time_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    /// The traced device as the kernel's dev_t (major << 20 | minor).
    pub device: u32,
    /// Payload bytes after the record.
    pub pdu_len: u16,
}

/// What a replayed queue event asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    Io(Ddir),
    /// A flush: a sync of the device.
    Flush,
}

impl Record {
    /// Decode one record (`swap`: the trace's byte order is not this machine's).
    pub(super) fn parse(raw: &[u8; RECORD_LEN], swap: bool) -> Result<Record, String> {
        let u32_at = |at: usize| {
            let v = u32::from_ne_bytes(raw[at..at + 4].try_into().expect("4 bytes"));
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |at: usize| {
            let v = u64::from_ne_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let pdu = u16::from_ne_bytes([raw[46], raw[47]]);
        let magic = u32_at(0);
        if magic & 0xffff_ff00 != MAGIC {
            return Err(format!("bad magic {magic:#x} (not a blktrace record)"));
        }
        if magic & 0xff != VERSION {
            return Err(format!(
                "blktrace version {} (only version {VERSION} is read, as in fio)",
                magic & 0xff
            ));
        }
        Ok(Record {
            time_ns: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
            pdu_len: if swap { pdu.swap_bytes() } else { pdu },
        })
    }

    /// The event replayed for this record, None for one that is not (not a
    /// queue event, a notification, or a read or write of no bytes).
    pub(super) fn event(&self) -> Option<Event> {
        let category = |bit: u32| self.action & (bit << CATEGORY_SHIFT) != 0;
        if self.action & 0xffff != ACTION_QUEUE || category(CATEGORY_NOTIFY) {
            return None;
        }
        if category(CATEGORY_DISCARD) {
            Some(Event::Io(Ddir::Trim))
        } else if category(CATEGORY_FLUSH) {
            Some(Event::Flush)
        } else if self.bytes == 0 {
            None
        } else if category(CATEGORY_WRITE) {
            Some(Event::Io(Ddir::Write))
        } else {
            Some(Event::Io(Ddir::Read))
        }
    }

    /// A queue event that is no notification: fio times the replay from the first.
    pub(super) fn is_queued(&self) -> bool {
        self.action & 0xffff == ACTION_QUEUE
            && self.action & (CATEGORY_NOTIFY << CATEGORY_SHIFT) == 0
    }

    /// The device's major and minor numbers.
    pub(super) fn major_minor(&self) -> (u32, u32) {
        (self.device >> 20, self.device & ((1 << 20) - 1))
    }
}

/// Copy of a raw record in this machine's byte order with its time set to
/// `time_ns` and no payload (a merged trace carries none, as fio's).
fn rewritten(raw: &[u8; RECORD_LEN], swap: bool, time_ns: u64) -> [u8; RECORD_LEN] {
    let mut out = *raw;
    if swap {
        for (at, len) in [
            (0, 4),
            (4, 4),
            (8, 8),
            (16, 8),
            (24, 4),
            (28, 4),
            (32, 4),
            (36, 4),
            (40, 4),
            (44, 2),
        ] {
            out[at..at + len].reverse();
        }
    }
    out[8..16].copy_from_slice(&time_ns.to_ne_bytes());
    out[46..48].copy_from_slice(&[0, 0]);
    out
}

/// One trace being merged.
struct Cursor {
    name: String,
    reader: std::io::BufReader<std::fs::File>,
    swap: bool,
    /// `merge_blktrace_scalars`: per cent of the trace's times.
    scalar: u64,
    /// `merge_blktrace_iters`: passes over the trace, and the pass now read.
    iters: u32,
    iter: u32,
    /// The scaled time of the trace's last event, set after its first pass.
    length: u64,
    /// The next event to merge, with its merged time.
    next: Option<([u8; RECORD_LEN], u64)>,
}

impl Cursor {
    /// Read on to the next queued read, write or discard (fio merges only
    /// those), starting the trace over while passes remain; None at the end.
    fn advance(&mut self) -> Result<(), String> {
        use std::io::{Read, Seek};
        let mut raw = [0u8; RECORD_LEN];
        loop {
            match self.reader.read_exact(&mut raw) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    self.iter += 1;
                    if self.iter >= self.iters {
                        self.next = None;
                        return Ok(());
                    }
                    self.reader
                        .rewind()
                        .map_err(|e| format!("{}: {}", self.name, crate::errno::describe(&e)))?;
                    continue;
                }
                Err(e) => return Err(format!("{}: {}", self.name, crate::errno::describe(&e))),
            }
            let record =
                Record::parse(&raw, self.swap).map_err(|why| format!("{}: {why}", self.name))?;
            self.reader
                .seek_relative(i64::from(record.pdu_len))
                .map_err(|e| format!("{}: {}", self.name, crate::errno::describe(&e)))?;
            let category = |bit: u32| record.action & (bit << CATEGORY_SHIFT) != 0;
            let has_direction =
                category(1) || category(CATEGORY_WRITE) || category(CATEGORY_DISCARD);
            if record.action & 0xffff != ACTION_QUEUE || !has_direction {
                continue;
            }
            let time = (u128::from(record.time_ns)
                + u128::from(self.iter) * u128::from(self.length))
                * u128::from(self.scalar)
                / 100;
            let time = u64::try_from(time).unwrap_or(u64::MAX);
            if self.iter == 0 {
                self.length = time;
            }
            self.next = Some((rewritten(&raw, self.swap, time), time));
            return Ok(());
        }
    }
}

/// fio's `merge_blktrace_file`: the queued events of `traces` in one trace at
/// `out`, ordered by time, each trace's times scaled by its `scalars` per
/// cent and the trace repeated `iters` times (each pass after the one before).
pub(crate) fn merge(traces: &[(String, u64, u32)], out: &std::path::Path) -> Result<(), String> {
    use std::io::{BufRead, Write};
    let mut cursors = Vec::with_capacity(traces.len());
    for (name, scalar, iters) in traces {
        let file = std::fs::File::open(name)
            .map_err(|e| format!("cannot open {name}: {}", crate::errno::describe(&e)))?;
        let mut reader = std::io::BufReader::new(file);
        let start = reader
            .fill_buf()
            .map_err(|e| format!("{name}: {}", crate::errno::describe(&e)))?;
        let swap = byte_order(start).ok_or_else(|| format!("{name} is not a blktrace trace"))?;
        let mut cursor = Cursor {
            name: name.clone(),
            reader,
            swap,
            scalar: *scalar,
            iters: (*iters).max(1),
            iter: 0,
            length: 0,
            next: None,
        };
        cursor.advance()?;
        cursors.push(cursor);
    }
    let file = std::fs::File::create(out).map_err(|e| {
        format!(
            "cannot create {}: {}",
            out.display(),
            crate::errno::describe(&e)
        )
    })?;
    let mut writer = std::io::BufWriter::with_capacity(128 * 1024, file);
    let failed = |e: std::io::Error| format!("{}: {}", out.display(), crate::errno::describe(&e));
    // the earliest next event of all traces, the first trace's on a tie
    while let Some(index) = (0..cursors.len())
        .filter(|&i| cursors[i].next.is_some())
        .min_by_key(|&i| cursors[i].next.map(|(_, time)| time))
    {
        let (raw, _) = cursors[index].next.expect("a next event");
        writer.write_all(&raw).map_err(failed)?;
        cursors[index].advance()?;
    }
    writer.flush().map_err(failed)
}

/// The block device under /dev with these numbers, searched as fio does
/// (subdirectories too, symbolic links not followed).
pub(super) fn find_device(major: u32, minor: u32) -> Option<std::path::PathBuf> {
    fn search(dir: &std::path::Path, rdev: u64, depth: u32) -> Option<std::path::PathBuf> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.file_type().is_block_device() && meta.rdev() == rdev {
                return Some(entry.path());
            }
            if meta.is_dir() && depth < 4 {
                if let Some(found) = search(&entry.path(), rdev, depth + 1) {
                    return Some(found);
                }
            }
        }
        None
    }
    let rdev = makedev(major, minor);
    search(std::path::Path::new("/dev"), rdev, 0)
}

/// Linux's encoding of a device number (`makedev`).
fn makedev(major: u32, minor: u32) -> u64 {
    let (major, minor) = (u64::from(major), u64::from(minor));
    ((major & 0xffff_f000) << 32)
        | ((major & 0xfff) << 8)
        | ((minor & 0xffff_ff00) << 12)
        | (minor & 0xff)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// One record in this machine's byte order (test traces are built with it).
    pub(crate) fn record(
        time_ns: u64,
        sector: u64,
        bytes: u32,
        action: u32,
        device: u32,
    ) -> Vec<u8> {
        let mut raw = Vec::with_capacity(RECORD_LEN);
        raw.extend((MAGIC | VERSION).to_ne_bytes());
        raw.extend(0u32.to_ne_bytes());
        raw.extend(time_ns.to_ne_bytes());
        raw.extend(sector.to_ne_bytes());
        raw.extend(bytes.to_ne_bytes());
        raw.extend(action.to_ne_bytes());
        raw.extend([0u8; 4]);
        raw.extend(device.to_ne_bytes());
        raw.extend([0u8; 4]);
        raw.extend([0u8; 4]);
        raw
    }

    /// A queue event's action word of these categories.
    pub(crate) fn queued(categories: u32) -> u32 {
        ACTION_QUEUE | (categories | 1 << 4) << CATEGORY_SHIFT
    }

    #[test]
    fn queue_events_become_ios_and_the_rest_are_left_out() {
        let parse = |raw: Vec<u8>| Record::parse(&raw.try_into().unwrap(), false).unwrap();
        let cases = [
            (queued(0), 4096, Some(Event::Io(Ddir::Read))),
            (queued(CATEGORY_WRITE), 4096, Some(Event::Io(Ddir::Write))),
            (
                queued(CATEGORY_WRITE | CATEGORY_DISCARD),
                4096,
                Some(Event::Io(Ddir::Trim)),
            ),
            (
                queued(CATEGORY_WRITE | CATEGORY_FLUSH),
                0,
                Some(Event::Flush),
            ),
            (queued(CATEGORY_WRITE), 0, None),
            (queued(CATEGORY_NOTIFY), 0, None),
            // a completion ('C') of a write
            (8 | (CATEGORY_WRITE | 1 << 7) << CATEGORY_SHIFT, 4096, None),
        ];
        for (action, bytes, expected) in cases {
            let r = parse(record(5, 8, bytes, action, 7 << 20 | 3));
            assert_eq!(
                r.event(),
                expected,
                "action {action:#x}: expected {expected:?}"
            );
            assert_eq!(r.major_minor(), (7, 3), "expected device 7:3");
        }
    }

    #[test]
    fn a_trace_of_the_other_byte_order_is_read_swapped() {
        let native = record(1_000, 16, 512, queued(CATEGORY_WRITE), 8 << 20 | 1);
        let swapped: Vec<u8> = native
            .chunks(4)
            .flat_map(|w| {
                let mut w = w.to_vec();
                w.reverse();
                w
            })
            .collect();
        // the 64-bit fields swap as a whole: rebuild them
        let mut other = swapped.clone();
        for at in [8, 16] {
            let v = u64::from_ne_bytes(native[at..at + 8].try_into().unwrap()).swap_bytes();
            other[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        }
        other[44..48].copy_from_slice(&[0; 4]);
        assert_eq!(
            byte_order(&native),
            Some(false),
            "expected the native order found"
        );
        assert_eq!(
            byte_order(&other),
            Some(true),
            "expected the swapped order found"
        );
        let r = Record::parse(&other.try_into().unwrap(), true).unwrap();
        assert_eq!(
            (r.time_ns, r.sector, r.bytes, r.event()),
            (1_000, 16, 512, Some(Event::Io(Ddir::Write))),
            "expected the swapped record read as written"
        );
        assert_eq!(
            byte_order(b"fio version 3 iolog"),
            None,
            "a text log is no trace"
        );
    }

    #[test]
    fn merging_orders_the_traces_by_scaled_time_and_repeats_them() {
        let dir = tempfile::tempdir().unwrap();
        let write = queued(CATEGORY_WRITE);
        let trace = |events: &[(u64, u64)]| -> Vec<u8> {
            let mut raw = Vec::new();
            for &(time, sector) in events {
                raw.extend(record(time, sector, 4096, write, 8 << 20));
                // a completion between, which the merge leaves out
                raw.extend(record(
                    time + 10,
                    sector,
                    4096,
                    8 | (CATEGORY_WRITE | 1 << 7) << CATEGORY_SHIFT,
                    8 << 20,
                ));
            }
            raw
        };
        let a = dir.path().join("a.bin");
        let b = dir.path().join("b.bin");
        std::fs::write(&a, trace(&[(0, 1), (2_000_000, 2), (4_000_000, 3)])).unwrap();
        std::fs::write(&b, trace(&[(1_000_000, 11), (3_000_000, 12)])).unwrap();
        let out = dir.path().join("m.bin");
        let name = |p: &std::path::Path| p.display().to_string();
        merge(&[(name(&a), 100, 2), (name(&b), 50, 1)], &out).unwrap();
        let merged = std::fs::read(&out).unwrap();
        let events: Vec<(u64, u64)> = merged
            .chunks(RECORD_LEN)
            .map(|raw| {
                let r = Record::parse(raw.try_into().unwrap(), false).unwrap();
                (r.time_ns, r.sector)
            })
            .collect();
        let expected = [
            (0, 1),
            (500_000, 11),
            (1_500_000, 12),
            (2_000_000, 2),
            (4_000_000, 3),
            (4_000_000, 1),
            (6_000_000, 2),
            (8_000_000, 3),
        ];
        assert_eq!(
            events, expected,
            "expected b at half its times, a twice (its second pass after its last event)"
        );
    }

    #[test]
    fn the_device_number_is_encoded_as_linux_does() {
        assert_eq!(makedev(7, 3), 0x703, "expected loop3's number");
        assert_eq!(makedev(259, 1), 0x10301, "expected nvme's number");
    }
}
