//! Per-I/O choices of data direction and block size.

use super::rng::WorkerRng;
use crate::job::spec::{BlockSizes, Ddir, RwPattern};
use rand::Rng;

/// Which direction the next I/O goes.
#[derive(Debug, Clone)]
pub(super) enum DirectionPicker {
    Only(Ddir),
    /// Mixed patterns: each I/O is a read with probability `read_percent` / 100,
    /// so the mix holds over any long stretch without a fixed read/write rhythm.
    Mixed {
        read_percent: u32,
    },
}

impl DirectionPicker {
    /// `trimwrite` and `randtrimwrite` pick trims here; the writes that follow them come from the generator.
    pub(super) fn new(rw: RwPattern, rwmixread: u32) -> Self {
        match (rw.reads(), rw.writes(), rw.trims()) {
            (true, true, _) => Self::Mixed {
                read_percent: rwmixread.min(100),
            },
            (_, _, true) => Self::Only(Ddir::Trim),
            (false, true, _) => Self::Only(Ddir::Write),
            _ => Self::Only(Ddir::Read),
        }
    }

    /// Whether `ddir` can ever be picked.
    pub(super) fn uses(&self, ddir: Ddir) -> bool {
        match *self {
            Self::Only(only) => only == ddir,
            Self::Mixed { read_percent } => match ddir {
                Ddir::Read => read_percent > 0,
                Ddir::Write => read_percent < 100,
                Ddir::Trim => false,
            },
        }
    }

    #[inline]
    pub(super) fn pick(&self, rng: &mut WorkerRng) -> Ddir {
        match *self {
            Self::Only(ddir) => ddir,
            Self::Mixed { read_percent } => {
                if rng.random_range(0..100) < read_percent {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
        }
    }
}

/// Block sizes of one direction, prepared for a cheap draw per I/O.
#[derive(Debug, Clone)]
pub(super) enum SizePicker {
    Fixed(u32),
    /// `bsrange`: a uniform multiple of `min`, from 1×min to `max_multiple`×min.
    Range {
        min: u32,
        max_multiple: u32,
    },
    /// `bssplit`: `(size, cumulative percent)` in the order given.
    Split(Box<[(u32, u32)]>),
}

impl SizePicker {
    /// # Panics
    /// On a block size of 0 or 4 GiB and more, or an empty split; `job::validate`
    /// rejects all three.
    pub(super) fn new(sizes: &BlockSizes) -> Self {
        match sizes {
            BlockSizes::Fixed(size) => Self::Fixed(checked_block_size(*size)),
            BlockSizes::Range { min, max } => {
                let min = checked_block_size(*min);
                Self::Range {
                    min,
                    max_multiple: (checked_block_size(*max) / min).max(1),
                }
            }
            BlockSizes::Split(entries) => {
                assert!(
                    !entries.is_empty(),
                    "empty bssplit (job::validate must reject it)"
                );
                let mut cumulative = 0;
                Self::Split(
                    entries
                        .iter()
                        .map(|&(size, percent)| {
                            cumulative += percent;
                            (checked_block_size(size), cumulative)
                        })
                        .collect(),
                )
            }
        }
    }

    #[inline]
    pub(super) fn pick(&self, rng: &mut WorkerRng) -> u32 {
        match self {
            Self::Fixed(size) => *size,
            Self::Range { min, max_multiple } => min * rng.random_range(1..=*max_multiple),
            Self::Split(entries) => {
                let roll = rng.random_range(0..100);
                let chosen = entries.iter().find(|(_, cumulative)| roll < *cumulative);
                // Percentages sum to 100 after validation; the last entry covers rounding.
                chosen.unwrap_or(&entries[entries.len() - 1]).0
            }
        }
    }
}

fn checked_block_size(size: u64) -> u32 {
    match u32::try_from(size) {
        Ok(size) if size > 0 => size,
        _ => panic!("block size {size} outside 1..4GiB (job::validate must reject it)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> WorkerRng {
        WorkerRng::seed_from_u64(5)
    }

    #[test]
    fn single_direction_patterns_never_mix() {
        let mut rng = rng();
        let write = DirectionPicker::new(RwPattern::RandWrite, 50);
        let read = DirectionPicker::new(RwPattern::Read, 50);
        assert!((0..1000).all(|_| write.pick(&mut rng) == Ddir::Write));
        assert!((0..1000).all(|_| read.pick(&mut rng) == Ddir::Read));
        assert!(!write.uses(Ddir::Read) && write.uses(Ddir::Write));
    }

    #[test]
    fn trim_patterns_pick_trims_only() {
        let mut rng = rng();
        for rw in [
            RwPattern::Trim,
            RwPattern::RandTrim,
            RwPattern::TrimWrite,
            RwPattern::RandTrimWrite,
        ] {
            let picker = DirectionPicker::new(rw, 50);
            assert!((0..100).all(|_| picker.pick(&mut rng) == Ddir::Trim));
            assert!(picker.uses(Ddir::Trim) && !picker.uses(Ddir::Write));
        }
        assert!(!DirectionPicker::new(RwPattern::RandRw, 50).uses(Ddir::Trim));
    }

    #[test]
    fn rwmixread_proportion_holds() {
        let mut rng = rng();
        for percent in [0, 10, 70, 100] {
            let picker = DirectionPicker::new(RwPattern::RandRw, percent);
            let reads = (0..100_000)
                .filter(|_| picker.pick(&mut rng) == Ddir::Read)
                .count();
            let expected = f64::from(percent) * 1000.0;
            assert!(
                (reads as f64 - expected).abs() <= 700.0,
                "{percent}%: {reads} reads"
            );
        }
        assert!(!DirectionPicker::new(RwPattern::ReadWrite, 100).uses(Ddir::Write));
    }

    #[test]
    fn range_gives_every_multiple_of_min_uniformly() {
        let mut rng = rng();
        let picker = SizePicker::new(&BlockSizes::Range {
            min: 4096,
            max: 16384,
        });
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            let size = picker.pick(&mut rng);
            assert_eq!(size % 4096, 0);
            counts[(size / 4096 - 1) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn bssplit_proportions_hold() {
        let mut rng = rng();
        let split = BlockSizes::Split(vec![(4096, 10), (65536, 50), (32768, 40)]);
        let picker = SizePicker::new(&split);
        let (mut small, mut large, mut middle) = (0, 0, 0);
        for _ in 0..100_000 {
            match picker.pick(&mut rng) {
                4096 => small += 1,
                65536 => large += 1,
                32768 => middle += 1,
                other => panic!("unexpected size {other}"),
            }
        }
        for (count, percent) in [(small, 10), (large, 50), (middle, 40)] {
            assert!(
                (count - percent * 1000_i32).abs() < 700,
                "{count} vs {percent}%"
            );
        }
    }

    #[test]
    #[should_panic(expected = "outside 1..4GiB")]
    fn zero_block_size_is_a_bug() {
        SizePicker::new(&BlockSizes::Fixed(0));
    }
}
