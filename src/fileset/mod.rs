//! Targets: decide which files each worker uses, create and lay them out,
//! open every target once per run, detect sizes and sector sizes, and check
//! direct-I/O alignment before the first I/O.
//!
//! Opening once matters: seed 000 showed a close/reopen race letting another
//! process pollute a block device's page cache mid-run. Descriptors live in
//! the `FileSet` until the whole run is over.

mod contain;
mod guard;
mod layout;
mod lockfile;
mod names;
mod readonly;
mod scheduler;

use crate::job::spec::{BlockSizes, FadviseHint, Fallocate, JobSpec, SizeOrPercent, SyncMode};
use iolens_sys::fd;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use guard::{check_device_is_free_to_overwrite, mounted_at, read_signature, GuardOverrides};
use layout::LayoutRequest;
pub use layout::{has_holes, has_unwritten_extents};
pub use lockfile::FileLocks;
pub use readonly::refuse_writing_jobs;
pub use scheduler::SchedulerSwitch;

/// Where a setup step stands, told as it goes: what it does ("laying out"), on
/// what (a file), bytes done of total (0 of 0 when it does not count bytes).
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    pub doing: &'static str,
    pub on: &'a str,
    pub done: u64,
    pub total: u64,
}

/// Told of every step of setup as it makes progress (a rank of a run on several
/// hosts says from here that it is alive).
pub trait Progress {
    fn step(&self, step: Step<'_>);
}

/// No one listening: a run on its own.
impl Progress for () {
    fn step(&self, _: Step<'_>) {}
}

/// Why a target could not be prepared. One line, naming the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{0}")]
    Config(String),
    #[error("{}: {what}: {}", path.display(), crate::errno::describe(source))]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl TargetError {
    fn io(path: &Path, what: &'static str, source: std::io::Error) -> Self {
        TargetError::Io {
            path: path.to_path_buf(),
            what,
            source,
        }
    }
}

/// One opened target (a file or block device), shared by the workers that use it.
#[derive(Debug)]
pub struct Target {
    pub path: PathBuf,
    pub file: Arc<File>,
    /// Bytes available for I/O (file length or device size).
    pub size: u64,
    pub is_block_device: bool,
    /// Offsets and lengths of direct I/O must be multiples of this.
    pub dio_offset_align: u64,
    /// Buffers of direct I/O must be aligned to this.
    pub dio_mem_align: u64,
    /// We created the file in this run (so `unlink` may remove it).
    pub created: bool,
    /// How `file` was opened, so a worker process can open its own descriptor alike.
    pub open_mode: OpenMode,
}

/// The flags a target is opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenMode {
    pub write: bool,
    pub direct: bool,
    pub sync: SyncMode,
    /// A file operation engine's target: only its name is used, and the descriptor
    /// is a placeholder (`/dev/null`), since the name may not exist yet.
    pub names_only: bool,
}

/// Open `path` for I/O the way `mode` says (always readable).
pub fn open_file(path: &Path, mode: OpenMode) -> std::io::Result<File> {
    if mode.names_only {
        return File::open(DISKLESS_TARGET);
    }
    let mut flags = 0;
    if mode.direct {
        flags |= fd::open_flags::DIRECT;
    }
    match mode.sync {
        SyncMode::None => {}
        SyncMode::Sync => flags |= fd::open_flags::SYNC,
        SyncMode::Dsync => flags |= fd::open_flags::DSYNC,
    }
    OpenOptions::new()
        .read(true)
        .write(mode.write)
        .custom_flags(flags)
        .open(path)
}

impl Target {
    /// Drop the target's cached pages (fio's invalidate=1): fadvise(DONTNEED)
    /// for files, BLKFLSBUF for block devices (needs CAP_SYS_ADMIN). A file's
    /// dirty pages are written back first: fadvise keeps them, and an earlier
    /// writer's writeback would otherwise run during the measurement (BLKFLSBUF
    /// writes a device's back itself).
    pub fn drop_cache(&self) -> std::io::Result<()> {
        if self.is_block_device {
            fd::blk_flush_buffers(&self.file)
        } else {
            self.file.sync_data()?;
            fd::fadvise_dontneed(&self.file, 0, 0)
        }
    }
}

/// The byte range of one target a worker does I/O on.
#[derive(Debug, Clone)]
pub struct WorkerFile {
    pub target: usize,
    pub start: u64,
    pub len: u64,
}

/// The files of one worker of one job.
#[derive(Debug, Clone)]
pub struct WorkerFiles {
    pub files: Vec<WorkerFile>,
}

/// Every target of a run, opened once, and the files of every worker.
#[derive(Debug, Default)]
pub struct FileSet {
    pub targets: Vec<Target>,
    /// `workers[job][worker]`
    pub workers: Vec<Vec<WorkerFiles>>,
    /// Things worth telling the user (sparse files read, etc.).
    pub warnings: Vec<String>,
    /// The files laid out with data, and what was written of each.
    pub layouts: Vec<(PathBuf, layout::Written)>,
    /// Per job: it does no I/O (null engine), so there is nothing to invalidate or unlink.
    diskless: Vec<bool>,
    /// Every target opened so far, so a job opened later shares them.
    opened: HashMap<OpenKey, usize>,
    /// What the run needs of each path, and whether the run created it.
    paths: HashMap<PathBuf, PathState>,
    /// The one placeholder descriptor every name of a file operation engine shares.
    placeholder: Option<Arc<File>>,
    /// Per job: its regions, while a file of it is still to be created when its
    /// group starts (`create_on_open`); its `workers` entry is empty until then.
    pending: Vec<Option<Vec<Vec<PlannedRegion>>>>,
}

#[derive(Debug, Clone, Copy)]
struct PathState {
    needs: PathNeeds,
    created: bool,
}

/// How a target must be opened; targets with equal keys share one descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct OpenKey {
    path: PathBuf,
    direct: bool,
    sync: SyncMode,
    /// `sync` engine workers seek on their descriptor, so each gets its own.
    private_to: Option<(usize, u32)>,
    names_only: bool,
}

/// What jobs with the null engine "open": they move no data and touch no file.
const DISKLESS_TARGET: &str = "/dev/null";

/// True for jobs that do no I/O (the null engine): no file is created or opened for them.
pub fn is_diskless(job: &JobSpec) -> bool {
    job.engine.kind.def().diskless
}

/// (path, start, len) of one region of a worker, before the path is opened.
type PlannedRegion = (PathBuf, u64, u64);

/// What the run needs of one path, over all jobs that use it.
#[derive(Debug, Clone, Copy)]
struct PathNeeds {
    /// Bytes the jobs address (end of the furthest region).
    extent: u64,
    reads: bool,
    /// Writes or trims: the path is opened for writing and guarded like a write target.
    writes: bool,
    /// Trims: the file gets its data first, so they have blocks to discard.
    trims: bool,
    overwrite: bool,
    /// The first job using the path decides how it is preallocated.
    fallocate: Fallocate,
    /// Every job using the path allows creating it.
    may_create: bool,
    /// Every job writing the path allows writing it while mounted.
    mounted_write: bool,
    /// Every job using the path has `create_on_open`.
    create_on_open: bool,
}

impl PathNeeds {
    fn new(first_job: &JobSpec) -> Self {
        Self {
            extent: 0,
            reads: false,
            writes: false,
            trims: false,
            overwrite: false,
            fallocate: first_job.files.fallocate,
            may_create: true,
            mounted_write: true,
            create_on_open: true,
        }
    }

    fn add(&mut self, job: &JobSpec, end: u64) {
        let writes = job.workload.rw.writes() || job.workload.rw.trims();
        self.extent = self.extent.max(end);
        self.reads |= job.workload.rw.reads();
        self.writes |= writes;
        self.trims |= job.workload.rw.trims();
        self.overwrite |= job.io.overwrite;
        self.may_create &= job.files.allow_file_create;
        self.mounted_write &= !writes || job.files.allow_mounted_write;
        self.create_on_open &= job.files.create_on_open;
    }
}

/// Prepare every target of `jobs`: create and lay out files, open them, and
/// assign each worker its regions. `allow_device_write` (`--allow-destructive`)
/// lifts the guard on block devices that hold data or are in use; `readonly`
/// (fio's `--readonly`, whose jobs `refuse_writing_jobs` has checked) refuses
/// files that need laying out.
///
/// A missing file that only `create_on_open` jobs use is neither created nor
/// opened here: `open_on_start` does that when the job's group starts.
pub fn prepare(
    jobs: &[JobSpec],
    allow_device_write: bool,
    readonly: bool,
    progress: &dyn Progress,
) -> Result<FileSet, TargetError> {
    let mut set = FileSet::default();
    let plans: Vec<Vec<Vec<PlannedRegion>>> = jobs
        .iter()
        .enumerate()
        .map(|(j, job)| plan_job(j, job))
        .collect::<Result<_, _>>()?;

    // Lay out files first, once per path, large enough for every job using it.
    let mut needs: HashMap<PathBuf, PathNeeds> = HashMap::new();
    for (job, plan) in jobs.iter().zip(&plans).filter(|(job, _)| !is_diskless(job)) {
        for worker in plan {
            for (path, start, len) in worker {
                needs
                    .entry(path.clone())
                    .or_insert_with(|| PathNeeds::new(job))
                    .add(job, start + len);
            }
        }
    }
    if !readonly {
        // fio makes the directories a name needs, given (filename=logs/a) or generated
        // (filename_format=$jobname/$filenum)
        for (_, plan) in jobs.iter().zip(&plans).filter(|(job, _)| !is_diskless(job)) {
            for (path, _, _) in plan.iter().flatten() {
                contain::make_parents(path)?;
            }
        }
    }
    let mut created_on_open = HashSet::new();
    let mut paths: Vec<_> = needs.iter().collect();
    paths.sort_by(|a, b| a.0.cmp(b.0));
    for (path, need) in paths {
        if need.create_on_open && existing_size(path)?.is_none() {
            created_on_open.insert(path.clone());
            set.paths.insert(
                path.clone(),
                PathState {
                    needs: *need,
                    created: false,
                },
            );
            continue;
        }
        if readonly && !is_block_device(path) {
            readonly::refuse_layout(path, existing_size(path)?, need.extent)?;
        }
        let outcome = layout::ensure(
            path,
            &LayoutRequest {
                extent: need.extent,
                fill: need.reads || need.trims || need.overwrite,
                fallocate: need.fallocate,
                may_create: need.may_create,
            },
            progress,
        )?;
        if need.writes && outcome.is_block_device {
            // allow_mounted_write=1 in every job writing the device lifts the in-use checks only.
            let allow = GuardOverrides {
                destructive: allow_device_write,
                mounted: need.mounted_write,
            };
            check_device_is_free_to_overwrite(path, allow)?;
        }
        set.warnings.extend(outcome.preallocation_failed);
        set.layouts
            .extend(outcome.written.map(|written| (path.clone(), written)));
        if need.reads && outcome.sparse {
            set.warnings.push(format!(
                "{}: the file has holes; reading them returns zeros without touching the device, so read results would be fake (delete it to let iolens lay it out, or write it fully first)",
                path.display()
            ));
        }
        set.paths.insert(
            path.clone(),
            PathState {
                needs: *need,
                created: outcome.created,
            },
        );
    }

    for (job, plan) in jobs.iter().zip(&plans) {
        names::make_ready(job, plan, readonly)?;
    }
    set.diskless = jobs.iter().map(is_diskless).collect();
    for (j, (job, plan)) in jobs.iter().zip(plans).enumerate() {
        let later = plan
            .iter()
            .flatten()
            .find(|(path, _, _)| created_on_open.contains(path) && !is_diskless(job));
        if let Some((path, _, _)) = later {
            check_starts_empty(job, path)?;
            set.workers.push(Vec::new());
            set.pending.push(Some(plan));
        } else {
            let workers = set.open_job(j, job, &plan, progress)?;
            set.workers.push(workers);
            set.pending.push(None);
        }
    }
    // a scheduler a disk does not offer is refused before any job runs
    for (j, job) in jobs.iter().enumerate() {
        if let Some(wanted) = &job.files.ioscheduler {
            scheduler::check_offered(&set, j, &job.name, wanted)?;
        }
    }
    Ok(set)
}

/// A job whose file `create_on_open` creates when it starts finds it empty: only
/// writes make sense (fio's reads of it fail with EIO).
fn check_starts_empty(job: &JobSpec, path: &Path) -> Result<(), TargetError> {
    if job.iolog.replay.is_some() {
        // a replayed log may read only what it wrote first
        return Ok(());
    }
    let rw = job.workload.rw;
    let (wants, what) = if rw.reads() {
        (true, "read".to_string())
    } else if rw.trims() {
        (true, "trim".to_string())
    } else {
        let engine = job.engine.kind;
        (
            engine.def().maps_files,
            format!("map (ioengine={})", engine.name()),
        )
    };
    if !wants {
        return Ok(());
    }
    Err(TargetError::Config(format!(
        "job '{}': {} does not exist and create_on_open=1 creates it empty when the job starts, so there is nothing to {what} (drop create_on_open to let iolens lay it out, or create the file first)",
        job.name,
        path.display()
    )))
}

impl FileSet {
    /// Create the files `create_on_open` left for this job's start (empty, no
    /// layout) and open its targets; nothing to do for other jobs or a second call.
    pub fn open_on_start(
        &mut self,
        job_index: usize,
        job: &JobSpec,
        progress: &dyn Progress,
    ) -> Result<(), TargetError> {
        let Some(plan) = self.pending[job_index].take() else {
            return Ok(());
        };
        for (path, _, _) in plan.iter().flatten() {
            let Some(state) = self.paths.get_mut(path) else {
                continue;
            };
            if state.needs.create_on_open && !path.exists() {
                let empty = LayoutRequest {
                    extent: 0,
                    fill: false,
                    fallocate: state.needs.fallocate,
                    may_create: state.needs.may_create,
                };
                state.created = layout::ensure(path, &empty, progress)?.created;
            }
        }
        self.workers[job_index] = self.open_job(job_index, job, &plan, progress)?;
        Ok(())
    }

    /// Open (or share) the targets of one job's workers and check their alignment.
    fn open_job(
        &mut self,
        j: usize,
        job: &JobSpec,
        plan: &[Vec<PlannedRegion>],
        progress: &dyn Progress,
    ) -> Result<Vec<WorkerFiles>, TargetError> {
        let diskless = is_diskless(job);
        // An engine that reads and writes at the file position needs a descriptor per worker.
        let own_descriptor = job.engine.kind.def().uses_file_position;
        let names_only = job.engine.kind.def().file_op.is_some();
        let mut job_workers = Vec::new();
        for (w, worker) in plan.iter().enumerate() {
            let mut files = Vec::new();
            for (path, start, len) in worker {
                // The null engine does no I/O: its workers share one harmless descriptor.
                let path = if diskless && !names_only {
                    Path::new(DISKLESS_TARGET)
                } else {
                    path.as_path()
                };
                let key = OpenKey {
                    path: path.to_path_buf(),
                    direct: job.io.direct && !diskless,
                    sync: if diskless {
                        SyncMode::None
                    } else {
                        job.io.sync
                    },
                    private_to: own_descriptor.then_some((j, w as u32)),
                    names_only,
                };
                let target = match self.opened.get(&key) {
                    Some(&t) => t,
                    None => {
                        let state = self.paths.get(path);
                        let needs_write = state.is_some_and(|s| s.needs.writes);
                        let was_created = state.is_some_and(|s| s.created);
                        progress.step(Step {
                            doing: "opening",
                            on: &key.path.to_string_lossy(),
                            done: 0,
                            total: 0,
                        });
                        let target = if names_only {
                            self.name_target(&key.path)?
                        } else {
                            open_target(&key, needs_write, was_created)?
                        };
                        self.targets.push(target);
                        self.opened.insert(key, self.targets.len() - 1);
                        self.targets.len() - 1
                    }
                };
                files.push(WorkerFile {
                    target,
                    start: *start,
                    len: *len,
                });
            }
            job_workers.push(WorkerFiles { files });
        }
        check_alignment(job, &self.targets, &job_workers)?;
        Ok(job_workers)
    }
}

impl FileSet {
    /// A file operation engine's name: a target that shares the placeholder descriptor,
    /// so a job with tens of thousands of names holds one descriptor, not one per name.
    fn name_target(&mut self, path: &Path) -> Result<Target, TargetError> {
        let file = match &self.placeholder {
            Some(file) => file.clone(),
            None => {
                let file = File::open(DISKLESS_TARGET)
                    .map_err(|e| TargetError::io(Path::new(DISKLESS_TARGET), "open", e))?;
                self.placeholder.insert(Arc::new(file)).clone()
            }
        };
        Ok(Target {
            path: path.to_path_buf(),
            file,
            size: 0,
            is_block_device: false,
            dio_offset_align: 1,
            dio_mem_align: 1,
            created: false,
            open_mode: OpenMode {
                write: false,
                direct: false,
                sync: SyncMode::None,
                names_only: true,
            },
        })
    }
}

/// The (path, start, len) regions of each worker of a job, before opening.
fn plan_job(job_index: usize, job: &JobSpec) -> Result<Vec<Vec<PlannedRegion>>, TargetError> {
    (0..job.exec.numjobs)
        .map(|w| checked_regions(job_index, job, w, clone_regions(job_index, job, w)?))
        .collect()
}

/// The regions of clone `w` of a job: on its filename= files, else on its generated names.
fn clone_regions(
    job_index: usize,
    job: &JobSpec,
    w: u32,
) -> Result<Vec<PlannedRegion>, TargetError> {
    let t = &job.target;
    let mut regions = Vec::new();
    if !t.filenames.is_empty() {
        for path in &t.filenames {
            let files = t.filenames.len() as u64;
            regions.push(named_region(job_index, job, w, path, files)?);
        }
        return Ok(regions);
    }
    // Generated names live in `directory` (default: the current directory).
    let nrfiles = t.nrfiles.max(1);
    let paths = (0..nrfiles).map(|f| generated_path(t, &job.name, w, f));
    // fio: without size= a generated name, like a given one, is an existing file used whole
    if t.size.is_none() && t.filesize.is_none() {
        for path in paths {
            regions.push(named_region(job_index, job, w, &path?, nrfiles.into())?);
        }
        return Ok(regions);
    }
    let total = match t.size {
        Some(SizeOrPercent::Bytes(b)) => b,
        _ => t.filesize.map(|f| f * u64::from(nrfiles)).ok_or_else(|| {
            TargetError::Config(format!(
                "job '{}': size= is a percentage, but without filename= there is no file it is a percentage of (give size= in bytes, e.g. size=1g, or filename=)",
                job.name
            ))
        })?,
    };
    let filesize = t.filesize.unwrap_or(total / u64::from(nrfiles));
    for path in paths {
        let offset = start_of(t, w, filesize);
        // fio: with filesize= the region is what lies past the offset
        // (a start past the file's end is refused); without it the file
        // grows to hold size/nrfiles past the offset
        let len = match t.filesize {
            Some(fs) if offset > fs => {
                return Err(TargetError::Config(format!(
                    "job '{}' (job {}, clone {w}): its start, offset= + {w} x offset_increment= = {offset} bytes, lies past filesize={fs} (fio refuses it too); lower offset= or offset_increment=, or raise filesize=",
                    job.name,
                    job_index + 1
                )))
            }
            Some(fs) => fs - offset,
            None => filesize,
        };
        regions.push((path?, offset, len));
    }
    Ok(regions)
}

/// fio: a clone's regions (at most size=) must hold the smallest block.
fn checked_regions(
    job_index: usize,
    job: &JobSpec,
    w: u32,
    regions: Vec<PlannedRegion>,
) -> Result<Vec<PlannedRegion>, TargetError> {
    let t = &job.target;
    let held: u64 = regions.iter().map(|r| r.2).sum();
    let held = match t.size {
        Some(SizeOrPercent::Bytes(size)) => held.min(size),
        _ => held,
    };
    if held < smallest_block(job) {
        return Err(TargetError::Config(format!(
            "job '{}' (job {}, clone {w}): the region to do I/O on holds {held} bytes, less than the smallest block {} (check size=, offset=, offset_increment= and filesize=)",
            job.name,
            job_index + 1,
            smallest_block(job)
        )));
    }
    Ok(regions)
}

/// Where clone `w`'s file `f` of a job without filename= lives: its generated name in
/// `directory` (which it must not lead out of), else in the current directory.
fn generated_path(
    t: &crate::job::spec::TargetSpec,
    job_name: &str,
    w: u32,
    f: u32,
) -> Result<PathBuf, TargetError> {
    let name = generated_name(&t.filename_format, job_name, w, f, t.rank);
    match t.directory_of_clone(w) {
        Some(d) => {
            let path = d.join(name);
            contain::check_inside(&d, &path)?;
            Ok(path)
        }
        None => Ok(PathBuf::from(name)),
    }
}

/// The region of clone `w` on `path`, an existing file or device (or one `size=` lays
/// out), one of the job's `files` named or generated files.
fn named_region(
    job_index: usize,
    job: &JobSpec,
    w: u32,
    path: &Path,
    files: u64,
) -> Result<PlannedRegion, TargetError> {
    let t = &job.target;
    let existing = existing_size(path)?;
    let base_size = existing.unwrap_or(0);
    let offset = start_of(t, w, base_size);
    let device = is_block_device(path);
    let whole = t.size.is_none() && t.filesize.is_none();
    // fio: without size= (and on a device always) the region ends at the end
    if let Some(end) = existing.filter(|&end| end > 0 && offset >= end) {
        if whole || device {
            return Err(TargetError::Config(format!(
                "job '{}' (job {}, clone {w}): its start, offset= + {w} x offset_increment= = {offset} bytes, is not before the end of {} ({end} bytes), which leaves nothing to do I/O on (fio refuses it too); lower offset= or offset_increment= (or numjobs=)",
                job.name,
                job_index + 1,
                path.display()
            )));
        }
    }
    let len = match (t.size, t.filesize, existing) {
        // fio: a percentage of the file past the offset, whole blocks
        (Some(SizeOrPercent::Percent(p)), _, _) => {
            let len = SizeOrPercent::Percent(p)
                .resolve(base_size)
                .min(base_size.saturating_sub(offset));
            len - len % smallest_block(job)
        }
        (Some(s), _, _) => s.resolve(base_size) / files,
        (None, Some(fs), _) => fs,
        // fio: no size= is the whole file or device past the offset
        (None, None, Some(end)) if end > 0 => end - offset,
        (None, None, found) => {
            let state = if found.is_some() {
                "is empty"
            } else {
                "does not exist"
            };
            return Err(TargetError::Config(format!(
                "job '{}': {} {state}, and without size= a job uses the whole existing file (fio refuses it too: it needs size=); set size= (e.g. size=1g) to have it laid out",
                job.name,
                path.display()
            )));
        }
    };
    if matches!(t.size, Some(SizeOrPercent::Percent(_))) && existing.is_none() {
        return Err(TargetError::Config(format!(
            "job '{}': size= is a percentage but {} does not exist yet (give size= in bytes, e.g. size=1g)",
            job.name,
            path.display()
        )));
    }
    // fio stops at a device's end; a job asking for more is refused
    if device && offset + len > base_size {
        return Err(TargetError::Config(format!(
            "job '{}' (job {}, clone {w}): its region, {len} bytes from offset= + {w} x offset_increment= = {offset}, ends past the end of {}: the device holds {base_size} bytes (lower size=, offset= or offset_increment=, or leave size= out to use the rest of the device)",
            job.name,
            job_index + 1,
            path.display()
        )));
    }
    Ok((path.to_path_buf(), offset, len))
}

/// fio: offset= (plus offset_increment per clone) applies to every file, named or
/// generated; a percentage is of the file's size.
fn start_of(t: &crate::job::spec::TargetSpec, w: u32, file_size: u64) -> u64 {
    t.offset.resolve(file_size) + u64::from(w) * t.offset_increment.resolve(file_size)
}

/// fio's `filename_format` expansion: its keywords in any case, `$clientuid` the
/// `rank` of a run on several ranks (fio's client in its client/server mode), else
/// empty; other `$words` are kept as written. A rank not placed by `$clientuid`
/// ends the name (`.rank3`), so ranks never share a generated file.
fn generated_name(
    format: &str,
    job_name: &str,
    worker: u32,
    file: u32,
    rank: Option<u32>,
) -> String {
    let format = match rank {
        Some(rank) if !format.to_ascii_lowercase().contains("$clientuid") => {
            format!("{format}.rank{rank}")
        }
        _ => format.to_string(),
    };
    let keywords = [
        ("$jobname", job_name.to_string()),
        ("$jobnum", worker.to_string()),
        ("$filenum", file.to_string()),
        (
            "$clientuid",
            rank.map(|r| r.to_string()).unwrap_or_default(),
        ),
    ];
    keywords.iter().fold(format, |name, (keyword, value)| {
        let mut out = String::with_capacity(name.len());
        let mut rest = name.as_str();
        while let Some(at) = rest.to_ascii_lowercase().find(keyword) {
            out.push_str(&rest[..at]);
            out.push_str(value);
            rest = &rest[at + keyword.len()..];
        }
        out.push_str(rest);
        out
    })
}

fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// Current size of a path: file length or block device size; None if absent.
fn existing_size(path: &Path) -> Result<Option<u64>, TargetError> {
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => {
            let f = File::open(path).map_err(|e| TargetError::io(path, "open", e))?;
            fd::blk_size_bytes(&f)
                .map(Some)
                .map_err(|e| TargetError::io(path, "read device size (BLKGETSIZE64)", e))
        }
        Ok(m) => Ok(Some(m.len())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TargetError::io(path, "stat", e)),
    }
}

fn open_target(key: &OpenKey, write: bool, created: bool) -> Result<Target, TargetError> {
    let path = &key.path;
    let open_mode = OpenMode {
        write,
        direct: key.direct,
        sync: key.sync,
        names_only: key.names_only,
    };
    let file = open_file(path, open_mode).map_err(|e| {
            if key.direct && e.raw_os_error() == Some(libc::EINVAL) {
                TargetError::Config(format!(
                    "{}: the filesystem refuses O_DIRECT (tmpfs does); use direct=0 or a file on a disk-backed filesystem",
                    path.display()
                ))
            } else {
                TargetError::io(path, "open", e)
            }
        })?;
    let meta = file
        .metadata()
        .map_err(|e| TargetError::io(path, "stat", e))?;
    let is_block_device = meta.file_type().is_block_device();
    let (size, offset_align, mem_align) = if is_block_device {
        let size = fd::blk_size_bytes(&file)
            .map_err(|e| TargetError::io(path, "read device size (BLKGETSIZE64)", e))?;
        let sector = fd::blk_logical_sector(&file)
            .map_err(|e| TargetError::io(path, "read logical sector size (BLKSSZGET)", e))?;
        (size, u64::from(sector), u64::from(sector))
    } else {
        let align = fd::dio_alignment(&file).ok().flatten();
        let (mem, off) = align.map_or((512, meta.blksize().min(4096)), |a| {
            (u64::from(a.mem_align), u64::from(a.offset_align))
        });
        (meta.len(), off, mem)
    };
    Ok(Target {
        path: path.clone(),
        file: Arc::new(file),
        size,
        is_block_device,
        dio_offset_align: offset_align.max(1),
        dio_mem_align: mem_align.max(1),
        created,
        open_mode,
    })
}

/// With direct=1, block sizes and offsets must be multiples of the target's
/// direct-I/O alignment; say so before the first I/O instead of failing with EINVAL.
fn check_alignment(
    job: &JobSpec,
    targets: &[Target],
    workers: &[WorkerFiles],
) -> Result<(), TargetError> {
    if !job.io.direct || is_diskless(job) {
        return Ok(());
    }
    for worker in workers {
        for wf in &worker.files {
            let target = &targets[wf.target];
            let align = target.dio_offset_align;
            let what = if target.is_block_device {
                "logical sector"
            } else {
                "direct-I/O alignment"
            };
            let misfit = |option: &str, value: u64| {
                TargetError::Config(format!(
                    "job '{}': {option}={value} is not a multiple of the {align}-byte {what} of {}, which direct=1 requires (use a multiple of {align}, or direct=0)",
                    job.name,
                    target.path.display()
                ))
            };
            let used = job.workload.rw.directions();
            for (d, bs) in job.workload.bs.iter().enumerate() {
                if !used[d] {
                    continue;
                }
                for size in block_sizes_of(bs) {
                    if !size.is_multiple_of(align) {
                        return Err(misfit("bs", size));
                    }
                }
                if !job.workload.blockalign[d].is_multiple_of(align) {
                    return Err(misfit("blockalign", job.workload.blockalign[d]));
                }
            }
            if !wf.start.is_multiple_of(align) {
                return Err(misfit("offset", wf.start));
            }
        }
    }
    Ok(())
}

fn block_sizes_of(bs: &crate::job::spec::BlockSizes) -> Vec<u64> {
    use crate::job::spec::BlockSizes;
    match bs {
        BlockSizes::Fixed(b) => vec![*b],
        // Range sizes are multiples of min, so checking min (and max) covers them.
        BlockSizes::Range { min, max } => vec![*min, *max],
        BlockSizes::Split(v) => v.iter().map(|(b, _)| *b).collect(),
    }
}

/// Give each of a worker's files the job's `fadvise_hint` (once, before the first I/O).
/// The advice sticks to the open descriptor, which is why every worker gives it
/// on its own: a worker process has descriptors of its own.
pub fn advise_access(job: &JobSpec, files: &[Arc<File>]) -> std::io::Result<()> {
    match access_advice(job) {
        Some(access) => files
            .iter()
            .try_for_each(|file| fd::fadvise_access(file, access)),
        None => Ok(()),
    }
}

/// The advice `fadvise_hint` asks for; none for jobs that touch no file.
pub fn access_advice(job: &JobSpec) -> Option<fd::Access> {
    if is_diskless(job) {
        return None;
    }
    match job.files.fadvise {
        FadviseHint::None => None,
        FadviseHint::Sequential => Some(fd::Access::Sequential),
        FadviseHint::Random => Some(fd::Access::Random),
        FadviseHint::ByPattern if job.workload.rw.is_random() => Some(fd::Access::Random),
        FadviseHint::ByPattern => Some(fd::Access::Sequential),
    }
}

impl FileSet {
    /// fio's `pre_read`: read every region of a job through the page cache, so the
    /// job starts with its data cached. A fresh buffered descriptor is used, since the
    /// job's own may bypass the cache (direct=1).
    pub fn pre_read(&self, job_index: usize, progress: &dyn Progress) -> Result<(), TargetError> {
        use std::os::unix::fs::FileExt;
        if self.diskless[job_index] {
            return Ok(());
        }
        let mut chunk = vec![0u8; 1 << 20];
        for wf in self.workers[job_index].iter().flat_map(|w| &w.files) {
            let path = &self.targets[wf.target].path;
            let file =
                File::open(path).map_err(|e| TargetError::io(path, "open for pre_read", e))?;
            let (mut at, end) = (wf.start, wf.start + wf.len);
            let on = path.to_string_lossy();
            while at < end {
                progress.step(Step {
                    doing: "pre-reading",
                    on: &on,
                    done: at - wf.start,
                    total: wf.len,
                });
                let want = (end - at).min(chunk.len() as u64) as usize;
                match file.read_at(&mut chunk[..want], at) {
                    Ok(0) => break,
                    Ok(n) => at += n as u64,
                    Err(e) => return Err(TargetError::io(path, "pre_read", e)),
                }
            }
        }
        Ok(())
    }

    /// Bytes of target `target` the workers address: from the lowest region
    /// start to the furthest region end (0 when no worker uses it).
    pub fn used_span(&self, target: usize) -> u64 {
        let regions = self
            .workers
            .iter()
            .flatten()
            .flat_map(|w| &w.files)
            .filter(|wf| wf.target == target);
        let (low, high) = regions.fold((u64::MAX, 0), |(low, high), wf| {
            (low.min(wf.start), high.max(wf.start + wf.len))
        });
        high.saturating_sub(low)
    }

    /// The targets a job uses, each once, in first-use order; none for the null engine.
    pub fn job_targets(&self, job_index: usize) -> Vec<usize> {
        let mut targets = Vec::new();
        if self.diskless[job_index] {
            return targets;
        }
        for wf in self.workers[job_index].iter().flat_map(|w| &w.files) {
            if !targets.contains(&wf.target) {
                targets.push(wf.target);
            }
        }
        targets
    }

    /// Remove the files a job created (fio's unlink=1). Never touches block devices.
    pub fn unlink(&self, job_index: usize) -> Result<(), TargetError> {
        if self.diskless[job_index] {
            return Ok(());
        }
        for worker in &self.workers[job_index] {
            for wf in &worker.files {
                let t = &self.targets[wf.target];
                // Only regular files: never a device node, whatever the job says.
                if std::fs::metadata(&t.path).is_ok_and(|m| m.is_file()) {
                    std::fs::remove_file(&t.path)
                        .map_err(|e| TargetError::io(&t.path, "unlink", e))?;
                }
            }
        }
        Ok(())
    }

    /// Buffer alignment that satisfies every target of a job (at least a page).
    pub fn buffer_align(&self, job_index: usize) -> usize {
        let page = iolens_sys::os::page_size();
        self.workers[job_index]
            .iter()
            .flat_map(|w| &w.files)
            .map(|wf| self.targets[wf.target].dio_mem_align as usize)
            .fold(page, usize::max)
    }
}

/// The smallest block size of the directions the job uses (fio's `td_min_bs`).
fn smallest_block(job: &JobSpec) -> u64 {
    job.workload
        .used_block_sizes()
        .map(BlockSizes::min)
        .min()
        .unwrap_or(1)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(args: &[&str]) -> JobSpec {
        crate::testutil::job_spec(args)
    }

    #[test]
    fn dropping_the_cache_also_drops_pages_still_dirty() {
        let dir = crate::testutil::scratch_dir();
        let path = dir.path().join("dirty");
        // written through the cache and not synced: every page is dirty
        std::fs::write(&path, vec![7u8; 4 << 20]).unwrap();
        let file = Arc::new(File::open(&path).unwrap());
        let target = Target {
            path: path.clone(),
            file: file.clone(),
            size: 4 << 20,
            is_block_device: false,
            dio_offset_align: 512,
            dio_mem_align: 512,
            created: false,
            open_mode: OpenMode {
                write: false,
                direct: false,
                sync: crate::job::spec::SyncMode::None,
                names_only: false,
            },
        };
        target.drop_cache().unwrap();
        let (mut probe, _) = crate::observe::pagecache::CacheProbe::new(file, 4 << 20);
        let Some(left) = probe.sample().map(|p| p.cached) else {
            eprintln!("skipped: neither cachestat nor mincore can count cached pages here");
            return;
        };
        assert_eq!(
            left, 0,
            "expected no page of a dirty 4 MiB file left cached after the drop, saw {left}"
        );
    }

    #[test]
    fn without_size_each_clone_uses_the_rest_of_the_existing_file() {
        let dir = crate::testutil::scratch_dir();
        let path = dir.path().join("whole");
        std::fs::write(&path, vec![1u8; 8 << 20]).unwrap();
        let filename = format!("--filename={}", path.display());
        let regions = |extra: &[&str]| {
            let mut args = vec!["--name=w", filename.as_str(), "--bs=64k"];
            args.extend_from_slice(extra);
            plan_job(0, &job(&args)).map(|plan| {
                plan.iter()
                    .map(|worker| (worker[0].1, worker[0].2))
                    .collect::<Vec<_>>()
            })
        };
        let mib = 1u64 << 20;
        for (extra, want) in [
            (&[][..], vec![(0, 8 * mib)]),
            (&["--size=0"][..], vec![(0, 8 * mib)]),
            (&["--offset=1m"][..], vec![(mib, 7 * mib)]),
            (
                &["--numjobs=2", "--offset_increment=4m"][..],
                vec![(0, 8 * mib), (4 * mib, 4 * mib)],
            ),
        ] {
            let seen = regions(extra).unwrap();
            assert_eq!(
                seen, want,
                "expected (start, len) per clone {want:?} with {extra:?}, saw {seen:?}"
            );
        }
        let past = regions(&["--numjobs=3", "--offset_increment=4m"])
            .unwrap_err()
            .to_string();
        assert!(
            past.contains("clone 2") && past.contains("is not before the end of"),
            "expected clone 2 (starting at 8 MiB, the file's end) refused, saw: {past}"
        );
        let missing = format!("--filename={}", dir.path().join("absent").display());
        let message = plan_job(0, &job(&["--name=m", &missing, "--size=0"]))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("does not exist") && message.contains("set size="),
            "expected a missing file without size= refused with the fix, saw: {message}"
        );
        std::fs::write(dir.path().join("empty"), b"").unwrap();
        let empty = format!("--filename={}", dir.path().join("empty").display());
        let message = plan_job(0, &job(&["--name=e", &empty]))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("is empty") && message.contains("set size="),
            "expected an empty file without size= refused with the fix, saw: {message}"
        );
    }

    #[test]
    fn generated_names_carry_the_rank_of_a_run_on_several_ranks() {
        assert_eq!(
            generated_name("$jobname.$jobnum.$filenum", "j", 2, 3, Some(5)),
            "j.2.3.rank5",
            "expected the rank after a name that does not place it"
        );
        assert_eq!(
            generated_name("$ClientUID/$jobname.$jobnum", "j", 0, 1, Some(5)),
            "5/j.0",
            "expected $clientuid to place the rank"
        );
    }

    #[test]
    fn filename_format_names_the_generated_files_and_lets_clones_share_them() {
        assert_eq!(
            generated_name("$jobname.$jobnum.$filenum", "j", 2, 3, None),
            "j.2.3"
        );
        // fio: keywords in any case; $clientuid is empty outside client/server mode
        assert_eq!(
            generated_name(
                "$JobName/$jobnum/data-$FILENUM.$clientuid$other",
                "j",
                0,
                1,
                None
            ),
            "j/0/data-1.$other"
        );
        let dir = crate::testutil::scratch_dir();
        let directory = format!("--directory={}", dir.path().display());
        let spec = job(&[
            "--name=f",
            &directory,
            "--size=64k",
            "--nrfiles=2",
            "--numjobs=2",
            "--filename_format=shared.$filenum",
        ]);
        let plan = plan_job(0, &spec).unwrap();
        let names = |w: usize| -> Vec<PathBuf> { plan[w].iter().map(|r| r.0.clone()).collect() };
        assert_eq!(
            names(0),
            [dir.path().join("shared.0"), dir.path().join("shared.1")]
        );
        assert_eq!(names(0), names(1));
    }

    #[test]
    fn generated_files_start_at_the_offset_and_a_start_past_filesize_is_refused() {
        let dir = crate::testutil::scratch_dir();
        let directory = format!("--directory={}", dir.path().display());
        let args = |increment: &str| {
            job(&[
                "--name=o",
                &directory,
                "--size=64k",
                "--nrfiles=2",
                "--filesize=32k",
                "--offset=16k",
                "--numjobs=2",
                increment,
            ])
        };
        let plan = plan_job(0, &args("--offset_increment=8k")).unwrap();
        let regions: Vec<(u64, u64)> = plan[1].iter().map(|r| (r.1, r.2)).collect();
        assert_eq!(
            regions,
            [(24 << 10, 8 << 10); 2],
            "clone 1: expected each file from 24k to its 32k end, saw {regions:?}"
        );
        let err = plan_job(0, &args("--offset_increment=20k")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("offset_increment=") && text.contains("filesize=32768"),
            "expected a refusal naming offset_increment= and filesize=, saw: {text}"
        );
        // fio: clone 1 keeps 2 x 1k past 31k, less than one 4k block
        let err = plan_job(0, &args("--offset_increment=15k")).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("clone 1") && text.contains("holds 2048 bytes"),
            "expected a refusal of clone 1 holding 2048 bytes, saw: {text}"
        );
    }

    #[test]
    fn generated_files_start_at_the_offset_of_their_worker() {
        // fio (write_iolog): size=1m nrfiles=2 offset=256k offset_increment=128k
        // numjobs=2 writes each file of job N from 256k + N×128k
        let dir = crate::testutil::scratch_dir();
        let directory = format!("--directory={}", dir.path().display());
        let spec = job(&[
            "--name=g",
            &directory,
            "--size=1m",
            "--nrfiles=2",
            "--numjobs=2",
            "--offset=256k",
            "--offset_increment=128k",
        ]);
        let plan = plan_job(0, &spec).unwrap();
        let starts: Vec<Vec<(u64, u64)>> = plan
            .iter()
            .map(|worker| worker.iter().map(|r| (r.1 / 1024, r.2 / 1024)).collect())
            .collect();
        assert_eq!(
            starts,
            [[(256, 512), (256, 512)], [(384, 512), (384, 512)]],
            "expected (start KiB, len KiB) per worker and file, saw {starts:?}"
        );
        // the null engine's generated target starts at the offset as well
        let null = job(&["--name=n", "--ioengine=null", "--size=1m", "--offset=512k"]);
        let plan = plan_job(0, &null).unwrap();
        assert_eq!(
            (plan[0][0].1, plan[0][0].2),
            (512 * 1024, 1 << 20),
            "expected the null job's region at 512k, 1m long; saw {:?}",
            plan[0][0]
        );
    }

    #[test]
    fn create_on_open_creates_a_missing_file_empty_when_the_job_starts() {
        let dir = crate::testutil::scratch_dir();
        let path = dir.path().join("later");
        let filename = format!("--filename={}", path.display());
        let writer = job(&[
            "--name=w",
            &filename,
            "--size=1m",
            "--rw=write",
            "--create_on_open=1",
        ]);
        let mut set = prepare(std::slice::from_ref(&writer), false, false, &()).unwrap();
        assert!(!path.exists() && set.targets.is_empty() && set.job_targets(0).is_empty());
        set.open_on_start(0, &writer, &()).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0, "no layout");
        assert_eq!(set.job_targets(0), [0]);
        assert!(set.targets[0].created && set.targets[0].open_mode.write);
        assert_eq!(set.workers[0][0].files[0].len, 1 << 20);
        set.open_on_start(0, &writer, &()).unwrap();
        assert_eq!(set.targets.len(), 1, "opened once");

        // A file that exists already is prepared as without the option.
        let set = prepare(std::slice::from_ref(&writer), false, false, &()).unwrap();
        assert_eq!(set.job_targets(0), [0]);

        std::fs::remove_file(&path).unwrap();
        let reader = job(&["--name=r", &filename, "--size=1m", "--create_on_open=1"]);
        let message = prepare(&[reader], false, false, &())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("create_on_open=1") && message.contains("read"),
            "{message}"
        );
        assert!(!path.exists());
    }

    #[test]
    fn pre_read_brings_the_region_into_the_page_cache() {
        let dir = crate::testutil::scratch_dir();
        let filename = format!("--filename={}", dir.path().join("f").display());
        let spec = job(&["--name=p", &filename, "--size=4m", "--pre_read=1"]);
        let set = prepare(std::slice::from_ref(&spec), false, false, &()).unwrap();
        let target = &set.targets[0];
        target.drop_cache().unwrap();
        let cached = || match iolens_sys::cachestat::cachestat(&*target.file, 0, 4 << 20) {
            Ok(stat) => Some(stat.cache),
            Err(e) => {
                eprintln!("skipped: cachestat: {e}");
                None
            }
        };
        let Some(before) = cached() else { return };
        set.pre_read(0, &()).unwrap();
        let after = cached().unwrap();
        assert!(before < 256 && after == 1024, "{before} then {after} pages");
    }

    #[test]
    fn mounted_writes_are_allowed_only_when_every_writer_allows_them() {
        let reader = job(&["--name=r", "--filename=/dev/x", "--rw=read"]);
        let writer = job(&["--name=w", "--filename=/dev/x", "--rw=write"]);
        let allowed = job(&[
            "--name=a",
            "--filename=/dev/x",
            "--rw=write",
            "--allow_mounted_write=1",
        ]);
        let needs = |jobs: &[&JobSpec]| {
            let mut needs = PathNeeds::new(jobs[0]);
            jobs.iter().for_each(|job| needs.add(job, 4096));
            needs.mounted_write
        };
        assert!(needs(&[&allowed, &reader]));
        assert!(!needs(&[&allowed, &writer]));
        assert!(!needs(&[&writer]));
    }

    #[test]
    fn fadvise_hint_follows_the_pattern_or_the_option() {
        let advice = |args: &[&str]| {
            let mut all = vec!["--name=a", "--size=1m"];
            all.extend_from_slice(args);
            access_advice(&job(&all))
        };
        assert_eq!(advice(&[]), Some(fd::Access::Sequential));
        assert_eq!(advice(&["--rw=randread"]), Some(fd::Access::Random));
        assert_eq!(
            advice(&["--rw=randread", "--fadvise_hint=sequential"]),
            Some(fd::Access::Sequential)
        );
        assert_eq!(advice(&["--fadvise_hint=random"]), Some(fd::Access::Random));
        assert_eq!(advice(&["--fadvise_hint=0"]), None);
        assert_eq!(advice(&["--ioengine=null"]), None);
    }
}
