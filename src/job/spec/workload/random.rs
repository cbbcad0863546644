//! Where a random pattern puts its I/Os: the distribution (`random_distribution`),
//! the generator (`random_generator`) and sprandom preconditioning, with the checks
//! that need the whole job.

use super::*;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use crate::units::{self, UnitError};
use serde::{Deserialize, Serialize};

/// fio's `random_distribution=`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum Distribution {
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
pub(crate) enum RandomGenerator {
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
    pub(crate) fn is_wide(self, blocks: u64) -> bool {
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

/// fio's `sprandom`: random write preconditioning. The target's physical
/// capacity (its size plus the over-provisioning) is written once in equal
/// regions; while a region is written, a share of its blocks is picked to be
/// written again in the next one, so each region ends with the share of stale
/// blocks a drive has at steady state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct SprandomSpec {
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
    pub(crate) fn physical_size(&self, logical: u64, block: u64) -> u64 {
        let size = logical + (logical as f64 * self.over_provisioning).ceil() as u64;
        size.next_multiple_of(block.max(1))
    }
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
fn parse_sequence(list: Option<&str>) -> Result<Vec<u64>, SequenceError> {
    let list = list.ok_or(SequenceError::NoBlocks)?;
    let blocks = list
        .split(',')
        .map(|item| {
            let item = item.trim();
            match item.parse::<u64>() {
                Ok(block) if item.bytes().all(|b| b.is_ascii_digit()) => Ok(block),
                _ => Err(SequenceError::NotABlock(item.into())),
            }
        })
        .collect::<Result<Vec<u64>, _>>()?;
    if blocks.len() > SEQUENCE_MAX {
        return Err(SequenceError::TooLong(blocks.len()));
    }
    Ok(blocks)
}

/// Why a `sequence:` block list was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum SequenceError {
    /// `sequence` without its list.
    #[error("sequence needs its blocks, e.g. sequence:2,0,1")]
    NoBlocks,
    /// An item that is not a whole number.
    #[error("'{0}' is not a block number (0 or more)")]
    NotABlock(String),
    /// More blocks than `SEQUENCE_MAX` (how many were given).
    #[error("a sequence has at most {SEQUENCE_MAX} blocks, this one {0}")]
    TooLong(usize),
}

impl Layers<'_> {
    /// `sprandom=1` and its `spr_*` options, refused as fio does where the job
    /// is not a random write, keeps a random map or picks another generator.
    pub(super) fn sprandom(&self, rw: RwPattern) -> Result<Option<SprandomSpec>, JobError> {
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

    pub(super) fn distribution(&self) -> Result<Distribution, JobError> {
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
        assert_eq!(
            [
                parse_sequence(None),
                parse_sequence(Some("1, x")),
                parse_sequence(Some(&vec!["1"; 65].join(","))),
            ]
            .map(|said| said.expect_err("a bad list").to_string()),
            [
                "sequence needs its blocks, e.g. sequence:2,0,1",
                "'x' is not a block number (0 or more)",
                "a sequence has at most 64 blocks, this one 65",
            ]
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
}
