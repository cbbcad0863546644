//! The fio drop-in: invoked as `fio` (through a symlink), iolens behaves as `iolens run` with
//! fio's command line, so scripts that call fio run unchanged (`cmd::run_as_fio`); and
//! `iolens install-fio-shim`, which makes the link.

use super::common::{print, CmdError};
use super::EXIT_OK;
use crate::job::front::cli_args::option_text;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// What `fio --version` prints: what fio's formats carry as their version.
pub(super) fn fio_version() -> String {
    crate::report::fio::json::fio_version(env!("CARGO_PKG_VERSION"))
}

/// True when the program was started under the name `fio`.
pub fn invoked_as_fio(argv0: &str) -> bool {
    Path::new(argv0).file_name() == Some(OsStr::new("fio"))
}

/// `fio --version` (or fio's `-version` or `-v`, anywhere among the words) answers like
/// fio instead of running.
pub(super) fn asks_for_version(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "--version" || a == "-version" || a == "-v")
}

const NETWORK_MODE: &str = "fio's client/server network mode is not supported by iolens; \
     run all hosts as one run under MPI (an iolens built with --features mpi): \
     mpirun -n HOSTS iolens run JOB.fio";
const SELF_TEST: &str =
    "a test of fio's own internals (its clock, checksums or memcpy); iolens has no equivalent";
const TRIGGER: &str = "iolens runs no trigger commands; stop the run with SIGINT (it reports \
     what it did) and run the command yourself";

/// fio's flags that iolens knows but cannot honour, each with why: fio's network mode
/// (a server that waits for jobs, the client that sends them), its self-tests and its
/// trigger commands. Ignoring them would run something else than what was asked.
const FIO_ONLY_FLAGS: &[(&str, &str)] = &[
    ("server", NETWORK_MODE),
    ("client", NETWORK_MODE),
    ("daemonize", NETWORK_MODE),
    ("remote-config", NETWORK_MODE),
    ("cpuclock-test", SELF_TEST),
    ("crctest", SELF_TEST),
    ("memcpytest", SELF_TEST),
    ("trigger-file", TRIGGER),
    ("trigger-timeout", TRIGGER),
    ("trigger", TRIGGER),
    ("trigger-remote", TRIGGER),
    (
        "latency-log",
        "fio deprecated it (and refuses it too); use the job option write_lat_log",
    ),
];

/// fio's flags iolens cannot honour are refused before anything else is read, with
/// why and what to do instead.
pub(super) fn refuse_fio_only_flags(words: &[String]) -> Result<(), CmdError> {
    let refused = words
        .iter()
        .take_while(|w| *w != "--")
        .filter_map(|w| option_text(w))
        .map(|o| o.split_once('=').map_or(o, |(name, _)| name))
        .find_map(|name| FIO_ONLY_FLAGS.iter().find(|(flag, _)| *flag == name));
    match refused {
        Some((name, why)) => Err(CmdError::usage(format!("--{name}: {why}"))),
        None => Ok(()),
    }
}

/// fio's `--inflate-log=FILE`: the text of a log stored compressed, on stdout.
pub(super) fn inflate_log(path: &Path) -> Result<i32, CmdError> {
    let compressed = std::fs::read(path).map_err(|e| {
        CmdError::usage(format!(
            "--inflate-log={}: cannot read it: {e} (give a .log.fz file)",
            path.display()
        ))
    })?;
    let text = crate::runner::logs::inflate(&compressed).map_err(|why| {
        CmdError::run_failed(format!(
            "--inflate-log={}: {why} (give a log written with log_store_compressed=1)",
            path.display()
        ))
    })?;
    print(&text)
}

/// `iolens install-fio-shim DIR [--force]`: creates `DIR/fio` → this executable
/// (and DIR when missing).
pub(super) fn install(dir: &Path, force: bool) -> Result<i32, CmdError> {
    let link =
        try_install(dir, force).map_err(|e| CmdError::usage(format!("install-fio-shim: {e}")))?;
    println!(
        "{} -> iolens (put {} first in PATH to use it)",
        link.display(),
        dir.display()
    );
    Ok(EXIT_OK)
}

fn try_install(dir: &Path, force: bool) -> Result<PathBuf, ShimError> {
    std::fs::create_dir_all(dir).map_err(|source| ShimError::Directory {
        dir: dir.to_path_buf(),
        source,
    })?;
    let executable = std::env::current_exe().map_err(ShimError::Executable)?;
    let link = dir.join("fio");
    if link.symlink_metadata().is_ok() {
        if !force {
            return Err(ShimError::Exists { link });
        }
        if let Err(source) = std::fs::remove_file(&link) {
            return Err(ShimError::Replace { link, source });
        }
    }
    match std::os::unix::fs::symlink(&executable, &link) {
        Ok(()) => Ok(link),
        Err(source) => Err(ShimError::Link { link, source }),
    }
}

/// Why the `fio` link could not be installed.
#[derive(Debug, thiserror::Error)]
enum ShimError {
    /// The directory could not be created.
    #[error(
        "cannot create the directory {}: {source} (choose a directory you can write)",
        dir.display()
    )]
    Directory {
        /// The directory given.
        dir: PathBuf,
        /// Why it could not be created.
        #[source]
        source: std::io::Error,
    },
    /// The path of this executable is unknown.
    #[error("cannot find this executable: {0}")]
    Executable(#[source] std::io::Error),
    /// Something is at the link's path and `--force` was not given.
    #[error(
        "{} already exists (remove it or pass --force to replace it)",
        link.display()
    )]
    Exists {
        /// The link's path.
        link: PathBuf,
    },
    /// What is at the link's path could not be removed.
    #[error("cannot replace {}: {source}", link.display())]
    Replace {
        /// The link's path.
        link: PathBuf,
        /// Why it could not be removed.
        #[source]
        source: std::io::Error,
    },
    /// The link could not be created.
    #[error("cannot create {}: {source}", link.display())]
    Link {
        /// The link's path.
        link: PathBuf,
        /// Why it could not be created.
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_keeps_fios_prefix() {
        let version = fio_version();
        let rest = version.strip_prefix("fio-3.33-iolens-").unwrap();
        assert_eq!(rest, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn only_the_file_name_fio_counts() {
        assert!(invoked_as_fio("/usr/local/bin/fio"));
        assert!(invoked_as_fio("fio"));
        assert!(!invoked_as_fio("/usr/bin/iolens"));
        assert!(!invoked_as_fio("fio2"));
    }

    #[test]
    fn install_refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let link = try_install(dir.path(), false).unwrap();
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            std::env::current_exe().unwrap()
        );
        let error = try_install(dir.path(), false).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{} already exists (remove it or pass --force to replace it)",
                link.display()
            )
        );
        assert!(try_install(dir.path(), true).is_ok());
        let created = try_install(&dir.path().join("new/bin"), false);
        assert!(
            created.is_ok_and(|link| link.symlink_metadata().is_ok()),
            "expected a missing directory to be created with the link in it"
        );
        let under_a_file = try_install(&link.join("bin"), false)
            .unwrap_err()
            .to_string();
        assert!(
            under_a_file.starts_with("cannot create the directory")
                && under_a_file.ends_with(" (choose a directory you can write)"),
            "expected a directory that cannot be created to be named, got {under_a_file}"
        );
    }

    #[test]
    fn a_failed_link_names_it() {
        let denied = || std::io::Error::from_raw_os_error(13);
        let said = [
            ShimError::Executable(denied()),
            ShimError::Replace {
                link: "b/fio".into(),
                source: denied(),
            },
            ShimError::Link {
                link: "b/fio".into(),
                source: denied(),
            },
        ]
        .map(|e| e.to_string());
        assert_eq!(
            said,
            [
                "cannot find this executable: Permission denied (os error 13)",
                "cannot replace b/fio: Permission denied (os error 13)",
                "cannot create b/fio: Permission denied (os error 13)",
            ]
        );
    }
}
