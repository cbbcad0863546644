//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`): a share of a
//! direction's I/Os goes to the kernel with a priority class and level of its own, the rest
//! with the process's. Only io_uring and libaio carry a priority per I/O, as in fio.

use serde::{Deserialize, Serialize};

use super::EngineKind;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use crate::units::{self, UnitError};

/// The priority a share of one direction's I/Os carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrioShare {
    /// Percent of the direction's I/Os that carry it, 1 to 100.
    pub percent: u32,
    /// `class << 13 | level`, as ioprio_set(2) and the kernel's I/O requests encode it.
    pub ioprio: u16,
}

/// `cmdprio_*` per direction (reads, writes); None: every I/O of that direction
/// goes with the process's own priority.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdprioSpec {
    pub dirs: [Option<PrioShare>; 2],
}

/// The ioprio of a class and a level.
pub fn ioprio_value(class: u16, level: u16) -> u16 {
    class << 13 | level
}

/// An ioprio as fio shows it: (class, level).
pub fn ioprio_parts(ioprio: u16) -> (u16, u16) {
    (ioprio >> 13, ioprio & 7)
}

impl CmdprioSpec {
    pub fn is_used(&self) -> bool {
        self.dirs.iter().any(Option::is_some)
    }

    /// The options of a job on `kind`; refused on an engine that cannot send a priority.
    pub(crate) fn resolve(layers: &Layers, kind: EngineKind) -> Result<Self, JobError> {
        let options = [opt::CMDPRIO_PERCENTAGE, opt::CMDPRIO_CLASS, opt::CMDPRIO];
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
        let dirs = std::array::from_fn(|d| match (percents[d], classes[d], levels[d]) {
            (Some(percent), Some(class), Some(level)) if percent > 0 => Some(PrioShare {
                percent,
                ioprio: ioprio_value(class, level),
            }),
            _ => None,
        });
        Ok(Self { dirs })
    }
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

    fn shares(args: &[&str]) -> [Option<PrioShare>; 2] {
        job(args).engine.cmdprio.dirs
    }

    #[test]
    fn one_value_serves_reads_and_writes_with_fio_defaults() {
        let share = Some(PrioShare {
            percent: 30,
            ioprio: 1 << 13,
        });
        assert_eq!(
            shares(&["--ioengine=io_uring", "--cmdprio_percentage=30"]),
            [share, share],
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
            [
                None,
                Some(PrioShare {
                    percent: 70,
                    ioprio: 3 << 13 | 7
                })
            ],
            "expected no read priority (0%) and 70% of writes at class 3 level 7"
        );
        assert_eq!(
            shares(&["--ioengine=io_uring", "--cmdprio=3"]),
            [None, None],
            "expected cmdprio without cmdprio_percentage to change nothing"
        );
    }

    #[test]
    fn out_of_range_values_and_other_engines_are_refused() {
        for (args, expected) in [
            (
                ["--ioengine=io_uring", "--cmdprio_class=4"],
                "cmdprio_class",
            ),
            (
                ["--ioengine=io_uring", "--cmdprio=8"],
                "out of range: 0 to 7",
            ),
            (
                ["--ioengine=libaio", "--cmdprio_percentage=101"],
                "more than 100",
            ),
            (
                ["--ioengine=psync", "--cmdprio_percentage=10"],
                "ioengine=psync sends no priority",
            ),
            (
                ["--ioengine=posixaio", "--cmdprio_class=2"],
                "use ioengine=io_uring or ioengine=libaio",
            ),
        ] {
            let message = error(&[&["--name=t", "--filename=/tmp/f"][..], &args].concat());
            assert!(
                message.contains(expected),
                "{args:?}: expected an error containing {expected:?}, got {message:?}"
            );
        }
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
