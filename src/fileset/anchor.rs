//! Each target's name is resolved once, to an anchor descriptor; what comes after
//! (the layout, the descriptors the workers do I/O on, a worker process's own,
//! `pre_read`) reopens the anchor's file through `/proc/PID/fd`, never the name,
//! so a name swapped for a symbolic link after it was checked changes nothing. A
//! file iolens creates is created with `O_EXCL`, never through a link at its name;
//! a generated name inside `directory=` is resolved beneath the directory
//! (`openat2` with `RESOLVE_BENEATH`), and so is its unlink.

use super::TargetError;
use iolens_sys::beneath;
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A target's name, resolved once.
#[derive(Debug)]
pub(super) struct Anchor {
    /// Read-only, never used for I/O: the file every later open reopens.
    pub file: Arc<File>,
    /// The run created the file.
    pub created: bool,
}

/// The name that reopens `anchor`'s file, from this process or a worker process it
/// starts: the kernel's link to the open descriptor, whatever its name is now.
pub(crate) fn reopen_path(anchor: &File) -> PathBuf {
    PathBuf::from(format!(
        "/proc/{}/fd/{}",
        std::process::id(),
        anchor.as_raw_fd()
    ))
}

/// What to open for the target named `path`: its anchor's file when it has one,
/// else the name itself (`/dev/null`, a file operation engine's names).
pub(crate) fn path_to_open(path: &Path, anchor: Option<&File>) -> PathBuf {
    anchor.map_or_else(|| path.to_path_buf(), reopen_path)
}

/// Resolve `path` once: open what is there, or create it empty when it is missing
/// and `may_create` (`allow_file_create`). `inside`: the `directory=` a generated
/// name must not lead out of.
pub(super) fn resolve(
    path: &Path,
    inside: Option<&Path>,
    may_create: bool,
) -> Result<Anchor, TargetError> {
    // O_NONBLOCK: a FIFO at the name must not hang the open (the layout refuses it)
    let existing = open_at(path, inside, libc::O_RDONLY | libc::O_NONBLOCK);
    let (file, created) = match existing {
        Ok(file) => (file, false),
        Err(e) if e.kind() == ErrorKind::NotFound && may_create => {
            // O_EXCL: never created through a symbolic link at the name
            let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
            let file = open_at(path, inside, flags).map_err(|e| refusal(path, inside, e))?;
            (file, true)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(TargetError::Config(format!(
                "{}: does not exist, and allow_file_create=0 forbids creating it (create it first, or drop allow_file_create=0)",
                path.display()
            )))
        }
        Err(e) => return Err(refusal(path, inside, e)),
    };
    Ok(Anchor {
        file: Arc::new(file),
        created,
    })
}

/// Remove the name `path` (a file the job used); inside `directory=` only there.
pub(super) fn unlink(path: &Path, inside: Option<&Path>) -> Result<(), TargetError> {
    let removed = match beneath_of(path, inside) {
        Some((dir, name)) => File::open(dir).and_then(|d| beneath::unlink_beneath(&d, name)),
        None => std::fs::remove_file(path),
    };
    removed.map_err(|e| refusal(path, inside, e))
}

/// Make the directories `name` (relative, a generated name's parent) beneath
/// `dir`, mode 0700, for the file `path`; existing ones are used as they are.
pub(super) fn make_dirs(path: &Path, dir: &Path, name: &Path) -> Result<(), TargetError> {
    let fail = |e| refusal(path, Some(dir), e);
    let top = File::open(dir).map_err(fail)?;
    let mut made = PathBuf::new();
    for part in name.components() {
        made.push(part);
        let found = beneath::open_beneath(&top, &made, libc::O_PATH | libc::O_DIRECTORY, 0);
        match found {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {
                match beneath::mkdir_beneath(&top, &made, 0o700) {
                    Err(e) if e.kind() != ErrorKind::AlreadyExists => return Err(fail(e)),
                    _ => {}
                }
            }
            Err(e) => return Err(fail(e)),
        }
    }
    Ok(())
}

/// `directory=` and the name of `path` in it, when `path` must stay inside it.
fn beneath_of<'a>(path: &'a Path, inside: Option<&'a Path>) -> Option<(&'a Path, &'a Path)> {
    inside.and_then(|dir| Some((dir, path.strip_prefix(dir).ok()?)))
}

/// `open(2)` of `path` with `flags` (mode 0666 less the umask when creating):
/// beneath `inside` when given, else as named.
fn open_at(path: &Path, inside: Option<&Path>, flags: i32) -> std::io::Result<File> {
    match beneath_of(path, inside) {
        Some((dir, name)) => beneath::open_beneath(&File::open(dir)?, name, flags, 0o666),
        None => {
            let access = flags & libc::O_ACCMODE;
            OpenOptions::new()
                .read(true)
                .write(access == libc::O_RDWR)
                .custom_flags(flags & !libc::O_ACCMODE)
                .open(path)
        }
    }
}

/// Why `path` could not be opened, created or removed, in one line.
fn refusal(path: &Path, inside: Option<&Path>, e: std::io::Error) -> TargetError {
    let shown = path.display();
    match (e.raw_os_error(), inside) {
        (Some(libc::EXDEV | libc::ELOOP), Some(dir)) => TargetError::Config(format!(
            "{shown}: the name leads out of directory={} (through a symbolic link or ..); iolens creates, opens and removes files only inside it (remove the link, or change the job name or filename_format)",
            dir.display()
        )),
        (Some(libc::ENOSYS), Some(dir)) => TargetError::Config(format!(
            "{shown}: this kernel has no openat2 (Linux 5.6 and later), which keeps a generated name inside directory={}; give the file as filename= instead, or run on a newer kernel",
            dir.display()
        )),
        (Some(libc::EEXIST), _) if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) => {
            TargetError::Config(format!(
                "{shown}: a symbolic link to a missing file sits at the name; iolens creates a file only at its own name, never through a link (remove the link, or create the file it points to)"
            ))
        }
        _ => TargetError::io(path, "open", e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_created_only_when_allowed() {
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("absent");
        let message = resolve(&p, None, false).unwrap_err().to_string();
        assert!(message.contains("allow_file_create=0"), "{message}");
        assert!(!p.exists());
        assert!(resolve(&p, None, true).unwrap().created);
        assert!(!resolve(&p, None, false).unwrap().created);
    }

    #[test]
    fn a_link_at_a_name_to_create_is_not_followed() {
        let dir = crate::testutil::scratch_dir();
        let elsewhere = dir.path().join("elsewhere");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let message = resolve(&link, None, true).unwrap_err().to_string();
        assert!(
            message.contains("symbolic link") && message.contains("link"),
            "expected the dangling link refused, saw {message}"
        );
        assert!(
            !elsewhere.exists(),
            "expected nothing created through the link"
        );
    }

    #[test]
    fn a_kernel_without_openat2_is_told_in_one_line_with_the_way_round() {
        let dir = Path::new("/data");
        let message = refusal(
            &dir.join("job.0.0"),
            Some(dir),
            std::io::Error::from_raw_os_error(libc::ENOSYS),
        )
        .to_string();
        assert!(
            message.starts_with("/data/job.0.0: this kernel has no openat2")
                && message.contains("directory=/data")
                && message.contains("filename=")
                && !message.contains('\n'),
            "expected one line naming the file, directory= and filename=, saw {message}"
        );
    }

    #[test]
    fn the_reopened_file_is_the_anchors_whatever_the_name_is_now() {
        use std::os::unix::fs::MetadataExt;
        let dir = crate::testutil::scratch_dir();
        let p = dir.path().join("f");
        let anchor = resolve(&p, None, true).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        let reopened = File::open(reopen_path(&anchor.file)).unwrap();
        let (ino, victim_ino) = (
            reopened.metadata().unwrap().ino(),
            std::fs::metadata(&victim).unwrap().ino(),
        );
        assert_eq!(ino, anchor.file.metadata().unwrap().ino());
        assert_ne!(
            ino, victim_ino,
            "expected the anchor's file, not the link's target"
        );
    }
}
