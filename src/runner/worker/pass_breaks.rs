//! The work between passes of `loops`: fio reads a pass's writes back before
//! the next pass (verify), and `unlink_each_loop` empties the files. Each is a
//! [`PassBreak`], taken once a pass with the queue drained; [`PassBreaks`]
//! remembers which were taken in the pass that just ended.

use super::Worker;
use crate::engine::Engine;
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
}

impl PassBreaks {
    /// A new pass begins: its breaks are still to come.
    pub(super) fn new_pass(&mut self) {
        *self = PassBreaks::default();
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
