//! errno names in error messages: "ENOSPC (No space left on device)" is what
//! people search for; "os error 28" is not.

/// The symbolic name of the errno values a storage benchmark meets.
pub(crate) fn name(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOSYS => "ENOSYS",
        libc::ELOOP => "ELOOP",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EDQUOT => "EDQUOT",
        libc::EILSEQ => "EILSEQ",
        libc::ECANCELED => "ECANCELED",
        libc::EMEDIUMTYPE => "EMEDIUMTYPE",
        libc::ENOMEDIUM => "ENOMEDIUM",
        _ => return None,
    })
}

/// "ENOSPC (No space left on device)"; other errors as they display.
pub(crate) fn describe(e: &std::io::Error) -> String {
    let Some(errno) = e.raw_os_error() else {
        return e.to_string();
    };
    let text = e.to_string();
    let text = text
        .strip_suffix(&format!(" (os error {errno})"))
        .unwrap_or(&text);
    match name(errno) {
        Some(name) => format!("{name} ({text})"),
        None => format!("errno {errno} ({text})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_text() {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(describe(&e), "ENOSPC (No space left on device)");
        let e = std::io::Error::from_raw_os_error(4095);
        assert!(describe(&e).starts_with("errno 4095 ("), "{}", describe(&e));
        let e = std::io::Error::other("plain");
        assert_eq!(describe(&e), "plain");
    }
}
