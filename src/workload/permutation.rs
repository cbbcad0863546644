//! A seeded bijection on `0..blocks` that needs no memory per block.
//!
//! fio remembers visited blocks in a bitmap; a permutation gives the same
//! "every block exactly once per pass" guarantee with O(1) state and O(1) work
//! per offset: the i-th I/O of a pass goes to block `permutation.get(i)`.
//!
//! It is a balanced Feistel network over the smallest even-bit domain that holds
//! `blocks`, with cycle walking: values that land outside `0..blocks` are fed
//! through again until they fall inside. Because the domain is at most four times
//! larger than `blocks`, that takes fewer than four rounds on average.

use super::rng::{mix64, WorkerRng};
use rand::RngCore;

const ROUNDS: usize = 4;

#[derive(Debug, Clone)]
pub(super) struct BlockPermutation {
    blocks: u64,
    half_bits: u32,
    half_mask: u64,
    round_keys: [u64; ROUNDS],
}

impl BlockPermutation {
    /// A permutation of `0..blocks` keyed from `rng`.
    pub(super) fn new(blocks: u64, rng: &mut WorkerRng) -> Self {
        let domain_bits = (64 - blocks.saturating_sub(1).leading_zeros()).max(2);
        let half_bits = domain_bits.div_ceil(2);
        Self {
            blocks,
            half_bits,
            half_mask: u64::MAX >> (64 - half_bits),
            round_keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    pub(super) fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The block at position `index` (< `blocks`) of the permuted order.
    #[inline]
    pub(super) fn get(&self, index: u64) -> u64 {
        debug_assert!(index < self.blocks);
        let mut value = index;
        loop {
            value = self.feistel(value);
            if value < self.blocks {
                return value;
            }
        }
    }

    #[inline]
    fn feistel(&self, value: u64) -> u64 {
        let mut left = value >> self.half_bits;
        let mut right = value & self.half_mask;
        for key in self.round_keys {
            let next_right = left ^ (mix64(right ^ key) & self.half_mask);
            left = right;
            right = next_right;
        }
        (left << self.half_bits) | right
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn assert_is_permutation(blocks: u64, seed: u64) {
        let permutation = BlockPermutation::new(blocks, &mut WorkerRng::seed_from_u64(seed));
        let mut seen = vec![false; blocks as usize];
        for index in 0..blocks {
            let block = permutation.get(index);
            assert!(block < blocks, "{block} out of 0..{blocks}");
            assert!(
                !seen[block as usize],
                "block {block} twice (blocks={blocks})"
            );
            seen[block as usize] = true;
        }
    }

    #[test]
    fn visits_every_block_once_for_many_sizes() {
        for blocks in (1..=70).chain([127, 128, 129, 1000, 4095, 4097, 65_537]) {
            assert_is_permutation(blocks, blocks * 31);
        }
    }

    #[test]
    fn order_depends_on_the_key_and_is_not_identity() {
        let a = BlockPermutation::new(1000, &mut WorkerRng::seed_from_u64(1));
        let b = BlockPermutation::new(1000, &mut WorkerRng::seed_from_u64(2));
        let order_a: Vec<u64> = (0..1000).map(|i| a.get(i)).collect();
        let order_b: Vec<u64> = (0..1000).map(|i| b.get(i)).collect();
        assert_ne!(order_a, order_b);
        let in_place = order_a.iter().enumerate().filter(|(i, b)| *i as u64 == **b);
        assert!(in_place.count() < 20);
    }

    #[test]
    fn huge_domains_stay_in_range() {
        for blocks in [u64::MAX, 1 << 63, (1 << 40) + 3] {
            let permutation = BlockPermutation::new(blocks, &mut WorkerRng::seed_from_u64(9));
            for index in [0, 1, blocks / 2, blocks - 1] {
                assert!(permutation.get(index) < blocks);
            }
        }
    }
}
