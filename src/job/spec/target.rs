//! Where a job does I/O and how data reaches it: the target's files and sizes
//! (`filename`, `size`, `offset`, …), how files are created and prepared (`fallocate`,
//! `pre_read`, …) and the I/O mode (`direct`, `sync`, `fsync`, …).

use super::*;
use crate::job::choice::choice_words;
use crate::job::error::JobError;
use crate::job::layers::{Layers, Setting};
use crate::job::options::opt;
use crate::units;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A byte quantity that may be given as a percentage of the target (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SizeOrPercent {
    Bytes(u64),
    /// Per cent of the target's size, 1..=100.
    Percent(u32),
}

impl SizeOrPercent {
    /// Resolve against a target of `total` bytes.
    pub fn resolve(self, total: u64) -> u64 {
        match self {
            Self::Bytes(b) => b,
            Self::Percent(p) => total / 100 * u64::from(p) + total % 100 * u64::from(p) / 100,
        }
    }
}

/// Where the job does I/O.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetSpec {
    /// Explicit `filename=` entries (split on `:`), each behind the first `directory=`
    /// as fio places them; empty = generated names.
    pub filenames: Vec<PathBuf>,
    /// `directory=` as written: one directory, or several split on `:` that the clones
    /// of a job with generated names take in turn.
    pub directory: Option<PathBuf>,
    /// `filename_format=`: how generated names are built from `$jobname`, `$jobnum`
    /// (the worker) and `$filenum` (fio's default `$jobname.$jobnum.$filenum`).
    pub filename_format: String,
    /// The rank of a run on several ranks (MPI), which generated names carry: as
    /// `$clientuid`, else after the name (`m.0.0.rank3`); None on a run on its own.
    #[serde(default)]
    pub rank: Option<u32>,
    /// `nrfiles=` (generated files per worker when no filename is given).
    pub nrfiles: u32,
    /// `filesize=` of each file (default: size / nrfiles).
    pub filesize: Option<u64>,
    /// `size=`: total bytes of the job's region over all its files.
    pub size: Option<SizeOrPercent>,
    pub offset: SizeOrPercent,
    pub offset_increment: SizeOrPercent,
    /// `io_size=`: bytes to transfer (default: `size`).
    pub io_size: Option<SizeOrPercent>,
    pub number_ios: Option<u64>,
    pub loops: u32,
    /// fio's `allow_mounted_write=1`: the destructive-write guard lets writes to a
    /// mounted device (or one behind a mounted filesystem or swap) through.
    #[serde(default)]
    pub allow_mounted_write: bool,
}

/// fio's `fallocate=`: how a file that is laid out gets its blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fallocate {
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
pub enum FadviseHint {
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
pub struct FilesSpec {
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
pub enum LockMode {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SyncMode {
    None,
    /// `sync=1` / `sync=sync`: O_SYNC.
    Sync,
    /// `sync=dsync`: O_DSYNC.
    Dsync,
}

choice_words!(SyncMode {
    "0" => SyncMode::None,
    "none" => SyncMode::None,
    "1" => SyncMode::Sync,
    "sync" => SyncMode::Sync,
    "dsync" => SyncMode::Dsync,
});

/// How data reaches the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoModeSpec {
    pub direct: bool,
    pub sync: SyncMode,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub invalidate: bool,
    pub overwrite: bool,
    pub unlink: bool,
}

impl Layers<'_> {
    pub(crate) fn target(&self) -> Result<TargetSpec, JobError> {
        let filenames = self.filenames();
        // fio: size=0, filesize=0 and io_size=0 are the same as not giving them (the
        // whole existing file or device, named or generated: see plan_job in fileset,
        // which refuses a missing one)
        let size = self.size_or_percent(opt::SIZE)?.filter(given);
        let filesize = self
            .parse(opt::FILESIZE, |text| units::parse_size(text, self.kb_base))?
            .filter(|&bytes| bytes != 0);
        Ok(TargetSpec {
            filenames,
            directory: self.given(opt::DIRECTORY).map(|s| PathBuf::from(s.text)),
            filename_format: self
                .setting(opt::FILENAME_FORMAT)
                .expect("filename_format has a default")
                .text
                .to_string(),
            rank: None,
            nrfiles: self.count_u32(opt::NRFILES, 1)?,
            filesize,
            size,
            offset: self
                .size_or_percent(opt::OFFSET)?
                .unwrap_or(SizeOrPercent::Bytes(0)),
            offset_increment: self
                .size_or_percent(opt::OFFSET_INCREMENT)?
                .unwrap_or(SizeOrPercent::Bytes(0)),
            io_size: self.size_or_percent(opt::IO_SIZE)?.filter(given),
            number_ios: self.count(opt::NUMBER_IOS)?,
            loops: self.count_u32(opt::LOOPS, 1)?,
            allow_mounted_write: self.bool(opt::ALLOW_MOUNTED_WRITE)?,
        })
    }

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

    pub(crate) fn io_mode(&self) -> Result<IoModeSpec, JobError> {
        let sync = self.choice(opt::SYNC)?;
        Ok(IoModeSpec {
            direct: self.direct()?,
            sync,
            fsync: self.count_u32(opt::FSYNC, 0)?,
            fdatasync: self.count_u32(opt::FDATASYNC, 0)?,
            // A job keeps its files open to its end, so closing them is ending it.
            end_fsync: self.bool(opt::END_FSYNC)? || self.bool(opt::FSYNC_ON_CLOSE)?,
            // Dropping the cache right after pre_read filled it would undo it (as fio).
            invalidate: self.bool(opt::INVALIDATE)? && !self.bool(opt::PRE_READ)?,
            overwrite: self.bool(opt::OVERWRITE)?,
            unlink: self.bool(opt::UNLINK)?,
        })
    }

    /// `buffered` is the inverse of `direct`; the more specific layer decides.
    fn direct(&self) -> Result<bool, JobError> {
        let parse = |s: Setting| units::parse_bool(s.text).map_err(|e| s.invalid(e));
        match self.pair(opt::DIRECT, opt::BUFFERED) {
            (Some(direct), Some(buffered)) => {
                let (d, b) = (parse(direct)?, parse(buffered)?);
                if d == b {
                    return Err(buffered.invalid_with_hint(
                        format!("contradicts direct={}", u8::from(d)),
                        "buffered=0 means direct=1; set only one of them",
                    ));
                }
                Ok(d)
            }
            (Some(direct), None) => parse(direct),
            (None, Some(buffered)) => Ok(!parse(buffered)?),
            (None, None) => self.bool(opt::DIRECT),
        }
    }
}

/// Not `0`, which fio takes for "not given".
fn given(size: &SizeOrPercent) -> bool {
    *size != SizeOrPercent::Bytes(0)
}

impl TargetSpec {
    /// The directory clone `w`'s generated names live in: fio deals the `:`-separated
    /// directories out to the clones in turn.
    pub fn directory_of_clone(&self, w: u32) -> Option<PathBuf> {
        let directories = split_filenames(self.directory.as_ref()?.to_str()?);
        let count = directories.len().max(1);
        directories.into_iter().nth(w as usize % count)
    }
}

impl Layers<'_> {
    /// `filename=`'s names, each written after the first `directory=` and a `/` as fio
    /// does (an absolute name too: `directory=/d filename=/f` is `/d//f`). fio reads
    /// `directory=` before `filename=` within a section, and a section's after the
    /// global one's, so a global `filename=` is placed only by a global `directory=`.
    fn filenames(&self) -> Vec<PathBuf> {
        let Some(filename) = self.given(opt::FILENAME) else {
            return Vec::new();
        };
        let directory = match self.job.get(opt::FILENAME) {
            Some(_) => self.given(opt::DIRECTORY),
            None => self.global.get(opt::DIRECTORY).map(Setting::given),
        };
        let first_directory = directory
            .and_then(|d| split_filenames(d.text).into_iter().next())
            .map(|d| d.into_os_string().into_string().unwrap_or_default());
        split_filenames(filename.text)
            .into_iter()
            .map(|name| match &first_directory {
                Some(dir) => PathBuf::from(format!("{dir}/{}", name.display())),
                None => name,
            })
            .collect()
    }
}

/// `a:b:c` with `\:` for a colon inside a name.
fn split_filenames(text: &str) -> Vec<PathBuf> {
    let mut names = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                names.last_mut().expect("never empty").push(':');
                chars.next();
            }
            ':' => names.push(String::new()),
            c => names.last_mut().expect("never empty").push(c),
        }
    }
    names
        .into_iter()
        .filter(|name| !name.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// `unlink_each_loop` empties the files between passes: a job that reads them, or an
/// engine that maps them, would find nothing there from its second pass on (fio's read
/// fails with ENOENT then), so it is refused before the run.
pub(crate) fn check_unlink_each_loop(layers: &Layers, spec: &JobSpec) -> Result<(), JobError> {
    let Some(setting) = layers.given(opt::UNLINK_EACH_LOOP) else {
        return Ok(());
    };
    if !spec.files.unlink_each_loop || spec.target.loops < 2 || spec.exec.time_based {
        return Ok(());
    }
    let engine = spec.engine.kind;
    let why = if spec.workload.rw.reads() {
        "a job that reads finds its files empty from the second pass of loops on (fio's read fails with ENOENT there)".to_string()
    } else if engine.def().maps_files {
        format!(
            "ioengine={} maps the files, which are empty from the second pass of loops on",
            engine.name()
        )
    } else {
        return Ok(());
    };
    Err(setting.invalid_with_hint(why, "use it with a write job, or drop it"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::resolve::tests::{error, job, run};

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

    #[test]
    fn filename_directory_nrfiles() {
        let spec = job(&[r"--filename=/dev/a:/dev/b\:c", "--nrfiles=3"]);
        let names: Vec<PathBuf> = vec!["/dev/a".into(), "/dev/b:c".into()];
        assert_eq!(spec.target.filenames, names);
        assert_eq!(spec.target.nrfiles, 3);
        // fio writes the first directory and a / before each name, absolute or not
        let spec = job(&["--filename=/dev/a:b", "--directory=/mnt:/srv"]);
        let names: Vec<PathBuf> = vec!["/mnt//dev/a".into(), "/mnt/b".into()];
        assert_eq!(spec.target.filenames, names);
        assert_eq!(spec.target.directory, Some(PathBuf::from("/mnt:/srv")));
        let dealt = [0, 1, 2].map(|w| spec.target.directory_of_clone(w));
        assert_eq!(
            dealt,
            ["/mnt", "/srv", "/mnt"].map(|d| Some(PathBuf::from(d)))
        );
    }

    #[test]
    fn size_filesize_offset_io_size() {
        let spec = job(&[
            "--size=50%",
            "--filesize=1m",
            "--offset=4k",
            "--offset_increment=10%",
            "--io_limit=2g",
            "--number_ios=100",
            "--loops=2",
        ]);
        let t = &spec.target;
        assert_eq!(t.size, Some(SizeOrPercent::Percent(50)));
        assert_eq!(t.filesize, Some(1 << 20));
        assert_eq!(t.offset, SizeOrPercent::Bytes(4096));
        assert_eq!(t.offset_increment, SizeOrPercent::Percent(10));
        assert_eq!(t.io_size, Some(SizeOrPercent::Bytes(2 << 30)));
        assert_eq!((t.number_ios, t.loops), (Some(100), 2));
    }

    #[test]
    fn io_mode_options() {
        let spec = job(&[
            "--direct=1",
            "--sync=dsync",
            "--fsync=8",
            "--fdatasync=4",
            "--end_fsync",
            "--invalidate=0",
            "--overwrite=1",
            "--unlink=1",
        ]);
        let io = &spec.io;
        assert!(io.direct && io.end_fsync && !io.invalidate && io.overwrite && io.unlink);
        assert_eq!((io.sync, io.fsync, io.fdatasync), (SyncMode::Dsync, 8, 4));
        assert_eq!(job(&["--sync=1"]).io.sync, SyncMode::Sync);
        assert_eq!(job(&["--sync=none"]).io.sync, SyncMode::None);
    }

    #[test]
    fn fsync_on_close_syncs_when_the_job_ends() {
        assert!(job(&["--fsync_on_close=1"]).io.end_fsync);
        assert!(!job(&["--fsync_on_close=0"]).io.end_fsync);
    }

    #[test]
    fn buffered_is_the_inverse_of_direct() {
        assert!(job(&["--buffered=0"]).io.direct);
        assert!(!job(&["--buffered=1"]).io.direct);
        let resolved = run(&["--direct=1", "--name=a", "--size=1m", "--buffered=1"]).unwrap();
        assert!(
            !resolved.jobs[0].io.direct,
            "the job's buffered=1 beats the global direct=1"
        );
        assert!(
            error(&["--name=a", "--size=1m", "--direct=1", "--buffered=1"]).contains("contradicts")
        );
    }

    #[test]
    fn unlink_each_loop_is_refused_where_a_later_pass_would_find_nothing() {
        let base = [
            "--name=u",
            "--size=64k",
            "--loops=2",
            "--unlink_each_loop=1",
        ];
        let with = |extra: &[&'static str]| [&base[..], extra].concat();
        let write = run(&with(&["--rw=write"])).expect("a write job resolves");
        assert!(
            write.jobs[0].files.unlink_each_loop,
            "expected unlink_each_loop=1 kept for a write job"
        );
        let reads = error(&with(&["--rw=randrw"]));
        assert!(
            reads.contains("unlink_each_loop=1") && reads.contains("ENOENT"),
            "expected a reading job refused naming the option and fio's ENOENT, saw: {reads}"
        );
        let maps = error(&with(&["--rw=write", "--ioengine=mmap"]));
        assert!(
            maps.contains("ioengine=mmap maps the files"),
            "expected ioengine=mmap refused, saw: {maps}"
        );
        for harmless in [
            &["--rw=read", "--loops=1"][..],
            &["--rw=read", "--time_based=1", "--runtime=1"],
        ] {
            assert!(
                run(&with(harmless)).is_ok(),
                "expected {harmless:?} accepted: no later pass empties the files"
            );
        }
    }

    #[test]
    fn a_job_without_size_or_filename_is_left_to_its_existing_generated_files() {
        for args in [&["--bs=8k", "--name=a"][..], &["--name=a", "--size=0"]] {
            let t = run(args)
                .unwrap_or_else(|e| {
                    panic!("expected {args:?} to resolve (fio uses a.0.0 whole), saw {e}")
                })
                .jobs[0]
                .target
                .clone();
            assert_eq!(
                (t.filenames.len(), t.size, t.filesize),
                (0, None, None),
                "expected {args:?} to leave the size to the existing file"
            );
        }
    }

    #[test]
    fn zero_sizes_are_not_given() {
        let t = job(&["--size=0", "--filesize=0", "--io_size=0"]).target;
        assert_eq!(
            (t.size, t.filesize, t.io_size),
            (None, None, None),
            "expected size=0, filesize=0 and io_size=0 to mean the whole file, as when not given"
        );
        assert_eq!(run(&["--bs=4k"]).unwrap_err(), JobError::NoJobs);
    }
}
