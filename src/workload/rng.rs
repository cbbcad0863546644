//! Seeded per-worker random numbers.
//!
//! Every worker owns its generators, so nothing random is shared or locked. Each
//! consumer (offsets, pacing, buffer contents) draws from its own stream derived
//! from the worker seed, so changing e.g. the buffer options never changes the
//! offsets a seed produces.

use crate::debug::{self, DebugType};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::{SystemTime, UNIX_EPOCH};

/// The generator every worker uses: small state, a few ns per draw, and the same
/// sequence on every platform for the same seed.
pub(crate) type WorkerRng = Xoshiro256PlusPlus;

/// Independent streams drawn from one worker seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RngStream {
    Offsets = 1,
    Pacing = 2,
    Buffers = 3,
    /// Which written blocks `trim_percentage` trims.
    VerifyTrims = 4,
    /// Which I/Os carry `cmdprio_percentage`'s priority.
    Priorities = 5,
}

impl RngStream {
    const ALL: [RngStream; 4] = [
        RngStream::Offsets,
        RngStream::Pacing,
        RngStream::Buffers,
        RngStream::VerifyTrims,
    ];
}

/// The seed of one worker. With `randrepeat` (fio's default) it depends only on
/// `randseed` and the worker's place in the run, so a rerun repeats the pattern;
/// without it the clock makes every run different.
pub(crate) fn worker_seed(
    randseed: u64,
    randrepeat: bool,
    job_index: u32,
    worker_index: u32,
) -> u64 {
    let base = if randrepeat {
        randseed
    } else {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        mix64(since_epoch.as_nanos() as u64 ^ u64::from(std::process::id()))
    };
    let place = (u64::from(job_index) << 32) | u64::from(worker_index);
    mix64(base ^ mix64(place))
}

/// A generator for one consumer of a worker's seed.
pub(crate) fn stream_rng(seed: u64, stream: RngStream) -> WorkerRng {
    WorkerRng::seed_from_u64(stream_seed(seed, stream))
}

/// The seed `stream_rng` gives one consumer's generator.
fn stream_seed(seed: u64, stream: RngStream) -> u64 {
    mix64(seed ^ (stream as u64).wrapping_mul(GOLDEN_GAMMA))
}

/// `--debug=random`: how many streams a worker seeded with `seed` has, then each
/// stream's seed in stream order, in the words fio's seed lines use.
pub(crate) fn trace_seeds(seed: u64) {
    if debug::enabled(DebugType::Random) {
        debug::trace(
            DebugType::Random,
            format_args!("FIO_RAND_NR_OFFS={}", RngStream::ALL.len()),
        );
        for (index, stream) in RngStream::ALL.into_iter().enumerate() {
            debug::trace(
                DebugType::Random,
                format_args!("rand_seeds[{index}]={}", stream_seed(seed, stream)),
            );
        }
    }
}

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The splitmix64 finaliser: a bijective mix where every input bit affects every
/// output bit, so nearby seeds give unrelated outputs.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(GOLDEN_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn repeatable_seeds_depend_only_on_place() {
        assert_eq!(worker_seed(7, true, 0, 3), worker_seed(7, true, 0, 3));
        assert_ne!(worker_seed(7, true, 0, 3), worker_seed(7, true, 0, 4));
        assert_ne!(worker_seed(7, true, 0, 3), worker_seed(7, true, 1, 3));
        assert_ne!(worker_seed(7, true, 0, 3), worker_seed(8, true, 0, 3));
        // job and worker indices must not be interchangeable
        assert_ne!(worker_seed(7, true, 1, 2), worker_seed(7, true, 2, 1));
    }

    #[test]
    fn unrepeatable_seeds_differ_between_calls() {
        let first = worker_seed(7, false, 0, 0);
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert_ne!(first, worker_seed(7, false, 0, 0));
    }

    #[test]
    fn fixed_seed_gives_fixed_sequence() {
        let mut a = stream_rng(42, RngStream::Offsets);
        let mut b = stream_rng(42, RngStream::Offsets);
        let first: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..4).map(|_| b.next_u64()).collect::<Vec<_>>());
        // pinned: a change of generator or seeding would silently change every pattern
        assert_eq!(first[0], 3_444_564_616_929_122_343);
    }

    #[test]
    fn streams_are_independent() {
        let offsets = stream_rng(42, RngStream::Offsets).next_u64();
        assert_ne!(offsets, stream_rng(42, RngStream::Pacing).next_u64());
        assert_ne!(offsets, stream_rng(42, RngStream::Buffers).next_u64());
    }
}
