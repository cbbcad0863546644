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

pub type PosixAio = RingEngine<Requests>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{
        roundtrip, roundtrip_direct, run_batch, scratch_file, setup, spec,
    };
    use crate::engine::{Completion, Engine, IoRequest};
    use crate::job::spec::{Ddir, EngineKind};

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
        let (dir, _file) = scratch_file(4096);
        let read_only = [Arc::new(File::open(dir.path().join("data")).unwrap())];
        let spec = spec(EngineKind::Posixaio, 1);
        let mut engine = PosixAio::open(&setup(&spec, &read_only, &[4096], 1)).unwrap();
        let write = IoRequest {
            slot: 0,
            ddir: Ddir::Write,
            file: 0,
            offset: 0,
            len: 4096,
        };
        assert_eq!(
            run_batch(&mut engine, &[write]),
            [Completion {
                slot: 0,
                result: -i64::from(libc::EBADF)
            }],
            "expected the write to a read-only descriptor to complete with -EBADF"
        );
    }
}
