//! A job file's bytes → text, refusing what no job file holds (more than a few MiB,
//! bytes that are not UTF-8, control characters, absurdly long lines) with the line it is
//! on, so a binary or corrupted file fails with one short line instead of echoing it.

use crate::job::error::JobError;
use crate::job::raw::Source;
use std::io::Read;
use std::path::Path;

/// Longest line accepted; fio's own limit is far below this.
pub(super) const MAX_LINE: usize = 64 * 1024;

/// Largest job file read (each included file alike): real ones hold a few KiB, and a file
/// without an end (`/dev/zero`) or a disk image given by mistake must not fill the memory.
pub(super) const MAX_FILE: usize = 4 << 20;

/// A job file's bytes, at most `MAX_FILE`; why not, for the caller's message.
pub(super) fn job_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let describe = |e: std::io::Error| crate::errno::describe(&e);
    let file = std::fs::File::open(path).map_err(describe)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(describe)?;
    if bytes.len() > MAX_FILE {
        return Err(format!(
            "it holds more than {} MiB, which no job file does (is it the right file?)",
            MAX_FILE >> 20
        ));
    }
    Ok(bytes)
}

pub(super) fn job_text(path: &Path, bytes: Vec<u8>) -> Result<String, JobError> {
    let at = |index: usize| Source::File {
        path: path.to_path_buf(),
        line: u32::try_from(index + 1).unwrap_or(u32::MAX),
    };
    let refuse = |index: usize, problem: String| JobError::Syntax {
        at: at(index),
        problem,
        fix: "is this a job file? fix or remove that line".into(),
    };
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.len() > MAX_LINE {
            return Err(refuse(
                index,
                format!("the line is {} bytes long (at most {MAX_LINE})", line.len()),
            ));
        }
        if let Err(e) = std::str::from_utf8(line) {
            let column = e.valid_up_to();
            return Err(refuse(
                index,
                format!(
                    "byte 0x{:02x} at column {} is not UTF-8 text",
                    line[column],
                    column + 1
                ),
            ));
        }
        let control = line
            .iter()
            .position(|&b| b.is_ascii_control() && b != b'\t' && b != b'\r');
        if let Some(column) = control {
            return Err(refuse(
                index,
                format!(
                    "control character 0x{:02x} at column {}",
                    line[column],
                    column + 1
                ),
            ));
        }
    }
    Ok(String::from_utf8(bytes).expect("every line was checked to be UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_an_end_is_refused_after_max_file_bytes() {
        let e = job_bytes(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e,
            "it holds more than 4 MiB, which no job file does (is it the right file?)"
        );
        let dir = tempfile::tempdir().unwrap();
        let just_fits = dir.path().join("big.fio");
        std::fs::write(&just_fits, vec![b'\n'; MAX_FILE]).unwrap();
        assert_eq!(job_bytes(&just_fits).unwrap().len(), MAX_FILE);
    }

    fn check(bytes: &[u8]) -> Result<String, String> {
        job_text(Path::new("j.fio"), bytes.to_vec()).map_err(|e| e.to_string())
    }

    #[test]
    fn good_text_passes_and_bad_bytes_name_their_line() {
        assert_eq!(check(b"[a]\r\n\tbs=4k\n").unwrap(), "[a]\r\n\tbs=4k\n");
        let e = check(b"[a]\nrw=\xff\n").unwrap_err();
        assert!(
            e.starts_with("j.fio:2: byte 0xff at column 4 is not UTF-8"),
            "{e}"
        );
        let e = check(b"[a]\nbs=4k\0\n").unwrap_err();
        assert!(
            e.starts_with("j.fio:2: control character 0x00 at column 6"),
            "{e}"
        );
        let long = [b"bs=".as_slice(), &vec![b'9'; MAX_LINE]].concat();
        let e = check(&long).unwrap_err();
        assert!(
            e.starts_with("j.fio:1: the line is 65539 bytes long"),
            "{e}"
        );
        assert!(e.len() < 200);
    }
}
