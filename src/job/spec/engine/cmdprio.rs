//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`): a share of a
//! direction's I/Os goes to the kernel with a priority class and level of its own, the rest
//! with the process's. Only io_uring and libaio carry a priority per I/O, as in fio.

use serde::{Deserialize, Serialize};

use super::EngineKind;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use crate::units::{self, KbBase, UnitError};

/// The priority a share of one direction's I/Os (of one block size) carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PrioShare {
    /// The block size the share is of (`cmdprio_bssplit`); None: of every I/O.
    pub bs: Option<u64>,
    /// Percent of those I/Os that carry it, 1 to 100.
    pub percent: u32,
    /// `class << 13 | level`, as ioprio_set(2) and the kernel's I/O requests encode it.
    pub ioprio: u16,
}

/// `cmdprio_*` per direction (reads, writes): the shares of its I/Os sent with a priority
/// of their own (by block size, smallest first, for `cmdprio_bssplit`); empty: every
/// I/O of that direction goes with the process's own priority.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CmdprioSpec {
    pub dirs: [Vec<PrioShare>; 2],
}

/// The ioprio of a class and a level.
pub(crate) fn ioprio_value(class: u16, level: u16) -> u16 {
    class << 13 | level
}

/// An ioprio as fio shows it: (class, level).
pub(crate) fn ioprio_parts(ioprio: u16) -> (u16, u16) {
    (ioprio >> 13, ioprio & 7)
}

impl CmdprioSpec {
    pub(crate) fn is_used(&self) -> bool {
        self.dirs.iter().any(|d| !d.is_empty())
    }

    /// The options of a job on `kind`; refused on an engine that cannot send a priority.
    pub(crate) fn resolve(layers: &Layers, kind: EngineKind) -> Result<Self, JobError> {
        let options = [
            opt::CMDPRIO_PERCENTAGE,
            opt::CMDPRIO_CLASS,
            opt::CMDPRIO,
            opt::CMDPRIO_BSSPLIT,
        ];
        if !matches!(kind, EngineKind::IoUring | EngineKind::Libaio) {
            if let Some(setting) = options.iter().find_map(|&def| layers.given(def)) {
                return Err(setting.invalid_with_hint(
                    format!(
                        "ioengine={} sends no priority with an I/O (fio has it for io_uring and \
                         libaio only)",
                        kind.name()
                    ),
                    "use ioengine=io_uring or ioengine=libaio, or drop the option",
                ));
            }
            return Ok(Self::default());
        }
        let percents =
            layers.per_direction(opt::CMDPRIO_PERCENTAGE, units::parse_percent_number)?;
        let classes = layers.per_direction(opt::CMDPRIO_CLASS, |t| within(t, 1, 3))?;
        let levels = layers.per_direction(opt::CMDPRIO, |t| within(t, 0, 7))?;
        let implied = |d: usize| match (classes[d], levels[d]) {
            (Some(class), Some(level)) => ioprio_value(class, level),
            _ => unreachable!("cmdprio_class and cmdprio have table defaults"),
        };
        let bssplit = layers
            .given(opt::CMDPRIO_BSSPLIT)
            .filter(|s| !s.text.trim().is_empty());
        let Some(bssplit) = bssplit else {
            let dirs = std::array::from_fn(|d| match percents[d] {
                Some(percent) if percent > 0 => vec![PrioShare {
                    bs: None,
                    percent,
                    ioprio: implied(d),
                }],
                _ => Vec::new(),
            });
            return Ok(Self { dirs });
        };
        if percents.iter().flatten().any(|&p| p > 0) {
            return Err(bssplit.invalid_with_hint(
                "cmdprio_percentage is set too: the two are mutually exclusive, as in fio",
                "give the shares per block size here and drop cmdprio_percentage",
            ));
        }
        let sides = units::split_per_direction(bssplit.text).map_err(|e| bssplit.invalid(e))?;
        let mut dirs: [Vec<PrioShare>; 2] = Default::default();
        for (d, shares) in dirs.iter_mut().enumerate() {
            if let Some(text) = sides[d] {
                *shares = parse_bssplit(text, implied(d), layers.kb_base)
                    .map_err(|e| bssplit.invalid(e))?;
            }
        }
        Ok(Self { dirs })
    }
}

/// One direction of `cmdprio_bssplit`: `bs/percent[/class/level]:…`, a bare `bs/` or `bs`
/// counting as 0 %; entries of 0 % are dropped and the rest sorted by block size.
fn parse_bssplit(text: &str, implied: u16, kb_base: KbBase) -> Result<Vec<PrioShare>, UnitError> {
    let mut shares = Vec::new();
    for entry in text.split(':').filter(|e| !e.trim().is_empty()) {
        let parts: Vec<&str> = entry.split('/').map(str::trim).collect();
        let bs = units::parse_size(parts[0], kb_base)?;
        let percent = match parts.get(1) {
            None | Some(&"") => 0,
            Some(p) => units::parse_percent_number(p)?,
        };
        let ioprio = match parts[..] {
            [_] | [_, _] => implied,
            [_, _, class, level] => ioprio_value(within(class, 1, 3)?, within(level, 0, 7)?),
            _ => {
                return Err(UnitError::Invalid(format!(
                    "'{entry}' is neither bs/percent nor bs/percent/class/level"
                )))
            }
        };
        if percent > 0 {
            shares.push(PrioShare {
                bs: Some(bs),
                percent,
                ioprio,
            });
        }
    }
    shares.sort_by_key(|s| s.bs);
    for size in shares.iter().map(|s| s.bs) {
        let total: u32 = shares
            .iter()
            .filter(|s| s.bs == size)
            .map(|s| s.percent)
            .sum();
        if total > 100 {
            return Err(UnitError::Invalid(format!(
                "the percentages of bs={} add up to {total}, more than 100",
                size.unwrap_or(0)
            )));
        }
    }
    Ok(shares)
}

/// A whole number from `low` to `high`.
fn within(text: &str, low: u16, high: u16) -> Result<u16, UnitError> {
    let value = units::parse_count(text, units::KbBase::default())?;
    match u16::try_from(value) {
        Ok(v) if (low..=high).contains(&v) => Ok(v),
        _ => Err(UnitError::Invalid(format!(
            "{value} is out of range: {low} to {high}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job};

    fn shares(args: &[&str]) -> [Vec<PrioShare>; 2] {
        job(args).engine.cmdprio.dirs
    }

    fn share(bs: Option<u64>, percent: u32, ioprio: u16) -> PrioShare {
        PrioShare {
            bs,
            percent,
            ioprio,
        }
    }

    #[test]
    fn one_value_serves_reads_and_writes_with_fio_defaults() {
        let high = vec![share(None, 30, 1 << 13)];
        assert_eq!(
            shares(&["--ioengine=io_uring", "--cmdprio_percentage=30"]),
            [high.clone(), high],
            "expected 30% of reads and writes at class 1 (realtime) level 0, fio's default"
        );
    }

    #[test]
    fn each_direction_takes_its_own_values() {
        let got = shares(&[
            "--ioengine=libaio",
            "--cmdprio_percentage=0,70",
            "--cmdprio_class=2,3",
            "--cmdprio=5,7",
        ]);
        assert_eq!(
            got,
            [vec![], vec![share(None, 70, 3 << 13 | 7)]],
            "expected no read priority (0%) and 70% of writes at class 3 level 7"
        );
        assert_eq!(
            shares(&["--ioengine=io_uring", "--cmdprio=3"]),
            [vec![], vec![]],
            "expected cmdprio without cmdprio_percentage to change nothing"
        );
    }

    #[test]
    fn out_of_range_values_and_other_engines_are_refused() {
        let cases: [(&[&str], &str); 9] = [
            (
                &["--ioengine=io_uring", "--cmdprio_class=4"],
                "cmdprio_class",
            ),
            (
                &["--ioengine=io_uring", "--cmdprio=8"],
                "out of range: 0 to 7",
            ),
            (
                &["--ioengine=libaio", "--cmdprio_percentage=101"],
                "more than 100",
            ),
            (
                &["--ioengine=psync", "--cmdprio_percentage=10"],
                "ioengine=psync sends no priority",
            ),
            (
                &["--ioengine=posixaio", "--cmdprio_class=2"],
                "use ioengine=io_uring or ioengine=libaio",
            ),
            (
                &[
                    "--ioengine=libaio",
                    "--cmdprio_percentage=5",
                    "--cmdprio_bssplit=4k/5",
                ],
                "mutually exclusive",
            ),
            (
                &["--ioengine=libaio", "--cmdprio_bssplit=4k/60/2/1:4k/50"],
                "bs=4096 add up to 110",
            ),
            (
                &["--ioengine=libaio", "--cmdprio_bssplit=4k/6/2"],
                "neither bs/percent nor bs/percent/class/level",
            ),
            (
                &["--ioengine=libaio", "--cmdprio_bssplit=4k/6/4/1"],
                "out of range: 1 to 3",
            ),
        ];
        for (args, expected) in cases {
            let message = error(&[&["--name=t", "--filename=/tmp/f"][..], args].concat());
            assert!(
                message.contains(expected),
                "{args:?}: expected an error containing {expected:?}, got {message:?}"
            );
        }
    }

    #[test]
    fn bssplit_entries_take_their_own_or_the_implied_priority_sorted_by_size() {
        let got = shares(&[
            "--ioengine=io_uring",
            "--cmdprio_class=2",
            "--cmdprio=6",
            "--cmdprio_bssplit=64k/20/3/1:4k/:8k/0:4k/50,16k/100",
        ]);
        assert_eq!(
            got,
            [
                vec![share(Some(4096), 50, 2 << 13 | 6), share(Some(65536), 20, 3 << 13 | 1)],
                vec![share(Some(16384), 100, 2 << 13 | 6)],
            ],
            "expected 0% entries dropped, 4k before 64k, the class/level given or cmdprio_class/cmdprio's"
        );
    }

    #[test]
    fn ioprio_parts_undo_ioprio_value() {
        assert_eq!(
            ioprio_parts(ioprio_value(2, 6)),
            (2, 6),
            "expected class 2 level 6 back"
        );
    }
}
