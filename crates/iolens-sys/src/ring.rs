//! What the two asynchronous rings ([`crate::AioRing`], [`crate::Uring`]) have in common.
//!
//! A slot's life: `prep_*` (pending) → `submit` (in flight) → `reap` (free again).
//! A slot that is pending or in flight cannot be borrowed (`slot`/`slot_mut` panic).

use crate::buf::Slots;
use std::io;
use std::mem::ManuallyDrop;
use std::time::Duration;

/// An asynchronous ring of I/Os over slots of one buffer: libaio's or io_uring's.
pub trait IoRing {
    /// Queue a read of `len` bytes at `offset` of `files[file]` into `slot`. May hand
    /// what is queued to the kernel first, to make room (an error is from that).
    fn prep_read(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()>;
    /// Queue a write of the first `len` bytes of `slot` to `files[file]` at `offset`.
    fn prep_write(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()>;
    /// The I/O priority (`ioprio_set`'s class << 13 | level) of the I/Os prepared from now
    /// on; 0 leaves them at the process's own. A ring without per-I/O priorities ignores it.
    fn set_ioprio(&mut self, _ioprio: u16) {}
    /// Hand every prepared I/O to the kernel; returns how many it took. When the kernel
    /// is short of resources (EAGAIN) the rest stay pending: reap, then submit again.
    /// Per-I/O errors (bad fd, misaligned direct I/O) come back as completions.
    fn submit(&mut self) -> io::Result<u32>;
    /// Wait for at least `min` completions (0 = only those already done), call
    /// `on_complete(slot, bytes or -errno)` for at most `max`; returns how many.
    /// `min` is capped at what is outstanding, so this never waits for nothing.
    fn reap(&mut self, min: u32, max: u32, on_complete: impl FnMut(u32, i64)) -> io::Result<u32>;
    /// Let `reap` wait at most `limit` for its `min` completions (None: as long as it
    /// takes), so a caller can look at its I/Os even while one of them hangs.
    fn set_wait_limit(&mut self, limit: Option<Duration>);
    /// Prepared or submitted I/Os not yet reaped.
    fn in_flight(&self) -> u32;
    /// Prepared I/Os not yet accepted by the kernel.
    fn pending(&self) -> u32;
    /// The bytes of a free slot.
    fn slot(&self, slot: u32) -> &[u8];
    /// The bytes of a free slot, to fill before a write.
    fn slot_mut(&mut self, slot: u32) -> &mut [u8];
    /// Options the kernel refused and what is used instead.
    fn notes(&self) -> &[String] {
        &[]
    }
}

/// A wait limit as the `timespec` the AIO calls take.
pub(crate) fn timespec(limit: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos().into(),
    }
}

/// A ring's buffer slots and which of them the kernel may be using. Shared by
/// both rings so the lending rules live in one place: a lent slot cannot be
/// borrowed, and the memory is only freed by a ring that drained every I/O.
pub(crate) struct LentSlots {
    bufs: ManuallyDrop<Slots>,
    /// Slot is pending, in flight or completed but not yet reaped.
    busy: Box<[bool]>,
}

impl LentSlots {
    pub(crate) fn new(bufs: Slots) -> Self {
        let busy = vec![false; bufs.count() as usize].into();
        LentSlots {
            bufs: ManuallyDrop::new(bufs),
            busy,
        }
    }

    /// Mark `slot` as handed to the kernel for an I/O of `len` bytes; its address.
    #[inline]
    pub(crate) fn lend(&mut self, slot: u32, len: u32) -> *mut u8 {
        assert!(!self.busy[slot as usize], "slot {slot} is already in use");
        assert!(
            len as usize <= self.bufs.slot_size(),
            "I/O of {len} bytes exceeds the slot size"
        );
        self.busy[slot as usize] = true;
        self.bufs.slot_ptr(slot)
    }

    /// The kernel reported the slot's I/O complete.
    #[inline]
    pub(crate) fn give_back(&mut self, slot: u32) {
        self.busy[slot as usize] = false;
    }

    #[inline]
    pub(crate) fn slot(&self, slot: u32) -> &[u8] {
        assert!(!self.busy[slot as usize], "slot {slot} is in flight");
        self.bufs.slot(slot)
    }

    #[inline]
    pub(crate) fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        assert!(!self.busy[slot as usize], "slot {slot} is in flight");
        self.bufs.slot_mut(slot)
    }

    /// Report (at most `max` of) the I/Os refused at submission, each with its -errno, and
    /// take their slots back; how many.
    pub(crate) fn report_refused(
        &mut self,
        refused: &mut Vec<(u32, i64)>,
        max: u32,
        on_complete: &mut impl FnMut(u32, i64),
    ) -> u32 {
        let mut done = 0;
        while done < max {
            let Some((slot, result)) = refused.pop() else {
                break;
            };
            self.give_back(slot);
            on_complete(slot, result);
            done += 1;
        }
        done
    }

    /// Free the memory once every I/O is drained; otherwise leak it on purpose,
    /// since the kernel might still write to it. Called once, from the ring's Drop.
    pub(crate) fn release(&mut self, drained: bool) {
        if drained {
            // SAFETY: the ring drained every I/O, so the kernel no longer uses the
            // buffers, and `release` is called once, from Drop, after which they are
            // never touched again.
            unsafe { ManuallyDrop::drop(&mut self.bufs) };
        }
    }
}
