//! `write_iolog`: one worker's issued I/Os as a version 3 log.

use super::{Action, VERSION_3};
use crate::io_unit::Ddir;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes one worker's log. Lines go through a buffer (no allocation per I/O);
/// the first write error is kept and returned by [`IologWriter::finish`].
pub(crate) struct IologWriter {
    path: PathBuf,
    out: BufWriter<File>,
    /// The worker's files as the log names them, by index.
    names: Vec<String>,
    /// The worker's clock when the log started, ns.
    start_ns: u64,
    /// The offset of the last I/O logged: fio's sync lines carry it.
    last_offset: u64,
    error: Option<io::Error>,
}

impl IologWriter {
    /// Open `path` for appending (as fio does: workers that share a log add to
    /// it), write the version line, then `add` and `open` for each file.
    pub(crate) fn create(path: &Path, files: &[&Path], now_ns: u64) -> Result<Self, String> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| {
                format!(
                    "write_iolog={}: cannot open it: {}; give a writable file",
                    path.display(),
                    crate::errno::describe(&e)
                )
            })?;
        let mut writer = IologWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(64 * 1024, file),
            names: files.iter().map(|f| f.display().to_string()).collect(),
            start_ns: now_ns,
            last_offset: 0,
            error: None,
        };
        writer.put(format_args!("{VERSION_3}\n"));
        for action in [Action::Add, Action::Open] {
            for file in 0..writer.names.len() {
                writer.file_action(now_ns, file, action);
            }
        }
        Ok(writer)
    }

    fn put(&mut self, line: std::fmt::Arguments<'_>) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_fmt(line) {
                self.error = Some(e);
            }
        }
    }

    fn micros(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.start_ns) / 1000
    }

    fn file_action(&mut self, now_ns: u64, file: usize, action: Action) {
        let us = self.micros(now_ns);
        let name = std::mem::take(&mut self.names[file]);
        self.put(format_args!("{us} {name} {}\n", action.word()));
        self.names[file] = name;
    }

    /// An I/O issued at `now_ns`.
    #[inline]
    pub(crate) fn io(&mut self, now_ns: u64, file: u32, ddir: Ddir, offset: u64, len: u32) {
        let us = self.micros(now_ns);
        let name = std::mem::take(&mut self.names[file as usize]);
        let word = match ddir {
            Ddir::Read => Action::Read,
            Ddir::Write => Action::Write,
            Ddir::Trim => Action::Trim,
        }
        .word();
        self.put(format_args!("{us} {name} {word} {offset} {len}\n"));
        self.names[file as usize] = name;
        self.last_offset = offset;
    }

    /// A sync of `fsync=N` or `fdatasync=N` issued at `now_ns` (as fio, with the
    /// offset of the I/O before it and no length).
    pub(crate) fn sync(&mut self, now_ns: u64, file: u32, datasync: bool) {
        let us = self.micros(now_ns);
        let name = std::mem::take(&mut self.names[file as usize]);
        let word = if datasync {
            Action::Datasync
        } else {
            Action::Sync
        }
        .word();
        let offset = self.last_offset;
        self.put(format_args!("{us} {name} {word} {offset} 0\n"));
        self.names[file as usize] = name;
    }

    /// Close each file in the log and flush it; the first error, as one line.
    pub(crate) fn finish(mut self, now_ns: u64) -> Result<(), String> {
        for file in 0..self.names.len() {
            self.file_action(now_ns, file, Action::Close);
        }
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
        match self.error {
            None => Ok(()),
            Some(e) => Err(format!(
                "write_iolog={}: writing failed: {}",
                self.path.display(),
                crate::errno::describe(&e)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_has_fios_version_3_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.log");
        let files = [Path::new("a.0.0"), Path::new("b")];
        let mut w = IologWriter::create(&path, &files, 5_000).unwrap();
        w.io(7_500, 1, Ddir::Write, 4096, 512);
        w.io(9_000, 0, Ddir::Read, 0, 4096);
        w.io(9_000, 0, Ddir::Trim, 8192, 4096);
        w.sync(10_000, 1, false);
        w.finish(12_000).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = "fio version 3 iolog\n0 a.0.0 add\n0 b add\n0 a.0.0 open\n0 b open\n\
                        2 b write 4096 512\n4 a.0.0 read 0 4096\n4 a.0.0 trim 8192 4096\n\
                        5 b sync 8192 0\n7 a.0.0 close\n7 b close\n";
        assert_eq!(text, expected, "expected fio's v3 lines, saw:\n{text}");
    }

    #[test]
    fn a_second_writer_appends_as_fio_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.log");
        for _ in 0..2 {
            IologWriter::create(&path, &[Path::new("f")], 0)
                .unwrap()
                .finish(0)
                .unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.matches("fio version 3 iolog").count(),
            2,
            "expected two logs one after the other, saw:\n{text}"
        );
    }

    #[test]
    fn an_unwritable_log_is_one_line_naming_the_option() {
        let err = IologWriter::create(Path::new("/nonexistent-dir/x.log"), &[], 0)
            .err()
            .expect("a log in a missing directory cannot be opened");
        assert!(
            err.starts_with("write_iolog=/nonexistent-dir/x.log: cannot open it")
                && !err.contains('\n'),
            "expected one line naming write_iolog, saw {err:?}"
        );
    }
}
