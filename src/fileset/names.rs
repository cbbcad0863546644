//! The names a file operation engine works on: the stat and delete engines find them
//! made before the run (files of their region's size, or directories), as fio lays
//! them out; the create engines find nothing made.

use super::anchor;
use super::layout::{self, LayoutRequest};
use super::{PlannedRegion, TargetError};
use crate::job::spec::{Existing, JobSpec};
use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;

/// Make what `job`'s engine expects at each of its names; nothing for other engines.
/// An existing file is kept (grown to its region if shorter); an existing directory is
/// used as it is. `allow_file_create=0` refuses to make either. `--readonly` refuses the
/// engines that create or delete, and lets a stat engine only find its names.
pub(super) fn make_ready(
    job: &JobSpec,
    plan: &[Vec<PlannedRegion>],
    readonly: bool,
) -> Result<(), TargetError> {
    let Some(op) = job.engine.kind.def().file_op else {
        return Ok(());
    };
    if readonly && !op.stats() {
        return Err(TargetError::Config(format!(
            "job '{}': ioengine={} changes the filesystem ({} on each name), which --readonly forbids; use ioengine=filestat or dirstat, or drop --readonly",
            job.name,
            job.engine.kind.name(),
            op.call(job.engine.stat_type)
        )));
    }
    let Some(existing) = op.needs() else {
        return Ok(());
    };
    let may_create = job.files.allow_file_create;
    for (path, start, len) in plan.iter().flatten() {
        if readonly {
            // a missing name is refused; an existing one is used as it is
            if !path.exists() {
                super::readonly::refuse_layout(path, None, 0)?;
            }
            continue;
        }
        match existing {
            Existing::File => {
                let request = LayoutRequest {
                    extent: start + len,
                    fill: false,
                    fallocate: job.files.fallocate,
                };
                let anchor = anchor::resolve(path, None, may_create)?;
                layout::ensure(path, &anchor, &request, &())?;
            }
            Existing::Dir if path.is_dir() => {}
            Existing::Dir if !may_create => {
                return Err(TargetError::Config(format!(
                    "{}: no such directory, and allow_file_create=0 forbids making it (make it first, or drop allow_file_create=0)",
                    path.display()
                )));
            }
            Existing::Dir => DirBuilder::new()
                .mode(0o700)
                .create(path)
                .map_err(|e| TargetError::io(path, "create the directory", e))?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::fileset::prepare;
    use crate::testutil::{job_spec, scratch_dir};
    use std::sync::Arc;

    /// What `prepare` made of a metadata job on three names in a scratch dir: the paths
    /// its targets carry, whether they share one descriptor, and what is on disk.
    fn prepared(engine: &str) -> (Vec<String>, bool, Vec<String>) {
        let dir = scratch_dir();
        let job = job_spec(&[
            "--name=t",
            &format!("--directory={}", dir.path().display()),
            &format!("--ioengine={engine}"),
            "--filesize=4k",
            "--nrfiles=3",
        ]);
        let set = prepare(&[job], false, false, &()).unwrap();
        let name = |p: &std::path::Path| p.file_name().unwrap().to_string_lossy().into_owned();
        let paths = set.targets.iter().map(|t| name(&t.path)).collect();
        let first = &set.targets[0].file;
        let shared = set.targets.iter().all(|t| Arc::ptr_eq(&t.file, first));
        // what each target's name is on disk now: a file, a directory ("/") or nothing
        let on_disk = set
            .targets
            .iter()
            .filter(|t| t.path.exists())
            .map(|t| {
                format!(
                    "{}{}",
                    name(&t.path),
                    if t.path.is_dir() { "/" } else { "" }
                )
            })
            .collect();
        (paths, shared, on_disk)
    }

    #[test]
    fn readonly_refuses_creating_and_deleting_and_lets_a_stat_find_its_names() {
        let dir = scratch_dir();
        let job = |engine: &str| {
            job_spec(&[
                "--name=t",
                &format!("--directory={}", dir.path().display()),
                &format!("--ioengine={engine}"),
                "--filesize=4k",
                "--nrfiles=2",
            ])
        };
        for (engine, call) in [
            ("filecreate", "open(O_CREAT)"),
            ("filedelete", "unlink"),
            ("dircreate", "mkdir"),
            ("dirdelete", "rmdir"),
        ] {
            let message = prepare(&[job(engine)], false, true, &())
                .unwrap_err()
                .to_string();
            assert!(
                message.contains(&format!("ioengine={engine} changes the filesystem ({call}"))
                    && message.contains("--readonly forbids"),
                "{engine} --readonly: expected a refusal naming the engine and its call, saw: {message}"
            );
        }
        let message = prepare(&[job("filestat")], false, true, &())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("t.0.0: does not exist") && message.contains("--readonly"),
            "filestat --readonly of missing files: expected a refusal naming the file, saw: {message}"
        );
        prepare(&[job("filestat")], false, false, &()).unwrap();
        let set = prepare(&[job("filestat")], false, true, &());
        assert!(
            set.is_ok(),
            "filestat --readonly of existing files: expected them used, saw {:?}",
            set.err()
        );
    }

    #[test]
    fn names_share_one_descriptor_and_only_stat_and_delete_engines_find_them_made() {
        let names = ["t.0.0", "t.0.1", "t.0.2"];
        for (engine, suffix) in [
            ("filecreate", None),
            ("dircreate", None),
            ("filestat", Some("")),
            ("filedelete", Some("")),
            ("dirstat", Some("/")),
            ("dirdelete", Some("/")),
        ] {
            let made = match suffix {
                Some(s) => names.iter().map(|n| format!("{n}{s}")).collect(),
                None => Vec::new(),
            };
            assert_eq!(
                prepared(engine),
                (names.iter().map(|n| n.to_string()).collect(), true, made),
                "ioengine={engine}: expected targets named by the files, one shared \
                 descriptor, and these names made before the run"
            );
        }
    }
}
