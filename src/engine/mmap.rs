//! `mmap`: each file is mapped once at `open`; a read copies from the mapping into
//! the slot, a write copies the slot into the mapping (msync'd per write when the
//! job asks for synchronous writes). I/O past the mapped size is cut short, like a
//! pread at end of file; a mapping cannot grow the file. Each mapping gets the
//! job's `fadvise_hint` advice (fio's rule: random jobs random, others sequential,
//! none with fadvise_hint=0): a fault of an unadvised mapping reads around it.

use super::{trim_is_not_queued, Engine, EngineSetup, IoRequest, Queued};
use crate::job::spec::Ddir;
use iolens_sys::fd::Access;
use iolens_sys::{Mapping, Slots};
use std::io;

/// EBADF: what a write through a read-only descriptor reports.
const EBADF: i64 = 9;

pub(crate) struct Mmap {
    maps: Vec<Mapping>,
    bufs: Slots,
    sync_writes: bool,
}

/// Map read/write if the descriptor allows it, else read-only (writes then fail with EBADF).
fn map(file: &std::fs::File, size: u64, advice: Option<Access>) -> io::Result<Mapping> {
    let map = match Mapping::whole(file, size, true) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Mapping::whole(file, size, false),
        mapped => mapped,
    }?;
    if let Some(advice) = advice {
        map.advise(advice)?;
    }
    Ok(map)
}

impl Mmap {
    #[inline]
    fn write(&mut self, req: &IoRequest) -> io::Result<usize> {
        let map = &mut self.maps[req.file as usize];
        if !map.is_writable() {
            return Err(io::Error::from_raw_os_error(EBADF as i32));
        }
        let (start, end) = clip(map.len(), req.offset, req.len);
        map.as_mut_slice()[start..end].copy_from_slice(&self.bufs.slot(req.slot)[..end - start]);
        if self.sync_writes && end > start {
            map.msync(start, end - start)?;
        }
        Ok(end - start)
    }

    #[inline]
    fn read(&mut self, req: &IoRequest) -> usize {
        let map = &self.maps[req.file as usize];
        let (start, end) = clip(map.len(), req.offset, req.len);
        self.bufs.slot_mut(req.slot)[..end - start].copy_from_slice(&map.as_slice()[start..end]);
        end - start
    }
}

/// The part of `offset..offset+len` inside a mapping of `size` bytes.
#[inline]
fn clip(size: usize, offset: u64, len: u32) -> (usize, usize) {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(size);
    (start, start.saturating_add(len as usize).min(size))
}

impl Engine for Mmap {
    fn open(setup: &EngineSetup) -> io::Result<Self> {
        let maps = setup
            .files
            .iter()
            .zip(setup.file_sizes)
            .map(|(file, &size)| map(file, size, setup.advice))
            .collect::<io::Result<_>>()?;
        Ok(Self {
            maps,
            bufs: Slots::new(setup.slots, setup.slot_size, setup.align)?,
            sync_writes: setup.sync_writes,
        })
    }

    #[inline]
    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    #[inline]
    fn queue(&mut self, req: &IoRequest) -> io::Result<Queued> {
        let result = match req.ddir {
            Ddir::Read => Ok(self.read(req)),
            Ddir::Write => self.write(req),
            Ddir::Trim => return Err(trim_is_not_queued()),
        };
        Ok(Queued::Completed(super::io_result(result)))
    }

    /// Whole-mapping msync; for a mapping, data and metadata sync are the same call.
    fn sync_file(&mut self, file: u32, _datasync: bool) -> io::Result<()> {
        let map = &self.maps[file as usize];
        map.msync(0, map.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, scratch_file, setup, spec};
    use crate::job::spec::EngineKind;
    use std::fs::File;
    use std::os::unix::fs::FileExt;
    use std::sync::Arc;

    #[test]
    fn roundtrip_through_the_mapping() {
        roundtrip::<Mmap>(EngineKind::Mmap, 1);
    }

    #[test]
    fn io_past_the_end_is_cut_short() {
        let (_dir, file) = scratch_file(10_000);
        let spec = spec(EngineKind::Mmap);
        let files = [Arc::new(file)];
        let mut engine = Mmap::open(&setup(&spec, &files, &[10_000], 1)).unwrap();
        let read = IoRequest {
            slot: 0,
            ddir: Ddir::Read,
            file: 0,
            offset: 8192,
            len: 4096,
        };
        assert_eq!(
            engine.queue(&read).unwrap(),
            Queued::Completed(10_000 - 8192)
        );
        let beyond = IoRequest {
            offset: 20_000,
            ..read
        };
        assert_eq!(engine.queue(&beyond).unwrap(), Queued::Completed(0));
    }

    #[test]
    fn synchronous_writes_reach_the_file() {
        let (dir, file) = scratch_file(8192);
        let spec = spec(EngineKind::Mmap);
        let files = [Arc::new(file)];
        let mut setup = setup(&spec, &files, &[8192], 1);
        setup.sync_writes = true;
        let mut engine = Mmap::open(&setup).unwrap();
        engine.buffer(0).fill(0xab);
        let write = IoRequest {
            slot: 0,
            ddir: Ddir::Write,
            file: 0,
            offset: 4096,
            len: 4096,
        };
        assert_eq!(engine.queue(&write).unwrap(), Queued::Completed(4096));
        engine.sync_file(0, false).unwrap();
        let mut back = vec![0; 4096];
        File::open(dir.path().join("data"))
            .unwrap()
            .read_exact_at(&mut back, 4096)
            .unwrap();
        assert!(back.iter().all(|&b| b == 0xab));
    }

    #[test]
    fn write_to_a_read_only_file_fails_with_ebadf() {
        let (dir, _file) = scratch_file(4096);
        let spec = spec(EngineKind::Mmap);
        let files = [Arc::new(File::open(dir.path().join("data")).unwrap())];
        let mut engine = Mmap::open(&setup(&spec, &files, &[4096], 1)).unwrap();
        let write = IoRequest {
            slot: 0,
            ddir: Ddir::Write,
            file: 0,
            offset: 0,
            len: 4096,
        };
        assert_eq!(engine.queue(&write).unwrap(), Queued::Completed(-EBADF));
    }

    /// The kernel's flags of the mapping that starts at `addr` (`/proc/self/smaps` VmFlags).
    fn vm_flags(addr: usize) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines().skip_while(|line| {
            let start = line.split('-').next().unwrap_or("");
            usize::from_str_radix(start, 16).ok() != Some(addr)
        });
        lines.next().expect("the mapping is in smaps");
        let flags = lines
            .find_map(|line| line.strip_prefix("VmFlags:"))
            .expect("VmFlags line");
        flags.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn mappings_get_the_advice_fadvise_hint_asks_for() {
        // VmFlags: rr = MADV_RANDOM (no read-around), sr = MADV_SEQUENTIAL.
        let flags_for = |args: &[&str]| {
            let mut all = vec!["--name=m", "--ioengine=mmap", "--size=1m"];
            all.extend_from_slice(args);
            let job = crate::testutil::job_spec(&all);
            let (_dir, file) = scratch_file(64 * 1024);
            let spec = spec(EngineKind::Mmap);
            let files = [Arc::new(file)];
            let setup = EngineSetup {
                advice: crate::fileset::access_advice(&job),
                ..setup(&spec, &files, &[64 * 1024], 1)
            };
            let engine = Mmap::open(&setup).unwrap();
            vm_flags(engine.maps[0].as_slice().as_ptr() as usize)
        };
        let has = |flags: &[String], flag: &str| flags.iter().any(|f| f == flag);
        let random = flags_for(&["--rw=randread"]);
        assert!(
            has(&random, "rr") && !has(&random, "sr"),
            "randread: {random:?}"
        );
        let sequential = flags_for(&["--rw=read"]);
        assert!(
            has(&sequential, "sr") && !has(&sequential, "rr"),
            "read: {sequential:?}"
        );
        let forced = flags_for(&["--rw=read", "--fadvise_hint=random"]);
        assert!(has(&forced, "rr"), "fadvise_hint=random: {forced:?}");
        let none = flags_for(&["--rw=randread", "--fadvise_hint=0"]);
        assert!(
            !has(&none, "rr") && !has(&none, "sr"),
            "fadvise_hint=0: {none:?}"
        );
    }

    #[test]
    fn empty_file_cannot_be_opened() {
        let (_dir, file) = scratch_file(0);
        let spec = spec(EngineKind::Mmap);
        let files = [Arc::new(file)];
        let err = Mmap::open(&setup(&spec, &files, &[0], 1)).err().unwrap();
        assert!(err.to_string().contains("empty"), "{err}");
    }
}
