//! Where in one file region the next I/O goes.
//!
//! A [`RegionCursor`] owns the state of one region for one pass: the sequential
//! positions, the random map (a [`BlockPermutation`]) or the skewed
//! distribution, and the bytes still to transfer. A pass over a region ends after
//! the region's worth of bytes, or earlier when the random map has handed out
//! every block.
//!
//! With `zonemode=strided` the cursor works in a window of the region, one zone
//! at a time; without it the window is the whole region, so the per-I/O path is
//! the same either way.

use super::lfsr::Lfsr;
use super::permutation::BlockPermutation;
use super::rng::WorkerRng;
use super::sprandom::Sprandom;
use super::taus::Taus;
use crate::job::spec::{Ddir, Distribution, RandomGenerator, SprandomSpec, StridedZones, DDIRS};
use rand::{Rng, RngCore};
use rand_distr::{Distribution as _, Normal, Zipf};

/// The byte range of one file a worker covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileRegion {
    pub file: u32,
    pub start: u64,
    pub len: u64,
    /// Bytes of the file from `start` to its end (at least `len`): how far a
    /// sequential walk may go, as fio's sequential I/O stops at the file's
    /// end rather than the region's.
    pub room: u64,
}

impl FileRegion {
    /// A region that ends where its file ends.
    pub(crate) fn new(file: u32, start: u64, len: u64) -> Self {
        FileRegion {
            file,
            start,
            len,
            room: len,
        }
    }

    /// The region of a file of `file_size` bytes.
    pub(crate) fn in_file(self, file_size: u64) -> Self {
        FileRegion {
            room: file_size.saturating_sub(self.start).max(self.len),
            ..self
        }
    }
}

/// Offset rules shared by all regions of a worker.
#[derive(Debug, Clone)]
pub(super) struct OffsetRules {
    pub random: bool,
    /// Sequential patterns: bytes skipped after each I/O (the `rw=write:4k` hole).
    pub hole: u64,
    /// Random patterns: I/Os at consecutive offsets per random pick (`rw=randread:8`).
    pub run_len: u64,
    /// Random patterns: I/Os not at a random offset repeat the previous offset
    /// (`rw_sequencer=identical`) instead of continuing after it.
    pub repeat_offsets: bool,
    /// Offsets of each direction are multiples of this, relative to the region start.
    pub align: [u64; DDIRS],
    /// Granularity of random picks: the smallest alignment of the directions in use.
    pub unit: u64,
    /// Size of the smallest block in use; a region's tail shorter than it is never touched.
    pub min_block: u64,
    /// An I/O may cover more than one `unit`: the random map then marks every
    /// unit an I/O covers and cuts the I/O short at the first one already done,
    /// as fio's does, so a pass still covers each unit once.
    pub spans_units: bool,
    /// Random patterns: per direction, the per cent of I/Os at a random offset
    /// (`percentage_random`); the others start where the previous I/O ended.
    pub percent_random: [u32; DDIRS],
    /// `zonemode=strided`.
    pub zones: Option<StridedZones>,
    /// `sprandom`: the writes precondition each region (one file).
    pub sprandom: Option<SprandomSpec>,
}

/// How random patterns pick a block of a region.
#[derive(Debug, Clone)]
enum BlockChoice {
    /// The random map: every block once per pass in a seeded order.
    Permuted {
        order: BlockPermutation,
        next_index: u64,
        /// Units done this pass, when an I/O may cover several (`spans_units`).
        done: Option<UnitMap>,
    },
    /// `random_generator=lfsr`: every block once per pass in fio's order, the
    /// same order each pass; no random map.
    Lfsr(Lfsr),
    /// `sprandom`: fio's register's blocks with rewrites mixed in; the
    /// region's pass ends when its order does.
    Sprandom(Box<Sprandom>),
    /// `norandommap`: independent uniform picks from fio's tausworthe generator.
    Taus(Taus),
    /// Zipf or Pareto ranks (rank 0 hottest) scattered over the region, so the
    /// hot blocks are not all at its start.
    Ranked {
        ranks: RankSkew,
        scatter: BlockPermutation,
    },
    /// A bell around the middle of the region (fio's `normal:σ`, σ in % of the region).
    Normal(Normal<f64>),
    /// `zoned`: `(cumulative access share in 0..=1, first block, blocks)` per zone.
    Zoned(Box<[(f64, u64, u64)]>),
    /// `sequence`: the listed blocks in turn, counted per direction over the
    /// whole run as fio counts its issued I/Os; the pass ends at a block past
    /// the region.
    Sequence {
        blocks: Box<[u64]>,
        stride: bool,
        picked: [u64; DDIRS],
    },
}

#[derive(Debug, Clone, Copy)]
enum RankSkew {
    Zipf(Zipf<f64>),
    /// The self-similar 80/20 family: a share `1-h` of the accesses hits the first
    /// `h` of the ranks; drawn as `blocks * u^power` with `power = ln h / ln(1-h)`.
    Pareto {
        power: f64,
    },
}

impl BlockChoice {
    /// # Panics
    /// On distribution parameters `job::validate` rejects (zipf θ < 0, pareto h
    /// outside (0, 1), negative σ).
    fn new(
        distribution: &Distribution,
        generator: RandomGenerator,
        random_map: bool,
        spans_units: bool,
        blocks: u64,
        rng: &mut WorkerRng,
    ) -> Self {
        let scatter = |rng: &mut WorkerRng| BlockPermutation::new(blocks, rng);
        let block_count = blocks.max(1) as f64;
        match distribution {
            Distribution::Random if generator == RandomGenerator::Lfsr => {
                Self::Lfsr(Lfsr::new(blocks, rng.next_u64()))
            }
            Distribution::Random if random_map => Self::Permuted {
                order: BlockPermutation::new(blocks, rng),
                next_index: 0,
                done: spans_units.then(|| UnitMap::new(blocks)),
            },
            Distribution::Random => {
                Self::Taus(Taus::new(rng.next_u64(), generator.is_wide(blocks)))
            }
            Distribution::Zipf(theta) => Self::Ranked {
                ranks: RankSkew::Zipf(Zipf::new(block_count, *theta).expect("zipf theta >= 0")),
                scatter: scatter(rng),
            },
            Distribution::Pareto(h) => {
                assert!(*h > 0.0 && *h < 1.0, "pareto h {h} outside (0, 1)");
                Self::Ranked {
                    ranks: RankSkew::Pareto {
                        power: h.ln() / (1.0 - h).ln(),
                    },
                    scatter: scatter(rng),
                }
            }
            Distribution::Normal(sigma_percent) => Self::Normal(
                Normal::new(block_count / 2.0, block_count * sigma_percent / 100.0)
                    .expect("normal sigma >= 0"),
            ),
            Distribution::Zoned(zones) => Self::Zoned(zone_table(zones, blocks)),
            Distribution::Sequence { blocks, stride } => Self::Sequence {
                blocks: blocks.clone().into_boxed_slice(),
                stride: *stride,
                picked: [0; DDIRS],
            },
        }
    }

    /// A block in `0..blocks`; `None` once the random map has handed out every block.
    #[inline]
    fn pick(&mut self, ddir: Ddir, blocks: u64, rng: &mut WorkerRng) -> Option<u64> {
        let block = match self {
            Self::Permuted {
                order,
                next_index,
                done,
            } => loop {
                if *next_index == order.blocks() {
                    return None;
                }
                *next_index += 1;
                let block = order.get(*next_index - 1);
                if !done.as_ref().is_some_and(|done| done.is_set(block)) {
                    break block;
                }
            },
            Self::Lfsr(lfsr) => lfsr.next_block()?,
            Self::Sprandom(sprandom) => sprandom.next_block()?,
            Self::Taus(taus) => taus.block(blocks),
            Self::Ranked { ranks, scatter } => {
                let rank = match ranks {
                    RankSkew::Zipf(zipf) => zipf.sample(rng) as u64 - 1,
                    RankSkew::Pareto { power } => {
                        (blocks as f64 * rng.random::<f64>().powf(*power)) as u64
                    }
                };
                scatter.get(rank.min(blocks - 1))
            }
            Self::Normal(normal) => normal.sample(rng).rem_euclid(blocks as f64) as u64,
            Self::Sequence {
                blocks: list,
                stride,
                picked,
            } => {
                let count = &mut picked[ddir.index()];
                let length = list.len() as u64;
                let mut block = list[(*count % length) as usize];
                if *stride {
                    block += *count / length * length;
                }
                // as fio's count of issued I/Os, a block past the region counts none
                if block >= blocks {
                    return None;
                }
                *count += 1;
                block
            }
            Self::Zoned(zones) => {
                let roll = rng.random::<f64>();
                let zone = zones.iter().find(|(cumulative, _, _)| roll < *cumulative);
                let &(_, first, count) = zone.or(zones.last()).expect("zone list is not empty");
                first + rng.random_range(0..count.max(1))
            }
        };
        Some(block.min(blocks - 1))
    }

    /// Mark the `units` units from `block` done, stopping at the first one
    /// already done; how many were marked (all of them without a map).
    #[inline]
    fn mark(&mut self, block: u64, units: u64) -> u64 {
        match self {
            Self::Permuted {
                done: Some(done), ..
            } => done.mark_free_run(block, units),
            _ => units,
        }
    }
}

/// One bit per unit of a window: done this pass or not.
#[derive(Debug, Clone)]
struct UnitMap {
    words: Vec<u64>,
    units: u64,
}

impl UnitMap {
    fn new(units: u64) -> Self {
        UnitMap {
            words: vec![0; units.div_ceil(64) as usize],
            units,
        }
    }

    /// All units free again, for a window of `units` (reuses the storage).
    fn reset(&mut self, units: u64) {
        self.words.clear();
        self.words.resize(units.div_ceil(64) as usize, 0);
        self.units = units;
    }

    #[inline]
    fn is_set(&self, unit: u64) -> bool {
        self.words[(unit / 64) as usize] & (1 << (unit % 64)) != 0
    }

    /// Set up to `count` units from `first` while they are free; how many were set.
    #[inline]
    fn mark_free_run(&mut self, first: u64, count: u64) -> u64 {
        let mut marked = 0;
        while marked < count && first + marked < self.units && !self.is_set(first + marked) {
            let unit = first + marked;
            self.words[(unit / 64) as usize] |= 1 << (unit % 64);
            marked += 1;
        }
        marked
    }
}

/// Zones as block ranges with cumulative access shares; empty zones are dropped.
fn zone_table(zones: &[(f64, f64)], blocks: u64) -> Box<[(f64, u64, u64)]> {
    let mut accessed = 0.0;
    let mut region_share = 0.0;
    let mut table = Vec::with_capacity(zones.len());
    for &(access_percent, region_percent) in zones {
        let first = (blocks as f64 * region_share / 100.0) as u64;
        region_share += region_percent;
        let end = ((blocks as f64 * region_share / 100.0) as u64).min(blocks);
        accessed += access_percent / 100.0;
        if end > first && access_percent > 0.0 {
            table.push((accessed, first, end - first));
        }
    }
    if table.is_empty() {
        table.push((1.0, 0, blocks));
    }
    table.into_boxed_slice()
}

/// One region's progress through a pass.
#[derive(Debug, Clone)]
pub(super) struct RegionCursor {
    region: FileRegion,
    /// The region's length without the tail no block fits in.
    usable_len: u64,
    blocks: u64,
    bytes_left: u64,
    /// Where I/O goes now, relative to the region: all of it, or the current zone.
    /// Sequential positions, runs and random picks are relative to the window.
    window_start: u64,
    window_len: u64,
    window_blocks: u64,
    /// Bytes issued in the current zone (strided zones only).
    zone_bytes: u64,
    sequential_pos: [u64; DDIRS],
    run_left: u64,
    run_next: u64,
    choice: BlockChoice,
}

impl RegionCursor {
    pub(super) fn new(
        region: FileRegion,
        rules: &OffsetRules,
        distribution: &Distribution,
        generator: RandomGenerator,
        random_map: bool,
        rng: &mut WorkerRng,
    ) -> Self {
        // a sequential walk goes on to the file's end; the pass's bytes end it
        let usable_len = if Self::walks_to_file_end(rules) {
            region.room
        } else {
            region.len - region.len % rules.min_block
        };
        let blocks = usable_len / rules.unit;
        // skewed distributions are laid over one zone when I/O stays in zones
        let choice_blocks = match &rules.zones {
            Some(zones) => zones.range / rules.unit,
            None => blocks,
        };
        let mut choice = BlockChoice::new(
            distribution,
            generator,
            random_map,
            rules.spans_units,
            choice_blocks,
            rng,
        );
        if let (Some(spec), BlockChoice::Lfsr(lfsr)) = (&rules.sprandom, &choice) {
            let order = Sprandom::new(
                spec,
                region.len,
                rules.min_block,
                lfsr.clone(),
                rng.next_u32(),
            );
            choice = BlockChoice::Sprandom(Box::new(order));
        }
        let mut cursor = Self {
            region,
            usable_len,
            blocks,
            bytes_left: 0,
            window_start: 0,
            window_len: usable_len,
            window_blocks: blocks,
            zone_bytes: 0,
            sequential_pos: [0; DDIRS],
            run_left: 0,
            run_next: 0,
            choice,
        };
        cursor.bytes_left = cursor.pass_bytes(rules);
        if let Some(zones) = &rules.zones {
            cursor.enter_zone(0, zones, rules);
        }
        cursor
    }

    /// Sequential patterns outside zones: like fio, no byte count per region;
    /// a region is done when the next block does not fit before the file's end.
    fn walks_to_file_end(rules: &OffsetRules) -> bool {
        !rules.random && rules.zones.is_none()
    }

    /// Bytes one pass over this region transfers at most.
    fn pass_bytes(&self, rules: &OffsetRules) -> u64 {
        if Self::walks_to_file_end(rules) || matches!(self.choice, BlockChoice::Sprandom(_)) {
            u64::MAX
        } else if self.blocks == 0 {
            0
        } else {
            self.usable_len
        }
    }

    pub(super) fn region(&self) -> &FileRegion {
        &self.region
    }

    /// Start a new pass; the random map gets a fresh order so passes differ.
    pub(super) fn restart(&mut self, rules: &OffsetRules, rng: &mut WorkerRng) {
        self.bytes_left = self.pass_bytes(rules);
        match &rules.zones {
            Some(zones) => self.enter_zone(0, zones, rules),
            None => self.reset_window_state(rng),
        }
    }

    /// Fresh positions and random map for the window.
    fn reset_window_state(&mut self, rng: &mut WorkerRng) {
        self.sequential_pos = [0; DDIRS];
        self.run_left = 0;
        self.run_next = 0;
        match &mut self.choice {
            BlockChoice::Permuted {
                order,
                next_index,
                done,
            } => {
                *order = BlockPermutation::new(self.window_blocks, rng);
                *next_index = 0;
                if let Some(done) = done {
                    done.reset(self.window_blocks);
                }
            }
            BlockChoice::Lfsr(lfsr) => lfsr.restart(),
            _ => {}
        }
    }

    /// `random_generator=lfsr`, or a tausworthe without the random map, with a
    /// repeatable seed: start from fio's seed, so the blocks come in fio's order.
    pub(super) fn seed_as_fio(&mut self, seed: u64) {
        match &mut self.choice {
            BlockChoice::Lfsr(lfsr) => *lfsr = Lfsr::new(lfsr.blocks(), seed),
            BlockChoice::Taus(taus) => *taus = Taus::new(seed, taus.is_wide()),
            _ => {}
        }
    }

    /// `sprandom` with a repeatable seed: start from upstream fio's seeds of
    /// the block and the rewrite-chance streams, so the blocks come in its order.
    pub(super) fn seed_sprandom(&mut self, block_seed: u64, chance_seed: u32) {
        if let BlockChoice::Sprandom(sprandom) = &mut self.choice {
            sprandom.reseed(block_seed, chance_seed);
        }
    }

    /// Make the zone starting `start` bytes into the region the window. As in
    /// fio the window is the whole zonerange, even where the file ends inside
    /// it: an I/O that would cross the file's end ends the region's pass.
    /// Positions and the random map are renewed before the zone's first I/O.
    #[cold]
    fn enter_zone(&mut self, start: u64, zones: &StridedZones, rules: &OffsetRules) {
        self.window_start = start;
        self.window_len = zones.range;
        self.window_blocks = zones.range / rules.unit;
        self.zone_bytes = 0;
    }

    /// Before each I/O in a zone, as fio: after zonesize bytes on to the next
    /// zone (back to the first once the next starts at or past the file's end,
    /// not the region's); at every multiple of zonerange bytes in a zone (its
    /// start included) fresh positions and a fresh random map, so a zonesize
    /// larger than zonerange goes over the same zone again.
    #[inline]
    fn zone_step(&mut self, zones: &StridedZones, rules: &OffsetRules, rng: &mut WorkerRng) {
        if self.zone_bytes >= zones.size {
            let next = self.window_start + zones.stride();
            let start = if next < self.region.room { next } else { 0 };
            self.enter_zone(start, zones, rules);
        }
        if self.zone_bytes.is_multiple_of(zones.range) {
            self.reset_window_state(rng);
        }
    }

    /// The absolute offset and length of the next I/O of `ddir` with block size
    /// `len`, shortened so it neither crosses the region's end nor exceeds the
    /// pass's remaining bytes. `None` when this region's pass is complete.
    #[inline]
    pub(super) fn next(
        &mut self,
        ddir: Ddir,
        len: u64,
        rules: &OffsetRules,
        rng: &mut WorkerRng,
    ) -> Option<(u64, u64)> {
        if self.bytes_left == 0 {
            return None;
        }
        if let Some(zones) = &rules.zones {
            self.zone_step(zones, rules, rng);
        }
        let (offset, from_map) = if rules.random {
            let mut picked = self.random_offset(ddir, rules, rng);
            if picked.is_none() && rules.zones.is_some() {
                // the zone's random map ran out before a multiple of zonerange
                // (mixed block sizes): a fresh map, the same zone
                self.reset_window_state(rng);
                picked = self.random_offset(ddir, rules, rng);
            }
            let Some(picked) = picked else {
                self.bytes_left = 0;
                return None;
            };
            picked
        } else if rules.zones.is_some() {
            (self.zone_sequential_offset(ddir), false)
        } else {
            let Some(offset) = self.sequential_offset(ddir, rules) else {
                self.bytes_left = 0;
                return None;
            };
            (offset, false)
        };
        let room = self.window_len - offset;
        let len = if rules.zones.is_some() {
            // fio: an I/O may cross its zone's end, not the file's
            if self.window_start + offset + len > self.region.room {
                self.bytes_left = 0;
                return None;
            }
            len
        } else if len > room && Self::walks_to_file_end(rules) {
            // fio picks a size that fits: whole smallest blocks
            room - room % rules.min_block
        } else {
            len.min(room)
        }
        .min(self.bytes_left);
        let len = if from_map && rules.spans_units {
            let units = self
                .choice
                .mark(offset / rules.unit, len.div_ceil(rules.unit));
            len.min(units * rules.unit)
        } else {
            len
        };
        self.bytes_left -= len;
        // a zone counts whole I/Os: the one that crosses zonesize is its last
        self.zone_bytes += len;
        if rules.random {
            self.run_next = if rules.repeat_offsets {
                offset
            } else {
                offset + len
            };
        } else {
            self.sequential_pos[ddir.index()] = offset + len + rules.hole;
        }
        Some((self.region.start + self.window_start + offset, len))
    }

    /// Each direction walks the region on its own, as fio: done once its last
    /// I/O reached the file's end or the next block would cross it; a hole
    /// that carries the position past the file's end wraps to the region's
    /// start (fio compares the position, relative to the region, with the
    /// file's end offset).
    #[inline]
    fn sequential_offset(&mut self, ddir: Ddir, rules: &OffsetRules) -> Option<u64> {
        let next = self.sequential_pos[ddir.index()];
        let mut pos = next;
        if next > 0 {
            let last_end = next - rules.hole;
            if last_end >= self.window_len {
                return None;
            }
            if rules.hole > 0 && next >= self.region.start + self.window_len {
                pos = 0;
            }
        }
        (pos + rules.min_block <= self.window_len).then_some(pos)
    }

    /// In a zone each direction walks the window on its own and wraps at its
    /// end (holes, or a zonesize larger than the zone, carry it past the end
    /// before the bytes due are done).
    #[inline]
    fn zone_sequential_offset(&mut self, ddir: Ddir) -> u64 {
        let pos = &mut self.sequential_pos[ddir.index()];
        if *pos >= self.window_len {
            *pos = 0;
        }
        *pos
    }

    #[inline]
    fn random_offset(
        &mut self,
        ddir: Ddir,
        rules: &OffsetRules,
        rng: &mut WorkerRng,
    ) -> Option<(u64, bool)> {
        let align = rules.align[ddir.index()];
        if self.run_left > 0 && self.run_next < self.window_len {
            self.run_left -= 1;
            return Some((self.run_next - self.run_next % align, false));
        }
        let percent_random = rules.percent_random[ddir.index()];
        if percent_random < 100
            && self.run_next < self.window_len
            && rng.random_range(0..100) >= percent_random
        {
            return Some((self.run_next - self.run_next % align, false));
        }
        let block = self.choice.pick(ddir, self.window_blocks, rng)?;
        self.run_left = rules.run_len.saturating_sub(1);
        let offset = block * rules.unit;
        Some((offset - offset % align, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rules(random: bool, block: u64) -> OffsetRules {
        OffsetRules {
            random,
            hole: 0,
            run_len: 1,
            repeat_offsets: false,
            align: [block; DDIRS],
            unit: block,
            min_block: block,
            spans_units: false,
            percent_random: [100; DDIRS],
            zones: None,
            sprandom: None,
        }
    }

    #[test]
    fn the_random_map_cuts_an_io_at_a_done_unit_so_a_pass_covers_each_unit_once() {
        // fio: with bsrange an I/O is shortened at the first block already done
        let rules = OffsetRules {
            spans_units: true,
            ..rules(true, 512)
        };
        let mut cursor = cursor(64 * 512, &rules, &Distribution::Random, true);
        let mut rng = WorkerRng::seed_from_u64(5);
        let mut hits = [0u32; 64];
        while let Some((offset, len)) = cursor.next(Ddir::Write, 4 * 512, &rules, &mut rng) {
            for unit in offset / 512..(offset + len) / 512 {
                hits[unit as usize] += 1;
            }
        }
        assert!(
            hits.iter().all(|&n| n == 1),
            "expected each of the 64 units written once in the pass, saw {hits:?}"
        );
    }

    fn cursor(
        len: u64,
        rules: &OffsetRules,
        distribution: &Distribution,
        map: bool,
    ) -> RegionCursor {
        let region = FileRegion::new(0, 0, len);
        RegionCursor::new(
            region,
            rules,
            distribution,
            RandomGenerator::Tausworthe,
            map,
            &mut WorkerRng::seed_from_u64(3),
        )
    }

    /// Hit counts per block over `draws` picks of a skewed distribution.
    fn block_hits(distribution: &Distribution, blocks: u64, draws: usize) -> Vec<u64> {
        let rules = rules(true, 1);
        let mut cursor = cursor(blocks, &rules, distribution, false);
        let mut rng = WorkerRng::seed_from_u64(11);
        let mut hits = vec![0u64; blocks as usize];
        for _ in 0..draws {
            let (offset, _) = cursor
                .next(Ddir::Read, 1, &rules, &mut rng)
                .expect("budget");
            hits[offset as usize] += 1;
            cursor.bytes_left = blocks; // keep drawing past one pass
        }
        hits
    }

    fn share_of_hottest(hits: &[u64], fraction: f64) -> f64 {
        let mut sorted = hits.to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let hot = ((hits.len() as f64 * fraction) as usize).max(1);
        sorted[..hot].iter().sum::<u64>() as f64 / hits.iter().sum::<u64>() as f64
    }

    #[test]
    fn a_sequence_repeats_or_strides_per_direction_until_it_leaves_the_region() {
        let rules = rules(true, 4096);
        let blocks_of = |stride: bool, ddirs: &[Ddir]| {
            let sequence = Distribution::Sequence {
                blocks: vec![2, 0, 1],
                stride,
            };
            let mut cursor = cursor(8 * 4096, &rules, &sequence, true);
            let mut rng = WorkerRng::seed_from_u64(1);
            ddirs
                .iter()
                .cycle()
                .map_while(|&ddir| cursor.next(ddir, 4096, &rules, &mut rng))
                .map(|(offset, _)| offset / 4096)
                .collect::<Vec<u64>>()
        };
        assert_eq!(
            blocks_of(false, &[Ddir::Read]),
            [2, 0, 1, 2, 0, 1, 2, 0],
            "expected the list over and over for the region's 8 blocks"
        );
        assert_eq!(
            blocks_of(true, &[Ddir::Read]),
            [2, 0, 1, 5, 3, 4],
            "expected each round 3 blocks on, ending at block 8, past the region"
        );
        let sequence = Distribution::Sequence {
            blocks: vec![3, 1],
            stride: true,
        };
        let mut cursor = cursor(8 * 4096, &rules, &sequence, true);
        let mut rng = WorkerRng::seed_from_u64(1);
        let pass = |cursor: &mut RegionCursor, rng: &mut WorkerRng| {
            std::iter::from_fn(|| cursor.next(Ddir::Read, 4096, &rules, rng))
                .map(|(offset, _)| offset / 4096)
                .collect::<Vec<u64>>()
        };
        assert_eq!(
            pass(&mut cursor, &mut rng),
            [3, 1, 5, 3, 7, 5],
            "expected the first pass to stop at block 9"
        );
        cursor.restart(&rules, &mut rng);
        assert_eq!(
            pass(&mut cursor, &mut rng),
            Vec::<u64>::new(),
            "expected a later pass to go on from block 9 as fio's count does, so nothing"
        );
        assert_eq!(
            blocks_of(false, &[Ddir::Read, Ddir::Write]),
            [2, 2, 0, 0, 1, 1, 2, 2],
            "expected reads and writes to go through the list each on its own"
        );
    }

    #[test]
    fn zipf_concentrates_hits_on_few_scattered_blocks() {
        let hits = block_hits(&Distribution::Zipf(1.2), 1000, 100_000);
        assert!(share_of_hottest(&hits, 0.1) > 0.7);
        let first_tenth: u64 = hits[..100].iter().sum();
        assert!(first_tenth < 50_000, "hot blocks bunched at the start");
    }

    #[test]
    fn pareto_follows_its_hot_share() {
        // h = 0.2: about 80% of the accesses go to 20% of the blocks
        let hits = block_hits(&Distribution::Pareto(0.2), 1000, 100_000);
        let share = share_of_hottest(&hits, 0.2);
        assert!((0.77..0.85).contains(&share), "{share}");
    }

    #[test]
    fn normal_is_a_bell_around_the_middle() {
        let hits = block_hits(&Distribution::Normal(10.0), 1000, 100_000);
        // ±1σ = blocks 400..600 hold about 68% of the hits
        let within_sigma = hits[400..600].iter().sum::<u64>() as f64 / 100_000.0;
        assert!((0.65..0.71).contains(&within_sigma), "{within_sigma}");
    }

    #[test]
    fn zones_get_their_access_share() {
        let zoned = Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)]);
        let hits = block_hits(&zoned, 1000, 100_000);
        let share = |range: std::ops::Range<usize>| hits[range].iter().sum::<u64>() as f64 / 1e5;
        assert!((share(0..100) - 0.6).abs() < 0.01);
        assert!((share(100..300) - 0.3).abs() < 0.01);
        assert!((share(300..1000) - 0.1).abs() < 0.01);
    }

    #[test]
    fn random_map_ends_the_pass_after_every_block() {
        let rules = rules(true, 4096);
        let mut cursor = cursor(10 * 4096, &rules, &Distribution::Random, true);
        let mut rng = WorkerRng::seed_from_u64(1);
        let mut offsets: Vec<u64> =
            std::iter::from_fn(|| cursor.next(Ddir::Read, 4096, &rules, &mut rng))
                .map(|(offset, _)| offset)
                .collect();
        offsets.sort_unstable();
        assert_eq!(offsets, (0..10).map(|b| b * 4096).collect::<Vec<_>>());
    }

    const KIB: u64 = 1024;

    /// The offsets (KiB) of one pass of `bs`-byte I/Os over a `len`-byte region
    /// with strided zones of `zonesize`/`zonerange`/`zoneskip` KiB.
    fn strided_pass(random: bool, len: u64, bs: u64, zones: [u64; 3]) -> Vec<u64> {
        strided_pass_in_file(random, len, len, bs, zones)
    }

    /// [`strided_pass`] over the first `len` bytes of a `file_len`-byte file.
    fn strided_pass_in_file(
        random: bool,
        len: u64,
        file_len: u64,
        bs: u64,
        zones: [u64; 3],
    ) -> Vec<u64> {
        let mut rules = rules(random, bs);
        let [size, range, skip] = zones.map(|kib| kib * KIB);
        rules.zones = Some(StridedZones { size, range, skip });
        let region = FileRegion::new(0, 0, len).in_file(file_len);
        let mut rng = WorkerRng::seed_from_u64(1);
        let mut cursor = RegionCursor::new(
            region,
            &rules,
            &Distribution::Random,
            RandomGenerator::Tausworthe,
            true,
            &mut rng,
        );
        std::iter::from_fn(|| cursor.next(Ddir::Read, bs, &rules, &mut rng))
            .map(|(offset, _)| offset / KIB)
            .collect()
    }

    /// `per_zone` 4 KiB reads at the start of each zone in `zone_starts` (KiB), in order.
    fn visits(zone_starts: impl IntoIterator<Item = u64>, per_zone: u64) -> Vec<u64> {
        zone_starts
            .into_iter()
            .flat_map(|start| (0..per_zone).map(move |i| start + 4 * i))
            .collect()
    }

    // Expected offsets below were observed with fio 3.33 (`--write_iolog`) on a
    // 1 MiB file, bs=4k, rw=read, size=1m and the same zone options.

    #[test]
    fn strided_zones_step_by_zonerange() {
        // zonesize=16k zonerange=64k: 16 zones, 4 reads each, 4 rounds
        let pass = strided_pass(false, 1024 * KIB, 4 * KIB, [16, 64, 0]);
        assert_eq!(pass.len(), 256);
        let round = visits((0..16).map(|z| z * 64), 4);
        assert_eq!(pass, round.repeat(4));
    }

    #[test]
    fn zoneskip_adds_to_the_stride_and_the_last_fitting_zone_wraps() {
        // zonesize=16k zonerange=64k zoneskip=32k: zones every 96k, the last at 960k
        let pass = strided_pass(false, 1024 * KIB, 4 * KIB, [16, 64, 32]);
        let round = visits((0..11).map(|z| z * 96), 4);
        assert_eq!(pass[..round.len()], round[..]);
        assert_eq!(pass[round.len()..2 * round.len()], round[..]);
        // zonesize=16k zonerange=16k zoneskip=32k: the zone at 1008k still fits
        let pass = strided_pass(false, 1024 * KIB, 4 * KIB, [16, 16, 32]);
        let round = visits((0..22).map(|z| z * 48), 4);
        assert_eq!(pass[..2 * round.len()], round.repeat(2)[..]);
    }

    #[test]
    fn zonerange_defaults_to_zonesize() {
        // zonesize=16k zoneskip=16k, no zonerange: zones every 32k
        let pass = strided_pass(false, 1024 * KIB, 4 * KIB, [16, 16, 16]);
        assert_eq!(pass[..128], visits((0..32).map(|z| z * 32), 4)[..]);
    }

    #[test]
    fn zonesize_beyond_zonerange_repeats_the_zone() {
        // zonesize=64k zonerange=16k: each 16k zone read four times over
        let pass = strided_pass(false, 1024 * KIB, 4 * KIB, [64, 16, 0]);
        let expected: Vec<u64> = (0..16)
            .flat_map(|z| visits([z * 16], 4).repeat(4))
            .collect();
        assert_eq!(pass, expected);
    }

    #[test]
    fn the_io_that_crosses_zonesize_is_the_zones_last() {
        // a 128k file, bs=6k zonesize=16k zonerange=32k: three reads a zone; fio
        // adds a 22nd read (at 96k) for the 2k tail a pass here leaves out
        let pass = strided_pass(false, 128 * KIB, 6 * KIB, [16, 32, 0]);
        let round: Vec<u64> = (0..4)
            .flat_map(|z| [0, 6, 12].map(|o| z * 32 + o))
            .collect();
        assert_eq!(pass, round.repeat(2)[..21]);
    }

    #[test]
    fn random_zones_pick_within_the_zone() {
        // zonesize=16k zonerange=64k over 256k, randread: 4 distinct blocks per zone
        let pass = strided_pass(true, 256 * KIB, 4 * KIB, [16, 64, 0]);
        assert_eq!(pass.len(), 64);
        for (visit, offsets) in pass.chunks(4).enumerate() {
            let zone = (visit as u64 % 4) * 64;
            assert!(
                offsets.iter().all(|o| (zone..zone + 64).contains(o)),
                "{offsets:?}"
            );
            let distinct: std::collections::HashSet<_> = offsets.iter().collect();
            assert_eq!(distinct.len(), 4);
        }
    }

    #[test]
    fn an_io_past_the_files_end_ends_the_pass() {
        // a 100k file, zonerange=32k: the zone at 96k holds one block, and the
        // next read (at 100k) would cross the file's end: fio stops after 13
        let pass = strided_pass(false, 100 * KIB, 4 * KIB, [16, 32, 0]);
        let expected: Vec<u64> = visits([0, 32, 64], 4).into_iter().chain([96]).collect();
        assert_eq!(pass, expected, "expected fio's 13 reads, saw {pass:?}");
    }

    #[test]
    fn zones_stride_on_to_the_files_end_not_the_regions() {
        // size=100k of a 1 MiB file: fio's zones go on past 100k until the
        // pass has its 100k (25 reads, the last at 192k)
        let pass = strided_pass_in_file(false, 100 * KIB, 1024 * KIB, 4 * KIB, [16, 32, 0]);
        let expected: Vec<u64> = visits((0..7).map(|z| z * 32), 4)[..25].to_vec();
        assert_eq!(pass, expected, "expected fio's 25 reads, saw {pass:?}");
    }

    #[test]
    fn random_zones_beyond_zonerange_stay_in_the_zone_with_a_fresh_map() {
        // randread zonesize=64k zonerange=16k over 1 MiB: fio reads each 16k
        // zone 16 times (its 4 blocks in a new order every 16k), then moves
        // on; 16 zones make the 1 MiB
        let pass = strided_pass(true, 1024 * KIB, 4 * KIB, [64, 16, 0]);
        assert_eq!(pass.len(), 256, "expected 256 reads, saw {}", pass.len());
        for (visit, offsets) in pass.chunks(16).enumerate() {
            let zone = visit as u64 * 16;
            for round in offsets.chunks(4) {
                let mut blocks = round.to_vec();
                blocks.sort_unstable();
                assert_eq!(
                    blocks,
                    [zone, zone + 4, zone + 8, zone + 12],
                    "expected visit {visit} to read each block of the zone at {zone}k once per 16k, saw {offsets:?}"
                );
            }
        }
    }

    #[test]
    fn sequential_zones_beyond_zonerange_cross_the_zone_end() {
        // read bs=6k zonesize=64k zonerange=16k: the read at 12k crosses the
        // zone's end; the positions start over at 18k and again at 48k (a
        // multiple of zonerange); the zone ends after 66k
        let pass = strided_pass_in_file(false, 1020 * KIB, 1024 * KIB, 6 * KIB, [64, 16, 0]);
        let zone = [0, 6, 12, 0, 6, 12, 0, 6, 0, 6, 12];
        let expected: Vec<u64> = (0..3).flat_map(|z| zone.map(|o| z * 16 + o)).collect();
        assert_eq!(
            pass[..33],
            expected[..],
            "expected fio's offsets (KiB), saw {:?}",
            &pass[..33]
        );
    }

    #[test]
    fn larger_blocks_near_the_end_are_shortened() {
        let mut rules = rules(true, 4096);
        rules.min_block = 4096;
        let mut cursor = cursor(3 * 4096 + 100, &rules, &Distribution::Random, true);
        let mut rng = WorkerRng::seed_from_u64(1);
        while let Some((offset, len)) = cursor.next(Ddir::Write, 8192, &rules, &mut rng) {
            assert!(
                offset + len <= 3 * 4096,
                "{offset}+{len} crosses the usable end"
            );
        }
    }
}
