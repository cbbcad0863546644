//! Calls on file descriptors: vectored and flagged reads/writes, fadvise, block
//! device ioctls and the direct-I/O alignment a file needs.

use std::fs::File;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileTypeExt;

/// Flags for `std::os::unix::fs::OpenOptionsExt::custom_flags`.
pub mod open_flags {
    /// Bypass the page cache.
    pub const DIRECT: i32 = libc::O_DIRECT;
    /// Every write reaches stable storage, data and metadata.
    pub const SYNC: i32 = libc::O_SYNC;
    /// Every write reaches stable storage, data and the metadata needed to read it.
    pub const DSYNC: i32 = libc::O_DSYNC;
}

/// Turns a `-1`-on-error return into `io::Result`, reading errno.
#[inline]
pub(crate) fn check(ret: libc::ssize_t) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

#[inline]
fn read_iovec(buf: &mut [u8]) -> libc::iovec {
    libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    }
}

#[inline]
fn write_iovec(buf: &[u8]) -> libc::iovec {
    // The kernel only reads through this iovec, so the *mut cast never writes.
    libc::iovec {
        iov_base: buf.as_ptr().cast_mut().cast(),
        iov_len: buf.len(),
    }
}

/// `preadv` with one iovec: read into `buf` at `offset`, return bytes read.
#[inline]
pub fn preadv(fd: impl AsFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let iov = read_iovec(buf);
    // SAFETY: iov describes `buf`, which is exclusively borrowed for the call; the fd is borrowed and open.
    check(unsafe { libc::preadv(fd.as_fd().as_raw_fd(), &iov, 1, offset as libc::off_t) })
}

/// `pwritev` with one iovec: write `buf` at `offset`, return bytes written.
#[inline]
pub fn pwritev(fd: impl AsFd, buf: &[u8], offset: u64) -> io::Result<usize> {
    let iov = write_iovec(buf);
    // SAFETY: iov describes `buf`, borrowed for the call and only read by the kernel.
    check(unsafe { libc::pwritev(fd.as_fd().as_raw_fd(), &iov, 1, offset as libc::off_t) })
}

#[inline]
fn rw_flags(hipri: bool) -> libc::c_int {
    if hipri {
        libc::RWF_HIPRI
    } else {
        0
    }
}

/// `preadv2`; `hipri` asks for a polled completion (RWF_HIPRI, direct I/O only).
#[inline]
pub fn preadv2(fd: impl AsFd, buf: &mut [u8], offset: u64, hipri: bool) -> io::Result<usize> {
    let iov = read_iovec(buf);
    // SAFETY: as in preadv.
    check(unsafe {
        libc::preadv2(
            fd.as_fd().as_raw_fd(),
            &iov,
            1,
            offset as libc::off_t,
            rw_flags(hipri),
        )
    })
}

/// `pwritev2`; `hipri` as in [`preadv2`].
#[inline]
pub fn pwritev2(fd: impl AsFd, buf: &[u8], offset: u64, hipri: bool) -> io::Result<usize> {
    let iov = write_iovec(buf);
    // SAFETY: as in pwritev.
    check(unsafe {
        libc::pwritev2(
            fd.as_fd().as_raw_fd(),
            &iov,
            1,
            offset as libc::off_t,
            rw_flags(hipri),
        )
    })
}

/// Drop the page cache of a range (`len` 0 = to the end of the file).
pub fn fadvise_dontneed(fd: impl AsFd, offset: u64, len: u64) -> io::Result<()> {
    fadvise(fd, offset, len, libc::POSIX_FADV_DONTNEED)
}

/// The file lives on a filesystem that keeps its data in RAM (tmpfs, ramfs): its
/// pages are the file, so there is no device a read could go to.
pub fn in_memory_fs(fd: impl AsFd) -> io::Result<bool> {
    let mut st = MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: fstatfs writes one statfs into `st` (ours, the right size) for a borrowed open fd.
    let ret = unsafe { libc::fstatfs(fd.as_fd().as_raw_fd(), st.as_mut_ptr()) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatfs succeeded, so it filled `st`.
    let f_type = unsafe { st.assume_init() }.f_type;
    // ramfs' magic (linux/magic.h), which libc does not define.
    const RAMFS_MAGIC: libc::c_long = 0x8584_58f6;
    Ok([libc::TMPFS_MAGIC, RAMFS_MAGIC].contains(&(f_type as libc::c_long)))
}

/// Room left on a filesystem, as `fstatvfs(3)` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSpace {
    /// Bytes an unprivileged writer may still allocate (`f_bavail` blocks).
    pub available: u64,
    /// The filesystem's whole size (`f_blocks` blocks).
    pub total: u64,
    /// The filesystem's id (`f_fsid`): files with equal ids share the room.
    pub fsid: u64,
}

/// The room left on the filesystem holding `fd` (a file or a directory).
pub fn fs_space(fd: impl AsFd) -> io::Result<FsSpace> {
    let mut st = MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: fstatvfs writes one statvfs into `st` (ours, the right size) for a borrowed open fd.
    let ret = unsafe { libc::fstatvfs(fd.as_fd().as_raw_fd(), st.as_mut_ptr()) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatvfs succeeded, so it filled `st`.
    let st = unsafe { st.assume_init() };
    Ok(FsSpace {
        available: st.f_bavail.saturating_mul(st.f_frsize),
        total: st.f_blocks.saturating_mul(st.f_frsize),
        fsid: st.f_fsid,
    })
}

/// The access pattern a file will see, for the kernel's readahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No advice: the kernel's default readahead.
    Normal,
    /// Read ahead more.
    Sequential,
    /// No readahead.
    Random,
}

/// Tell the kernel how the whole file will be read (`POSIX_FADV_NORMAL`/`SEQUENTIAL`/`RANDOM`).
/// The advice belongs to the open file description, so it holds for every I/O through `fd`.
pub fn fadvise_access(fd: impl AsFd, access: Access) -> io::Result<()> {
    let advice = match access {
        Access::Normal => libc::POSIX_FADV_NORMAL,
        Access::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Access::Random => libc::POSIX_FADV_RANDOM,
    };
    fadvise(fd, 0, 0, advice)
}

fn fadvise(fd: impl AsFd, offset: u64, len: u64, advice: libc::c_int) -> io::Result<()> {
    // SAFETY: plain syscall on a borrowed, open fd; no memory is passed.
    let err = unsafe {
        libc::posix_fadvise(
            fd.as_fd().as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            advice,
        )
    };
    // posix_fadvise returns the error number instead of setting errno.
    if err == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(err))
    }
}

/// How `allocate` reserves a file's blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocate {
    /// `fallocate(2)` mode 0: blocks reserved, the file grows to cover them.
    Extend,
    /// `FALLOC_FL_KEEP_SIZE`: blocks reserved past the end; the length stays.
    KeepSize,
    /// `posix_fallocate(3)`: like `Extend`, emulated by glibc (writing a byte per
    /// block) where the filesystem has no fallocate.
    Posix,
}

/// Reserve the blocks of `offset..offset + len`. `Extend` and `KeepSize` fail with
/// `EOPNOTSUPP` on filesystems without fallocate.
pub fn allocate(fd: impl AsFd, mode: Allocate, offset: u64, len: u64) -> io::Result<()> {
    let raw = fd.as_fd().as_raw_fd();
    let (offset, len) = (offset as libc::off_t, len as libc::off_t);
    match mode {
        Allocate::Posix => {
            // SAFETY: plain call on a borrowed, open fd; no memory is passed.
            let err = unsafe { libc::posix_fallocate(raw, offset, len) };
            if err == 0 {
                Ok(())
            } else {
                Err(io::Error::from_raw_os_error(err))
            }
        }
        Allocate::Extend | Allocate::KeepSize => {
            let flags = if mode == Allocate::KeepSize {
                libc::FALLOC_FL_KEEP_SIZE
            } else {
                0
            };
            // SAFETY: plain syscall on a borrowed, open fd; no memory is passed.
            check(unsafe { libc::fallocate(raw, flags, offset, len) } as libc::ssize_t).map(drop)
        }
    }
}

/// Free the blocks of `offset..offset + len` in a regular file, keeping its length
/// (`FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`): a file's "trim".
#[inline]
pub fn punch_hole(fd: impl AsFd, offset: u64, len: u64) -> io::Result<()> {
    let flags = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: plain syscall on a borrowed, open fd; no memory is passed.
    let ret = unsafe {
        libc::fallocate(
            fd.as_fd().as_raw_fd(),
            flags,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    check(ret as libc::ssize_t).map(drop)
}

/// The first offset at or after `from` where `fd` reads no stored data: a hole,
/// or (on ext4, xfs, btrfs) an extent allocated but never written; the file's
/// length when there is none. Moves the descriptor's file position: use a
/// descriptor of its own.
pub fn next_hole(fd: impl AsFd, from: u64) -> io::Result<u64> {
    // SAFETY: plain syscall on a borrowed, open fd; no memory is passed.
    let ret = unsafe { libc::lseek(fd.as_fd().as_raw_fd(), from as libc::off_t, libc::SEEK_HOLE) };
    check(ret as libc::ssize_t).map(|at| at as u64)
}

// Block-device ioctls (linux/fs.h). BLKGETSIZE64 is `_IOR(0x12, 114, size_t)` in the
// generic ioctl encoding used by x86_64 and aarch64; libc does not export it.
const BLKGETSIZE64: libc::Ioctl = 0x8008_1272;
const BLKFLSBUF: libc::Ioctl = 0x1261;
/// `_IO(0x12, 119)`.
const BLKDISCARD: libc::Ioctl = 0x1277;

/// Whether `file` is a block device (rather than a regular file).
pub fn is_block_device(file: &File) -> io::Result<bool> {
    Ok(file.metadata()?.file_type().is_block_device())
}

/// Size of a block device in bytes.
pub fn blk_size_bytes(fd: impl AsFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at `size`.
    let ret = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), BLKGETSIZE64, &mut size) };
    check(ret as libc::ssize_t).map(|_| size)
}

/// Logical sector size: the smallest unit the device addresses (direct I/O granularity).
pub fn blk_logical_sector(fd: impl AsFd) -> io::Result<u32> {
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which points at `size`.
    let ret = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::BLKSSZGET, &mut size) };
    check(ret as libc::ssize_t).map(|_| size as u32)
}

/// Physical sector size: writes smaller than this make the device read-modify-write.
pub fn blk_physical_sector(fd: impl AsFd) -> io::Result<u32> {
    let mut size: libc::c_uint = 0;
    // SAFETY: BLKPBSZGET writes one unsigned int through the pointer, which points at `size`.
    let ret = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), libc::BLKPBSZGET, &mut size) };
    check(ret as libc::ssize_t).map(|_| size)
}

/// Discard `offset..offset + len` of a block device (BLKDISCARD): the device may
/// forget the data. Both must be multiples of the logical sector size.
#[inline]
pub fn blk_discard(fd: impl AsFd, offset: u64, len: u64) -> io::Result<()> {
    let range: [u64; 2] = [offset, len];
    // SAFETY: BLKDISCARD reads two u64 (start, length) through the pointer, which
    // points at `range`, alive for the call.
    let ret = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), BLKDISCARD, range.as_ptr()) };
    check(ret as libc::ssize_t).map(drop)
}

/// Write back and drop the device's buffer cache (needs CAP_SYS_ADMIN).
pub fn blk_flush_buffers(fd: impl AsFd) -> io::Result<()> {
    // SAFETY: BLKFLSBUF takes no argument memory.
    let ret = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), BLKFLSBUF, 0) };
    check(ret as libc::ssize_t).map(|_| ())
}

/// Direct-I/O alignment reported by `statx(STATX_DIOALIGN)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioAlign {
    /// Buffer addresses must be multiples of this.
    pub mem_align: u32,
    /// File offsets and lengths must be multiples of this.
    pub offset_align: u32,
}

impl DioAlign {
    /// The kernel reports 0/0 when the file supports no direct I/O at all.
    pub fn is_supported(&self) -> bool {
        self.offset_align != 0
    }
}

/// `Ok(None)` when the kernel or filesystem does not report the alignment (before Linux 6.1, some filesystems).
pub fn dio_alignment(fd: impl AsFd) -> io::Result<Option<DioAlign>> {
    let mut stx = MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: empty path + AT_EMPTY_PATH makes statx describe the borrowed fd; it writes
    // one struct statx into `stx`, which is large enough.
    let ret = unsafe {
        libc::statx(
            fd.as_fd().as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            stx.as_mut_ptr(),
        )
    };
    check(ret as libc::ssize_t)?;
    // SAFETY: zero-initialised and filled by a successful statx; every field is a plain integer.
    let stx = unsafe { stx.assume_init() };
    if stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return Ok(None);
    }
    Ok(Some(DioAlign {
        mem_align: stx.stx_dio_mem_align,
        offset_align: stx.stx_dio_offset_align,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{open_direct, scratch_file, LoopDevice};
    use crate::AlignedBuf;

    #[test]
    fn dev_shm_is_in_memory_and_the_build_directory_is_not() {
        let (_dir, file) = scratch_file(0);
        assert!(!in_memory_fs(&file).unwrap());
        if let Ok(shm) = tempfile::tempfile_in("/dev/shm") {
            assert!(in_memory_fs(&shm).unwrap());
        }
    }

    #[test]
    fn a_filesystem_tells_its_room_and_one_id_for_its_files() {
        let (dir, file) = scratch_file(0);
        let space = fs_space(&file).unwrap();
        let of_dir = fs_space(File::open(dir.path()).unwrap()).unwrap();
        assert_eq!(space.fsid, of_dir.fsid);
        assert!(space.available > 0);
    }

    #[test]
    fn vectored_roundtrip_at_offsets() {
        let (_dir, file) = scratch_file(64 * 1024);
        for (i, off) in [0u64, 4096, 12345, 60000].into_iter().enumerate() {
            let data = vec![i as u8 + 1; 1000];
            assert_eq!(pwritev(&file, &data, off).unwrap(), 1000);
            let mut back = vec![0; 1000];
            assert_eq!(preadv(&file, &mut back, off).unwrap(), 1000);
            assert_eq!(back, data);
        }
    }

    #[test]
    fn v2_roundtrip_without_hipri() {
        let (_dir, file) = scratch_file(8192);
        assert_eq!(pwritev2(&file, b"hello", 100, false).unwrap(), 5);
        let mut back = [0; 5];
        assert_eq!(preadv2(&file, &mut back, 100, false).unwrap(), 5);
        assert_eq!(&back, b"hello");
    }

    #[test]
    fn read_past_end_returns_zero() {
        let (_dir, file) = scratch_file(4096);
        let mut buf = [0; 16];
        assert_eq!(preadv(&file, &mut buf, 4096).unwrap(), 0);
    }

    #[test]
    fn errors_come_back_as_errno() {
        let (dir, _file) = scratch_file(4096);
        let read_only = File::open(dir.path().join("data")).unwrap();
        let err = pwritev(&read_only, b"x", 0).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EBADF));
    }

    #[test]
    fn direct_io_with_aligned_buffer() {
        let (dir, _file) = scratch_file(64 * 1024);
        let file = open_direct(&dir);
        let align = dio_alignment(&file)
            .unwrap()
            .expect("a real filesystem reports DIO alignment");
        assert!(align.is_supported());
        let mut buf = AlignedBuf::new(4096, 4096).unwrap();
        buf.fill(0x5a);
        assert_eq!(pwritev(&file, &buf, 8192).unwrap(), 4096);
        buf.fill(0);
        assert_eq!(preadv(&file, &mut buf, 8192).unwrap(), 4096);
        assert!(buf.iter().all(|&b| b == 0x5a));
        // An unaligned offset into written data is refused by the kernel, not by us.
        let err = preadv(&file, &mut buf, 8192 + 100).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn fadvise_accepts_whole_file() {
        let (_dir, file) = scratch_file(4096);
        fadvise_dontneed(&file, 0, 0).unwrap();
        assert!(!is_block_device(&file).unwrap());
    }

    #[test]
    fn block_ioctls_on_a_loop_device() {
        let (dir, _file) = scratch_file(8 << 20);
        let Some(dev) = LoopDevice::attach(&dir.path().join("data")) else {
            return;
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dev.path())
            .unwrap();
        assert!(is_block_device(&file).unwrap());
        assert_eq!(blk_size_bytes(&file).unwrap(), 8 << 20);
        let logical = blk_logical_sector(&file).unwrap();
        let physical = blk_physical_sector(&file).unwrap();
        assert!(
            logical >= 512 && logical.is_power_of_two(),
            "logical {logical}"
        );
        assert!(
            physical >= logical,
            "physical {physical} < logical {logical}"
        );
        // Block devices report their DIO alignment through statx since Linux 6.11.
        if let Some(dio) = dio_alignment(&file).unwrap() {
            assert_eq!(dio.offset_align, logical);
        }
        blk_flush_buffers(&file).unwrap();
    }

    #[test]
    fn access_advice_is_accepted_on_files() {
        let (_dir, file) = scratch_file(4096);
        for access in [Access::Sequential, Access::Random, Access::Normal] {
            fadvise_access(&file, access).unwrap();
        }
    }

    /// 512-byte blocks the file has allocated.
    fn allocated_blocks(file: &File) -> u64 {
        use std::os::unix::fs::MetadataExt;
        file.metadata().unwrap().blocks()
    }

    #[test]
    fn allocate_modes_reserve_blocks_with_or_without_the_length() {
        for (mode, expected_len) in [
            (Allocate::Extend, 1 << 20),
            (Allocate::KeepSize, 0),
            (Allocate::Posix, 1 << 20),
        ] {
            let (_dir, file) = scratch_file(0);
            match allocate(&file, mode, 0, 1 << 20) {
                Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => return,
                result => result.unwrap(),
            }
            assert_eq!(file.metadata().unwrap().len(), expected_len, "{mode:?}");
            assert!(allocated_blocks(&file) * 512 >= 1 << 20, "{mode:?}");
        }
    }

    #[test]
    fn punch_hole_frees_blocks_and_keeps_the_length() {
        let (_dir, file) = scratch_file(0);
        pwritev(&file, &vec![7u8; 1 << 20], 0).unwrap();
        file.sync_all().unwrap();
        let before = allocated_blocks(&file);
        match punch_hole(&file, 0, 512 * 1024) {
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => return,
            result => result.unwrap(),
        }
        assert_eq!(file.metadata().unwrap().len(), 1 << 20);
        assert!(allocated_blocks(&file) < before);
        let mut back = [1u8; 16];
        preadv(&file, &mut back, 4096).unwrap();
        assert_eq!(back, [0; 16]);
    }

    #[test]
    fn discard_on_a_loop_device_and_not_on_a_file() {
        let (dir, file) = scratch_file(8 << 20);
        assert!(blk_discard(&file, 0, 4096).is_err());
        let Some(dev) = LoopDevice::attach(&dir.path().join("data")) else {
            return;
        };
        let device = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dev.path())
            .unwrap();
        blk_discard(&device, 0, 1 << 20).unwrap();
        let err = blk_discard(&device, 1, 512).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn block_ioctls_fail_on_a_regular_file() {
        let (_dir, file) = scratch_file(4096);
        assert!(blk_size_bytes(&file).is_err());
        assert!(blk_logical_sector(&file).is_err());
    }
}
