//! Targets: decide which files each worker uses, create and lay them out,
//! open every target once per run, detect sizes and sector sizes, and check
//! direct-I/O alignment before the first I/O.
//!
//! Opening once matters: seed 000 showed a close/reopen race letting another
//! process pollute a block device's page cache mid-run. Descriptors live in
//! the `FileSet` until the whole run is over.

mod align;
mod anchor;
mod contain;
mod guard;
mod layout;
mod lockfile;
mod names;
mod open;
mod plan;
mod readonly;
mod room;
mod scheduler;

use crate::job::spec::{FadviseHint, Fallocate, JobSpec, SyncMode};
use iolens_sys::fd;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use guard::{
    check_device_is_free_to_overwrite, device_in_use, read_signature, GuardOverrides,
};
use layout::LayoutRequest;
pub(crate) use layout::{has_holes, has_unwritten_extents};
pub(crate) use lockfile::FileLocks;
use open::check_starts_empty;
pub(crate) use open::open_file;
use plan::{existing_size, is_block_device, plan_job};
pub(crate) use readonly::refuse_writing_jobs;
pub(crate) use scheduler::SchedulerSwitch;

/// Where a setup step stands, told as it goes: what it does ("laying out"), on
/// what (a file), bytes done of total (0 of 0 when it does not count bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step<'a> {
    pub doing: &'static str,
    pub on: &'a str,
    pub done: u64,
    pub total: u64,
}

/// Told of every step of setup as it makes progress (a rank of a run on several
/// hosts says from here that it is alive).
pub(crate) trait Progress {
    fn step(&self, step: Step<'_>);
    /// The run was asked to stop (a signal): long setup steps end early.
    fn stop_asked(&self) -> bool {
        false
    }
}

/// No one listening: a run on its own.
impl Progress for () {
    fn step(&self, _: Step<'_>) {}
}

/// Why a target could not be prepared. One line, naming the file and the fix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TargetError {
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
pub(crate) struct Target {
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
    /// The file the name was resolved to once (`anchor.rs`), which every later
    /// open reopens; None for what has no file of its own (`/dev/null`, names).
    pub anchor: Option<Arc<File>>,
}

/// The flags a target is opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OpenMode {
    pub write: bool,
    pub direct: bool,
    pub sync: SyncMode,
    /// A file operation engine's target: only its name is used, and the descriptor
    /// is a placeholder (`/dev/null`), since the name may not exist yet.
    pub names_only: bool,
}

impl Target {
    /// What reopens this target's file (see `anchor::path_to_open`).
    pub(crate) fn open_path(&self) -> PathBuf {
        anchor::path_to_open(&self.path, self.anchor.as_deref())
    }

    /// Drop the target's cached pages (fio's invalidate=1): fadvise(DONTNEED)
    /// for files, BLKFLSBUF for block devices (needs CAP_SYS_ADMIN). A file's
    /// dirty pages are written back first: fadvise keeps them, and an earlier
    /// writer's writeback would otherwise run during the measurement (BLKFLSBUF
    /// writes a device's back itself).
    pub(crate) fn drop_cache(&self) -> std::io::Result<()> {
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
pub(crate) struct WorkerFile {
    pub target: usize,
    pub start: u64,
    pub len: u64,
}

/// The files of one worker of one job.
#[derive(Debug, Clone)]
pub(crate) struct WorkerFiles {
    pub files: Vec<WorkerFile>,
}

/// Every target of a run, opened once, and the files of every worker.
#[derive(Debug, Default)]
pub(crate) struct FileSet {
    pub targets: Vec<Target>,
    /// `workers[job][worker]`
    pub workers: Vec<Vec<WorkerFiles>>,
    /// Things worth telling the user (sparse files read, etc.).
    pub warnings: Vec<String>,
    /// The files laid out with data, and what was written of each.
    pub layouts: Vec<(PathBuf, layout::Written)>,
    /// Per job: it does no I/O (null engine), so there is nothing to invalidate or unlink.
    diskless: Vec<bool>,
    /// `--readonly`: `unlink` removes nothing.
    readonly: bool,
    /// Every target opened so far, so a job opened later shares them.
    opened: HashMap<OpenKey, usize>,
    /// What the run needs of each path, and whether the run created it.
    paths: HashMap<PathBuf, PathState>,
    /// Each laid-out path resolved once (`anchor.rs`).
    anchors: HashMap<PathBuf, Arc<File>>,
    /// The one placeholder descriptor every name of a file operation engine shares.
    placeholder: Option<Arc<File>>,
    /// Per job: its regions, while a file of it is still to be created when its
    /// group starts (`create_on_open`); its `workers` entry is empty until then.
    pending: Vec<Option<Vec<Vec<PlannedRegion>>>>,
}

#[derive(Debug, Clone)]
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
pub(crate) fn is_diskless(job: &JobSpec) -> bool {
    job.engine.kind.def().diskless
}

/// (path, start, len) of one region of a worker, before the path is opened.
type PlannedRegion = (PathBuf, u64, u64);

/// What the run needs of one path, over all jobs that use it.
#[derive(Debug, Clone)]
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
    /// The `directory=` a generated name must stay inside (the first job's).
    inside: Option<PathBuf>,
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
            inside: None,
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
pub(crate) fn prepare(
    jobs: &[JobSpec],
    allow_device_write: bool,
    readonly: bool,
    progress: &dyn Progress,
) -> Result<FileSet, TargetError> {
    let mut set = FileSet {
        readonly,
        ..FileSet::default()
    };
    let plans: Vec<Vec<Vec<PlannedRegion>>> = jobs
        .iter()
        .enumerate()
        .map(|(j, job)| plan_job(j, job))
        .collect::<Result<_, _>>()?;

    // Lay out files first, once per path, large enough for every job using it.
    let mut needs: HashMap<PathBuf, PathNeeds> = HashMap::new();
    for (job, plan) in jobs.iter().zip(&plans).filter(|(job, _)| !is_diskless(job)) {
        for (w, worker) in plan.iter().enumerate() {
            for (path, start, len) in worker {
                needs
                    .entry(path.clone())
                    .or_insert_with(|| PathNeeds {
                        inside: plan::generated_inside(job, w as u32),
                        ..PathNeeds::new(job)
                    })
                    .add(job, start + len);
            }
        }
    }
    if !readonly {
        // refused before anything is made (--readonly makes nothing: it refuses what would)
        let warnings = room::check(needs.iter().map(|(path, need)| room::Addressed {
            path,
            extent: need.extent,
            laid_out: need.reads || need.trims || need.overwrite,
        }))?;
        set.warnings.extend(warnings);
        // fio makes the directories a name needs, given (filename=logs/a) or generated
        // (filename_format=$jobname/$filenum)
        for (_, plan) in jobs.iter().zip(&plans).filter(|(job, _)| !is_diskless(job)) {
            for (path, _, _) in plan.iter().flatten() {
                let inside = needs.get(path).and_then(|need| need.inside.as_deref());
                contain::make_parents(path, inside)?;
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
                    needs: need.clone(),
                    created: false,
                },
            );
            continue;
        }
        if readonly && !is_block_device(path) {
            readonly::refuse_layout(path, existing_size(path)?, need.extent)?;
        }
        let anchor = anchor::resolve(path, need.inside.as_deref(), need.may_create)?;
        let outcome = layout::ensure(
            path,
            &anchor,
            &LayoutRequest {
                extent: need.extent,
                fill: need.reads || need.trims || need.overwrite,
                fallocate: need.fallocate,
            },
            progress,
        )?;
        set.anchors.insert(path.clone(), anchor.file);
        if need.writes && outcome.is_block_device {
            // allow_mounted_write=1 in every job writing the device lifts the in-use checks only.
            let allow = GuardOverrides {
                destructive: allow_device_write,
                mounted: need.mounted_write,
            };
            check_device_is_free_to_overwrite(path, allow)?;
        }
        set.warnings.extend(outcome.preallocation_failed);
        set.warnings.extend(outcome.stopped);
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
                needs: need.clone(),
                created: outcome.created,
            },
        );
    }

    for (job, plan) in jobs.iter().zip(&plans) {
        names::make_ready(job, plan, readonly)?;
    }
    set.diskless = jobs.iter().map(is_diskless).collect();
    if readonly {
        set.warnings.extend(jobs.iter().filter(|job| job.io.unlink).map(|job| {
            format!(
                "job '{}': unlink=1 removes nothing under --readonly; its files are kept (drop --readonly to remove them)",
                job.name
            )
        }));
    }
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

/// Give each of a worker's files the job's `fadvise_hint` (once, before the first I/O).
/// The advice sticks to the open descriptor, which is why every worker gives it
/// on its own: a worker process has descriptors of its own.
pub(crate) fn advise_access(job: &JobSpec, files: &[Arc<File>]) -> std::io::Result<()> {
    match access_advice(job) {
        Some(access) => files
            .iter()
            .try_for_each(|file| fd::fadvise_access(file, access)),
        None => Ok(()),
    }
}

/// The advice `fadvise_hint` asks for; none for jobs that touch no file.
pub(crate) fn access_advice(job: &JobSpec) -> Option<fd::Access> {
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
    pub(crate) fn pre_read(
        &self,
        job_index: usize,
        progress: &dyn Progress,
    ) -> Result<(), TargetError> {
        use std::os::unix::fs::FileExt;
        if self.diskless[job_index] {
            return Ok(());
        }
        let mut chunk = vec![0u8; 1 << 20];
        for wf in self.workers[job_index].iter().flat_map(|w| &w.files) {
            let target = &self.targets[wf.target];
            let path = &target.path;
            let reopened = target.open_path();
            let file =
                File::open(reopened).map_err(|e| TargetError::io(path, "open for pre_read", e))?;
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
    pub(crate) fn used_span(&self, target: usize) -> u64 {
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
    pub(crate) fn job_targets(&self, job_index: usize) -> Vec<usize> {
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

    /// Remove the files of a job (fio's unlink=1). Never touches block devices, and
    /// removes nothing under `--readonly` (stricter than fio, which removes them).
    pub(crate) fn unlink(&self, job_index: usize) -> Result<(), TargetError> {
        if self.diskless[job_index] || self.readonly {
            return Ok(());
        }
        for worker in &self.workers[job_index] {
            for wf in &worker.files {
                let t = &self.targets[wf.target];
                // Only regular files: never a device node, whatever the job says.
                if t.file.metadata().is_ok_and(|m| m.is_file()) && t.path.exists() {
                    let inside = self
                        .paths
                        .get(&t.path)
                        .and_then(|s| s.needs.inside.as_deref());
                    anchor::unlink(&t.path, inside)?;
                }
            }
        }
        Ok(())
    }
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
            anchor: None,
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

    /// Swaps `path` for a symbolic link to `victim` as the target is about to be
    /// opened, after its layout: another user's move in a directory they may write.
    struct SwapOnOpen {
        path: PathBuf,
        victim: PathBuf,
    }

    impl Progress for SwapOnOpen {
        fn step(&self, step: Step<'_>) {
            if step.doing == "opening" && !self.path.is_symlink() {
                std::fs::remove_file(&self.path).unwrap();
                std::os::unix::fs::symlink(&self.victim, &self.path).unwrap();
            }
        }
    }

    #[test]
    fn a_name_swapped_for_a_link_after_its_layout_still_opens_the_file_laid_out() {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let dir = crate::testutil::scratch_dir();
        let path = dir.path().join("f");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let filename = format!("--filename={}", path.display());
        let spec = job(&["--name=w", &filename, "--size=64k", "--rw=write"]);
        let swap = SwapOnOpen {
            path: path.clone(),
            victim: victim.clone(),
        };
        let set = prepare(std::slice::from_ref(&spec), false, false, &swap).unwrap();
        assert!(path.is_symlink(), "expected the swap to have happened");
        let target = &set.targets[0];
        target.file.write_all_at(b"lost", 0).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_ne!(
            target.file.metadata().unwrap().ino(),
            std::fs::metadata(&victim).unwrap().ino(),
            "expected the target to be the file laid out, not the link's target"
        );
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
