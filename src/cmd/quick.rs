//! `iolens quick [TARGET]` (and `iolens` alone): the built-in CrystalDiskMark-style suite.
//! The suite is data, `presets/quick.fio`, run through the ordinary job-file path; this
//! file only chooses the target and the engine and prints the compact table.

use super::common::{
    emit, fail_on, print, run_once, run_repeated, run_status, said_code, stop_flag, write_html,
    CmdError, HistoryError, HistoryFlags, JobSet, Repetitions,
};
use super::comparison;
use super::output::{self, Destination};
use crate::cli::{Format, QuickArgs, RunFlags};
use crate::model::RunReport;
use crate::report::{text::findings, text::quick};
use crate::runner::stop_signal::{remove_on_abort, RemovedOnAbort};
use crate::runner::RunOutcome;
use crate::series::fingerprint::TEMPORARY_TARGET_PREFIX;
use crate::store::Filter;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::{NamedTempFile, TempDir};

/// The suite: one section per row of the table.
pub(super) const PRESET: &str = include_str!("../../presets/quick.fio");
const DEFAULT_DURATION: Duration = Duration::from_secs(5);
const DEFAULT_RAMP: Duration = Duration::from_secs(1);
const DEFAULT_SIZE: &str = "1g";

pub(super) fn quick_command(args: &QuickArgs) -> Result<i32, CmdError> {
    if args.show_job {
        return print(PRESET);
    }
    let duration = args.duration.unwrap_or(DEFAULT_DURATION);
    let ramp = args.ramp.unwrap_or(DEFAULT_RAMP);
    // Installed first, so that a signal from here on stops the run or, on abort,
    // finds the temporary files to remove.
    let stop = stop_flag()?;
    let preset_dir = write_preset()
        .map_err(|e| CmdError::run_failed(format!("cannot write the preset job file: {e}")))?;
    let _preset_removed_on_abort = remove_on_abort(preset_dir.path());
    let history = HistoryFlags::new(&args.db, args.no_history);
    history.say_where_stored("iolens quick");
    // Resolved before this run is stored, so that `last` is the run before it.
    let baseline = match args.compare_with.as_deref() {
        Some(which) => {
            Some(baseline_id(which, &history).map_err(|e| CmdError::usage(e.to_string()))?)
        }
        None => None,
    };
    let target = Target::choose(args)?;
    let mut stale = remove_stale(&std::env::temp_dir(), PRESET_PREFIX);
    if let Some(dir) = target
        .created
        .as_ref()
        .and_then(|file| file.path().parent())
    {
        stale.extend(remove_stale(dir, TEMPORARY_TARGET_PREFIX));
    }
    if !stale.is_empty() {
        let names: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "iolens quick: removed what quick runs that were killed left behind: {}",
            names.join(", ")
        );
    }
    let engine = usable_engine();
    let repetitions = args.repeat.unwrap_or(1);
    eprintln!(
        "iolens quick: {} ({}), engine {engine}, each test {}s after a {}s ramp{}{}",
        target.path.display(),
        target.description,
        duration.as_secs_f64(),
        ramp.as_secs_f64(),
        if args.read_only { ", reads only" } else { "" },
        if repetitions > 1 {
            format!(", {repetitions} repetitions")
        } else {
            String::new()
        },
    );
    let mut job_args = vec![
        format!("--filename={}", target.path.display()),
        format!("--ioengine={engine}"),
        format!("--runtime={}ms", duration.as_millis()),
        format!("--ramp_time={}ms", ramp.as_millis()),
    ];
    if let Some(size) = &target.size {
        job_args.push(format!("--size={size}"));
    }
    job_args.push(preset_dir.path().join("quick.fio").display().to_string());
    let flags = RunFlags {
        eta: args.eta,
        allow_destructive: args.allow_device_write,
        section: match args.read_only {
            true => read_sections(PRESET).map(str::to_string).collect(),
            false => Vec::new(),
        },
        ..RunFlags::default()
    };
    let command_line: Vec<String> = std::env::args().skip(1).collect();
    let jobs = JobSet::load(&flags, &job_args, &command_line)?;
    if repetitions > 1 {
        let formats = [if args.json {
            Format::IolensJson
        } else {
            Format::Normal
        }];
        let options = Repetitions {
            repetitions,
            warmup: 0,
            formats: &formats,
            output: None,
            history: &history,
            compare_with: baseline,
            html: args.html.as_deref(),
            fail_on: args.fail_on,
            // The stderr summary is `run`'s; quick's --json stays as it is.
            quiet_findings: true,
        };
        return run_repeated(&jobs, &options, &stop, None);
    }
    // Written, stored and judged alike whether the run returns or its stuck
    // worker threads are left behind (then the process exits with the code).
    let finish = |report: RunReport| -> Result<i32, CmdError> {
        let rendered = if args.json {
            output::render(&report, &[Format::IolensJson])
        } else {
            format!(
                "{}{}",
                quick::render_table(&report),
                findings::render(&report.findings)
            )
        };
        emit(&mut Destination::Stdout, &rendered)?;
        // With a baseline the page is the comparison, which holds this run's charts too.
        if let (Some(path), None) = (&args.html, baseline) {
            write_html(path, &output::render_html(&report))?;
        }
        let code = run_status(&report);
        if interrupted_before_measuring(&report) {
            eprintln!("iolens quick: interrupted before any test measured: nothing stored");
            return Ok(code);
        }
        let reports = [report];
        history.record(&reports);
        if let Some(id) = baseline {
            comparison::against_history(id, &reports, &history, args.html.as_deref(), None)?;
        }
        Ok(fail_on(code, args.fail_on, &reports[0].findings))
    };
    let on_abandoned = |outcome: RunOutcome| said_code(finish(outcome.report));
    let outcome = run_once(&jobs, &stop, None, Some(&on_abandoned), None, None)?;
    finish(outcome.report)
}

/// What the suite runs on; a file it created is removed when this is dropped,
/// on every way out of `quick_command` (Ctrl-C stops the run, then returns here).
struct Target {
    path: PathBuf,
    description: &'static str,
    /// `--size` for the jobs; None keeps the size of an existing file or device.
    size: Option<String>,
    /// The name of the file the run creates, removed when this is dropped.
    created: Option<NamedTempFile<PathBuf>>,
    /// The created file, removed also when a signal aborts the process.
    _removed_on_abort: Option<RemovedOnAbort>,
}

impl Target {
    fn choose(args: &QuickArgs) -> Result<Target, CmdError> {
        let given = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
        // An absolute path reads better in the report and the history.
        let given = std::fs::canonicalize(&given).unwrap_or(given);
        let size = args.size.clone().unwrap_or_else(|| DEFAULT_SIZE.into());
        let metadata = std::fs::metadata(&given).ok();
        match metadata {
            Some(m) if m.file_type().is_block_device() => {
                refuse_overwriting(args, &given, "this block device".into())?;
                Ok(Target {
                    path: given,
                    description: "block device",
                    size: args.size.clone(),
                    created: None,
                    _removed_on_abort: None,
                })
            }
            Some(m) if m.is_dir() => {
                // Only a fresh name: the run creates the file itself (O_EXCL, never
                // through a link someone put at the name) and works on that descriptor.
                let file = tempfile::Builder::new()
                    .prefix(&temporary_prefix())
                    .make_in(&given, |path| Ok(path.to_path_buf()))
                    .map_err(|e| {
                        CmdError::usage(format!(
                            "cannot create a test file in {}: {e} (choose a writable directory)",
                            given.display()
                        ))
                    })?;
                Ok(Target {
                    path: file.path().to_path_buf(),
                    description: "temporary test file, removed afterwards",
                    size: Some(size),
                    _removed_on_abort: Some(remove_on_abort(file.path())),
                    created: Some(file),
                })
            }
            // An existing file keeps its size unless --size is given; its data is
            // overwritten only when asked, as a device's is.
            Some(m) if m.len() > 0 => {
                let what = format!("this existing file of {} bytes", m.len());
                refuse_overwriting(args, &given, what)?;
                Ok(Target {
                    path: given,
                    description: "existing file",
                    size: args.size.clone(),
                    created: None,
                    _removed_on_abort: None,
                })
            }
            _ => Ok(Target {
                path: given,
                description: "test file, kept afterwards",
                size: Some(size),
                created: None,
                _removed_on_abort: None,
            }),
        }
    }
}

/// A target iolens did not create (a block device, an existing file) is written only
/// with `--allow-destructive`; `--read-only` runs only the read tests on it.
fn refuse_overwriting(args: &QuickArgs, given: &Path, what: String) -> Result<(), CmdError> {
    if args.read_only || args.allow_device_write {
        return Ok(());
    }
    Err(CmdError::usage(format!(
        "{}: the write tests would overwrite {what}; add --allow-destructive \
         (alias --allow-device-write) or run --read-only",
        given.display()
    )))
}

/// The start of the name of quick's temporary file: it holds this process's id.
fn temporary_prefix() -> String {
    format!("{TEMPORARY_TARGET_PREFIX}{}-", std::process::id())
}

/// Stopped before any test of the suite completed an I/O: no result worth storing.
fn interrupted_before_measuring(report: &RunReport) -> bool {
    report.interrupted && report.jobs.iter().all(|j| j.total_ios() == 0)
}

/// The start of the names of the preset's directories, before the process id.
const PRESET_PREFIX: &str = "iolens-preset-";

/// The preset as a job file in a private temporary directory, for the job-file reader.
fn write_preset() -> std::io::Result<TempDir> {
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PRESET_PREFIX}{}-", std::process::id()))
        .tempdir()?;
    std::fs::write(dir.path().join("quick.fio"), PRESET)?;
    Ok(dir)
}

/// Remove what quick runs killed before they could clean up (SIGKILL) left in `dir`:
/// the entries named `{prefix}{pid}-…` whose process is gone, owned by this user.
/// One whose process still runs is kept (also when the id was reused).
fn remove_stale(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, _)) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix)?.split_once('-'))
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        // the entry itself, never what a link at the name points to
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if Path::new("/proc").join(pid.to_string()).exists() || Some(meta.uid()) != me {
            continue;
        }
        let path = entry.path();
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        if gone.is_ok() {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

/// The section names of a job file, `[global]` included.
fn sections(job_file: &str) -> impl Iterator<Item = &str> {
    job_file
        .lines()
        .filter_map(|l| l.trim().strip_prefix('[')?.strip_suffix(']'))
}

/// The preset's sections that only read (`--read-only`).
fn read_sections(preset: &str) -> impl Iterator<Item = &str> {
    sections(preset).filter(|name| name.ends_with("-read"))
}

/// The first engine of io_uring, libaio, psync that this kernel lets us set up
/// (io_uring is often disabled by sysctl or seccomp in containers).
fn usable_engine() -> &'static str {
    const PROBE_BYTES: usize = 4096;
    let options = iolens_sys::UringOptions::default();
    if iolens_sys::Uring::new(1, PROBE_BYTES, PROBE_BYTES, &[], options).is_ok() {
        "io_uring"
    } else if iolens_sys::AioRing::new(1, PROBE_BYTES, PROBE_BYTES, &[]).is_ok() {
        "libaio"
    } else {
        "psync"
    }
}

/// `--compare-with ID|last`: `last` is the latest stored quick run.
fn baseline_id(which: &str, history: &HistoryFlags) -> Result<i64, BaselineError> {
    if which != "last" {
        return which
            .parse()
            .map_err(|_| BaselineError::NotAnId(which.into()));
    }
    let first_test = sections(PRESET)
        .find(|s| *s != "global")
        .expect("the preset has a test");
    let filter = Filter {
        job: Some(first_test.to_string()),
        ..Filter::default()
    };
    let runs =
        super::common::skipping_damaged(history.open()?.list(&filter).map_err(HistoryError::from)?);
    runs.last().map(|r| r.id).ok_or(BaselineError::NoneStored)
}

/// Why `--compare-with` found no run to compare with.
#[derive(Debug, thiserror::Error)]
enum BaselineError {
    /// Neither a number nor `last`.
    #[error("--compare-with={0}: give a history id or `last`")]
    NotAnId(String),
    /// `last`, and no quick run is stored.
    #[error("--compare-with=last: no quick run is stored yet")]
    NoneStored,
    /// The history could not be opened or read.
    #[error(transparent)]
    History(#[from] HistoryError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preset_has_the_eight_tests() {
        let all: Vec<&str> = sections(PRESET).collect();
        assert_eq!(all.len(), 9, "[global] and eight tests: {all:?}");
        let reads: Vec<&str> = read_sections(PRESET).collect();
        assert_eq!(
            reads,
            [
                "SEQ1M-Q8T1-read",
                "SEQ1M-Q1T1-read",
                "RND4K-Q32T1-read",
                "RND4K-Q1T1-read"
            ]
        );
    }

    #[test]
    fn only_leftovers_named_with_an_ended_process_are_removed_and_links_not_followed() {
        let dir = crate::testutil::scratch_dir();
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        ended.wait().unwrap();
        let dead = ended.id();
        let at = |name: String| dir.path().join(name);
        let kept = [
            at(format!(".iolens-quick-{dead}")),
            at(format!(".iolens-quick-x{dead}-a")),
            at(format!(".iolens-quick-{}-a", std::process::id())),
            at("victim".into()),
        ];
        kept.iter()
            .for_each(|p| std::fs::write(p, b"keep").unwrap());
        let link = at(format!(".iolens-quick-{dead}-link"));
        std::os::unix::fs::symlink(&kept[3], &link).unwrap();
        let removed = remove_stale(dir.path(), TEMPORARY_TARGET_PREFIX);
        assert_eq!(removed, std::slice::from_ref(&link));
        assert!(!link.is_symlink() && kept.iter().all(|p| p.exists()));
    }

    #[test]
    fn an_engine_is_always_found() {
        assert!(["io_uring", "libaio", "psync"].contains(&usable_engine()));
    }

    #[test]
    fn compare_with_takes_an_id() {
        let history = HistoryFlags::default();
        assert_eq!(baseline_id("12", &history).expect("an id"), 12);
        assert_eq!(
            baseline_id("yesterday", &history)
                .expect_err("not an id")
                .to_string(),
            "--compare-with=yesterday: give a history id or `last`"
        );
        assert_eq!(
            BaselineError::NoneStored.to_string(),
            "--compare-with=last: no quick run is stored yet"
        );
    }
}
