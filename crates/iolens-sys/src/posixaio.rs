//! POSIX AIO (`aio_read`, `aio_write`, `aio_error`, `aio_return`, `aio_suspend`,
//! `aio_fsync`), as the C library provides it (glibc runs each request on a helper thread).
//!
//! [`PosixAio`] owns one control block (`struct aiocb`) and one buffer slot per queue
//! entry. The C library keeps the control block's address while the request is in flight
//! and writes its result into it, so the blocks live in a boxed slice that never moves
//! and is only freed once every request is reaped (`Drop` waits; if it cannot, it leaks
//! the blocks and buffers on purpose).

use crate::buf::Slots;
use crate::ring::{timespec, IoRing, LentSlots};
use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

/// POSIX AIO requests over `files`, one control block and buffer slot per queue entry.
///
/// Lifecycle of a slot: `prep_*` (pending) → `submit` (in flight) → `reap` (free).
pub struct PosixAio {
    files: Vec<Arc<File>>,
    bufs: LentSlots,
    /// One control block per slot, at a fixed address for the object's lifetime.
    blocks: ManuallyDrop<Box<[libc::aiocb]>>,
    /// Prepared slots, in order, not yet handed to the C library (capacity = slots).
    pending: Vec<u32>,
    /// Slots handed to the C library, not yet reaped (capacity = slots).
    submitted: Vec<u32>,
    /// I/Os the C library refused at submission, reported (as -errno) by the next `reap`.
    refused: Vec<(u32, i64)>,
    /// Scratch for aio_suspend's list (capacity = slots).
    waiting: Vec<*const libc::aiocb>,
    /// The longest one aio_suspend waits; None: until one completes.
    wait_limit: Option<libc::timespec>,
}

// SAFETY: the raw pointers (in the control blocks and `waiting`) point into memory this
// object owns; POSIX AIO requests may be checked and waited for from any thread.
unsafe impl Send for PosixAio {}

/// A control block with every field zero but the signal notification, which is off.
fn blank_block() -> libc::aiocb {
    // SAFETY: aiocb is a plain C struct of integers and pointers, for which all zero bytes
    // is a valid value (null buffer, no request).
    let mut block: libc::aiocb = unsafe { std::mem::zeroed() };
    block.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
    block
}

impl PosixAio {
    /// Room for `slots` concurrent I/Os of up to `slot_size` bytes on `files`.
    pub fn new(
        slots: u32,
        slot_size: usize,
        align: usize,
        files: &[Arc<File>],
    ) -> io::Result<Self> {
        let bufs = Slots::new(slots, slot_size, align)?;
        let n = slots as usize;
        Ok(Self {
            files: files.to_vec(),
            bufs: LentSlots::new(bufs),
            blocks: ManuallyDrop::new(vec![blank_block(); n].into_boxed_slice()),
            pending: Vec::with_capacity(n),
            submitted: Vec::with_capacity(n),
            refused: Vec::with_capacity(n),
            waiting: Vec::with_capacity(n),
            wait_limit: None,
        })
    }

    #[inline]
    fn prep(&mut self, opcode: libc::c_int, slot: u32, file: u32, offset: u64, len: u32) {
        let buf = self.bufs.lend(slot, len);
        let block = &mut self.blocks[slot as usize];
        *block = blank_block();
        block.aio_fildes = self.files[file as usize].as_raw_fd();
        block.aio_lio_opcode = opcode;
        block.aio_buf = buf.cast();
        block.aio_nbytes = len as usize;
        block.aio_offset = offset as libc::off_t;
        self.pending.push(slot);
    }

    /// Wait until one of `blocks` (given by slot) is no longer in progress, or `timeout`
    /// passes; false when it timed out.
    fn suspend(
        blocks: &[libc::aiocb],
        slots: &[u32],
        waiting: &mut Vec<*const libc::aiocb>,
        timeout: Option<&libc::timespec>,
    ) -> io::Result<bool> {
        waiting.clear();
        waiting.extend(slots.iter().map(|&s| &blocks[s as usize] as *const _));
        let timeout = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `waiting` holds waiting.len() pointers to control blocks this object owns
        // (submitted requests); `timeout` is null or points to a timespec that outlives the call.
        let ret = unsafe { libc::aio_suspend(waiting.as_ptr(), waiting.len() as i32, timeout) };
        if ret == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EAGAIN) => Ok(false),
            Some(libc::EINTR) => Ok(true),
            _ => Err(err),
        }
    }

    /// The result of the request in `block` if it finished: bytes, or -errno.
    fn finished(block: &mut libc::aiocb) -> Option<i64> {
        // SAFETY: `block` is a control block this object owns, of a submitted request.
        let err = unsafe { libc::aio_error(block) };
        if err == libc::EINPROGRESS {
            return None;
        }
        // SAFETY: the request finished (aio_error said so); aio_return is called once for it,
        // which releases what the C library kept for it.
        let ret = unsafe { libc::aio_return(block) };
        Some(if err == 0 {
            ret as i64
        } else {
            -i64::from(err)
        })
    }

    /// fsync (`datasync`: fdatasync) `files[file]` through `aio_fsync`, and wait for it.
    /// Call it with no I/O in flight.
    pub fn fsync(&mut self, file: u32, datasync: bool) -> io::Result<()> {
        let mut block = Box::new(blank_block());
        block.aio_fildes = self.files[file as usize].as_raw_fd();
        let op = if datasync {
            libc::O_DSYNC
        } else {
            libc::O_SYNC
        };
        // SAFETY: `block` is a boxed control block that is not freed before the request
        // finished: this function waits for it, and leaks the block if waiting fails.
        if unsafe { libc::aio_fsync(op, &mut *block) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut waiting = Vec::with_capacity(1);
        loop {
            if let Some(result) = Self::finished(&mut block) {
                return match result {
                    0.. => Ok(()),
                    errno => Err(io::Error::from_raw_os_error(-errno as i32)),
                };
            }
            if let Err(e) = Self::suspend(std::slice::from_ref(&*block), &[0], &mut waiting, None) {
                Box::leak(block);
                return Err(e);
            }
        }
    }
}

impl IoRing for PosixAio {
    #[inline]
    fn prep_read(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()> {
        self.prep(libc::LIO_READ, slot, file, offset, len);
        Ok(())
    }

    #[inline]
    fn prep_write(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()> {
        self.prep(libc::LIO_WRITE, slot, file, offset, len);
        Ok(())
    }

    fn submit(&mut self) -> io::Result<u32> {
        let mut accepted = 0;
        let mut taken = 0;
        for &slot in &self.pending {
            let block = &mut self.blocks[slot as usize];
            // SAFETY: the block is this object's, at a fixed address until the request is
            // reaped (or leaked by Drop); its buffer is the slot lent for this request.
            let ret = unsafe {
                if block.aio_lio_opcode == libc::LIO_READ {
                    libc::aio_read(block)
                } else {
                    libc::aio_write(block)
                }
            };
            if ret == 0 {
                self.submitted.push(slot);
                accepted += 1;
            } else {
                let err = io::Error::last_os_error();
                match err.raw_os_error() {
                    // Out of resources: the rest stay pending until something completes.
                    Some(libc::EAGAIN) => break,
                    Some(errno) => self.refused.push((slot, -i64::from(errno))),
                    None => return Err(err),
                }
            }
            taken += 1;
        }
        self.pending.drain(..taken);
        Ok(accepted)
    }

    fn reap(
        &mut self,
        min: u32,
        max: u32,
        mut on_complete: impl FnMut(u32, i64),
    ) -> io::Result<u32> {
        let min = min.min(self.in_flight());
        let mut done = self
            .bufs
            .report_refused(&mut self.refused, max, &mut on_complete);
        loop {
            let mut i = 0;
            while i < self.submitted.len() && done < max {
                let slot = self.submitted[i];
                let Some(result) = Self::finished(&mut self.blocks[slot as usize]) else {
                    i += 1;
                    continue;
                };
                self.submitted.swap_remove(i);
                self.bufs.give_back(slot);
                on_complete(slot, result);
                done += 1;
            }
            if done >= min || done >= max || self.submitted.is_empty() {
                return Ok(done);
            }
            if !Self::suspend(
                &self.blocks,
                &self.submitted,
                &mut self.waiting,
                self.wait_limit.as_ref(),
            )? {
                return Ok(done);
            }
        }
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.wait_limit = limit.map(timespec);
    }

    fn in_flight(&self) -> u32 {
        (self.submitted.len() + self.refused.len()) as u32
    }

    fn pending(&self) -> u32 {
        self.pending.len() as u32
    }

    #[inline]
    fn slot(&self, slot: u32) -> &[u8] {
        self.bufs.slot(slot)
    }

    #[inline]
    fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // Wait for the C library to finish with every block and buffer before freeing them.
        let mut drained = true;
        while !self.submitted.is_empty() {
            if self.reap(u32::MAX, u32::MAX, |_, _| {}).is_err() {
                drained = false;
                break;
            }
        }
        if drained {
            // SAFETY: no request is in flight any more, so the C library no longer uses the
            // blocks, and they are dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.blocks) };
        }
        self.bufs.release(drained);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        drop_with_reads_in_flight, open_direct, ring_roundtrip, scratch_file, BS, DEPTH,
    };

    fn roundtrip(file: Arc<File>, plain: &File) {
        let mut aio = PosixAio::new(DEPTH, BS, 4096, &[file]).unwrap();
        ring_roundtrip(&mut aio, plain);
        aio.fsync(0, false).unwrap();
        aio.fsync(0, true).unwrap();
    }

    #[test]
    fn buffered_roundtrip_depth_8() {
        let (_dir, file) = scratch_file(0);
        let plain = file.try_clone().unwrap();
        roundtrip(Arc::new(file), &plain);
    }

    #[test]
    fn direct_roundtrip_depth_8() {
        let (dir, plain) = scratch_file(64 * 1024);
        roundtrip(Arc::new(open_direct(&dir)), &plain);
    }

    #[test]
    fn a_failed_fsync_is_an_error() {
        let null = Arc::new(File::open("/dev/null").unwrap());
        let mut aio = PosixAio::new(1, BS, 4096, &[null]).unwrap();
        let err = aio.fsync(0, false).unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(libc::EINVAL),
            "expected fsync of /dev/null to fail with EINVAL, got {err}"
        );
    }

    #[test]
    fn drop_waits_for_in_flight_io() {
        let (_dir, file) = scratch_file(DEPTH as u64 * BS as u64);
        let aio = PosixAio::new(DEPTH, BS, 4096, &[Arc::new(file)]).unwrap();
        drop_with_reads_in_flight(aio);
    }
}
