//! Alignment: with direct=1 the block sizes and offsets must fit each target's
//! direct-I/O alignment, and buffers must be aligned for every target of a job.

use super::{is_diskless, FileSet, Target, TargetError, WorkerFiles};
use crate::job::spec::JobSpec;

/// With direct=1, block sizes and offsets must be multiples of the target's
/// direct-I/O alignment; say so before the first I/O instead of failing with EINVAL.
pub(super) fn check_alignment(
    job: &JobSpec,
    targets: &[Target],
    workers: &[WorkerFiles],
) -> Result<(), TargetError> {
    if !job.io.direct || is_diskless(job) {
        return Ok(());
    }
    for worker in workers {
        for wf in &worker.files {
            let target = &targets[wf.target];
            let align = target.dio_offset_align;
            let what = if target.is_block_device {
                "logical sector"
            } else {
                "direct-I/O alignment"
            };
            let misfit = |option: &str, value: u64| {
                TargetError::Config(format!(
                    "job '{}': {option}={value} is not a multiple of the {align}-byte {what} of {}, which direct=1 requires (use a multiple of {align}, or direct=0)",
                    job.name,
                    target.path.display()
                ))
            };
            let used = job.workload.rw.directions();
            for (d, bs) in job.workload.bs.iter().enumerate() {
                if !used[d] {
                    continue;
                }
                for size in block_sizes_of(bs) {
                    if !size.is_multiple_of(align) {
                        return Err(misfit("bs", size));
                    }
                }
                if !job.workload.blockalign[d].is_multiple_of(align) {
                    return Err(misfit("blockalign", job.workload.blockalign[d]));
                }
            }
            if !wf.start.is_multiple_of(align) {
                return Err(misfit("offset", wf.start));
            }
        }
    }
    Ok(())
}

fn block_sizes_of(bs: &crate::job::spec::BlockSizes) -> Vec<u64> {
    use crate::job::spec::BlockSizes;
    match bs {
        BlockSizes::Fixed(b) => vec![*b],
        // Range sizes are multiples of min, so checking min (and max) covers them.
        BlockSizes::Range { min, max } => vec![*min, *max],
        BlockSizes::Split(v) => v.iter().map(|(b, _)| *b).collect(),
    }
}

impl FileSet {
    /// Buffer alignment that satisfies every target of a job (at least a page).
    pub(crate) fn buffer_align(&self, job_index: usize) -> usize {
        let page = iolens_sys::os::page_size();
        self.workers[job_index]
            .iter()
            .flat_map(|w| &w.files)
            .map(|wf| self.targets[wf.target].dio_mem_align as usize)
            .fold(page, usize::max)
    }
}
