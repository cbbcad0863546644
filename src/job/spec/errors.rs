//! fio's `continue_on_error` and `ignore_error`: which failed I/Os a job tolerates.

use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use serde::{Deserialize, Serialize};

/// The kinds of error fio tells apart; they index `ErrorSpec`'s arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    Read = 0,
    Write = 1,
    /// A read whose data did not match (EILSEQ).
    Verify = 2,
}

/// errno values a job keeps going after, per `ErrorKind`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ErrorSpec {
    /// Per kind: `None` stops the job at the first error (fio's default); `Some(list)`
    /// tolerates the errno values in `list` and stops on any other.
    pub tolerated: [Option<Vec<i32>>; 3],
}

/// The errors `continue_on_error` tolerates when `ignore_error` names none for a kind.
const DEFAULT_TOLERATED: [i32; 2] = [libc::EIO, libc::EILSEQ];

impl ErrorSpec {
    /// True when no error is tolerated: the hot loop then never asks.
    pub(crate) fn stops_on_every_error(&self) -> bool {
        self.tolerated.iter().all(Option::is_none)
    }

    #[inline]
    pub(crate) fn tolerates(&self, kind: ErrorKind, errno: i32) -> bool {
        self.tolerated[kind as usize]
            .as_ref()
            .is_some_and(|list| list.contains(&errno))
    }

    /// From `continue_on_error` (none, read, write, io, verify, all, 0, 1) and
    /// `ignore_error`: `READ,WRITE,VERIFY` lists of errno names or numbers, each
    /// `:`-separated. fio's documentation has the two separators the other way round, but
    /// fio 3.33 reads them like this (`,ENOSPC` tolerates ENOSPC on writes), so job files
    /// behave as they do under fio.
    pub(crate) fn parse(continue_on: &str, ignore: Option<&str>) -> Result<Self, ErrorSpecError> {
        let kinds: &[ErrorKind] = match continue_on.trim().to_ascii_lowercase().as_str() {
            "none" | "0" => &[],
            "read" => &[ErrorKind::Read],
            "write" => &[ErrorKind::Write],
            "io" => &[ErrorKind::Read, ErrorKind::Write],
            "verify" => &[ErrorKind::Verify],
            "all" | "1" => &[ErrorKind::Read, ErrorKind::Write, ErrorKind::Verify],
            other => return Err(ErrorSpecError::UnknownContinue(other.into())),
        };
        let mut lists: [Option<Vec<i32>>; 3] = Default::default();
        if let Some(ignore) = ignore {
            let parts: Vec<&str> = ignore.split(',').collect();
            if parts.len() > 3 {
                return Err(ErrorSpecError::TooManyLists);
            }
            for (list, part) in lists.iter_mut().zip(parts) {
                let errnos = part
                    .split(':')
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(parse_errno)
                    .collect::<Result<Vec<i32>, _>>()?;
                if !errnos.is_empty() {
                    *list = Some(errnos);
                }
            }
        }
        // As in fio, a kind `ignore_error` names errors for is tolerated even
        // where `continue_on_error` leaves it out (it adds the kind).
        let mut spec = Self::default();
        for kind in [ErrorKind::Read, ErrorKind::Write, ErrorKind::Verify] {
            let named = lists[kind as usize].take();
            let continues = kinds.contains(&kind);
            spec.tolerated[kind as usize] =
                named.or_else(|| continues.then(|| DEFAULT_TOLERATED.to_vec()));
        }
        Ok(spec)
    }
}

/// Why `continue_on_error` or `ignore_error` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ErrorSpecError {
    /// `continue_on_error` names no kind fio knows.
    #[error("unknown value '{0}' (use none, read, write, io, verify or all)")]
    UnknownContinue(String),
    /// `ignore_error` has more lists than kinds.
    #[error("more than three ','-separated lists (read,write,verify)")]
    TooManyLists,
    /// An `ignore_error` number below 1.
    #[error("'{0}' is not an errno number")]
    NotErrnoNumber(String),
    /// An `ignore_error` name not in `ERRNO_NAMES`.
    #[error("unknown errno name '{0}' (give its number instead)")]
    UnknownErrnoName(String),
}

impl ErrorSpecError {
    /// True when `ignore_error`'s value is at fault, not `continue_on_error`'s.
    fn blames_ignore_error(&self) -> bool {
        !matches!(self, Self::UnknownContinue(_))
    }
}

/// The kind of a failed I/O: EILSEQ is a verification failure, else its direction.
pub(crate) fn error_kind(is_write: bool, errno: i32) -> ErrorKind {
    match (errno, is_write) {
        (libc::EILSEQ, _) => ErrorKind::Verify,
        (_, true) => ErrorKind::Write,
        (_, false) => ErrorKind::Read,
    }
}

/// The errno names fio's `ignore_error` is most often given; numbers work for any.
const ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("EBADF", libc::EBADF),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("ENODEV", libc::ENODEV),
    ("EINVAL", libc::EINVAL),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("EPIPE", libc::EPIPE),
    ("ERANGE", libc::ERANGE),
    ("ENODATA", libc::ENODATA),
    ("ETIME", libc::ETIME),
    ("ENOLINK", libc::ENOLINK),
    ("EPROTO", libc::EPROTO),
    ("EBADMSG", libc::EBADMSG),
    ("EOVERFLOW", libc::EOVERFLOW),
    ("EILSEQ", libc::EILSEQ),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("ECANCELED", libc::ECANCELED),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
    ("ENOMEDIUM", libc::ENOMEDIUM),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("EDQUOT", libc::EDQUOT),
    ("ENOTSUP", libc::ENOTSUP),
];

fn parse_errno(name: &str) -> Result<i32, ErrorSpecError> {
    if let Ok(number) = name.parse::<i32>() {
        return match number {
            1.. => Ok(number),
            _ => Err(ErrorSpecError::NotErrnoNumber(name.into())),
        };
    }
    ERRNO_NAMES
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(name))
        .map(|&(_, errno)| errno)
        .ok_or_else(|| ErrorSpecError::UnknownErrnoName(name.into()))
}

impl Layers<'_> {
    pub(crate) fn errors(&self) -> Result<ErrorSpec, JobError> {
        let continue_on = self
            .setting(opt::CONTINUE_ON_ERROR)
            .expect("continue_on_error has a default");
        let ignore = self.given(opt::IGNORE_ERROR);
        ErrorSpec::parse(continue_on.text, ignore.map(|s| s.text)).map_err(|e| {
            match ignore.filter(|_| e.blames_ignore_error()) {
                Some(ignore) => ignore.invalid(e),
                None => continue_on.invalid(e),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_stops_on_every_error() {
        let spec = ErrorSpec::parse("none", None).unwrap();
        assert!(spec.stops_on_every_error());
        assert!(!spec.tolerates(ErrorKind::Read, libc::EIO));
    }

    #[test]
    fn ignore_error_alone_tolerates_what_it_names_as_fio_does() {
        let spec = ErrorSpec::parse("none", Some("EIO,ENOSPC")).unwrap();
        assert!(
            spec.tolerates(ErrorKind::Read, libc::EIO),
            "expected EIO on reads tolerated, saw {spec:?}"
        );
        assert!(
            spec.tolerates(ErrorKind::Write, libc::ENOSPC),
            "expected ENOSPC on writes tolerated, saw {spec:?}"
        );
        assert!(
            !spec.tolerates(ErrorKind::Write, libc::EIO) && spec.tolerated[2].is_none(),
            "expected nothing else tolerated, saw {spec:?}"
        );
    }

    #[test]
    fn continue_on_error_tolerates_eio_and_eilseq_unless_ignore_error_names_others() {
        let spec = ErrorSpec::parse("write", None).unwrap();
        assert!(spec.tolerates(ErrorKind::Write, libc::EIO));
        assert!(!spec.tolerates(ErrorKind::Write, libc::ENOSPC));
        assert!(!spec.tolerates(ErrorKind::Read, libc::EIO));
        // As fio 3.33 runs it: ',' between directions, ':' within one.
        let spec = ErrorSpec::parse("all", Some(",ENOSPC:5,")).unwrap();
        assert!(spec.tolerates(ErrorKind::Write, libc::ENOSPC));
        assert!(spec.tolerates(ErrorKind::Write, 5));
        assert!(!spec.tolerates(ErrorKind::Write, libc::EILSEQ));
        // Kinds the list leaves blank keep the defaults.
        assert!(spec.tolerates(ErrorKind::Read, libc::EIO));
        assert!(spec.tolerates(ErrorKind::Verify, libc::EILSEQ));
        let read_only = ErrorSpec::parse("write", Some("ENOSPC:EIO")).unwrap();
        assert!(!read_only.tolerates(ErrorKind::Write, libc::ENOSPC));
    }

    #[test]
    fn words_and_numbers_of_continue_on_error() {
        let io = ErrorSpec::parse("io", None).unwrap();
        assert!(io.tolerated[0].is_some() && io.tolerated[1].is_some());
        assert!(io.tolerated[2].is_none());
        assert_eq!(ErrorSpec::parse("1", None), ErrorSpec::parse("all", None));
        assert!(ErrorSpec::parse("sometimes", None).is_err());
        assert!(ErrorSpec::parse("all", Some("ENOTANERROR")).is_err());
    }

    #[test]
    fn a_refused_value_reads_as_before() {
        let said = |continue_on: &str, ignore: Option<&str>| {
            ErrorSpec::parse(continue_on, ignore)
                .expect_err("a bad value")
                .to_string()
        };
        assert_eq!(
            said("Sometimes", None),
            "unknown value 'sometimes' (use none, read, write, io, verify or all)"
        );
        assert_eq!(
            said("all", Some("EIO,EIO,EIO,EIO")),
            "more than three ','-separated lists (read,write,verify)"
        );
        assert_eq!(said("all", Some("-5")), "'-5' is not an errno number");
        assert_eq!(
            said("all", Some("ENOTANERROR")),
            "unknown errno name 'ENOTANERROR' (give its number instead)"
        );
        assert!(ErrorSpec::parse("all", Some("EIO,EIO,EIO,EIO")).is_err());
    }

    #[test]
    fn eilseq_is_a_verify_error_whatever_the_direction() {
        assert_eq!(error_kind(false, libc::EILSEQ), ErrorKind::Verify);
        assert_eq!(error_kind(true, libc::EIO), ErrorKind::Write);
        assert_eq!(error_kind(false, libc::EIO), ErrorKind::Read);
    }
}
