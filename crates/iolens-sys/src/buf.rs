//! Aligned, zeroed I/O buffers. `O_DIRECT` needs buffer addresses aligned to the
//! device's DMA alignment, which `Vec<u8>` cannot promise.

use std::alloc::{self, Layout};
use std::io;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// One zeroed heap allocation of `len` bytes whose address is a multiple of `align`.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf uniquely owns its allocation (like Vec<u8>); moving it to
// another thread or sharing `&AlignedBuf` is as safe as for a Vec.
unsafe impl Send for AlignedBuf {}
// SAFETY: see Send; `&AlignedBuf` only hands out `&[u8]`.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` must be non-zero and `align` a power of two.
    pub fn new(len: usize, align: usize) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "buffer length must be > 0",
            ));
        }
        let layout = Layout::from_size_align(len, align).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("buffer of {len} bytes aligned to {align}: {e}"),
            )
        })?;
        // SAFETY: the layout has a non-zero size (checked above).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        Ok(Self { ptr, layout })
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is a live, initialised (zeroed) allocation of layout.size() bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl DerefMut for AlignedBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was returned by alloc_zeroed with exactly this layout and is freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// `count` equally sized buffers (one per queue entry) in one aligned allocation.
/// Each slot starts on an `align` boundary, so every slot is usable for `O_DIRECT`.
pub struct Slots {
    buf: AlignedBuf,
    slot_size: usize,
    /// Distance between slot starts: `slot_size` rounded up to `align`.
    stride: usize,
    count: u32,
}

impl Slots {
    /// `count` slots of `slot_size` bytes, each starting on an `align` boundary
    /// (a power of two, e.g. the device's direct-I/O alignment).
    pub fn new(count: u32, slot_size: usize, align: usize) -> io::Result<Self> {
        if count == 0 || slot_size == 0 || !align.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{count} slots of {slot_size} bytes aligned to {align}: need count, size > 0 and a power-of-two alignment"),
            ));
        }
        let too_big = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "buffer slots exceed the address space",
            )
        };
        let stride = slot_size
            .checked_next_multiple_of(align)
            .ok_or_else(too_big)?;
        let total = stride.checked_mul(count as usize).ok_or_else(too_big)?;
        Ok(Self {
            buf: AlignedBuf::new(total, align)?,
            slot_size,
            stride,
            count,
        })
    }

    /// How many slots there are.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Usable bytes of each slot.
    pub fn slot_size(&self) -> usize {
        self.slot_size
    }

    #[inline]
    /// The bytes of `slot`.
    pub fn slot(&self, slot: u32) -> &[u8] {
        let start = self.start(slot);
        &self.buf[start..start + self.slot_size]
    }

    #[inline]
    /// The bytes of `slot`, to fill before a write.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let start = self.start(slot);
        &mut self.buf[start..start + self.slot_size]
    }

    /// Address of a slot for the kernel; only this crate hands such pointers out.
    #[inline]
    pub(crate) fn slot_ptr(&mut self, slot: u32) -> *mut u8 {
        self.slot_mut(slot).as_mut_ptr()
    }

    #[inline]
    fn start(&self, slot: u32) -> usize {
        assert!(
            slot < self.count,
            "slot {slot} out of range (have {})",
            self.count
        );
        slot as usize * self.stride
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buf_is_zeroed_and_aligned() {
        for align in [512, 4096, 65536] {
            let buf = AlignedBuf::new(3 * align + 7, align).unwrap();
            assert_eq!(buf.as_ptr() as usize % align, 0);
            assert_eq!(buf.len(), 3 * align + 7);
            assert!(buf.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn aligned_buf_rejects_bad_input() {
        assert!(AlignedBuf::new(0, 4096).is_err());
        assert!(AlignedBuf::new(4096, 3000).is_err());
    }

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut slots = Slots::new(4, 1000, 512).unwrap();
        for i in 0..4 {
            assert_eq!(slots.slot(i).as_ptr() as usize % 512, 0);
            assert_eq!(slots.slot(i).len(), 1000);
            slots.slot_mut(i).fill(i as u8 + 1);
        }
        for i in 0..4 {
            assert!(slots.slot(i).iter().all(|&b| b == i as u8 + 1));
        }
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn slot_out_of_range_panics() {
        Slots::new(2, 4096, 4096).unwrap().slot(2);
    }

    #[test]
    fn slots_reject_zero_sizes() {
        assert!(Slots::new(0, 4096, 4096).is_err());
        assert!(Slots::new(1, 0, 4096).is_err());
        assert!(Slots::new(1, 4096, 3).is_err());
    }
}
