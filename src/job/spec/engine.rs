//! The engine section of a job: which I/O engine (`ioengine=`), what the rest of iolens
//! may assume about it, how I/Os are submitted and the engine's own options (the queue
//! settings are in queue.rs).
//!
//! `EngineKind::ALL` is the one list of engines: the `ioengine=` choices, the help and
//! every question about an engine's capabilities come from it. Adding an engine is a
//! file in `src/engine/`, one row here and one arm in `engine::with_engine`.

use crate::job::choice::Choice;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::{opt, OptionDef};
use crate::job::spec::{BlockSizes, JobSpec, QueueSpec, SizeOrPercent};
use serde::{Deserialize, Serialize};

mod cmdprio;
pub(crate) use cmdprio::*;

/// One engine: its fio name and what the rest of iolens asks about it.
#[derive(Debug)]
pub(crate) struct EngineDef {
    pub kind: EngineKind,
    /// fio's name, the `ioengine=` value.
    pub name: &'static str,
    /// Keeps several I/Os in flight: `iodepth` above one is meaningful, and I/Os queued
    /// at such a depth complete through `commit`/`reap`. A blocking engine completes
    /// every I/O inside `queue`, one at a time.
    pub is_async: bool,
    /// Moves no data and touches no file: nothing is created, opened, aligned or read back.
    pub diskless: bool,
    /// Reaches the data through a mapping of each file, so a file must be as long as the
    /// job's region before the first I/O.
    pub maps_files: bool,
    /// Reads and writes at the descriptor's file position (lseek, then read/write), so
    /// every worker needs a descriptor of its own.
    pub uses_file_position: bool,
    /// A metadata engine: each I/O is this operation on its file's name, and no data
    /// moves (`diskless` too: the workers' descriptors are placeholders).
    pub file_op: Option<FileOp>,
    /// The boolean options of the option table this engine honours; an engine that does
    /// not list one warns that it ignores it.
    pub options: &'static [EngineOption],
    /// Takes no I/O while a submitted batch is unreaped: fio's null engine answers
    /// "busy" until then, so it never holds more than one batch in flight.
    pub one_batch_in_flight: bool,
    /// Each reap takes every completion there is, whatever `iodepth_batch_complete_max`
    /// says (fio's null and posixaio engines ignore it).
    pub reaps_every_done: bool,
}

/// A blocking engine on a file descriptor: what a row does not say otherwise.
const BLOCKING: EngineDef = EngineDef {
    kind: EngineKind::Psync,
    name: "psync",
    is_async: false,
    diskless: false,
    maps_files: false,
    uses_file_position: false,
    file_op: None,
    options: &[],
    one_batch_in_flight: false,
    reaps_every_done: false,
};

/// A metadata engine: no data, one operation on each file's name per I/O.
const FILE_OPS: EngineDef = EngineDef {
    diskless: true,
    ..BLOCKING
};

/// Declares `EngineKind`, one variant per row, and `EngineKind::ALL`, the rows in the
/// same order: a kind cannot lack its row.
macro_rules! engines {
    ($($kind:ident => $row:expr,)+) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub(crate) enum EngineKind {
            $($kind,)+
        }

        impl EngineKind {
            /// Every engine, in the order of the enum (and of the `ioengine=` help).
            pub(crate) const ALL: &'static [EngineDef] = &[$(EngineDef {
                kind: EngineKind::$kind,
                ..$row
            },)+];
        }
    };
}

engines! {
    Sync => EngineDef { name: "sync", uses_file_position: true, ..BLOCKING },
    Psync => EngineDef { name: "psync", ..BLOCKING },
    Pvsync => EngineDef { name: "pvsync", ..BLOCKING },
    Pvsync2 => EngineDef { name: "pvsync2", options: Pvsync2Options::OPTIONS, ..BLOCKING },
    Libaio => EngineDef { name: "libaio", is_async: true, ..BLOCKING },
    IoUring => EngineDef {
        name: "io_uring",
        is_async: true,
        options: IoUringOptions::OPTIONS,
        ..BLOCKING
    },
    // The C library's POSIX AIO (glibc: helper threads doing pread/pwrite).
    Posixaio => EngineDef {
        name: "posixaio",
        is_async: true,
        reaps_every_done: true,
        ..BLOCKING
    },
    Mmap => EngineDef { name: "mmap", maps_files: true, ..BLOCKING },
    // No syscall at all; it emulates fio's null queue so the async path can be measured.
    Null => EngineDef {
        name: "null",
        is_async: true,
        diskless: true,
        one_batch_in_flight: true,
        reaps_every_done: true,
        ..BLOCKING
    },
    // fio's file and directory operation engines: an I/O is one create, stat or delete.
    Filecreate => EngineDef { name: "filecreate", file_op: Some(FileOp::CreateFile), ..FILE_OPS },
    Filestat => EngineDef { name: "filestat", file_op: Some(FileOp::StatFile), ..FILE_OPS },
    Filedelete => EngineDef { name: "filedelete", file_op: Some(FileOp::DeleteFile), ..FILE_OPS },
    Dircreate => EngineDef { name: "dircreate", file_op: Some(FileOp::CreateDir), ..FILE_OPS },
    Dirstat => EngineDef { name: "dirstat", file_op: Some(FileOp::StatDir), ..FILE_OPS },
    Dirdelete => EngineDef { name: "dirdelete", file_op: Some(FileOp::DeleteDir), ..FILE_OPS },
}

/// What a metadata engine does to a file's name as one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum FileOp {
    /// open(O_CREAT), then close.
    CreateFile,
    /// `stat_type` on a file laid out before the run.
    StatFile,
    /// unlink of a file laid out before the run.
    DeleteFile,
    /// mkdir.
    CreateDir,
    /// `stat_type` on a directory made before the run.
    StatDir,
    /// rmdir of a directory made before the run.
    DeleteDir,
}

impl FileOp {
    /// What must exist before the first I/O: None, a file, or a directory.
    pub(crate) fn needs(self) -> Option<Existing> {
        match self {
            Self::CreateFile | Self::CreateDir => None,
            Self::StatFile | Self::DeleteFile => Some(Existing::File),
            Self::StatDir | Self::DeleteDir => Some(Existing::Dir),
        }
    }

    /// The syscall one I/O makes, for messages.
    pub(crate) fn call(self, stat_type: StatType) -> &'static str {
        match self {
            Self::CreateFile => "open(O_CREAT)",
            Self::StatFile | Self::StatDir => match stat_type {
                StatType::Stat => "stat",
                StatType::Lstat => "lstat",
                StatType::Statx => "statx",
            },
            Self::DeleteFile => "unlink",
            Self::CreateDir => "mkdir",
            Self::DeleteDir => "rmdir",
        }
    }

    /// True for the operations that take `stat_type`.
    pub(crate) fn stats(self) -> bool {
        matches!(self, Self::StatFile | Self::StatDir)
    }
}

/// What a metadata engine finds in place of each name when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Existing {
    File,
    Dir,
}

/// `stat_type=`: the call filestat and dirstat time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum StatType {
    #[default]
    Stat,
    Lstat,
    Statx,
}

crate::job::choice::choice_words!(StatType {
    "stat" => StatType::Stat,
    "lstat" => StatType::Lstat,
    "statx" => StatType::Statx,
});

/// `io_submit_mode=`: who submits a job's I/Os. `Offload` hands each I/O to a pool of
/// `iodepth` submitting threads, each with its own engine, so even a blocking engine
/// keeps up to `iodepth` I/Os in flight (runner/offload.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum SubmitMode {
    #[default]
    Inline,
    Offload,
}

crate::job::choice::choice_words!(SubmitMode {
    "inline" => SubmitMode::Inline,
    "offload" => SubmitMode::Offload,
});

/// The `ioengine=` values: the names of `ALL`, each with its kind.
impl Choice for EngineKind {
    const WORDS: &'static [(&'static str, Self)] = &{
        let mut words = [("", EngineKind::Psync); EngineKind::ALL.len()];
        let mut i = 0;
        while i < words.len() {
            words[i] = (Self::ALL[i].name, Self::ALL[i].kind);
            i += 1;
        }
        words
    };
    const NAMES: &'static [&'static str] = &{
        let mut names = [""; EngineKind::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Self::ALL[i].name;
            i += 1;
        }
        names
    };
}

impl EngineKind {
    /// This engine's row of `ALL`.
    #[inline]
    pub(crate) fn def(self) -> &'static EngineDef {
        &Self::ALL[self as usize]
    }

    /// The fio name of the engine.
    #[inline]
    pub(crate) fn name(self) -> &'static str {
        self.def().name
    }

    /// True for engines that keep several I/Os in flight (iodepth > 1 is meaningful);
    /// null emulates a queue so the tool's async path can be measured.
    #[inline]
    pub(crate) fn is_async(self) -> bool {
        self.def().is_async
    }
}

/// fio's I/O engines that iolens does not have.
pub(crate) const FIO_ONLY_ENGINES: &[&str] = &[
    "vsync",
    "solarisaio",
    "windowsaio",
    "splice",
    "sg",
    "libzbc",
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "falloc",
    "ftruncate",
    "e4defrag",
    "rados",
    "rbd",
    "http",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "mtd",
    "pmemblk",
    "dev-dax",
    "external",
    "libpmem",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "libiscsi",
    "nbd",
    "libcufile",
    "dfs",
    "nfs",
    "exec",
    "xnvme",
    "io_uring_cmd",
    "guasi",
    "binject",
    "cpp_null",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
];

/// An engine's own option: a boolean row of the option table that only some engines honour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EngineOption {
    Hipri,
    Fixedbufs,
    Registerfiles,
    SqthreadPoll,
}

impl EngineOption {
    /// The option's row of the option table.
    pub(crate) fn def(self) -> &'static OptionDef {
        match self {
            Self::Hipri => opt::HIPRI,
            Self::Fixedbufs => opt::FIXEDBUFS,
            Self::Registerfiles => opt::REGISTERFILES,
            Self::SqthreadPoll => opt::SQTHREAD_POLL,
        }
    }
}

/// Engine settings: the engine, how I/Os are submitted and the chosen engine's own
/// options (the queue settings are the job's `QueueSpec`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EngineSpec {
    pub kind: EngineKind,
    /// io_uring's options; all off unless the engine is io_uring.
    pub io_uring: IoUringOptions,
    /// pvsync2's options; all off unless the engine is pvsync2.
    pub pvsync2: Pvsync2Options,
    /// filestat's and dirstat's call; `stat` for the other engines.
    pub stat_type: StatType,
    /// Per-I/O priorities (io_uring, libaio).
    pub cmdprio: CmdprioSpec,
    /// `io_submit_mode`.
    #[serde(default)]
    pub submit_mode: SubmitMode,
}

/// io_uring's own options, by fio's names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct IoUringOptions {
    /// Polled completions (IORING_SETUP_IOPOLL).
    pub hipri: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
}

impl IoUringOptions {
    const OPTIONS: &'static [EngineOption] = &[
        EngineOption::Hipri,
        EngineOption::Fixedbufs,
        EngineOption::Registerfiles,
        EngineOption::SqthreadPoll,
    ];

    /// The options among `turned_on` (the engine options the job turns on).
    fn of(turned_on: &[EngineOption]) -> Self {
        Self {
            hipri: turned_on.contains(&EngineOption::Hipri),
            fixedbufs: turned_on.contains(&EngineOption::Fixedbufs),
            registerfiles: turned_on.contains(&EngineOption::Registerfiles),
            sqthread_poll: turned_on.contains(&EngineOption::SqthreadPoll),
        }
    }
}

/// pvsync2's own options, by fio's names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Pvsync2Options {
    /// Polled completions (RWF_HIPRI).
    pub hipri: bool,
}

impl Pvsync2Options {
    const OPTIONS: &'static [EngineOption] = &[EngineOption::Hipri];

    /// The options among `turned_on` (the engine options the job turns on).
    fn of(turned_on: &[EngineOption]) -> Self {
        Self {
            hipri: turned_on.contains(&EngineOption::Hipri),
        }
    }
}

impl EngineSpec {
    /// The engine section of one job and its queue, resolved between the submit mode and
    /// the engine's options so that the warnings keep their order; options the chosen
    /// engine ignores become warnings.
    pub(crate) fn resolve(
        layers: &Layers,
        warnings: &mut Vec<String>,
    ) -> Result<(Self, QueueSpec), JobError> {
        let kind: EngineKind = layers.choice(opt::IOENGINE)?;
        let name = kind.name();
        let job = &layers.job.name;
        let submit_mode = layers.choice(opt::IO_SUBMIT_MODE)?;
        let queue = layers.queue(kind, submit_mode)?;
        let iodepth = queue.iodepth;
        let offload_refusal = match (submit_mode, kind) {
            // A ring belongs to the thread that made it (single issuer, task
            // work deferred to it); fio refuses the pair too.
            (SubmitMode::Offload, EngineKind::IoUring) => Some((
                "ioengine=io_uring submits from its own thread and cannot hand I/Os to a pool",
                "io_submit_mode=inline (io_uring already keeps iodepth I/Os in flight)",
            )),
            // The submit threads share the worker's descriptors, so lseek-then-read
            // from several of them at once would move one file position under
            // another's I/O (the pool's roundtrip test read a block back wrong).
            (SubmitMode::Offload, EngineKind::Sync) if iodepth > 1 => Some((
                "ioengine=sync seeks a shared file position, which several offloaded submit threads would move under each other",
                "ioengine=psync (the same reads and writes, each at its own offset)",
            )),
            _ => None,
        };
        if let Some((why, fix)) = offload_refusal {
            let setting = layers
                .given(opt::IO_SUBMIT_MODE)
                .expect("offload was given");
            return Err(setting.invalid_with_hint(why, fix));
        }
        if iodepth > 1 && !kind.is_async() && submit_mode == SubmitMode::Inline {
            warnings.push(format!(
                "job '{job}': iodepth={iodepth} has no effect with ioengine={name}, which keeps one \
                 I/O in flight (use ioengine=io_uring or libaio, or io_submit_mode=offload, for a \
                 deeper queue)"
            ));
        }
        let mut turned_on = Vec::new();
        for option in engine_options() {
            if !layers.bool(option.def())? {
                continue;
            }
            turned_on.push(option);
            if !kind.def().options.contains(&option) {
                warnings.push(format!(
                    "job '{job}': {}=1 is ignored by ioengine={name}",
                    option.def().name
                ));
            }
        }
        let stat_type = layers.choice_with_parameter::<StatType>(opt::STAT_TYPE)?;
        stat_type.no_parameter()?;
        let takes_stat_type = kind.def().file_op.is_some_and(FileOp::stats);
        if stat_type.setting.is_given() && !takes_stat_type {
            warnings.push(format!(
                "job '{job}': stat_type is ignored by ioengine={name} (it is filestat's and dirstat's)"
            ));
        }
        let engine = Self {
            kind,
            io_uring: match kind {
                EngineKind::IoUring => IoUringOptions::of(&turned_on),
                _ => IoUringOptions::default(),
            },
            pvsync2: match kind {
                EngineKind::Pvsync2 => Pvsync2Options::of(&turned_on),
                _ => Pvsync2Options::default(),
            },
            stat_type: if takes_stat_type {
                stat_type.value
            } else {
                StatType::default()
            },
            cmdprio: CmdprioSpec::resolve(layers, kind)?,
            submit_mode,
        };
        Ok((engine, queue))
    }
}

/// What a file operation engine cannot do: trims, `unlink=1`, or files of other than
/// one block (it makes one operation per file, and fio times only one per file too).
pub(crate) fn check_file_ops(layers: &Layers, spec: &JobSpec) -> Result<(), JobError> {
    if spec.engine.kind.def().file_op.is_none() {
        return Ok(());
    }
    let name = spec.engine.kind.name();
    let refuse = |def, reason: String, hint: String| match layers.setting(def) {
        Some(setting) => setting.invalid_with_hint(reason, hint),
        None => layers.problem(format!("{}: {reason} ({hint})", def.name)),
    };
    if spec.workload.rw.trims() {
        return Err(refuse(
            opt::RW,
            format!("ioengine={name} has nothing to trim: an I/O is one operation on a name"),
            "use rw=read or rw=write, the direction the operations are counted in".into(),
        ));
    }
    if spec.io.unlink {
        return Err(refuse(
            opt::UNLINK,
            format!("ioengine={name} does not remove what the job leaves"),
            "use unlink=0 and a filedelete or dirdelete job after it".into(),
        ));
    }
    let t = &spec.target;
    let files = match t.filenames.len() {
        0 => u64::from(t.nrfiles.max(1)),
        n => n as u64,
    };
    let per_file = match (t.filesize, t.size) {
        (Some(size), _) => Some((opt::FILESIZE, size)),
        (None, Some(SizeOrPercent::Bytes(size))) => Some((opt::SIZE, size / files)),
        _ => None,
    };
    let mut blocks = spec.workload.used_block_sizes();
    let block = match (blocks.next(), blocks.next()) {
        (Some(&BlockSizes::Fixed(b)), None) => b,
        (Some(&BlockSizes::Fixed(b)), Some(&BlockSizes::Fixed(c))) if b == c => b,
        _ => {
            let given = [opt::BSSPLIT, opt::BSRANGE]
                .into_iter()
                .find(|&def| layers.given(def).is_some());
            return Err(refuse(
                given.unwrap_or(opt::BS),
                format!(
                    "ioengine={name} needs one block size: each file is one block, one operation"
                ),
                "give one size, e.g. bs=4k".into(),
            ));
        }
    };
    match per_file {
        Some((def, size)) if size != block => Err(refuse(
            def,
            format!(
                "ioengine={name} makes one operation per file, so each file must be one block, \
                 but a file here is {size} bytes and bs={block}"
            ),
            format!("set filesize={block}, or bs= to the file size"),
        )),
        _ => Ok(()),
    }
}

/// Every engine's own options, each once, in the order of the table.
fn engine_options() -> impl Iterator<Item = EngineOption> {
    let all = EngineKind::ALL
        .iter()
        .flat_map(|e| e.options.iter().copied());
    all.clone()
        .enumerate()
        .filter(move |&(i, option)| !all.clone().take(i).any(|earlier| earlier == option))
        .map(|(_, option)| option)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::options::{Kind, Status};
    use crate::job::resolve::tests::{error, job, run};

    #[test]
    fn every_row_sits_at_its_kind_and_its_name_parses_back() {
        for (i, row) in EngineKind::ALL.iter().enumerate() {
            assert_eq!(
                row.kind as usize, i,
                "row {i} ({}) should describe the kind with discriminant {i}",
                row.name
            );
            assert_eq!(
                EngineKind::named(row.name),
                Some(row.kind),
                "'{}' should parse back to {:?}",
                row.name,
                row.kind
            );
            assert_eq!(
                EngineKind::NAMES[i],
                row.name,
                "NAMES[{i}] should be the name of row {i}"
            );
        }
    }

    #[test]
    fn names_are_unique_and_none_is_a_fio_engine_iolens_lacks() {
        let mut names: Vec<&str> = EngineKind::NAMES.to_vec();
        names.extend(FIO_ONLY_ENGINES);
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            count,
            "engine names and fio-only engine names should all differ, saw duplicates among {count}"
        );
    }

    #[test]
    fn only_the_table_s_names_are_engines() {
        for name in ["nosuch", "", "PSYNC", "splice", "io_uring_cmd"] {
            assert_eq!(
                EngineKind::named(name),
                None,
                "'{name}' should name no engine of iolens"
            );
        }
    }

    #[test]
    fn the_ioengine_choices_are_the_table() {
        let def = opt::IOENGINE;
        assert_eq!(
            def.kind,
            Kind::Choice(EngineKind::NAMES),
            "ioengine= should accept exactly the table's names"
        );
        let default = def.default.expect("ioengine has a default");
        assert_eq!(
            EngineKind::named(default),
            Some(EngineKind::Psync),
            "the default ioengine should be psync, as in fio"
        );
    }

    #[test]
    fn an_unknown_engine_is_an_error_naming_the_engines() {
        assert_eq!(
            error(&["--name=a", "--size=1m", "--ioengine=nosuch"]),
            "command line argument 3: ioengine=nosuch: unknown value 'nosuch' (use one of sync, \
             psync, pvsync, pvsync2, libaio, io_uring, posixaio, mmap, null, filecreate, filestat, \
             filedelete, dircreate, dirstat, dirdelete, e.g. ioengine=io_uring)"
        );
        assert_eq!(
            error(&["--name=t", "--size=1m", "--ioengine=splice"]),
            "command line argument 3: ioengine=splice: not supported by iolens: this ioengine \
             is not implemented (instead: ioengine=io_uring, libaio or psync)"
        );
    }

    #[test]
    fn engine_options_are_supported_boolean_options_of_the_table() {
        for option in engine_options() {
            let def = option.def();
            assert_eq!(
                (def.kind, def.status, def.default),
                (Kind::Bool, Status::Supported, Some("0")),
                "{} should be a supported boolean option, off by default",
                def.name
            );
        }
        assert_eq!(
            engine_options().map(|o| o.def().name).collect::<Vec<_>>(),
            ["hipri", "fixedbufs", "registerfiles", "sqthread_poll"],
            "each engine option should be listed once, in the order of the warnings"
        );
    }

    #[test]
    fn an_engine_warns_about_exactly_the_options_it_does_not_take() {
        for row in EngineKind::ALL {
            for option in engine_options() {
                let engine = format!("--ioengine={}", row.name);
                let option_name = option.def().name;
                let flag = format!("--{option_name}");
                // one block, which the file operation engines also take
                let resolved = run(&["--name=a", "--size=4k", &engine, &flag]).unwrap();
                let expected = format!(
                    "job 'a': {option_name}=1 is ignored by ioengine={}",
                    row.name
                );
                let warned = resolved.warnings.contains(&expected);
                assert_eq!(
                    warned,
                    !row.options.contains(&option),
                    "ioengine={} {option_name}=1: expected a warning: {}, saw {:?}",
                    row.name,
                    !row.options.contains(&option),
                    resolved.warnings
                );
            }
        }
    }

    #[test]
    fn queue_and_io_uring_options() {
        let spec = job(&[
            "--ioengine=io_uring",
            "--iodepth=32",
            "--iodepth_batch=8",
            "--iodepth_batch_complete=4",
            "--hipri",
            "--fixedbufs",
            "--registerfiles",
            "--sqthread_poll",
        ]);
        let (e, q) = (&spec.engine, &spec.queue);
        assert_eq!(
            (e.kind, q.iodepth, q.batch_submit),
            (EngineKind::IoUring, 32, 8)
        );
        assert_eq!((q.batch_complete_min, q.batch_complete_max), (4, 4));
        let all_on = IoUringOptions {
            hipri: true,
            fixedbufs: true,
            registerfiles: true,
            sqthread_poll: true,
        };
        assert_eq!(e.io_uring, all_on, "io_uring should take all four options");
        assert_eq!(
            e.pvsync2,
            Pvsync2Options::default(),
            "pvsync2's options stay off"
        );
        let spec = job(&["--ioengine=libaio", "--iodepth_batch_complete_max=16"]);
        assert_eq!(
            (spec.engine.kind, spec.queue.batch_complete_max),
            (EngineKind::Libaio, 16)
        );
        // as fio: a maximum below the minimum is raised to it
        let q = job(&[
            "--iodepth_batch_complete_min=4",
            "--iodepth_batch_complete_max=2",
        ])
        .queue;
        assert_eq!((q.batch_complete_min, q.batch_complete_max), (4, 4));
        assert!(error(&["--name=a", "--size=1m", "--iodepth=0"]).contains("iodepth=0"));
        assert!(error(&["--name=a", "--size=1m", "--ioengine=nosuch"]).contains("unknown value"));
    }

    #[test]
    fn an_engine_s_options_reach_only_that_engine() {
        let pvsync2 = job(&["--ioengine=pvsync2", "--hipri"]).engine;
        assert_eq!(
            (pvsync2.pvsync2.hipri, pvsync2.io_uring),
            (true, IoUringOptions::default()),
            "pvsync2 hipri=1: expected pvsync2's hipri on and io_uring's options off"
        );
        let psync = job(&[
            "--hipri",
            "--fixedbufs",
            "--registerfiles",
            "--sqthread_poll",
        ])
        .engine;
        assert_eq!(
            (psync.io_uring, psync.pvsync2),
            (IoUringOptions::default(), Pvsync2Options::default()),
            "psync: expected every engine option off (each one ignored with a warning)"
        );
    }

    #[test]
    fn stat_type_reaches_only_the_stat_engines() {
        for (engine, expected) in [
            ("filestat", StatType::Statx),
            ("dirstat", StatType::Statx),
            ("filecreate", StatType::Stat),
        ] {
            let resolved = run(&[
                "--name=a",
                "--size=4k",
                &format!("--ioengine={engine}"),
                "--stat_type=statx",
            ])
            .unwrap();
            assert_eq!(
                resolved.jobs[0].engine.stat_type, expected,
                "ioengine={engine} stat_type=statx: expected {expected:?}"
            );
            let warned = resolved
                .warnings
                .iter()
                .any(|w| w.contains("stat_type is ignored"));
            assert_eq!(
                warned,
                expected == StatType::Stat,
                "ioengine={engine} stat_type=statx: expected a warning only where it is ignored, saw {:?}",
                resolved.warnings
            );
        }
        assert_eq!(
            job(&["--ioengine=filestat"]).engine.stat_type,
            StatType::Stat,
            "filestat's default call should be stat, as in fio"
        );
    }

    #[test]
    fn file_operation_engines_take_one_block_per_file_and_no_trims_or_unlink() {
        let ok = run(&[
            "--name=a",
            "--ioengine=filecreate",
            "--nrfiles=200",
            "--filesize=4k",
        ]);
        assert!(
            ok.is_ok(),
            "filesize=bs: expected the job to resolve, saw {:?}",
            ok.err()
        );
        let ok = run(&[
            "--name=a",
            "--ioengine=dirstat",
            "--nrfiles=4",
            "--size=32k",
            "--bs=8k",
        ]);
        assert!(
            ok.is_ok(),
            "size/nrfiles=bs: expected the job to resolve, saw {:?}",
            ok.err()
        );
        for (args, expected) in [
            (
                &["--ioengine=filestat", "--nrfiles=2", "--filesize=8k"][..],
                "command line argument 4: filesize=8k: ioengine=filestat makes one operation per \
                 file, so each file must be one block, but a file here is 8192 bytes and bs=4096 \
                 (set filesize=4096, or bs= to the file size)",
            ),
            (
                &["--ioengine=filedelete", "--size=4k", "--bsrange=4k-8k"],
                "command line argument 4: bsrange=4k-8k: ioengine=filedelete needs one block size: \
                 each file is one block, one operation (give one size, e.g. bs=4k)",
            ),
            (
                &["--ioengine=dircreate", "--size=4k", "--rw=randtrim"],
                "command line argument 4: rw=randtrim: ioengine=dircreate has nothing to trim: an \
                 I/O is one operation on a name (use rw=read or rw=write, the direction the \
                 operations are counted in)",
            ),
            (
                &["--ioengine=filecreate", "--size=4k", "--unlink=1"],
                "command line argument 4: unlink=1: ioengine=filecreate does not remove what the \
                 job leaves (use unlink=0 and a filedelete or dirdelete job after it)",
            ),
        ] {
            let mut all = vec!["--name=a"];
            all.extend(args);
            assert_eq!(error(&all), expected, "{args:?}: expected this refusal");
        }
    }

    #[test]
    fn openfiles_warns_only_where_every_file_holds_a_descriptor() {
        for (engine, warns) in [("psync", true), ("filecreate", false), ("dirstat", false)] {
            let resolved = run(&[
                "--name=a",
                "--size=4k",
                &format!("--ioengine={engine}"),
                "--openfiles=1",
            ])
            .unwrap();
            let warned = resolved.warnings.iter().any(|w| w.contains("openfiles=1"));
            assert_eq!(
                warned, warns,
                "ioengine={engine} openfiles=1: expected a descriptor warning: {warns}, saw {:?}",
                resolved.warnings
            );
        }
    }

    #[test]
    fn file_operation_rows_name_their_operation() {
        for row in EngineKind::ALL {
            let expected = match row.name {
                "filecreate" => Some(FileOp::CreateFile),
                "filestat" => Some(FileOp::StatFile),
                "filedelete" => Some(FileOp::DeleteFile),
                "dircreate" => Some(FileOp::CreateDir),
                "dirstat" => Some(FileOp::StatDir),
                "dirdelete" => Some(FileOp::DeleteDir),
                _ => None,
            };
            assert_eq!(
                row.file_op, expected,
                "ioengine={}: its operation",
                row.name
            );
            assert!(
                row.file_op.is_none() || (row.diskless && !row.is_async),
                "ioengine={}: a file operation engine moves no data and completes in queue",
                row.name
            );
        }
    }

    #[test]
    fn deep_queue_on_a_sync_engine_is_a_warning() {
        let resolved = run(&["--name=a", "--size=1m", "--iodepth=8"]).unwrap();
        assert_eq!(resolved.jobs[0].queue.iodepth, 8);
        assert_eq!(resolved.warnings.len(), 1);
        assert!(resolved.warnings[0].contains("iodepth=8 has no effect with ioengine=psync"));
        let resolved = run(&["--name=a", "--size=1m", "--fixedbufs"]).unwrap();
        assert!(resolved.warnings[0].contains("fixedbufs=1 is ignored by ioengine=psync"));
    }

    #[test]
    fn offloaded_submission_keeps_iodepth_on_a_sync_engine() {
        let args = [
            "--name=a",
            "--size=1m",
            "--iodepth=8",
            "--io_submit_mode=offload",
        ];
        let resolved = run(&args).unwrap();
        let job = &resolved.jobs[0];
        assert_eq!(job.engine.submit_mode, SubmitMode::Offload);
        assert_eq!(
            (job.queue.depth, job.queue.refill_depth),
            (8, 8),
            "expected psync offloaded to keep 8 I/Os in flight"
        );
        assert!(
            resolved.warnings.is_empty(),
            "expected no iodepth warning with offload, saw {:?}",
            resolved.warnings
        );
        let uring = [
            "--name=a",
            "--size=1m",
            "--ioengine=io_uring",
            "--io_submit_mode=offload",
        ];
        let refused = run(&uring).unwrap_err().to_string();
        assert!(
            refused.contains("io_submit_mode") && refused.contains("io_submit_mode=inline"),
            "expected io_uring with offload refused naming the option and the fix, saw {refused}"
        );
        let sync = [
            "--name=a",
            "--size=1m",
            "--ioengine=sync",
            "--iodepth=4",
            "--io_submit_mode=offload",
        ];
        let refused = run(&sync).unwrap_err().to_string();
        assert!(
            refused.contains("io_submit_mode") && refused.contains("ioengine=psync"),
            "expected sync offloaded to 4 threads refused with psync as the fix, saw {refused}"
        );
        assert!(
            run(&[
                "--name=a",
                "--size=1m",
                "--ioengine=sync",
                "--io_submit_mode=offload"
            ])
            .is_ok(),
            "expected sync offloaded to one submit thread accepted"
        );
        let refused = run(&["--name=a", "--size=1m", "--io_submit_mode=later"]).unwrap_err();
        assert!(
            refused.to_string().contains("inline") && refused.to_string().contains("offload"),
            "expected the refusal to list inline and offload, saw {refused}"
        );
    }
}
