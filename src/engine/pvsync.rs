//! `pvsync`: preadv/pwritev with a single iovec.

use super::blocking::{Blocking, Syscalls};
use crate::job::spec::EngineSpec;
use std::fs::File;
use std::io;

pub(crate) struct Preadv;

impl Syscalls for Preadv {
    fn new(_spec: &EngineSpec, _files: usize) -> Self {
        Preadv
    }

    #[inline]
    fn read(
        &mut self,
        target: &File,
        _file: usize,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        iolens_sys::preadv(target, buf, offset)
    }

    #[inline]
    fn write(&mut self, target: &File, _file: usize, buf: &[u8], offset: u64) -> io::Result<usize> {
        iolens_sys::pwritev(target, buf, offset)
    }
}

pub(crate) type Pvsync = Blocking<Preadv>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_direct};
    use crate::job::spec::EngineKind;

    #[test]
    fn buffered_roundtrip() {
        roundtrip::<Pvsync>(EngineKind::Pvsync, 1);
    }

    #[test]
    fn direct_roundtrip() {
        roundtrip_direct::<Pvsync>(EngineKind::Pvsync, 1);
    }
}
