//! Trims: each runs alone and synchronously, whatever the engine.

use super::Worker;
use crate::engine::{Engine, TrimMethod};
use crate::job::spec::{Ddir, JobSpec, RwPattern};
use crate::runner::ctx::OpenFile;
use crate::runner::queue::InFlight;
use crate::runner::result::IoFailure;
use crate::workload::pacing::Clock;
use crate::workload::NextIo;

impl<E: Engine, C: Clock> Worker<'_, E, C> {
    /// Trims run alone and synchronously in every engine: what is queued is
    /// submitted and reaped first, then the range is discarded and accounted
    /// like an I/O a blocking engine completed.
    pub(super) fn trim(&mut self, io: NextIo) {
        self.quiesce();
        if self.done_issuing {
            return;
        }
        let file = io.file as usize;
        let method = self.trim_methods[file];
        let start_ns = self.clock.now_ns();
        let result = self.engine.trim(
            &self.ctx.files[file].file,
            method,
            io.offset,
            u64::from(io.len),
        );
        let end_ns = self.clock.now_ns();
        self.last_now_ns = end_ns;
        self.ctx.live.add_in_io(end_ns - start_ns);
        let result = match result {
            Ok(()) => i64::from(io.len),
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(0);
                if let Some(why) = method.refusal(errno) {
                    return self.trim_refused(file, why, errno);
                }
                -i64::from(errno)
            }
        };
        self.stats.depth.record_submit(1);
        self.stats.depth.record_level(1, 1);
        self.stats.depth.record_complete(1);
        let trimmed = InFlight {
            start_ns,
            submit_ns: start_ns,
            ddir: Ddir::Trim,
            len: io.len,
            file: io.file,
            offset: io.offset,
            ioprio: 0,
        };
        self.complete(trimmed, None, result, end_ns, false);
        self.think();
    }

    #[cold]
    fn trim_refused(&mut self, file: usize, why: &str, errno: i32) {
        self.fail(IoFailure {
            message: format!(
                "rw={}: {} cannot be trimmed: {why}",
                rw_name(self.ctx.job),
                self.ctx.files[file].path.display()
            ),
            errno,
        });
    }
}

/// How each of the job's files is trimmed; nothing for a job that does not trim.
pub(super) fn trim_methods(
    job: &JobSpec,
    files: &[OpenFile],
) -> Result<Vec<TrimMethod>, IoFailure> {
    if !job.workload.rw.trims() {
        return Ok(Vec::new());
    }
    files
        .iter()
        .map(|f| TrimMethod::of(&f.file))
        .collect::<std::io::Result<_>>()
        .map_err(|e| IoFailure {
            message: format!(
                "rw={}: cannot tell how to trim the target: {}",
                rw_name(job),
                crate::errno::describe(&e)
            ),
            errno: e.raw_os_error().unwrap_or(0),
        })
}

/// The `rw=` value of a trimming job, for messages.
fn rw_name(job: &JobSpec) -> &'static str {
    match job.workload.rw {
        RwPattern::RandTrim => "randtrim",
        RwPattern::TrimWrite => "trimwrite",
        RwPattern::RandTrimWrite => "randtrimwrite",
        _ => "trim",
    }
}
