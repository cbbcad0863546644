//! `pvsync2`: preadv2/pwritev2 with a single iovec; `hipri` asks for polled completion.

use super::blocking::{Blocking, Syscalls};
use crate::job::spec::EngineSpec;
use std::fs::File;
use std::io;

pub(crate) struct Preadv2 {
    hipri: bool,
}

impl Syscalls for Preadv2 {
    fn new(spec: &EngineSpec, _files: usize) -> Self {
        Preadv2 {
            hipri: spec.pvsync2.hipri,
        }
    }

    #[inline]
    fn read(
        &mut self,
        target: &File,
        _file: usize,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        iolens_sys::preadv2(target, buf, offset, self.hipri)
    }

    #[inline]
    fn write(&mut self, target: &File, _file: usize, buf: &[u8], offset: u64) -> io::Result<usize> {
        iolens_sys::pwritev2(target, buf, offset, self.hipri)
    }
}

pub(crate) type Pvsync2 = Blocking<Preadv2>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_direct, spec};
    use crate::job::spec::EngineKind;

    #[test]
    fn buffered_roundtrip() {
        roundtrip::<Pvsync2>(EngineKind::Pvsync2, 1);
    }

    #[test]
    fn direct_roundtrip() {
        roundtrip_direct::<Pvsync2>(EngineKind::Pvsync2, 1);
    }

    #[test]
    fn hipri_comes_from_the_spec() {
        let mut hipri = spec(EngineKind::Pvsync2);
        hipri.pvsync2.hipri = true;
        assert!(Preadv2::new(&hipri, 1).hipri);
        assert!(!Preadv2::new(&spec(EngineKind::Pvsync2), 1).hipri);
    }
}
