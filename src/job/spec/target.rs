//! Where a job does I/O: the target's files and sizes (`filename`, `size`, `offset`, …);
//! how files are created is in files.rs, how data reaches them in io.rs.

use super::*;
use crate::job::error::JobError;
use crate::job::layers::{Layers, Setting};
use crate::job::options::opt;
use crate::units;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A byte quantity that may be given as a percentage of the target (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum SizeOrPercent {
    Bytes(u64),
    /// Per cent of the target's size, 1..=100.
    Percent(u32),
}

impl SizeOrPercent {
    /// Resolve against a target of `total` bytes.
    pub(crate) fn resolve(self, total: u64) -> u64 {
        match self {
            Self::Bytes(b) => b,
            Self::Percent(p) => total / 100 * u64::from(p) + total % 100 * u64::from(p) / 100,
        }
    }
}

/// Where the job does I/O.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TargetSpec {
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
}

/// Not `0`, which fio takes for "not given".
fn given(size: &SizeOrPercent) -> bool {
    *size != SizeOrPercent::Bytes(0)
}

impl TargetSpec {
    /// The directory clone `w`'s generated names live in: fio deals the `:`-separated
    /// directories out to the clones in turn.
    pub(crate) fn directory_of_clone(&self, w: u32) -> Option<PathBuf> {
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
