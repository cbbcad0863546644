//! Names inside a directory, resolved without leaving it: `openat2(2)` with
//! `RESOLVE_BENEATH`, so neither `..` nor a symbolic link (an absolute one, or a
//! relative one that climbs out) can take an open or an unlink to a file
//! elsewhere, also when the name was changed after it was checked. openat2 is
//! Linux 5.6 and later; older kernels answer ENOSYS.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `struct open_how` (linux/openat2.h); libc's cannot be built outside libc.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

fn c_name(name: &Path) -> io::Result<CString> {
    CString::new(name.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// Open `name` (relative) beneath the directory `dir` with the `open(2)` `flags`
/// and, when they create, `mode` (ignored otherwise); close-on-exec. A name that leads out of `dir`
/// fails with EXDEV, a magic link (`/proc/self/fd/N`) on the way with ELOOP.
pub fn open_beneath(dir: impl AsFd, name: &Path, flags: i32, mode: u32) -> io::Result<File> {
    let name = c_name(name)?;
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        // openat2 refuses a mode with flags that create nothing
        mode: if flags & (libc::O_CREAT | libc::O_TMPFILE) != 0 {
            u64::from(mode)
        } else {
            0
        },
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `name` is NUL-terminated and alive for the call; `how` is one
    // `struct open_how` passed with its own size, which the kernel only reads; the
    // directory descriptor is borrowed and open.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_fd().as_raw_fd(),
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    let fd = crate::fd::check(ret as libc::ssize_t)?;
    // SAFETY: a successful openat2 returned a new descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd as libc::c_int) })
}

/// Remove the name `name` (relative, not a directory) beneath the directory `dir`:
/// its parent is resolved as `open_beneath` resolves names, then the last
/// component is unlinked there (a symbolic link itself, never its target).
pub fn unlink_beneath(dir: impl AsFd, name: &Path) -> io::Result<()> {
    in_parent(dir, name, |at, last| {
        // SAFETY: `at` is an open directory descriptor and `last` a NUL-terminated
        // string, both alive for the call (see `in_parent`).
        unsafe { libc::unlinkat(at, last, 0) }
    })
}

/// Make the directory `name` (relative; its parent exists) beneath the directory
/// `dir` with `mode` (less the umask): its parent is resolved as `open_beneath`
/// resolves names, then the last component is made there.
pub fn mkdir_beneath(dir: impl AsFd, name: &Path, mode: u32) -> io::Result<()> {
    in_parent(dir, name, |at, last| {
        // SAFETY: as in `unlink_beneath`.
        unsafe { libc::mkdirat(at, last, mode as libc::mode_t) }
    })
}

/// Call `op` with a descriptor of `name`'s parent, resolved beneath `dir`, and
/// `name`'s last component; both stay alive for the call.
fn in_parent(
    dir: impl AsFd,
    name: &Path,
    op: impl FnOnce(libc::c_int, *const libc::c_char) -> libc::c_int,
) -> io::Result<()> {
    let Some(last) = name.file_name() else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    let parent = match name.parent() {
        Some(p) if !p.as_os_str().is_empty() => {
            Some(open_beneath(&dir, p, libc::O_PATH | libc::O_DIRECTORY, 0)?)
        }
        _ => None,
    };
    let at = match &parent {
        Some(p) => p.as_raw_fd(),
        None => dir.as_fd().as_raw_fd(),
    };
    let last = c_name(Path::new(last))?;
    crate::fd::check(op(at, last.as_ptr()) as libc::ssize_t).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::scratch_dir;

    fn dir_of(path: &Path) -> File {
        File::open(path).unwrap()
    }

    /// openat2 where the kernel has it; None (after saying why) where it answers ENOSYS.
    fn beneath_or_skip(dir: &File, name: &str) -> Option<io::Result<File>> {
        match open_beneath(dir, Path::new(name), libc::O_RDONLY, 0) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                eprintln!("skipped: this kernel has no openat2");
                None
            }
            other => Some(other),
        }
    }

    /// A directory with `sub/f` and `away`, a link to another directory holding `f`.
    fn a_link_out() -> (tempfile::TempDir, tempfile::TempDir) {
        let d = scratch_dir();
        let outside = scratch_dir();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/f"), b"in").unwrap();
        std::fs::write(outside.path().join("f"), b"out").unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("away")).unwrap();
        (d, outside)
    }

    #[test]
    fn names_inside_open_and_ways_out_fail() {
        let (d, _outside) = a_link_out();
        std::os::unix::fs::symlink("sub/f", d.path().join("near")).unwrap();
        let dir = dir_of(d.path());
        let Some(inside) = beneath_or_skip(&dir, "sub/f") else {
            return;
        };
        assert!(inside.is_ok(), "expected sub/f opened, saw {inside:?}");
        assert!(beneath_or_skip(&dir, "near").unwrap().is_ok());
        for out in ["away/f", "../x", "sub/../../x"] {
            let err = beneath_or_skip(&dir, out).unwrap().unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::EXDEV), "{out}: {err}");
        }
    }

    #[test]
    fn an_unlink_through_a_link_out_removes_nothing_outside() {
        let (d, outside) = a_link_out();
        let dir = dir_of(d.path());
        match unlink_beneath(&dir, Path::new("away/f")) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                eprintln!("skipped: this kernel has no openat2");
                return;
            }
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EXDEV), "{e}"),
            Ok(()) => panic!("expected away/f refused"),
        }
        assert!(outside.path().join("f").exists());
        unlink_beneath(&dir, Path::new("sub/f")).unwrap();
        assert!(!d.path().join("sub/f").exists());
    }

    #[test]
    fn directories_are_made_inside_and_not_through_a_link_out() {
        let d = scratch_dir();
        let outside = scratch_dir();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("away")).unwrap();
        let dir = dir_of(d.path());
        match mkdir_beneath(&dir, Path::new("away/x"), 0o700) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                eprintln!("skipped: this kernel has no openat2");
                return;
            }
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EXDEV), "{e}"),
            Ok(()) => panic!("expected away/x refused"),
        }
        assert!(!outside.path().join("x").exists());
        mkdir_beneath(&dir, Path::new("sub/x"), 0o700).unwrap();
        assert!(d.path().join("sub/x").is_dir());
    }
}
