//! fio's `lockfile=`: the clones of a job serialise their I/O on a shared file.
//! `exclusive` lets one I/O at a time through, `readwrite` lets reads through together
//! and a write alone. As in fio, the lock is held while an I/O is handed to the engine:
//! for a blocking engine the whole I/O, for an asynchronous one its queueing.
//!
//! Each worker opens a descriptor of its own for every file and takes `flock` on it, so
//! workers exclude one another whether they are threads or processes (a lock belongs to
//! an open file description). Unlike fio's, whose lock belongs to one job and its clones,
//! the lock is the file's: other jobs using the file with `lockfile=` wait for it too.

use crate::job::spec::{Ddir, JobSpec, LockMode};
use std::fs::File;
use std::path::PathBuf;

/// A worker's lock handles, one per file (none without `lockfile=`).
#[derive(Debug, Default)]
pub(crate) struct FileLocks {
    mode: LockMode,
    handles: Vec<File>,
}

impl FileLocks {
    /// The mode a job's workers lock with: none for jobs that touch no data (the null
    /// engine, the file operation engines).
    pub(crate) fn mode_of(job: &JobSpec) -> LockMode {
        let engine = job.engine.kind.def();
        if engine.diskless || engine.file_op.is_some() {
            LockMode::None
        } else {
            job.files.lockfile
        }
    }

    /// Open a lock handle on each of `paths`; nothing for `LockMode::None`.
    pub(crate) fn open(mode: LockMode, paths: &[PathBuf]) -> std::io::Result<FileLocks> {
        let handles = match mode {
            LockMode::None => Vec::new(),
            LockMode::Exclusive | LockMode::ReadWrite => {
                paths.iter().map(File::open).collect::<Result<_, _>>()?
            }
        };
        Ok(FileLocks { mode, handles })
    }

    /// Wait until an I/O of `ddir` may go to file `file`.
    #[inline]
    pub(crate) fn lock(&self, file: u32, ddir: Ddir) -> std::io::Result<()> {
        let Some(handle) = self.handles.get(file as usize) else {
            return Ok(());
        };
        if self.mode == LockMode::ReadWrite && ddir == Ddir::Read {
            handle.lock_shared()
        } else {
            handle.lock()
        }
    }

    /// The I/O went to the engine: let the next one through.
    #[inline]
    pub(crate) fn unlock(&self, file: u32) -> std::io::Result<()> {
        match self.handles.get(file as usize) {
            Some(handle) => handle.unlock(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::TryLockError;

    /// Whether another descriptor of `path` could take an exclusive / a shared lock now.
    fn free(path: &std::path::Path) -> (bool, bool) {
        let probe = File::open(path).unwrap();
        let try_with = |take: fn(&File) -> Result<(), TryLockError>| match take(&probe) {
            Ok(()) => {
                probe.unlock().unwrap();
                true
            }
            Err(TryLockError::WouldBlock) => false,
            Err(TryLockError::Error(e)) => panic!("taking a probe lock failed: {e}"),
        };
        (try_with(File::try_lock), try_with(File::try_lock_shared))
    }

    #[test]
    fn a_worker_s_lock_keeps_other_descriptors_out_as_its_mode_says() {
        let dir = crate::testutil::scratch_dir();
        let path = dir.path().join("shared");
        std::fs::write(&path, b"data").unwrap();
        let paths = [path.clone()];
        for (mode, ddir, wanted) in [
            (LockMode::Exclusive, Ddir::Read, (false, false)),
            (LockMode::Exclusive, Ddir::Write, (false, false)),
            (LockMode::ReadWrite, Ddir::Read, (false, true)),
            (LockMode::ReadWrite, Ddir::Write, (false, false)),
            (LockMode::None, Ddir::Write, (true, true)),
        ] {
            let locks = FileLocks::open(mode, &paths).unwrap();
            locks.lock(0, ddir).unwrap();
            assert_eq!(
                free(&path),
                wanted,
                "{mode:?} {ddir:?}: expected another descriptor's (exclusive, shared) lock free as on the right"
            );
            locks.unlock(0).unwrap();
            assert_eq!(
                free(&path),
                (true, true),
                "{mode:?} {ddir:?}: expected the file free again after unlock"
            );
        }
    }
}
