//! fio's file and directory operation engines (`filecreate`, `filestat`, `filedelete`,
//! `dircreate`, `dirstat`, `dirdelete`): no data moves; each I/O is one operation on the
//! name of its file, and the runner times it like any I/O, so the latencies are those of
//! the creates, stats and deletes. The files or directories the stat and delete
//! engines work on are made before the run (`fileset`), as fio lays them out.

use super::{io_result, Engine, EngineSetup, IoRequest, Queued};
use crate::job::spec::{FileOp, StatType};
use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub(crate) struct FileOps {
    op: FileOp,
    stat_type: StatType,
    /// The name of each file the I/Os address, by `IoRequest::file`.
    paths: Vec<PathBuf>,
    /// The one buffer the worker fills; nothing reads or writes it.
    buffer: Vec<u8>,
}

impl Engine for FileOps {
    fn open(setup: &EngineSetup) -> io::Result<Self> {
        let kind = setup.spec.kind;
        let op = kind.def().file_op.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("ioengine={} is not a file operation engine", kind.name()),
            )
        })?;
        Ok(Self {
            op,
            stat_type: setup.spec.stat_type,
            paths: setup.paths.to_vec(),
            buffer: vec![0; setup.slot_size],
        })
    }

    fn buffer(&mut self, _slot: u32) -> &mut [u8] {
        &mut self.buffer
    }

    /// One operation on the request's file; it "transfers" the request's length, as
    /// fio counts it.
    fn queue(&mut self, req: &IoRequest) -> io::Result<Queued> {
        let path = &self.paths[req.file as usize];
        let done = apply(self.op, self.stat_type, path).map(|()| req.len as usize);
        Ok(Queued::Completed(io_result(done)))
    }

    /// Nothing is written through a descriptor, so there is nothing to sync.
    fn sync_file(&mut self, _file: u32, _datasync: bool) -> io::Result<()> {
        Ok(())
    }
}

/// Do `op` on `path`: the syscalls fio's engines make (a created file is closed at
/// once, inside the operation).
pub(crate) fn apply(op: FileOp, stat_type: StatType, path: &Path) -> io::Result<()> {
    match op {
        FileOp::CreateFile => OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map(drop),
        FileOp::StatFile | FileOp::StatDir => match stat_type {
            StatType::Stat => iolens_sys::names::stat(path),
            StatType::Lstat => iolens_sys::names::lstat(path),
            StatType::Statx => iolens_sys::names::statx(path),
        },
        FileOp::DeleteFile => std::fs::remove_file(path),
        FileOp::CreateDir => DirBuilder::new().mode(0o700).create(path),
        FileOp::DeleteDir => std::fs::remove_dir(path),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{setup, spec};
    use super::*;
    use crate::job::spec::{Ddir, EngineKind};
    use std::fs::File;
    use std::sync::Arc;

    /// What is at `path` afterwards: "file", "dir" or "none".
    fn what_is(path: &Path) -> &'static str {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => "dir",
            Ok(_) => "file",
            Err(_) => "none",
        }
    }

    /// Runs engine `kind` on two names in a scratch dir, after `before` made them,
    /// and says what each I/O returned and what is there afterwards.
    fn run_on_two(kind: EngineKind, before: Option<FileOp>) -> (Vec<i64>, Vec<&'static str>) {
        let dir = tempfile::tempdir().unwrap();
        let paths = vec![dir.path().join("a"), dir.path().join("b")];
        if let Some(make) = before {
            for p in &paths {
                apply(make, StatType::Stat, p).unwrap();
            }
        }
        let spec = spec(kind);
        let null = Arc::new(File::open("/dev/null").unwrap());
        let files = [null.clone(), null];
        let sizes = [0, 0];
        let engine_setup = EngineSetup {
            paths: &paths,
            ..setup(&spec, &files, &sizes, 1)
        };
        let mut engine = FileOps::open(&engine_setup).unwrap();
        let results = (0..2)
            .map(|file| {
                let req = IoRequest {
                    slot: 0,
                    ddir: Ddir::Read,
                    file,
                    offset: 0,
                    len: 4096,
                };
                match engine.queue(&req).unwrap() {
                    Queued::Completed(r) => r,
                    Queued::Queued => panic!("{}: an I/O was left queued", kind.name()),
                }
            })
            .collect();
        (results, paths.iter().map(|p| what_is(p)).collect())
    }

    #[test]
    fn each_engine_does_its_operation_on_each_name() {
        let ok = vec![4096, 4096];
        let cases = [
            (EngineKind::Filecreate, None, ["file", "file"]),
            (
                EngineKind::Filestat,
                Some(FileOp::CreateFile),
                ["file", "file"],
            ),
            (
                EngineKind::Filedelete,
                Some(FileOp::CreateFile),
                ["none", "none"],
            ),
            (EngineKind::Dircreate, None, ["dir", "dir"]),
            (EngineKind::Dirstat, Some(FileOp::CreateDir), ["dir", "dir"]),
            (
                EngineKind::Dirdelete,
                Some(FileOp::CreateDir),
                ["none", "none"],
            ),
        ];
        for (kind, before, after) in cases {
            let (results, seen) = run_on_two(kind, before);
            assert_eq!(
                (results, seen),
                (ok.clone(), after.to_vec()),
                "{}: expected two successful I/Os of 4096 bytes and {after:?} left",
                kind.name()
            );
        }
    }

    #[test]
    fn a_missing_name_is_the_i_o_s_errno() {
        let enoent = vec![-i64::from(libc::ENOENT); 2];
        for kind in [
            EngineKind::Filestat,
            EngineKind::Filedelete,
            EngineKind::Dirstat,
            EngineKind::Dirdelete,
        ] {
            let (results, _) = run_on_two(kind, None);
            assert_eq!(
                results,
                enoent,
                "{} of missing names: expected -ENOENT for each I/O",
                kind.name()
            );
        }
        let (results, _) = run_on_two(EngineKind::Dircreate, Some(FileOp::CreateDir));
        assert_eq!(
            results,
            vec![-i64::from(libc::EEXIST); 2],
            "dircreate of existing directories: expected -EEXIST for each I/O"
        );
    }

    #[test]
    fn stat_types_differ_on_a_dangling_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        let errno = |t| {
            apply(FileOp::StatFile, t, &link)
                .err()
                .and_then(|e| e.raw_os_error())
        };
        assert_eq!(
            [
                errno(StatType::Stat),
                errno(StatType::Lstat),
                errno(StatType::Statx)
            ],
            [Some(libc::ENOENT), None, Some(libc::ENOENT)],
            "stat and statx follow the link (ENOENT), lstat finds the link itself"
        );
    }
}
