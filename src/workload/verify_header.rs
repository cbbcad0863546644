//! Verified blocks: what a writer puts in each block and how a reader tells a good
//! block from a misdirected, stale, torn, zeroed or corrupted one.
//!
//! Each block of `verify_interval` bytes carries an 80-byte header at
//! `verify_offset`: magic, method, length, writer (job hash and worker seed),
//! the block's own offset, a generation (how many times this run wrote it) and
//! a checksum of the rest of the block; a CRC32C guards the header itself.
//! The payload is seeded random data (or `verify_pattern`), derived from
//! (seed, offset, generation), so a reader can rebuild exactly what was meant
//! to be there and say what it found instead.

use crate::job::spec::{Pattern, VerifyKind, VerifySpec, VERIFY_HEADER_LEN};
use crate::model::HeaderFields;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

pub(crate) const HEADER_LEN: usize = VERIFY_HEADER_LEN as usize;
const MAGIC: [u8; 4] = *b"iolV";
const VERSION: u8 = 1;
const CHECKSUM_AT: usize = 40;
const CHECKSUM_MAX: usize = 32;
const HEADER_CRC_AT: usize = HEADER_LEN - 4;
/// Torn writes are judged in sectors: a device tears at sector boundaries.
const SECTOR: usize = 512;

/// Who wrote a block: a hash of the job name and the worker's seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Writer {
    pub job: u32,
    pub seed: u64,
}

impl Writer {
    pub(crate) fn new(job_name: &str, seed: u64) -> Self {
        Self {
            job: fnv1a(job_name.as_bytes()),
            seed,
        }
    }
}

/// What is wrong with a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub(crate) enum Fault {
    /// Every byte is zero.
    Zeroed,
    /// No header magic: never written by iolens, or overwritten by something else.
    NoHeader,
    /// The magic is there but the header's own CRC fails.
    CorruptHeader,
    /// A good header for another offset: the right data in the wrong place.
    Misdirected { written_for: u64 },
    /// A good header from another job or worker (checked where fio checks it).
    ForeignWriter,
    /// The block as written by an earlier (or later) write of this offset.
    Stale { found: u32, expected: u32 },
    /// Header current, but the block ends in the previous generation's data.
    Torn { new_bytes: u32 },
    /// Trimmed (`trim_verify_zero`), yet not all zeros: the first nonzero byte.
    TrimmedNotZero { first_byte: u32 },
    /// Header current, payload differs from what was written.
    Corrupt {
        differing_bytes: u32,
        differing_bits: u32,
        first_byte: u32,
    },
}

impl Fault {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Fault::Zeroed => "zeroed",
            Fault::NoHeader => "no_header",
            Fault::CorruptHeader => "corrupt_header",
            Fault::Misdirected { .. } => "misdirected",
            Fault::ForeignWriter => "foreign_writer",
            Fault::Stale { .. } => "stale",
            Fault::Torn { .. } => "torn",
            Fault::TrimmedNotZero { .. } => "trimmed_not_zero",
            Fault::Corrupt { .. } => "corrupt",
        }
    }

    /// One line about the block at `offset`.
    pub(crate) fn describe(&self, offset: u64) -> String {
        match *self {
            Fault::Zeroed => format!("block at offset {offset} is all zeros (zeroed block)"),
            Fault::NoHeader => {
                format!("block at offset {offset} holds no verify header (overwritten or never written)")
            }
            Fault::CorruptHeader => {
                format!("block at offset {offset} has a damaged header (header checksum mismatch)")
            }
            Fault::Misdirected { written_for } => format!(
                "block at offset {offset} holds the data written for offset {written_for} (misdirected write)"
            ),
            Fault::ForeignWriter => {
                format!("block at offset {offset} was written by another job or worker")
            }
            Fault::Stale { found, expected } if found < expected => format!(
                "block at offset {offset} holds generation {found}, expected {expected} (stale data: a lost write)"
            ),
            Fault::Stale { found, expected } => format!(
                "block at offset {offset} holds generation {found}, newer than the expected {expected}"
            ),
            Fault::Torn { new_bytes } => format!(
                "block at offset {offset} holds new data in its first {new_bytes} bytes and the previous write's after them (torn write)"
            ),
            Fault::TrimmedNotZero { first_byte } => format!(
                "block at offset {offset} was trimmed but holds data from byte {first_byte} on (the trim did not zero it)"
            ),
            Fault::Corrupt {
                differing_bytes,
                differing_bits,
                first_byte,
            } => format!(
                "block at offset {offset}: {differing_bytes} bytes ({differing_bits} bits) differ from what was written, the first at byte {first_byte} (corrupted data)"
            ),
        }
    }
}

/// A bad block: what is wrong and the header found there, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub fault: Fault,
    pub found: Option<HeaderFields>,
}

/// Writes and checks verified blocks for one worker.
#[derive(Debug, Clone)]
pub(crate) struct BlockCodec {
    kind: VerifyKind,
    pattern: Option<Pattern>,
    /// `verify_pattern_interval`; 0: the whole block.
    pattern_interval: usize,
    header_at: usize,
    writer: Writer,
    /// A good block from another writer is a fault (`ForeignWriter`).
    checks_writer: bool,
    /// `verify_write_sequence`: a block of another generation is a fault (`Stale`).
    checks_generation: bool,
}

impl BlockCodec {
    pub(crate) fn new(spec: &VerifySpec, writer: Writer) -> Self {
        Self {
            kind: spec.kind,
            pattern: spec.pattern.clone(),
            pattern_interval: spec.pattern_interval.unwrap_or(0) as usize,
            header_at: spec.header_offset as usize,
            writer,
            checks_writer: true,
            checks_generation: spec.write_sequence,
        }
    }

    /// Accept good blocks of any writer at the expected generation, as fio does
    /// unless a job both reads and writes (it then compares the header's seed):
    /// a `verify_only` job checks what another job (any name, any place in
    /// the run) laid out.
    pub(crate) fn accepting_any_writer(self) -> Self {
        Self {
            checks_writer: false,
            ..self
        }
    }

    /// Fill `block` with what generation `generation` of the block at `offset` holds.
    pub(crate) fn write_block(&self, block: &mut [u8], offset: u64, generation: u32) {
        self.render(
            block,
            &self.expected_fields(offset, block.len(), generation),
        );
    }

    /// Build the block the header `fields` describes, whoever its writer.
    fn render(&self, block: &mut [u8], fields: &HeaderFields) {
        self.fill_payload(block, fields);
        if !self.kind.has_header() {
            return;
        }
        let mut checksum = [0u8; CHECKSUM_MAX];
        self.checksum(block, &mut checksum);
        encode_header(
            &mut block[self.header_at..self.header_at + HEADER_LEN],
            self.kind,
            fields,
            &checksum,
        );
    }

    /// Check the block read at `offset`; `expected_generation` None accepts any
    /// writer and generation whose header and checksum hold (a read job checking
    /// data an earlier job wrote). `scratch` is a block-sized work area.
    pub(crate) fn check_block(
        &self,
        block: &[u8],
        offset: u64,
        expected_generation: Option<u32>,
        scratch: &mut [u8],
    ) -> Result<(), Mismatch> {
        let bad = |fault, found| Err(Mismatch { fault, found });
        let zeroed = block.iter().all(|&b| b == 0);
        if !self.kind.has_header() {
            // The strict pattern: the block must be the pattern, byte for byte
            // (zeros where the pattern is zeros, e.g. `%o` at offset 0).
            let expected = &mut scratch[..block.len()];
            self.write_block(expected, offset, 1);
            return match (block == &expected[..], zeroed) {
                (true, _) => Ok(()),
                (false, true) => bad(Fault::Zeroed, None),
                (false, false) => bad(corruption(block, expected), None),
            };
        }
        if zeroed {
            return bad(Fault::Zeroed, None);
        }
        let header = &block[self.header_at..self.header_at + HEADER_LEN];
        if header[..4] != MAGIC {
            return bad(Fault::NoHeader, None);
        }
        let Some(found) = decode_header(header) else {
            return bad(Fault::CorruptHeader, None);
        };
        if found.offset != offset {
            return bad(
                Fault::Misdirected {
                    written_for: found.offset,
                },
                Some(found),
            );
        }
        if found.len as usize != block.len() {
            return bad(Fault::CorruptHeader, Some(found));
        }
        if let Some(expected) = expected_generation {
            let foreign = found.job != self.writer.job || found.seed != self.writer.seed;
            if self.checks_writer && foreign {
                return bad(Fault::ForeignWriter, Some(found));
            }
            if self.checks_generation && found.generation != expected {
                return bad(
                    Fault::Stale {
                        found: found.generation,
                        expected,
                    },
                    Some(found),
                );
            }
        }
        if self.payload_matches(block, header, &found, scratch) {
            return Ok(());
        }
        bad(self.explain_payload(block, &found, scratch), Some(found))
    }

    /// The header this codec writes for generation `generation` at `offset`.
    pub(crate) fn expected_fields(&self, offset: u64, len: usize, generation: u32) -> HeaderFields {
        HeaderFields {
            offset,
            len: len as u32,
            job: self.writer.job,
            generation,
            seed: self.writer.seed,
        }
    }

    fn payload_matches(
        &self,
        block: &[u8],
        header: &[u8],
        found: &HeaderFields,
        scratch: &mut [u8],
    ) -> bool {
        match self.kind {
            VerifyKind::Meta => true,
            VerifyKind::Pattern | VerifyKind::PatternHdr => {
                let scratch = &mut scratch[..block.len()];
                self.fill_payload(scratch, found);
                self.payload_parts(block)
                    .zip(self.payload_parts(scratch))
                    .all(|(a, b)| a == b)
            }
            _ => {
                let mut checksum = [0u8; CHECKSUM_MAX];
                self.checksum(block, &mut checksum);
                header[CHECKSUM_AT..CHECKSUM_AT + CHECKSUM_MAX] == checksum
            }
        }
    }

    /// The header holds: compare the payload with what this generation (and the
    /// one before) should hold, to tell a torn write from corruption.
    fn explain_payload(&self, block: &[u8], found: &HeaderFields, scratch: &mut [u8]) -> Fault {
        let scratch = &mut scratch[..block.len()];
        self.render(scratch, found);
        let corrupt = corruption(block, scratch);
        let Fault::Corrupt { first_byte, .. } = corrupt else {
            unreachable!("corruption() is Corrupt")
        };
        let first_byte = first_byte as usize;
        if found.generation > 1 {
            let tear = first_byte / SECTOR * SECTOR;
            let previous = HeaderFields {
                generation: found.generation - 1,
                ..*found
            };
            self.render(scratch, &previous);
            let header = self.header_at..self.header_at + HEADER_LEN;
            let tail_is_previous = (tear..block.len())
                .filter(|i| !header.contains(i))
                .all(|i| block[i] == scratch[i]);
            if tear > 0 && tail_is_previous {
                return Fault::Torn {
                    new_bytes: tear as u32,
                };
            }
        }
        corrupt
    }

    fn fill_payload(&self, block: &mut [u8], fields: &HeaderFields) {
        match &self.pattern {
            // As fio: from the block's start (a header then covers its part), and
            // again every verify_pattern_interval bytes, %o holding where that starts.
            Some(pattern) => {
                let every = match self.pattern_interval {
                    0 => block.len(),
                    n => n,
                };
                for (i, part) in block.chunks_mut(every).enumerate() {
                    pattern.fill(part, fields.offset + (i * every) as u64);
                }
            }
            None => {
                let seed = fields.seed
                    ^ fields.offset.rotate_left(17)
                    ^ u64::from(fields.generation).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                Xoshiro256PlusPlus::seed_from_u64(seed).fill_bytes(block);
            }
        }
    }

    /// The block without its header, in two parts.
    fn payload_parts<'b>(&self, block: &'b [u8]) -> impl Iterator<Item = &'b [u8]> {
        let (before, rest) = block.split_at(self.header_at);
        [before, &rest[HEADER_LEN..]].into_iter()
    }

    fn checksum(&self, block: &[u8], out: &mut [u8; CHECKSUM_MAX]) {
        let parts = self.payload_parts(block);
        match self.kind {
            VerifyKind::Crc32c => {
                let crc = parts.fold(0, crc32c::crc32c_append);
                out[..4].copy_from_slice(&crc.to_le_bytes());
            }
            VerifyKind::Crc64 => {
                let mut digest = crc64fast::Digest::new();
                parts.for_each(|p| digest.write(p));
                out[..8].copy_from_slice(&digest.sum64().to_le_bytes());
            }
            VerifyKind::Xxhash => {
                let mut hasher = xxhash_rust::xxh64::Xxh64::new(0);
                parts.for_each(|p| hasher.update(p));
                out[..8].copy_from_slice(&hasher.digest().to_le_bytes());
            }
            VerifyKind::Sha256 => {
                use sha2::Digest;
                let mut hasher = sha2::Sha256::new();
                parts.for_each(|p| hasher.update(p));
                out.copy_from_slice(&hasher.finalize());
            }
            VerifyKind::Md5 => {
                use md5::Digest;
                let mut hasher = md5::Md5::new();
                parts.for_each(|p| hasher.update(p));
                out[..16].copy_from_slice(&hasher.finalize());
            }
            VerifyKind::Pattern | VerifyKind::PatternHdr | VerifyKind::Meta => {}
        }
    }
}

fn encode_header(
    header: &mut [u8],
    kind: VerifyKind,
    fields: &HeaderFields,
    checksum: &[u8; CHECKSUM_MAX],
) {
    header.fill(0);
    header[..4].copy_from_slice(&MAGIC);
    header[4] = kind as u8;
    header[5] = VERSION;
    header[8..12].copy_from_slice(&fields.len.to_le_bytes());
    header[12..16].copy_from_slice(&fields.job.to_le_bytes());
    header[16..24].copy_from_slice(&fields.offset.to_le_bytes());
    header[24..28].copy_from_slice(&fields.generation.to_le_bytes());
    header[32..40].copy_from_slice(&fields.seed.to_le_bytes());
    header[CHECKSUM_AT..CHECKSUM_AT + CHECKSUM_MAX].copy_from_slice(checksum);
    let crc = crc32c::crc32c(&header[..HEADER_CRC_AT]);
    header[HEADER_CRC_AT..].copy_from_slice(&crc.to_le_bytes());
}

/// The header's fields when its CRC holds.
fn decode_header(header: &[u8]) -> Option<HeaderFields> {
    let stored = u32::from_le_bytes(header[HEADER_CRC_AT..HEADER_LEN].try_into().ok()?);
    if crc32c::crc32c(&header[..HEADER_CRC_AT]) != stored || header[5] != VERSION {
        return None;
    }
    let u32_at = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    Some(HeaderFields {
        len: u32_at(8),
        job: u32_at(12),
        offset: u64_at(16),
        generation: u32_at(24),
        seed: u64_at(32),
    })
}

/// How `block` differs from `expected`: the bytes and bits that differ, the first of them.
fn corruption(block: &[u8], expected: &[u8]) -> Fault {
    let (mut bytes, mut bits) = (0u32, 0u32);
    for (a, b) in block.iter().zip(expected) {
        if a != b {
            bytes += 1;
            bits += (a ^ b).count_ones();
        }
    }
    Fault::Corrupt {
        differing_bytes: bytes,
        differing_bits: bits,
        first_byte: block
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(0) as u32,
    }
}

/// FNV-1a: a stable 32-bit name hash (the std hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: usize = 4096;

    fn spec(kind: VerifyKind) -> VerifySpec {
        VerifySpec {
            kind,
            pattern: (kind == VerifyKind::Pattern).then(|| Pattern {
                bytes: vec![0xde, 0xad],
                offsets_at: Vec::new(),
            }),
            pattern_interval: None,
            interval: None,
            header_offset: 0,
            after_writes: true,
            only: false,
            backlog: 0,
            backlog_batch: 0,
            trim: None,
            write_sequence: true,
            header_seed: None,
            fatal: false,
            dump: false,
            state_save: false,
            state_load: false,
            state_files: Default::default(),
        }
    }

    fn codec(kind: VerifyKind) -> BlockCodec {
        BlockCodec::new(&spec(kind), Writer::new("job", 42))
    }

    fn written(codec: &BlockCodec, offset: u64, generation: u32) -> Vec<u8> {
        let mut block = vec![0u8; BLOCK];
        codec.write_block(&mut block, offset, generation);
        block
    }

    fn check(codec: &BlockCodec, block: &[u8], offset: u64, gen: u32) -> Result<(), Mismatch> {
        codec.check_block(block, offset, Some(gen), &mut vec![0u8; BLOCK])
    }

    const ALL: [VerifyKind; 7] = [
        VerifyKind::Crc32c,
        VerifyKind::Crc64,
        VerifyKind::Xxhash,
        VerifyKind::Sha256,
        VerifyKind::Md5,
        VerifyKind::Pattern,
        VerifyKind::Meta,
    ];

    #[test]
    fn good_blocks_pass_with_every_method() {
        for kind in ALL {
            let c = codec(kind);
            let block = written(&c, 8192, 3);
            assert_eq!(check(&c, &block, 8192, 3), Ok(()), "{kind:?}");
            let any_writer = c.check_block(&block, 8192, None, &mut vec![0u8; BLOCK]);
            assert_eq!(any_writer, Ok(()));
        }
    }

    #[test]
    fn a_flipped_payload_bit_is_corruption_except_for_meta() {
        for kind in ALL {
            let c = codec(kind);
            let mut block = written(&c, 0, 1);
            block[1000] ^= 0x10;
            let result = check(&c, &block, 0, 1);
            if kind == VerifyKind::Meta {
                assert_eq!(result, Ok(()));
                continue;
            }
            let fault = result.unwrap_err().fault;
            assert_eq!(
                fault,
                Fault::Corrupt {
                    differing_bytes: 1,
                    differing_bits: 1,
                    first_byte: 1000
                },
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_strict_pattern_that_is_zeros_at_offset_0_passes_there() {
        let mut s = spec(VerifyKind::Pattern);
        s.pattern = Some(Pattern {
            bytes: vec![0; 8],
            offsets_at: vec![0],
        });
        let c = BlockCodec::new(&s, Writer::new("job", 42));
        let zeros = vec![0u8; BLOCK];
        assert_eq!(
            check(&c, &zeros, 0, 1),
            Ok(()),
            "expected `%o` at offset 0 (all zeros, as fio writes it) to verify"
        );
        let fault = check(&c, &zeros, 4096, 1).map_err(|m| m.fault);
        assert_eq!(
            fault,
            Err(Fault::Zeroed),
            "expected zeros where `%o` is 4096 to be a zeroed block"
        );
    }

    #[test]
    fn misplaced_zeroed_stale_and_torn_blocks_are_told_apart() {
        let c = codec(VerifyKind::Crc32c);
        let elsewhere = written(&c, 1_073_741_824, 1);
        let m = check(&c, &elsewhere, 1_073_745_920, 1).unwrap_err();
        assert_eq!(
            m.fault.describe(1_073_745_920),
            "block at offset 1073745920 holds the data written for offset 1073741824 (misdirected write)"
        );
        assert_eq!(m.found.unwrap().offset, 1_073_741_824);

        let zeros = vec![0u8; BLOCK];
        assert_eq!(check(&c, &zeros, 0, 1).unwrap_err().fault, Fault::Zeroed);

        let old = written(&c, 4096, 1);
        let stale = check(&c, &old, 4096, 2).unwrap_err();
        assert_eq!(
            stale.fault,
            Fault::Stale {
                found: 1,
                expected: 2
            }
        );
        assert!(stale.fault.describe(4096).contains("stale"));

        let mut torn = written(&c, 4096, 2);
        torn[1024..].copy_from_slice(&old[1024..]);
        assert_eq!(
            check(&c, &torn, 4096, 2).unwrap_err().fault,
            Fault::Torn { new_bytes: 1024 }
        );
    }

    #[test]
    fn damaged_headers_and_other_writers() {
        let c = codec(VerifyKind::Xxhash);
        let mut block = written(&c, 0, 1);
        block[20] ^= 1;
        assert_eq!(
            check(&c, &block, 0, 1).unwrap_err().fault,
            Fault::CorruptHeader
        );
        let mut block = written(&c, 0, 1);
        block[0] = b'x';
        assert_eq!(check(&c, &block, 0, 1).unwrap_err().fault, Fault::NoHeader);
        let other = BlockCodec::new(&spec(VerifyKind::Xxhash), Writer::new("other", 42));
        let block = written(&other, 0, 1);
        assert_eq!(
            check(&c, &block, 0, 1).unwrap_err().fault,
            Fault::ForeignWriter
        );
    }

    #[test]
    fn without_the_writer_check_another_jobs_blocks_pass_but_faults_do_not() {
        let c = codec(VerifyKind::Crc32c).accepting_any_writer();
        let layout = BlockCodec::new(&spec(VerifyKind::Crc32c), Writer::new("layout", 7));
        let block = written(&layout, 4096, 1);
        assert_eq!(
            check(&c, &block, 4096, 1),
            Ok(()),
            "a good block another job wrote must pass, as in fio"
        );
        assert!(
            matches!(
                check(&c, &block, 4096, 2).unwrap_err().fault,
                Fault::Stale { .. }
            ),
            "an older generation is still stale"
        );
        let elsewhere = written(&layout, 0, 1);
        assert!(
            matches!(
                check(&c, &elsewhere, 4096, 1).unwrap_err().fault,
                Fault::Misdirected { .. }
            ),
            "a block for another offset is still misdirected"
        );
    }

    #[test]
    fn the_header_can_sit_inside_the_block() {
        let mut s = spec(VerifyKind::Sha256);
        s.header_offset = 512;
        let c = BlockCodec::new(&s, Writer::new("job", 1));
        let mut block = written(&c, 0, 1);
        assert_eq!(&block[512..516], b"iolV");
        assert_eq!(check(&c, &block, 0, 1), Ok(()));
        block[10] ^= 0xff;
        assert!(matches!(
            check(&c, &block, 0, 1).unwrap_err().fault,
            Fault::Corrupt { first_byte: 10, .. }
        ));
    }
}
