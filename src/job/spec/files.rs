//! How a job's files are created, prepared and guarded (`FilesSpec`: `fallocate`,
//! `pre_read`, `fadvise_hint`, `lockfile`, …).

use super::*;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::opt;
use serde::{Deserialize, Serialize};

/// fio's `fallocate=`: how a file that is laid out gets its blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Fallocate {
    /// Nothing reserved: a new file of a write job starts empty and grows as it is written.
    None,
    /// `fallocate(2)`; where the filesystem lacks it, the file is only extended.
    Native,
    /// `posix_fallocate(3)` (emulated by writing where the filesystem lacks fallocate).
    Posix,
    /// Blocks reserved but the length left as it is (`FALLOC_FL_KEEP_SIZE`).
    Keep,
    /// Extended to its size with no blocks reserved (a sparse file).
    Truncate,
}

choice_words!(Fallocate {
    "none" => Fallocate::None,
    "native" => Fallocate::Native,
    "posix" => Fallocate::Posix,
    "keep" => Fallocate::Keep,
    "truncate" => Fallocate::Truncate,
    "0" => Fallocate::None,
    "1" => Fallocate::Posix,
});

/// fio's `fadvise_hint=`: access advice given on each file before the first I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum FadviseHint {
    None,
    /// Random for random patterns, sequential for the others (fio's default, `1`).
    ByPattern,
    Sequential,
    Random,
}

choice_words!(FadviseHint {
    "0" => FadviseHint::None,
    "1" => FadviseHint::ByPattern,
    "sequential" => FadviseHint::Sequential,
    "random" => FadviseHint::Random,
});

/// How a job's files are created, prepared and guarded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FilesSpec {
    /// `allow_file_create=0`: a file that does not exist is an error.
    pub allow_file_create: bool,
    /// `create_only`: lay out the files and do no I/O.
    pub create_only: bool,
    /// `create_on_open`: a missing file is created empty when the job's group starts, not laid out.
    pub create_on_open: bool,
    pub fallocate: Fallocate,
    /// `pre_read`: read the job's regions into the page cache before it starts.
    pub pre_read: bool,
    pub fadvise: FadviseHint,
    /// `allow_mounted_write`: writing to a mounted block device is allowed.
    pub allow_mounted_write: bool,
    /// `unlink_each_loop`: each pass of `loops` after the first finds the job's files empty.
    pub unlink_each_loop: bool,
    /// `ioscheduler=`: the scheduler the devices holding the job's files use while it runs.
    pub ioscheduler: Option<String>,
    /// `lockfile=`: how the job's workers serialise their I/O on a shared file.
    pub lockfile: LockMode,
}

/// `lockfile=`: how the I/O of a job's workers on a shared file is serialised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum LockMode {
    #[default]
    None,
    Exclusive,
    ReadWrite,
}

choice_words!(LockMode {
    "none" => LockMode::None,
    "exclusive" => LockMode::Exclusive,
    "readwrite" => LockMode::ReadWrite,
});

impl Layers<'_> {
    pub(crate) fn files(&self, engine: EngineKind) -> Result<FilesSpec, JobError> {
        let chosen = self.choice_with_parameter(opt::FALLOCATE)?;
        chosen.no_parameter()?;
        let (fallocate, setting) = (chosen.value, chosen.setting);
        // A file left shorter than the job's region has nothing there to map.
        if engine.def().maps_files && matches!(fallocate, Fallocate::None | Fallocate::Keep) {
            let name = engine.name();
            return Err(setting.invalid_with_hint(
                format!("leaves a new file shorter than the job, which ioengine={name} cannot map"),
                format!("use fallocate=native or truncate with ioengine={name}"),
            ));
        }
        let fadvise = self.choice(opt::FADVISE_HINT)?;
        Ok(FilesSpec {
            allow_file_create: self.bool(opt::ALLOW_FILE_CREATE)?,
            create_only: self.bool(opt::CREATE_ONLY)?,
            create_on_open: self.bool(opt::CREATE_ON_OPEN)?,
            fallocate,
            pre_read: self.bool(opt::PRE_READ)?,
            fadvise,
            allow_mounted_write: self.bool(opt::ALLOW_MOUNTED_WRITE)?,
            unlink_each_loop: self.bool(opt::UNLINK_EACH_LOOP)?,
            ioscheduler: self
                .given(opt::IOSCHEDULER)
                .map(|s| s.text.trim().to_string()),
            lockfile: self.choice(opt::LOCKFILE)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job};

    #[test]
    fn file_options() {
        let defaults = job(&[]).files;
        assert!(defaults.allow_file_create && !defaults.create_only && !defaults.pre_read);
        assert!(!defaults.create_on_open);
        assert_eq!(defaults.fallocate, Fallocate::Native);
        assert_eq!(defaults.fadvise, FadviseHint::ByPattern);
        assert!(!defaults.allow_mounted_write);
        assert_eq!(
            defaults.lockfile,
            LockMode::None,
            "expected no lock by default"
        );
        assert_eq!(
            job(&["--lockfile=readwrite"]).files.lockfile,
            LockMode::ReadWrite,
            "expected lockfile=readwrite read"
        );
        let spec = job(&[
            "--allow_file_create=0",
            "--create_only=1",
            "--create_on_open=1",
            "--pre_read=1",
            "--fadvise_hint=sequential",
            "--allow_mounted_write=1",
        ]);
        assert!(!spec.files.allow_file_create && spec.files.create_only && spec.files.pre_read);
        assert!(spec.files.allow_mounted_write && spec.files.create_on_open);
        assert_eq!(spec.files.fadvise, FadviseHint::Sequential);
        assert!(!spec.io.invalidate, "pre_read turns invalidate off");
        for (word, mode) in [
            ("0", Fallocate::None),
            ("none", Fallocate::None),
            ("1", Fallocate::Posix),
            ("keep", Fallocate::Keep),
            ("truncate", Fallocate::Truncate),
        ] {
            let arg = format!("--fallocate={word}");
            assert_eq!(job(&[&arg]).files.fallocate, mode, "{word}");
        }
        assert_eq!(job(&["--fadvise_hint=0"]).files.fadvise, FadviseHint::None);
        assert!(error(&[
            "--name=t",
            "--size=1m",
            "--ioengine=mmap",
            "--fallocate=keep"
        ])
        .contains("cannot map"));
    }
}
