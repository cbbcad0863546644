//! A worker's data verification: stamp each written block, remember which
//! generation of each block it wrote and where each write began, then read the
//! writes back and check them.
//!
//! The generation and write maps are allocated before the start barrier; per
//! write the hot loop only fills the buffer and updates the maps. As fio reads
//! back its write log, the verifier hands out one read per logged write
//! (`next_read_back`) and the worker issues them through its engine and queue
//! like any other read; each is checked when it completes (`read_completed`).
//! A job that only reads checks its regions after its I/O with plain `pread`.

mod state;

pub(super) use state::VerifyState;

use super::ctx::OpenFile;
use crate::job::spec::{Ddir, JobSpec, TrimVerify, VerifySpec};
use crate::model::{BadBlock, VerifyReport};
use crate::workload::rng::{stream_rng, RngStream, WorkerRng};
use crate::workload::verify_header::{BlockCodec, Fault, Mismatch, Writer};
use crate::workload::{FileRegion, NextIo};
use iolens_sys::buf::AlignedBuf;
use rand::RngCore;
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bad blocks listed in the report (and dumped); the rest are only counted.
pub(super) const MAX_LISTED_BAD_BLOCKS: usize = 256;
/// Most verified blocks a worker tracks (4 bytes each: 256 MiB of map).
const MAX_TRACKED_BLOCKS: u64 = 1 << 26;
/// Read-back transfers at most this much at once.
const READ_CHUNK: usize = 1 << 20;
/// errno fio reports for a verify failure.
pub(super) const VERIFY_ERRNO: i32 = libc::EILSEQ;

/// A block written and completed, waiting for `verify_backlog`.
#[derive(Debug, Clone, Copy)]
struct Written {
    file: u32,
    offset: u64,
    len: u32,
}

/// A completed read's data, for the check: the I/O's buffer, of which the read
/// filled the first `got` bytes.
pub(super) struct ReadData<'b> {
    pub buf: &'b mut [u8],
    pub got: usize,
}

/// Which logged writes the reads handed out now read back.
#[derive(Debug, Clone, Copy)]
enum Reading {
    /// None: a read that completes is one of the job's own.
    Idle,
    /// The pass after the writes: every logged write, from this region and block on.
    Log { region: usize, block: usize },
    /// A `verify_backlog` round: the backlog's writes from `next` up to `end`.
    Backlog { next: usize, end: usize },
}

pub(super) struct Verifier {
    spec: VerifySpec,
    codec: BlockCodec,
    block: u64,
    /// Per region: the generation last written to each block; 0 = never written.
    /// Empty when checking data an earlier job wrote (a job that only reads).
    generations: Vec<Vec<u32>>,
    /// The writes waiting to be read back; empty with `generations`.
    writes: WriteLog,
    /// A job that only reads: per region, the blocks its reads covered (as fio,
    /// it checks what it read); empty in a job that writes.
    read_blocks: Vec<Vec<bool>>,
    backlog: Vec<Written>,
    reading: Reading,
    /// `verify_fatal` met a bad block: nothing more is read back or checked.
    stopped: bool,
    /// The worker's files; the generations and write log go by their index.
    files: Vec<OpenFile>,
    /// A job that only reads: the buffer its check of the regions reads into.
    read_buf: Option<AlignedBuf>,
    scratch: Vec<u8>,
    report: VerifyReport,
    /// `verify_state_load`: what the writer finished; only that is checked.
    loaded: Option<VerifyState>,
    /// fio's number of the worker across the run (it names the state file).
    worker_number: u64,
    seed: u64,
    /// Writes completed (or replayed) and their bytes: the state saved at the end.
    done_writes: u64,
    done_bytes: u64,
    /// `trim_percentage`: the written blocks picked for trimming, and those trimmed.
    trims: Option<Trims>,
}

/// fio's trims of verified blocks, per worker.
struct Trims {
    spec: TrimVerify,
    rng: WorkerRng,
    /// Writes picked for trimming, oldest first.
    picked: VecDeque<Written>,
    /// Writes logged so far: every `backlog` of them a round of trims starts.
    logged: u64,
    /// `logged` when the last round started (one round per count).
    round_at: Option<u64>,
    /// Trims left in the current round.
    left: u64,
    /// Per region and block: trimmed since it was last written.
    trimmed: Vec<Vec<bool>>,
}

/// Who a verifier works for: the worker's seed and number in the run, and the
/// state an earlier writer saved (`verify_state_load`).
pub(super) struct VerifierFor {
    pub seed: u64,
    pub worker_number: u64,
    pub loaded: Option<VerifyState>,
}

impl Verifier {
    pub(super) fn new(
        spec: &VerifySpec,
        job: &JobSpec,
        VerifierFor {
            seed,
            worker_number,
            loaded,
        }: VerifierFor,
        files: &[OpenFile],
        align: usize,
    ) -> Result<Self, String> {
        let block = spec.interval.unwrap_or(job.workload.bs[1].min()).max(1);
        let blocks_of = |f: &OpenFile| f.region.len / block;
        let total: u64 = files.iter().map(blocks_of).sum();
        if total > MAX_TRACKED_BLOCKS {
            return Err(format!(
                "verify: {total} blocks of {block} bytes are too many to track \
                 (at most {MAX_TRACKED_BLOCKS}); use a larger verify_interval or a smaller size"
            ));
        }
        let checks_earlier_writes = !job.workload.rw.writes();
        let (generations, read_blocks) = match checks_earlier_writes {
            true => (
                Vec::new(),
                files
                    .iter()
                    .map(|f| vec![false; blocks_of(f) as usize])
                    .collect(),
            ),
            false => (
                files
                    .iter()
                    .map(|f| vec![0; blocks_of(f) as usize])
                    .collect(),
                Vec::new(),
            ),
        };
        // fio compares the writer's seed only in jobs that read and write
        // without verify_backlog (and not in verify_only), unless verify_header_seed says.
        let rw = job.workload.rw;
        let codec = BlockCodec::new(spec, Writer::new(&job.name, seed));
        let by_default = rw.reads() && rw.writes() && spec.backlog == 0 && !spec.only;
        let codec = match spec.header_seed.unwrap_or(by_default) {
            true => codec,
            false => codec.accepting_any_writer(),
        };
        let largest = job
            .workload
            .bs
            .iter()
            .map(|b| b.max())
            .max()
            .unwrap_or(block);
        let writes = WriteLog::new(block, largest, &generations);
        let trims = spec
            .trim
            .filter(|_| !generations.is_empty())
            .map(|trim| Trims {
                spec: trim,
                rng: stream_rng(seed, RngStream::VerifyTrims),
                picked: VecDeque::with_capacity(trim.backlog as usize),
                logged: 0,
                round_at: None,
                left: 0,
                trimmed: generations.iter().map(|g| vec![false; g.len()]).collect(),
            });
        let read_len = (READ_CHUNK as u64 / block).max(1) * block;
        let read_buf = checks_earlier_writes
            .then(|| AlignedBuf::new(read_len as usize, align.max(1)))
            .transpose()
            .map_err(|e| format!("verify: cannot allocate the read-back buffer: {e}"))?;
        Ok(Self {
            spec: spec.clone(),
            codec,
            block,
            generations,
            writes,
            read_blocks,
            backlog: Vec::with_capacity(spec.backlog as usize),
            reading: Reading::Idle,
            stopped: false,
            files: files.to_vec(),
            read_buf,
            scratch: vec![0; block as usize],
            report: VerifyReport {
                job: job.name.clone(),
                ..VerifyReport::default()
            },
            loaded,
            worker_number,
            seed,
            done_writes: 0,
            done_bytes: 0,
            trims,
        })
    }

    /// The write job runs with nothing written: `verify_only`.
    pub(super) fn only(&self) -> bool {
        self.spec.only && self.reads_back_writes()
    }

    /// The job writes: its pass reads its writes back (else it checks what an
    /// earlier job wrote, outside the job's I/O).
    pub(super) fn reads_back_writes(&self) -> bool {
        !self.generations.is_empty()
    }

    /// Whether a verify pass runs when the job's I/O is done.
    pub(super) fn verifies_at_end(&self) -> bool {
        self.spec.after_writes || self.spec.only || self.generations.is_empty()
    }

    /// Index of the block at `offset` of `file`: (region, block).
    #[inline]
    fn locate(&self, file: u32, offset: u64) -> Option<(usize, usize)> {
        let r = self.files.iter().position(|f| f.region.file == file)?;
        let start = self.files[r].region.start;
        let index = offset.checked_sub(start)? / self.block;
        Some((r, index as usize))
    }

    /// Stamp `buf` (a write of `buf.len()` bytes at `offset`) block by block with
    /// each block's next generation.
    #[inline]
    pub(super) fn prepare_write(&mut self, buf: &mut [u8], file: u32, offset: u64) {
        let block = self.block as usize;
        for (i, chunk) in buf.chunks_exact_mut(block).enumerate() {
            let at = offset + (i * block) as u64;
            let generation = self.bump_generation(file, at);
            self.codec.write_block(chunk, at, generation);
        }
        self.log_write(file, offset, buf.len() as u32);
        if self.trims.is_some() {
            self.pick_for_trim(file, offset, buf.len() as u32);
        }
    }

    /// `trim_percentage`: the write's blocks are not trimmed any more; the
    /// write joins the trim list by chance, as fio picks it when logging it.
    #[cold]
    fn pick_for_trim(&mut self, file: u32, offset: u64, len: u32) {
        let located = self.locate(file, offset);
        let span = u64::from(len).div_ceil(self.block) as usize;
        let Some(t) = self.trims.as_mut() else {
            return;
        };
        if let Some((r, i)) = located {
            let blocks = &mut t.trimmed[r];
            let end = (i + span).min(blocks.len());
            blocks[i.min(end)..end].fill(false);
        }
        t.logged += 1;
        if t.rng.next_u64() % 100 < u64::from(t.spec.percentage) {
            t.picked.push_back(Written { file, offset, len });
        }
    }

    /// The next trim of a picked write, when a round is due (every
    /// `trim_backlog` writes, `trim_backlog_batch` trims in a row, as fio).
    #[inline]
    pub(super) fn next_trim(&mut self) -> Option<NextIo> {
        let t = self.trims.as_mut()?;
        if t.picked.is_empty() {
            t.left = 0;
            return None;
        }
        if t.left > 0 {
            t.left -= 1;
        } else if t.logged % t.spec.backlog == 0 && t.round_at != Some(t.logged) {
            t.round_at = Some(t.logged);
            t.left = t.spec.batch - 1;
        } else {
            return None;
        }
        let w = t.picked.pop_front()?;
        self.mark_trimmed(w);
        Some(NextIo {
            ddir: Ddir::Trim,
            file: w.file,
            offset: w.offset,
            len: w.len,
        })
    }

    /// A picked write is trimmed: its blocks must read back as zeros
    /// (`trim_verify_zero`), or it is not read back at all.
    #[cold]
    fn mark_trimmed(&mut self, w: Written) {
        let Some((r, i)) = self.locate(w.file, w.offset) else {
            return;
        };
        let span = u64::from(w.len).div_ceil(self.block) as usize;
        let Some(t) = self.trims.as_mut() else {
            return;
        };
        if t.spec.zero {
            let blocks = &mut t.trimmed[r];
            let end = (i + span).min(blocks.len());
            blocks[i.min(end)..end].fill(true);
        } else {
            self.writes.take_if(r, i, w.len);
        }
    }

    fn is_trimmed(&self, file: u32, offset: u64) -> bool {
        let Some(t) = &self.trims else {
            return false;
        };
        self.locate(file, offset)
            .and_then(|(r, i)| t.trimmed[r].get(i).copied())
            .unwrap_or(false)
    }

    /// `verify_only`: note a write the job would have made; false when the
    /// loaded state says the writer never finished it (the replay ends there, as in fio).
    pub(super) fn record_write(&mut self, file: u32, offset: u64, len: u32) -> bool {
        if self
            .loaded
            .as_ref()
            .is_some_and(|s| self.done_writes >= s.writes)
        {
            return false;
        }
        for i in 0..u64::from(len) / self.block {
            self.bump_generation(file, offset + i * self.block);
        }
        self.log_write(file, offset, len);
        self.count_write(len);
        true
    }

    fn count_write(&mut self, len: u32) {
        self.done_writes += 1;
        self.done_bytes += u64::from(len);
    }

    /// Log a write for reading back.
    #[inline]
    fn log_write(&mut self, file: u32, offset: u64, len: u32) {
        if let Some((r, i)) = self.locate(file, offset) {
            self.writes.log(r, i, len);
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
    pub(super) fn note_completed(&mut self, file: u32, offset: u64, len: u32) {
        self.count_write(len);
        // As in fio, do_verify=0 keeps no backlog either.
        if self.spec.backlog > 0 && self.spec.after_writes {
            self.backlog.push(Written { file, offset, len });
        }
    }

    /// A read completed: during a read-back, check the blocks `data` gives;
    /// else, in a job that only reads, note them for the check at the end.
    #[inline]
    pub(super) fn read_completed<'b>(
        &mut self,
        file: u32,
        offset: u64,
        len: u32,
        data: impl FnOnce() -> Option<ReadData<'b>>,
    ) {
        if let Reading::Idle = self.reading {
            self.note_read(file, offset, len);
        } else if let Some(data) = data() {
            self.check_read_back(file, offset, data);
        }
    }

    /// A read of a job that only reads completed: its blocks are checked at the end.
    #[inline]
    fn note_read(&mut self, file: u32, offset: u64, len: u32) {
        let Some((r, first)) = self.locate(file, offset) else {
            return;
        };
        let last = (offset + u64::from(len.max(1)) - 1 - self.files[r].region.start) / self.block;
        if let Some(blocks) = self.read_blocks.get_mut(r) {
            let end = (last as usize + 1).min(blocks.len());
            if let Some(covered) = blocks.get_mut(first..end) {
                covered.fill(true);
            }
        }
    }

    /// `verify_backlog` blocks are waiting: drain the queue and verify them.
    #[inline]
    pub(super) fn backlog_due(&self) -> bool {
        self.spec.backlog > 0 && self.backlog.len() as u64 >= self.spec.backlog
    }

    /// Read back the oldest `verify_backlog_batch` writes waiting in the backlog
    /// that are still logged (a later overlapping write replaced the others);
    /// the rest wait for the next round.
    pub(super) fn start_backlog_round(&mut self) {
        let end = (self.spec.backlog_batch as usize).min(self.backlog.len());
        self.reading = Reading::Backlog { next: 0, end };
    }

    /// Read back every logged write, in file and offset order; the log is
    /// empty afterwards (the next pass logs its own writes).
    pub(super) fn start_pass(&mut self) {
        self.reading = Reading::Log {
            region: 0,
            block: 0,
        };
    }

    /// The next read of the read-back, now unlogged; None when it is over
    /// (or `verify_fatal` stopped it).
    pub(super) fn next_read_back(&mut self) -> Option<NextIo> {
        if self.stopped {
            return None;
        }
        let (file, offset, len) = match self.reading {
            Reading::Idle => None,
            Reading::Log { region, block } => self.next_logged(region, block),
            Reading::Backlog { next, end } => self.next_in_backlog(next, end),
        }?;
        Some(NextIo {
            ddir: Ddir::Read,
            file,
            offset,
            len,
        })
    }

    fn next_logged(&mut self, mut r: usize, mut i: usize) -> Option<(u32, u64, u32)> {
        while r < self.generations.len() {
            if i >= self.generations[r].len() {
                r += 1;
                i = 0;
                continue;
            }
            let len = self.writes.take(r, i);
            i += 1;
            if len > 0 {
                self.reading = Reading::Log {
                    region: r,
                    block: i,
                };
                let FileRegion { file, start, .. } = self.files[r].region;
                return Some((file, start + (i - 1) as u64 * self.block, len));
            }
        }
        self.reading = Reading::Log {
            region: r,
            block: i,
        };
        None
    }

    fn next_in_backlog(&mut self, mut next: usize, end: usize) -> Option<(u32, u64, u32)> {
        let mut found = None;
        while found.is_none() && next < end {
            let w = self.backlog[next];
            next += 1;
            let logged = self
                .locate(w.file, w.offset)
                .is_some_and(|(r, i)| self.writes.take_if(r, i, w.len));
            found = logged.then_some((w.file, w.offset, w.len));
        }
        self.reading = Reading::Backlog { next, end };
        found
    }

    /// Every read handed out completed: the read-back is over; a backlog
    /// round's writes leave the backlog.
    pub(super) fn end_read_back(&mut self) {
        if let Reading::Backlog { end, .. } = self.reading {
            self.backlog.drain(..end);
        }
        self.reading = Reading::Idle;
    }

    /// `verify_fatal` stopped the read-back at a bad block.
    pub(super) fn stopped(&self) -> bool {
        self.stopped
    }

    /// The worker's reads are the read-back's now (a failed one is the read-back's failure).
    pub(super) fn reading_back(&self) -> bool {
        !matches!(self.reading, Reading::Idle)
    }

    /// Check a logged write read back; after a `verify_fatal` stop the reads
    /// still in flight are counted, not checked.
    fn check_read_back(&mut self, file: u32, offset: u64, ReadData { buf, got }: ReadData<'_>) {
        self.report.read_back_ios += 1;
        self.report.read_back_bytes += buf.len() as u64;
        if self.stopped {
            return;
        }
        // A short read (the file shrank) is checked as zeros: reported, not skipped.
        if let Some(missing) = buf.get_mut(got..) {
            missing.fill(0);
        }
        self.stopped = !self.check_blocks(file, offset, buf);
    }

    /// A job that only reads: check every block of its regions that its reads
    /// covered, written by anyone (with a loaded state, only as many bytes from
    /// the start as the writer finished).
    pub(super) fn verify_regions(&mut self, stop: &AtomicBool) -> std::io::Result<()> {
        let Some(mut buf) = self.read_buf.take() else {
            return Ok(());
        };
        let checked = self.verify_read_blocks(stop, &mut buf);
        self.read_buf = Some(buf);
        checked
    }

    fn verify_read_blocks(&mut self, stop: &AtomicBool, buf: &mut [u8]) -> std::io::Result<()> {
        let mut left = self.loaded.as_ref().map_or(u64::MAX, |s| s.bytes);
        let max_run = buf.len() / self.block as usize;
        for r in 0..self.files.len() {
            let FileRegion {
                file, start, len, ..
            } = self.files[r].region;
            let len = len.min(left);
            left -= len;
            let blocks = (len / self.block) as usize;
            let mut i = 0;
            while i < blocks {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                if !self.read_blocks[r][i] {
                    i += 1;
                    continue;
                }
                // Up to a buffer's worth of read blocks in one transfer.
                let end = (i..(i + max_run).min(blocks))
                    .find(|&j| !self.read_blocks[r][j])
                    .unwrap_or((i + max_run).min(blocks));
                let offset = start + i as u64 * self.block;
                let run = &mut buf[..(end - i) * self.block as usize];
                let got = read_fully(&self.files[file as usize].file, run, offset)?;
                run[got..].fill(0);
                if !self.check_blocks(file, offset, run) {
                    return Ok(());
                }
                i = end;
            }
        }
        Ok(())
    }

    /// Check each block of `buf`, read at `offset` of `file`; false to stop (verify_fatal).
    fn check_blocks(&mut self, file: u32, offset: u64, buf: &[u8]) -> bool {
        let b = self.block as usize;
        for (i, block) in buf.chunks_exact(b).enumerate() {
            let block_offset = offset + (i * b) as u64;
            let expected = self.expected_generation(file, block_offset);
            self.report.verified_blocks += 1;
            let checked = match self.is_trimmed(file, block_offset) {
                true => match block.iter().position(|&byte| byte != 0) {
                    None => Ok(()),
                    Some(first) => Err(Mismatch {
                        fault: Fault::TrimmedNotZero {
                            first_byte: first as u32,
                        },
                        found: None,
                    }),
                },
                false => self
                    .codec
                    .check_block(block, block_offset, expected, &mut self.scratch),
            };
            if let Err(mismatch) = checked {
                self.record_bad(file, block_offset, block, expected, &mismatch);
                if self.spec.fatal {
                    return false;
                }
            }
        }
        true
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
        found: &[u8],
        expected: Option<u32>,
        mismatch: &Mismatch,
    ) {
        self.report.bad_blocks_total += 1;
        let b = self.block as usize;
        let expected = expected.map(|g| self.codec.expected_fields(offset, b, g));
        if self.report.bad_blocks.len() >= MAX_LISTED_BAD_BLOCKS {
            return;
        }
        let path = &self.files[file as usize].path;
        if self.spec.dump {
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
            found: mismatch.found,
        });
    }

    /// `verify_state_save`: a job that writes saves how far its writes got. As
    /// in fio, a state that cannot be written fails nothing: the line is a note.
    pub(super) fn save_state(&self) -> Option<String> {
        if !self.spec.state_save || !self.reads_back_writes() {
            return None;
        }
        let state = VerifyState::new(
            &self.report.job,
            self.seed,
            self.done_writes,
            self.done_bytes,
        );
        state
            .save(&self.spec, self.worker_number)
            .err()
            .map(|e| e.to_string())
    }

    /// What the pass found; the one-line error when a block was bad.
    pub(super) fn finish(self) -> (VerifyReport, Option<String>) {
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

/// fio's write log, kept as a map: per region and block, the length in bytes of
/// the logged write that begins there (0: none). Like fio's log, a write that
/// overlaps earlier logged ones drops them, so logged writes never overlap.
struct WriteLog {
    block: u64,
    /// The most blocks one write covers (the job's largest block size).
    max_span: usize,
    starts: Vec<Vec<u32>>,
}

impl WriteLog {
    /// An empty log with a map shaped like `generations`.
    fn new(block: u64, largest_write: u64, generations: &[Vec<u32>]) -> Self {
        WriteLog {
            block,
            max_span: largest_write.div_ceil(block).max(1) as usize,
            starts: generations.iter().map(|g| vec![0; g.len()]).collect(),
        }
    }

    fn span(&self, len: u32) -> usize {
        u64::from(len).div_ceil(self.block) as usize
    }

    /// Log a write of `len` bytes at block `i` of region `r`.
    #[inline]
    fn log(&mut self, r: usize, i: usize, len: u32) {
        let blocks = self.starts[r].len();
        if i >= blocks {
            return;
        }
        let end = (i + self.span(len)).min(blocks);
        self.starts[r][i + 1..end].fill(0);
        let reach = i.saturating_sub(self.max_span - 1);
        let starts = &self.starts[r];
        if let Some(s) = (reach..i).rev().find(|&s| s + self.span(starts[s]) > i) {
            self.starts[r][s] = 0;
        }
        self.starts[r][i] = len;
    }

    /// The length of the write logged at block `i` of region `r` (0: none), now unlogged.
    fn take(&mut self, r: usize, i: usize) -> u32 {
        std::mem::take(&mut self.starts[r][i])
    }

    /// Unlog the write of `len` bytes at block `i` of region `r`; false when it
    /// is no longer logged (read back already, or replaced by a later write).
    fn take_if(&mut self, r: usize, i: usize, len: u32) -> bool {
        let logged = self.starts.get(r).and_then(|s| s.get(i)) == Some(&len);
        if logged {
            self.starts[r][i] = 0;
        }
        logged
    }
}

/// Drop the cached pages of a worker's region before its writes are read back,
/// as fio's invalidate does: BLKFLSBUF on a block device (which writes dirty
/// pages back first), fadvise DONTNEED on a file (which keeps dirty pages: fio
/// writes nothing back, so those are read from memory). As in fio, a failure
/// only costs a note: the read-back goes on.
pub(super) fn drop_cached_pages(f: &OpenFile) {
    if let Err(e) = f.drop_cached_region() {
        crate::console::warn(format_args!(
            "verify: cannot drop the cached pages of {}: {}; the read-back may read them from memory",
            f.path.display(),
            crate::errno::describe(&e)
        ));
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
            crate::console::warn(format_args!("verify_dump: cannot write {out}: {e}"));
        }
    };
    write("received", found);
    if let Some(expected) = expected {
        write("expected", expected);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Arc;

    /// A verifier of a 64 KiB write job in 4 KiB blocks with `options`; its one
    /// file is named /data/f (the handle is /dev/null: nothing is read or written).
    fn verifier(options: &[&str]) -> Verifier {
        let args: Vec<&str> = ["--name=t", "--filename=/data/f", "--size=64k", "--bs=4k"]
            .into_iter()
            .chain(["--rw=write", "--verify=crc32c"])
            .chain(options.iter().copied())
            .collect();
        let job = crate::testutil::job_spec(&args);
        let files = [OpenFile {
            file: Arc::new(File::open("/dev/null").expect("open /dev/null")),
            size: 64 << 10,
            path: PathBuf::from("/data/f"),
            region: FileRegion::new(0, 0, 64 << 10),
        }];
        let owner = VerifierFor {
            seed: 1,
            worker_number: 1,
            loaded: None,
        };
        let spec = job.verify.clone().expect("a verify spec");
        Verifier::new(&spec, &job, owner, &files, 4096).expect("a verifier")
    }

    /// Write a block at `offset` as the worker would; the bytes written.
    fn write(v: &mut Verifier, offset: u64) -> Vec<u8> {
        let mut block = vec![0; 4096];
        v.prepare_write(&mut block, 0, offset);
        v.note_completed(0, offset, 4096);
        block
    }

    /// The offsets of the reads the read-back hands out until it is over.
    fn read_back_offsets(v: &mut Verifier) -> Vec<u64> {
        std::iter::from_fn(|| v.next_read_back())
            .map(|io| {
                assert_eq!((io.ddir, io.len), (Ddir::Read, 4096), "{io:?}");
                io.offset
            })
            .collect()
    }

    /// A read of the block at `offset` completes holding `bytes`, of which `got` were read.
    fn complete(v: &mut Verifier, offset: u64, mut bytes: Vec<u8>, got: usize) {
        v.read_completed(0, offset, 4096, || {
            Some(ReadData {
                buf: &mut bytes,
                got,
            })
        });
    }

    #[test]
    fn a_pass_reads_back_each_logged_write_once_in_offset_order() {
        let mut v = verifier(&[]);
        for offset in [8192, 0, 8192, 16384] {
            write(&mut v, offset);
        }
        v.start_pass();
        assert_eq!(read_back_offsets(&mut v), [0, 8192, 16384]);
        v.end_read_back();
        v.start_pass();
        assert_eq!(
            read_back_offsets(&mut v),
            Vec::<u64>::new(),
            "expected the log empty after a pass"
        );
        v.end_read_back();
    }

    #[test]
    fn a_backlog_round_reads_back_a_batch_and_leaves_the_rest_waiting() {
        let mut v = verifier(&["--verify_backlog=3", "--verify_backlog_batch=2"]);
        for offset in [0, 4096, 8192] {
            write(&mut v, offset);
        }
        assert!(v.backlog_due(), "expected 3 writes to make a round due");
        v.start_backlog_round();
        assert_eq!(read_back_offsets(&mut v), [0, 4096]);
        v.end_read_back();
        assert!(!v.backlog_due(), "expected one write left waiting");
        v.start_pass();
        assert_eq!(
            read_back_offsets(&mut v),
            [8192],
            "expected the pass to read back only what no round did"
        );
        v.end_read_back();
    }

    #[test]
    fn each_read_back_is_checked_as_it_completes_and_verify_fatal_stops_the_rest() {
        let mut v = verifier(&["--verify_fatal=1"]);
        let blocks: Vec<Vec<u8>> = [0, 4096, 8192].map(|o| write(&mut v, o)).into();
        v.start_pass();
        let reads = read_back_offsets(&mut v);
        assert_eq!(reads, [0, 4096, 8192]);
        complete(&mut v, 0, blocks[0].clone(), 4096);
        assert!(!v.stopped(), "expected a block read back intact to pass");
        // a short read: the missing bytes are checked as zeros
        complete(&mut v, 4096, blocks[1].clone(), 0);
        assert!(
            v.stopped(),
            "expected verify_fatal to stop at the bad block"
        );
        complete(&mut v, 8192, vec![0xee; 4096], 4096);
        v.end_read_back();
        let (report, error) = v.finish();
        assert_eq!(
            (report.read_back_ios, report.verified_blocks),
            (3, 2),
            "expected the read in flight after the stop counted, not checked"
        );
        assert_eq!(report.bad_blocks_total, 1);
        assert_eq!(report.bad_blocks[0].offset, 4096);
        let error = error.expect("a verify error");
        assert!(
            error.starts_with("verify: 1 bad of 2 blocks checked in /data/f; first: "),
            "{error}"
        );
    }

    /// The logged writes as (block, length in blocks).
    fn logged(log: &WriteLog) -> Vec<(usize, u32)> {
        let starts = log.starts[0].iter().enumerate();
        starts
            .filter(|(_, &len)| len > 0)
            .map(|(i, &len)| (i, len / 4096))
            .collect()
    }

    #[test]
    fn overlapping_writes_replace_the_earlier_ones_whole() {
        let mut log = WriteLog::new(4096, 4 * 4096, &[vec![0; 16]]);
        log.log(0, 0, 4 * 4096);
        log.log(0, 4, 2 * 4096);
        log.log(0, 8, 4096);
        assert_eq!(
            logged(&log),
            [(0, 4), (4, 2), (8, 1)],
            "three separate writes"
        );
        // Overlaps the tail of the first and all of the second: both are dropped,
        // as fio's write log drops every earlier write a new one overlaps.
        log.log(0, 3, 3 * 4096);
        assert_eq!(
            logged(&log),
            [(3, 3), (8, 1)],
            "the overlapped writes must go"
        );
        log.log(0, 8, 4096);
        assert_eq!(
            logged(&log),
            [(3, 3), (8, 1)],
            "a rewrite of a block is logged once"
        );
        assert_eq!(log.take(0, 3), 3 * 4096);
        assert!(
            !log.take_if(0, 3, 3 * 4096),
            "a write read back is not logged any more"
        );
        assert!(
            !log.take_if(0, 8, 2 * 4096),
            "another length is another write"
        );
        assert!(log.take_if(0, 8, 4096));
        assert_eq!(logged(&log), [], "everything was read back");
    }
}
