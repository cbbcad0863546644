//! fio's verify state files: a job that writes with `verify=` saves, when it
//! ends (cut short or not), how many of its writes completed and the seed its
//! offsets and data came from; a later `verify_state_load=1` job checks only
//! those writes. The file has fio's name (`local-<job>-<thread>-verify.state`,
//! in the current directory or `--aux-path`) but iolens' own contents, one
//! JSON object: fio's binary state counts fio's writes of fio's data, which
//! iolens neither writes nor reads (docs/fio-differences.md).

use crate::job::spec::VerifySpec;
use serde::{Deserialize, Serialize};

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

    /// Write the state file of the run's worker number `worker_number`; the error is one
    /// line naming the file.
    pub(crate) fn save(&self, spec: &VerifySpec, worker_number: u64) -> Result<(), String> {
        let path = spec.state_files.path(&self.job, worker_number);
        let text = serde_json::to_string(self).expect("a state serializes") + "\n";
        std::fs::write(&path, text).map_err(|e| {
            format!(
                "verify_state_save: cannot write {}: {} (set --aux-path to a writable directory, \
                 or verify_state_save=0)",
                path.display(),
                crate::errno::describe(&e)
            )
        })
    }

    /// The state the run's worker number `worker_number` of job `job` saved; the error is
    /// one line naming the file.
    pub(crate) fn load(spec: &VerifySpec, job: &str, worker_number: u64) -> Result<Self, String> {
        let path = spec.state_files.path(job, worker_number);
        let bytes = std::fs::read(&path).map_err(|e| {
            format!(
                "verify_state_load: cannot read {}: {} (run the write job first, \
                 or point --aux-path at its directory)",
                path.display(),
                crate::errno::describe(&e)
            )
        })?;
        parse(&bytes, job).map_err(|why| format!("verify_state_load: {}: {why}", path.display()))
    }
}

fn parse(bytes: &[u8], job: &str) -> Result<VerifyState, String> {
    let state: VerifyState = serde_json::from_slice(bytes)
        .ok()
        .filter(|s: &VerifyState| s.format == FORMAT)
        .ok_or("not an iolens verify state (fio's own state files cannot be read: save it with iolens)")?;
    if state.job != job {
        return Err(format!(
            "saved by job '{}', not '{job}' (name the job as the writer was named)",
            state.job
        ));
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
            VerifyState::load(&spec, "a/b", 5),
            Ok(state),
            "expected the state saved to load back"
        );
        let other = VerifyState::load(&spec, "a/b", 4).expect_err("worker 4 saved nothing");
        assert!(
            other.contains("local-a.b-3-verify.state") && other.contains("run the write job"),
            "expected the missing file named with the fix, got {other}"
        );
    }

    #[test]
    fn a_foreign_or_mismatched_state_is_refused() {
        let fio_binary = [3u8, 0, 0, 0, 0, 0, 0, 0, 0xa8, 0];
        let e = parse(&fio_binary, "w").expect_err("fio's binary state");
        assert!(e.contains("not an iolens verify state"), "got {e}");
        let text = serde_json::to_vec(&VerifyState::new("x", 1, 2, 3)).expect("json");
        let e = parse(&text, "w").expect_err("another job's state");
        assert!(e.contains("saved by job 'x', not 'w'"), "got {e}");
    }
}
