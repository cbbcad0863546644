//! Opening the targets: the open flags of a descriptor, sharing one descriptor
//! per open key, the placeholder for file operation engines' names, and the
//! files `create_on_open` leaves for a job's start.

use super::align::check_alignment;
use super::anchor::{self, path_to_open};
use super::layout::{self, LayoutRequest};
use super::{
    is_diskless, FileSet, OpenKey, OpenMode, PlannedRegion, Progress, Step, Target, TargetError,
    WorkerFile, WorkerFiles, DISKLESS_TARGET,
};
use crate::job::spec::{JobSpec, SyncMode};
use iolens_sys::fd;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

/// Open `path` for I/O the way `mode` says (always readable).
pub(crate) fn open_file(path: &Path, mode: OpenMode) -> std::io::Result<File> {
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

/// A job whose file `create_on_open` creates when it starts finds it empty: only
/// writes make sense (fio's reads of it fail with EIO).
pub(super) fn check_starts_empty(job: &JobSpec, path: &Path) -> Result<(), TargetError> {
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
    pub(crate) fn open_on_start(
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
            if state.needs.create_on_open && !self.anchors.contains_key(path) {
                let needs = &state.needs;
                let anchor = anchor::resolve(path, needs.inside.as_deref(), needs.may_create)?;
                let empty = LayoutRequest {
                    extent: 0,
                    fill: false,
                    fallocate: needs.fallocate,
                };
                state.created = layout::ensure(path, &anchor, &empty, progress)?.created;
                self.anchors.insert(path.clone(), anchor.file);
            }
        }
        self.workers[job_index] = self.open_job(job_index, job, &plan, progress)?;
        Ok(())
    }

    /// Open (or share) the targets of one job's workers and check their alignment.
    pub(super) fn open_job(
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
                            let anchor = self.anchors.get(path).cloned();
                            open_target(&key, anchor, needs_write, was_created)?
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
            anchor: None,
        })
    }
}

/// Open `key`'s target: reopen the file its name was resolved to (`anchor`), or
/// open the name itself when it has none (`/dev/null`).
fn open_target(
    key: &OpenKey,
    anchor: Option<Arc<File>>,
    write: bool,
    created: bool,
) -> Result<Target, TargetError> {
    let path = &key.path;
    let open_mode = OpenMode {
        write,
        direct: key.direct,
        sync: key.sync,
        names_only: key.names_only,
    };
    let reopened = path_to_open(path, anchor.as_deref());
    let file = open_file(&reopened, open_mode).map_err(|e| {
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
        anchor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileset::prepare;

    fn job(args: &[&str]) -> JobSpec {
        crate::testutil::job_spec(args)
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
}
