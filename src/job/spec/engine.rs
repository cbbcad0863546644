//! The engine section of a job: which I/O engine (`ioengine=`), what the rest of iolens
//! may assume about it, its queue settings and the engine's own options.
//!
//! `EngineKind::ALL` is the one list of engines: the `ioengine=` choices, the help and
//! every question about an engine's capabilities come from it. Adding an engine is a
//! file in `src/engine/`, one row here and one arm in `engine::with_engine`.

use crate::job::choice::Choice;
use crate::job::error::JobError;
use crate::job::layers::Layers;
use crate::job::options::{opt, OptionDef};
use serde::{Deserialize, Serialize};

/// One engine: its fio name and what the rest of iolens asks about it.
#[derive(Debug)]
pub struct EngineDef {
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
    /// The boolean options of the option table this engine honours; an engine that does
    /// not list one warns that it ignores it.
    pub options: &'static [EngineOption],
}

/// A blocking engine on a file descriptor: what a row does not say otherwise.
const BLOCKING: EngineDef = EngineDef {
    kind: EngineKind::Psync,
    name: "psync",
    is_async: false,
    diskless: false,
    maps_files: false,
    uses_file_position: false,
    options: &[],
};

/// Declares `EngineKind`, one variant per row, and `EngineKind::ALL`, the rows in the
/// same order: a kind cannot lack its row.
macro_rules! engines {
    ($($kind:ident => $row:expr,)+) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum EngineKind {
            $($kind,)+
        }

        impl EngineKind {
            /// Every engine, in the order of the enum (and of the `ioengine=` help).
            pub const ALL: &'static [EngineDef] = &[$(EngineDef {
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
    Mmap => EngineDef { name: "mmap", maps_files: true, ..BLOCKING },
    // No syscall at all; it emulates a queue so the async path can be measured.
    Null => EngineDef { name: "null", is_async: true, diskless: true, ..BLOCKING },
}

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
    pub fn def(self) -> &'static EngineDef {
        &Self::ALL[self as usize]
    }

    /// The fio name of the engine.
    #[inline]
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// True for engines that keep several I/Os in flight (iodepth > 1 is meaningful);
    /// null emulates a queue so the tool's async path can be measured.
    #[inline]
    pub fn is_async(self) -> bool {
        self.def().is_async
    }
}

/// fio's I/O engines that iolens does not have.
pub const FIO_ONLY_ENGINES: &[&str] = &[
    "vsync",
    "posixaio",
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
    "filecreate",
    "filestat",
    "filedelete",
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
pub enum EngineOption {
    Hipri,
    Fixedbufs,
    Registerfiles,
    SqthreadPoll,
}

impl EngineOption {
    /// The option's row of the option table.
    pub fn def(self) -> &'static OptionDef {
        match self {
            Self::Hipri => opt::HIPRI,
            Self::Fixedbufs => opt::FIXEDBUFS,
            Self::Registerfiles => opt::REGISTERFILES,
            Self::SqthreadPoll => opt::SQTHREAD_POLL,
        }
    }
}

/// Engine settings: queue depth, batching and the chosen engine's own options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSpec {
    pub kind: EngineKind,
    pub iodepth: u32,
    /// `iodepth_batch_submit` (0 or 1 = submit each I/O as queued; fio's default 1).
    pub batch_submit: u32,
    /// `iodepth_batch_complete_min` (fio default 1).
    pub batch_complete_min: u32,
    /// `iodepth_batch_complete_max` (fio default = iodepth).
    pub batch_complete_max: u32,
    /// io_uring's options; all off unless the engine is io_uring.
    pub io_uring: IoUringOptions,
    /// pvsync2's options; all off unless the engine is pvsync2.
    pub pvsync2: Pvsync2Options,
}

/// io_uring's own options, by fio's names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoUringOptions {
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

    fn resolve(layers: &Layers) -> Result<Self, JobError> {
        Ok(Self {
            hipri: layers.bool(opt::HIPRI)?,
            fixedbufs: layers.bool(opt::FIXEDBUFS)?,
            registerfiles: layers.bool(opt::REGISTERFILES)?,
            sqthread_poll: layers.bool(opt::SQTHREAD_POLL)?,
        })
    }
}

/// pvsync2's own options, by fio's names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pvsync2Options {
    /// Polled completions (RWF_HIPRI).
    pub hipri: bool,
}

impl Pvsync2Options {
    const OPTIONS: &'static [EngineOption] = &[EngineOption::Hipri];

    fn resolve(layers: &Layers) -> Result<Self, JobError> {
        Ok(Self {
            hipri: layers.bool(opt::HIPRI)?,
        })
    }
}

impl EngineSpec {
    /// The engine section of one job; options the chosen engine ignores become warnings.
    pub(crate) fn resolve(layers: &Layers, warnings: &mut Vec<String>) -> Result<Self, JobError> {
        let kind: EngineKind = layers.choice(opt::IOENGINE)?;
        let name = kind.name();
        let job = &layers.job.name;
        let iodepth = layers.count_u32(opt::IODEPTH, 1)?;
        if iodepth > 1 && !kind.is_async() {
            warnings.push(format!(
                "job '{job}': iodepth={iodepth} has no effect with ioengine={name}, which keeps one \
                 I/O in flight (use ioengine=io_uring or libaio for a deeper queue)"
            ));
        }
        let batch_complete_min = layers.count_u32(opt::IODEPTH_BATCH_COMPLETE_MIN, 0)?;
        let batch_complete_max = match layers.given(opt::IODEPTH_BATCH_COMPLETE_MAX) {
            Some(max) => {
                let max_value = layers.count_u32(opt::IODEPTH_BATCH_COMPLETE_MAX, 0)?;
                if max_value < batch_complete_min {
                    return Err(max.invalid_with_hint(
                        format!("less than iodepth_batch_complete_min={batch_complete_min}"),
                        "raise it or lower iodepth_batch_complete_min",
                    ));
                }
                max_value
            }
            None => iodepth.max(batch_complete_min),
        };
        let batch_submit = layers.count_u32(opt::IODEPTH_BATCH_SUBMIT, 0)?;
        for option in engine_options() {
            if layers.bool(option.def())? && !kind.def().options.contains(&option) {
                warnings.push(format!(
                    "job '{job}': {}=1 is ignored by ioengine={name}",
                    option.def().name
                ));
            }
        }
        Ok(Self {
            kind,
            iodepth,
            batch_submit,
            batch_complete_min,
            batch_complete_max,
            io_uring: match kind {
                EngineKind::IoUring => IoUringOptions::resolve(layers)?,
                _ => IoUringOptions::default(),
            },
            pvsync2: match kind {
                EngineKind::Pvsync2 => Pvsync2Options::resolve(layers)?,
                _ => Pvsync2Options::default(),
            },
        })
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
        for name in ["nosuch", "", "PSYNC", "posixaio", "io_uring_cmd"] {
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
             psync, pvsync, pvsync2, libaio, io_uring, mmap, null, e.g. ioengine=io_uring)"
        );
        assert_eq!(
            error(&["--name=t", "--size=1m", "--ioengine=posixaio"]),
            "command line argument 3: ioengine=posixaio: not supported by iolens: this ioengine \
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
                let resolved = run(&["--name=a", "--size=1m", &engine, &flag]).unwrap();
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
        let e = &spec.engine;
        assert_eq!(
            (e.kind, e.iodepth, e.batch_submit),
            (EngineKind::IoUring, 32, 8)
        );
        assert_eq!((e.batch_complete_min, e.batch_complete_max), (4, 32));
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
            (spec.engine.kind, spec.engine.batch_complete_max),
            (EngineKind::Libaio, 16)
        );
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
    fn deep_queue_on_a_sync_engine_is_a_warning() {
        let resolved = run(&["--name=a", "--size=1m", "--iodepth=8"]).unwrap();
        assert_eq!(resolved.jobs[0].engine.iodepth, 8);
        assert_eq!(resolved.warnings.len(), 1);
        assert!(resolved.warnings[0].contains("iodepth=8 has no effect with ioengine=psync"));
        let resolved = run(&["--name=a", "--size=1m", "--fixedbufs"]).unwrap();
        assert!(resolved.warnings[0].contains("fixedbufs=1 is ignored by ioengine=psync"));
    }
}
