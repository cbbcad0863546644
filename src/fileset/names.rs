//! The names a file operation engine works on: the stat and delete engines find them
//! made before the run (files of their region's size, or directories), as fio lays
//! them out; the create engines find nothing made.

use super::layout::{self, LayoutRequest};
use super::{PlannedRegion, TargetError};
use crate::job::spec::{Existing, JobSpec};
use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;

/// Make what `job`'s engine expects at each of its names; nothing for other engines.
/// An existing file is kept (grown to its region if shorter); an existing directory is
/// used as it is. `allow_file_create=0` refuses to make either.
pub(super) fn make_ready(job: &JobSpec, plan: &[Vec<PlannedRegion>]) -> Result<(), TargetError> {
    let Some(existing) = job.engine.kind.def().file_op.and_then(|op| op.needs()) else {
        return Ok(());
    };
    let may_create = job.files.allow_file_create;
    for (path, start, len) in plan.iter().flatten() {
        match existing {
            Existing::File => {
                let request = LayoutRequest {
                    extent: start + len,
                    fill: false,
                    fallocate: job.files.fallocate,
                    may_create,
                };
                layout::ensure(path, &request)?;
            }
            Existing::Dir if path.is_dir() => {}
            Existing::Dir if !may_create => {
                return Err(TargetError::Config(format!(
                    "{}: no such directory, and allow_file_create=0 forbids making it (make it first, or drop allow_file_create=0)",
                    path.display()
                )));
            }
            Existing::Dir => DirBuilder::new()
                .mode(0o700)
                .create(path)
                .map_err(|e| TargetError::io(path, "create the directory", e))?,
        }
    }
    Ok(())
}
