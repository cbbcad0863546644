//! fio's I/O logs: `write_iolog` (the issued I/Os as a log) and `read_iolog`
//! with the `replay_*` options (a log's I/Os instead of the workload's).

use super::{
    BlockSizes, Ddir, FilesSpec, RwPattern, SizeOrPercent, TargetSpec, WorkloadSpec, DDIRS,
};
use crate::iolog::{Op, ReplayReader};
use crate::job::error::JobError;
use crate::job::layers::{Layers, Setting};
use crate::job::options::opt;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The job's I/O log options.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct IologSpec {
    /// `write_iolog=FILE`: each worker appends its issued I/Os to FILE (fio's version 3 log).
    pub write: Option<PathBuf>,
    /// `read_iolog=FILE`: the job replays FILE.
    #[serde(default)]
    pub replay: Option<ReplaySpec>,
}

pub(crate) use crate::iolog::{ReplaySkip, ReplaySpec};

impl ReplaySpec {
    /// Read the log through: its files, bytes and block sizes; Err names the line.
    fn learn(&mut self) -> Result<(), String> {
        let mut reader = ReplayReader::open(self)?;
        let (mut bytes, mut largest) = ([0; DDIRS], [0; DDIRS]);
        while let Some(timed) = reader.next_op()? {
            if let Op::Io(io) = timed.op {
                bytes[io.ddir.index()] += u64::from(io.len);
                largest[io.ddir.index()] = largest[io.ddir.index()].max(io.len);
            }
        }
        let files = match &self.redirect {
            Some(target) => vec![target.clone()],
            None => reader.files().into_iter().map(PathBuf::from).collect(),
        };
        if bytes.iter().all(|&b| b == 0) {
            return Err(format!(
                "{} holds no read, write or trim to replay{}",
                self.log.display(),
                if self.skip == ReplaySkip::default() {
                    ""
                } else {
                    " after replay_skip"
                }
            ));
        }
        (self.files, self.bytes, self.largest) = (files, bytes, largest);
        Ok(())
    }

    /// The job as the replay runs it: the log's files (a missing one created
    /// empty, not laid out, as in fio), its size the logged bytes, with the
    /// log's directions and largest blocks.
    pub(crate) fn shape(
        &self,
        target: &mut TargetSpec,
        workload: &mut WorkloadSpec,
        files: &mut FilesSpec,
    ) {
        files.create_on_open = true;
        let given = target.size.map_or(0, |s| s.resolve(0));
        target.filenames.clone_from(&self.files);
        target.nrfiles = self.files.len() as u32;
        target.size = Some(SizeOrPercent::Bytes(given + self.bytes.iter().sum::<u64>()));
        let used = self.bytes.map(|b| b > 0);
        workload.rw = match used {
            [true, false, false] => RwPattern::Read,
            [false, true, false] => RwPattern::Write,
            [false, false, true] => RwPattern::Trim,
            [false, true, true] => RwPattern::TrimWrite,
            _ => RwPattern::ReadWrite,
        };
        for ddir in Ddir::ALL {
            if used[ddir.index()] {
                workload.bs[ddir.index()] =
                    BlockSizes::Fixed(u64::from(self.largest[ddir.index()]));
            }
        }
    }
}

fn path_of(setting: &Setting<'_>, example: &str) -> Result<PathBuf, JobError> {
    match setting.text.trim() {
        "" => Err(setting.invalid(format!("needs a file name, as {example}"))),
        text => Ok(PathBuf::from(text)),
    }
}

impl Layers<'_> {
    pub(crate) fn iolog(&self) -> Result<IologSpec, JobError> {
        let write = self
            .given(opt::WRITE_IOLOG)
            .map(|s| path_of(&s, "write_iolog=job.iolog"))
            .transpose()?;
        let replay = match self.given(opt::READ_IOLOG) {
            Some(setting) => Some(self.replay(&setting)?),
            None => None,
        };
        Ok(IologSpec { write, replay })
    }

    fn replay(&self, log: &Setting<'_>) -> Result<ReplaySpec, JobError> {
        let align = self.count(opt::REPLAY_ALIGN)?.unwrap_or(0);
        if align > 0 && !align.is_power_of_two() {
            let setting = self
                .given(opt::REPLAY_ALIGN)
                .expect("replay_align was given");
            return Err(setting.invalid("must be a power of two, as replay_align=4096"));
        }
        let time_scale = self.count(opt::REPLAY_TIME_SCALE)?.unwrap_or(100);
        if time_scale == 0 {
            let setting = self
                .given(opt::REPLAY_TIME_SCALE)
                .expect("a zero was given");
            return Err(setting.invalid("must be a percentage above 0, as replay_time_scale=200"));
        }
        let mut spec = ReplaySpec {
            log: self.replayed_log(log)?,
            redirect: self
                .given(opt::REPLAY_REDIRECT)
                .map(|s| path_of(&s, "replay_redirect=/dev/sdc"))
                .transpose()?,
            no_stall: self.bool(opt::REPLAY_NO_STALL)?,
            time_scale: u32::try_from(time_scale).unwrap_or(u32::MAX),
            scale: self.count(opt::REPLAY_SCALE)?.unwrap_or(0),
            align,
            skip: self.replay_skip()?,
            files: Vec::new(),
            bytes: [0; DDIRS],
            largest: [0; DDIRS],
        };
        spec.learn().map_err(|why| {
            let (reason, fix) = why.split_once("; ").unwrap_or((
                &why,
                "give a log written by write_iolog (fio's version 2 or 3)",
            ));
            log.invalid_with_hint(reason, fix)
        })?;
        Ok(spec)
    }

    /// The log to replay: read_iolog's, or the merge of the blktrace traces it
    /// lists into `merge_blktrace_file` (written now, as fio does when the job is set up).
    fn replayed_log(&self, log: &Setting<'_>) -> Result<PathBuf, JobError> {
        let names: Vec<&str> = log.text.split(':').map(str::trim).collect();
        let Some(merged) = self.given(opt::MERGE_BLKTRACE_FILE) else {
            if names.len() > 1 {
                return Err(log.invalid_with_hint(
                    "names several logs",
                    "give each job its own log, or merge_blktrace_file=FILE to merge blktrace traces",
                ));
            }
            return path_of(log, "read_iolog=job.iolog");
        };
        let out = path_of(&merged, "merge_blktrace_file=merged.bin")?;
        let per_trace = |def, default: u64| -> Result<Vec<u64>, JobError> {
            let Some(setting) = self.given(def) else {
                return Ok(vec![default; names.len()]);
            };
            let values: Vec<u64> = setting
                .text
                .split(':')
                .map(|v| {
                    v.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|v| *v > 0.0)
                        .map(|v| v as u64)
                })
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    setting.invalid("give a positive number per trace, separated by ':'")
                })?;
            if values.len() != names.len() {
                return Err(setting.invalid(format!(
                    "gives {} values for the {} traces read_iolog lists; give one per trace",
                    values.len(),
                    names.len()
                )));
            }
            Ok(values)
        };
        let scalars = per_trace(opt::MERGE_BLKTRACE_SCALARS, 100)?;
        let iters = per_trace(opt::MERGE_BLKTRACE_ITERS, 1)?;
        let traces: Vec<(String, u64, u32)> = names
            .iter()
            .zip(scalars.iter().zip(&iters))
            .map(|(name, (&scalar, &iters))| {
                (
                    name.to_string(),
                    scalar,
                    u32::try_from(iters).unwrap_or(u32::MAX),
                )
            })
            .collect();
        crate::iolog::merge_blktrace(&traces, &out).map_err(|why| {
            log.invalid_with_hint(why, "give blktrace traces to merge, separated by ':'")
        })?;
        Ok(out)
    }

    fn replay_skip(&self) -> Result<ReplaySkip, JobError> {
        let mut skip = ReplaySkip::default();
        let Some(setting) = self.given(opt::REPLAY_SKIP) else {
            return Ok(skip);
        };
        for word in setting
            .text
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            match word {
                "read" => skip.ddir[Ddir::Read.index()] = true,
                "write" => skip.ddir[Ddir::Write.index()] = true,
                "trim" => skip.ddir[Ddir::Trim.index()] = true,
                "sync" => skip.sync = true,
                _ => {
                    return Err(setting.invalid(format!(
                        "{word:?} is not read, write, trim or sync; give a comma-separated list of them"
                    )))
                }
            }
        }
        Ok(skip)
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
