//! Opens of a target as they happen. `fanotify(7)` ([`OpenWatch`]) names the
//! process that opens a regular file; it needs CAP_SYS_ADMIN (root; `new`
//! fails with EPERM otherwise) and reports no opens of device nodes.
//! `inotify(7)` ([`OpenAlarm`]) reports opens of a device node too, but not
//! who made them.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A fanotify group told of every open of the inodes marked on it.
pub struct OpenWatch {
    queue: Queue,
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
        Ok(OpenWatch {
            queue: Queue::adopt(fd)?,
        })
    }

    /// Be told of opens of the inode `file` was opened through (for a device
    /// node: that node, not other nodes of the same device).
    pub fn mark(&self, file: impl AsFd) -> io::Result<()> {
        // SAFETY: both descriptors are open for the call (the group's owned by self, the
        // other borrowed); a null path makes the kernel mark the object of the second.
        let ret = unsafe {
            libc::fanotify_mark(
                self.queue.fd.as_raw_fd(),
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
        self.queue.wait(timeout)
    }

    /// The events queued now (none when nothing is: never blocks).
    pub fn read(&mut self) -> io::Result<Vec<OpenEvent>> {
        let bytes = self.queue.read()?;
        let end = bytes.len();
        let mut events = Vec::new();
        let meta_len = std::mem::size_of::<libc::fanotify_event_metadata>();
        let mut at = 0;
        while at + meta_len <= end {
            // SAFETY: `at + meta_len <= end == bytes.len()`, so the read stays in the
            // bytes read; read_unaligned copes with any alignment of the kernel's records.
            let meta: libc::fanotify_event_metadata =
                unsafe { std::ptr::read_unaligned(bytes.as_ptr().add(at).cast()) };
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

/// An inotify instance told of opens (IN_OPEN) of the inodes watched on it.
pub struct OpenAlarm {
    queue: Queue,
}

impl OpenAlarm {
    /// An instance whose reads never block.
    pub fn new() -> io::Result<OpenAlarm> {
        // SAFETY: plain flags; the result is a new descriptor we own, or -1.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        Ok(OpenAlarm {
            queue: Queue::adopt(fd)?,
        })
    }

    /// Be told of opens of the inode `file` was opened through (its
    /// `/proc/self/fd` link names that inode).
    pub fn watch(&self, file: impl AsFd) -> io::Result<()> {
        let link = format!("/proc/self/fd/{}\0", file.as_fd().as_raw_fd());
        // SAFETY: the instance's descriptor is open and `link` is NUL-terminated and
        // outlives the call; `file` is borrowed, so its descriptor stays open meanwhile.
        let ret = unsafe {
            libc::inotify_add_watch(
                self.queue.fd.as_raw_fd(),
                link.as_ptr().cast(),
                libc::IN_OPEN,
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait up to `timeout` for opens; true when some are queued.
    pub fn wait(&self, timeout: Duration) -> io::Result<bool> {
        self.queue.wait(timeout)
    }

    /// Take the queued events; true when there were any (never blocks).
    pub fn take(&mut self) -> io::Result<bool> {
        Ok(!self.queue.read()?.is_empty())
    }
}

/// A non-blocking notification descriptor and the buffer its events are read into.
struct Queue {
    fd: OwnedFd,
    buf: Vec<u8>,
}

impl Queue {
    /// Own `fd`, just returned by fanotify_init or inotify_init1 (-1: their error).
    fn adopt(fd: libc::c_int) -> io::Result<Queue> {
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Queue {
            // SAFETY: the init call returned a fresh descriptor nobody else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            buf: vec![0; 4096],
        })
    }

    /// poll(2) for input for up to `timeout`; an interrupted wait is a timeout.
    fn wait(&self, timeout: Duration) -> io::Result<bool> {
        wait_readable(self.fd.as_fd(), timeout)
    }

    /// What is queued now (empty when nothing is).
    fn read(&mut self) -> io::Result<&[u8]> {
        let n = read_queued(self.fd.as_fd(), &mut self.buf)?;
        Ok(&self.buf[..n])
    }
}

/// poll(2) for input on `fd` for up to `timeout`; an interrupted wait is a timeout.
fn wait_readable(fd: BorrowedFd, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one pollfd, valid for the call; the descriptor is borrowed, so open.
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

/// read(2) what a non-blocking notification descriptor has queued into `buf`:
/// the bytes read, 0 when nothing is queued.
fn read_queued(fd: BorrowedFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is writable for its whole length and outlives the call; the
    // descriptor is borrowed, so open.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
            _ => Err(e),
        };
    }
    Ok(n as usize)
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

    #[test]
    fn an_open_of_a_watched_device_node_is_reported_but_not_of_another() {
        let mut alarm = OpenAlarm::new().unwrap();
        alarm.watch(File::open("/dev/null").unwrap()).unwrap();
        assert!(!alarm.take().unwrap(), "expected nothing before any open");
        File::open("/dev/zero").unwrap();
        assert!(!alarm.take().unwrap(), "expected no alarm for /dev/zero");
        File::open("/dev/null").unwrap();
        assert!(
            alarm.wait(Duration::from_secs(10)).unwrap() && alarm.take().unwrap(),
            "expected the open of /dev/null reported"
        );
    }
}
