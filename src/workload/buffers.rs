//! Contents of write buffers, as fio fills them: random by default, zeros or a
//! `buffer_pattern` on request, chunks of random bytes followed by a compressible
//! share (`buffer_compress_percentage`, `buffer_compress_chunk`), a share of writes
//! that repeat the last unique one (`dedupe_percentage`), and changed before every
//! write so deduplicating devices cannot skip the work.

use super::rng::{stream_rng, RngStream, WorkerRng};
use crate::job::spec::BufferSpec;
use rand::{RngCore, SeedableRng};

/// Scrambling changes one word in each chunk of this size (a sector).
const SCRAMBLE_CHUNK: usize = 512;
const WORD: usize = std::mem::size_of::<u64>();

/// What a freshly filled buffer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Contents {
    /// The same bytes in every buffer: the pattern repeated from the buffer's start,
    /// or zeros.
    Fixed,
    /// Random bytes.
    Random,
    /// Each chunk: random bytes, then the compressible share (the pattern from its
    /// start, or zeros). A buffer's random bytes come from one seed, so a duplicate
    /// write reuses the seed of the last unique one.
    Chunked {
        compress_percent: usize,
        /// 0: one chunk per buffer.
        chunk: usize,
        dedupe_percent: u64,
    },
}

/// What happens to a buffer before each write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refresh {
    /// Contents stay as filled (fixed contents no read overwrites, or scrambling
    /// switched off).
    Keep,
    /// New contents every time: `refill_buffers`, compressible or duplicate
    /// shares, or fixed contents in a job whose reads land in the same buffers.
    Refill,
    /// `scramble_buffers` (fio's default): one random word per sector, enough to
    /// make every sector unique at a fraction of a refill's cost.
    Scramble,
}

#[derive(Debug, Clone)]
pub(crate) struct BufferFiller {
    contents: Contents,
    /// `buffer_pattern`; None: zeros.
    pattern: Option<Vec<u8>>,
    refresh: Refresh,
    rng: WorkerRng,
    /// The seed of the last unique chunked buffer, which duplicates repeat.
    last_seed: u64,
}

impl BufferFiller {
    /// `reads`: the job also reads, into the same buffers its writes use.
    pub(crate) fn new(spec: &BufferSpec, reads: bool, seed: u64) -> Self {
        let compress = spec.compress_percentage.min(100) as usize;
        let dedupe = spec.dedupe_percentage.min(100);
        let contents = if compress < 100 && (compress > 0 || dedupe > 0) {
            Contents::Chunked {
                compress_percent: compress,
                chunk: spec.compress_chunk as usize,
                dedupe_percent: u64::from(dedupe),
            }
        } else if spec.pattern.is_some() || spec.zero_buffers || compress == 100 {
            Contents::Fixed
        } else {
            Contents::Random
        };
        let refresh = match contents {
            Contents::Chunked { .. } => Refresh::Refill,
            Contents::Fixed if reads => Refresh::Refill,
            Contents::Fixed => Refresh::Keep,
            Contents::Random if spec.refill_buffers => Refresh::Refill,
            Contents::Random if spec.scramble_buffers => Refresh::Scramble,
            Contents::Random => Refresh::Keep,
        };
        let mut rng = stream_rng(seed, RngStream::Buffers);
        let last_seed = rng.next_u64();
        Self {
            contents,
            pattern: spec.pattern.clone(),
            refresh,
            rng,
            last_seed,
        }
    }

    /// Initial contents of a buffer.
    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        match self.contents {
            Contents::Fixed => fill_fixed(self.pattern.as_deref(), buf),
            Contents::Random => self.rng.fill_bytes(buf),
            Contents::Chunked {
                compress_percent,
                chunk,
                dedupe_percent,
            } => {
                let mut random = WorkerRng::seed_from_u64(self.buffer_seed(dedupe_percent));
                let chunk = if chunk == 0 { buf.len() } else { chunk };
                for run in buf.chunks_mut(chunk.max(1)) {
                    let random_len = run.len() * (100 - compress_percent) / 100;
                    let (noise, fixed) = run.split_at_mut(random_len);
                    random.fill_bytes(noise);
                    fill_fixed(self.pattern.as_deref(), fixed);
                }
            }
        }
    }

    /// The seed of the next chunked buffer: the last unique buffer's for
    /// `dedupe_percent` of them, a new one for the rest.
    fn buffer_seed(&mut self, dedupe_percent: u64) -> u64 {
        if self.rng.next_u64() % 100 >= dedupe_percent {
            self.last_seed = self.rng.next_u64();
        }
        self.last_seed
    }

    /// Make `buf` differ from what it held before; called before each write.
    #[inline]
    pub(crate) fn refresh(&mut self, buf: &mut [u8]) {
        match self.refresh {
            Refresh::Keep => {}
            Refresh::Refill => self.fill(buf),
            Refresh::Scramble => self.scramble(buf),
        }
    }

    #[inline]
    fn scramble(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(SCRAMBLE_CHUNK) {
            let words = (chunk.len() / WORD) as u64;
            if words == 0 {
                continue;
            }
            let value = self.rng.next_u64();
            let at = (value % words) as usize * WORD;
            chunk[at..at + WORD].copy_from_slice(&value.to_le_bytes());
        }
    }
}

/// `pattern` repeated from the start of `buf` (zeros without one).
fn fill_fixed(pattern: Option<&[u8]>, buf: &mut [u8]) {
    let Some(pattern) = pattern else {
        buf.fill(0);
        return;
    };
    let mut filled = pattern.len().min(buf.len());
    buf[..filled].copy_from_slice(&pattern[..filled]);
    // Doubling copies: a short pattern takes a few memcpy calls, not one per byte.
    while filled < buf.len() {
        let more = filled.min(buf.len() - filled);
        buf.copy_within(..more, filled);
        filled += more;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> BufferSpec {
        BufferSpec {
            zero_buffers: false,
            refill_buffers: false,
            scramble_buffers: true,
            compress_percentage: 0,
            compress_chunk: 512,
            pattern: None,
            dedupe_percentage: 0,
        }
    }

    fn zero_share(buf: &[u8]) -> f64 {
        buf.iter().filter(|&&b| b == 0).count() as f64 / buf.len() as f64
    }

    #[test]
    fn default_buffers_are_random() {
        let mut buf = vec![0u8; 64 << 10];
        BufferFiller::new(&spec(), false, 1).fill(&mut buf);
        // random bytes are zero 1/256 of the time
        assert!(zero_share(&buf) < 0.01);
    }

    #[test]
    fn zero_buffers_stay_zero() {
        let mut spec = spec();
        spec.zero_buffers = true;
        let mut filler = BufferFiller::new(&spec, false, 1);
        let mut buf = vec![1u8; 8192];
        filler.fill(&mut buf);
        filler.refresh(&mut buf);
        assert!(buf.iter().all(|&b| b == 0));
    }

    #[test]
    fn compress_percentage_sets_the_zero_share() {
        for percent in [25, 60, 90] {
            let mut spec = spec();
            spec.compress_percentage = percent;
            let mut filler = BufferFiller::new(&spec, false, 1);
            let mut buf = vec![0u8; 256 << 10];
            filler.fill(&mut buf);
            let expected = f64::from(percent) / 100.0;
            let seen = zero_share(&buf);
            assert!(
                (seen - expected).abs() < 0.01,
                "expected a zero share of {expected}, saw {seen}"
            );
            let before = buf.clone();
            filler.refresh(&mut buf);
            assert_ne!(before, buf, "expected a refresh to change the buffer");
            let seen = zero_share(&buf);
            assert!(
                (seen - expected).abs() < 0.01,
                "expected a zero share of {expected} after a refresh, saw {seen}"
            );
        }
    }

    #[test]
    fn scrambled_writes_are_unique_in_every_sector() {
        let mut filler = BufferFiller::new(&spec(), false, 1);
        let mut buf = vec![0u8; 16 << 10];
        filler.fill(&mut buf);
        let mut previous = buf.clone();
        for _ in 0..100 {
            filler.refresh(&mut buf);
            let changed = buf
                .chunks(SCRAMBLE_CHUNK)
                .zip(previous.chunks(SCRAMBLE_CHUNK))
                .all(|(now, before)| now != before);
            assert!(changed);
            previous.copy_from_slice(&buf);
        }
    }

    #[test]
    fn refill_replaces_all_contents() {
        let mut spec = spec();
        spec.refill_buffers = true;
        let mut filler = BufferFiller::new(&spec, false, 1);
        let mut buf = vec![0u8; 4096];
        filler.fill(&mut buf);
        let before = buf.clone();
        filler.refresh(&mut buf);
        let same = buf.iter().zip(&before).filter(|(a, b)| a == b).count();
        assert!(same < 64, "{same} bytes unchanged");
    }

    #[test]
    fn without_scramble_or_refill_contents_are_kept() {
        let mut spec = spec();
        spec.scramble_buffers = false;
        let mut filler = BufferFiller::new(&spec, false, 1);
        let mut buf = vec![0u8; 4096];
        filler.fill(&mut buf);
        let before = buf.clone();
        filler.refresh(&mut buf);
        assert_eq!(buf, before);
    }

    /// Where each chunk's zeros start: the runs of random bytes end there.
    fn zero_tails(buf: &[u8], chunk: usize) -> Vec<usize> {
        buf.chunks(chunk)
            .map(|c| c.len() - c.iter().rev().take_while(|&&b| b == 0).count())
            .collect()
    }

    #[test]
    fn compress_chunk_sets_the_run_length() {
        let mut spec = spec();
        spec.compress_percentage = 50;
        let mut buf = vec![0u8; 8192];
        for (chunk, runs) in [(512, 16), (4096, 2), (0, 1)] {
            spec.compress_chunk = chunk;
            BufferFiller::new(&spec, false, 1).fill(&mut buf);
            let length = if chunk == 0 {
                buf.len()
            } else {
                chunk as usize
            };
            let tails = zero_tails(&buf, length);
            // A random byte is zero 1 time in 256: allow a few short of half.
            let ok = tails.len() == runs
                && tails
                    .iter()
                    .all(|&t| t <= length / 2 && t + 4 >= length / 2);
            assert!(
                ok,
                "chunk={chunk}: expected {runs} runs, each random for half its {length} bytes, saw \
                 the zeros start at {tails:?}"
            );
        }
    }

    #[test]
    fn the_pattern_repeats_from_each_buffer_start() {
        let mut spec = spec();
        spec.pattern = Some(b"abc".to_vec());
        let mut buf = vec![0u8; 4096];
        let mut filler = BufferFiller::new(&spec, false, 1);
        filler.fill(&mut buf);
        let expected: Vec<u8> = b"abc".iter().copied().cycle().take(4096).collect();
        assert_eq!(buf, expected, "expected abc repeated over the buffer");
        filler.refresh(&mut buf[..100]);
        assert_eq!(buf, expected, "expected no scrambling of a pattern");
        // A job that also reads refills, so what a read left is overwritten.
        let mut filler = BufferFiller::new(&spec, true, 1);
        buf.fill(7);
        filler.refresh(&mut buf);
        assert_eq!(
            buf, expected,
            "expected a refresh to restore the pattern after a read"
        );
        let long: Vec<u8> = (0..=255).collect();
        spec.pattern = Some(long.clone());
        let mut short = [0u8; 16];
        BufferFiller::new(&spec, false, 1).fill(&mut short);
        assert_eq!(
            short,
            long[..16],
            "expected the pattern's start in a shorter buffer"
        );
    }

    #[test]
    fn the_pattern_is_the_compressible_share() {
        let mut spec = spec();
        spec.pattern = Some(vec![0xde, 0xad]);
        spec.compress_percentage = 25;
        let mut buf = vec![0u8; 2048];
        BufferFiller::new(&spec, false, 1).fill(&mut buf);
        for (i, chunk) in buf.chunks(512).enumerate() {
            let tail = &chunk[384..];
            let ok = tail.chunks(2).all(|p| p == [0xde, 0xad]);
            assert!(
                ok,
                "expected chunk {i} to end in 128 bytes of dead, saw {tail:02x?}"
            );
        }
        spec.compress_percentage = 100;
        let mut filler = BufferFiller::new(&spec, false, 1);
        filler.fill(&mut buf);
        filler.refresh(&mut buf);
        assert!(
            buf.chunks(2).all(|p| p == [0xde, 0xad]),
            "expected 100% compressible buffers to be the pattern only"
        );
    }

    /// Of `writes` refreshes of a 4k buffer, how many repeat an earlier one.
    fn duplicates(spec: &BufferSpec, writes: usize) -> usize {
        let mut filler = BufferFiller::new(spec, false, 7);
        let mut buf = vec![0u8; 4096];
        let mut seen = std::collections::HashSet::new();
        (0..writes)
            .filter(|_| {
                filler.refresh(&mut buf);
                !seen.insert(buf.clone())
            })
            .count()
    }

    #[test]
    fn dedupe_percentage_repeats_that_share_of_writes() {
        let mut spec = spec();
        for percent in [0, 30, 75] {
            spec.dedupe_percentage = percent;
            let share = duplicates(&spec, 2000) as f64 / 2000.0;
            let expected = f64::from(percent) / 100.0;
            assert!(
                (share - expected).abs() < 0.05,
                "dedupe_percentage={percent}: expected {expected} of the writes to repeat, saw {share}"
            );
        }
        spec.dedupe_percentage = 100;
        assert_eq!(
            duplicates(&spec, 50),
            49,
            "expected one unique write at 100%"
        );
        // Duplicates keep the compressible share.
        spec.dedupe_percentage = 50;
        spec.compress_percentage = 50;
        let mut buf = vec![0u8; 4096];
        BufferFiller::new(&spec, false, 1).fill(&mut buf);
        let seen = zero_share(&buf);
        assert!((seen - 0.5).abs() < 0.01, "expected half zeros, saw {seen}");
    }
}
