//! Memory shared between processes: an anonymous memory file (`memfd`) mapped
//! `MAP_SHARED`, seen as a slice of atomics. The parent creates it; a child
//! process opens it again through `/proc/<parent pid>/fd/<fd>` and maps the
//! same pages, so a relaxed store on one side is a load away on the other.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

const WORD: usize = std::mem::size_of::<AtomicU64>();

/// A shared, read-write mapping of a memory file holding `len` `AtomicU64`s;
/// unmapped on drop. Every process that maps it must touch it only through
/// atomics, which is all this type hands out.
pub struct SharedRegion {
    base: NonNull<AtomicU64>,
    len: usize,
    /// Keeps the memory file open, so `path` names it while the region lives.
    file: File,
}

// SAFETY: the region owns its mapping like a Box<[AtomicU64]> owns its heap memory.
unsafe impl Send for SharedRegion {}
// SAFETY: `&SharedRegion` only hands out `&[AtomicU64]`, which is Sync.
unsafe impl Sync for SharedRegion {}

impl SharedRegion {
    /// A new region of `len` zeroed words in a memory file called `name`
    /// (shown in `/proc/<pid>/fd` and `/proc/<pid>/maps`).
    pub fn create(name: &str, len: usize) -> io::Result<Self> {
        let name =
            CString::new(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // CLOEXEC: a child reaches the region by path, never by inheriting the descriptor.
        // SAFETY: `name` is a valid NUL-terminated string for the duration of the call.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: memfd_create just returned this descriptor and nothing else owns it.
        let file = unsafe { File::from_raw_fd(fd) };
        // A fresh memory file reads as zeros up to its length, which is all-zero counters.
        file.set_len(byte_len(len)? as u64)?;
        Self::map(file, len)
    }

    /// Map an existing region of at least `len` words by path (such as another
    /// process's [`SharedRegion::path`]).
    pub fn open(path: &Path, len: usize) -> io::Result<Self> {
        let file = File::options().read(true).write(true).open(path)?;
        let size = file.metadata()?.len();
        // Touching a mapped page past the end of the file would raise SIGBUS.
        if size < byte_len(len)? as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: {size} bytes, too small for {len} counters",
                    path.display()
                ),
            ));
        }
        Self::map(file, len)
    }

    fn map(file: File, len: usize) -> io::Result<Self> {
        let bytes = byte_len(len)?;
        // SAFETY: a fresh shared mapping chosen by the kernel (addr NULL) of an open fd whose
        // file holds at least `bytes`; it aliases no Rust memory.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base =
            NonNull::new(addr.cast()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Self { base, len, file })
    }

    /// The path another process of the same user opens to map this region.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            self.file.as_raw_fd()
        ))
    }

    /// The shared words. The mapping starts on a page boundary, so word `i`
    /// sits at byte `8 * i` of a page-aligned block (cache-line layouts hold).
    #[inline]
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page aligned (more than AtomicU64's alignment), readable and
        // writable for `len` words, and stays mapped while `&self` lives. AtomicU64 has u64's
        // layout and every bit pattern is valid; other mappings of the file only ever use
        // atomic accesses too, and interior mutability makes a shared reference sound.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }
}

/// Bytes of `len` words; zero is refused (mmap cannot map an empty range).
fn byte_len(len: usize) -> io::Result<usize> {
    len.checked_mul(WORD).filter(|&b| b > 0).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot share {len} counters"),
        )
    })
}

impl Drop for SharedRegion {
    fn drop(&mut self) {
        // SAFETY: base..+len words is exactly the region mmap returned; nothing borrows it any more.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len * WORD) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn a_second_mapping_by_path_sees_the_same_words() {
        let parent = SharedRegion::create("iolens-test", 32).unwrap();
        assert!(parent.words().iter().all(|w| w.load(Relaxed) == 0));
        assert_eq!(parent.words().as_ptr() as usize % crate::os::page_size(), 0);

        let child = SharedRegion::open(&parent.path(), 32).unwrap();
        assert_ne!(parent.words().as_ptr(), child.words().as_ptr());
        child.words()[31].store(7, Relaxed);
        assert_eq!(parent.words()[31].load(Relaxed), 7);
        parent.words()[0].store(u64::MAX, Relaxed);
        assert_eq!(child.words()[0].load(Relaxed), u64::MAX);

        drop(parent);
        // The pages live on while any mapping of them does.
        assert_eq!(child.words()[31].load(Relaxed), 7);
    }

    #[test]
    fn opening_more_than_was_created_is_refused() {
        let region = SharedRegion::create("iolens-test", 4).unwrap();
        let err = SharedRegion::open(&region.path(), 5).err().unwrap();
        assert!(
            err.to_string().contains("too small for 5 counters"),
            "{err}"
        );
        assert!(SharedRegion::open(&region.path(), 4).is_ok());
    }

    #[test]
    fn an_empty_region_is_a_clear_error() {
        let err = SharedRegion::create("iolens-test", 0).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(SharedRegion::create("bad\0name", 1).is_err());
    }
}
