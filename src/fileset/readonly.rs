//! fio's `--readonly`: a safety net against writing the target by mistake. A job
//! that writes or trims is refused as the jobs are loaded (fio's rule, which holds
//! for every engine, also with --parse-only), and a file that would have to be
//! created or extended before the jobs could read it when the files are prepared
//! (fio refuses to lay it out).

use super::TargetError;
use crate::job::choice::Choice;
use crate::job::spec::{JobSpec, RwPattern};
use std::path::Path;

/// The first job that would write or trim, refused.
pub(crate) fn refuse_writing_jobs(jobs: &[JobSpec]) -> Result<(), TargetError> {
    let Some(job) = jobs
        .iter()
        .find(|job| job.workload.rw.writes() || job.workload.rw.trims())
    else {
        return Ok(());
    };
    if let Some(replay) = &job.iolog.replay {
        return Err(TargetError::Config(format!(
            "job '{}': read_iolog={} replays writes or trims, which --readonly forbids; add replay_skip=write,trim to replay only its reads, or drop --readonly",
            job.name,
            replay.log.display()
        )));
    }
    let rw = job.workload.rw;
    let word = RwPattern::WORDS
        .iter()
        .find(|(_, value)| *value == rw)
        .map_or("?", |(word, _)| word);
    Err(TargetError::Config(format!(
        "job '{}': rw={word} writes or trims, which --readonly forbids (as fio does); use rw=read or rw=randread, or drop --readonly",
        job.name
    )))
}

/// A regular file of `existing` bytes (None: missing) that the jobs address up to
/// `extent`: refused when it would have to be created or extended first.
pub(super) fn refuse_layout(
    path: &Path,
    existing: Option<u64>,
    extent: u64,
) -> Result<(), TargetError> {
    let (why, fix) = match existing {
        None => (
            "does not exist, and laying it out would create it".to_string(),
            "create the file first",
        ),
        Some(size) if size < extent => (
            format!(
                "holds {size} bytes, and the jobs address {extent}: laying it out would extend it"
            ),
            "lower size= or offset=",
        ),
        Some(_) => return Ok(()),
    };
    Err(TargetError::Config(format!(
        "{}: {why}, which --readonly forbids (fio refuses it too); {fix}, or drop --readonly",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_that_write_or_trim_are_refused_and_reads_pass() {
        let job = |rw: &str| crate::testutil::job_spec(&["--name=r", "--size=1m", rw]);
        assert!(
            refuse_writing_jobs(&[job("--rw=read"), job("--rw=randread")]).is_ok(),
            "expected read jobs to pass --readonly"
        );
        for rw in [
            "write",
            "randwrite",
            "rw",
            "randrw",
            "trim",
            "randtrim",
            "trimwrite",
            "randtrimwrite",
        ] {
            let jobs = [job("--rw=read"), job(&format!("--rw={rw}"))];
            let message = refuse_writing_jobs(&jobs)
                .expect_err("a writing job under --readonly")
                .to_string();
            assert!(
                message.contains(&format!("rw={rw} writes or trims"))
                    && message.contains("drop --readonly"),
                "expected rw={rw} refused with the fix, saw: {message}"
            );
        }
    }

    #[test]
    fn a_missing_or_short_file_is_not_laid_out() {
        let path = Path::new("data");
        assert!(refuse_layout(path, Some(8 << 20), 8 << 20).is_ok());
        let missing = refuse_layout(path, None, 1 << 20).unwrap_err().to_string();
        assert!(
            missing.contains("does not exist") && missing.contains("create the file first"),
            "expected a missing file refused, saw: {missing}"
        );
        let short = refuse_layout(path, Some(4096), 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(
            short.contains("holds 4096 bytes") && short.contains("lower size="),
            "expected a short file refused, saw: {short}"
        );
    }
}
