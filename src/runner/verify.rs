//! A worker's data verification: stamp each written block, remember which
//! generation of each block it wrote and where each write began, then read the
//! writes back and check them.
//!
//! The generation and write maps are allocated before the start barrier; per
//! write the hot loop only fills the buffer and updates the maps. Read-back
//! uses plain `pread` into one aligned buffer, one read per logged write, as
//! fio reads back its write log: each read is handed to the worker, which
//! counts it among the job's reads as fio does (`verify_backlog` reads inside
//! the run, the rest in the pass after the writes).

mod state;

pub use state::VerifyState;

use super::ctx::OpenFile;
use crate::job::spec::{Ddir, JobSpec, TrimVerify, VerifySpec};
use crate::model::{BadBlock, VerifyReport};
use crate::workload::pacing::Clock;
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

/// Where the read-back of a logged write goes: the worker's clock times it,
/// `record(bytes, nanoseconds)` counts it.
pub struct ReadBack<'a, C: Clock> {
    pub clock: &'a C,
    pub record: &'a mut dyn FnMut(u64, u64),
}

pub struct Verifier {
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
    /// The worker's files; the generations and write log go by their index.
    files: Vec<OpenFile>,
    read_buf: AlignedBuf,
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
pub struct VerifierFor {
    pub seed: u64,
    pub worker_number: u64,
    pub loaded: Option<VerifyState>,
}

impl Verifier {
    pub fn new(
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
        let read_buf = AlignedBuf::new(read_len as usize, align.max(1))
            .map_err(|e| format!("verify: cannot allocate the read-back buffer: {e}"))?;
        Ok(Self {
            spec: spec.clone(),
            codec,
            block,
            generations,
            writes,
            read_blocks,
            backlog: Vec::with_capacity(spec.backlog as usize),
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
    pub fn only(&self) -> bool {
        self.spec.only && self.reads_back_writes()
    }

    /// The job writes: its pass reads its writes back (else it checks what an
    /// earlier job wrote, outside the job's I/O).
    pub fn reads_back_writes(&self) -> bool {
        !self.generations.is_empty()
    }

    /// Whether a verify pass runs when the job's I/O is done.
    pub fn verifies_at_end(&self) -> bool {
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
    pub fn prepare_write(&mut self, buf: &mut [u8], file: u32, offset: u64) {
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
    pub fn next_trim(&mut self) -> Option<NextIo> {
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
    pub fn record_write(&mut self, file: u32, offset: u64, len: u32) -> bool {
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
    pub fn note_completed(&mut self, file: u32, offset: u64, len: u32) {
        self.count_write(len);
        // As in fio, do_verify=0 keeps no backlog either.
        if self.spec.backlog > 0 && self.spec.after_writes {
            self.backlog.push(Written { file, offset, len });
        }
    }

    /// A read of a job that only reads completed: its blocks are checked at the end.
    #[inline]
    pub fn note_read(&mut self, file: u32, offset: u64, len: u32) {
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
    pub fn backlog_due(&self) -> bool {
        self.spec.backlog > 0 && self.backlog.len() as u64 >= self.spec.backlog
    }

    /// Verify the oldest `verify_backlog_batch` writes waiting in the backlog that
    /// are still logged (a later overlapping write replaced the others); the
    /// rest wait for the next round. False when a bad block means stop.
    pub fn verify_backlog(
        &mut self,
        reads: &mut ReadBack<'_, impl Clock>,
    ) -> std::io::Result<bool> {
        let mut waiting = std::mem::take(&mut self.backlog);
        let mut keep_going = true;
        let batch = (self.spec.backlog_batch as usize).min(waiting.len());
        for w in waiting.drain(..batch) {
            let Some((r, i)) = self.locate(w.file, w.offset) else {
                continue;
            };
            if !self.writes.take_if(r, i, w.len) {
                continue;
            }
            keep_going = self.read_back(w.file, w.offset, w.len, reads)?;
            if !keep_going {
                break;
            }
        }
        self.backlog = waiting;
        Ok(keep_going)
    }

    /// Read back every logged write, one read each, in file and offset order
    /// (after dropping the regions' clean cached pages);
    /// the log is empty afterwards (the next pass logs its own writes).
    /// Reading only, check every block of the regions instead (those reads
    /// check the job's data, they are not I/O of the job).
    pub fn verify_all(
        &mut self,
        stop: &AtomicBool,
        reads: &mut ReadBack<'_, impl Clock>,
    ) -> std::io::Result<()> {
        if self.generations.is_empty() {
            return self.verify_regions(stop, reads.clock);
        }
        // As fio: drop the regions' cached pages first (fio writes nothing back
        // before, so pages still dirty stay and are read from memory).
        for f in &self.files {
            iolens_sys::fd::fadvise_dontneed(f.file.as_ref(), f.region.start, f.region.len)?;
        }
        for r in 0..self.files.len() {
            let FileRegion { file, start, .. } = self.files[r].region;
            for i in 0..self.generations[r].len() {
                let len = self.writes.take(r, i);
                if len == 0 {
                    continue;
                }
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let offset = start + i as u64 * self.block;
                if !self.read_back(file, offset, len, reads)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Read back one logged write and hand the read to `reads`; false to stop.
    fn read_back(
        &mut self,
        file: u32,
        offset: u64,
        len: u32,
        reads: &mut ReadBack<'_, impl Clock>,
    ) -> std::io::Result<bool> {
        let mut read_ns = 0;
        let keep_going =
            self.verify_range(file, offset, u64::from(len), (reads.clock, &mut read_ns))?;
        (reads.record)(u64::from(len), read_ns);
        self.report.read_back_ios += 1;
        self.report.read_back_bytes += u64::from(len);
        Ok(keep_going)
    }

    /// A job that only reads: check every block of its regions that its reads
    /// covered, written by anyone (with a loaded state, only as many bytes from
    /// the start as the writer finished).
    fn verify_regions(&mut self, stop: &AtomicBool, clock: &impl Clock) -> std::io::Result<()> {
        let mut left = self.loaded.as_ref().map_or(u64::MAX, |s| s.bytes);
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
                let max_run = self.read_buf.len() / self.block as usize;
                let end = (i..(i + max_run).min(blocks))
                    .find(|&j| !self.read_blocks[r][j])
                    .unwrap_or((i + max_run).min(blocks));
                let offset = start + i as u64 * self.block;
                let len = (end - i) as u64 * self.block;
                if !self.verify_range(file, offset, len, (clock, &mut 0))? {
                    return Ok(());
                }
                i = end;
            }
        }
        Ok(())
    }

    /// Read `len` bytes at `offset` and check each block; false to stop (verify_fatal).
    /// `read_ns` adds up the time spent reading (the checks are not timed, as in fio).
    fn verify_range(
        &mut self,
        file: u32,
        offset: u64,
        len: u64,
        (clock, read_ns): (&impl Clock, &mut u64),
    ) -> std::io::Result<bool> {
        let len = len as usize;
        let mut done = 0;
        while done < len {
            let n = (len - done).min(self.read_buf.len());
            let at = offset + done as u64;
            let start_ns = clock.now_ns();
            let got = read_fully(&self.files[file as usize].file, &mut self.read_buf[..n], at)?;
            *read_ns += clock.now_ns() - start_ns;
            // A short read (the file shrank) is checked as zeros: reported, not skipped.
            self.read_buf[got..n].fill(0);
            for i in 0..n / self.block as usize {
                let b = self.block as usize;
                let block_offset = at + (i * b) as u64;
                let expected = self.expected_generation(file, block_offset);
                let block = &self.read_buf[i * b..(i + 1) * b];
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
                    false => {
                        self.codec
                            .check_block(block, block_offset, expected, &mut self.scratch)
                    }
                };
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
        let expected = expected.map(|g| self.codec.expected_fields(offset, b, g));
        if self.report.bad_blocks.len() >= MAX_LISTED_BAD_BLOCKS {
            return;
        }
        let path = &self.files[file as usize].path;
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
            found: mismatch.found,
        });
    }

    /// `verify_state_save`: a job that writes saves how far its writes got. As
    /// in fio, a state that cannot be written fails nothing: the line is a note.
    pub fn save_state(&self) -> Option<String> {
        if !self.spec.state_save || !self.reads_back_writes() {
            return None;
        }
        let state = VerifyState::new(
            &self.report.job,
            self.seed,
            self.done_writes,
            self.done_bytes,
        );
        state.save(&self.spec, self.worker_number).err()
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

#[cfg(test)]
mod tests {
    use super::*;

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
