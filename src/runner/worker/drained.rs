//! What the worker does while its queue is drained: the syncs of `fsync=N` /
//! `fdatasync=N` / `end_fsync`, `verify_backlog`, and the verify passes (after
//! each pass of `loops`, at the end, or the replay of `verify_only`).

use super::Worker;
use crate::engine::Engine;
use crate::job::spec::Ddir;
use crate::model::VerifyReport;
use crate::runner::result::IoFailure;
use crate::runner::verify::{drop_cached_pages, Verifier, VERIFY_ERRNO};
use crate::workload::pacing::Clock;
use std::sync::atomic::Ordering;

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// A sync or a verify pass is due: the queue must drain first.
    #[inline]
    pub(super) fn drain_due(&self) -> bool {
        self.sync_due()
            || self
                .checks
                .verify
                .as_ref()
                .is_some_and(Verifier::backlog_due)
            || self.pass_break_due().is_some()
    }

    /// fsync=N / fdatasync=N: a sync is due.
    #[inline]
    pub(super) fn sync_due(&self) -> bool {
        let io = &self.ctx.job.io;
        let every = if io.fsync > 0 { io.fsync } else { io.fdatasync };
        (every > 0 && self.writes_since_sync >= every) || self.replay_sync_due()
    }

    /// Sync each file written since the last sync (or the sync a replayed log
    /// asks for); `logged`: a sync of the job's I/O (fsync=N, a replayed one), which
    /// goes in the `write_iolog` and counts in the results; fio does neither for
    /// end_fsync's.
    pub(super) fn sync_dirty_files(&mut self, logged: bool) {
        if self.replay_sync() {
            return;
        }
        let datasync = self.ctx.job.io.fsync == 0 && self.ctx.job.io.fdatasync > 0;
        for file in 0..self.dirty_files.len() {
            if self.dirty_files[file] {
                self.sync_file(file, datasync, logged);
            }
        }
        self.writes_since_sync = 0;
    }

    /// Sync one file; a `logged` sync is logged and counted.
    pub(super) fn sync_file(&mut self, file: usize, datasync: bool, logged: bool) {
        let start = self.clock.now_ns();
        if logged {
            if let Some(log) = &mut self.checks.iolog {
                log.sync(start, file as u32, datasync);
            }
        }
        let result = self.engine.sync_file(file as u32, datasync);
        let end = self.clock.now_ns();
        match result {
            Ok(()) if logged => {
                self.stats.sync_ios += u64::from(!datasync);
                if self.measuring {
                    self.stats.sync_lat.record(end - start);
                }
            }
            Ok(()) => {}
            Err(e) => {
                let what = if datasync { "fdatasync" } else { "fsync" };
                self.fail(IoFailure {
                    message: format!(
                        "{what} {}: {}",
                        self.ctx.files[file].path.display(),
                        crate::errno::describe(&e)
                    ),
                    errno: e.raw_os_error().unwrap_or(0),
                });
            }
        }
        self.dirty_files[file] = false;
    }

    /// `verify_only`: walk the job's writes without issuing them, so the verify pass
    /// knows what an earlier run of the same job left in each block. Like fio's
    /// dry run, the writes count as done (bytes and I/Os, no latency, no time).
    pub(super) fn replay_writes_for_verify(&mut self) {
        while let Some(io) = self.next_io() {
            if let (Ddir::Write, Some(v)) = (io.ddir, &mut self.checks.verify) {
                if !v.record_write(io.file, io.offset, io.len) {
                    break;
                }
                let written = &mut self.stats.dirs[Ddir::Write.index()];
                written.ios += 1;
                written.bytes += u64::from(io.len);
            }
        }
    }

    /// A `verify_backlog` round: the oldest waiting writes are read back
    /// (fio reads them without the sync and cache drop of a pass).
    #[cold]
    pub(super) fn verify_backlog(&mut self) {
        if let Some(v) = self.checks.verify.as_mut() {
            v.start_backlog_round();
            self.read_back();
        }
    }

    /// Read back the writes logged since the last pass; fio counts the pass's
    /// time and reads as the job's reading. A job that only reads checks its
    /// regions instead, outside its measured I/O.
    #[cold]
    pub(super) fn verify_pass(&mut self) {
        let start_ns = self.clock.now_ns();
        let stop = self.ctx.stop;
        let Some(v) = self.checks.verify.as_mut() else {
            return;
        };
        if !v.reads_back_writes() {
            if let Err(e) = v.verify_regions(stop) {
                self.verify_read_failed(&e);
            }
            return;
        }
        v.start_pass();
        // fio 3.33 closes the files before its pass and reopens them for it,
        // dropping their cached pages as it opens them with invalidate=1 (its
        // do_verify syncs open files only: none are open then)
        if self.ctx.job.io.invalidate {
            for file in &self.ctx.files {
                drop_cached_pages(file);
            }
        }
        self.read_back();
        self.verify_ns += self.clock.now_ns() - start_ns;
    }

    /// Issue the reads the verifier hands out through the engine and queue, at
    /// the job's depth and batching, as fio's do_verify does: each is timed and
    /// counted like any other read (the checks see it, the live board too: the
    /// stack ledger then finds the reads the job's threads made in the job's
    /// bytes) and checked when it completes. Ends with nothing in flight.
    #[cold]
    #[inline(never)]
    fn read_back(&mut self) {
        let batch_submit = self.ctx.job.queue.batch_submit as usize;
        let mut more = true;
        loop {
            while more && self.queue.has_room() {
                self.check_limits(self.last_now_ns);
                let stopping = self.error.is_some()
                    || self.out_of_time
                    || self.ctx.stop.load(Ordering::Relaxed);
                let next = match &mut self.checks.verify {
                    Some(v) if !stopping => v.next_read_back(),
                    _ => None,
                };
                let Some(io) = next else {
                    more = false;
                    break;
                };
                self.issue(io);
                if self.queue.pending() >= batch_submit {
                    self.commit();
                }
            }
            self.commit_pending();
            let in_flight = self.queue.in_flight();
            if in_flight == 0 {
                break;
            }
            let min = match more {
                true => self.ctx.job.queue.batch_complete_min.min(in_flight),
                false => in_flight,
            };
            self.reap_at_least(min);
        }
        if let Some(v) = self.checks.verify.as_mut() {
            v.end_read_back();
            // verify_fatal: the job stops; the bad block is reported when the worker finishes
            if v.stopped() {
                self.done_issuing = true;
            }
        }
    }

    fn verify_read_failed(&mut self, e: &std::io::Error) {
        self.fail(IoFailure {
            message: format!("verify: read-back failed: {}", crate::errno::describe(e)),
            errno: e.raw_os_error().unwrap_or(0),
        });
    }

    /// The verify pass after the job's writes (none when its time ran out, as
    /// in fio), then what verification found.
    pub(super) fn verify_at_end(&mut self) -> Option<VerifyReport> {
        let stopped = self.ctx.stop.load(Ordering::Relaxed) || self.out_of_time;
        if self.checks.verify.as_ref()?.verifies_at_end() && self.error.is_none() && !stopped {
            self.verify_pass();
        }
        let (report, error) = self.checks.verify.take()?.finish();
        if let Some(message) = error {
            self.fail(IoFailure {
                message,
                errno: VERIFY_ERRNO,
            });
        }
        Some(report)
    }
}
