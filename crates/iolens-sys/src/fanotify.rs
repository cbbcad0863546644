//! `fanotify(7)`: the processes that open a file or device node, as they do it.
//! Needs CAP_SYS_ADMIN (root); `OpenWatch::new` fails with EPERM otherwise.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A fanotify group told of every open of the inodes marked on it.
pub struct OpenWatch {
    fd: OwnedFd,
    buf: Vec<u8>,
}

/// One open seen.
#[derive(Debug)]
pub enum OpenEvent {
    /// A process opened a marked inode.
    Opened {
        /// The process (its thread group id).
        pid: u32,
        /// The object it opened, opened read-only for us by the kernel (to tell
        /// which marked inode it was); None when the kernel could not.
        file: Option<File>,
    },
    /// The kernel's queue overflowed: opens were lost.
    Overflow,
}

impl OpenWatch {
    /// A group in notification mode whose reads never block.
    pub fn new() -> io::Result<OpenWatch> {
        // SAFETY: plain integer arguments; the result is a new descriptor we own, or -1.
        let fd = unsafe {
            libc::fanotify_init(
                libc::FAN_CLASS_NOTIF | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK,
                (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_LARGEFILE) as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OpenWatch {
            // SAFETY: fanotify_init returned a fresh descriptor nobody else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            buf: vec![0; 4096],
        })
    }

    /// Be told of opens of the inode `file` was opened through (for a device
    /// node: that node, not other nodes of the same device).
    pub fn mark(&self, file: impl AsFd) -> io::Result<()> {
        // SAFETY: both descriptors are open for the call (the group's owned by self, the
        // other borrowed); a null path makes the kernel mark the object of the second.
        let ret = unsafe {
            libc::fanotify_mark(
                self.fd.as_raw_fd(),
                libc::FAN_MARK_ADD,
                libc::FAN_OPEN,
                file.as_fd().as_raw_fd(),
                std::ptr::null(),
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait up to `timeout` for events; true when some are queued.
    pub fn wait(&self, timeout: Duration) -> io::Result<bool> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: one pollfd, valid for the call; the descriptor is open.
        let ret = unsafe { libc::poll(&mut pfd, 1, ms) };
        match ret {
            r if r < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    Ok(false)
                } else {
                    Err(e)
                }
            }
            0 => Ok(false),
            _ => Ok(true),
        }
    }

    /// The events queued now (none when nothing is: never blocks).
    pub fn read(&mut self) -> io::Result<Vec<OpenEvent>> {
        // SAFETY: `buf` is writable for its whole length and outlives the call.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                self.buf.as_mut_ptr().cast(),
                self.buf.len(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(Vec::new()),
                _ => Err(e),
            };
        }
        let mut events = Vec::new();
        let meta_len = std::mem::size_of::<libc::fanotify_event_metadata>();
        let mut at = 0;
        let end = n as usize;
        while at + meta_len <= end {
            // SAFETY: `at + meta_len <= end <= buf.len()`, so the read stays in the
            // buffer; read_unaligned copes with any alignment of the kernel's records.
            let meta: libc::fanotify_event_metadata =
                unsafe { std::ptr::read_unaligned(self.buf.as_ptr().add(at).cast()) };
            let len = meta.event_len as usize;
            if meta.vers != libc::FANOTIFY_METADATA_VERSION || len < meta_len {
                break;
            }
            // SAFETY: the kernel opened this descriptor for us with the event and
            // nobody else owns it; taking it here closes it whatever happens next.
            let file = (meta.fd >= 0).then(|| File::from(unsafe { OwnedFd::from_raw_fd(meta.fd) }));
            if meta.mask & libc::FAN_Q_OVERFLOW != 0 {
                events.push(OpenEvent::Overflow);
            } else if meta.mask & libc::FAN_OPEN != 0 {
                events.push(OpenEvent::Opened {
                    pid: meta.pid as u32,
                    file,
                });
            }
            at += len;
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::scratch_dir;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn sees_the_pid_of_an_open_of_a_marked_file() {
        let mut watch = match OpenWatch::new() {
            Ok(w) => w,
            Err(e) => {
                eprintln!("skipped: fanotify unavailable ({e}); it needs root");
                return;
            }
        };
        let dir = scratch_dir();
        let marked = dir.path().join("marked");
        let other = dir.path().join("other");
        std::fs::write(&marked, b"x").unwrap();
        std::fs::write(&other, b"y").unwrap();
        watch.mark(File::open(&marked).unwrap()).unwrap();
        let before = watch.read().unwrap();
        assert!(
            before.is_empty(),
            "expected no event before any open, saw {before:?}"
        );
        File::open(&other).unwrap();
        File::open(&marked).unwrap();
        assert!(
            watch.wait(Duration::from_secs(10)).unwrap(),
            "expected the open queued"
        );
        let me = std::process::id();
        let events = watch.read().unwrap();
        let marked_ino = std::fs::metadata(&marked).unwrap().ino();
        let seen: Vec<(u32, Option<u64>)> = events
            .iter()
            .filter_map(|e| match e {
                OpenEvent::Opened { pid, file } => {
                    Some((*pid, file.as_ref().map(|f| f.metadata().unwrap().ino())))
                }
                OpenEvent::Overflow => None,
            })
            .collect();
        assert_eq!(
            seen,
            [(me, Some(marked_ino))],
            "expected one open of the marked file (inode {marked_ino}) by this process ({me}), \
             not the other file's; saw {events:?}"
        );
    }
}
