//! The shared body of the asynchronous engines (libaio, io_uring, posixaio): `queue` prepares,
//! `commit` submits, `reap` reports. Each engine file only says how to open its ring.

use super::{sync_file, trim_is_not_queued, Completion, Engine, EngineSetup, IoRequest, Queued};
use crate::job::spec::Ddir;
use iolens_sys::IoRing;
use std::fs::File;
use std::io;
use std::sync::Arc;

/// A ring that can be built from an engine setup.
pub(crate) trait OpenRing: IoRing + Sized + Send + 'static {
    fn open_ring(setup: &EngineSetup) -> io::Result<Self>;
    /// fsync (or fdatasync) `files[file]` with nothing in flight; by default fsync(2) itself.
    fn sync_file(&mut self, files: &[Arc<File>], file: u32, datasync: bool) -> io::Result<()> {
        sync_file(&files[file as usize], datasync)
    }
}

pub(crate) struct RingEngine<R> {
    ring: R,
    files: Vec<Arc<File>>,
}

impl<R: OpenRing> Engine for RingEngine<R> {
    fn open(setup: &EngineSetup) -> io::Result<Self> {
        Ok(Self {
            ring: R::open_ring(setup)?,
            files: setup.files.to_vec(),
        })
    }

    fn notes(&self) -> Vec<String> {
        self.ring.notes().to_vec()
    }

    #[inline]
    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.ring.slot_mut(slot)
    }

    #[inline]
    fn queue(&mut self, req: &IoRequest) -> io::Result<Queued> {
        match req.ddir {
            Ddir::Read => self
                .ring
                .prep_read(req.slot, req.file, req.offset, req.len)?,
            Ddir::Write => self
                .ring
                .prep_write(req.slot, req.file, req.offset, req.len)?,
            Ddir::Trim => return Err(trim_is_not_queued()),
        }
        Ok(Queued::Queued)
    }

    #[inline]
    fn commit(&mut self) -> io::Result<()> {
        self.ring.submit().map(drop)
    }

    #[inline]
    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        // I/Os the kernel had no room for at commit (EAGAIN) go now, or nothing would complete them.
        if self.ring.pending() > 0 {
            self.ring.submit()?;
        }
        self.ring.reap(min, max, |slot, result| {
            out.push(Completion { slot, result })
        })?;
        Ok(())
    }

    fn set_wait_limit(&mut self, limit: Option<std::time::Duration>) {
        self.ring.set_wait_limit(limit);
    }

    #[inline]
    fn set_ioprio(&mut self, ioprio: u16) {
        self.ring.set_ioprio(ioprio);
    }

    fn sync_file(&mut self, file: u32, datasync: bool) -> io::Result<()> {
        self.ring.sync_file(&self.files, file, datasync)
    }
}
