//! Calls on a file's name rather than a descriptor: the three ways to read a name's
//! attributes (`stat`, `lstat`, `statx`), each its own syscall so a benchmark times
//! exactly the call it names (std's `metadata` tries `statx` first and falls back).

use std::ffi::CString;
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// `stat(2)` of `path`, following a final symlink.
pub fn stat(path: &Path) -> io::Result<()> {
    let name = c_path(path)?;
    let mut out = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `name` is a NUL-terminated string alive for the call; `out` is writable
    // memory the size of one `struct stat`, which the call fills.
    let ret = unsafe { libc::stat(name.as_ptr(), out.as_mut_ptr()) };
    check(ret)
}

/// `lstat(2)` of `path`: a final symlink itself, not what it points at.
pub fn lstat(path: &Path) -> io::Result<()> {
    let name = c_path(path)?;
    let mut out = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: as in `stat`.
    let ret = unsafe { libc::lstat(name.as_ptr(), out.as_mut_ptr()) };
    check(ret)
}

/// `statx(2)` of `path` (relative to the current directory), asking for every field.
pub fn statx(path: &Path) -> io::Result<()> {
    let name = c_path(path)?;
    let mut out = MaybeUninit::<libc::statx>::uninit();
    // SAFETY: `name` is a NUL-terminated string alive for the call; `out` is writable
    // memory the size of one `struct statx`, which the call fills.
    let ret = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            name.as_ptr(),
            0,
            libc::STATX_ALL,
            out.as_mut_ptr(),
        )
    };
    check(ret)
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_finds_a_name_and_reports_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        let missing = dir.path().join("missing");
        for (name, call) in [
            ("stat", stat as fn(&Path) -> io::Result<()>),
            ("lstat", lstat),
            ("statx", statx),
        ] {
            assert!(
                call(&file).is_ok(),
                "{name} of an existing file: expected Ok"
            );
            assert!(
                call(dir.path()).is_ok(),
                "{name} of a directory: expected Ok"
            );
            let errno = call(&missing).unwrap_err().raw_os_error();
            assert_eq!(
                errno,
                Some(libc::ENOENT),
                "{name} of a missing name: expected ENOENT"
            );
        }
        assert_eq!(
            stat(&link).unwrap_err().raw_os_error(),
            Some(libc::ENOENT),
            "stat follows a dangling symlink: expected ENOENT"
        );
        assert!(
            lstat(&link).is_ok(),
            "lstat of a dangling symlink: expected Ok (the link itself)"
        );
    }
}
