//! A worker's queue of buffer slots: which are free, which were queued since
//! the last commit (pending), which are in flight, and when the queue may take
//! more: a full queue drains to `iodepth_low` before it is refilled, and the
//! `latency_target` search keeps slots reserved to cap it below `iodepth`.
//! Fixed-size after `new`: nothing here allocates per I/O.

use crate::job::spec::{Ddir, JobSpec};
use crate::stats::DepthCounters;

/// Start, submit and direction of an I/O that is in flight in an async engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct InFlight {
    pub start_ns: u64,
    pub submit_ns: u64,
    pub ddir: Ddir,
    pub len: u32,
    pub file: u32,
    pub offset: u64,
    /// The I/O's priority (`cmdprio_*`; the job's own, 0 when it has none).
    pub ioprio: u16,
}

/// What a slot holds when no I/O uses it (length 0).
const IDLE: InFlight = InFlight {
    start_ns: 0,
    submit_ns: 0,
    ddir: Ddir::Read,
    len: 0,
    file: 0,
    offset: 0,
    ioprio: 0,
};

pub(super) struct Queue {
    /// Slots no I/O uses; the last one is taken first.
    free: Vec<u32>,
    /// Per slot: the I/O in it, IDLE when free.
    slots: Vec<InFlight>,
    /// Slots submitted and not yet completed.
    in_flight: u32,
    /// Slots queued since the last commit.
    pending: Vec<u32>,
    /// `iodepth_low`: the depth a full queue drains to before it is refilled.
    refill_depth: u32,
    /// The queue filled up and is draining down to `refill_depth`.
    draining: bool,
    /// Slots kept free to cap the queue below its depth (the latency_target search).
    reserved: usize,
    /// `serialize_overlap` in a job that writes or trims: an I/O overlapping one
    /// queued or in flight is held back.
    serialize_overlap: bool,
    /// Each commit makes the queue drain to empty first (`QueueSpec::one_batch`).
    one_batch: bool,
}

impl Queue {
    /// The queue a job's worker uses, as the resolver worked it out: one slot
    /// for a blocking engine, `iodepth` for an async one; a full queue drains
    /// to `iodepth_low` (clamped to the depth).
    pub(super) fn for_job(job: &JobSpec) -> Self {
        let mut queue = Self::new(job.queue.depth, job.queue.refill_depth);
        // fio serialises only jobs that change data
        let rw = job.workload.rw;
        queue.serialize_overlap = job.queue.serialize_overlap && (rw.writes() || rw.trims());
        queue.one_batch = job.queue.one_batch;
        queue
    }

    /// `depth` slots (at least one); `iodepth_low` above the depth never drains.
    pub(super) fn new(depth: u32, iodepth_low: u32) -> Self {
        let depth = depth.max(1);
        Queue {
            free: (0..depth).rev().collect(),
            slots: vec![IDLE; depth as usize],
            in_flight: 0,
            pending: Vec::with_capacity(depth as usize),
            refill_depth: iodepth_low.min(depth),
            draining: false,
            reserved: 0,
            serialize_overlap: false,
            one_batch: false,
        }
    }

    /// `serialize_overlap`: whether the bytes `offset..offset + len` of `file`
    /// overlap an I/O queued or in flight, so that one must complete first.
    #[inline]
    pub(super) fn overlaps_in_flight(&self, file: u32, offset: u64, len: u32) -> bool {
        let end = offset + u64::from(len);
        self.serialize_overlap
            && self.slots.iter().any(|io| {
                io.len > 0
                    && io.file == file
                    && io.offset < end
                    && offset < io.offset + u64::from(io.len)
            })
    }

    /// Number of slots: the engine's queue depth.
    pub(super) fn depth(&self) -> u32 {
        self.slots.len() as u32
    }

    /// I/Os submitted and not completed yet.
    #[inline]
    pub(super) fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Another I/O may be issued: more slots are free than reserved, and the
    /// queue is not draining.
    #[inline]
    pub(super) fn has_room(&self) -> bool {
        self.free.len() > self.reserved && !self.draining
    }

    /// A free slot for the next I/O; callers check `has_room` first.
    #[inline]
    pub(super) fn take(&mut self) -> u32 {
        self.free.pop().expect("Queue::take needs a free slot")
    }

    /// The I/O in `slot` completed inside `queue` (a blocking engine): the slot is free again.
    #[inline]
    pub(super) fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// The engine queued `io` in `slot`; it waits for the next commit.
    #[inline]
    pub(super) fn queued(&mut self, slot: u32, io: InFlight) {
        self.slots[slot as usize] = io;
        self.pending.push(slot);
    }

    /// I/Os queued since the last commit.
    #[inline]
    pub(super) fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The pending I/Os were submitted at `now_ns`: they are in flight now.
    /// `depth` counts the batch, and each of its I/Os at the level the batch
    /// brought the queue to (fio's `io_u_mark_depth` at commit).
    pub(super) fn submitted(&mut self, now_ns: u64, depth: &mut DepthCounters) {
        let batch = self.pending.len() as u32;
        depth.record_submit(batch);
        for &slot in &self.pending {
            self.slots[slot as usize].submit_ns = now_ns;
        }
        self.pending.clear();
        self.in_flight += batch;
        depth.record_level(self.in_flight, batch);
        self.draining |= self.one_batch && self.in_flight > 0;
    }

    /// The I/O in `slot` completed: its slot is free, and here is what it was.
    #[inline]
    pub(super) fn completed(&mut self, slot: u32) -> InFlight {
        let io = std::mem::replace(&mut self.slots[slot as usize], IDLE);
        self.in_flight -= 1;
        self.free.push(slot);
        io
    }

    /// After a submission: a full queue (no free slot beyond the reserved ones)
    /// with more in flight than `iodepth_low` drains before it takes more.
    #[inline]
    pub(super) fn drain_if_full(&mut self) {
        if self.free.len() <= self.reserved && self.refill_depth < self.in_flight {
            self.draining = true;
        }
    }

    /// After reaping: a draining queue down to `iodepth_low` may be refilled.
    #[inline]
    pub(super) fn refill_if_drained(&mut self) {
        if self.draining && self.in_flight <= self.refill_depth {
            self.draining = false;
        }
    }

    /// Cap the queue at `depth` I/Os (at most its size): the rest of the slots stay free.
    pub(super) fn cap(&mut self, depth: u32) {
        self.reserved = self.slots.len() - (depth as usize).min(self.slots.len());
    }

    /// The longest-running I/O in flight, if any.
    pub(super) fn oldest(&self) -> Option<InFlight> {
        self.slots
            .iter()
            .filter(|io| io.len > 0)
            .min_by_key(|io| io.start_ns)
            .copied()
    }

    /// No completion of the I/Os in flight will be reported (the engine
    /// failed, or they were given up on): count none in flight.
    pub(super) fn forget_in_flight(&mut self) {
        self.in_flight = 0;
        self.draining = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(start_ns: u64) -> InFlight {
        InFlight {
            start_ns,
            len: 4096,
            ..IDLE
        }
    }

    /// Take a slot, queue an I/O started at `start_ns` in it; returns the slot.
    fn queue_one(q: &mut Queue, start_ns: u64) -> u32 {
        let slot = q.take();
        q.queued(slot, io(start_ns));
        slot
    }

    /// Queue `n` I/Os, submit them at once, then let the queue decide whether it is full.
    fn submit(q: &mut Queue, n: u64) -> Vec<u32> {
        let slots = (0..n).map(|i| queue_one(q, i)).collect();
        q.submitted(n, &mut DepthCounters::default());
        q.drain_if_full();
        slots
    }

    fn job(options: &[&str]) -> JobSpec {
        let args: Vec<&str> = ["--name=t", "--filename=/tmp/f"]
            .into_iter()
            .chain(options.iter().copied())
            .collect();
        crate::testutil::job_spec(&args)
    }

    #[test]
    fn serialize_overlap_holds_back_an_io_over_one_queued_or_in_flight() {
        let mut q = Queue::for_job(&job(&[
            "--ioengine=libaio",
            "--iodepth=4",
            "--rw=randwrite",
            "--serialize_overlap=1",
        ]));
        let at = |file, offset| InFlight {
            file,
            offset,
            ..io(0)
        };
        let slot = q.take();
        q.queued(slot, at(0, 8192));
        let held = |q: &Queue, file, offset, len| q.overlaps_in_flight(file, offset, len);
        assert!(
            held(&q, 0, 8192, 4096),
            "expected the same block held back while queued"
        );
        q.submitted(1, &mut DepthCounters::default());
        assert!(
            held(&q, 0, 4096 + 512, 4096),
            "expected a partly overlapping I/O held back"
        );
        assert!(
            held(&q, 0, 12_288 - 512, 512),
            "expected the block's last sector held back"
        );
        assert!(
            !held(&q, 0, 4096, 4096),
            "expected the block before it to go"
        );
        assert!(
            !held(&q, 0, 12_288, 4096),
            "expected the block after it to go"
        );
        assert!(
            !held(&q, 1, 8192, 4096),
            "expected the same offset of another file to go"
        );
        q.completed(slot);
        assert!(
            !held(&q, 0, 8192, 4096),
            "expected nothing held back once it completed"
        );
        // fio serialises only jobs that change data
        let mut reads = Queue::for_job(&job(&[
            "--ioengine=libaio",
            "--iodepth=4",
            "--rw=randread",
            "--serialize_overlap=1",
        ]));
        let slot = reads.take();
        reads.queued(slot, at(0, 8192));
        assert!(
            !held(&reads, 0, 8192, 4096),
            "expected a read job never held back"
        );
    }

    #[test]
    fn a_job_gets_its_depth_and_a_clamped_refill_depth() {
        let cases: [(&[&str], u32, u32); 4] = [
            (&["--ioengine=psync", "--iodepth=8"], 1, 1),
            (&["--ioengine=libaio", "--iodepth=8"], 8, 8),
            (
                &["--ioengine=libaio", "--iodepth=8", "--iodepth_low=2"],
                8,
                2,
            ),
            (
                &["--ioengine=io_uring", "--iodepth=4", "--iodepth_low=64"],
                4,
                4,
            ),
        ];
        for (options, depth, refill) in cases {
            let q = Queue::for_job(&job(options));
            assert_eq!(
                (q.depth(), q.refill_depth),
                (depth, refill),
                "{options:?}: expected (depth, refill depth) ({depth}, {refill}), saw ({}, {})",
                q.depth(),
                q.refill_depth
            );
        }
    }

    #[test]
    fn slots_go_from_free_to_pending_to_in_flight_and_back() {
        let mut q = Queue::new(3, 3);
        let mut depth = DepthCounters::default();
        let a = queue_one(&mut q, 10);
        let b = queue_one(&mut q, 20);
        assert_eq!(
            (q.pending(), q.in_flight()),
            (2, 0),
            "expected 2 pending, 0 in flight before the commit"
        );
        q.submitted(25, &mut depth);
        assert_eq!(
            (q.pending(), q.in_flight()),
            (0, 2),
            "expected 0 pending, 2 in flight after the commit"
        );
        let done = q.completed(b);
        assert_eq!(
            (done.start_ns, done.submit_ns),
            (20, 25),
            "expected slot {b} to give back the I/O started at 20 and submitted at 25, saw {done:?}"
        );
        assert_eq!(
            q.in_flight(),
            1,
            "expected 1 in flight after one completion"
        );
        assert_eq!(
            q.oldest().map(|io| io.start_ns),
            Some(10),
            "expected the I/O started at 10 to be the oldest in flight"
        );
        q.completed(a);
        assert_eq!(
            q.oldest(),
            None,
            "expected no I/O in flight, saw {:?}",
            q.oldest()
        );
        // every slot is free again: the queue takes `depth` I/Os once more
        for _ in 0..3 {
            assert!(q.has_room(), "expected room for 3 I/Os after all completed");
            queue_one(&mut q, 30);
        }
        assert!(!q.has_room(), "expected no room with all 3 slots queued");
    }

    #[test]
    fn a_slot_that_completed_in_queue_is_free_again_at_once() {
        let mut q = Queue::new(1, 1);
        let slot = q.take();
        assert!(
            !q.has_room(),
            "expected no room while the only slot is taken"
        );
        q.release(slot);
        assert!(q.has_room(), "expected room once the slot is released");
        assert_eq!(
            q.in_flight(),
            0,
            "expected nothing in flight after a release"
        );
    }

    #[test]
    fn a_full_queue_drains_to_iodepth_low_before_refilling() {
        let mut q = Queue::new(4, 1);
        let slots = submit(&mut q, 4);
        assert!(!q.has_room(), "expected a full queue to drain");
        for (n, &slot) in slots[..3].iter().enumerate() {
            q.completed(slot);
            q.refill_if_drained();
            let in_flight = 3 - n as u32;
            assert_eq!(
                q.has_room(),
                in_flight <= 1,
                "with {in_flight} in flight and iodepth_low=1, expected room only at 1 or fewer"
            );
        }
    }

    #[test]
    fn without_iodepth_low_below_the_depth_the_queue_never_drains() {
        let mut q = Queue::new(2, 2);
        let first = submit(&mut q, 2)[0];
        q.completed(first);
        assert!(
            q.has_room(),
            "expected room as soon as one of 2 completes when iodepth_low = iodepth"
        );
    }

    #[test]
    fn a_partly_full_queue_does_not_drain() {
        let mut q = Queue::new(4, 1);
        submit(&mut q, 2);
        assert!(q.has_room(), "expected room with 2 of 4 slots in flight");
    }

    #[test]
    fn a_cap_keeps_slots_free() {
        let mut q = Queue::new(4, 4);
        q.cap(2);
        queue_one(&mut q, 0);
        queue_one(&mut q, 1);
        assert!(
            !q.has_room(),
            "expected no room with 2 queued under a cap of 2"
        );
        q.cap(3);
        assert!(
            q.has_room(),
            "expected room for a third I/O once the cap is 3"
        );
        q.cap(9);
        assert_eq!(
            q.reserved, 0,
            "expected a cap above the depth to reserve nothing"
        );
    }

    #[test]
    fn a_capped_queue_counts_as_full_for_draining() {
        let mut q = Queue::new(4, 1);
        q.cap(2);
        let second = submit(&mut q, 2)[1];
        q.cap(4);
        assert!(
            !q.has_room(),
            "expected a queue full at its cap to drain even after the cap is lifted"
        );
        q.completed(second);
        q.refill_if_drained();
        assert!(q.has_room(), "expected room once down to iodepth_low=1");
    }

    #[test]
    fn forgetting_what_is_in_flight_ends_draining() {
        let mut q = Queue::new(2, 0);
        submit(&mut q, 2);
        assert!(
            q.draining,
            "expected a full queue above iodepth_low=0 to drain"
        );
        q.forget_in_flight();
        assert_eq!(q.in_flight(), 0, "expected nothing counted in flight");
        assert!(!q.draining, "expected draining to end");
    }

    #[test]
    fn a_batch_counts_each_of_its_ios_at_the_depth_it_reached() {
        let mut q = Queue::new(8, 8);
        let mut depth = DepthCounters::default();
        queue_one(&mut q, 0);
        q.submitted(1, &mut depth);
        for _ in 0..3 {
            queue_one(&mut q, 0);
        }
        q.submitted(2, &mut depth);
        let mut expected = DepthCounters::default();
        expected.record_submit(1);
        expected.record_level(1, 1);
        expected.record_submit(3);
        expected.record_level(4, 3);
        assert_eq!(
            depth, expected,
            "expected batches of 1 and 3, one I/O at depth 1 and three at depth 4"
        );
    }

    #[test]
    fn a_one_batch_queue_takes_nothing_until_its_batch_is_reaped() {
        let mut q = Queue::new(8, 0);
        q.one_batch = true;
        let slots = submit(&mut q, 3);
        assert!(
            !q.has_room(),
            "expected no room with a batch of 3 of 8 in flight"
        );
        for (n, &slot) in slots.iter().enumerate() {
            q.completed(slot);
            q.refill_if_drained();
            assert_eq!(
                q.has_room(),
                n == 2,
                "expected room only once all 3 completed, saw it after {}",
                n + 1
            );
        }
    }
}
