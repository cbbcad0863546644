//! What the two asynchronous rings ([`crate::AioRing`], [`crate::Uring`]) have in common.
//!
//! A slot's life: `prep_*` (pending) → `submit` (in flight) → `reap` (free again).
//! A slot that is pending or in flight cannot be borrowed (`slot`/`slot_mut` panic).

use std::io;
use std::time::Duration;

pub trait IoRing {
    /// Queue a read of `len` bytes at `offset` of `files[file]` into `slot`.
    fn prep_read(&mut self, slot: u32, file: u32, offset: u64, len: u32);
    /// Queue a write of the first `len` bytes of `slot` to `files[file]` at `offset`.
    fn prep_write(&mut self, slot: u32, file: u32, offset: u64, len: u32);
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
    fn slot(&self, slot: u32) -> &[u8];
    fn slot_mut(&mut self, slot: u32) -> &mut [u8];
    /// Options the kernel refused and what is used instead.
    fn notes(&self) -> &[String] {
        &[]
    }
}
