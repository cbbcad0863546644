//! Every syscall and every `unsafe` block of iolens, behind small safe owning types.
//!
//! The rings ([`AioRing`], [`Uring`]) own the buffers of their in-flight I/Os, so code
//! above this crate cannot free memory the kernel still reads or writes. Everything
//! else is a plain function over a borrowed file descriptor: positioned I/O
//! ([`preadv`], [`pwritev`]), block-device facts ([`blk_size_bytes`],
//! [`blk_logical_sector`]), page-cache state ([`cachestat()`]), CPU usage
//! ([`thread_rusage`]) and a cheap clock ([`FastClock`]).
//!
//! A write and a read back through a page-aligned buffer, then what the page cache
//! holds of the file:
//!
//! ```
//! use iolens_sys::{cachestat, page_size, preadv, pwritev, AlignedBuf};
//!
//! # fn main() -> std::io::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let file = std::fs::OpenOptions::new()
//!     .read(true)
//!     .write(true)
//!     .create(true)
//!     .open(dir.path().join("data"))?;
//!
//! let mut block = AlignedBuf::new(page_size(), page_size())?;
//! block.fill(0xa5);
//! assert_eq!(pwritev(&file, &block, 0)?, page_size());
//!
//! let mut back = AlignedBuf::new(page_size(), page_size())?;
//! assert_eq!(preadv(&file, &mut back, 0)?, page_size());
//! assert!(back.iter().all(|&byte| byte == 0xa5));
//!
//! // cachestat(2) needs Linux 6.5; older kernels answer ENOSYS.
//! if let Ok(pages) = cachestat(&file, 0, page_size() as u64) {
//!     assert_eq!(pages.cache, 1, "the page just written is cached");
//! }
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod aio;
pub mod beneath;
pub mod buf;
pub mod cachestat;
pub mod clock;
pub mod fd;
pub mod mmap;
pub mod names;
pub mod notify;
pub mod os;
pub mod posixaio;
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
pub use notify::{OpenAlarm, OpenEvent, OpenWatch};
pub use os::{clock_ticks_per_sec, gettid, page_size, process_rusage, thread_rusage, Rusage};
pub use posixaio::PosixAio;
pub use ring::IoRing;
pub use shm::SharedRegion;
pub use uring::{Uring, UringOptions};
