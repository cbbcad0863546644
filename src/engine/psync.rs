//! `psync`: pread/pwrite, one syscall per I/O, no shared file position.

use super::blocking::{Blocking, Syscalls};
use crate::job::spec::EngineSpec;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

pub struct Pread;

impl Syscalls for Pread {
    fn new(_spec: &EngineSpec, _files: usize) -> Self {
        Pread
    }

    #[inline]
    fn read(
        &mut self,
        target: &File,
        _file: usize,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        target.read_at(buf, offset)
    }

    #[inline]
    fn write(&mut self, target: &File, _file: usize, buf: &[u8], offset: u64) -> io::Result<usize> {
        target.write_at(buf, offset)
    }
}

pub type Psync = Blocking<Pread>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_direct, scratch_file, setup, spec};
    use crate::engine::{Engine, IoRequest, Queued};
    use crate::job::spec::{Ddir, EngineKind};
    use std::sync::Arc;

    #[test]
    fn buffered_roundtrip() {
        roundtrip::<Psync>(EngineKind::Psync, 1);
    }

    #[test]
    fn direct_roundtrip() {
        roundtrip_direct::<Psync>(EngineKind::Psync, 1);
    }

    #[test]
    fn failed_io_is_a_negative_errno_result() {
        let (dir, _file) = scratch_file(4096);
        let read_only = [Arc::new(File::open(dir.path().join("data")).unwrap())];
        let spec = spec(EngineKind::Psync, 1);
        let mut engine = Psync::open(&setup(&spec, &read_only, &[4096], 1)).unwrap();
        let write = IoRequest {
            slot: 0,
            ddir: Ddir::Write,
            file: 0,
            offset: 0,
            len: 4096,
        };
        const EBADF: i64 = 9;
        assert_eq!(engine.queue(&write).unwrap(), Queued::Completed(-EBADF));
    }
}
