//! Every syscall and every `unsafe` block of iolens, behind small safe owning types.
//!
//! The rings ([`AioRing`], [`Uring`]) own the buffers of their in-flight I/Os, so code
//! above this crate cannot free memory the kernel still reads or writes.

pub mod aio;
pub mod buf;
pub mod cachestat;
pub mod clock;
pub mod fd;
pub mod mmap;
pub mod os;
pub mod ring;
pub mod sched;
pub mod shm;
pub mod uring;

#[cfg(test)]
mod test_support;

pub use aio::AioRing;
pub use buf::{AlignedBuf, Slots};
pub use cachestat::{cachestat, CacheStat};
pub use clock::FastClock;
pub use fd::{
    blk_flush_buffers, blk_logical_sector, blk_physical_sector, blk_size_bytes, dio_alignment,
    fadvise_dontneed, is_block_device, open_flags, preadv, preadv2, pwritev, pwritev2, DioAlign,
};
pub use mmap::Mapping;
pub use os::{clock_ticks_per_sec, gettid, page_size, process_rusage, thread_rusage, Rusage};
pub use ring::IoRing;
pub use shm::SharedRegion;
pub use uring::{Uring, UringOptions};
