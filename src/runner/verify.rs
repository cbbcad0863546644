//! A worker's data verification: stamp each written block, remember which
//! generation of each block it wrote, then read the blocks back and check them.
//!
//! The generation map is allocated before the start barrier; per write the hot
//! loop only fills the buffer and bumps a counter. Read-back uses plain `pread`
//! into one aligned buffer, outside the measured time (except `verify_backlog`,
//! which verifies inside the run as fio does).

use crate::job::spec::{JobSpec, VerifySpec};
use crate::report::model::{BadBlock, VerifyHeader, VerifyReport};
use crate::workload::verify_header::{BlockCodec, HeaderFields, Mismatch, Writer};
use crate::workload::FileRegion;
use iolens_sys::buf::AlignedBuf;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bad blocks listed in the report (and dumped); the rest are only counted.
pub const MAX_LISTED_BAD_BLOCKS: usize = 256;
/// Most verified blocks a worker tracks (4 bytes each: 256 MiB of map).
const MAX_TRACKED_BLOCKS: u64 = 1 << 26;
/// Read-back transfers at most this much at once.
const READ_CHUNK: usize = 1 << 20;
/// errno fio reports for a verify failure.
pub const VERIFY_ERRNO: i32 = libc::EILSEQ;

/// A block written and completed, waiting for `verify_backlog`.
#[derive(Debug, Clone, Copy)]
struct Written {
    file: u32,
    offset: u64,
    len: u32,
}

pub struct Verifier {
    spec: VerifySpec,
    codec: BlockCodec,
    block: u64,
    regions: Vec<FileRegion>,
    /// Per region: the generation last written to each block; 0 = never written.
    /// Empty when checking data an earlier job wrote (a job that only reads).
    generations: Vec<Vec<u32>>,
    backlog: Vec<Written>,
    files: Vec<Arc<File>>,
    paths: Vec<PathBuf>,
    read_buf: AlignedBuf,
    scratch: Vec<u8>,
    report: VerifyReport,
}

impl Verifier {
    pub fn new(
        spec: &VerifySpec,
        job: &JobSpec,
        seed: u64,
        files: &[Arc<File>],
        paths: &[PathBuf],
        regions: &[FileRegion],
        align: usize,
    ) -> Result<Self, String> {
        let block = spec.interval.unwrap_or(job.workload.bs[1].min()).max(1);
        let blocks_of = |r: &FileRegion| r.len / block;
        let total: u64 = regions.iter().map(blocks_of).sum();
        if total > MAX_TRACKED_BLOCKS {
            return Err(format!(
                "verify: {total} blocks of {block} bytes are too many to track \
                 (at most {MAX_TRACKED_BLOCKS}); use a larger verify_interval or a smaller size"
            ));
        }
        let checks_earlier_writes = !job.workload.rw.writes();
        let generations = match checks_earlier_writes {
            true => Vec::new(),
            false => regions
                .iter()
                .map(|r| vec![0; blocks_of(r) as usize])
                .collect(),
        };
        let read_len = (READ_CHUNK as u64 / block).max(1) * block;
        let read_buf = AlignedBuf::new(read_len as usize, align.max(1))
            .map_err(|e| format!("verify: cannot allocate the read-back buffer: {e}"))?;
        Ok(Self {
            spec: spec.clone(),
            codec: BlockCodec::new(spec, Writer::new(&job.name, seed)),
            block,
            regions: regions.to_vec(),
            generations,
            backlog: Vec::with_capacity(spec.backlog as usize),
            files: files.to_vec(),
            paths: paths.to_vec(),
            read_buf,
            scratch: vec![0; block as usize],
            report: VerifyReport {
                job: job.name.clone(),
                ..VerifyReport::default()
            },
        })
    }

    /// The write job runs with nothing written: `verify_only`.
    pub fn only(&self) -> bool {
        self.spec.only && !self.generations.is_empty()
    }

    /// Whether a verify pass runs when the job's I/O is done.
    pub fn verifies_at_end(&self) -> bool {
        self.spec.after_writes || self.spec.only || self.generations.is_empty()
    }

    /// Index of the block at `offset` of `file`: (region, block).
    #[inline]
    fn locate(&self, file: u32, offset: u64) -> Option<(usize, usize)> {
        let r = self.regions.iter().position(|r| r.file == file)?;
        let start = self.regions[r].start;
        let index = offset.checked_sub(start)? / self.block;
        Some((r, index as usize))
    }

    /// Stamp `buf` (a write of `buf.len()` bytes at `offset`) block by block with
    /// each block's next generation.
    #[inline]
    pub fn prepare_write(&mut self, buf: &mut [u8], file: u32, offset: u64) {
        let block = self.block as usize;
        for (i, chunk) in buf.chunks_exact_mut(block).enumerate() {
            let at = offset + (i * block) as u64;
            let generation = self.bump_generation(file, at);
            self.codec.write_block(chunk, at, generation);
        }
    }

    /// `verify_only`: note a write the job would have made.
    pub fn record_write(&mut self, file: u32, offset: u64, len: u32) {
        for i in 0..u64::from(len) / self.block {
            self.bump_generation(file, offset + i * self.block);
        }
    }

    #[inline]
    fn bump_generation(&mut self, file: u32, offset: u64) -> u32 {
        match self.locate(file, offset) {
            Some((r, i)) if i < self.generations[r].len() => {
                let generation = &mut self.generations[r][i];
                *generation = generation.wrapping_add(1).max(1);
                *generation
            }
            _ => 1,
        }
    }

    /// A write completed; with `verify_backlog` it waits to be read back.
    #[inline]
    pub fn note_completed(&mut self, file: u32, offset: u64, len: u32) {
        if self.spec.backlog > 0 {
            self.backlog.push(Written { file, offset, len });
        }
    }

    /// `verify_backlog` blocks are waiting: drain the queue and verify them.
    #[inline]
    pub fn backlog_due(&self) -> bool {
        self.spec.backlog > 0 && self.backlog.len() as u64 >= self.spec.backlog
    }

    /// Verify the writes waiting in the backlog; false when a bad block means stop.
    pub fn verify_backlog(&mut self) -> std::io::Result<bool> {
        let mut waiting = std::mem::take(&mut self.backlog);
        let mut keep_going = true;
        for w in waiting.drain(..) {
            keep_going = self.verify_range(w.file, w.offset, u64::from(w.len))?;
            if !keep_going {
                break;
            }
        }
        self.backlog = waiting;
        Ok(keep_going)
    }

    /// Verify every block the job wrote (or, reading only, every block of its regions).
    pub fn verify_all(&mut self, stop: &AtomicBool) -> std::io::Result<()> {
        for r in 0..self.regions.len() {
            let FileRegion {
                file, start, len, ..
            } = self.regions[r];
            let blocks = (len / self.block) as usize;
            let mut i = 0;
            while i < blocks {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                if !self.generations.is_empty() && self.generations[r][i] == 0 {
                    i += 1;
                    continue;
                }
                // A run of written blocks, read back in one transfer.
                let max_run = self.read_buf.len() / self.block as usize;
                let mut end = i + 1;
                while end < blocks
                    && end - i < max_run
                    && (self.generations.is_empty() || self.generations[r][end] != 0)
                {
                    end += 1;
                }
                let offset = start + i as u64 * self.block;
                if !self.verify_range(file, offset, (end - i) as u64 * self.block)? {
                    return Ok(());
                }
                i = end;
            }
        }
        Ok(())
    }

    /// Read `len` bytes at `offset` and check each block; false to stop (verify_fatal).
    fn verify_range(&mut self, file: u32, offset: u64, len: u64) -> std::io::Result<bool> {
        let len = len as usize;
        let mut done = 0;
        while done < len {
            let n = (len - done).min(self.read_buf.len());
            let at = offset + done as u64;
            let got = read_fully(&self.files[file as usize], &mut self.read_buf[..n], at)?;
            // A short read (the file shrank) is checked as zeros: reported, not skipped.
            self.read_buf[got..n].fill(0);
            for i in 0..n / self.block as usize {
                let b = self.block as usize;
                let block_offset = at + (i * b) as u64;
                let expected = self.expected_generation(file, block_offset);
                let block = &self.read_buf[i * b..(i + 1) * b];
                self.report.verified_blocks += 1;
                let checked =
                    self.codec
                        .check_block(block, block_offset, expected, &mut self.scratch);
                if let Err(mismatch) = checked {
                    self.record_bad(file, block_offset, i * b, expected, &mismatch);
                    if self.spec.fatal {
                        return Ok(false);
                    }
                }
            }
            done += n;
        }
        Ok(true)
    }

    fn expected_generation(&self, file: u32, offset: u64) -> Option<u32> {
        if self.generations.is_empty() {
            return None;
        }
        let (r, i) = self.locate(file, offset)?;
        self.generations[r].get(i).copied()
    }

    #[cold]
    fn record_bad(
        &mut self,
        file: u32,
        offset: u64,
        at_in_buf: usize,
        expected: Option<u32>,
        mismatch: &Mismatch,
    ) {
        self.report.bad_blocks_total += 1;
        let b = self.block as usize;
        let expected = expected.map(|g| header(&self.codec.expected_fields(offset, b, g)));
        if self.report.bad_blocks.len() >= MAX_LISTED_BAD_BLOCKS {
            return;
        }
        let path = &self.paths[file as usize];
        if self.spec.dump {
            let found = &self.read_buf[at_in_buf..at_in_buf + b];
            let expected_block = expected.map(|e| {
                let mut block = vec![0; b];
                self.codec.write_block(&mut block, offset, e.generation);
                block
            });
            dump(path, offset, found, expected_block.as_deref());
        }
        self.report.bad_blocks.push(BadBlock {
            file: path.display().to_string(),
            offset,
            len: self.block,
            fault: mismatch.fault.name().to_string(),
            message: mismatch.fault.describe(offset),
            expected,
            found: mismatch.found.as_ref().map(header),
        });
    }

    /// What the pass found; the one-line error when a block was bad.
    pub fn finish(self) -> (VerifyReport, Option<String>) {
        let error = self.report.bad_blocks.first().map(|first| {
            format!(
                "verify: {} bad of {} blocks checked in {}; first: {}",
                self.report.bad_blocks_total,
                self.report.verified_blocks,
                first.file,
                first.message
            )
        });
        (self.report, error)
    }
}

fn header(f: &HeaderFields) -> VerifyHeader {
    VerifyHeader {
        offset: f.offset,
        len: f.len,
        job: f.job,
        generation: f.generation,
        seed: f.seed,
    }
}

/// `pread` until `buf` is full or the file ends; bytes read.
fn read_fully(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// `verify_dump`: `<file>.<offset>.received` and `.expected` in the current directory.
fn dump(path: &std::path::Path, offset: u64, found: &[u8], expected: Option<&[u8]>) {
    let name = path
        .file_name()
        .map_or_else(|| "block".into(), |n| n.to_string_lossy().into_owned());
    let write = |suffix: &str, bytes: &[u8]| {
        let out = format!("{name}.{offset}.{suffix}");
        if let Err(e) = std::fs::write(&out, bytes) {
            eprintln!("iolens: verify_dump: cannot write {out}: {e}");
        }
    };
    write("received", found);
    if let Some(expected) = expected {
        write("expected", expected);
    }
}
