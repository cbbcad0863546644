//! Reading fio's text logs, one line at a time.

use super::{Action, VERSION_2, VERSION_3};

/// The log format, from its first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogVersion {
    /// `NAME ACTION [OFFSET LENGTH]`.
    V2,
    /// `MICROSECONDS NAME ACTION [OFFSET LENGTH]`.
    V3,
}

impl LogVersion {
    /// The version a log's first line names; Err says what the line should be.
    pub(crate) fn from_header(line: &str) -> Result<LogVersion, String> {
        let line = line.trim_end();
        if line.starts_with(VERSION_3) {
            Ok(LogVersion::V3)
        } else if line.starts_with(VERSION_2) {
            Ok(LogVersion::V2)
        } else {
            Err(format!(
                "the first line is {line:?}, not \"{VERSION_2}\" or \"{VERSION_3}\" \
                 (version 1 logs are not read, as in fio)"
            ))
        }
    }
}

/// One line of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogLine<'a> {
    /// Version 3: microseconds since the log started.
    pub time_us: Option<u64>,
    pub file: &'a str,
    pub action: Action,
    /// I/O lines: the offset (`wait`: the pause in microseconds).
    pub offset: u64,
    pub len: u32,
}

/// What a line holds: a log line, or nothing (a blank line).
pub(crate) type ParsedLine<'a> = Option<LogLine<'a>>;

/// Parse one line of a `version` log; Err says what is wrong, in a few words.
pub(crate) fn parse_line(version: LogVersion, line: &str) -> Result<ParsedLine<'_>, String> {
    let mut words = line.split_ascii_whitespace();
    let Some(first) = words.next() else {
        return Ok(None);
    };
    let time_us = match version {
        LogVersion::V2 => None,
        LogVersion::V3 => Some(
            first
                .parse::<u64>()
                .map_err(|_| format!("{first:?} is not a time in microseconds"))?,
        ),
    };
    let file = match version {
        LogVersion::V2 => first,
        LogVersion::V3 => words
            .next()
            .ok_or("a file name and an action are missing")?,
    };
    let word = words
        .next()
        .ok_or("the action after the file name is missing")?;
    let action = Action::from_word(word).ok_or_else(|| {
        format!(
            "{word:?} is not an action (add, open, close, read, write, trim, sync, datasync{})",
            if version == LogVersion::V2 {
                ", wait"
            } else {
                ""
            }
        )
    })?;
    if action == Action::Wait && version == LogVersion::V3 {
        return Err("wait is a version 2 action; version 3 logs time each line".into());
    }
    let rest: Vec<&str> = words.collect();
    let (offset, len) = match (action.is_file_action(), rest.as_slice()) {
        (true, []) => (0, 0),
        (true, _) => return Err(format!("{word} takes no offset or length")),
        (false, [offset, len]) => (
            offset
                .parse::<u64>()
                .map_err(|_| format!("offset {offset:?} is not a number of bytes"))?,
            len.parse::<u32>()
                .map_err(|_| format!("length {len:?} is not a number of bytes below 4 GiB"))?,
        ),
        (false, _) => return Err(format!("{word} needs an offset and a length")),
    };
    Ok(Some(LogLine {
        time_us,
        file,
        action,
        offset,
        len,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_read_the_same_io() {
        let v3 = parse_line(LogVersion::V3, "153 dir/f write 4096 512\n").unwrap();
        let v2 = parse_line(LogVersion::V2, "dir/f write 4096 512").unwrap();
        let expected = LogLine {
            time_us: Some(153),
            file: "dir/f",
            action: Action::Write,
            offset: 4096,
            len: 512,
        };
        assert_eq!(v3, Some(expected), "expected the v3 write, saw {v3:?}");
        assert_eq!(
            v2,
            Some(LogLine {
                time_us: None,
                ..expected
            }),
            "expected the v2 write, saw {v2:?}"
        );
        let add = parse_line(LogVersion::V3, "0 f add").unwrap().unwrap();
        assert_eq!(
            (add.action, add.len),
            (Action::Add, 0),
            "expected an add, saw {add:?}"
        );
        assert_eq!(
            parse_line(LogVersion::V2, "  \n"),
            Ok(None),
            "expected a blank line to hold nothing"
        );
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let cases = [
            (LogVersion::V3, "f write 0 4096", "is not a time"),
            (LogVersion::V3, "1 f scribble 0 4096", "is not an action"),
            (LogVersion::V3, "1 f read 0", "needs an offset and a length"),
            (LogVersion::V3, "1 f read x 4096", "offset \"x\""),
            (LogVersion::V3, "1 f open 0 1", "takes no offset"),
            (LogVersion::V3, "1 f wait 10 0", "version 2 action"),
            (LogVersion::V2, "f read 0 8589934592", "below 4 GiB"),
        ];
        for (version, line, expected) in cases {
            let err = parse_line(version, line).expect_err(line);
            assert!(
                err.contains(expected),
                "{line:?}: expected {expected:?} in the error, saw {err:?}"
            );
        }
    }

    #[test]
    fn the_header_names_the_version() {
        assert_eq!(
            LogVersion::from_header("fio version 3 iolog\n"),
            Ok(LogVersion::V3)
        );
        assert_eq!(
            LogVersion::from_header("fio version 2 iolog"),
            Ok(LogVersion::V2)
        );
        let err = LogVersion::from_header("0 f add").unwrap_err();
        assert!(
            err.contains("version 1"),
            "expected the header error to list the versions, saw {err:?}"
        );
    }
}
