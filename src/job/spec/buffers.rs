//! The contents of write buffers: zeros, a pattern, compressible or deduplicable data.

use super::*;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use crate::units;
use serde::{Deserialize, Serialize};

/// Buffer contents for writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BufferSpec {
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    /// 0..=100: share of each chunk that compresses well (zeros or the pattern).
    pub compress_percentage: u32,
    /// `buffer_compress_chunk`: bytes per random-then-fixed run (0: one run per buffer).
    #[serde(default = "default_compress_chunk")]
    pub compress_chunk: u64,
    /// `buffer_pattern`: bytes repeated over each buffer instead of random data.
    #[serde(default)]
    pub pattern: Option<Vec<u8>>,
    /// `dedupe_percentage`: share of writes that repeat an earlier write's contents.
    #[serde(default)]
    pub dedupe_percentage: u32,
}

impl BufferSpec {
    /// What the write buffers hold, in fio's option names: "zero_buffers",
    /// "buffer_compress_percentage=50", or "random data" for the default.
    pub(crate) fn describe(&self) -> String {
        let mut said = Vec::new();
        if self.zero_buffers {
            said.push("zero_buffers".to_string());
        }
        if let Some(pattern) = &self.pattern {
            said.push(format!("buffer_pattern ({} bytes repeated)", pattern.len()));
        }
        if self.compress_percentage > 0 {
            said.push(format!(
                "buffer_compress_percentage={}",
                self.compress_percentage
            ));
        }
        if self.dedupe_percentage > 0 {
            said.push(format!("dedupe_percentage={}", self.dedupe_percentage));
        }
        if said.is_empty() {
            said.push(if self.refill_buffers {
                "random data, refill_buffers".into()
            } else {
                "random data".into()
            });
        }
        said.join(", ")
    }
}

fn default_compress_chunk() -> u64 {
    512
}

impl Layers<'_> {
    pub(crate) fn buffers(&self) -> Result<BufferSpec, JobError> {
        Ok(BufferSpec {
            zero_buffers: self.bool(opt::ZERO_BUFFERS)?,
            refill_buffers: self.bool(opt::REFILL_BUFFERS)?,
            scramble_buffers: self.bool(opt::SCRAMBLE_BUFFERS)?,
            compress_percentage: self.percent(opt::BUFFER_COMPRESS_PERCENTAGE)?,
            compress_chunk: self.parse_defaulted(opt::BUFFER_COMPRESS_CHUNK, |t| {
                units::parse_size(t, self.kb_base)
            })?,
            pattern: self.parse(opt::BUFFER_PATTERN, parse_pattern)?,
            dedupe_percentage: self.percent(opt::DEDUPE_PERCENTAGE)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::job::resolve::tests::job;

    #[test]
    fn buffer_options() {
        let spec = job(&[
            "--zero_buffers",
            "--refill_buffers",
            "--scramble_buffers=0",
            "--buffer_compress_percentage=40",
        ]);
        let b = &spec.buffers;
        assert!(b.zero_buffers && b.refill_buffers && !b.scramble_buffers);
        assert_eq!(b.compress_percentage, 40);
    }
}
