//! The work between passes of `loops`: fio reads a pass's writes back before
//! the next pass (verify), and `unlink_each_loop` empties the files. Each is a
//! [`PassBreak`], taken once a pass with the queue drained; [`PassBreaks`]
//! remembers which were taken in the pass that just ended. As a pass begins,
//! the files' cached pages are dropped where fio's `invalidate` drops them
//! ([`pass_drops_cache`]).

use super::Worker;
use crate::engine::Engine;
use crate::job::spec::JobSpec;
use crate::runner::result::IoFailure;
use crate::runner::verify::Verifier;
use crate::workload::pacing::Clock;

/// A break the worker takes between two passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PassBreak {
    /// Read back and check the pass's writes.
    Verify,
    /// Empty the files for the next pass.
    Empty,
}

/// The breaks taken since the last pass began.
#[derive(Debug, Default)]
pub(super) struct PassBreaks {
    verified: bool,
    emptied: bool,
    /// A pass's cache drop failed once already (the note is given once a run).
    drop_failed: bool,
}

impl PassBreaks {
    /// A new pass begins: its breaks are still to come.
    pub(super) fn new_pass(&mut self) {
        self.verified = false;
        self.emptied = false;
    }
}

/// Whether fio 3.33 drops the files' cached pages as a pass after the first
/// begins (the first pass's drop is the fileset's guard, before the job). With
/// `invalidate` (the default) on a stored engine: a pass of `loops` or of
/// `io_size` reopens the files, and opening drops their pages, with `direct=1`
/// too; a `time_based` job goes over its files again without reopening them
/// when its offsets wrap (random with the random map, or sequential over one
/// file), and that drop is skipped with `direct=1`; sequential over several
/// files ends a pass with every file done, and they are reopened. Random
/// offsets without the map never wrap, so they are never dropped again.
pub(super) fn pass_drops_cache(job: &JobSpec, files: usize) -> bool {
    let w = &job.workload;
    if !job.io.invalidate || crate::fileset::is_diskless(job) {
        return false;
    }
    if !job.exec.time_based {
        return true;
    }
    if w.rw.is_random() {
        w.randommap && !job.io.direct
    } else {
        files > 1 || !job.io.direct
    }
}

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// A pass of `loops` ended and the next must wait: for its verify pass, or for
    /// `unlink_each_loop` to empty the files.
    #[inline]
    pub(super) fn pass_break_due(&self) -> Option<PassBreak> {
        if self.pass_verify_due() {
            Some(PassBreak::Verify)
        } else if self.pass_empty_due() {
            Some(PassBreak::Empty)
        } else {
            None
        }
    }

    /// Take the break `due` (with the queue drained); each is taken once a pass.
    #[cold]
    pub(super) fn take_pass_break(&mut self, due: PassBreak) {
        match due {
            PassBreak::Verify => {
                self.pass_breaks.verified = true;
                self.verify_pass();
            }
            PassBreak::Empty => {
                self.pass_breaks.emptied = true;
                self.empty_files();
            }
        }
    }

    /// A pass after the first begins: drop the files' cached pages where fio does,
    /// inside the measured time as in fio. A failure costs a note (once a run):
    /// the pass goes on and may read from memory.
    #[cold]
    #[inline(never)]
    pub(super) fn pass_begins(&mut self) {
        if !pass_drops_cache(self.ctx.job, self.ctx.files.len()) {
            return;
        }
        for file in &self.ctx.files {
            if let Err(e) = file.drop_cached_region() {
                if !self.pass_breaks.drop_failed {
                    crate::console::warn(format_args!(
                        "{}: cannot drop the cached pages as pass {} of job '{}' begins: {}; its reads may come from memory",
                        file.path.display(),
                        self.budget.passes_done() + 1,
                        self.ctx.job.name,
                        crate::errno::describe(&e)
                    ));
                }
                self.pass_breaks.drop_failed = true;
            }
        }
    }

    /// `unlink_each_loop`: a pass ended (and was verified) and another follows; as fio
    /// removes the job's files then, the next pass must find them empty.
    #[inline]
    fn pass_empty_due(&self) -> bool {
        let job = self.ctx.job;
        job.files.unlink_each_loop
            && self.budget.pass_over()
            && !self.pass_breaks.emptied
            && !job.exec.time_based
            && self.budget.passes_done() + 1 < self.budget.loops()
            && !self.pass_verify_due()
            && !self.checks.verify.as_ref().is_some_and(Verifier::only)
    }

    /// Empty the job's regular files for the next pass. fio unlinks them and creates them
    /// anew; iolens truncates them instead, since every worker keeps the descriptor it
    /// was given for the whole run: the next pass writes a fresh file all the same.
    #[cold]
    fn empty_files(&mut self) {
        for file in &self.ctx.files {
            let emptied = match file.file.metadata() {
                Ok(m) if m.is_file() => file.file.set_len(0),
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            };
            if let Err(e) = emptied {
                let message = format!(
                    "unlink_each_loop: emptying {} failed: {}",
                    file.path.display(),
                    crate::errno::describe(&e)
                );
                self.fail(IoFailure {
                    message,
                    errno: e.raw_os_error().unwrap_or(0),
                });
                return;
            }
        }
    }

    /// A pass of `loops` ended and another follows: fio reads this pass's writes
    /// back first (the last pass's are read back when the job ends). A
    /// `verify_only` replay walks every pass and reads back once, at the end.
    #[inline]
    fn pass_verify_due(&self) -> bool {
        let job = self.ctx.job;
        self.budget.pass_over()
            && !self.pass_breaks.verified
            && !job.exec.time_based
            && self.budget.passes_done() + 1 < self.budget.loops()
            && self
                .checks
                .verify
                .as_ref()
                .is_some_and(|v| v.verifies_at_end() && v.reads_back_writes() && !v.only())
    }
}

#[cfg(test)]
mod tests {
    use super::pass_drops_cache;
    use crate::testutil::job_spec;

    /// Whether a pass of the job `options` over `files` files drops the cache.
    fn drops(options: &[&str], files: usize) -> bool {
        let args: Vec<&str> = ["--name=t", "--filename=/data/f", "--size=1m"]
            .into_iter()
            .chain(options.iter().copied())
            .collect();
        pass_drops_cache(&job_spec(&args), files)
    }

    #[test]
    fn each_pass_of_loops_reopens_and_drops_also_with_direct_io() {
        assert!(drops(&["--loops=4"], 1));
        assert!(drops(&["--loops=4", "--direct=1"], 1));
        assert!(drops(&["--io_size=4m"], 1));
        assert!(!drops(&["--loops=4", "--invalidate=0"], 1));
        assert!(!drops(&["--loops=4", "--ioengine=null"], 1));
        assert!(!drops(&["--loops=4", "--pre_read=1"], 1));
    }

    #[test]
    fn a_time_based_wrap_drops_as_fios_offsets_do() {
        let timed = |more: &[&'static str], files| {
            drops(
                &[&["--time_based", "--runtime=1"][..], more].concat(),
                files,
            )
        };
        assert!(timed(&[], 1));
        assert!(timed(&["--rw=randread"], 1));
        // the wrap's drop is skipped with direct I/O
        assert!(!timed(&["--direct=1"], 1));
        assert!(!timed(&["--rw=randread", "--direct=1"], 1));
        // random offsets without the map never wrap
        assert!(!timed(&["--rw=randread", "--norandommap"], 1));
        // sequential over several files: every file done, all reopened
        assert!(timed(&["--direct=1"], 2));
        assert!(!timed(&["--invalidate=0"], 1));
    }
}
