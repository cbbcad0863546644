//! `sprandom`: random write preconditioning of an SSD, with upstream fio's
//! offsets in fio's order.
//!
//! The model (Desnoyers' steady state of a greedy garbage collector): at steady
//! state a block's share of valid pages times the share of the drive made of
//! such blocks is constant, and the least valid blocks, the ones the collector
//! takes, are valid to `1 - 1/WA` with the write amplification `WA ≈ 0.5/op + 0.7`.
//! The validities from 1 down to that are spaced evenly, each weighted by its
//! inverse, and the curve is read again at evenly spaced cumulative weights:
//! one validity per equal region, the least valid region first.
//!
//! The job writes the physical capacity (the size plus the over-provisioning)
//! once, one region of blocks after another. New blocks come from fio's
//! register (each block once). Every block written in a region is picked, with
//! the chance of that region's stale share, to be written again: the picks of
//! one region are written first thing in the next region (which then takes
//! that many fewer new blocks), and are themselves picked again with the next
//! region's chance. With `spr_cs` the picks wait until the next region's new
//! blocks are written, so a block and its rewrite are never in the device's
//! cache together. The job ends when the register has handed out every block.

use super::lfsr::Lfsr;
use super::taus::Taus;
use crate::job::spec::SprandomSpec;
use std::collections::VecDeque;

/// fio's index of the stream sprandom's chances come from (upstream fio's
/// `FIO_RAND_SPRANDOM_OFF`).
pub(super) const CHANCE_STREAM: u32 = 22;

/// Chances are drawn in ten-thousandths.
const CHANCE_SCALE: u32 = 10_000;

/// The stale share of each region, least valid region first, in
/// ten-thousandths.
fn stale_shares(regions: u32, over_provisioning: f64) -> Vec<u32> {
    let count = regions as usize;
    let write_amplification = 0.5 / over_provisioning + 0.7;
    let collected_validity = 1.0 - 1.0 / write_amplification;
    let validity = evenly_spaced(1.0, collected_validity, count);
    let mut weight = 0.0;
    let cumulative: Vec<f64> = validity
        .iter()
        .map(|v| {
            weight += 1.0 / v;
            weight
        })
        .collect();
    evenly_spaced(cumulative[0], cumulative[count - 1], count)
        .into_iter()
        .rev()
        .map(|at| {
            let stale = (1.0 - interpolate(at, &cumulative, &validity)) * f64::from(CHANCE_SCALE);
            stale.round() as u32
        })
        .collect()
}

/// `count` values from `first` to `last`, both included (`first` alone for 1).
fn evenly_spaced(first: f64, last: f64, count: usize) -> Vec<f64> {
    if count == 1 {
        return vec![first];
    }
    let step = (last - first) / (count as f64 - 1.0);
    (0..count).map(|i| first + i as f64 * step).collect()
}

/// The piecewise linear curve through `(xs[i], ys[i])` (`xs` increasing) at
/// `x`, flat beyond its ends.
fn interpolate(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let last = xs.len() - 1;
    if last == 0 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[last] {
        return ys[last];
    }
    let i = xs
        .windows(2)
        .position(|pair| x >= pair[0] && x <= pair[1])
        .expect("x lies inside the curve");
    let (x0, x1, y0, y1) = (xs[i], xs[i + 1], ys[i], ys[i + 1]);
    if (x1 - x0).abs() < 1e-9 {
        y0
    } else {
        y0 + (y1 - y0) * ((x - x0) / (x1 - x0))
    }
}

/// Blocks picked for rewriting: picks made in the current region wait behind
/// those of the region before, which are the only ones handed out.
#[derive(Debug, Clone, Default)]
struct Rewrites {
    queue: VecDeque<u64>,
    due: usize,
}

impl Rewrites {
    fn pick(&mut self, block: u64) {
        self.queue.push_back(block);
    }

    /// A new region: the picks made so far become due.
    fn release(&mut self) {
        self.due = self.queue.len();
    }

    fn take(&mut self) -> Option<u64> {
        if self.due == 0 {
            return None;
        }
        self.due -= 1;
        self.queue.pop_front()
    }
}

/// One file's sprandom order of blocks.
#[derive(Debug, Clone)]
pub(super) struct Sprandom {
    new_blocks: Lfsr,
    /// fio's 32-bit tausworthe (taus88), which fio draws the chances from.
    chances: Taus,
    stale_share: Vec<u32>,
    region_blocks: u64,
    regions: usize,
    /// `spr_cs` is set: a region's rewrites come after the next region's new blocks.
    after_region: bool,
    rewrites: Rewrites,
    /// Picks made per region parity (fio's two phases).
    picked: [u64; 2],
    phase: usize,
    region: usize,
    /// New blocks still due in the current region.
    new_left: u64,
}

impl Sprandom {
    /// The order over `new_blocks`' blocks of a target of `logical` bytes
    /// written in `block`-byte I/Os, drawing chances from `chance_seed`.
    pub(super) fn new(
        spec: &SprandomSpec,
        logical: u64,
        block: u64,
        new_blocks: Lfsr,
        chance_seed: u32,
    ) -> Self {
        let region_bytes = spec.physical_size(logical, block) / u64::from(spec.regions);
        let region_blocks = region_bytes / block.max(1);
        Sprandom {
            new_blocks,
            chances: Taus::new(u64::from(chance_seed), false),
            stale_share: stale_shares(spec.regions, spec.over_provisioning),
            region_blocks,
            regions: spec.regions as usize,
            after_region: spec.cache_size > 0,
            rewrites: Rewrites::default(),
            picked: [0; 2],
            phase: 0,
            region: 0,
            new_left: region_blocks,
        }
    }

    /// Start over from fio's seeds (nothing drawn yet).
    pub(super) fn reseed(&mut self, block_seed: u64, chance_seed: u32) {
        self.new_blocks = Lfsr::new(self.new_blocks.blocks(), block_seed);
        self.chances = Taus::new(u64::from(chance_seed), false);
    }

    /// Pick `block` for rewriting with the current region's chance, counted
    /// for the region that rewrites it.
    fn maybe_pick(&mut self, block: u64) {
        // A whole number in 0..=CHANCE_SCALE, scaled from a draw as fio scales it.
        let roll = self.chances.block(u64::from(CHANCE_SCALE) + 1) as u32;
        // past the last region (only a few blocks of rounding) nothing is picked
        let share = self.stale_share.get(self.region).copied().unwrap_or(0);
        if roll <= share {
            self.rewrites.pick(block);
            self.picked[self.phase ^ 1] += 1;
        }
    }

    /// The next block to write; `None` once every block was written.
    pub(super) fn next_block(&mut self) -> Option<u64> {
        if !self.after_region {
            if let Some(block) = self.rewrites.take() {
                self.maybe_pick(block);
                return Some(block);
            }
        }
        if self.new_left == 0 {
            if self.after_region {
                if let Some(block) = self.rewrites.take() {
                    self.maybe_pick(block);
                    return Some(block);
                }
            }
            if self.region >= self.regions {
                return None;
            }
            self.picked[self.phase] = 0;
            self.region += 1;
            self.phase ^= 1;
            // as fio, in unsigned arithmetic: more picks than blocks lifts the limit
            self.new_left = self.region_blocks.wrapping_sub(self.picked[self.phase]);
            self.rewrites.release();
        }
        let Some(block) = self.new_blocks.next_block() else {
            // the register is done: with spr_cs the rewrites held back still come
            return self.after_region.then(|| self.rewrites.take()).flatten();
        };
        self.new_left = self.new_left.saturating_sub(1);
        self.maybe_pick(block);
        Some(block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::lfsr::{fio_stream_seed, BLOCK_STREAM};

    fn spec(over_provisioning: f64, regions: u32, cache_size: u64) -> SprandomSpec {
        SprandomSpec {
            over_provisioning,
            regions,
            cache_size,
        }
    }

    #[test]
    fn stale_shares_follow_the_steady_state_curve() {
        // upstream fio's sprandom debug output, spr_op=0.15 with 4 regions:
        // validity resampled [0.75, 0.83, 0.91, 1.00]
        assert_eq!(
            stale_shares(4, 0.15),
            [2479, 1730, 906, 0],
            "expected the stale shares fio reports for op 0.15 and 4 regions"
        );
        assert_eq!(
            stale_shares(1, 0.5),
            [0],
            "expected one region to be all valid"
        );
        let many = stale_shares(100, 0.28);
        assert!(
            many.windows(2).all(|pair| pair[0] > pair[1]) && many[99] == 0,
            "expected shares falling to 0 over the regions, saw {many:?}"
        );
    }

    #[test]
    fn blocks_come_in_upstream_fios_order() {
        // fio 3.42, size=1m bs=4k spr_op=0.15 spr_num_regions=4, default seeds,
        // first worker: 73 new blocks make region 0; region 1 starts with a new
        // block, then region 0's picks; 286 writes in all (write_iolog)
        let seed = |stream| fio_stream_seed(0x89, 1, stream);
        let mut spr = Sprandom::new(
            &spec(0.15, 4, 0),
            1 << 20,
            4096,
            Lfsr::new(256, seed(BLOCK_STREAM)),
            seed(CHANCE_STREAM) as u32,
        );
        let order: Vec<u64> = std::iter::from_fn(|| spr.next_block()).collect();
        let expected: [(usize, &[u64]); 3] = [
            (0, &[228, 98, 33, 152, 92, 62, 15, 224]),
            (72, &[119, 247, 98, 62, 30, 232, 1, 23, 70]),
            (281, &[134, 83, 218, 125, 143]),
        ];
        assert_eq!(
            order.len(),
            286,
            "expected fio's 286 writes, saw {}",
            order.len()
        );
        for (at, blocks) in expected {
            assert_eq!(
                &order[at..at + blocks.len()],
                blocks,
                "expected fio's blocks from write {at} on"
            );
        }
    }

    #[test]
    fn every_block_is_written_and_the_extra_writes_are_rewrites() {
        for cache_size in [0, 4096] {
            let blocks = 256;
            let mut spr = Sprandom::new(
                &spec(0.15, 4, cache_size),
                blocks * 4096,
                4096,
                Lfsr::new(blocks, 99),
                7,
            );
            let order: Vec<u64> = std::iter::from_fn(|| spr.next_block()).collect();
            let mut distinct = order.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert!(
                distinct.iter().copied().eq(0..blocks),
                "expected every one of {blocks} blocks written (spr_cs={cache_size}), saw {distinct:?}"
            );
            let physical_blocks = 295;
            assert!(
                order.len() as u64 > blocks && order.len() as u64 <= physical_blocks + 4,
                "expected between {blocks} and about {physical_blocks} writes (spr_cs={cache_size}), saw {}",
                order.len()
            );
        }
    }

    #[test]
    fn rewrites_come_after_the_next_regions_new_blocks_with_a_cache() {
        let blocks = 1000;
        let run = |cache_size| {
            let mut spr = Sprandom::new(
                &spec(0.25, 5, cache_size),
                blocks * 4096,
                4096,
                Lfsr::new(blocks, 5),
                3,
            );
            std::iter::from_fn(move || spr.next_block()).collect::<Vec<u64>>()
        };
        let (plain, cached) = (run(0), run(4096));
        let first_repeat = |order: &[u64]| {
            let mut seen = std::collections::HashSet::new();
            order
                .iter()
                .position(|b| !seen.insert(*b))
                .expect("a rewrite")
        };
        // a region holds 1250 / 5 = 250 blocks
        assert_eq!(
            first_repeat(&plain),
            251,
            "expected the first rewrite right after the next region's first new block"
        );
        // with spr_cs region 1 takes its new blocks first, then region 0's picks
        // fill it up to 500 writes
        let held = first_repeat(&cached);
        let region_0: std::collections::HashSet<u64> = cached[..250].iter().copied().collect();
        assert!(
            held > 251 && cached[held..500].iter().all(|b| region_0.contains(b)),
            "expected region 0's rewrites to come only after region 1's new blocks, \
             as writes {held}..500, saw the first rewrite at {held}: {:?}",
            &cached[250..500]
        );
    }
}
