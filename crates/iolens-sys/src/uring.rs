//! io_uring through the `io-uring` crate, shaped like [`crate::AioRing`]: the ring
//! owns the buffer slots, and `Drop` waits for every I/O in flight before freeing them.

use crate::buf::Slots;
use crate::ring::{IoRing, LentSlots};
use io_uring::{opcode, squeue, types, IoUring};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

/// What to ask of the kernel. Refused options fall back and leave a note.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UringOptions {
    /// IORING_SETUP_SQPOLL: a kernel thread polls the submission queue (fio's `sqthread_poll`).
    pub sqpoll: bool,
    /// IORING_SETUP_IOPOLL: completions are polled, not interrupt driven (fio's `hipri`; direct I/O only).
    pub iopoll: bool,
    /// Register the slot buffers once and use READ_FIXED/WRITE_FIXED (fio's `fixedbufs`).
    pub fixed_buffers: bool,
    /// Register the files once and address them by index (fio's `registerfiles`).
    pub register_files: bool,
}

/// An io_uring instance with one buffer slot per queue entry. Use it from the
/// thread that created it: the ring is set up single-issuer where the kernel allows.
pub struct Uring {
    ring: IoUring,
    /// Kept open while the ring may refer to them.
    _files: Vec<Arc<File>>,
    /// What goes in an SQE's fd field per file: the fd, or its index when registered.
    sqe_fds: Vec<RawFd>,
    sqe_flags: squeue::Flags,
    fixed_buffers: bool,
    /// The ring was set up with IOPOLL (completions must be polled for).
    iopoll: bool,
    /// The ring was set up with SQPOLL: a kernel thread takes entries off the
    /// submission queue at its own pace.
    sqpoll: bool,
    bufs: LentSlots,
    /// Pushed onto the submission queue, not yet passed to io_uring_enter.
    unsubmitted: u32,
    /// Pushed and not yet reaped.
    outstanding: u32,
    /// The longest one wait for completions lasts; None: until they come.
    wait_limit: Option<types::Timespec>,
    notes: Vec<String>,
    /// The SQE ioprio of the I/Os prepared next (0: the process's own).
    ioprio: u16,
}

fn build_ring(
    entries: u32,
    sqpoll: bool,
    iopoll: bool,
    defer_taskrun: bool,
) -> io::Result<IoUring> {
    let mut builder = IoUring::builder();
    if defer_taskrun {
        // Completion work runs only when this thread asks for completions: no
        // interrupting task work or cross-CPU wake-ups mid-submission. Requires
        // that only the creating thread uses the ring (true for a worker's ring).
        builder
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun();
    }
    if sqpoll {
        // Idle time (ms) before the kernel thread sleeps and must be woken by a syscall.
        builder.setup_sqpoll(1000);
    }
    if iopoll {
        builder.setup_iopoll();
    }
    builder.build(entries)
}

impl Uring {
    /// A ring for `slots` concurrent I/Os of up to `slot_size` bytes on `files`.
    pub fn new(
        slots: u32,
        slot_size: usize,
        align: usize,
        files: &[Arc<File>],
        options: UringOptions,
    ) -> io::Result<Self> {
        Self::with_sq_entries(slots, slots, slot_size, align, files, options)
    }

    /// Like [`Uring::new`], with a submission queue of `sq_entries` (rounded up to a
    /// power of two by the kernel); fewer than `slots` lets the tests fill it.
    fn with_sq_entries(
        sq_entries: u32,
        slots: u32,
        slot_size: usize,
        align: usize,
        files: &[Arc<File>],
        options: UringOptions,
    ) -> io::Result<Self> {
        let mut bufs = Slots::new(slots, slot_size, align)?;
        let mut notes = Vec::new();
        let (mut sqpoll, mut iopoll) = (options.sqpoll, options.iopoll);
        // Deferred task running is an optimisation, not something the user asked for:
        // older kernels refuse it and then we silently do without.
        let mut defer_taskrun = !sqpoll;
        let ring = loop {
            match build_ring(sq_entries, sqpoll, iopoll, defer_taskrun) {
                Ok(ring) => break ring,
                Err(_) if defer_taskrun => defer_taskrun = false,
                Err(e) if sqpoll => {
                    notes.push(format!(
                        "sqthread_poll refused by the kernel ({e}); using normal submission"
                    ));
                    sqpoll = false;
                }
                Err(e) if iopoll => {
                    notes.push(format!("hipri (IOPOLL) refused by the kernel ({e}); using interrupt-driven completions"));
                    iopoll = false;
                }
                Err(e) => return Err(e),
            }
        };

        let raw_fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
        let mut sqe_fds = raw_fds.clone();
        let mut sqe_flags = squeue::Flags::empty();
        if options.register_files {
            match ring.submitter().register_files(&raw_fds) {
                Ok(()) => {
                    sqe_fds = (0..raw_fds.len() as RawFd).collect();
                    sqe_flags = squeue::Flags::FIXED_FILE;
                }
                Err(e) => notes.push(format!(
                    "registerfiles refused by the kernel ({e}); using plain descriptors"
                )),
            }
        }

        let mut fixed_buffers = false;
        if options.fixed_buffers {
            let iovecs: Vec<libc::iovec> = (0..slots)
                .map(|slot| libc::iovec {
                    iov_base: bufs.slot_ptr(slot).cast(),
                    iov_len: slot_size,
                })
                .collect();
            // SAFETY: each iovec is a slot of `bufs`, which stays allocated until the ring is gone
            // or every I/O is drained (see Drop); buffer index = slot number.
            match unsafe { ring.submitter().register_buffers(&iovecs) } {
                Ok(()) => fixed_buffers = true,
                Err(e) => notes.push(format!(
                    "fixedbufs refused by the kernel ({e}); using normal buffers"
                )),
            }
        }

        Ok(Self {
            ring,
            _files: files.to_vec(),
            sqe_fds,
            sqe_flags,
            fixed_buffers,
            iopoll,
            sqpoll,
            bufs: LentSlots::new(bufs),
            unsubmitted: 0,
            outstanding: 0,
            wait_limit: None,
            notes,
            ioprio: 0,
        })
    }

    #[inline]
    fn prep(&mut self, write: bool, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()> {
        if self.ring.submission().is_full() {
            self.make_room()?;
        }
        let buf = self.bufs.lend(slot, len);
        let fd = types::Fd(self.sqe_fds[file as usize]);
        // Registered buffers are indexed by slot (fewer than 2^16 slots: the SQ holds at most 32768).
        let ioprio = self.ioprio;
        let entry = match (write, self.fixed_buffers) {
            (false, false) => opcode::Read::new(fd, buf, len)
                .offset(offset)
                .ioprio(ioprio)
                .build(),
            (true, false) => opcode::Write::new(fd, buf, len)
                .offset(offset)
                .ioprio(ioprio)
                .build(),
            (false, true) => opcode::ReadFixed::new(fd, buf, len, slot as u16)
                .offset(offset)
                .ioprio(ioprio)
                .build(),
            (true, true) => opcode::WriteFixed::new(fd, buf, len, slot as u16)
                .offset(offset)
                .ioprio(ioprio)
                .build(),
        };
        let entry = entry.flags(self.sqe_flags).user_data(u64::from(slot));
        // SAFETY: the SQE points at a slot we own; the slot is lent (LentSlots) and is neither handed
        // out nor freed until its completion is reaped (or Drop has drained the ring).
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            // make_room left room and nothing else pushes: unreachable, but a slot must not stay lent.
            self.bufs.give_back(slot);
            return Err(io::Error::other("io_uring submission queue is full"));
        }
        self.unsubmitted += 1;
        self.outstanding += 1;
        Ok(())
    }

    /// The submission queue is full: hand its entries to the kernel and wait until
    /// it has taken some. With SQPOLL this is an ordinary state: the kernel thread
    /// takes entries at its own pace and moves the queue's head only after a whole
    /// batch, whose I/Os may already have completed (and their slots been reused).
    fn make_room(&mut self) -> io::Result<()> {
        loop {
            self.enter(0)?;
            if !self.ring.submission().is_full() {
                return Ok(());
            }
            if !self.sqpoll {
                // Without SQPOLL, entering takes every entry unless the kernel is short of
                // resources: reaping completions (the caller's next step) frees them.
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "io_uring submission queue is full and the kernel takes no more entries",
                ));
            }
            match self.ring.submitter().squeue_wait() {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// io_uring_enter reported `n` entries taken; how many of ours that makes.
    /// With SQPOLL the call only wakes the kernel thread, which takes every entry
    /// on the queue by itself (the count returned is what it had not yet taken).
    fn taken(&mut self, n: usize) -> u32 {
        let n = if self.sqpoll {
            self.unsubmitted
        } else {
            (n as u32).min(self.unsubmitted)
        };
        self.unsubmitted -= n;
        n
    }

    /// io_uring_enter: submit what is queued and wait for `want` completions.
    fn enter(&mut self, want: u32) -> io::Result<u32> {
        loop {
            match self.ring.submit_and_wait(want as usize) {
                Ok(n) => return Ok(self.taken(n)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) => {
                    return Ok(0)
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Wait up to the wait limit for `want` completions; false when it ran out.
    fn wait(&mut self, want: u32) -> io::Result<bool> {
        let Some(limit) = &self.wait_limit else {
            return self.enter(want).map(|_| true);
        };
        let args = types::SubmitArgs::new().timespec(limit);
        loop {
            match self.ring.submitter().submit_with_args(want as usize, &args) {
                Ok(n) => {
                    self.taken(n);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => return Ok(false),
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) => {
                    return Ok(true)
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Hand at most `max` completions from the completion queue to `on_complete`.
    #[inline]
    fn drain(&mut self, max: u32, on_complete: &mut impl FnMut(u32, i64)) -> u32 {
        let mut n = 0;
        for cqe in self.ring.completion().take(max as usize) {
            let slot = cqe.user_data() as u32;
            self.bufs.give_back(slot);
            on_complete(slot, i64::from(cqe.result()));
            n += 1;
        }
        self.outstanding -= n;
        n
    }
}

impl IoRing for Uring {
    fn notes(&self) -> &[String] {
        &self.notes
    }

    #[inline]
    fn prep_read(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()> {
        self.prep(false, slot, file, offset, len)
    }

    #[inline]
    fn set_ioprio(&mut self, ioprio: u16) {
        self.ioprio = ioprio;
    }

    #[inline]
    fn prep_write(&mut self, slot: u32, file: u32, offset: u64, len: u32) -> io::Result<()> {
        self.prep(true, slot, file, offset, len)
    }

    fn submit(&mut self) -> io::Result<u32> {
        if self.unsubmitted == 0 {
            return Ok(0);
        }
        self.enter(0)
    }

    fn reap(
        &mut self,
        min: u32,
        max: u32,
        mut on_complete: impl FnMut(u32, i64),
    ) -> io::Result<u32> {
        let min = min.min(self.outstanding).min(max);
        let mut done = self.drain(max, &mut on_complete);
        // A polled ring (IOPOLL) only finds completions when it enters the kernel.
        if done == 0 && min == 0 && self.iopoll && self.outstanding > 0 {
            self.enter(0)?;
            done = self.drain(max, &mut on_complete);
        }
        while done < min {
            let in_time = self.wait(min - done)?;
            done += self.drain(max - done, &mut on_complete);
            if !in_time {
                break;
            }
        }
        Ok(done)
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        // Timed waits need IORING_FEAT_EXT_ARG (Linux 5.11); older kernels wait as long as it takes.
        self.wait_limit = limit
            .filter(|_| self.ring.params().is_feature_ext_arg())
            .map(types::Timespec::from);
    }

    fn in_flight(&self) -> u32 {
        self.outstanding
    }

    fn pending(&self) -> u32 {
        self.unsubmitted
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

impl Drop for Uring {
    fn drop(&mut self) {
        // Closing the ring does not wait for in-flight I/O, so wait here before freeing buffers.
        let mut drained = true;
        while self.outstanding > 0 {
            if self.reap(self.outstanding, u32::MAX, |_, _| {}).is_err() {
                drained = false;
                break;
            }
        }
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

    fn roundtrip(file: Arc<File>, plain: &File, options: UringOptions) -> Vec<String> {
        let mut ring = Uring::new(DEPTH, BS, 4096, &[file], options).unwrap();
        ring_roundtrip(&mut ring, plain);
        ring.notes().to_vec()
    }

    /// A scratch file as (its directory, a buffered descriptor, an O_DIRECT descriptor).
    fn direct_file() -> (tempfile::TempDir, File, Arc<File>) {
        let (dir, plain) = scratch_file(64 * 1024);
        let direct = Arc::new(open_direct(&dir));
        (dir, plain, direct)
    }

    #[test]
    fn buffered_roundtrip_depth_8() {
        let (_dir, file) = scratch_file(0);
        let plain = file.try_clone().unwrap();
        assert!(roundtrip(Arc::new(file), &plain, UringOptions::default()).is_empty());
    }

    #[test]
    fn direct_roundtrip_with_fixed_buffers_and_files() {
        let (_dir, plain, file) = direct_file();
        let options = UringOptions {
            fixed_buffers: true,
            register_files: true,
            ..Default::default()
        };
        assert_eq!(roundtrip(file, &plain, options), Vec::<String>::new());
    }

    #[test]
    fn sqpoll_works_or_falls_back_with_a_note() {
        let (_dir, plain, file) = direct_file();
        let notes = roundtrip(
            file,
            &plain,
            UringOptions {
                sqpoll: true,
                ..Default::default()
            },
        );
        assert!(
            notes.iter().all(|n| n.contains("sqthread_poll")),
            "{notes:?}"
        );
    }

    /// Reaps until `count` I/Os completed, each with a whole block.
    fn reap_all(ring: &mut Uring, count: u32) -> Vec<u32> {
        let mut slots = Vec::new();
        while slots.len() < count as usize {
            ring.reap(1, count, |slot, res| {
                assert_eq!(
                    res, BS as i64,
                    "slot {slot}: expected a whole block, got {res}"
                );
                slots.push(slot);
            })
            .unwrap_or_else(|e| panic!("reap failed after {} completions: {e}", slots.len()));
        }
        slots
    }

    #[test]
    fn a_full_submission_queue_is_submitted_and_waited_for() {
        const SLOTS: u32 = 16;
        for sqpoll in [false, true] {
            let (_dir, _plain, file) = direct_file();
            let options = UringOptions {
                sqpoll,
                ..Default::default()
            };
            // A 4-entry queue under 16 slots fills again and again before the first submit,
            // as the queue of an SQPOLL ring does while its kernel thread lags behind.
            let mut ring = Uring::with_sq_entries(4, SLOTS, BS, 4096, &[file], options).unwrap();
            for slot in 0..SLOTS {
                ring.prep_read(slot, 0, u64::from(slot) * BS as u64, BS as u32)
                    .unwrap_or_else(|e| {
                        panic!("sqpoll={sqpoll}: queueing slot {slot} failed: {e}")
                    });
            }
            ring.submit().unwrap();
            assert_eq!(
                ring.pending(),
                0,
                "sqpoll={sqpoll}: expected nothing left unsubmitted"
            );
            let mut slots = reap_all(&mut ring, SLOTS);
            slots.sort_unstable();
            assert_eq!(
                slots,
                (0..SLOTS).collect::<Vec<_>>(),
                "sqpoll={sqpoll}: expected every slot to complete once"
            );
            assert_eq!(
                ring.in_flight(),
                0,
                "sqpoll={sqpoll}: expected nothing in flight"
            );
        }
    }

    #[test]
    fn sqpoll_ring_reuses_slots_as_fast_as_they_complete() {
        // Cached reads complete at once, often before the kernel thread moves the
        // queue's head past them: a refilled slot then finds the queue full.
        const SLOTS: u32 = 64;
        const IOS: u32 = 20_000;
        let (_dir, file) = scratch_file(u64::from(SLOTS) * BS as u64);
        let options = UringOptions {
            sqpoll: true,
            ..Default::default()
        };
        let mut ring = Uring::new(SLOTS, BS, 4096, &[Arc::new(file)], options).unwrap();
        let prep = |ring: &mut Uring, slot: u32| {
            ring.prep_read(slot, 0, u64::from(slot) * BS as u64, BS as u32)
                .unwrap_or_else(|e| panic!("queueing slot {slot} failed: {e}"));
        };
        for slot in 0..SLOTS {
            prep(&mut ring, slot);
        }
        let (mut issued, mut done) = (SLOTS, 0);
        let mut freed = Vec::with_capacity(SLOTS as usize);
        while done < IOS {
            ring.submit().unwrap();
            ring.reap(1, SLOTS, |slot, res| {
                assert_eq!(
                    res, BS as i64,
                    "slot {slot}: expected a whole block, got {res}"
                );
                freed.push(slot);
            })
            .unwrap();
            done += freed.len() as u32;
            for slot in freed.drain(..) {
                if issued < IOS {
                    prep(&mut ring, slot);
                    issued += 1;
                }
            }
        }
        assert_eq!(done, IOS, "expected {IOS} completions, got {done}");
        assert_eq!(ring.in_flight(), 0, "expected nothing in flight");
    }

    #[test]
    fn iopoll_ring_reports_every_completion() {
        // On a device without poll queues the I/Os may fail (EOPNOTSUPP); they must still complete.
        let (_dir, _plain, file) = direct_file();
        let options = UringOptions {
            iopoll: true,
            ..Default::default()
        };
        let mut ring = Uring::new(DEPTH, BS, 4096, &[file], options).unwrap();
        for slot in 0..DEPTH {
            ring.prep_read(slot, 0, u64::from(slot) * BS as u64, BS as u32)
                .unwrap();
        }
        ring.submit().unwrap();
        let mut reaped = 0;
        while reaped < DEPTH {
            reaped += ring.reap(0, DEPTH, |_, _| {}).unwrap();
        }
        assert_eq!(ring.in_flight(), 0);
    }

    #[test]
    fn io_errors_are_completions() {
        let (dir, _file) = scratch_file(4096);
        let read_only = Arc::new(File::open(dir.path().join("data")).unwrap());
        let mut ring = Uring::new(2, BS, 4096, &[read_only], UringOptions::default()).unwrap();
        ring.prep_write(0, 0, 0, BS as u32).unwrap();
        ring.submit().unwrap();
        let mut results = Vec::new();
        ring.reap(1, 2, |slot, res| results.push((slot, res)))
            .unwrap();
        assert_eq!(results, [(0, -i64::from(libc::EBADF))]);
    }

    #[test]
    fn a_wait_limit_ends_a_reap_that_nothing_completes() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let reader = Arc::new(File::from(std::os::fd::OwnedFd::from(reader)));
        let mut ring = Uring::new(1, 4096, 4096, &[reader], UringOptions::default()).unwrap();
        if !ring.ring.params().is_feature_ext_arg() {
            eprintln!("skipped: this kernel has no timed io_uring waits");
            return;
        }
        ring.set_wait_limit(Some(Duration::from_millis(20)));
        // A read of an empty pipe completes only once something is written.
        ring.prep_read(0, 0, 0, 1).unwrap();
        ring.submit().unwrap();
        let started = std::time::Instant::now();
        assert_eq!(
            ring.reap(1, 1, |_, _| panic!("nothing was written"))
                .unwrap(),
            0
        );
        assert!(started.elapsed() >= Duration::from_millis(20));
        std::io::Write::write_all(&mut writer, b"x").unwrap();
        assert_eq!(
            ring.reap(1, 1, |slot, n| assert_eq!((slot, n), (0, 1)))
                .unwrap(),
            1
        );
    }

    #[test]
    fn drop_waits_for_in_flight_io() {
        let (_dir, _plain, file) = direct_file();
        let ring = Uring::new(DEPTH, BS, 4096, &[file], UringOptions::default()).unwrap();
        drop_with_reads_in_flight(ring);
    }

    #[test]
    #[should_panic(expected = "in flight")]
    fn busy_slot_cannot_be_borrowed() {
        let (_dir, file) = scratch_file(4096);
        let mut ring = Uring::new(1, BS, 4096, &[Arc::new(file)], UringOptions::default()).unwrap();
        ring.prep_read(0, 0, 0, BS as u32).unwrap();
        ring.slot_mut(0);
    }

    #[test]
    fn each_io_carries_its_priority_to_the_kernel() {
        let (_dir, file) = scratch_file(BS as u64);
        let mut ring = Uring::new(1, BS, 4096, &[Arc::new(file)], UringOptions::default()).unwrap();
        // idle class (allowed to anyone), an unknown class 7, then the process's own again
        let results = reads_with_priorities(&mut ring, &[ioprio(3, 0), ioprio(7, 0), 0]);
        assert_eq!(
            results,
            [BS as i64, -i64::from(libc::EINVAL), BS as i64],
            "expected the idle-class read to pass, class 7 to be refused (EINVAL), the plain read to pass"
        );
    }
}
