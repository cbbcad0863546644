//! I/O engines. Each engine turns `IoRequest`s into real syscalls; the runner
//! times every I/O the same way around `queue`/`commit`/`reap`, so engines never
//! read a clock.
//!
//! Every engine owns the buffers of its in-flight I/Os (one slot per queue
//! entry), so nothing above it can free memory the kernel still writes to.

use crate::job::spec::{Ddir, EngineKind, EngineSpec};
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// One I/O to issue. `slot` names the buffer (0..depth) and comes back in its `Completion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IoRequest {
    pub slot: u32,
    pub ddir: Ddir,
    /// Index into `EngineSetup::files`.
    pub file: u32,
    pub offset: u64,
    pub len: u32,
}

/// What `queue` did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queued {
    /// Done synchronously: bytes transferred, or `-errno`.
    Completed(i64),
    /// Accepted; it completes after `commit`, reported by `reap`.
    Queued,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    pub slot: u32,
    /// Bytes transferred, or `-errno`.
    pub result: i64,
}

/// Everything an engine needs to start. Targets are opened by `fileset`, once per run.
pub(crate) struct EngineSetup<'a> {
    pub spec: &'a EngineSpec,
    pub files: &'a [Arc<File>],
    /// The name of each file in `files` (what the file operation engines work on).
    pub paths: &'a [PathBuf],
    /// Size of each file in `files` (for engines that map them).
    pub file_sizes: &'a [u64],
    /// Number of buffer slots (the queue depth).
    pub slots: u32,
    /// Bytes per slot (the largest block size of the job).
    pub slot_size: usize,
    /// Buffer address alignment (page size; at least the device's DIO memory alignment).
    pub align: usize,
    /// Writes must reach stable storage per I/O (O_SYNC/O_DSYNC); used by mmap (msync).
    pub sync_writes: bool,
    /// The readahead advice of `fadvise_hint` (None: none); mmap gives it to its
    /// mappings too, as fio does, since page faults ignore the descriptor's advice.
    pub advice: Option<iolens_sys::fd::Access>,
}

/// `Send`: with `io_submit_mode=offload` an engine travels to a submit thread with its I/O.
pub(crate) trait Engine: Sized + Send + 'static {
    fn open(setup: &EngineSetup) -> io::Result<Self>;
    /// Things the engine had to change from what was asked ("sqthread_poll refused: EPERM, using normal submission").
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The buffer of `slot`, to fill before a write or inspect after a read. Never a slot in flight.
    fn buffer(&mut self, slot: u32) -> &mut [u8];
    fn queue(&mut self, req: &IoRequest) -> io::Result<Queued>;
    /// Submit everything queued since the last commit. Synchronous engines
    /// complete every I/O inside `queue`, so by default there is nothing to submit.
    #[inline]
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Wait for at least `min` completions (0 = don't wait), append at most `max` to `out`.
    /// Synchronous engines never have any outstanding, so by default there is nothing to reap.
    #[inline]
    fn reap(&mut self, _min: u32, _max: u32, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }
    /// Let `reap` return after at most `limit` even with fewer than `min`
    /// completions. Engines that never wait in `reap` ignore it.
    fn set_wait_limit(&mut self, _limit: Option<std::time::Duration>) {}
    /// The I/O priority (class << 13 | level) of the I/Os queued from now on; engines
    /// without per-I/O priorities ignore it (the resolver allows `cmdprio_*` only on those with).
    fn set_ioprio(&mut self, _ioprio: u16) {}
    /// fsync (or fdatasync) one file. The runner calls it only with nothing in flight.
    fn sync_file(&mut self, file: u32, datasync: bool) -> io::Result<()>;
    /// Discard `len` bytes at `offset` of `target`, synchronously. Trims are never
    /// queued: the runner drains the queue, then calls this with nothing in flight.
    fn trim(&mut self, target: &File, method: TrimMethod, offset: u64, len: u64) -> io::Result<()> {
        method.discard(target, offset, len)
    }
}

/// How a trim discards a range of one target; chosen once per file, before the first I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrimMethod {
    /// A file: `fallocate(PUNCH_HOLE | KEEP_SIZE)` frees its blocks and keeps its length.
    PunchHole,
    /// A block device: `BLKDISCARD`.
    BlkDiscard,
}

impl TrimMethod {
    pub(crate) fn of(target: &File) -> io::Result<Self> {
        Ok(if iolens_sys::fd::is_block_device(target)? {
            Self::BlkDiscard
        } else {
            Self::PunchHole
        })
    }

    pub(crate) fn discard(self, target: &File, offset: u64, len: u64) -> io::Result<()> {
        match self {
            Self::PunchHole => iolens_sys::fd::punch_hole(target, offset, len),
            Self::BlkDiscard => iolens_sys::fd::blk_discard(target, offset, len),
        }
    }

    /// Why a target refuses trims, for an `errno` that says it never takes them
    /// (None for an error of this one trim).
    pub(crate) fn refusal(self, errno: i32) -> Option<&'static str> {
        if errno != libc::EOPNOTSUPP && errno != libc::ENOTTY {
            return None;
        }
        Some(match self {
            Self::PunchHole => "its filesystem cannot punch holes (fallocate PUNCH_HOLE)",
            Self::BlkDiscard => "the device does not support discard (BLKDISCARD)",
        })
    }
}

/// `queue` takes reads and writes; a trim reaching it is a runner bug.
#[cold]
fn trim_is_not_queued() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "trims are issued through Engine::trim, never queued",
    )
}

// One module per engine, named as in fio. `blocking` and `ring` hold the bodies the
// synchronous and the asynchronous engines share.
pub(crate) mod blocking;
pub(crate) mod fileoperations;
pub(crate) mod io_uring;
pub(crate) mod libaio;
pub(crate) mod mmap;
pub(crate) mod null;
pub(crate) mod posixaio;
pub(crate) mod psync;
pub(crate) mod pvsync;
pub(crate) mod pvsync2;
pub(crate) mod ring;
pub(crate) mod sync;

#[cfg(test)]
pub(crate) mod test_support;

/// Something done with an engine's type: `with_engine` picks the type for an `EngineKind`
/// and calls `run` with it, so the caller is monomorphised per engine.
pub(crate) trait ForEngine {
    type Output;
    fn run<E: Engine>(self) -> Self::Output;
}

/// The one match from an `EngineKind` (a row of `EngineKind::ALL`) to its engine type.
pub(crate) fn with_engine<F: ForEngine>(kind: EngineKind, f: F) -> F::Output {
    match kind {
        EngineKind::Sync => f.run::<sync::Sync>(),
        EngineKind::Psync => f.run::<psync::Psync>(),
        EngineKind::Pvsync => f.run::<pvsync::Pvsync>(),
        EngineKind::Pvsync2 => f.run::<pvsync2::Pvsync2>(),
        EngineKind::Libaio => f.run::<libaio::Libaio>(),
        EngineKind::IoUring => f.run::<io_uring::IoUring>(),
        EngineKind::Posixaio => f.run::<posixaio::PosixAio>(),
        EngineKind::Mmap => f.run::<mmap::Mmap>(),
        EngineKind::Null => f.run::<null::Null>(),
        EngineKind::Filecreate
        | EngineKind::Filestat
        | EngineKind::Filedelete
        | EngineKind::Dircreate
        | EngineKind::Dirstat
        | EngineKind::Dirdelete => f.run::<fileoperations::FileOps>(),
    }
}

/// An I/O result for a completion: bytes transferred, or `-errno`.
#[inline]
fn io_result(result: io::Result<usize>) -> i64 {
    match result {
        Ok(bytes) => bytes as i64,
        Err(e) => -i64::from(e.raw_os_error().unwrap_or(EIO)),
    }
}

/// Linux's EIO, for an error that carries no errno (not expected from a syscall).
const EIO: i32 = 5;

fn sync_file(file: &File, datasync: bool) -> io::Result<()> {
    if datasync {
        file.sync_data()
    } else {
        file.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{scratch_file, setup, spec};
    use super::*;
    use std::io::Seek;
    use std::os::unix::fs::FileExt;

    /// What one engine did with one 4 KiB write at 8 KiB into a scratch file.
    #[derive(Debug, PartialEq, Eq)]
    struct Observed {
        /// `queue` left the write in flight instead of completing it.
        queued: bool,
        /// The shared descriptor's file position afterwards.
        position: u64,
        /// The written bytes are in the file.
        stored: bool,
    }

    /// Opens engine `E` at the depth the worker gives it (4 if it keeps several I/Os in
    /// flight, else 1) and writes one block.
    struct WriteOnce(EngineKind);

    impl ForEngine for WriteOnce {
        type Output = Observed;
        fn run<E: Engine>(self) -> Observed {
            const BS: u32 = 4096;
            const OFFSET: u64 = 8192;
            let depth = if self.0.is_async() { 4 } else { 1 };
            let spec = spec(self.0);
            let (_dir, plain) = scratch_file(16 * u64::from(BS));
            let files = [Arc::new(plain.try_clone().unwrap())];
            let sizes = [16 * u64::from(BS)];
            let mut engine = E::open(&setup(&spec, &files, &sizes, depth)).unwrap();
            engine.buffer(0).fill(0xa5);
            let req = IoRequest {
                slot: 0,
                ddir: Ddir::Write,
                file: 0,
                offset: OFFSET,
                len: BS,
            };
            let (queued, result) = match engine.queue(&req).unwrap() {
                Queued::Completed(result) => (false, result),
                Queued::Queued => {
                    engine.commit().unwrap();
                    let mut done = Vec::new();
                    while done.is_empty() {
                        engine.reap(1, 1, &mut done).unwrap();
                    }
                    (true, done[0].result)
                }
            };
            assert_eq!(
                result,
                i64::from(BS),
                "{}: the write's result",
                self.0.name()
            );
            engine.sync_file(0, false).unwrap();
            let mut on_disk = vec![0; BS as usize];
            plain.read_exact_at(&mut on_disk, OFFSET).unwrap();
            Observed {
                queued,
                position: (&plain).stream_position().unwrap(),
                stored: on_disk.iter().all(|&b| b == 0xa5),
            }
        }
    }

    #[test]
    fn every_engine_does_what_its_row_says() {
        // The file operation engines move no data (their own tests, in fileoperations).
        for row in EngineKind::ALL.iter().filter(|row| row.file_op.is_none()) {
            let expected = Observed {
                queued: row.is_async,
                position: if row.uses_file_position {
                    8192 + 4096
                } else {
                    0
                },
                stored: !row.diskless,
            };
            assert_eq!(
                with_engine(row.kind, WriteOnce(row.kind)),
                expected,
                "ioengine={}: expected what its row of EngineKind::ALL says",
                row.name
            );
        }
    }
}
