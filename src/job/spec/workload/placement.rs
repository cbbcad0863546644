//! Which of a worker's files the next I/O goes to (`file_service_type`, `openfiles`)
//! and which zone of the region (`zonemode=strided`).

use super::*;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use crate::units;
use serde::{Deserialize, Serialize};

/// fio's `zonemode=strided`: the region is cut into zones of `range` bytes, the
/// next zone starting `skip` bytes after the previous one ends; each zone gets
/// `size` bytes of I/O before the next, and after the last fitting zone the
/// first comes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StridedZones {
    /// `zonesize`: bytes transferred in a zone per visit (> 0).
    pub size: u64,
    /// `zonerange`: the zone's length (`zonesize` when not given).
    pub range: u64,
    /// `zoneskip`: the gap between one zone's end and the next zone's start.
    pub skip: u64,
}

impl StridedZones {
    /// Distance from one zone's start to the next's.
    pub(crate) fn stride(&self) -> u64 {
        self.range + self.skip
    }
}

/// fio's `file_service_type`: which of a worker's files the next I/O goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum FileService {
    /// In turn, `ios` I/Os per file (fio's default: one).
    RoundRobin { ios: u32 },
    /// Uniformly chosen, `ios` I/Os per choice.
    Random { ios: u32 },
    /// One file to its end before the next.
    Sequential,
}

/// A `file_service_type=` word; with its `:N` it makes the `FileService`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileServiceWord {
    RoundRobin,
    Random,
    Sequential,
}

choice_words!(FileServiceWord {
    "roundrobin" => FileServiceWord::RoundRobin,
    "random" => FileServiceWord::Random,
    "sequential" => FileServiceWord::Sequential,
});

/// fio's `zonemode=`: whether I/O moves through the region zone by zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZoneMode {
    None,
    Strided,
}

choice_words!(ZoneMode {
    "none" => ZoneMode::None,
    "strided" => ZoneMode::Strided,
});

impl Layers<'_> {
    /// `openfiles`: a cap on the files a worker uses at a time. fio closes and reopens
    /// files to stay under it; here every file stays open (opened once before the
    /// run), so a user counting on it to limit descriptors is told. The file operation
    /// engines hold one descriptor for all their names, so they need no warning.
    pub(super) fn open_files(&self, warnings: &mut Vec<String>) -> Result<Option<u32>, JobError> {
        let Some(setting) = self.given(opt::OPENFILES) else {
            return Ok(None);
        };
        let limit = self
            .parse_u32(setting.text, 1)
            .map_err(|e| setting.invalid(e))?;
        let engine: EngineKind = self.choice(opt::IOENGINE)?;
        if engine.def().file_op.is_some() {
            return Ok(Some(limit));
        }
        warnings.push(format!(
            "{}: openfiles={limit}: each worker uses at most {limit} of its files at a time, \
             but all of them stay open for the whole run; it does not limit file descriptors",
            setting.source
        ));
        Ok(Some(limit))
    }

    /// `zonemode=strided` and its zone sizes; without it they change nothing (as fio).
    pub(super) fn strided_zones(&self) -> Result<Option<StridedZones>, JobError> {
        if self.choice::<ZoneMode>(opt::ZONEMODE)? == ZoneMode::None {
            return Ok(None);
        }
        let size = |name| self.parse_defaulted(name, |text| units::parse_size(text, self.kb_base));
        let zonesize = size(opt::ZONESIZE)?;
        if zonesize == 0 {
            return Err(self.problem(
                "zonemode=strided needs the bytes per zone: set zonesize= (e.g. zonesize=16m)",
            ));
        }
        Ok(Some(StridedZones {
            size: zonesize,
            range: match size(opt::ZONERANGE)? {
                0 => zonesize,
                range => range,
            },
            skip: size(opt::ZONESKIP)?,
        }))
    }

    pub(super) fn file_service(&self) -> Result<FileService, JobError> {
        let chosen = self.choice_with_parameter(opt::FILE_SERVICE_TYPE)?;
        let (parameter, setting) = (chosen.parameter, chosen.setting);
        let ios = match parameter {
            Some(text) => text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    setting.invalid(format!("':{text}' is not a positive number of I/Os"))
                })?,
            None => 1,
        };
        Ok(match chosen.value {
            FileServiceWord::RoundRobin => FileService::RoundRobin { ios },
            FileServiceWord::Random => FileService::Random { ios },
            FileServiceWord::Sequential => {
                chosen.no_parameter()?;
                FileService::Sequential
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job, run};

    #[test]
    fn openfiles_caps_the_files_in_use_and_warns_that_all_stay_open() {
        assert_eq!(job(&[]).workload.open_files, None);
        let resolved = run(&["--name=t", "--size=1m", "--nrfiles=8", "--openfiles=2"]).unwrap();
        assert_eq!(resolved.jobs[0].workload.open_files, Some(2));
        assert_eq!(resolved.warnings.len(), 1);
        assert!(resolved.warnings[0].contains("does not limit file descriptors"));
        assert!(error(&["--name=t", "--size=1m", "--openfiles=0"]).contains("at least 1"));
    }

    #[test]
    fn zonemode_strided_takes_the_zone_sizes() {
        assert_eq!(job(&["--zonesize=16k"]).workload.zones, None);
        let spec = job(&["--zonemode=strided", "--zonesize=16k", "--zoneskip=32k"]);
        let zones = StridedZones {
            size: 16 * 1024,
            range: 16 * 1024,
            skip: 32 * 1024,
        };
        assert_eq!(spec.workload.zones, Some(zones));
        let spec = job(&["--zonemode=strided", "--zonesize=16k", "--zonerange=64k"]);
        assert_eq!(spec.workload.zones.map(|z| z.range), Some(64 * 1024));
        let missing = error(&["--name=t", "--size=1m", "--zonemode=strided"]);
        assert!(missing.contains("zonesize="), "{missing}");
        let zbd = error(&["--name=t", "--size=1m", "--zonemode=zbd", "--zonesize=1m"]);
        assert!(zbd.contains("zoned block devices"), "{zbd}");
    }

    #[test]
    fn percentage_random_and_file_service_type() {
        let spec = job(&[]);
        assert_eq!(spec.workload.percentage_random, [100; 3]);
        assert_eq!(
            spec.workload.file_service,
            FileService::RoundRobin { ios: 1 }
        );
        let spec = job(&["--percentage_random=80,20", "--file_service_type=random:4"]);
        assert_eq!(spec.workload.percentage_random, [80, 20, 20]);
        assert_eq!(spec.workload.file_service, FileService::Random { ios: 4 });
        let spec = job(&["--file_service_type=sequential"]);
        assert_eq!(spec.workload.file_service, FileService::Sequential);
        assert!(error(&["--name=t", "--size=1m", "--percentage_random=101"])
            .contains("percentage_random"));
        assert!(
            error(&["--name=t", "--size=1m", "--file_service_type=random:0"]).contains("positive")
        );
        assert!(
            error(&["--name=t", "--size=1m", "--file_service_type=zipf:1.1"])
                .contains("not supported by iolens")
        );
    }
}
