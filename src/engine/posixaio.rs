//! `posixaio`: the C library's POSIX AIO (aio_read/aio_write, completions polled with
//! aio_error and waited for with aio_suspend, fsync through aio_fsync), as fio's engine.

use super::ring::{OpenRing, RingEngine};
use super::EngineSetup;
use iolens_sys::PosixAio as Requests;
use std::fs::File;
use std::io;
use std::sync::Arc;

impl OpenRing for Requests {
    fn open_ring(setup: &EngineSetup) -> io::Result<Self> {
        Requests::new(setup.slots, setup.slot_size, setup.align, setup.files)
    }

    fn sync_file(&mut self, _files: &[Arc<File>], file: u32, datasync: bool) -> io::Result<()> {
        self.fsync(file, datasync)
    }
}

pub(crate) type PosixAio = RingEngine<Requests>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_direct, write_to_read_only_result};
    use crate::job::spec::EngineKind;

    #[test]
    fn buffered_roundtrip_depth_8() {
        roundtrip::<PosixAio>(EngineKind::Posixaio, 8);
    }

    #[test]
    fn direct_roundtrip_depth_8() {
        roundtrip_direct::<PosixAio>(EngineKind::Posixaio, 8);
    }

    #[test]
    fn a_write_to_a_read_only_file_completes_with_ebadf() {
        assert_eq!(
            write_to_read_only_result::<PosixAio>(EngineKind::Posixaio),
            -i64::from(libc::EBADF),
            "expected a write through a read-only descriptor to complete with -EBADF"
        );
    }
}
