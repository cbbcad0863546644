//! The queue a worker keeps (`QueueSpec`): `iodepth` as given and the engine's depth,
//! `iodepth_low`, the batches of submissions and completions, `serialize_overlap`.

use super::*;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use serde::{Deserialize, Serialize};

/// The queue a worker keeps, worked out once from the engine and the queue options so the
/// worker works nothing out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct QueueSpec {
    /// `iodepth` as given (fio's default 1), what fio's preamble line shows whatever
    /// the engine keeps in flight.
    pub iodepth: u32,
    /// I/Os in flight at most: `iodepth` for engines that queue and for offloaded
    /// submission, 1 for a blocking engine submitted inline.
    pub depth: u32,
    /// `iodepth_low` clamped to `depth`: once the queue is full, it drains to this depth
    /// before it is refilled (equal to `depth`: keep it full).
    pub refill_depth: u32,
    /// `iodepth_batch_submit` within 1..=depth (0 means depth, as in fio): queued I/Os
    /// handed to the engine at once.
    pub batch_submit: u32,
    /// `iodepth_batch_complete_min`, at least 1: completions waited for at once while
    /// the queue is being kept full.
    pub batch_complete_min: u32,
    /// `iodepth_batch_complete_max`, at least `batch_complete_min`: completions taken
    /// in one reap (fio's default, 1, keeps the queue full: reap one, issue one); the
    /// depth for an engine that reaps every completion (`EngineDef::reaps_every_done`).
    #[serde(default = "one")]
    pub batch_complete_max: u32,
    /// The engine holds one submitted batch at a time (`EngineDef::one_batch_in_flight`):
    /// each commit fills the queue, which drains completely before the next I/O.
    #[serde(default)]
    pub one_batch: bool,
    /// `serialize_overlap`: an I/O that overlaps one in flight waits for it.
    #[serde(default)]
    pub serialize_overlap: bool,
}

/// The deepest queue: what libaio's default `aio-max-nr` allows (io_uring stops at 32768).
const MAX_IODEPTH: u32 = 65_536;

/// fio's default `iodepth_batch_complete_max` (for a spec saved before the field).
fn one() -> u32 {
    1
}

impl Layers<'_> {
    /// The queue of a job that runs engine `kind` submitted as `submit_mode`.
    pub(crate) fn queue(
        &self,
        kind: EngineKind,
        submit_mode: SubmitMode,
    ) -> Result<QueueSpec, JobError> {
        let iodepth = self.count_u32(opt::IODEPTH, 1)?;
        if iodepth > MAX_IODEPTH {
            let setting = self.given(opt::IODEPTH).expect("the default is 1");
            return Err(setting.invalid_with_hint(
                format!("a queue deeper than {MAX_IODEPTH} is not kept"),
                "each slot holds a buffer, and io_uring and libaio stop at 32768 and 65536: \
                 use at most 65536",
            ));
        }
        let depth = match kind.is_async() || submit_mode == SubmitMode::Offload {
            true => iodepth.max(1),
            false => 1,
        };
        let batch_complete_min = self.count_u32(opt::IODEPTH_BATCH_COMPLETE_MIN, 0)?;
        // fio's fixup: unset (0) or below the minimum, the maximum is the minimum
        let batch_complete_max = self
            .count(opt::IODEPTH_BATCH_COMPLETE_MAX)?
            .map_or(0, |max| u32::try_from(max).unwrap_or(u32::MAX))
            .max(batch_complete_min);
        let batch_submit = self.count_u32(opt::IODEPTH_BATCH_SUBMIT, 0)?;
        // fio's rule: unset, 0 or deeper than the queue means "keep the queue full".
        let refill_depth = match self.count(opt::IODEPTH_LOW)? {
            Some(low) if low > 0 => low.min(u64::from(depth)) as u32,
            _ => depth,
        };
        // offloaded, each submit thread's engine holds one I/O: neither quirk applies
        let inline = submit_mode == SubmitMode::Inline;
        let def = kind.def();
        // both completion batches 0: fio polls for each I/O right after queueing it
        let polling = batch_complete_min == 0 && batch_complete_max == 0;
        let one_batch = (def.one_batch_in_flight || polling) && depth > 1 && inline;
        let batch_submit = match batch_submit {
            _ if one_batch && polling => 1,
            0 => depth,
            batch => batch.min(depth),
        };
        let batch_complete_min = batch_complete_min.max(1);
        Ok(QueueSpec {
            iodepth,
            depth,
            refill_depth: if one_batch { 0 } else { refill_depth },
            batch_submit,
            batch_complete_min,
            batch_complete_max: match def.reaps_every_done && inline {
                true => depth,
                false => batch_complete_max.max(batch_complete_min),
            },
            one_batch,
            serialize_overlap: self.bool(opt::SERIALIZE_OVERLAP)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::job::resolve::tests::job;

    #[test]
    fn a_queue_deeper_than_65536_is_refused() {
        assert_eq!(
            job(&["--iodepth=65536", "--ioengine=null"]).queue.depth,
            65_536
        );
        let e = crate::job::resolve::tests::error(&["--name=q", "--iodepth=4294967295"]);
        assert!(
            e.contains("iodepth=4294967295: a queue deeper than 65536 is not kept"),
            "{e}"
        );
    }

    #[test]
    fn the_queue_is_what_the_worker_keeps() {
        let queue = |args: &[&str]| job(args).queue;
        for (args, depth) in [
            (&["--iodepth=8"][..], 1),
            (&["--iodepth=8", "--ioengine=sync"], 1),
            (&["--iodepth=8", "--ioengine=libaio"], 8),
            (&["--iodepth=8", "--ioengine=io_uring"], 8),
            (&["--iodepth=8", "--ioengine=posixaio"], 8),
        ] {
            let q = queue(args);
            assert_eq!(
                (q.depth, q.refill_depth),
                (depth, depth),
                "expected depth and refill depth {depth} for {args:?}, saw {q:?}"
            );
        }
        let q = queue(&["--iodepth=8", "--iodepth_low=4", "--ioengine=psync"]);
        assert_eq!(
            q.refill_depth, 1,
            "expected iodepth_low clamped to a blocking engine's depth 1, saw {q:?}"
        );
        // (submit, complete min, complete max): fio's defaults, its 0s, given batches
        // and fio's fixups (a submit batch within the depth, a max at least the min)
        for (batches, expected) in [
            (&[][..], (1, 1, 1)),
            (&["--iodepth_batch_submit=0"], (8, 1, 1)),
            (
                &[
                    "--iodepth_batch_complete_min=0",
                    "--iodepth_batch_complete_max=4",
                ],
                (1, 1, 4),
            ),
            (
                &["--iodepth_batch_submit=4", "--iodepth_batch_complete_min=2"],
                (4, 2, 2),
            ),
            (&["--iodepth_batch_complete_max=8"], (1, 1, 8)),
            (
                &[
                    "--iodepth_batch=16",
                    "--iodepth_batch_complete=4",
                    "--iodepth_batch_complete_max=2",
                ],
                (8, 4, 4),
            ),
        ] {
            let q = queue(&[&["--iodepth=8", "--ioengine=io_uring"][..], batches].concat());
            assert_eq!(
                (q.batch_submit, q.batch_complete_min, q.batch_complete_max),
                expected,
                "expected batches {expected:?} for {batches:?}, saw {q:?}"
            );
            assert!(!q.one_batch, "expected io_uring to keep its queue full");
        }
    }

    #[test]
    fn null_posixaio_and_polling_queues_follow_fio() {
        let queue = |args: &[&str]| job(args).queue;
        let max = ["--iodepth=8", "--iodepth_batch_complete_max=2"];
        for (engine, expected) in [
            // fio's null: one batch in flight, handed back whole
            ("--ioengine=null", (true, 8, 0)),
            ("--ioengine=posixaio", (false, 8, 8)),
            ("--ioengine=libaio", (false, 2, 8)),
        ] {
            let q = queue(&[&max[..], &[engine]].concat());
            assert_eq!(
                (q.one_batch, q.batch_complete_max, q.refill_depth),
                expected,
                "{engine}: expected (one batch, complete max, refill depth) {expected:?}, saw {q:?}"
            );
        }
        // both completion batches 0: fio polls for each I/O as it is queued
        let polled = queue(&[
            "--ioengine=libaio",
            "--iodepth=8",
            "--iodepth_batch_submit=4",
            "--iodepth_batch_complete_min=0",
        ]);
        assert_eq!(
            (polled.one_batch, polled.batch_submit),
            (true, 1),
            "expected a polled queue to take one I/O at a time, saw {polled:?}"
        );
        // one slot completes inside queue; offloaded, each submit thread holds one I/O
        for null in [
            &["--ioengine=null"][..],
            &["--ioengine=null", "--iodepth=8", "--io_submit_mode=offload"],
        ] {
            let q = queue(null);
            assert!(!q.one_batch, "{null:?}: expected no batch rule, saw {q:?}");
        }
    }
}
