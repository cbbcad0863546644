//! Shared memory mappings of file ranges, for the mmap engine.

use crate::fd::Access;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// A `MAP_SHARED` mapping of `len` bytes of a file from `offset`, unmapped on drop.
///
/// Like every file mapping, its contents change if another process writes the file,
/// and touching it after the file was truncated below the range raises SIGBUS.
pub struct Mapping {
    /// Start of the whole mapping (page aligned, may lie before `offset`).
    base: NonNull<u8>,
    /// Bytes between `base` and the requested `offset`.
    lead: usize,
    len: usize,
    writable: bool,
}

// SAFETY: the mapping is owned memory like a Vec<u8>; access goes through & / &mut self.
unsafe impl Send for Mapping {}
// SAFETY: `&Mapping` only hands out `&[u8]`.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Map `len` bytes at `offset`; `writable` needs a file opened for reading and writing.
    pub fn new(file: &File, offset: u64, len: usize, writable: bool) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map an empty range (is the file empty?)",
            ));
        }
        // mmap offsets must be page aligned: map from the page start and skip the lead.
        let lead = (offset % crate::os::page_size() as u64) as usize;
        let map_len = len.checked_add(lead).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "mapping length overflows")
        })?;
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a fresh shared mapping chosen by the kernel (addr NULL) of a borrowed open fd;
        // it aliases no Rust memory.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                prot,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                (offset - lead as u64) as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base =
            NonNull::new(addr.cast()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Self {
            base,
            lead,
            len,
            writable,
        })
    }

    /// Map a whole file of `len` bytes (its size; block devices report 0 in metadata).
    pub fn whole(file: &File, len: u64, writable: bool) -> io::Result<Self> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large to map"))?;
        Self::new(file, 0, len, writable)
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the mapping was made for writing.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The mapped bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: base+lead .. +len lies inside the live mapping, which is readable.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(self.lead), self.len) }
    }

    /// Panics on a read-only mapping (a write there would fault).
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        assert!(self.writable, "write access to a read-only mapping");
        // SAFETY: as in as_slice; the mapping is writable and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(self.lead), self.len) }
    }

    /// Pages of the mapping that are in the page cache (`mincore`); `scratch` is
    /// reused between calls to hold one byte per page. Touches no page itself.
    pub fn resident_pages(&self, scratch: &mut Vec<u8>) -> io::Result<u64> {
        let map_len = self.lead + self.len;
        let pages = map_len.div_ceil(crate::os::page_size());
        scratch.clear();
        scratch.resize(pages, 0);
        // SAFETY: base..base+map_len is the live mapping (page aligned base); the kernel writes
        // one byte per page into `scratch`, which holds exactly `pages` bytes.
        let ret =
            unsafe { libc::mincore(self.base.as_ptr().cast(), map_len, scratch.as_mut_ptr()) };
        if ret != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(scratch.iter().filter(|&&b| b & 1 != 0).count() as u64)
    }

    /// Tell the kernel how the mapping will be read (`posix_madvise`). Page faults
    /// ignore the descriptor's fadvise: without this, each fault of a random read
    /// also reads around it (tens of pages).
    pub fn advise(&self, access: Access) -> io::Result<()> {
        let advice = match access {
            Access::Normal => libc::POSIX_MADV_NORMAL,
            Access::Sequential => libc::POSIX_MADV_SEQUENTIAL,
            Access::Random => libc::POSIX_MADV_RANDOM,
        };
        // SAFETY: base..base+lead+len is exactly the live mapping (page-aligned base);
        // the advice changes no memory contents.
        let err =
            unsafe { libc::posix_madvise(self.base.as_ptr().cast(), self.lead + self.len, advice) };
        match err {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Write `len` bytes from `offset` (relative to the mapping) back to the file and wait (MS_SYNC).
    pub fn msync(&self, offset: usize, len: usize) -> io::Result<()> {
        let end = offset
            .checked_add(len)
            .filter(|&end| end <= self.len)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("msync range {offset}+{len} outside mapping of {}", self.len),
                )
            })?;
        // msync wants a page-aligned start: extend the range down to the page boundary.
        let start = self.lead + offset;
        let aligned_start = start - start % crate::os::page_size();
        let sync_len = self.lead + end - aligned_start;
        // SAFETY: the range lies within the live mapping; msync reads no Rust memory.
        let ret = unsafe {
            libc::msync(
                self.base.as_ptr().add(aligned_start).cast(),
                sync_len,
                libc::MS_SYNC,
            )
        };
        if ret != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: base/lead+len is exactly the region mmap returned; nothing borrows it any more.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.lead + self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::scratch_file;
    use std::os::unix::fs::FileExt;

    #[test]
    fn writes_through_the_mapping_reach_the_file() {
        let (_dir, file) = scratch_file(3 * 4096);
        let mut map = Mapping::whole(&file, 3 * 4096, true).unwrap();
        map.as_mut_slice()[5000..5005].copy_from_slice(b"hello");
        map.msync(5000, 5).unwrap();
        let mut back = [0; 5];
        file.read_exact_at(&mut back, 5000).unwrap();
        assert_eq!(&back, b"hello");
    }

    #[test]
    fn unaligned_offset_maps_the_right_bytes() {
        let (_dir, file) = scratch_file(0);
        let data: Vec<u8> = (0..3 * 4096).map(|i| (i % 251) as u8).collect();
        file.write_all_at(&data, 0).unwrap();
        let map = Mapping::new(&file, 4100, 5000, false).unwrap();
        assert_eq!(map.as_slice(), &data[4100..9100]);
        assert!(!map.is_writable());
        map.msync(10, 4000).unwrap();
    }

    #[test]
    fn empty_file_is_a_clear_error() {
        let (_dir, file) = scratch_file(0);
        let err = Mapping::whole(&file, 0, false).err().unwrap();
        assert!(err.to_string().contains("empty"), "{err}");
    }

    #[test]
    fn msync_outside_the_mapping_is_refused() {
        let (_dir, file) = scratch_file(4096);
        let map = Mapping::whole(&file, 4096, true).unwrap();
        assert!(map.msync(4000, 200).is_err());
    }

    #[test]
    #[should_panic(expected = "read-only")]
    fn read_only_mapping_refuses_mut_access() {
        let (_dir, file) = scratch_file(4096);
        Mapping::whole(&file, 4096, false).unwrap().as_mut_slice();
    }

    #[test]
    fn every_advice_is_accepted() {
        let (_dir, file) = scratch_file(3 * 4096);
        let map = Mapping::new(&file, 100, 8000, false).unwrap();
        for access in [Access::Random, Access::Sequential, Access::Normal] {
            map.advise(access).unwrap();
        }
    }

    #[test]
    fn resident_pages_counts_cached_pages_only() {
        let (_dir, file) = scratch_file(0);
        let page = crate::os::page_size();
        file.write_all_at(&vec![1u8; 8 * page], 0).unwrap();
        file.sync_all().unwrap();
        crate::fd::fadvise_dontneed(&file, 0, 0).unwrap();
        file.write_all_at(&vec![2u8; 2 * page], 0).unwrap();
        let map = Mapping::whole(&file, 8 * page as u64, false).unwrap();
        let mut scratch = Vec::new();
        assert_eq!(map.resident_pages(&mut scratch).unwrap(), 2);
        assert_eq!(scratch.len(), 8);
    }
}
