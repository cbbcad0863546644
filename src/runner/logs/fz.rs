//! fio's compressed logs (`log_store_compressed=1`, files ending `.log.fz`) and
//! `--inflate-log`, which prints one as the text log it stands for.
//!
//! The file is a run of zlib streams. Each inflates to an array of fio 3.33's
//! in-memory log samples, little-endian, 32 bytes each (time in ms, value, ddir
//! with flag bits, priority, 2 bytes of padding, block size), 40 with the offset
//! after them. Bit 31 of the ddir word says the samples carry an offset, bit 30
//! that the priority column is the I/O priority; the first sample of a stream
//! decides for the whole stream, as in fio. fio 3.42 changed the sample layout,
//! so files are read and written the 3.33 way.

use super::{Columns, Sample};
use crate::job::spec::LogWindow;
use flate2::{Decompress, FlushDecompress, Status};
use std::io::{self, Write};

const OFFSET_BIT: u32 = 0x8000_0000;
const PRIO_BIT: u32 = 0x4000_0000;
const SAMPLE_BYTES: usize = 32;
const OFFSET_SAMPLE_BYTES: usize = 40;

/// Append `sample` to `out` in fio 3.33's binary layout, with the flags of `columns`.
pub(super) fn push_sample(columns: &Columns, sample: &Sample, out: &mut Vec<u8>) {
    let flags =
        if columns.offset { OFFSET_BIT } else { 0 } | if columns.prio { PRIO_BIT } else { 0 };
    out.extend_from_slice(&sample.time_ms.to_le_bytes());
    out.extend_from_slice(&columns.value(sample).to_le_bytes());
    out.extend_from_slice(&(sample.ddir | flags).to_le_bytes());
    out.extend_from_slice(&(sample.prio as u16).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&sample.bs.to_le_bytes());
    if columns.offset {
        out.extend_from_slice(&sample.offset.to_le_bytes());
    }
}

/// Write `raw` (whole samples) to `file` as one zlib stream; nothing when empty.
pub(super) fn write_stream(file: &mut impl Write, raw: &[u8]) -> io::Result<()> {
    if raw.is_empty() {
        return Ok(());
    }
    let mut encoder = flate2::write::ZlibEncoder::new(file, flate2::Compression::default());
    encoder.write_all(raw)?;
    encoder.finish().map(drop)
}

/// The text log a compressed log stands for, stream by stream, in fio's line format.
/// An empty file (a log without samples) is refused, as fio refuses it.
pub(crate) fn inflate(compressed: &[u8]) -> Result<String, InflateError> {
    if compressed.is_empty() {
        return Err(InflateError::Empty);
    }
    let mut text = String::new();
    let mut rest = compressed;
    let mut raw = Vec::new();
    let mut stream = 1;
    while !rest.is_empty() {
        let used = inflate_stream(rest, &mut raw).map_err(|why| InflateError::Stream {
            stream,
            at: compressed.len() - rest.len(),
            why,
        })?;
        render_samples(&raw, &mut text);
        rest = &rest[used..];
        stream += 1;
    }
    Ok(text)
}

/// Inflate the zlib stream at the start of `input` into `raw`; the bytes it took.
fn inflate_stream(input: &[u8], raw: &mut Vec<u8>) -> Result<usize, StreamError> {
    let mut state = Decompress::new(true);
    raw.clear();
    loop {
        if raw.capacity() - raw.len() < 64 * 1024 {
            raw.reserve(raw.capacity().max(64 * 1024));
        }
        let before = (state.total_in(), state.total_out());
        let status = state
            .decompress_vec(
                &input[state.total_in() as usize..],
                raw,
                FlushDecompress::None,
            )
            .map_err(StreamError::NotZlib)?;
        match status {
            Status::StreamEnd => return Ok(state.total_in() as usize),
            _ if (state.total_in(), state.total_out()) == before => return Err(StreamError::Cut),
            _ => {}
        }
    }
}

/// Why a compressed log could not be inflated.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InflateError {
    /// The file has no stream.
    #[error("the file is empty: the log had no entries")]
    Empty,
    /// One of its streams is broken.
    #[error("stream {stream} (at byte {at}): {why}")]
    Stream {
        /// Which stream, from 1.
        stream: usize,
        /// Where it starts in the file.
        at: usize,
        /// What is wrong with it.
        #[source]
        why: StreamError,
    },
}

/// What is wrong with one zlib stream of a compressed log.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StreamError {
    /// Its bytes are not zlib.
    #[error("not a zlib stream ({0})")]
    NotZlib(flate2::DecompressError),
    /// The file ends before the stream does.
    #[error("the file ends inside a compressed stream")]
    Cut,
}

/// Append the text lines of one stream's samples to `out`, as fio prints them.
fn render_samples(raw: &[u8], out: &mut String) {
    let word =
        |at: usize, from: &[u8]| u64::from_le_bytes(from[at..at + 8].try_into().expect("8 bytes"));
    let Some(first_ddir) = raw.get(16..20) else {
        return;
    };
    let flags = u32::from_le_bytes(first_ddir.try_into().expect("4 bytes"));
    let columns = Columns {
        window: LogWindow::Avg,
        offset: flags & OFFSET_BIT != 0,
        prio: flags & PRIO_BIT != 0,
        issue_time: false,
        ioprio: 0,
    };
    let size = if columns.offset {
        OFFSET_SAMPLE_BYTES
    } else {
        SAMPLE_BYTES
    };
    for record in raw.chunks_exact(size) {
        let sample = Sample {
            time_ms: word(0, record),
            mean: word(8, record),
            max: None,
            ddir: u32::from_le_bytes(record[16..20].try_into().expect("4 bytes"))
                & !(OFFSET_BIT | PRIO_BIT),
            prio: u32::from(u16::from_le_bytes([record[20], record[21]])),
            bs: word(24, record),
            offset: if columns.offset { word(32, record) } else { 0 },
            issue_ns: 0,
        };
        columns.line(&sample, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(time_ms: u64, mean: u64, ddir: u32, offset: u64, prio: u32) -> Sample {
        Sample {
            time_ms,
            mean,
            max: Some(mean + 5),
            ddir,
            bs: 4096,
            offset,
            prio,
            issue_ns: 0,
        }
    }

    fn columns(offset: bool, prio: bool, window: LogWindow) -> Columns {
        Columns {
            window,
            offset,
            prio,
            issue_time: false,
            ioprio: 0,
        }
    }

    #[test]
    fn samples_inflate_to_the_lines_written_uncompressed() {
        let samples = [
            sample(1, 70, 0, 0, 0),
            sample(2, 80, 1, 4096, 0x2003),
            sample(9, 1 << 40, 2, 8192, 0),
        ];
        for (offset, prio, window) in [
            (false, false, LogWindow::Avg),
            (true, false, LogWindow::Max),
            (true, true, LogWindow::Avg),
            (false, true, LogWindow::Max),
        ] {
            let columns = columns(offset, prio, window);
            let (mut text, mut file) = (String::new(), Vec::new());
            for chunk in samples.chunks(2) {
                let mut raw = Vec::new();
                for s in chunk {
                    columns.line(s, &mut text);
                    push_sample(&columns, s, &mut raw);
                }
                write_stream(&mut file, &raw).expect("write to memory");
            }
            assert_eq!(
                inflate(&file).expect("the streams inflate"),
                text,
                "expected the two streams to inflate to the text lines (offset {offset}, prio {prio}, {window:?})"
            );
        }
    }

    #[test]
    fn the_binary_layout_is_fio_333s() {
        let mut raw = Vec::new();
        push_sample(
            &columns(true, true, LogWindow::Avg),
            &sample(7, 9, 1, 3, 0x4001),
            &mut raw,
        );
        let mut expected = vec![7, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0];
        expected.extend([1, 0, 0, 0xC0, 0x01, 0x40, 0, 0]);
        expected.extend([0, 0x10, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            raw, expected,
            "expected time, value, ddir|bits, prio, pad, bs, offset"
        );
    }

    #[test]
    fn empty_and_broken_logs_are_refused() {
        let mut file = Vec::new();
        write_stream(&mut file, &[]).expect("write to memory");
        assert!(
            file.is_empty(),
            "expected no stream for no samples, saw {file:?}"
        );
        assert_eq!(
            inflate(&file).map_err(|e| e.to_string()),
            Err("the file is empty: the log had no entries".to_string()),
            "expected an empty file to be refused, as fio refuses it"
        );
        let said = inflate(b"not zlib")
            .expect_err("expected text that is not zlib to be refused")
            .to_string();
        assert!(
            said.starts_with("stream 1 (at byte 0): not a zlib stream"),
            "saw: {said}"
        );
        let mut raw = Vec::new();
        push_sample(
            &columns(false, false, LogWindow::Avg),
            &sample(1, 2, 0, 0, 0),
            &mut raw,
        );
        let mut whole = Vec::new();
        write_stream(&mut whole, &raw).expect("write to memory");
        write_stream(&mut whole, &raw).expect("write to memory");
        let cut = &whole[..whole.len() - 3];
        let said = inflate(cut)
            .expect_err("expected a cut stream to be refused")
            .to_string();
        assert_eq!(
            said,
            format!(
                "stream 2 (at byte {}): the file ends inside a compressed stream",
                whole.len() / 2
            ),
            "expected the second stream to be named as cut"
        );
    }
}
