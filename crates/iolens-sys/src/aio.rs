//! Linux native AIO (`io_submit`) through raw syscalls, without libaio.so.
//!
//! [`AioRing`] owns the buffer slots: an I/O's buffer can only be freed after the
//! kernel reported its completion, and `Drop` waits for every I/O still in flight.

use crate::buf::Slots;
use crate::ring::{timespec, IoRing, LentSlots};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `aio_context_t`.
type AioContext = libc::c_ulong;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// `aio_flags` bit: the kernel takes the I/O's priority from `aio_reqprio`.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// `struct iocb` of `linux/aio_abi.h`. The kernel copies it during `io_submit`, so it
/// need not outlive the call; only the buffer it points to must.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    // The header pads these two by endianness (PADDED macro).
    #[cfg(target_endian = "little")]
    aio_key: u32,
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` of `linux/aio_abi.h`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// The header of the completion ring the kernel maps at the address of the
/// `aio_context_t` (`struct aio_ring` of fs/aio.c, a stable user ABI that
/// libaio and fio's `userspace_reap` rely on). Events follow the header.
#[repr(C)]
struct AioRingHeader {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

/// A native AIO context with one buffer slot per queue entry.
///
/// Lifecycle of a slot: `prep_*` (pending) → `submit` (in flight) → `reap` (free).
pub struct AioRing {
    ctx: AioContext,
    files: Vec<Arc<File>>,
    bufs: LentSlots,
    /// Prepared, not yet accepted by the kernel. Capacity = slots, so pushing never allocates.
    pending: Vec<Iocb>,
    /// Scratch for the `iocb **` argument of io_submit (capacity = slots).
    submit_ptrs: Vec<*mut Iocb>,
    events: Box<[IoEvent]>,
    /// I/Os the kernel refused at submission, reported (as -errno) by the next `reap`.
    refused: Vec<(u32, i64)>,
    /// Accepted by the kernel, not yet reaped.
    kernel_in_flight: u32,
    /// The longest one io_getevents waits; None: until `min` complete.
    wait_limit: Option<libc::timespec>,
    /// The `aio_reqprio` of the I/Os prepared next (0: the process's own).
    ioprio: u16,
}

// SAFETY: `submit_ptrs` only holds pointers into `pending` during `submit`; everything else
// is owned data, and the AIO context may be used from any thread of the process.
unsafe impl Send for AioRing {}

impl AioRing {
    /// Take up to `max` completions straight from the kernel's completion ring,
    /// without a syscall (when the ring has the layout we know; else none).
    fn reap_from_user_ring(&mut self, max: u32, on_complete: &mut impl FnMut(u32, i64)) -> u32 {
        if max == 0 || self.kernel_in_flight == 0 {
            return 0;
        }
        let ring = self.ctx as *mut AioRingHeader;
        // SAFETY: io_setup returned `ctx` as the address of the ring the kernel mapped into
        // this process for the context's lifetime (until io_destroy in Drop). The header
        // fields are plain u32s; `tail` is written by the kernel, so it is read with an
        // acquire load, and `head` is published with a release store, the protocol the
        // kernel's aio_read_events_ring uses on its side.
        unsafe {
            if (*ring).magic != AIO_RING_MAGIC || (*ring).incompat_features != 0 {
                return 0;
            }
            let nr = (*ring).nr;
            let events = (ring as *const u8).add((*ring).header_length as usize) as *const IoEvent;
            let tail =
                (*(std::ptr::addr_of!((*ring).tail) as *const AtomicU32)).load(Ordering::Acquire);
            let head_ptr = std::ptr::addr_of!((*ring).head) as *const AtomicU32;
            let mut head = (*head_ptr).load(Ordering::Relaxed);
            let mut taken = 0;
            while head != tail && taken < max {
                let event = std::ptr::read_volatile(events.add(head as usize));
                head = (head + 1) % nr;
                taken += 1;
                let slot = event.data as u32;
                self.bufs.give_back(slot);
                on_complete(slot, event.res);
            }
            (*head_ptr).store(head, Ordering::Release);
            self.kernel_in_flight -= taken;
            taken
        }
    }

    /// A context for `slots` concurrent I/Os of up to `slot_size` bytes on `files`.
    pub fn new(
        slots: u32,
        slot_size: usize,
        align: usize,
        files: &[Arc<File>],
    ) -> io::Result<Self> {
        let bufs = Slots::new(slots, slot_size, align)?;
        let mut ctx: AioContext = 0;
        // SAFETY: io_setup writes one aio_context_t into `ctx`, which starts at 0 as required.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                slots as libc::c_long,
                &mut ctx as *mut AioContext,
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = slots as usize;
        Ok(Self {
            ctx,
            files: files.to_vec(),
            bufs: LentSlots::new(bufs),
            pending: Vec::with_capacity(n),
            submit_ptrs: Vec::with_capacity(n),
            events: vec![IoEvent::default(); n].into(),
            refused: Vec::with_capacity(n),
            kernel_in_flight: 0,
            wait_limit: None,
            ioprio: 0,
        })
    }

    #[inline]
    fn prep(&mut self, opcode: u16, slot: u32, file: u32, offset: u64, len: u32) {
        let buf = self.bufs.lend(slot, len);
        let fd = self.files[file as usize].as_raw_fd();
        self.pending.push(Iocb {
            aio_data: u64::from(slot),
            aio_lio_opcode: opcode,
            aio_fildes: fd as u32,
            aio_buf: buf as u64,
            aio_nbytes: u64::from(len),
            aio_offset: offset as i64,
            aio_reqprio: self.ioprio as i16,
            aio_flags: if self.ioprio == 0 {
                0
            } else {
                IOCB_FLAG_IOPRIO
            },
            ..Iocb::default()
        });
    }
}

impl IoRing for AioRing {
    #[inline]
    fn prep_read(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()> {
        self.prep(IOCB_CMD_PREAD, slot, file, offset, len);
        Ok(())
    }

    #[inline]
    fn prep_write(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()> {
        self.prep(IOCB_CMD_PWRITE, slot, file, offset, len);
        Ok(())
    }

    #[inline]
    fn set_ioprio(&mut self, ioprio: u16) {
        self.ioprio = ioprio;
    }

    fn submit(&mut self) -> io::Result<u32> {
        let mut accepted = 0;
        while !self.pending.is_empty() {
            let base = self.pending.as_mut_ptr();
            // SAFETY: every index is < pending.len(), so each pointer is into `pending`.
            self.submit_ptrs
                .extend((0..self.pending.len()).map(|i| unsafe { base.add(i) }));
            // SAFETY: submit_ptrs holds pending.len() valid iocb pointers; each iocb's buffer is a
            // slot we own and keep until its completion is reaped (busy flag, Drop drains).
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    self.submit_ptrs.len() as libc::c_long,
                    self.submit_ptrs.as_mut_ptr(),
                )
            };
            self.submit_ptrs.clear();
            if ret >= 0 {
                let went = ret as usize;
                self.pending.drain(..went);
                self.kernel_in_flight += went as u32;
                accepted += went as u32;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EAGAIN) => break,
                Some(libc::EINTR) => continue,
                // The kernel reports a bad first iocb as the call's error: complete it with that.
                Some(errno) => {
                    let refused = self.pending.remove(0);
                    self.refused
                        .push((refused.aio_data as u32, -i64::from(errno)));
                }
                None => return Err(err),
            }
        }
        Ok(accepted)
    }

    fn reap(
        &mut self,
        min: u32,
        max: u32,
        mut on_complete: impl FnMut(u32, i64),
    ) -> io::Result<u32> {
        let mut done = self
            .bufs
            .report_refused(&mut self.refused, max, &mut on_complete);
        // Completions already in the ring cost no syscall; io_getevents only to wait.
        done += self.reap_from_user_ring(max - done, &mut on_complete);
        if done >= min {
            return Ok(done);
        }
        let nr = (max - done).min(self.kernel_in_flight);
        if nr == 0 {
            return Ok(done);
        }
        let min_nr = min.saturating_sub(done).min(nr);
        let got = loop {
            let mut limit = self.wait_limit;
            let timeout = limit
                .as_mut()
                .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
            // SAFETY: `events` has room for `slots` >= nr events; `timeout` is NULL (wait for
            // min_nr) or points to a timespec that lives until the call returns.
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min_nr as libc::c_long,
                    nr as libc::c_long,
                    self.events.as_mut_ptr(),
                    timeout,
                )
            };
            if ret >= 0 {
                break ret as usize;
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        };
        for event in &self.events[..got] {
            let slot = event.data as u32;
            self.bufs.give_back(slot);
            on_complete(slot, event.res);
        }
        self.kernel_in_flight -= got as u32;
        Ok(done + got as u32)
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.wait_limit = limit.map(timespec);
    }

    fn in_flight(&self) -> u32 {
        self.kernel_in_flight + self.refused.len() as u32
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

impl Drop for AioRing {
    fn drop(&mut self) {
        // Wait for the kernel to finish with every buffer before freeing them.
        let mut drained = true;
        while self.kernel_in_flight > 0 {
            if self
                .reap(self.kernel_in_flight, u32::MAX, |_, _| {})
                .is_err()
            {
                drained = false;
                break;
            }
        }
        // SAFETY: the context was created by io_setup and is destroyed once; io_destroy itself
        // also waits for outstanding I/O on current kernels.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        self.bufs.release(drained);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        drop_with_reads_in_flight, ioprio, open_direct, reads_with_priorities, ring_roundtrip,
        scratch_file, BS, DEPTH,
    };
    use std::os::unix::fs::FileExt;

    fn roundtrip(file: Arc<File>, plain: &File) {
        let mut ring = AioRing::new(DEPTH, BS, 4096, &[file]).unwrap();
        ring_roundtrip(&mut ring, plain);
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
    fn misaligned_direct_io_completes_with_einval() {
        let (dir, plain) = scratch_file(0);
        plain.write_all_at(&[1; 2 * BS], 0).unwrap();
        let mut ring = AioRing::new(1, BS, 4096, &[Arc::new(open_direct(&dir))]).unwrap();
        ring.prep_read(0, 0, 100, BS as u32).unwrap();
        ring.submit().unwrap();
        let mut results = Vec::new();
        ring.reap(1, 1, |slot, res| results.push((slot, res)))
            .unwrap();
        assert_eq!(results, [(0, -i64::from(libc::EINVAL))]);
    }

    #[test]
    fn rejected_io_completes_with_errno() {
        let (dir, _file) = scratch_file(4096);
        let read_only = Arc::new(File::open(dir.path().join("data")).unwrap());
        let mut ring = AioRing::new(2, BS, 4096, &[read_only]).unwrap();
        ring.prep_write(0, 0, 0, BS as u32).unwrap();
        ring.prep_read(1, 0, 0, BS as u32).unwrap();
        assert_eq!(ring.submit().unwrap(), 1);
        let mut results = Vec::new();
        while ring.in_flight() > 0 {
            ring.reap(1, 2, |slot, res| results.push((slot, res)))
                .unwrap();
        }
        results.sort();
        assert_eq!(results, [(0, -i64::from(libc::EBADF)), (1, BS as i64)]);
    }

    #[test]
    fn reap_without_outstanding_io_returns_at_once() {
        let (_dir, file) = scratch_file(4096);
        let mut ring = AioRing::new(2, BS, 4096, &[Arc::new(file)]).unwrap();
        assert_eq!(
            ring.reap(2, 2, |_, _| panic!("nothing was submitted"))
                .unwrap(),
            0
        );
    }

    #[test]
    fn drop_waits_for_in_flight_io() {
        let (_dir, file) = scratch_file(DEPTH as u64 * BS as u64);
        let ring = AioRing::new(DEPTH, BS, 4096, &[Arc::new(file)]).unwrap();
        drop_with_reads_in_flight(ring);
    }

    #[test]
    #[should_panic(expected = "in flight")]
    fn busy_slot_cannot_be_borrowed() {
        let (_dir, file) = scratch_file(4096);
        let mut ring = AioRing::new(1, BS, 4096, &[Arc::new(file)]).unwrap();
        ring.prep_read(0, 0, 0, BS as u32).unwrap();
        ring.slot_mut(0);
    }

    #[test]
    fn each_io_carries_its_priority_to_the_kernel() {
        let (_dir, file) = scratch_file(BS as u64);
        let mut ring = AioRing::new(1, BS, 4096, &[Arc::new(file)]).unwrap();
        // idle class (allowed to anyone), an unknown class 7, then the process's own again
        let results = reads_with_priorities(&mut ring, &[ioprio(3, 0), ioprio(7, 0), 0]);
        assert_eq!(
            results,
            [BS as i64, -i64::from(libc::EINVAL), BS as i64],
            "expected the idle-class read to pass, class 7 to be refused (EINVAL), the plain read to pass"
        );
    }
}
