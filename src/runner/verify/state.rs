//! fio's verify state files: a job that writes with `verify=` saves, when it
//! ends (cut short or not), how many of its writes completed and the seed its
//! offsets and data came from; a later `verify_state_load=1` job checks only
//! those writes. The file has fio's name (`local-<job>-<thread>-verify.state`,
//! in the current directory or `--aux-path`) but iolens' own contents, one
//! JSON object: fio's binary state counts fio's writes of fio's data, which
//! iolens neither writes nor reads (docs/fio-differences.md).

use crate::job::spec::VerifySpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What the first line of a state file says it is.
const FORMAT: &str = "iolens verify state 1";

/// How far one worker's writes got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VerifyState {
    pub format: String,
    pub job: String,
    /// The worker's seed: offsets and block contents are derived from it.
    pub seed: u64,
    /// Writes completed, counted in the order the job issued them.
    pub writes: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl VerifyState {
    pub(crate) fn new(job: &str, seed: u64, writes: u64, bytes: u64) -> Self {
        Self {
            format: FORMAT.into(),
            job: job.into(),
            seed,
            writes,
            bytes,
        }
    }

    /// Write the state file of the run's worker number `worker_number`.
    pub(crate) fn save(
        &self,
        spec: &VerifySpec,
        worker_number: u64,
    ) -> Result<(), VerifyStateError> {
        let path = spec.state_files.path(&self.job, worker_number);
        let text = serde_json::to_string(self).expect("a state serializes") + "\n";
        std::fs::write(&path, text).map_err(|source| VerifyStateError::Write { path, source })
    }

    /// The state the run's worker number `worker_number` of job `job` saved.
    pub(crate) fn load(
        spec: &VerifySpec,
        job: &str,
        worker_number: u64,
    ) -> Result<Self, VerifyStateError> {
        let path = spec.state_files.path(job, worker_number);
        match std::fs::read(&path) {
            Ok(bytes) => parse(&bytes, job, path),
            Err(source) => Err(VerifyStateError::Read { path, source }),
        }
    }
}

/// Why a state file could not be saved or loaded: one line naming the file and the fix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VerifyStateError {
    /// The state file could not be written.
    #[error(
        "verify_state_save: cannot write {}: {} (set --aux-path to a writable directory, \
         or verify_state_save=0)",
        path.display(),
        crate::errno::describe(source)
    )]
    Write {
        /// The state file.
        path: PathBuf,
        /// Why the write failed.
        #[source]
        source: std::io::Error,
    },
    /// The state file could not be read.
    #[error(
        "verify_state_load: cannot read {}: {} (run the write job first, \
         or point --aux-path at its directory)",
        path.display(),
        crate::errno::describe(source)
    )]
    Read {
        /// The state file.
        path: PathBuf,
        /// Why the read failed.
        #[source]
        source: std::io::Error,
    },
    /// The file holds no state iolens wrote.
    #[error(
        "verify_state_load: {}: not an iolens verify state (fio's own state files cannot be \
         read: save it with iolens)",
        path.display()
    )]
    Foreign {
        /// The state file.
        path: PathBuf,
    },
    /// Another job saved the state.
    #[error(
        "verify_state_load: {}: saved by job '{saved}', not '{job}' (name the job as the \
         writer was named)",
        path.display()
    )]
    OtherJob {
        /// The state file.
        path: PathBuf,
        /// The job that saved it.
        saved: String,
        /// The job loading it.
        job: String,
    },
}

fn parse(bytes: &[u8], job: &str, path: PathBuf) -> Result<VerifyState, VerifyStateError> {
    let Some(state) = serde_json::from_slice(bytes)
        .ok()
        .filter(|s: &VerifyState| s.format == FORMAT)
    else {
        return Err(VerifyStateError::Foreign { path });
    };
    if state.job != job {
        return Err(VerifyStateError::OtherJob {
            path,
            saved: state.job,
            job: job.into(),
        });
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::spec::StateFiles;

    #[test]
    fn a_saved_state_loads_back_from_fios_file_name() {
        let dir = tempfile::tempdir().expect("a scratch dir");
        let files = StateFiles {
            dir: Some(dir.path().to_path_buf()),
        };
        let spec = crate::job::resolve::tests::job(&["--rw=write", "--verify=crc32c"])
            .verify
            .expect("a verify spec");
        let spec = VerifySpec {
            state_files: files,
            ..spec
        };
        let state = VerifyState::new("a/b", 42, 7, 28672);
        // the run's fifth worker: fio numbers its state file 4
        state.save(&spec, 5).expect("save the state");
        let name = dir.path().join("local-a.b-4-verify.state");
        assert!(name.exists(), "expected fio's name {}", name.display());
        assert_eq!(
            VerifyState::load(&spec, "a/b", 5).expect("load the state"),
            state,
            "expected the state saved to load back"
        );
        let other = VerifyState::load(&spec, "a/b", 4)
            .expect_err("worker 4 saved nothing")
            .to_string();
        assert!(
            other.contains("local-a.b-3-verify.state") && other.contains("run the write job"),
            "expected the missing file named with the fix, got {other}"
        );
    }

    #[test]
    fn a_foreign_or_mismatched_state_is_refused() {
        let fio_binary = [3u8, 0, 0, 0, 0, 0, 0, 0, 0xa8, 0];
        let e = parse(&fio_binary, "w", "s".into()).expect_err("fio's binary state");
        assert_eq!(
            e.to_string(),
            "verify_state_load: s: not an iolens verify state (fio's own state files cannot be \
             read: save it with iolens)"
        );
        let text = serde_json::to_vec(&VerifyState::new("x", 1, 2, 3)).expect("json");
        let e = parse(&text, "w", "s".into()).expect_err("another job's state");
        assert_eq!(
            e.to_string(),
            "verify_state_load: s: saved by job 'x', not 'w' (name the job as the writer was named)"
        );
    }

    #[test]
    fn an_unwritable_state_names_the_file_and_the_fix() {
        let e = VerifyStateError::Write {
            path: "d/s".into(),
            source: std::io::Error::from_raw_os_error(13),
        };
        assert_eq!(
            e.to_string(),
            "verify_state_save: cannot write d/s: EACCES (Permission denied) (set --aux-path to a \
             writable directory, or verify_state_save=0)"
        );
    }
}
