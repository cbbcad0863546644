//! The shared body of the blocking engines (sync, psync, pvsync, pvsync2): one syscall
//! per I/O, completed inside `queue`. Each engine file supplies only its syscalls.

use super::{io_result, sync_file, trim_is_not_queued, Engine, EngineSetup, IoRequest, Queued};
use crate::job::spec::{Ddir, EngineSpec};
use iolens_sys::Slots;
use std::fs::File;
use std::io;
use std::sync::Arc;

/// How one blocking engine reads and writes. `file` is the index of `target` in the
/// engine's files, for engines that keep per-file state.
pub(crate) trait Syscalls: Sized + Send + 'static {
    fn new(spec: &EngineSpec, files: usize) -> Self;
    fn read(
        &mut self,
        target: &File,
        file: usize,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize>;
    fn write(&mut self, target: &File, file: usize, buf: &[u8], offset: u64) -> io::Result<usize>;
}

pub(crate) struct Blocking<S> {
    files: Vec<Arc<File>>,
    bufs: Slots,
    syscalls: S,
}

impl<S: Syscalls> Engine for Blocking<S> {
    fn open(setup: &EngineSetup) -> io::Result<Self> {
        Ok(Self {
            files: setup.files.to_vec(),
            bufs: Slots::new(setup.slots, setup.slot_size, setup.align)?,
            syscalls: S::new(setup.spec, setup.files.len()),
        })
    }

    #[inline]
    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    #[inline]
    fn queue(&mut self, req: &IoRequest) -> io::Result<Queued> {
        let file = req.file as usize;
        let target = &self.files[file];
        let buf = &mut self.bufs.slot_mut(req.slot)[..req.len as usize];
        let result = match req.ddir {
            Ddir::Read => self.syscalls.read(target, file, buf, req.offset),
            Ddir::Write => self.syscalls.write(target, file, buf, req.offset),
            Ddir::Trim => return Err(trim_is_not_queued()),
        };
        Ok(Queued::Completed(io_result(result)))
    }

    fn sync_file(&mut self, file: u32, datasync: bool) -> io::Result<()> {
        sync_file(&self.files[file as usize], datasync)
    }
}
