//! fio's I/O logs: `write_iolog` (the issued I/Os as a log).

use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The job's I/O log options.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IologSpec {
    /// `write_iolog=FILE`: each worker appends its issued I/Os to FILE (fio's version 3 log).
    pub write: Option<PathBuf>,
}

impl Layers<'_> {
    pub(crate) fn iolog(&self) -> Result<IologSpec, JobError> {
        let write = match self.given(opt::WRITE_IOLOG) {
            Some(setting) if setting.text.trim().is_empty() => {
                return Err(setting.invalid("needs a file name, as write_iolog=job.iolog"))
            }
            Some(setting) => Some(PathBuf::from(setting.text.trim())),
            None => None,
        };
        Ok(IologSpec { write })
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::job_spec;

    #[test]
    fn write_iolog_names_the_log_file() {
        let job = job_spec(&["--name=t", "--size=1m", "--write_iolog=out.log"]);
        assert_eq!(
            job.iolog.write.as_deref(),
            Some(std::path::Path::new("out.log")),
            "expected write_iolog's file, saw {:?}",
            job.iolog
        );
    }
}
