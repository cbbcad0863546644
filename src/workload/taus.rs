//! fio's combined Tausworthe generators (`random_generator=tausworthe` and
//! `tausworthe64`), for uniform random offsets without the random map: L'Ecuyer's
//! three-component 32-bit generator and the five-component 64-bit one, seeded
//! as fio 3.33 seeds them (a linear congruential spread of the seed over the
//! components, each kept above its minimum, then six draws thrown away). A draw
//! `r` becomes block `blocks × r / 2^w` as fio scales it, so a 32-bit generator
//! reaches at most 2^32 distinct blocks: on a larger file its offsets repeat
//! (what fio's t/t64-switch.sh counts), and fio's default switches to the 64-bit
//! one there.

use std::ops::{BitAnd, BitXor, Shl, Shr};

/// Each component's step, `(a, b, mask, d)`: `s = ((s & mask) << d) ^ (((s << a) ^ s) >> b)`.
const STEPS32: [(u32, u32, u32, u32); 3] = [
    (13, 19, 0xffff_fffe, 12),
    (2, 25, 0xffff_fff8, 4),
    (3, 11, 0xffff_fff0, 17),
];
const STEPS64: [(u32, u32, u64, u32); 5] = [
    (1, 53, 0xffff_ffff_ffff_fffe, 10),
    (24, 50, 0xffff_ffff_ffff_fe00, 5),
    (3, 23, 0xffff_ffff_ffff_f000, 29),
    (5, 24, 0xffff_ffff_fffe_0000, 23),
    (3, 33, 0xffff_ffff_ff80_0000, 8),
];

/// Step every component; the XOR of the new components is the draw.
#[inline]
fn advance<T>(components: &mut [T], steps: &[(u32, u32, T, u32)]) -> T
where
    T: Copy
        + Default
        + Shl<u32, Output = T>
        + Shr<u32, Output = T>
        + BitAnd<Output = T>
        + BitXor<Output = T>,
{
    let mut draw = T::default();
    for (s, &(a, b, mask, d)) in components.iter_mut().zip(steps) {
        *s = ((*s & mask) << d) ^ (((*s << a) ^ *s) >> b);
        draw = draw ^ *s;
    }
    draw
}

/// One generator's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Taus {
    Bits32([u32; 3]),
    Bits64([u64; 5]),
}

/// fio keeps component `x` at least `minimum` (`x + minimum` when below it).
fn at_least(x: u64, minimum: u64) -> u64 {
    if x < minimum {
        x + minimum
    } else {
        x
    }
}

/// The first value both generators spread the seed from: fio writes it as
/// `(2^31) + (2^17) + (2^7)`, which in C is XOR, so 29 + 19 + 5.
const SPREAD_START: u64 = 53;

impl Taus {
    /// The generator fio starts from `seed`: 32-bit (the seed's low 32 bits) or 64-bit.
    pub(super) fn new(seed: u64, wide: bool) -> Taus {
        let mut taus = if wide {
            let spread = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
            let mut s = [0u64; 5];
            let mut previous = SPREAD_START;
            for (component, minimum) in s.iter_mut().zip([1, 7, 15, 33, 49]) {
                *component = at_least(spread(previous), minimum);
                previous = *component;
            }
            Taus::Bits64(s)
        } else {
            let seed = seed as u32;
            let spread = |x: u32| x.wrapping_mul(69_069) ^ seed;
            let mut s = [0u32; 3];
            let mut previous = SPREAD_START as u32;
            for (component, minimum) in s.iter_mut().zip([1, 7, 15]) {
                *component = at_least(u64::from(spread(previous)), minimum) as u32;
                previous = *component;
            }
            Taus::Bits32(s)
        };
        for _ in 0..6 {
            taus.next();
        }
        taus
    }

    pub(super) fn is_wide(&self) -> bool {
        matches!(self, Taus::Bits64(_))
    }

    /// The next draw: 32 or 64 random bits.
    #[inline]
    pub(super) fn next(&mut self) -> u64 {
        match self {
            Taus::Bits32(s) => u64::from(advance(s, &STEPS32)),
            Taus::Bits64(s) => advance(s, &STEPS64),
        }
    }

    /// A block in `0..blocks` as fio scales a draw: `blocks × r / (max + 1)` in doubles.
    #[inline]
    pub(super) fn block(&mut self, blocks: u64) -> u64 {
        let range = match self {
            Taus::Bits32(_) => u32::MAX as f64 + 1.0,
            Taus::Bits64(_) => u64::MAX as f64 + 1.0,
        };
        let r = self.next() as f64;
        (blocks as f64 * (r / range)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_fios_generators_from_fios_seed() {
        // fio 3.33's first block-offset draws of worker 1 with randrepeat (seed
        // 0xb1899bed), read from its --debug=random "off rand" lines.
        let mut narrow = Taus::new(0xb189_9bed, false);
        let first: Vec<u64> = (0..3).map(|_| narrow.next()).collect();
        assert_eq!(
            first,
            [259_043_585, 3_179_521_932, 3_621_444_214],
            "expected fio's 32-bit draws"
        );
        let mut wide = Taus::new(0xb189_9bed, true);
        let first: Vec<u64> = (0..2).map(|_| wide.next()).collect();
        assert_eq!(
            first,
            [17_311_067_694_306_724_737, 485_009_114_434_689_783],
            "expected fio's 64-bit draws"
        );
    }

    #[test]
    fn a_narrow_generator_reaches_at_most_2_to_the_32_blocks() {
        let blocks = 1u64 << 40;
        let mut narrow = Taus::new(7, false);
        for _ in 0..1000 {
            let block = narrow.block(blocks);
            assert!(
                block < blocks && block.is_multiple_of(256),
                "expected a multiple of 2^40 / 2^32 below 2^40, saw {block}"
            );
        }
        let mut wide = Taus::new(7, true);
        assert!(
            (0..1000).any(|_| !wide.block(blocks).is_multiple_of(256)),
            "expected the 64-bit generator to reach blocks between"
        );
    }
}
