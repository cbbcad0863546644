//! `io_uring`: honours `sqthread_poll`, `hipri` (IOPOLL), `fixedbufs` and
//! `registerfiles`; whatever the kernel refuses falls back and shows in `notes()`.

use super::ring::{OpenRing, RingEngine};
use super::EngineSetup;
use iolens_sys::{Uring, UringOptions};
use std::io;

impl OpenRing for Uring {
    fn open_ring(setup: &EngineSetup) -> io::Result<Self> {
        let own = &setup.spec.io_uring;
        let options = UringOptions {
            sqpoll: own.sqthread_poll,
            iopoll: own.hipri,
            fixed_buffers: own.fixedbufs,
            register_files: own.registerfiles,
        };
        Uring::new(
            setup.slots,
            setup.slot_size,
            setup.align,
            setup.files,
            options,
        )
    }
}

pub(crate) type IoUring = RingEngine<Uring>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_with, spec};
    use crate::job::spec::EngineKind;

    #[test]
    fn buffered_roundtrip_depth_8() {
        roundtrip::<IoUring>(EngineKind::IoUring, 8);
    }

    #[test]
    fn direct_roundtrip_with_fixed_buffers_and_registered_files() {
        let mut spec = spec(EngineKind::IoUring);
        spec.io_uring.fixedbufs = true;
        spec.io_uring.registerfiles = true;
        assert_eq!(
            roundtrip_with::<IoUring>(&spec, 8, true),
            Vec::<String>::new()
        );
    }

    #[test]
    fn sqthread_poll_works_or_falls_back_with_a_note() {
        let mut spec = spec(EngineKind::IoUring);
        spec.io_uring.sqthread_poll = true;
        let notes = roundtrip_with::<IoUring>(&spec, 8, true);
        assert!(
            notes.iter().all(|n| n.contains("sqthread_poll")),
            "{notes:?}"
        );
    }
}
