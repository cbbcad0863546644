//! `libaio`: Linux native AIO (io_submit/io_getevents), without libaio.so.
//! Asynchronous only for `O_DIRECT` files; buffered I/O completes inside io_submit.

use super::ring::{OpenRing, RingEngine};
use super::EngineSetup;
use iolens_sys::AioRing;
use std::io;

impl OpenRing for AioRing {
    fn open_ring(setup: &EngineSetup) -> io::Result<Self> {
        AioRing::new(setup.slots, setup.slot_size, setup.align, setup.files)
    }
}

pub(crate) type Libaio = RingEngine<AioRing>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_direct};
    use crate::job::spec::EngineKind;

    #[test]
    fn buffered_roundtrip_depth_8() {
        roundtrip::<Libaio>(EngineKind::Libaio, 8);
    }

    #[test]
    fn direct_roundtrip_depth_8() {
        roundtrip_direct::<Libaio>(EngineKind::Libaio, 8);
    }

    #[test]
    fn depth_1_roundtrip() {
        roundtrip_direct::<Libaio>(EngineKind::Libaio, 1);
    }
}
