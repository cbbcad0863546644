//! What the workers do and in what order: the pattern (`rw`), block sizes, the random
//! generator and distribution, which file each I/O goes to, the buffer contents of writes
//! and the pacing (rate caps, think time).

use super::*;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::{Chosen, Layers, Setting};
use crate::job::options::opt;
use crate::units::{self, UnitError};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// fio's `rw=`: the pattern and which directions it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RwPattern {
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
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Self::RandRead | Self::RandWrite | Self::RandRw | Self::RandTrim | Self::RandTrimWrite
        )
    }
    pub fn reads(self) -> bool {
        matches!(
            self,
            Self::Read | Self::RandRead | Self::ReadWrite | Self::RandRw
        )
    }
    pub fn writes(self) -> bool {
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
    pub fn trims(self) -> bool {
        matches!(
            self,
            Self::Trim | Self::RandTrim | Self::TrimWrite | Self::RandTrimWrite
        )
    }
    /// `trimwrite` and `randtrimwrite`: each trim is followed by a write of its block.
    pub fn writes_after_trim(self) -> bool {
        matches!(self, Self::TrimWrite | Self::RandTrimWrite)
    }
    /// Which directions the pattern issues, indexed by `Ddir::index`.
    pub fn directions(self) -> [bool; DDIRS] {
        [self.reads(), self.writes(), self.trims()]
    }
}

/// Block sizes for one direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlockSizes {
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
    pub fn min(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { min, .. } => *min,
            Self::Split(v) => v.iter().map(|(b, _)| *b).min().unwrap_or(0),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            Self::Fixed(b) => *b,
            Self::Range { max, .. } => *max,
            Self::Split(v) => v.iter().map(|(b, _)| *b).max().unwrap_or(0),
        }
    }
}

/// fio's `random_distribution=`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Distribution {
    Random,
    Zipf(f64),
    Pareto(f64),
    /// Gaussian with the given sigma as a percentage of the region (fio's `normal:σ`).
    Normal(f64),
    /// `zoned:pct_access/pct_region:…` (both in percent, each list sums to 100).
    Zoned(Vec<(f64, f64)>),
    /// `sequence:2,0,1`: the random I/Os of each direction go to these blocks
    /// in turn, over and over; with `random_sequence_stride` each round moves on
    /// by as many blocks as the list has (2,0,1, 5,3,4, …) until it leaves the region.
    Sequence {
        blocks: Vec<u64>,
        stride: bool,
    },
}

/// fio's longest `random_distribution=sequence` list.
const SEQUENCE_MAX: usize = 64;

/// fio's parameters for `zipf`, `pareto` and `normal` given without one: θ 1.1,
/// h 0.2, and for `normal` no added deviation, which leaves the bell fio's mean
/// of 12 uniform draws makes: σ = 1/12 of the region.
const FIO_ZIPF_THETA: f64 = 1.1;
const FIO_PARETO_H: f64 = 0.2;
const FIO_BELL_SIGMA: f64 = 100.0 / 12.0;

/// A `random_distribution=` word; its `:parameter` makes the `Distribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DistributionWord {
    Random,
    Zipf,
    Pareto,
    Normal,
    Zoned,
    Sequence,
}

choice_words!(DistributionWord {
    "random" => DistributionWord::Random,
    "zipf" => DistributionWord::Zipf,
    "pareto" => DistributionWord::Pareto,
    "normal" => DistributionWord::Normal,
    "zoned" => DistributionWord::Zoned,
    "sequence" => DistributionWord::Sequence,
});

/// fio's `random_generator=`: how a uniform random pattern picks its blocks.
/// With the random map (no `norandommap`) the tausworthe kinds draw from iolens'
/// own seeded order; without it, from fio's generators (see workload/taus.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum RandomGenerator {
    /// Not given: fio's 32-bit tausworthe, or its 64-bit one for a region of 2^32
    /// blocks or more (fio switches there).
    #[default]
    Unset,
    /// fio's 32-bit tausworthe, given: kept even where its offsets must repeat.
    Tausworthe,
    Tausworthe64,
    /// fio's maximal-length shift register: each block once per pass, no random
    /// map, in fio's order.
    Lfsr,
}

impl RandomGenerator {
    /// Whether a region of `blocks` blocks draws from the 64-bit tausworthe.
    pub fn is_wide(self, blocks: u64) -> bool {
        match self {
            RandomGenerator::Unset => blocks > u64::from(u32::MAX),
            RandomGenerator::Tausworthe64 => true,
            RandomGenerator::Tausworthe | RandomGenerator::Lfsr => false,
        }
    }
}

choice_words!(RandomGenerator {
    "tausworthe" => RandomGenerator::Tausworthe,
    "lfsr" => RandomGenerator::Lfsr,
    "tausworthe64" => RandomGenerator::Tausworthe64,
});

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RateProcess {
    Linear,
    Poisson,
}

choice_words!(RateProcess {
    "linear" => RateProcess::Linear,
    "poisson" => RateProcess::Poisson,
});

/// fio's `thinktime_blocks_type=`: which I/Os `thinktime_blocks` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThinktimeCounts {
    Completed,
    Issued,
}

choice_words!(ThinktimeCounts {
    "complete" => ThinktimeCounts::Completed,
    "issue" => ThinktimeCounts::Issued,
});

/// What the workers do and in what order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
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

/// fio's `sprandom`: random write preconditioning. The target's physical
/// capacity (its size plus the over-provisioning) is written once in equal
/// regions; while a region is written, a share of its blocks is picked to be
/// written again in the next one, so each region ends with the share of stale
/// blocks a drive has at steady state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SprandomSpec {
    /// `spr_op`: the device's over-provisioning ratio, in (0, 1).
    pub over_provisioning: f64,
    /// `spr_num_regions`: at least 1.
    pub regions: u32,
    /// `spr_cs`: the device's cache in bytes; when not 0, a region's rewrites
    /// are held back until the next region's new writes are done.
    pub cache_size: u64,
}

impl SprandomSpec {
    /// fio 3.42's physical size of a target of `logical` bytes: the size plus
    /// the over-provisioning, rounded up to whole `block`s. The job writes this
    /// many bytes at most.
    pub fn physical_size(&self, logical: u64, block: u64) -> u64 {
        let size = logical + (logical as f64 * self.over_provisioning).ceil() as u64;
        size.next_multiple_of(block.max(1))
    }
}

impl WorkloadSpec {
    /// The block sizes of the directions the pattern uses.
    pub fn used_block_sizes(&self) -> impl Iterator<Item = &BlockSizes> {
        self.rw
            .directions()
            .into_iter()
            .zip(&self.bs)
            .filter(|(used, _)| *used)
            .map(|(_, bs)| bs)
    }
}

/// fio's `zonemode=strided`: the region is cut into zones of `range` bytes, the
/// next zone starting `skip` bytes after the previous one ends; each zone gets
/// `size` bytes of I/O before the next, and after the last fitting zone the
/// first comes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StridedZones {
    /// `zonesize`: bytes transferred in a zone per visit (> 0).
    pub size: u64,
    /// `zonerange`: the zone's length (`zonesize` when not given).
    pub range: u64,
    /// `zoneskip`: the gap between one zone's end and the next zone's start.
    pub skip: u64,
}

impl StridedZones {
    /// Distance from one zone's start to the next's.
    pub fn stride(&self) -> u64 {
        self.range + self.skip
    }
}

/// fio's `file_service_type`: which of a worker's files the next I/O goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileService {
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

/// Pacing: rate limits and think time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PacingSpec {
    /// Bytes per second per direction, 0 = unlimited.
    pub rate: [u64; DDIRS],
    /// I/Os per second per direction, 0 = unlimited.
    pub rate_iops: [u64; DDIRS],
    pub rate_process: RateProcess,
    pub thinktime: Duration,
    /// `thinktime_spin`: the first part of each think time is spent busy (≤ `thinktime`).
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
    /// `thinktime_blocks_type=issue`: `thinktime_blocks` counts issued I/Os, so the
    /// pause comes after that many are sent; false (`complete`) counts completed ones.
    #[serde(default)]
    pub thinktime_counts_issued: bool,
    /// fio's `flow`: token-based flow control between jobs; `None` without a weight.
    #[serde(default)]
    pub flow: Option<FlowSpec>,
}

/// fio's flow control: the jobs sharing a `flow_id` keep the I/Os they issue
/// in the ratio of their `flow` weights; one ahead of its share waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowSpec {
    /// `flow_id`.
    pub id: u32,
    /// `flow`: 1..=1000.
    pub weight: u32,
    /// `flow_sleep`: a job held back waits for its I/Os in flight, then this long,
    /// before it tries again (zero: it tries again at once).
    pub sleep: Duration,
}

/// fio's largest `flow` weight.
const FLOW_MAX_WEIGHT: u32 = 1000;

/// Buffer contents for writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferSpec {
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    /// 0..=100: share of each chunk that compresses well (zeros or the pattern).
    pub compress_percentage: u32,
    /// `buffer_compress_chunk`: bytes per random-then-fixed run (0: one run per buffer).
    #[serde(default = "default_compress_chunk")]
    pub compress_chunk: u64,
    /// `buffer_pattern`: bytes repeated over each buffer instead of random data.
    #[serde(default)]
    pub pattern: Option<Vec<u8>>,
    /// `dedupe_percentage`: share of writes that repeat an earlier write's contents.
    #[serde(default)]
    pub dedupe_percentage: u32,
}

impl BufferSpec {
    /// What the write buffers hold, in fio's option names: "zero_buffers",
    /// "buffer_compress_percentage=50", or "random data" for the default.
    pub fn describe(&self) -> String {
        let mut said = Vec::new();
        if self.zero_buffers {
            said.push("zero_buffers".to_string());
        }
        if let Some(pattern) = &self.pattern {
            said.push(format!("buffer_pattern ({} bytes repeated)", pattern.len()));
        }
        if self.compress_percentage > 0 {
            said.push(format!(
                "buffer_compress_percentage={}",
                self.compress_percentage
            ));
        }
        if self.dedupe_percentage > 0 {
            said.push(format!("dedupe_percentage={}", self.dedupe_percentage));
        }
        if said.is_empty() {
            said.push(if self.refill_buffers {
                "random data, refill_buffers".into()
            } else {
                "random data".into()
            });
        }
        said.join(", ")
    }
}

fn default_compress_chunk() -> u64 {
    512
}

/// The files of each of the job's workers: those named, else `nrfiles`.
fn file_count(target: &TargetSpec) -> usize {
    match target.filenames.len() {
        0 => target.nrfiles as usize,
        named => named,
    }
}

/// `random_distribution=sequence`: a listed block past a one-file region of
/// `size=` bytes is refused (fio fails the job at that block).
pub(crate) fn check_sequence(layers: &Layers, spec: &JobSpec) -> Result<(), JobError> {
    let Distribution::Sequence { blocks, .. } = &spec.workload.distribution else {
        return Ok(());
    };
    let (Some(SizeOrPercent::Bytes(size)), 1) = (spec.target.size, file_count(&spec.target)) else {
        return Ok(());
    };
    let Some(block_size) = spec.workload.used_block_sizes().map(|bs| bs.min()).min() else {
        return Ok(());
    };
    let region_blocks = size / block_size;
    match blocks.iter().find(|&&block| block >= region_blocks) {
        Some(block) => {
            let setting = layers
                .setting(opt::RANDOM_DISTRIBUTION)
                .expect("random_distribution has a default");
            Err(setting.invalid_with_hint(
                format!("block {block} is past the region, which has {region_blocks} blocks of {block_size} bytes"),
                format!("blocks below {region_blocks}, or a larger size="),
            ))
        }
        None => Ok(()),
    }
}

/// sprandom's limits that need the job's files: one file, and (where `size=`
/// gives the region) a cache smaller than a region, as fio refuses them.
pub(crate) fn check_sprandom(layers: &Layers, spec: &JobSpec) -> Result<(), JobError> {
    let Some(spr) = &spec.workload.sprandom else {
        return Ok(());
    };
    let files = file_count(&spec.target);
    if files != 1 {
        return Err(layers.problem(format!(
            "sprandom works on one file, this job has {files} (give one filename=, nrfiles=1)"
        )));
    }
    let Some(SizeOrPercent::Bytes(size)) = spec.target.size else {
        return Ok(());
    };
    let physical = spr.physical_size(size, spec.workload.bs[Ddir::Write.index()].min());
    let region = physical / u64::from(spr.regions);
    if spr.cache_size > region {
        let cache = layers.setting(opt::SPR_CS).expect("spr_cs has a default");
        return Err(cache.invalid_with_hint(
            format!(
                "the cache must be smaller than an sprandom region ({region} bytes with spr_num_regions={})",
                spr.regions
            ),
            format!(
                "a smaller spr_cs, or spr_num_regions={} at most",
                physical / spr.cache_size
            ),
        ));
    }
    Ok(())
}

/// `sequence:`'s block list: 1 to 64 whole numbers separated by commas.
fn parse_sequence(list: Option<&str>) -> Result<Vec<u64>, String> {
    let list = list.ok_or("sequence needs its blocks, e.g. sequence:2,0,1")?;
    let blocks = list
        .split(',')
        .map(|item| {
            let item = item.trim();
            match item.parse::<u64>() {
                Ok(block) if item.bytes().all(|b| b.is_ascii_digit()) => Ok(block),
                _ => Err(format!("'{item}' is not a block number (0 or more)")),
            }
        })
        .collect::<Result<Vec<u64>, String>>()?;
    if blocks.len() > SEQUENCE_MAX {
        return Err(format!(
            "a sequence has at most {SEQUENCE_MAX} blocks, this one {}",
            blocks.len()
        ));
    }
    Ok(blocks)
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

    /// `sprandom=1` and its `spr_*` options, refused as fio does where the job
    /// is not a random write, keeps a random map or picks another generator.
    fn sprandom(&self, rw: RwPattern) -> Result<Option<SprandomSpec>, JobError> {
        if !self.bool(opt::SPRANDOM)? {
            return Ok(None);
        }
        let setting = self.setting(opt::SPRANDOM).expect("sprandom has a default");
        if !(rw.is_random() && rw.writes()) {
            return Err(self.problem(
                "sprandom needs a random write (rw=randwrite) with random_generator=lfsr and norandommap=1",
            ));
        }
        if rw.reads() || rw.writes_after_trim() {
            return Err(JobError::Unsupported {
                at: setting.source.clone(),
                option: setting.def.name,
                value: setting.text.to_string(),
                reason: "sprandom is implemented for jobs that only write",
                instead: "rw=randwrite",
            });
        }
        if let Some(generator) = self.given(opt::RANDOM_GENERATOR) {
            if self.choice::<RandomGenerator>(opt::RANDOM_GENERATOR)? != RandomGenerator::Lfsr {
                return Err(generator.invalid_with_hint(
                    "sprandom needs random_generator=lfsr",
                    "drop random_generator, sprandom sets lfsr",
                ));
            }
        }
        if let Some(map) = self.given(opt::NORANDOMMAP) {
            if !self.bool(opt::NORANDOMMAP)? {
                return Err(map.invalid_with_hint(
                    "sprandom needs norandommap=1",
                    "drop norandommap, sprandom sets it",
                ));
            }
        }
        let op = self.setting(opt::SPR_OP).expect("spr_op has a default");
        let over_provisioning =
            match units::parse_float_list(op.text).map_err(|e| op.invalid(e))?[..] {
                [ratio] if ratio > 0.0 && ratio < 1.0 => ratio,
                _ => {
                    return Err(op
                        .invalid("the over-provisioning ratio must be one number between 0 and 1"))
                }
            };
        Ok(Some(SprandomSpec {
            over_provisioning,
            regions: self.count_u32(opt::SPR_NUM_REGIONS, 1)?,
            cache_size: self
                .parse(opt::SPR_CS, |text| units::parse_size(text, self.kb_base))?
                .expect("spr_cs has a default"),
        }))
    }

    /// `openfiles`: a cap on the files a worker uses at a time. fio closes and reopens
    /// files to stay under it; here every file stays open (opened once before the
    /// run), so a user counting on it to limit descriptors is told. The file operation
    /// engines hold one descriptor for all their names, so they need no warning.
    fn open_files(&self, warnings: &mut Vec<String>) -> Result<Option<u32>, JobError> {
        let Some(setting) = self.given(opt::OPENFILES) else {
            return Ok(None);
        };
        let limit = self.count_u32(opt::OPENFILES, 1)?;
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
    fn strided_zones(&self) -> Result<Option<StridedZones>, JobError> {
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

    fn file_service(&self) -> Result<FileService, JobError> {
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

    fn distribution(&self) -> Result<Distribution, JobError> {
        let chosen = self.choice_with_parameter(opt::RANDOM_DISTRIBUTION)?;
        let (word, parameter, setting) = (chosen.word, chosen.parameter, chosen.setting);
        // without a :value, fio's default for the distribution
        let number = |default: f64, test: fn(f64) -> bool, range: &str| {
            let Some(text) = parameter else {
                return Ok(default);
            };
            text.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| test(*v))
                .ok_or_else(|| setting.invalid(format!("{word} parameter must be {range}")))
        };
        Ok(match chosen.value {
            DistributionWord::Random => {
                chosen.no_parameter()?;
                Distribution::Random
            }
            DistributionWord::Zipf => Distribution::Zipf(number(
                FIO_ZIPF_THETA,
                |v| v > 0.0 && v != 1.0,
                "above 0 and not 1",
            )?),
            DistributionWord::Pareto => Distribution::Pareto(number(
                FIO_PARETO_H,
                |v| v > 0.0 && v < 1.0,
                "between 0 and 1",
            )?),
            DistributionWord::Normal => {
                let sigma = number(0.0, |v| (0.0..100.0).contains(&v), "in [0, 100)")?;
                // fio's deviation 0 leaves the bell its averaging of draws makes
                Distribution::Normal(if sigma == 0.0 { FIO_BELL_SIGMA } else { sigma })
            }
            DistributionWord::Zoned => Distribution::Zoned(
                parse_zones(parameter.unwrap_or_default()).map_err(|e| setting.invalid(e))?,
            ),
            DistributionWord::Sequence => Distribution::Sequence {
                blocks: parse_sequence(parameter).map_err(|e| {
                    setting.invalid_with_hint(e, "e.g. random_distribution=sequence:2,0,1")
                })?,
                stride: self.bool(opt::RANDOM_SEQUENCE_STRIDE)?,
            },
        })
    }

    pub(crate) fn pacing(&self) -> Result<PacingSpec, JobError> {
        let rate = self.per_direction(opt::RATE, |t| units::parse_size(t, self.kb_base))?;
        let rate_iops =
            self.per_direction(opt::RATE_IOPS, |t| units::parse_count(t, self.kb_base))?;
        let rate_process = self.choice(opt::RATE_PROCESS)?;
        Ok(PacingSpec {
            rate: rate.map(Option::unwrap_or_default),
            rate_iops: rate_iops.map(Option::unwrap_or_default),
            rate_process,
            thinktime: self.time(opt::THINKTIME)?.unwrap_or_default(),
            thinktime_spin: self.time(opt::THINKTIME_SPIN)?.unwrap_or_default(),
            thinktime_blocks: self.count_u32(opt::THINKTIME_BLOCKS, 1)?,
            // Unlike the other plain choices, a `:parameter` here is accepted and ignored.
            thinktime_counts_issued: self
                .choice_with_parameter::<ThinktimeCounts>(opt::THINKTIME_BLOCKS_TYPE)?
                .value
                == ThinktimeCounts::Issued,
            flow: self.flow()?,
        })
    }

    fn flow(&self) -> Result<Option<FlowSpec>, JobError> {
        let weight = self.parse_defaulted(opt::FLOW, |text| {
            match units::parse_count(text, self.kb_base)? {
                weight if weight <= u64::from(FLOW_MAX_WEIGHT) => Ok(weight as u32),
                _ => Err(UnitError::Invalid(format!(
                    "must be at most {FLOW_MAX_WEIGHT}"
                ))),
            }
        })?;
        if weight == 0 {
            return Ok(None);
        }
        Ok(Some(FlowSpec {
            id: self.count_u32(opt::FLOW_ID, 0)?,
            weight,
            sleep: Duration::from_micros(self.count_u32(opt::FLOW_SLEEP, 0)?.into()),
        }))
    }

    pub(crate) fn buffers(&self) -> Result<BufferSpec, JobError> {
        Ok(BufferSpec {
            zero_buffers: self.bool(opt::ZERO_BUFFERS)?,
            refill_buffers: self.bool(opt::REFILL_BUFFERS)?,
            scramble_buffers: self.bool(opt::SCRAMBLE_BUFFERS)?,
            compress_percentage: self.percent(opt::BUFFER_COMPRESS_PERCENTAGE)?,
            compress_chunk: self.parse_defaulted(opt::BUFFER_COMPRESS_CHUNK, |t| {
                units::parse_size(t, self.kb_base)
            })?,
            pattern: self.parse(opt::BUFFER_PATTERN, parse_pattern)?,
            dedupe_percentage: self.percent(opt::DEDUPE_PERCENTAGE)?,
        })
    }
}

/// `zoned:60/10:30/20:10/70`: (percent of accesses, percent of the region) pairs; a blank
/// region (`20/`) takes what the others leave of 100, as a blank bssplit percentage does.
fn parse_zones(text: &str) -> Result<Vec<(f64, f64)>, UnitError> {
    let mut zones = text
        .split(':')
        .map(|zone| {
            let (access, region) = zone
                .split_once('/')
                .ok_or_else(|| UnitError::Invalid(format!("zone '{zone}' is not access/region")))?;
            let number = |text: &str| {
                text.trim()
                    .parse::<f64>()
                    .map_err(|_| UnitError::Invalid(format!("'{text}' is not a number")))
            };
            let region = match region.trim() {
                "" => f64::NAN,
                region => number(region)?,
            };
            Ok((number(access)?, region))
        })
        .collect::<Result<Vec<_>, UnitError>>()?;
    let blanks = zones.iter().filter(|z| z.1.is_nan()).count();
    if blanks > 0 {
        let given: f64 = zones.iter().map(|z| z.1).filter(|r| !r.is_nan()).sum();
        let share = (100.0 - given) / blanks as f64;
        zones
            .iter_mut()
            .filter(|z| z.1.is_nan())
            .for_each(|z| z.1 = share);
    }
    let access: f64 = zones.iter().map(|z| z.0).sum();
    let region: f64 = zones.iter().map(|z| z.1).sum();
    if (access - 100.0).abs() > 1e-6 || (region - 100.0).abs() > 1e-6 {
        return Err(UnitError::Invalid(
            "access and region percentages must each add up to 100".to_string(),
        ));
    }
    Ok(zones)
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

    #[test]
    fn thinktime_blocks_type_picks_what_is_counted() {
        assert!(!job(&[]).pacing.thinktime_counts_issued);
        let issue = job(&["--thinktime_blocks_type=issue"]).pacing;
        assert!(issue.thinktime_counts_issued);
    }

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

    #[test]
    fn flow_options() {
        assert_eq!(
            job(&[]).pacing.flow,
            None,
            "expected no flow control by default"
        );
        assert_eq!(
            job(&["--flow_id=3"]).pacing.flow,
            None,
            "expected no flow without a weight"
        );
        assert_eq!(
            job(&["--flow=5", "--flow_id=3", "--flow_sleep=100"])
                .pacing
                .flow,
            Some(FlowSpec {
                id: 3,
                weight: 5,
                sleep: Duration::from_micros(100),
            })
        );
        let refused = error(&["--name=a", "--size=1m", "--flow=1001"]);
        assert!(
            refused.contains("flow=1001") && refused.contains("at most 1000"),
            "expected fio's limit named, saw: {refused}"
        );
    }

    #[test]
    fn a_sequence_distribution_reads_its_blocks_and_stride() {
        let distribution = |extra: &[&str]| job(extra).workload.distribution;
        assert_eq!(
            distribution(&["--random_distribution=sequence:2, 0,1"]),
            Distribution::Sequence {
                blocks: vec![2, 0, 1],
                stride: false
            },
            "expected the listed blocks, no stride"
        );
        assert_eq!(
            distribution(&[
                "--random_distribution=sequence:7",
                "--random_sequence_stride=1"
            ]),
            Distribution::Sequence {
                blocks: vec![7],
                stride: true
            },
            "expected the stride"
        );
        let sixty_five = vec!["1"; 65].join(",");
        for (list, words) in [
            ("sequence", "sequence:2,0,1"),
            ("sequence:1,,2", "'' is not a block number"),
            ("sequence:1,-2", "'-2' is not a block number"),
            ("sequence:1,x", "'x' is not a block number"),
            (&format!("sequence:{sixty_five}"), "at most 64 blocks"),
        ] {
            let said = error(&[
                "--name=t",
                "--size=1m",
                &format!("--random_distribution={list}"),
            ]);
            assert!(
                said.contains(words),
                "expected random_distribution={list} refused naming {words}, saw: {said}"
            );
        }
        let said = error(&[
            "--name=t",
            "--size=48k",
            "--random_distribution=sequence:2,0,12",
        ]);
        assert!(
            said.contains("block 12 is past the region, which has 12 blocks"),
            "expected a block past a 12-block region refused, saw: {said}"
        );
    }

    #[test]
    fn sprandom_sets_lfsr_and_norandommap_and_reads_its_options() {
        let w = job(&["--rw=randwrite", "--sprandom=1"]).workload;
        assert_eq!(
            (w.random_generator, w.randommap, w.sprandom),
            (
                RandomGenerator::Lfsr,
                false,
                Some(SprandomSpec {
                    over_provisioning: 0.15,
                    regions: 100,
                    cache_size: 0
                })
            ),
            "expected sprandom to set lfsr, no random map and fio's defaults"
        );
        let w = job(&[
            "--rw=randwrite",
            "--sprandom=1",
            "--spr_op=0.28",
            "--spr_num_regions=7",
            "--spr_cs=32k",
            "--random_generator=lfsr",
            "--norandommap=1",
        ])
        .workload;
        assert_eq!(
            w.sprandom,
            Some(SprandomSpec {
                over_provisioning: 0.28,
                regions: 7,
                cache_size: 32 << 10
            }),
            "expected the spr_* options as given"
        );
        assert_eq!(
            job(&["--rw=randwrite", "--sprandom=0"]).workload.sprandom,
            None,
            "expected sprandom=0 to leave it off"
        );
    }

    #[test]
    fn sprandom_is_refused_where_fio_refuses_it() {
        let refused = |extra: &[&str], words: &[&str]| {
            let mut args = vec!["--name=t", "--filename=f", "--size=32m", "--sprandom=1"];
            args.extend_from_slice(extra);
            let said = error(&args);
            assert!(
                words.iter().all(|w| said.contains(w)) && said.lines().count() == 1,
                "expected {extra:?} refused in one line naming {words:?}, saw: {said}"
            );
        };
        refused(&["--rw=randread"], &["sprandom", "rw=randwrite"]);
        refused(&["--rw=write"], &["sprandom", "rw=randwrite"]);
        refused(
            &["--rw=randrw"],
            &["sprandom", "not supported", "rw=randwrite"],
        );
        refused(
            &["--rw=randwrite", "--random_generator=tausworthe"],
            &["random_generator=tausworthe", "lfsr"],
        );
        refused(
            &["--rw=randwrite", "--norandommap=0"],
            &["norandommap=0", "norandommap=1"],
        );
        refused(
            &["--rw=randwrite", "--spr_op=x"],
            &["spr_op=x", "not a number"],
        );
        for op in ["0", "1", "1.5", "-0.1", "0.1:0.2"] {
            refused(
                &["--rw=randwrite", &format!("--spr_op={op}")],
                &["spr_op", "between 0 and 1"],
            );
        }
        refused(
            &["--rw=randwrite", "--spr_num_regions=0"],
            &["spr_num_regions=0", "at least 1"],
        );
        refused(
            &["--rw=randwrite", "--nrfiles=2", "--filename="],
            &["sprandom", "one file"],
        );
        refused(
            &["--rw=randwrite", "--filename=a:b"],
            &["sprandom", "one file"],
        );
        // fio's t/sprandom.py: 32M with spr_op=0.10 in 50 regions is 738263-byte
        // regions; a 32M cache leaves room for 1 region
        refused(
            &[
                "--rw=randwrite",
                "--spr_op=0.10",
                "--spr_num_regions=50",
                "--spr_cs=32M",
            ],
            &["spr_cs=32M", "738263", "spr_num_regions=1 at most"],
        );
        refused(
            &[
                "--rw=randwrite",
                "--spr_op=0.10",
                "--spr_num_regions=2000",
                "--spr_cs=32K",
            ],
            &["spr_cs=32K", "spr_num_regions=1126 at most"],
        );
    }

    #[test]
    fn random_generator_words() {
        let generator = |v: &str| {
            job(&[&format!("--random_generator={v}")])
                .workload
                .random_generator
        };
        assert_eq!(generator("lfsr"), RandomGenerator::Lfsr);
        assert_eq!(generator("tausworthe"), RandomGenerator::Tausworthe);
        assert_eq!(generator("tausworthe64"), RandomGenerator::Tausworthe64);
        let unset = job(&[]).workload.random_generator;
        assert_eq!(unset, RandomGenerator::Unset);
        assert!(
            !unset.is_wide(u64::from(u32::MAX)) && unset.is_wide(1 << 32),
            "expected fio's default to switch to 64 bits above 2^32 - 1 blocks"
        );
        assert!(
            !RandomGenerator::Tausworthe.is_wide(1 << 40),
            "expected a given tausworthe to stay 32-bit"
        );
        assert!(
            error(&["--name=a", "--size=1m", "--random_generator=mt"]).contains("random_generator"),
            "expected an unknown generator to be refused naming the option"
        );
    }

    #[test]
    fn random_distribution() {
        let d = |v: &str| {
            job(&[&format!("--random_distribution={v}")])
                .workload
                .distribution
        };
        assert_eq!(d("zipf:1.2"), Distribution::Zipf(1.2));
        assert_eq!(d("pareto:0.5"), Distribution::Pareto(0.5));
        assert_eq!(d("normal:10"), Distribution::Normal(10.0));
        assert_eq!(
            d("zoned:60/10:40/90"),
            Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])
        );
        // fio's defaults where the parameter is left out
        assert_eq!(
            d("zipf"),
            Distribution::Zipf(1.1),
            "expected fio's zipf default"
        );
        assert_eq!(
            d("pareto"),
            Distribution::Pareto(0.2),
            "expected fio's pareto default"
        );
        assert_eq!(
            d("normal"),
            Distribution::Normal(100.0 / 12.0),
            "expected fio's bell"
        );
        assert_eq!(
            d("normal:0"),
            d("normal"),
            "expected normal:0 to be fio's bell"
        );
        assert!(run(&["--name=a", "--size=1m", "--random_distribution=normal:100"]).is_err());
        assert!(run(&["--name=a", "--size=1m", "--random_distribution=pareto:2"]).is_err());
        assert!(run(&["--name=a", "--size=1m", "--random_distribution=zoned:60/10"]).is_err());
        assert_eq!(
            d("zoned:50/5:30/15:20/"),
            Distribution::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
        );
    }

    #[test]
    fn pacing_options() {
        let spec = job(&[
            "--rate=,5m",
            "--rate_iops=100",
            "--rate_process=poisson",
            "--thinktime=10",
            "--thinktime_blocks=4",
        ]);
        let p = &spec.pacing;
        assert_eq!(p.rate, [0, 5 << 20, 5 << 20]);
        assert_eq!(p.rate_iops, [100; 3]);
        assert_eq!(p.rate_process, RateProcess::Poisson);
        assert_eq!(p.thinktime, Duration::from_micros(10));
        assert_eq!(p.thinktime_blocks, 4);
    }

    #[test]
    fn buffer_options() {
        let spec = job(&[
            "--zero_buffers",
            "--refill_buffers",
            "--scramble_buffers=0",
            "--buffer_compress_percentage=40",
        ]);
        let b = &spec.buffers;
        assert!(b.zero_buffers && b.refill_buffers && !b.scramble_buffers);
        assert_eq!(b.compress_percentage, 40);
    }
}
