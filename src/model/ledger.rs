//! The stack ledger: where every byte of a job went. For each job's window,
//! the bytes the job moved, what its own threads made storage read and write
//! below the page cache (`/proc/<pid>/task/<tid>/io`), what the page cache
//! kept (served reads, dirty pages left at the end) and what each block
//! device of the target's stack did. From these the diagnose rules tell
//! traffic the job caused beyond its bytes (amplification) from traffic
//! somebody else caused (foreign), and name the layer that explains a gap.

use super::stack::ZramStat;
use serde::{Deserialize, Serialize};

/// Bytes a thread (or a set of them) made storage read and write, as the
/// kernel accounts them per task: reads that went below the page cache
/// (readahead included), writes when pages were dirtied or submitted directly,
/// and dirtied bytes that were never written because the file was truncated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TaskIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub cancelled_write_bytes: u64,
}

impl TaskIo {
    /// What happened between `earlier` and `self` (cumulative counters).
    pub(crate) fn since(&self, earlier: &TaskIo) -> TaskIo {
        TaskIo {
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            cancelled_write_bytes: self
                .cancelled_write_bytes
                .saturating_sub(earlier.cancelled_write_bytes),
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        *self == TaskIo::default()
    }
}

impl std::ops::AddAssign for TaskIo {
    fn add_assign(&mut self, other: TaskIo) {
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.cancelled_write_bytes += other.cancelled_write_bytes;
    }
}

/// Another process's storage I/O while the run lasted (`/proc/<pid>/io`,
/// all devices): the busiest ones are named when a device did more than iolens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ProcessIo {
    pub pid: u32,
    pub comm: String,
    pub cmdline: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// Where the bytes of one job went, over the job's window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct JobLedger {
    pub job: String,
    /// The window: from the sample before the job's first measured I/O (its
    /// `ramp_time` left out) to the one after its last.
    pub from_ns: u64,
    pub to_ns: u64,
    /// The job's own reads and writes (what it asked for), bytes.
    pub job_read_bytes: u64,
    pub job_write_bytes: u64,
    /// What the job's own threads made storage do below the page cache; None
    /// where the kernel's per-task accounting could not be read.
    pub caused: Option<TaskIo>,
    /// What every iolens thread (all jobs running in the window) caused: the
    /// share of a device's traffic that is iolens' own.
    pub iolens_caused: Option<TaskIo>,
    /// Reads the page cache answered: the job's reads minus what it made storage read.
    pub cache_served_bytes: Option<u64>,
    /// Pages of the job's targets still dirty or under writeback when it ended, bytes.
    pub dirty_at_end_bytes: Option<u64>,
    /// Each block device of the targets' stacks, top first.
    pub layers: Vec<LayerTraffic>,
}

/// What one block device did in a job's window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct LayerTraffic {
    /// Name under /sys/block.
    pub device: String,
    /// How it was found from the target ("holds /mnt/f", "backing file of loop3").
    pub via: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub discard_bytes: u64,
    pub flush_ios: u64,
    /// A zram device's memory use at the window's end: what it really stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zram: Option<ZramStat>,
}

impl LayerTraffic {
    pub(crate) fn moved_bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }
}

impl JobLedger {
    pub(crate) fn job_bytes(&self) -> u64 {
        self.job_read_bytes + self.job_write_bytes
    }

    /// The device that holds the job's targets (the first one walked).
    pub(crate) fn top_layer(&self) -> Option<&LayerTraffic> {
        self.layers.first()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_counters_diff_and_add() {
        let early = TaskIo {
            read_bytes: 4096,
            write_bytes: 0,
            cancelled_write_bytes: 0,
        };
        let late = TaskIo {
            read_bytes: 12288,
            write_bytes: 8192,
            cancelled_write_bytes: 4096,
        };
        let mut sum = late.since(&early);
        assert_eq!(sum.read_bytes, 8192);
        sum += early;
        assert_eq!(sum, late);
        assert!(TaskIo::default().is_zero());
        // A counter that went backwards (a reused thread id) is no traffic.
        assert_eq!(early.since(&late).read_bytes, 0);
    }
}
