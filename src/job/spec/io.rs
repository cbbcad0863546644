//! How data reaches the target (`IoModeSpec`: `direct`/`buffered`, `sync`, `fsync`,
//! `invalidate`, …).

use super::FilesSpec;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum SyncMode {
    None,
    /// `sync=1` / `sync=sync`: O_SYNC.
    Sync,
    /// `sync=dsync`: O_DSYNC.
    Dsync,
}

choice_words!(SyncMode {
    "0" => SyncMode::None,
    "none" => SyncMode::None,
    "1" => SyncMode::Sync,
    "sync" => SyncMode::Sync,
    "dsync" => SyncMode::Dsync,
});

/// How data reaches the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct IoModeSpec {
    pub direct: bool,
    pub sync: SyncMode,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub invalidate: bool,
    pub overwrite: bool,
    pub unlink: bool,
}

impl Layers<'_> {
    /// `files` says whether the job's files are read into the cache first (`pre_read`).
    pub(crate) fn io_mode(&self, files: &FilesSpec) -> Result<IoModeSpec, JobError> {
        let sync = self.choice(opt::SYNC)?;
        Ok(IoModeSpec {
            direct: self.direct()?,
            sync,
            fsync: self.count_u32(opt::FSYNC, 0)?,
            fdatasync: self.count_u32(opt::FDATASYNC, 0)?,
            // A job keeps its files open to its end, so closing them is ending it.
            end_fsync: self.bool(opt::END_FSYNC)? || self.bool(opt::FSYNC_ON_CLOSE)?,
            // Dropping the cache right after pre_read filled it would undo it (as fio).
            invalidate: self.bool(opt::INVALIDATE)? && !files.pre_read,
            overwrite: self.bool(opt::OVERWRITE)?,
            unlink: self.bool(opt::UNLINK)?,
        })
    }

    /// `buffered` is the inverse of `direct`; the more specific layer decides.
    fn direct(&self) -> Result<bool, JobError> {
        match self.pair(opt::DIRECT, opt::BUFFERED) {
            (Some(direct), Some(buffered)) => {
                let (d, b) = (direct.bool()?, buffered.bool()?);
                if d == b {
                    return Err(buffered.invalid_with_hint(
                        format!("contradicts direct={}", u8::from(d)),
                        "buffered=0 means direct=1; set only one of them",
                    ));
                }
                Ok(d)
            }
            (Some(direct), None) => direct.bool(),
            (None, Some(buffered)) => Ok(!buffered.bool()?),
            (None, None) => self.bool(opt::DIRECT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job, run};

    #[test]
    fn io_mode_options() {
        let spec = job(&[
            "--direct=1",
            "--sync=dsync",
            "--fsync=8",
            "--fdatasync=4",
            "--end_fsync",
            "--invalidate=0",
            "--overwrite=1",
            "--unlink=1",
        ]);
        let io = &spec.io;
        assert!(io.direct && io.end_fsync && !io.invalidate && io.overwrite && io.unlink);
        assert_eq!((io.sync, io.fsync, io.fdatasync), (SyncMode::Dsync, 8, 4));
        assert_eq!(job(&["--sync=1"]).io.sync, SyncMode::Sync);
        assert_eq!(job(&["--sync=none"]).io.sync, SyncMode::None);
    }

    #[test]
    fn fsync_on_close_syncs_when_the_job_ends() {
        assert!(job(&["--fsync_on_close=1"]).io.end_fsync);
        assert!(!job(&["--fsync_on_close=0"]).io.end_fsync);
    }

    #[test]
    fn buffered_is_the_inverse_of_direct() {
        assert!(job(&["--buffered=0"]).io.direct);
        assert!(!job(&["--buffered=1"]).io.direct);
        let resolved = run(&["--direct=1", "--name=a", "--size=1m", "--buffered=1"]).unwrap();
        assert!(
            !resolved.jobs[0].io.direct,
            "the job's buffered=1 beats the global direct=1"
        );
        assert!(
            error(&["--name=a", "--size=1m", "--direct=1", "--buffered=1"]).contains("contradicts")
        );
    }
}
