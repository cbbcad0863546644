//! What the workers do and in what order: the pattern (`rw`) with its modifier, the
//! read/write mix and the block sizes; the random generator, the file and zone choice,
//! the pacing and the write buffers are in the sibling modules.

use super::*;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::{Chosen, Layers, Setting};
use crate::job::options::opt;
use crate::units::{self, UnitError};
use serde::{Deserialize, Serialize};

mod placement;
mod random;
pub(crate) use placement::*;
pub(crate) use random::*;

/// fio's `rw=`: the pattern and which directions it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum RwPattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// `rw` / `readwrite`: sequential mixed.
    ReadWrite,
    RandRw,
    Trim,
    RandTrim,
    /// Sequential: trim a block, then write the same block.
    TrimWrite,
    /// Random: trim a block, then write the same block.
    RandTrimWrite,
}

choice_words!(RwPattern {
    "read" => RwPattern::Read,
    "write" => RwPattern::Write,
    "randread" => RwPattern::RandRead,
    "randwrite" => RwPattern::RandWrite,
    "rw" => RwPattern::ReadWrite,
    "readwrite" => RwPattern::ReadWrite,
    "randrw" => RwPattern::RandRw,
    "trim" => RwPattern::Trim,
    "randtrim" => RwPattern::RandTrim,
    "trimwrite" => RwPattern::TrimWrite,
    "randtrimwrite" => RwPattern::RandTrimWrite,
});

/// fio's `rw_sequencer=`: what a random pattern's I/Os between random offsets do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RwSequencer {
    /// Continue after the last I/O.
    Sequential,
    /// Repeat the last I/O's offset.
    Identical,
}

choice_words!(RwSequencer {
    "sequential" => RwSequencer::Sequential,
    "identical" => RwSequencer::Identical,
});

impl RwPattern {
    pub(crate) fn is_random(self) -> bool {
        matches!(
            self,
            Self::RandRead | Self::RandWrite | Self::RandRw | Self::RandTrim | Self::RandTrimWrite
        )
    }
    pub(crate) fn reads(self) -> bool {
        matches!(
            self,
            Self::Read | Self::RandRead | Self::ReadWrite | Self::RandRw
        )
    }
    pub(crate) fn writes(self) -> bool {
        matches!(
            self,
            Self::Write
                | Self::RandWrite
                | Self::ReadWrite
                | Self::RandRw
                | Self::TrimWrite
                | Self::RandTrimWrite
        )
    }
    pub(crate) fn trims(self) -> bool {
        matches!(
            self,
            Self::Trim | Self::RandTrim | Self::TrimWrite | Self::RandTrimWrite
        )
    }
    /// `trimwrite` and `randtrimwrite`: each trim is followed by a write of its block.
    pub(crate) fn writes_after_trim(self) -> bool {
        matches!(self, Self::TrimWrite | Self::RandTrimWrite)
    }
    /// Which directions the pattern issues, indexed by `Ddir::index`.
    pub(crate) fn directions(self) -> [bool; DDIRS] {
        [self.reads(), self.writes(), self.trims()]
    }
}

/// Block sizes for one direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum BlockSizes {
    Fixed(u64),
    /// `bsrange=min-max`: uniformly chosen, multiples of `min` (as fio).
    Range {
        min: u64,
        max: u64,
    },
    /// `bssplit=4k/50:64k/50`: (size, percent); percentages sum to 100.
    Split(Vec<(u64, u32)>),
}

impl BlockSizes {
    pub(crate) fn min(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, .. } => *min,
            Self::Split(v) => v.iter().map(|(b, _)| *b).min().unwrap_or(0),
        }
    }
    pub(crate) fn max(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { max, .. } => *max,
            Self::Split(v) => v.iter().map(|(b, _)| *b).max().unwrap_or(0),
        }
    }
}

/// What the workers do and in what order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorkloadSpec {
    pub rw: RwPattern,
    /// The `:N` modifier of `rw=`: sequential jobs skip N bytes after each I/O
    /// (fio's `rw=write:4k`; 0 = no holes), random jobs take N I/Os at consecutive
    /// offsets before a new random offset (0 or 1 = a new offset every I/O).
    pub rw_modifier: u64,
    /// `rw_sequencer=identical`: in random patterns, the I/Os that are not at a new
    /// random offset (the rest of an `rw=randread:N` run, or `percentage_random`'s
    /// share) repeat the previous offset instead of continuing after it.
    pub repeat_offsets: bool,
    /// Percentage of reads in mixed workloads (0..=100).
    pub rwmixread: u32,
    /// Block sizes per direction [read, write, trim].
    pub bs: [BlockSizes; DDIRS],
    /// Offsets are multiples of this per direction (default: the minimum block size).
    pub blockalign: [u64; DDIRS],
    pub randommap: bool,
    /// True: seed the generators from `randseed` (fio's default, or any explicit `randseed=`).
    /// False: seed from entropy, so each run differs.
    pub randrepeat: bool,
    pub randseed: u64,
    /// `randseed=` with `randrepeat=0`: only then does fio 3.33 seed its random
    /// offsets from `randseed` (otherwise from a constant and the worker's number).
    #[serde(default)]
    pub offsets_from_randseed: bool,
    #[serde(default)]
    pub random_generator: RandomGenerator,
    pub distribution: Distribution,
    /// `percentage_random` per direction: in random patterns, the share of I/Os at a
    /// random offset; the others continue where the previous I/O ended (100 = all random).
    pub percentage_random: [u32; DDIRS],
    pub file_service: FileService,
    /// `openfiles`: how many of a worker's files it uses at a time (`None`: all);
    /// the others wait until one is done. Every file stays open all the same.
    #[serde(default)]
    pub open_files: Option<u32>,
    /// `zonemode=strided`: I/O stays in one zone at a time; `None` for `zonemode=none`.
    #[serde(default)]
    pub zones: Option<StridedZones>,
    /// `sprandom=1`: the writes precondition the target region by region.
    #[serde(default)]
    pub sprandom: Option<SprandomSpec>,
}

impl WorkloadSpec {
    /// The block sizes of the directions the pattern uses.
    pub(crate) fn used_block_sizes(&self) -> impl Iterator<Item = &BlockSizes> {
        self.rw
            .directions()
            .into_iter()
            .zip(&self.bs)
            .filter(|(used, _)| *used)
            .map(|(_, bs)| bs)
    }
}

impl Layers<'_> {
    pub(crate) fn workload(&self, warnings: &mut Vec<String>) -> Result<WorkloadSpec, JobError> {
        let Chosen {
            value: rw,
            parameter: modifier,
            setting,
            ..
        } = self.choice_with_parameter::<RwPattern>(opt::RW)?;
        // Without `:N`, sequential jobs add no hole and random jobs seek on every I/O.
        let rw_modifier = match modifier {
            Some(text) if text.trim_start().starts_with('-') => {
                return Err(JobError::Unsupported {
                    at: setting.source.clone(),
                    option: setting.def.name,
                    value: setting.text.to_string(),
                    reason: "going backwards through the file is not implemented",
                    instead: "a positive :N or rw=randread",
                })
            }
            Some(text) => units::parse_size(text, self.kb_base).map_err(|e| setting.invalid(e))?,
            None => u64::from(rw.is_random()),
        };
        let sequencer: RwSequencer = self.choice(opt::RW_SEQUENCER)?;
        let bs = self.block_sizes()?;
        let align = self.per_direction(opt::BLOCKALIGN, |t| self.nonzero_size(t))?;
        let randseed = self.given(opt::RANDSEED);
        let sprandom = self.sprandom(rw)?;
        Ok(WorkloadSpec {
            rw,
            rw_modifier,
            repeat_offsets: sequencer == RwSequencer::Identical,
            rwmixread: self.rwmixread()?,
            blockalign: Ddir::ALL.map(|d| align[d.index()].unwrap_or(bs[d.index()].min())),
            bs,
            // sprandom picks each block from fio's register, without a random map
            randommap: sprandom.is_none() && !self.bool(opt::NORANDOMMAP)?,
            // An explicit seed makes the sequence repeatable whatever randrepeat says (as fio).
            randrepeat: self.bool(opt::RANDREPEAT)? || randseed.is_some(),
            randseed: self.count(opt::RANDSEED)?.expect("randseed has a default"),
            offsets_from_randseed: randseed.is_some() && !self.bool(opt::RANDREPEAT)?,
            random_generator: match sprandom {
                Some(_) => RandomGenerator::Lfsr,
                None if self.given(opt::RANDOM_GENERATOR).is_some() => {
                    self.choice(opt::RANDOM_GENERATOR)?
                }
                None => RandomGenerator::Unset,
            },
            distribution: self.distribution()?,
            percentage_random: self
                .per_direction(opt::PERCENTAGE_RANDOM, units::parse_percent_number)?
                .map(|side| side.unwrap_or(100)),
            file_service: self.file_service()?,
            open_files: self.open_files(warnings)?,
            zones: self.strided_zones()?,
            sprandom,
        })
    }

    /// Per direction, `bssplit` wins over `bsrange`, which wins over `bs` (as fio).
    fn block_sizes(&self) -> Result<[BlockSizes; DDIRS], JobError> {
        let fixed = self.per_direction(opt::BS, |t| self.nonzero_size(t))?;
        let ranges = self.per_direction(opt::BSRANGE, |text| {
            let (min, max) = units::parse_range(text, self.kb_base)?;
            match (min, max) {
                (0, _) => Err(UnitError::Invalid("must be at least 1 byte".to_string())),
                (min, max) if min > max => Err(UnitError::Invalid(format!(
                    "minimum {min} is larger than maximum {max}"
                ))),
                (min, max) => Ok(BlockSizes::Range { min, max }),
            }
        })?;
        let splits = self.per_direction(opt::BSSPLIT, |text| {
            let split = units::parse_bssplit(text, self.kb_base)?;
            match split.iter().any(|(size, _)| *size == 0) {
                true => Err(UnitError::Invalid(
                    "block sizes must be at least 1 byte".into(),
                )),
                false => Ok(BlockSizes::Split(split)),
            }
        })?;
        let mut ranges = ranges.into_iter();
        let mut fixed = fixed.into_iter();
        Ok(splits.map(|split| {
            let (range, fixed) = (ranges.next().flatten(), fixed.next().flatten());
            split
                .or(range)
                .unwrap_or_else(|| BlockSizes::Fixed(fixed.expect("bs has a default")))
        }))
    }

    fn rwmixread(&self) -> Result<u32, JobError> {
        let parse = |s: Setting| units::parse_percent_number(s.text).map_err(|e| s.invalid(e));
        match self.pair(opt::RWMIXREAD, opt::RWMIXWRITE) {
            (Some(read), Some(write)) => {
                let (r, w) = (parse(read)?, parse(write)?);
                if r + w != 100 {
                    return Err(write.invalid_with_hint(
                        format!(
                            "rwmixread={r} and rwmixwrite={w} add up to {}, not 100",
                            r + w
                        ),
                        "set only one of them",
                    ));
                }
                Ok(r)
            }
            (Some(read), None) => parse(read),
            (None, Some(write)) => Ok(100 - parse(write)?),
            (None, None) => self.percent(opt::RWMIXREAD),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job, run};

    #[test]
    fn trim_patterns_are_accepted() {
        for (word, rw) in [
            ("trim", RwPattern::Trim),
            ("randtrim", RwPattern::RandTrim),
            ("trimwrite", RwPattern::TrimWrite),
        ] {
            let spec = job(&[&format!("--rw={word}")]);
            assert_eq!(spec.workload.rw, rw);
            assert!(spec.workload.rw.trims());
        }
    }

    #[test]
    fn rw_with_modifier() {
        let spec = job(&["--readwrite=randrw:8"]);
        assert_eq!(
            (spec.workload.rw, spec.workload.rw_modifier),
            (RwPattern::RandRw, 8)
        );
        let spec = job(&["--rw=write:4k"]);
        assert_eq!(
            (spec.workload.rw, spec.workload.rw_modifier),
            (RwPattern::Write, 4096)
        );
        assert_eq!(job(&["--rw=randread"]).workload.rw_modifier, 1);
        assert!(!job(&["--rw=randread:8"]).workload.repeat_offsets);
        let unified = |mode: &str| {
            job(&[&format!("--unified_rw_reporting={mode}")])
                .measure
                .unified_rw
        };
        assert_eq!(unified("none"), UnifiedRw::Separate);
        assert_eq!(unified("1"), UnifiedRw::Mixed);
        assert_eq!(unified("both"), UnifiedRw::Both);
        assert!(
            job(&["--rw=randread:8", "--rw_sequencer=identical"])
                .workload
                .repeat_offsets
        );
        assert!(error(&["--name=t", "--size=1m", "--rw_sequencer=backwards"]).contains("unknown"));
        assert_eq!(job(&["--rw=rw"]).workload.rw, RwPattern::ReadWrite);
        assert_eq!(job(&["--rw=randwrite"]).workload.rw, RwPattern::RandWrite);
    }

    #[test]
    fn rwmix_options_set_each_other() {
        assert_eq!(job(&["--rwmixread=70"]).workload.rwmixread, 70);
        assert_eq!(job(&["--rwmixwrite=20"]).workload.rwmixread, 80);
        assert_eq!(
            job(&["--rwmixread=70", "--rwmixwrite=30"])
                .workload
                .rwmixread,
            70
        );
        let resolved = run(&["--rwmixread=70", "--name=a", "--size=1m", "--rwmixwrite=10"]);
        assert_eq!(resolved.unwrap().jobs[0].workload.rwmixread, 90);
        assert_eq!(
            error(&["--name=a", "--size=1m", "--rwmixread=70", "--rwmixwrite=20"]),
            "command line argument 4: rwmixwrite=20: rwmixread=70 and rwmixwrite=20 add up to \
             90, not 100 (set only one of them)"
        );
    }

    #[test]
    fn bsrange_bssplit_blockalign() {
        let spec = job(&["--blocksize_range=1k-4k,8k:16k", "--ba=512"]);
        assert_eq!(
            spec.workload.bs,
            [
                BlockSizes::Range {
                    min: 1024,
                    max: 4096
                },
                BlockSizes::Range {
                    min: 8192,
                    max: 16384
                },
                BlockSizes::Range {
                    min: 8192,
                    max: 16384
                }
            ]
        );
        assert_eq!(spec.workload.blockalign, [512; 3]);
        let spec = job(&["--bssplit=4k/50:64k/", "--bs=8k"]);
        assert_eq!(
            spec.workload.bs[0],
            BlockSizes::Split(vec![(4096, 50), (65536, 50)])
        );
        assert_eq!(spec.workload.blockalign, [4096; 3]);
        assert!(
            error(&["--name=a", "--size=1m", "--bsrange=8k-4k"]).contains("larger than maximum")
        );
        assert!(
            error(&["--name=a", "--size=1m", "--bssplit=4k/60:8k/60"]).contains("more than 100")
        );
    }

    #[test]
    fn random_options() {
        let spec = job(&["--norandommap", "--randrepeat=0", "--randseed=42"]);
        assert!(!spec.workload.randommap);
        assert_eq!(spec.workload.randseed, 42);
        assert!(spec.workload.randrepeat, "an explicit seed is repeatable");
        assert!(!job(&["--randrepeat=0"]).workload.randrepeat);
        assert!(
            spec.workload.offsets_from_randseed,
            "expected randseed with randrepeat=0 to seed the offsets as fio 3.33 does"
        );
        assert!(
            !job(&["--randseed=42"]).workload.offsets_from_randseed,
            "expected randseed alone to leave fio 3.33's offset seed at its constant"
        );
    }
}
