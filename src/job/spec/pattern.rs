//! fio's pattern notation, shared by `buffer_pattern` and `verify_pattern`. Pieces
//! written one after the other (spaces between them are allowed too) give the bytes:
//! - `0xdeadface`: hex digits, two to a byte, any length (an odd count starts with a
//!   lone nibble: `0xabc` is 0a bc); a `0` right before the next `0x` starts that one;
//! - `-12`, `66`: a decimal number in the 32-bit signed range, its bytes low first, as
//!   many as the value needs (0 is one byte, a negative number four);
//! - `"abcd"`: the bytes of a string (no escapes);
//! - `'name'`: the contents of a file (at most [`MAX_PATTERN_LEN`] bytes of it);
//! - `%o` (`verify_pattern` only, as in fio): 8 bytes that hold the offset of the
//!   block, little-endian, filled in per block ([`Pattern::fill`]).

use crate::units::UnitError;
use serde::{Deserialize, Serialize};
use std::io::Read;

/// Most bytes a pattern may hold (fio's limit as well).
pub(crate) const MAX_PATTERN_LEN: usize = 128 << 20;

/// Bytes `%o` stands for.
const OFFSET_LEN: usize = 8;

/// A `verify_pattern`: its bytes, and where in them `%o` puts the block's offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Pattern {
    /// The pattern with zeros where each `%o` goes.
    pub bytes: Vec<u8>,
    /// Where each `%o`'s 8 bytes start in `bytes`.
    pub offsets_at: Vec<usize>,
}

impl Pattern {
    /// Fill `buf` with the pattern repeated from its start, each `%o` holding `offset`
    /// (as fio pastes the offset into the pattern, then repeats it).
    pub(crate) fn fill(&self, buf: &mut [u8], offset: u64) {
        let len = self.bytes.len();
        let stamp = offset.to_le_bytes();
        for chunk in buf.chunks_mut(len) {
            chunk.copy_from_slice(&self.bytes[..chunk.len()]);
            for &at in &self.offsets_at {
                if at < chunk.len() {
                    let n = (chunk.len() - at).min(OFFSET_LEN);
                    chunk[at..at + n].copy_from_slice(&stamp[..n]);
                }
            }
        }
    }
}

/// `buffer_pattern`: fio takes no `%o` there.
pub(crate) fn parse_pattern(text: &str) -> Result<Vec<u8>, UnitError> {
    let pattern = parse_verify_pattern(text)?;
    match pattern.offsets_at.is_empty() {
        true => Ok(pattern.bytes),
        false => Err(UnitError::Invalid(
            "%o (the block offset) is only filled in by verify_pattern; write the bytes instead"
                .into(),
        )),
    }
}

/// `verify_pattern`: the bytes and where `%o` goes.
pub(crate) fn parse_verify_pattern(text: &str) -> Result<Pattern, UnitError> {
    let invalid = |why: String| UnitError::Invalid(why);
    let mut bytes = Vec::new();
    let mut offsets_at = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        rest = match rest.as_bytes()[0] {
            quote @ (b'"' | b'\'') => {
                let inner = &rest[1..];
                let end = inner
                    .find(quote as char)
                    .ok_or_else(|| invalid(format!("unclosed {} in the pattern", quote as char)))?;
                let piece = &inner[..end];
                if quote == b'"' {
                    bytes.extend_from_slice(piece.as_bytes());
                } else {
                    read_pattern_file(piece, &mut bytes)?;
                }
                &inner[end + 1..]
            }
            b'%' if rest.starts_with("%o") => {
                offsets_at.push(bytes.len());
                bytes.extend_from_slice(&[0; OFFSET_LEN]);
                &rest[2..]
            }
            b'%' => {
                return Err(invalid(
                    "only %o (the block offset) is a format in fio's patterns".into(),
                ))
            }
            _ if is_hex_start(rest) => hex(&rest[2..], &mut bytes)?,
            _ => decimal(rest, &mut bytes)?,
        }
        .trim_start();
        if bytes.len() > MAX_PATTERN_LEN {
            return Err(invalid(format!(
                "the pattern is longer than {MAX_PATTERN_LEN} bytes"
            )));
        }
    }
    if bytes.is_empty() {
        return Err(invalid("the pattern is empty".into()));
    }
    Ok(Pattern { bytes, offsets_at })
}

fn is_hex_start(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 2 && b[0] == b'0' && (b[1] | 0x20) == b'x'
}

/// The hex digits at the start of `digits` (after `0x`); returns what follows.
fn hex<'t>(digits: &'t str, bytes: &mut Vec<u8>) -> Result<&'t str, UnitError> {
    let mut len = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
    // `0xff0x14`: the 0 before the second x belongs to the next number.
    if len > 0 && is_hex_start(&digits[len - 1..]) {
        len -= 1;
    }
    let run = &digits[..len];
    if run.is_empty() {
        return Err(UnitError::Invalid(format!(
            "'0x{}' has no hex digits after 0x",
            first_word(digits)
        )));
    }
    // An odd count means a leading zero nibble: 0xabc is 0x0a 0xbc.
    let lone = len % 2;
    if lone == 1 {
        bytes.push(nibble(run.as_bytes()[0]));
    }
    for pair in run.as_bytes()[lone..].chunks(2) {
        bytes.push(nibble(pair[0]) << 4 | nibble(pair[1]));
    }
    Ok(&digits[len..])
}

fn nibble(digit: u8) -> u8 {
    (digit as char).to_digit(16).expect("a checked hex digit") as u8
}

/// A signed decimal number at the start of `text`; returns what follows.
fn decimal<'t>(text: &'t str, bytes: &mut Vec<u8>) -> Result<&'t str, UnitError> {
    let sign = usize::from(text.starts_with(['-', '+']));
    let mut end = sign + text[sign..].bytes().take_while(u8::is_ascii_digit).count();
    // `-100xab` is -10 followed by 0xab.
    if end > sign && is_hex_start(&text[end - 1..]) {
        end -= 1;
    }
    let not_a_number = || {
        UnitError::Invalid(format!(
            "'{}' is not 0x hex, a decimal number, a \"string\" or a 'file'",
            first_word(text)
        ))
    };
    if end == sign {
        return Err(not_a_number());
    }
    let value: i32 = text[..end].parse().map_err(|_| {
        UnitError::Invalid(format!(
            "'{}' is outside the 32-bit range of a decimal pattern",
            &text[..end]
        ))
    })?;
    let mut rest = value as u32;
    loop {
        bytes.push(rest as u8);
        rest >>= 8;
        if rest == 0 {
            break;
        }
    }
    Ok(&text[end..])
}

fn read_pattern_file(path: &str, bytes: &mut Vec<u8>) -> Result<(), UnitError> {
    let cannot = |e: std::io::Error| {
        UnitError::Invalid(format!("cannot read the pattern file '{path}': {e}"))
    };
    let file = std::fs::File::open(path).map_err(cannot)?;
    let room = (MAX_PATTERN_LEN + 1).saturating_sub(bytes.len()) as u64;
    let before = bytes.len();
    file.take(room).read_to_end(bytes).map_err(cannot)?;
    if bytes.len() == before {
        return Err(UnitError::Invalid(format!(
            "the pattern file '{path}' is empty"
        )));
    }
    Ok(())
}

fn first_word(text: &str) -> &str {
    text.split(char::is_whitespace).next().unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Vec<u8> {
        parse_pattern(text).unwrap_or_else(|e| panic!("expected {text} to parse, got {e}"))
    }

    #[test]
    fn fio_documented_cases() {
        // The examples of fio's pattern parser documentation, byte for byte.
        let cases: &[(&str, &[u8])] = &[
            ("\"abcd\"", b"abcd"),
            ("-1024", &[0x00, 0xfc, 0xff, 0xff]),
            ("66", &[0x42]),
            ("0xFF0X1", &[0xff, 0x01]),
            ("\"123\"0xFFeeCC", &[0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]),
            ("-100xab\"1\"", &[0xf6, 0xff, 0xff, 0xff, 0xab, 0x31]),
            ("0xdeadface", &[0xde, 0xad, 0xfa, 0xce]),
            (
                "\"abcd\"-12",
                &[b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff],
            ),
            ("0xff0x14", &[0xff, 0x14]),
            ("0xabc", &[0x0a, 0xbc]),
            ("0", &[0]),
            ("256", &[0x00, 0x01]),
            ("2147483647", &[0xff, 0xff, 0xff, 0x7f]),
            ("0x01 7 \"a\"", &[1, 7, b'a']),
        ];
        for &(text, bytes) in cases {
            assert_eq!(parsed(text), bytes, "expected {text} to give {bytes:02x?}");
        }
        let long = format!("0x{}", "fe".repeat(21));
        assert_eq!(
            parsed(&long),
            [0xfe; 21],
            "expected 21 bytes of fe from {long}"
        );
    }

    #[test]
    fn percent_o_reserves_eight_bytes_filled_with_the_offset() {
        // fio's documented cases with %o: zeros where the offset goes.
        let pattern = parse_verify_pattern("-100xab\"1\"%o\"2\"").expect("a pattern with %o");
        let mut expected = vec![0xf6, 0xff, 0xff, 0xff, 0xab, 0x31];
        expected.extend([0; 8]);
        expected.push(0x32);
        assert_eq!(
            (&pattern.bytes, &pattern.offsets_at),
            (&expected, &vec![6]),
            "expected %o as 8 zero bytes at 6"
        );
        let twice = parse_verify_pattern("%o0xdeadbeef%o").expect("two %o");
        assert_eq!(
            (twice.bytes.len(), twice.offsets_at),
            (20, vec![0, 12]),
            "expected %o, 4 bytes, %o"
        );
        // Filled in: the offset little-endian in each repetition, cut at the end.
        let mut buf = [0u8; 20];
        parse_verify_pattern("\"ab\"%o")
            .expect("a pattern")
            .fill(&mut buf, 0x0102);
        assert_eq!(
            buf,
            [b'a', b'b', 2, 1, 0, 0, 0, 0, 0, 0, b'a', b'b', 2, 1, 0, 0, 0, 0, 0, 0],
            "expected ab and the offset, twice"
        );
        let mut short = [0u8; 5];
        parse_verify_pattern("\"ab\"%o")
            .expect("a pattern")
            .fill(&mut short, 0x0102);
        assert_eq!(
            short,
            [b'a', b'b', 2, 1, 0],
            "expected the offset cut short"
        );
    }

    #[test]
    fn a_quoted_name_reads_the_file() {
        let dir = tempfile::tempdir().expect("a scratch dir");
        let path = dir.path().join("pat");
        std::fs::write(&path, b"xyz").expect("write the pattern file");
        let text = format!("0x01'{}'\"q\"", path.display());
        assert_eq!(parsed(&text), b"\x01xyzq", "expected 01, the file, then q");
    }

    #[test]
    fn bad_patterns_name_what_is_wrong() {
        let cases = [
            ("", "empty"),
            ("0x", "no hex digits"),
            ("0xzz", "no hex digits"),
            ("\"open", "unclosed \""),
            ("'open", "unclosed '"),
            ("\"\"", "empty"),
            ("word", "'word' is not 0x hex"),
            ("2147483648", "outside the 32-bit range"),
            ("%o", "only filled in by verify_pattern"),
            ("%x", "only %o"),
            ("'/nonexistent/pattern'", "cannot read the pattern file"),
        ];
        for (text, expected) in cases {
            match parse_pattern(text) {
                Ok(bytes) => panic!("expected {text:?} to be refused, got {bytes:02x?}"),
                Err(e) => assert!(
                    e.to_string().contains(expected),
                    "expected the error for {text:?} to say {expected:?}, got {e}"
                ),
            }
        }
    }
}
