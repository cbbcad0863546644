//! `psync`: pread/pwrite, one syscall per I/O, no shared file position.

use super::blocking::{Blocking, Syscalls};
use crate::job::spec::EngineSpec;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

pub(crate) struct Pread;

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

pub(crate) type Psync = Blocking<Pread>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_direct, write_to_read_only_result};
    use crate::job::spec::EngineKind;

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
        const EBADF: i64 = 9;
        assert_eq!(
            write_to_read_only_result::<Psync>(EngineKind::Psync),
            -EBADF,
            "expected a write through a read-only descriptor to complete with -EBADF"
        );
    }
}
