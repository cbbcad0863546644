//! A job file's bytes → text, refusing what no job file holds (bytes that are
//! not UTF-8, control characters, absurdly long lines) with the line it is on,
//! so a binary or corrupted file fails with one short line instead of echoing it.

use crate::job::error::JobError;
use crate::job::raw::Source;
use std::path::Path;

/// Longest line accepted; fio's own limit is far below this.
pub(super) const MAX_LINE: usize = 64 * 1024;

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
