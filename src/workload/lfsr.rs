//! `random_generator=lfsr`: a maximal-length linear feedback shift register
//! over the blocks of a region, as fio has it.
//!
//! An n-bit register with maximal taps runs through every n-bit state but one
//! (all ones) before it repeats. With the smallest n for which `2^n > blocks`,
//! the states below `blocks` are the block numbers, and skipping the others
//! gives each block exactly once per period: a full pass with no random map.
//!
//! The register, its taps and its start are fio's, so the same seed gives the
//! same order of blocks as fio: a Galois register that shifts right, sets the
//! top bit and XORs the tap mask in when the bit shifted out was 0; the state
//! starts at the seed's low n bits, and the first block of a job comes two
//! steps on from there (fio's register skips one state on its first draw only).

/// Tap positions (1-based bit numbers) of a maximal-length register of each
/// width, from the published tables of maximal LFSR taps. Widths below 3 have
/// none; the first tap is the width.
const TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// fio's index of the block-offset stream among a worker's random streams.
pub(super) const BLOCK_STREAM: u32 = 6;

/// fio 3.33's repeatable seed of a worker's block-offset stream, for fio's
/// 1-based number of the worker in the run: a fixed constant times that number
/// (`randrepeat=1`, whatever `randseed` says), or from `randseed=` with
/// `randrepeat=0` as [`fio_stream_seed`] has it.
pub(super) fn fio_block_seed(randseed: Option<u64>, worker_number: u64) -> u64 {
    const DEFAULT_SEED: u64 = 0xb189_9bed;
    match randseed {
        None => DEFAULT_SEED.wrapping_mul(worker_number),
        Some(randseed) => fio_stream_seed(randseed, worker_number, BLOCK_STREAM),
    }
}

/// fio's seed of the random stream with index `stream` of the worker numbered
/// `worker_number`: `randseed` times a fixed multiplier once per stream up to
/// this one (and four more), times the number, plus the stream's index. Upstream
/// fio (3.42) seeds every stream so, the block offsets too.
pub(super) fn fio_stream_seed(randseed: u64, worker_number: u64, stream: u32) -> u64 {
    const MULTIPLIER: u64 = 0x9e37_0001;
    (0..4 + stream)
        .fold(randseed, |seed, _| seed.wrapping_mul(MULTIPLIER))
        .wrapping_mul(worker_number)
        .wrapping_add(u64::from(stream))
}

/// The register of one region: hands out each of `blocks` block numbers once.
#[derive(Debug, Clone)]
pub(super) struct Lfsr {
    blocks: u64,
    top_bit: u64,
    xor_mask: u64,
    seed: u64,
    state: u64,
    handed_out: u64,
    /// The very first draw steps twice (fio's quirk); later passes do not.
    first_draw: bool,
}

impl Lfsr {
    /// A register over `0..blocks` (`blocks` < 2^63) starting from `seed`.
    pub(super) fn new(blocks: u64, seed: u64) -> Self {
        let width = (3..64)
            .find(|&bits| 1u64 << bits > blocks)
            .expect("fewer than 2^63 blocks");
        let taps = TAPS[width];
        let mut lfsr = Lfsr {
            blocks,
            top_bit: 1 << (width - 1),
            xor_mask: taps.iter().fold(0, |mask, &tap| mask | 1 << (tap - 1)),
            seed,
            state: 0,
            handed_out: 0,
            first_draw: true,
        };
        lfsr.restart();
        lfsr
    }

    pub(super) fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Back to the seed for a new pass. The all-ones state never changes, so
    /// a seed whose low bits are all ones (where fio refuses to start) starts
    /// one state below it.
    pub(super) fn restart(&mut self) {
        let all_ones = (self.top_bit << 1) - 1;
        self.state = self.seed & all_ones;
        if self.state == all_ones {
            self.state -= 1;
        }
        self.handed_out = 0;
    }

    #[inline]
    fn step(&mut self) {
        let feedback = if self.state & 1 == 0 {
            self.xor_mask
        } else {
            0
        };
        self.state = ((self.state >> 1) | self.top_bit) ^ feedback;
    }

    /// The next block of this pass; `None` once every block was handed out.
    #[inline]
    pub(super) fn next_block(&mut self) -> Option<u64> {
        if self.handed_out == self.blocks {
            return None;
        }
        self.handed_out += 1;
        if std::mem::take(&mut self.first_draw) {
            self.step();
        }
        self.step();
        while self.state >= self.blocks {
            self.step();
        }
        Some(self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(lfsr: &mut Lfsr) -> Vec<u64> {
        std::iter::from_fn(|| lfsr.next_block()).collect()
    }

    #[test]
    fn every_tap_set_gives_a_full_period() {
        // a register that is not maximal comes back to its start early
        for width in 3..=20usize {
            let mut lfsr = Lfsr::new((1 << (width - 1)) + 1, 0);
            let start = lfsr.state;
            let mut period = 0u64;
            loop {
                lfsr.step();
                period += 1;
                if lfsr.state == start {
                    break;
                }
            }
            assert_eq!(
                period,
                (1 << width) - 1,
                "expected the {width}-bit register to run through 2^{width}-1 states, it came back after {period}"
            );
        }
    }

    #[test]
    fn a_pass_hands_out_each_block_once() {
        for blocks in [1, 2, 7, 8, 9, 100, 256, 1000, 4097] {
            for seed in [0, 1, 12_345, u64::MAX] {
                let mut lfsr = Lfsr::new(blocks, seed);
                let mut order = pass(&mut lfsr);
                assert_eq!(
                    order.len() as u64,
                    blocks,
                    "expected {blocks} blocks from seed {seed}, saw {}",
                    order.len()
                );
                order.sort_unstable();
                assert!(
                    order.iter().copied().eq(0..blocks),
                    "expected each of 0..{blocks} once from seed {seed}, saw {order:?}"
                );
            }
        }
    }

    #[test]
    fn later_passes_repeat_an_order_the_first_pass_rotates() {
        // the in-range states form one cycle; the first pass starts one state on
        let mut lfsr = Lfsr::new(256, 77);
        let first = pass(&mut lfsr);
        lfsr.restart();
        let second = pass(&mut lfsr);
        lfsr.restart();
        assert_eq!(
            second,
            pass(&mut lfsr),
            "expected passes after the first to repeat"
        );
        let rotated = [&second[1..], &second[..1]].concat();
        assert!(
            first == second || first == rotated,
            "expected the first pass {first:?} to be the later pass {second:?} or it rotated by one"
        );
    }

    #[test]
    fn fio_seeds_its_block_stream_from_randseed_and_the_worker_number() {
        // pinned from fio 3.33: randseed * 0x9e370001^10 * worker + 6 (mod 2^64), else 0xb1899bed * worker
        assert_eq!(fio_block_seed(Some(1), 1), 0x046d_27c3_2e26_0007);
        assert_eq!(fio_block_seed(Some(0), 3), 6);
        assert_eq!(fio_block_seed(None, 2), 2 * 0xb189_9bed);
    }
}
