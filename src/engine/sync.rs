//! `sync`: lseek, then read/write at the file position.
//!
//! Like fio, the lseek is skipped when the position already is the I/O's offset (a
//! sequential stream), so sequential jobs make one syscall per I/O. That needs a file
//! position nobody else moves: the runner gives each `sync` worker its own descriptor.

use super::blocking::{Blocking, Syscalls};
use crate::job::spec::EngineSpec;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

pub(crate) struct SeekReadWrite {
    /// Where each file's position is after our last I/O; `None` = unknown (after an error).
    positions: Vec<Option<u64>>,
}

impl SeekReadWrite {
    /// Run `io` at `offset`, seeking first unless already there.
    #[inline]
    fn at(
        &mut self,
        mut target: &File,
        file: usize,
        offset: u64,
        io: impl FnOnce(&File) -> io::Result<usize>,
    ) -> io::Result<usize> {
        // Unknown until this I/O succeeds.
        let known = self.positions[file].take();
        if known != Some(offset) {
            target.seek(SeekFrom::Start(offset))?;
        }
        let bytes = io(target)?;
        self.positions[file] = Some(offset + bytes as u64);
        Ok(bytes)
    }
}

impl Syscalls for SeekReadWrite {
    fn new(_spec: &EngineSpec, files: usize) -> Self {
        Self {
            positions: vec![None; files],
        }
    }

    #[inline]
    fn read(
        &mut self,
        target: &File,
        file: usize,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        self.at(target, file, offset, |mut f| f.read(buf))
    }

    #[inline]
    fn write(&mut self, target: &File, file: usize, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.at(target, file, offset, |mut f| f.write(buf))
    }
}

pub(crate) type Sync = Blocking<SeekReadWrite>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{roundtrip, roundtrip_direct, scratch_file};
    use crate::job::spec::EngineKind;
    use std::os::unix::fs::FileExt;

    #[test]
    fn buffered_roundtrip() {
        roundtrip::<Sync>(EngineKind::Sync, 1);
    }

    #[test]
    fn direct_roundtrip() {
        roundtrip_direct::<Sync>(EngineKind::Sync, 1);
    }

    #[test]
    fn seeks_only_when_the_position_is_elsewhere() {
        let (_dir, file) = scratch_file(0);
        file.write_all_at(b"abcdefgh", 0).unwrap();
        let mut calls = SeekReadWrite::new(&crate::engine::test_support::spec(EngineKind::Sync), 1);
        let mut buf = [0; 2];
        assert_eq!(calls.read(&file, 0, &mut buf, 2).unwrap(), 2);
        assert_eq!(calls.positions[0], Some(4));
        // Move the real position behind the engine's back: a skipped lseek would read "ab".
        (&file).seek(SeekFrom::Start(0)).unwrap();
        assert_eq!(calls.read(&file, 0, &mut buf, 4).unwrap(), 2);
        assert_eq!(&buf, b"ab", "sequential read must not seek");
        // The real position is now 2; a jump back to 0 must seek (else it reads "cd").
        assert_eq!(calls.read(&file, 0, &mut buf, 0).unwrap(), 2);
        assert_eq!(&buf, b"ab", "a jump must seek");
    }
}
