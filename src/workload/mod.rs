//! What each worker does next: direction, block size and offset of every I/O
//! ([`IoGenerator`]), when it may start ([`pacing::Pacer`]), and what a written
//! buffer holds ([`buffers::BufferFiller`]). All of it is per worker, seeded, and
//! allocation-free per I/O.

pub(crate) mod buffers;
mod choice;
mod lfsr;
mod offsets;
pub(crate) mod pacing;
mod permutation;
pub(crate) mod prio;
pub(crate) mod rng;
mod sprandom;
mod taus;
pub(crate) mod verify_header;

pub(crate) use crate::io_unit::NextIo;
pub(crate) use offsets::FileRegion;

use crate::job::spec::{Ddir, FileService, WorkloadSpec, DDIRS};
use choice::{DirectionPicker, SizePicker};
use offsets::{OffsetRules, RegionCursor};
use rand::Rng;
use rng::{stream_rng, RngStream, WorkerRng};

/// Generates the I/Os of one worker over its file regions, one pass at a time.
///
/// Regions are kept in (file, start) order and served as `file_service_type` says
/// (fio's default: round robin, one I/O each) among the first `openfiles` of the
/// regions still in the pass. A region's pass ends after its length
/// in bytes, or for random patterns with the random map once every block was picked;
/// the whole pass ends when every region's has.
#[derive(Debug, Clone)]
pub(crate) struct IoGenerator {
    direction: DirectionPicker,
    sizes: [SizePicker; DDIRS],
    /// `rw=trimwrite` and `randtrimwrite`: each trim is followed by a write of the same block.
    write_after_trim: bool,
    /// The write due after the last trim of a `trimwrite` job.
    follow_up: Option<NextIo>,
    rules: OffsetRules,
    /// Regions `..active` still have I/O left in this pass, in order; finished ones
    /// are moved behind them.
    regions: Vec<RegionCursor>,
    active: usize,
    /// `openfiles`: at most this many regions are served at a time.
    open_limit: usize,
    /// The regions served now: `..min(active, open_limit)`.
    serving: usize,
    service: FileService,
    /// The region being served and the I/Os it still gets before the next choice.
    current: usize,
    ios_left_on_current: u32,
    rng: WorkerRng,
}

impl IoGenerator {
    /// # Panics
    /// On specs `job::validate` rejects (block sizes of 0 or ≥ 4 GiB, an empty
    /// bssplit, invalid distribution parameters).
    pub(crate) fn new(w: &WorkloadSpec, mut regions: Vec<FileRegion>, seed: u64) -> Self {
        let direction = DirectionPicker::new(w.rw, w.rwmixread);
        let sizes = w.bs.each_ref().map(SizePicker::new);
        let align = Ddir::ALL.map(|ddir| match w.blockalign[ddir.index()] {
            0 => w.bs[ddir.index()].min(),
            align => align,
        });
        let used = |values: [u64; DDIRS]| {
            Ddir::ALL
                .into_iter()
                .filter(|&ddir| direction.uses(ddir))
                .map(move |ddir| values[ddir.index()])
        };
        let in_use = |values| {
            used(values)
                .min()
                .expect("a pattern uses at least one direction")
        };
        let largest_block = w.used_block_sizes().map(|bs| bs.max()).max();
        let rules = OffsetRules {
            random: w.rw.is_random(),
            hole: if w.rw.is_random() { 0 } else { w.rw_modifier },
            run_len: if w.rw.is_random() { w.rw_modifier } else { 1 },
            repeat_offsets: w.repeat_offsets,
            align,
            unit: in_use(align),
            min_block: in_use(Ddir::ALL.map(|ddir| w.bs[ddir.index()].min())),
            spans_units: largest_block > Some(in_use(align)),
            percent_random: w.percentage_random,
            zones: w.zones,
            sprandom: w.sprandom,
        };
        let mut rng = stream_rng(seed, RngStream::Offsets);
        // a fixed order, restored for each pass, keeps passes alike
        regions.sort_unstable_by_key(|region| (region.file, region.start));
        let regions: Vec<RegionCursor> = regions
            .into_iter()
            .map(|region| {
                RegionCursor::new(
                    region,
                    &rules,
                    &w.distribution,
                    w.random_generator,
                    w.randommap,
                    &mut rng,
                )
            })
            .collect();
        let open_limit = w.open_files.map_or(usize::MAX, |limit| limit as usize);
        Self {
            direction,
            sizes,
            write_after_trim: w.rw.writes_after_trim(),
            follow_up: None,
            rules,
            active: regions.len(),
            open_limit,
            serving: regions.len().min(open_limit),
            regions,
            service: w.file_service,
            current: 0,
            ios_left_on_current: 0,
            rng,
        }
    }

    /// The region the next I/O goes to (`serving` > 0).
    #[inline]
    fn choose_region(&mut self) -> usize {
        if self.ios_left_on_current == 0 || self.current >= self.serving {
            let (next, ios) = match self.service {
                FileService::RoundRobin { ios } => (self.current % self.serving, ios),
                FileService::Random { ios } => (self.rng.random_range(0..self.serving), ios),
                FileService::Sequential => (0, u32::MAX),
            };
            self.current = next;
            self.ios_left_on_current = ios;
        }
        self.ios_left_on_current -= 1;
        self.current
    }

    /// The region at `index` is done for this pass: move it behind the active ones,
    /// keeping the others in order, so the next in turn takes its place (and under
    /// `openfiles` the first waiting region joins the served ones).
    #[cold]
    fn retire(&mut self, index: usize) {
        self.regions[index..self.active].rotate_left(1);
        self.active -= 1;
        self.serving = self.active.min(self.open_limit);
        self.ios_left_on_current = 0;
    }

    /// `random_generator=lfsr` (or a tausworthe without the random map) with a
    /// repeatable seed: start each region's register or generator where fio
    /// starts that of the worker it numbers `worker_number`, so the blocks come
    /// in fio's order.
    pub(crate) fn seed_offsets_as_fio(&mut self, w: &WorkloadSpec, worker_number: u64) {
        if !w.randrepeat {
            return;
        }
        if w.sprandom.is_some() {
            // upstream fio (sprandom is newer than 3.33) seeds offsets from randseed
            let seed = |stream| lfsr::fio_stream_seed(w.randseed, worker_number, stream);
            for region in &mut self.regions {
                region.seed_sprandom(
                    seed(lfsr::BLOCK_STREAM),
                    seed(sprandom::CHANCE_STREAM) as u32,
                );
            }
            return;
        }
        let seed =
            lfsr::fio_block_seed(w.offsets_from_randseed.then_some(w.randseed), worker_number);
        for region in &mut self.regions {
            region.seed_as_fio(seed);
        }
    }

    /// Start a new pass (the next loop, or a time-based run wrapping around).
    pub(crate) fn restart(&mut self) {
        self.regions
            .sort_unstable_by_key(|cursor| (cursor.region().file, cursor.region().start));
        for region in &mut self.regions {
            region.restart(&self.rules, &mut self.rng);
        }
        self.active = self.regions.len();
        self.serving = self.active.min(self.open_limit);
        self.current = 0;
        self.ios_left_on_current = 0;
        self.follow_up = None;
    }
}

/// Per I/O: no allocation (regions are swapped in place, pickers only read their
/// tables), no lock, no syscall.
impl Iterator for IoGenerator {
    type Item = NextIo;

    /// The next I/O, or `None` when this pass over the regions is complete
    /// (after [`IoGenerator::restart`] it yields the next pass).
    #[inline]
    fn next(&mut self) -> Option<NextIo> {
        if let Some(write) = self.follow_up.take() {
            return Some(write);
        }
        while self.active > 0 {
            let index = self.choose_region();
            let ddir = self.direction.pick(&mut self.rng);
            let len = self.sizes[ddir.index()].pick(&mut self.rng);
            let region = &mut self.regions[index];
            match region.next(ddir, u64::from(len), &self.rules, &mut self.rng) {
                Some((offset, len)) => {
                    if self.ios_left_on_current == 0 {
                        // round robin moves on to the next region in order
                        self.current = index + 1;
                    }
                    let io = NextIo {
                        ddir,
                        file: region.region().file,
                        offset,
                        // never longer than the block size drawn, which fits in u32
                        len: len as u32,
                    };
                    if self.write_after_trim {
                        self.follow_up = Some(NextIo {
                            ddir: Ddir::Write,
                            ..io
                        });
                    }
                    return Some(io);
                }
                None => self.retire(index),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::spec::{BlockSizes, Distribution, RandomGenerator, RwPattern};
    use std::collections::HashMap;

    const KIB: u64 = 1024;

    fn spec(rw: RwPattern, bs: u64) -> WorkloadSpec {
        WorkloadSpec {
            rw,
            rw_modifier: if rw.is_random() { 1 } else { 0 },
            repeat_offsets: false,
            rwmixread: 50,
            bs: [
                BlockSizes::Fixed(bs),
                BlockSizes::Fixed(bs),
                BlockSizes::Fixed(bs),
            ],
            blockalign: [0; 3],
            randommap: true,
            randrepeat: true,
            randseed: 0,
            offsets_from_randseed: false,
            random_generator: Default::default(),
            distribution: Distribution::Random,
            percentage_random: [100; 3],
            file_service: FileService::RoundRobin { ios: 1 },
            open_files: None,
            zones: None,
            sprandom: None,
        }
    }

    fn one_file(len: u64) -> Vec<FileRegion> {
        vec![FileRegion::new(0, 0, len)]
    }

    fn pass(generator: &mut IoGenerator) -> Vec<NextIo> {
        generator.by_ref().collect()
    }

    #[test]
    fn sequential_read_walks_the_region_once() {
        let region = FileRegion::new(7, 8 * KIB, 40 * KIB + 100);
        let mut generator = IoGenerator::new(&spec(RwPattern::Read, 4 * KIB), vec![region], 1);
        let ios = pass(&mut generator);
        let offsets: Vec<u64> = ios.iter().map(|io| io.offset).collect();
        // the partial block at the tail is dropped, as fio does
        assert_eq!(
            offsets,
            (0..10).map(|i| 8 * KIB + i * 4 * KIB).collect::<Vec<_>>()
        );
        assert!(ios
            .iter()
            .all(|io| io.file == 7 && io.len == 4096 && io.ddir == Ddir::Read));
        generator.restart();
        assert_eq!(pass(&mut generator), ios);
    }

    #[test]
    fn sequential_holes_skip_bytes_and_wrap() {
        let mut w = spec(RwPattern::Write, 4 * KIB);
        w.rw_modifier = 4 * KIB;
        let generator = IoGenerator::new(&w, one_file(32 * KIB), 1);
        let offsets: Vec<u64> = generator.take(8).map(|io| io.offset / KIB).collect();
        // wrapping after the end like fio; the worker's budget ends the pass
        assert_eq!(offsets, [0, 8, 16, 24, 0, 8, 16, 24]);
    }

    #[test]
    fn mixed_sequential_directions_keep_their_own_position() {
        let mut generator =
            IoGenerator::new(&spec(RwPattern::ReadWrite, 4 * KIB), one_file(64 * KIB), 3);
        let ios = pass(&mut generator);
        // each direction walks to the file's end; the worker's budget ends the
        // pass after the region's worth of bytes
        assert!(
            ios.iter().map(|io| u64::from(io.len)).sum::<u64>() > 64 * KIB,
            "expected the generator to go on past a region's worth"
        );
        for ddir in [Ddir::Read, Ddir::Write] {
            let offsets: Vec<u64> = ios
                .iter()
                .filter(|io| io.ddir == ddir)
                .map(|io| io.offset)
                .collect();
            assert!(!offsets.is_empty());
            assert_eq!(
                offsets,
                (0..offsets.len() as u64)
                    .map(|i| i * 4 * KIB)
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn random_map_covers_every_block_once_per_pass() {
        for blocks in [1, 2, 3, 7, 64, 100, 1000, 4099] {
            let mut generator = IoGenerator::new(
                &spec(RwPattern::RandRead, 4 * KIB),
                one_file(blocks * 4 * KIB),
                blocks,
            );
            for _ in 0..2 {
                let mut offsets: Vec<u64> =
                    pass(&mut generator).iter().map(|io| io.offset).collect();
                offsets.sort_unstable();
                assert_eq!(
                    offsets,
                    (0..blocks).map(|b| b * 4 * KIB).collect::<Vec<_>>(),
                    "{blocks} blocks"
                );
                generator.restart();
            }
        }
    }

    #[test]
    fn lfsr_covers_every_block_once_per_pass_without_a_random_map() {
        // fio's t0021: norandommap and random_generator=lfsr still hit each block once
        let w = WorkloadSpec {
            randommap: false,
            random_generator: RandomGenerator::Lfsr,
            ..spec(RwPattern::RandRead, 4 * KIB)
        };
        for blocks in [1, 2, 3, 7, 8, 100, 256, 4099] {
            let mut generator = IoGenerator::new(&w, one_file(blocks * 4 * KIB), blocks);
            generator.seed_offsets_as_fio(&w, 1);
            let mut passes = Vec::new();
            for _ in 0..3 {
                let offsets: Vec<u64> = pass(&mut generator).iter().map(|io| io.offset).collect();
                let mut sorted = offsets.clone();
                sorted.sort_unstable();
                assert_eq!(
                    sorted,
                    (0..blocks).map(|b| b * 4 * KIB).collect::<Vec<_>>(),
                    "expected each of {blocks} blocks once per pass, saw the left offsets"
                );
                passes.push(offsets);
                generator.restart();
            }
            assert_eq!(
                passes[1], passes[2],
                "expected lfsr passes after the first to repeat their order ({blocks} blocks)"
            );
        }
    }

    #[test]
    fn lfsr_starts_where_fio_3_33_does() {
        // fio 3.33, 256 blocks of 4k, default seeds, its first worker
        let w = WorkloadSpec {
            random_generator: RandomGenerator::Lfsr,
            ..spec(RwPattern::RandRead, 4 * KIB)
        };
        let mut generator = IoGenerator::new(&w, one_file(1024 * KIB), 1);
        generator.seed_offsets_as_fio(&w, 1);
        let first: Vec<u64> = pass(&mut generator)[..8]
            .iter()
            .map(|io| io.offset / (4 * KIB))
            .collect();
        assert_eq!(
            first,
            [235, 205, 163, 196, 114, 41, 154, 93],
            "expected fio 3.33's first blocks, saw the left ones"
        );
    }

    #[test]
    fn passes_use_different_orders_but_fixed_seeds_repeat() {
        let w = spec(RwPattern::RandWrite, 4 * KIB);
        let mut generator = IoGenerator::new(&w, one_file(1024 * KIB), 9);
        let first = pass(&mut generator);
        generator.restart();
        assert_ne!(pass(&mut generator), first);
        let mut again = IoGenerator::new(&w, one_file(1024 * KIB), 9);
        assert_eq!(pass(&mut again), first);
        let mut other_seed = IoGenerator::new(&w, one_file(1024 * KIB), 10);
        assert_ne!(pass(&mut other_seed), first);
    }

    #[test]
    fn norandommap_picks_independently_for_a_regions_worth() {
        let mut w = spec(RwPattern::RandRead, 4 * KIB);
        w.randommap = false;
        let mut generator = IoGenerator::new(&w, one_file(1000 * 4 * KIB), 2);
        let ios = pass(&mut generator);
        assert_eq!(ios.len(), 1000);
        let distinct: std::collections::HashSet<u64> = ios.iter().map(|io| io.offset).collect();
        // uniform picks with replacement leave about 1/e of the blocks unvisited
        assert!((580..700).contains(&distinct.len()), "{}", distinct.len());
        assert!(ios.iter().all(|io| io.offset % (4 * KIB) == 0));
    }

    #[test]
    fn random_runs_take_consecutive_offsets() {
        let mut w = spec(RwPattern::RandRead, 4 * KIB);
        w.rw_modifier = 4;
        let mut generator = IoGenerator::new(&w, one_file(4096 * 4 * KIB), 2);
        let ios = pass(&mut generator);
        let runs = ios.chunks(4).take(100);
        let consecutive = runs
            .filter(|run| {
                run.windows(2)
                    .all(|pair| pair[1].offset == pair[0].offset + 4 * KIB)
            })
            .count();
        // a run is cut short only when it reaches the region's end
        assert!(consecutive >= 98, "{consecutive}");
    }

    #[test]
    fn rw_sequencer_identical_repeats_the_offset_of_each_run() {
        let mut w = spec(RwPattern::RandRead, 4 * KIB);
        w.rw_modifier = 4;
        w.repeat_offsets = true;
        let mut generator = IoGenerator::new(&w, one_file(64 * 4 * KIB), 2);
        let ios = pass(&mut generator);
        // the pass still moves the region's worth of bytes, in runs of one offset
        assert_eq!(ios.len(), 64);
        assert!(ios
            .chunks(4)
            .all(|run| run.iter().all(|io| io.offset == run[0].offset)));
        let picks: std::collections::HashSet<u64> = ios.iter().map(|io| io.offset).collect();
        assert_eq!(picks.len(), 16);
    }

    #[test]
    fn blockalign_and_bssplit_shape_offsets_and_sizes() {
        let mut w = spec(RwPattern::RandRw, 4 * KIB);
        w.bs = [
            BlockSizes::Split(vec![(4 * KIB, 75), (16 * KIB, 25)]),
            BlockSizes::Fixed(8 * KIB),
            BlockSizes::Fixed(4 * KIB),
        ];
        w.blockalign = [0, 16 * KIB, 0];
        w.randommap = false;
        let mut generator = IoGenerator::new(&w, one_file(4 * 1024 * KIB), 4);
        let ios = pass(&mut generator);
        assert_eq!(
            ios.iter().map(|io| u64::from(io.len)).sum::<u64>(),
            4 * 1024 * KIB
        );
        // the pass's last I/O may be shortened to the bytes left
        for io in &ios[..ios.len() - 1] {
            match io.ddir {
                Ddir::Read => assert!(io.len == 4096 || io.len == 16384),
                Ddir::Write => {
                    assert_eq!(io.len, 8192);
                    assert_eq!(io.offset % (16 * KIB), 0);
                }
                Ddir::Trim => panic!("randrw issued a trim"),
            }
            assert!(io.offset + u64::from(io.len) <= 4 * 1024 * KIB);
        }
    }

    #[test]
    fn files_are_served_round_robin_until_each_is_done() {
        let regions = vec![
            FileRegion::new(0, 0, 2 * 4 * KIB),
            FileRegion::new(1, 0, 5 * 4 * KIB),
            FileRegion::new(2, 0, 3 * 4 * KIB),
        ];
        let mut generator = IoGenerator::new(&spec(RwPattern::Read, 4 * KIB), regions, 1);
        let files: Vec<u32> = pass(&mut generator).iter().map(|io| io.file).collect();
        assert_eq!(&files[..6], [0, 1, 2, 0, 1, 2]);
        let mut per_file = HashMap::new();
        files
            .iter()
            .for_each(|file| *per_file.entry(*file).or_insert(0) += 1);
        assert_eq!(per_file, HashMap::from([(0, 2), (1, 5), (2, 3)]));
    }

    fn three_files() -> Vec<FileRegion> {
        (0..3)
            .map(|file| FileRegion::new(file, 0, 4 * 4 * KIB))
            .collect()
    }

    fn files_served(service: FileService) -> Vec<u32> {
        let mut w = spec(RwPattern::Read, 4 * KIB);
        w.file_service = service;
        let mut generator = IoGenerator::new(&w, three_files(), 5);
        pass(&mut generator).iter().map(|io| io.file).collect()
    }

    #[test]
    fn file_service_type_orders_the_files() {
        assert_eq!(
            files_served(FileService::Sequential),
            [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
        );
        assert_eq!(
            files_served(FileService::RoundRobin { ios: 2 }),
            [0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2]
        );
        let random = files_served(FileService::Random { ios: 1 });
        assert_eq!(random.len(), 12);
        assert_ne!(random, files_served(FileService::RoundRobin { ios: 1 }));
        for file in 0..3 {
            assert_eq!(random.iter().filter(|&&f| f == file).count(), 4);
        }
    }

    #[test]
    fn openfiles_serves_a_window_of_files_that_moves_on_as_each_is_done() {
        let mut w = spec(RwPattern::Read, 4 * KIB);
        w.open_files = Some(2);
        let mut generator = IoGenerator::new(&w, three_files(), 5);
        let files: Vec<u32> = pass(&mut generator).iter().map(|io| io.file).collect();
        // file 2 waits until file 0 is done, then takes its turn after file 1
        assert_eq!(files, [0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2]);
        generator.restart();
        assert_eq!(
            pass(&mut generator)
                .iter()
                .map(|io| io.file)
                .collect::<Vec<_>>(),
            files
        );
        w.open_files = Some(1);
        w.file_service = FileService::Random { ios: 1 };
        let mut generator = IoGenerator::new(&w, three_files(), 5);
        let files: Vec<u32> = pass(&mut generator).iter().map(|io| io.file).collect();
        assert_eq!(files, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    }

    #[test]
    fn percentage_random_mixes_sequential_steps_into_random_picks() {
        let follows = |percent: u32| {
            let mut w = spec(RwPattern::RandRead, 4 * KIB);
            w.randommap = false;
            w.percentage_random = [percent, 100, 100];
            let mut generator = IoGenerator::new(&w, one_file(1 << 30), 8);
            let ios = pass(&mut generator);
            let steps = ios
                .windows(2)
                .take(10_000)
                .filter(|pair| pair[1].offset == pair[0].offset + 4 * KIB)
                .count();
            steps as f64 / 10_000.0
        };
        assert!(follows(100) < 0.01);
        assert!((0.7..0.8).contains(&follows(25)), "{}", follows(25));
        assert!(follows(0) > 0.99);
    }

    #[test]
    fn trim_patterns_walk_the_region_with_their_own_block_size() {
        let mut w = spec(RwPattern::Trim, 4 * KIB);
        w.bs[2] = BlockSizes::Fixed(16 * KIB);
        w.blockalign[2] = 16 * KIB;
        let ios = pass(&mut IoGenerator::new(&w, one_file(64 * KIB), 1));
        let trims: Vec<(Ddir, u64, u32)> = ios
            .iter()
            .map(|io| (io.ddir, io.offset / KIB, io.len))
            .collect();
        assert_eq!(
            trims,
            [0, 16, 32, 48].map(|kib| (Ddir::Trim, kib, 16 * 1024))
        );
        let mut random = pass(&mut IoGenerator::new(
            &WorkloadSpec {
                rw: RwPattern::RandTrim,
                ..w
            },
            one_file(64 * KIB),
            1,
        ));
        assert!(random.iter().all(|io| io.ddir == Ddir::Trim));
        random.sort_unstable_by_key(|io| io.offset);
        assert_eq!(random, ios);
    }

    #[test]
    fn trimwrite_writes_each_block_right_after_trimming_it() {
        let mut generator =
            IoGenerator::new(&spec(RwPattern::TrimWrite, 4 * KIB), one_file(16 * KIB), 1);
        let ios: Vec<(Ddir, u64)> = pass(&mut generator)
            .iter()
            .map(|io| (io.ddir, io.offset / KIB))
            .collect();
        let pairs = [0, 4, 8, 12].map(|kib| [(Ddir::Trim, kib), (Ddir::Write, kib)]);
        assert_eq!(ios, pairs.concat());
    }

    #[test]
    fn randtrimwrite_writes_each_random_block_right_after_trimming_it() {
        let mut generator = IoGenerator::new(
            &spec(RwPattern::RandTrimWrite, 4 * KIB),
            one_file(64 * KIB),
            3,
        );
        let ios = pass(&mut generator);
        assert_eq!(
            ios.len(),
            32,
            "expected 16 trims and 16 writes, saw {ios:?}"
        );
        let mut trimmed: Vec<u64> = ios
            .chunks(2)
            .map(|pair| {
                assert!(
                    pair[0].ddir == Ddir::Trim
                        && pair[1]
                            == NextIo {
                                ddir: Ddir::Write,
                                ..pair[0]
                            },
                    "expected a trim then a write of the same block, saw {pair:?}"
                );
                pair[0].offset / (4 * KIB)
            })
            .collect();
        assert_ne!(
            trimmed,
            (0..16).collect::<Vec<_>>(),
            "expected a random order"
        );
        trimmed.sort_unstable();
        assert_eq!(
            trimmed,
            (0..16).collect::<Vec<_>>(),
            "expected each block once"
        );
    }

    #[test]
    fn regions_smaller_than_a_block_yield_nothing() {
        let mut generator = IoGenerator::new(&spec(RwPattern::RandRead, 4 * KIB), one_file(100), 1);
        assert_eq!(generator.next(), None);
        let mut generator = IoGenerator::new(&spec(RwPattern::Read, 4 * KIB), Vec::new(), 1);
        assert_eq!(generator.next(), None);
    }

    #[test]
    fn fixed_seed_gives_a_fixed_sequence() {
        let mut generator =
            IoGenerator::new(&spec(RwPattern::RandRw, 4 * KIB), one_file(1024 * KIB), 42);
        let first: Vec<(Ddir, u64)> = (0..4)
            .map(|_| {
                generator
                    .next()
                    .map(|io| (io.ddir, io.offset / KIB))
                    .unwrap()
            })
            .collect();
        let expected = [
            (Ddir::Read, 468),
            (Ddir::Write, 360),
            (Ddir::Write, 928),
            (Ddir::Read, 292),
        ];
        assert_eq!(first, expected);
    }
}
