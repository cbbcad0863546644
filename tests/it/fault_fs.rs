//! A fault-injecting FUSE filesystem for the tests: it serves one file, backed by
//! a real file in the test's scratch directory, and the test tells it at run time
//! which I/Os to fail (an errno, once or always), delay, drop (acknowledge without
//! storing), tear (store the first half) or hang until released. Every read and
//! write reaches it (the file is opened in FUSE's direct-I/O mode, no page cache),
//! so the offsets it sees are the ones the program under test issued. It can
//! also play storage that allocates on the first write (a thin device): writes
//! to ranges never written are slow, and the file shows its holes.
//!
//! Unmounted on drop, also when the test panics; mounted with `auto_unmount`, so
//! even a test process that is killed leaves no mount behind.

use crate::support::{is_root, scratch, unmount};
use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, SessionACL, WriteFlags,
};
use std::ffi::OsStr;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tempfile::TempDir;

/// Which I/Os a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
}

/// What happens to an I/O a rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Answer with this errno.
    Fail(i32),
    /// Answer (and store) only after this long.
    Delay(Duration),
    /// Acknowledge a write without storing it.
    Drop,
    /// Store only the first half of a write, acknowledge all of it.
    Tear,
    /// Answer only when the test calls `release` (or the filesystem goes away).
    Hang,
}

/// One instruction: `fault` for `op`s that touch `range`, once or every time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    op: Op,
    range: Range<u64>,
    fault: Fault,
    once: bool,
    /// Matching I/Os to let through before the fault applies.
    skip: u32,
}

impl Rule {
    /// Every `op` overlapping `range` gets `fault`.
    pub(crate) fn always(op: Op, range: Range<u64>, fault: Fault) -> Rule {
        Rule {
            op,
            range,
            fault,
            once: false,
            skip: 0,
        }
    }

    /// Only the first `op` overlapping `range` gets `fault`.
    pub(crate) fn once(op: Op, range: Range<u64>, fault: Fault) -> Rule {
        Rule {
            once: true,
            ..Rule::always(op, range, fault)
        }
    }

    /// Let the first `n` matching I/Os through untouched.
    pub(crate) fn after(self, n: u32) -> Rule {
        Rule { skip: n, ..self }
    }

    fn matches(&self, op: Op, offset: u64, len: u64) -> bool {
        self.op == op && offset < self.range.end && self.range.start < offset + len.max(1)
    }
}

/// An I/O held back by a `Hang` or `Delay` rule, answered later.
enum Pending {
    Read {
        offset: u64,
        size: u32,
        reply: ReplyData,
    },
    Write {
        offset: u64,
        data: Vec<u8>,
        reply: ReplyWrite,
    },
}

/// What the filesystem and the test share.
struct State {
    backing: File,
    rules: Mutex<Vec<Rule>>,
    held: Mutex<Vec<Pending>>,
    /// How many I/Os a rule has applied to.
    fired: AtomicU64,
    /// Nanoseconds a write to a range never written waits (see
    /// `FaultFs::allocate_on_first_write`); 0 when off.
    first_write_ns: AtomicU64,
}

impl State {
    /// The first rule for this I/O (a `once` rule is used up).
    fn fault_for(&self, op: Op, offset: u64, len: u64) -> Option<Fault> {
        let mut rules = self.rules.lock().unwrap();
        let at = rules.iter().position(|r| r.matches(op, offset, len))?;
        if rules[at].skip > 0 {
            rules[at].skip -= 1;
            return None;
        }
        self.fired.fetch_add(1, Ordering::Relaxed);
        let fault = rules[at].fault;
        if rules[at].once {
            rules.remove(at);
        }
        Some(fault)
    }

    /// The delay of a write to `offset..offset + len` when it is the first
    /// there: the backing file holds no data somewhere in it.
    fn first_write(&self, offset: u64, len: u64) -> Option<Fault> {
        let ns = self.first_write_ns.load(Ordering::Relaxed);
        if ns == 0 {
            return None;
        }
        let hole = iolens_sys::fd::next_hole(&self.backing, offset).ok()?;
        (hole < offset + len).then(|| Fault::Delay(Duration::from_nanos(ns)))
    }

    /// Answer an I/O as a healthy disk would.
    fn complete(&self, io: Pending) {
        match io {
            Pending::Read {
                offset,
                size,
                reply,
            } => {
                let mut buf = vec![0u8; size as usize];
                match self.backing.read_at(&mut buf, offset) {
                    Ok(n) => reply.data(&buf[..n]),
                    Err(e) => reply.error(errno_of(&e)),
                }
            }
            Pending::Write {
                offset,
                data,
                reply,
            } => match self.backing.write_all_at(&data, offset) {
                Ok(()) => reply.written(data.len() as u32),
                Err(e) => reply.error(errno_of(&e)),
            },
        }
    }

    /// Apply `fault` (if any) to `io`.
    fn handle(self: &Arc<Self>, fault: Option<Fault>, io: Pending) {
        match (fault, io) {
            (None, io) => self.complete(io),
            (Some(Fault::Fail(errno)), Pending::Read { reply, .. }) => {
                reply.error(Errno::from_i32(errno))
            }
            (Some(Fault::Fail(errno)), Pending::Write { reply, .. }) => {
                reply.error(Errno::from_i32(errno))
            }
            (Some(Fault::Delay(by)), io) => {
                let state = self.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(by);
                    state.complete(io);
                });
            }
            (Some(Fault::Hang), io) => self.held.lock().unwrap().push(io),
            (Some(Fault::Drop), Pending::Write { data, reply, .. }) => {
                reply.written(data.len() as u32)
            }
            (
                Some(Fault::Tear),
                Pending::Write {
                    offset,
                    data,
                    reply,
                },
            ) => {
                let half = &data[..data.len() / 2];
                match self.backing.write_all_at(half, offset) {
                    Ok(()) => reply.written(data.len() as u32),
                    Err(e) => reply.error(errno_of(&e)),
                }
            }
            // Dropping or tearing a read means nothing: it is served whole.
            (Some(Fault::Drop | Fault::Tear), io) => self.complete(io),
        }
    }
}

fn errno_of(e: &std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

const FILE_INO: INodeNo = INodeNo(2);
/// No attribute caching: the file's size is always asked for.
const TTL: Duration = Duration::ZERO;

struct FaultyFs {
    name: String,
    state: Arc<State>,
}

impl FaultyFs {
    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, size, perm, nlink) = if ino == INodeNo::ROOT {
            (FileType::Directory, 0, 0o755, 2)
        } else if ino == FILE_INO {
            let meta = self.state.backing.metadata().ok()?;
            (FileType::RegularFile, meta.len(), 0o644, 1)
        } else {
            return None;
        };
        Some(FileAttr {
            ino,
            size,
            blocks: self.blocks(size),
            atime: SystemTime::UNIX_EPOCH,
            mtime: SystemTime::UNIX_EPOCH,
            ctime: SystemTime::UNIX_EPOCH,
            crtime: SystemTime::UNIX_EPOCH,
            kind,
            perm,
            nlink,
            uid: 0,
            gid: 0,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        })
    }

    /// The 512-byte blocks the file holds: all of them, unless it plays
    /// storage that allocates on the first write (then the backing file's).
    fn blocks(&self, size: u64) -> u64 {
        let honest = self.state.first_write_ns.load(Ordering::Relaxed) > 0;
        match self.state.backing.metadata() {
            Ok(meta) if honest => meta.blocks(),
            _ => size.div_ceil(512),
        }
    }

    fn reply_attr(&self, ino: INodeNo, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }
}

impl Filesystem for FaultyFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.attr(FILE_INO) {
            Some(attr) if parent == INodeNo::ROOT && name == OsStr::new(&self.name) => {
                reply.entry(&TTL, &attr, Generation(0))
            }
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        self.reply_attr(ino, reply);
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if let Some(size) = size.filter(|_| ino == FILE_INO) {
            if let Err(e) = self.state.backing.set_len(size) {
                return reply.error(errno_of(&e));
            }
        }
        self.reply_attr(ino, reply);
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino == FILE_INO {
            reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
        } else {
            reply.error(Errno::EISDIR);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let fault = self.state.fault_for(Op::Read, offset, size.into());
        let io = Pending::Read {
            offset,
            size,
            reply,
        };
        self.state.handle(fault, io);
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let len = data.len() as u64;
        let fault = self
            .state
            .fault_for(Op::Write, offset, len)
            .or_else(|| self.state.first_write(offset, len));
        let io = Pending::Write {
            offset,
            data: data.to_vec(),
            reply,
        };
        self.state.handle(fault, io);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }
}

/// A mounted fault-injecting filesystem serving one file.
pub(crate) struct FaultFs {
    /// Holds the mount point and the backing file.
    dir: TempDir,
    name: String,
    state: Arc<State>,
    session: Option<BackgroundSession>,
}

impl FaultFs {
    /// Serve a file called `name` of `size` zero bytes; None (with the reason
    /// printed) where FUSE cannot be mounted.
    pub(crate) fn mount(name: &str, size: u64) -> Option<FaultFs> {
        if !Path::new("/dev/fuse").exists() {
            eprintln!("skipped: no /dev/fuse (FUSE is not available here)");
            return None;
        }
        if !is_root() {
            eprintln!("skipped: the fault-injection tests mount FUSE as root (CI runs as root)");
            return None;
        }
        let dir = scratch();
        let backing = dir.path().join("backing");
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&backing)
            .unwrap();
        file.set_len(size).unwrap();
        let mount_point = dir.path().join("mnt");
        std::fs::create_dir(&mount_point).unwrap();
        let state = Arc::new(State {
            backing: file,
            rules: Mutex::default(),
            held: Mutex::default(),
            fired: AtomicU64::new(0),
            first_write_ns: AtomicU64::new(0),
        });
        let fs = FaultyFs {
            name: name.to_string(),
            state: state.clone(),
        };
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("iolens-faultfs".into()),
            MountOption::AutoUnmount,
        ];
        config.acl = SessionACL::All;
        config.n_threads = Some(2);
        match fuser::spawn_mount(fs, &mount_point, &config) {
            Ok(session) => Some(FaultFs {
                dir,
                name: name.to_string(),
                state,
                session: Some(session),
            }),
            Err(e) => {
                eprintln!("skipped: cannot mount a FUSE filesystem: {e}");
                None
            }
        }
    }

    /// The served file, as the program under test opens it.
    pub(crate) fn file(&self) -> PathBuf {
        self.mount_point().join(&self.name)
    }

    fn mount_point(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }

    /// What the file really holds, read past the faults.
    pub(crate) fn stored(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join("backing")).unwrap()
    }

    pub(crate) fn inject(&self, rule: Rule) {
        self.state.rules.lock().unwrap().push(rule);
    }

    /// Play storage that allocates on the first write: a write to a range
    /// never written answers only after `delay`, and the file reports the
    /// blocks its backing file holds, so its holes show (it starts all hole).
    pub(crate) fn allocate_on_first_write(&self, delay: Duration) {
        let ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.state.first_write_ns.store(ns, Ordering::Relaxed);
    }

    /// Write the whole file once, behind the filesystem's back: no range of
    /// it is fresh any more.
    pub(crate) fn write_all_of_it(&self) {
        let size = self.state.backing.metadata().unwrap().len();
        self.state
            .backing
            .write_all_at(&vec![0x5a; size as usize], 0)
            .unwrap();
        self.state.backing.sync_all().unwrap();
    }

    /// Forget every rule (I/Os already held stay held).
    pub(crate) fn heal(&self) {
        self.state.rules.lock().unwrap().clear();
    }

    /// How many I/Os a rule has applied to so far.
    pub(crate) fn fired(&self) -> u64 {
        self.state.fired.load(Ordering::Relaxed)
    }

    /// How many I/Os are held by `Hang` rules now.
    pub(crate) fn held(&self) -> usize {
        self.state.held.lock().unwrap().len()
    }

    /// Answer every held I/O as a healthy disk would; returns how many there were.
    pub(crate) fn release(&self) -> usize {
        let held: Vec<Pending> = std::mem::take(&mut *self.state.held.lock().unwrap());
        let count = held.len();
        held.into_iter().for_each(|io| self.state.complete(io));
        count
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        self.heal();
        self.release();
        // Dropping the session unmounts; a mount still busy is detached lazily.
        drop(self.session.take());
        unmount(&self.mount_point());
    }
}
