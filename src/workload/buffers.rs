//! Contents of write buffers: random by default, zeros on request, a chosen share
//! of zeros for compressing devices, and changed before every write so
//! deduplicating devices cannot skip the work.

use super::rng::{stream_rng, RngStream, WorkerRng};
use crate::job::spec::BufferSpec;
use rand::RngCore;

/// `buffer_compress_percentage` applies to each segment of this size.
const COMPRESS_SEGMENT: usize = 4096;
/// Scrambling changes one word in each chunk of this size (a sector).
const SCRAMBLE_CHUNK: usize = 512;
const WORD: usize = std::mem::size_of::<u64>();

/// What happens to a buffer before each write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refresh {
    /// Contents stay as filled (zero buffers, fully compressible buffers, or
    /// scrambling switched off).
    Keep,
    /// `refill_buffers`: new contents every time.
    Refill,
    /// `scramble_buffers` (fio's default): one random word per sector, enough to
    /// make every sector unique at a fraction of a refill's cost.
    Scramble,
}

#[derive(Debug, Clone)]
pub struct BufferFiller {
    zeros: bool,
    /// Bytes of each [`COMPRESS_SEGMENT`] that stay zero.
    zero_share_percent: usize,
    refresh: Refresh,
    rng: WorkerRng,
}

impl BufferFiller {
    pub fn new(spec: &BufferSpec, seed: u64) -> Self {
        let compress = spec.compress_percentage.min(100);
        let all_zero = spec.zero_buffers || compress == 100;
        // A partly compressible buffer has to be refilled: scrambling would
        // write random words into its zero share.
        let refresh = if all_zero {
            Refresh::Keep
        } else if spec.refill_buffers || compress > 0 {
            Refresh::Refill
        } else if spec.scramble_buffers {
            Refresh::Scramble
        } else {
            Refresh::Keep
        };
        Self {
            zeros: all_zero,
            zero_share_percent: compress as usize,
            refresh,
            rng: stream_rng(seed, RngStream::Buffers),
        }
    }

    /// Initial contents of a buffer.
    pub fn fill(&mut self, buf: &mut [u8]) {
        if self.zeros {
            buf.fill(0);
            return;
        }
        for segment in buf.chunks_mut(COMPRESS_SEGMENT) {
            let random_len = segment.len() * (100 - self.zero_share_percent) / 100;
            let (random, zeros) = segment.split_at_mut(random_len);
            self.rng.fill_bytes(random);
            zeros.fill(0);
        }
    }

    /// Make `buf` differ from what it held before; called before each write.
    #[inline]
    pub fn refresh(&mut self, buf: &mut [u8]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> BufferSpec {
        BufferSpec {
            zero_buffers: false,
            refill_buffers: false,
            scramble_buffers: true,
            compress_percentage: 0,
        }
    }

    fn zero_share(buf: &[u8]) -> f64 {
        buf.iter().filter(|&&b| b == 0).count() as f64 / buf.len() as f64
    }

    #[test]
    fn default_buffers_are_random() {
        let mut buf = vec![0u8; 64 << 10];
        BufferFiller::new(&spec(), 1).fill(&mut buf);
        // random bytes are zero 1/256 of the time
        assert!(zero_share(&buf) < 0.01);
    }

    #[test]
    fn zero_buffers_stay_zero() {
        let mut spec = spec();
        spec.zero_buffers = true;
        let mut filler = BufferFiller::new(&spec, 1);
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
            let mut filler = BufferFiller::new(&spec, 1);
            let mut buf = vec![0u8; 256 << 10];
            filler.fill(&mut buf);
            let expected = f64::from(percent) / 100.0;
            assert!((zero_share(&buf) - expected).abs() < 0.01, "{percent}%");
            let before = buf.clone();
            filler.refresh(&mut buf);
            assert_ne!(before, buf);
            assert!(
                (zero_share(&buf) - expected).abs() < 0.01,
                "{percent}% after refresh"
            );
        }
    }

    #[test]
    fn scrambled_writes_are_unique_in_every_sector() {
        let mut filler = BufferFiller::new(&spec(), 1);
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
        let mut filler = BufferFiller::new(&spec, 1);
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
        let mut filler = BufferFiller::new(&spec, 1);
        let mut buf = vec![0u8; 4096];
        filler.fill(&mut buf);
        let before = buf.clone();
        filler.refresh(&mut buf);
        assert_eq!(buf, before);
    }
}
