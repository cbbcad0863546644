//! The names a file operation engine works on: the stat and delete engines find them
//! made before the run (files of their region's size, or directories), as fio lays
//! them out; the create engines find nothing made.

use super::{PlannedRegion, TargetError};
use crate::job::spec::{Existing, JobSpec};
use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

/// Make what `job`'s engine expects at each of its names; nothing for other engines.
/// An existing file is kept as it is; an existing directory is fine for the dir engines.
pub(super) fn make_ready(job: &JobSpec, plan: &[Vec<PlannedRegion>]) -> Result<(), TargetError> {
    let Some(existing) = job.engine.kind.def().file_op.and_then(|op| op.needs()) else {
        return Ok(());
    };
    for (path, start, len) in plan.iter().flatten() {
        match existing {
            Existing::File if !path.exists() => {
                let file = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o644)
                    .open(path)
                    .map_err(|e| TargetError::io(path, "create", e))?;
                file.set_len(start + len)
                    .map_err(|e| TargetError::io(path, "set the length of", e))?;
            }
            Existing::File => {}
            Existing::Dir => match DirBuilder::new().mode(0o700).create(path) {
                Err(e) if !(e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir()) => {
                    return Err(TargetError::io(path, "create the directory", e));
                }
                _ => {}
            },
        }
    }
    Ok(())
}
