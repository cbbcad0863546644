//! Files iolens names inside `directory=` stay inside it: a generated name may
//! hold subdirectories (`filename_format=$jobname/$jobnum/$filenum`, made as fio
//! makes them), but a `..` or a symlink that leads out of the directory is
//! refused before anything is made, and again, by the kernel, when the name is
//! opened or removed (`anchor.rs`), so a symlink planted at a generated name, also
//! after this check, cannot redirect the layout, the I/O or an unlink elsewhere.

use super::TargetError;
use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};

const LEADS_OUT: &str = "the name leads out of the directory";

/// Refuse a generated `path` that would lead out of `directory`.
pub(super) fn check_inside(directory: &Path, path: &Path) -> Result<(), TargetError> {
    let refuse = |why: String| {
        TargetError::Config(format!(
            "{}: {why}; iolens creates and removes files only inside directory={} \
             (change the job name or filename_format, or remove the link)",
            path.display(),
            directory.display()
        ))
    };
    // A directory that does not exist yet fails later with its own message.
    let Ok(dir) = std::fs::canonicalize(directory) else {
        return Ok(());
    };
    let Ok(name) = path.strip_prefix(directory) else {
        return Err(refuse(LEADS_OUT.into()));
    };
    // Walk the name as the kernel will, following the links that exist already.
    let mut at = dir.clone();
    let last = name.components().count();
    for (i, part) in name.components().enumerate() {
        match part {
            Component::Normal(part) => {
                at = follow(at.join(part), i + 1 == last, &dir, &refuse)?;
            }
            Component::ParentDir => {
                at.pop();
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Err(refuse(LEADS_OUT.into())),
        }
        if !at.starts_with(&dir) {
            return Err(refuse(LEADS_OUT.into()));
        }
    }
    if at == dir {
        return Err(refuse(LEADS_OUT.into()));
    }
    Ok(())
}

/// `next` as the kernel reaches it: a symbolic link is followed, and must lead to a
/// place inside `dir`.
fn follow(
    next: PathBuf,
    is_last: bool,
    dir: &Path,
    refuse: &dyn Fn(String) -> TargetError,
) -> Result<PathBuf, TargetError> {
    match std::fs::symlink_metadata(&next) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(&next) {
            Ok(target) if !target.starts_with(dir) => Err(refuse(format!(
                "{} is a symbolic link to {} outside the directory",
                next.display(),
                target.display()
            ))),
            // refused as openat2's RESOLVE_BENEATH refuses it when the name is opened (anchor.rs)
            Ok(_) if std::fs::read_link(&next).is_ok_and(|to| to.is_absolute()) => {
                Err(refuse(format!(
                    "{} is a symbolic link to an absolute path; inside the directory only relative links are followed",
                    next.display()
                )))
            }
            Ok(target) => Ok(target),
            Err(_) if is_last => Err(refuse("is a dangling symbolic link".into())),
            Err(_) => Err(refuse(format!(
                "{} is a dangling symbolic link",
                next.display()
            ))),
        },
        _ => Ok(next),
    }
}

/// Make the directories a name needs, as fio does (mode 0700); existing ones
/// are used as they are. Those of a generated name inside `directory=` (`inside`)
/// are made beneath it, never through a link out.
pub(super) fn make_parents(path: &Path, inside: Option<&Path>) -> Result<(), TargetError> {
    let beneath = inside.and_then(|dir| Some((dir, path.strip_prefix(dir).ok()?.parent()?)));
    if let Some((dir, name)) = beneath.filter(|(_, name)| !name.as_os_str().is_empty()) {
        make_dir_all(dir)?;
        return super::anchor::make_dirs(path, dir, name);
    }
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => make_dir_all(parent),
        _ => Ok(()),
    }
}

/// `mkdir -p` of `dir`, mode 0700.
fn make_dir_all(dir: &Path) -> Result<(), TargetError> {
    if dir.is_dir() {
        return Ok(());
    }
    DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(dir)
        .map_err(|e| TargetError::io(dir, "create the directory", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(d: &Path, name: &str) -> String {
        match check_inside(d, &d.join(name)) {
            Err(e) => e.to_string(),
            Ok(()) => panic!("expected {name} to be refused, it was accepted"),
        }
    }

    #[test]
    fn names_and_links_that_lead_out_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(check_inside(d, &d.join("job.0.0")).is_ok());
        let climbing = refused(d, "../job.0.0");
        assert!(
            climbing.contains("leads out"),
            "expected 'leads out', saw {climbing}"
        );

        let victim = outside.path().join("precious");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("job.0.1")).unwrap();
        let linked = refused(d, "job.0.1");
        assert!(
            linked.contains("outside the directory"),
            "expected a link out refused as outside the directory, saw {linked}"
        );

        std::os::unix::fs::symlink(d.join("missing"), d.join("job.0.2")).unwrap();
        assert!(refused(d, "job.0.2").contains("dangling"));

        std::fs::write(d.join("real"), b"").unwrap();
        std::os::unix::fs::symlink("real", d.join("job.0.3")).unwrap();
        assert!(check_inside(d, &d.join("job.0.3")).is_ok());
        std::os::unix::fs::symlink(d.join("real"), d.join("job.0.4")).unwrap();
        assert!(refused(d, "job.0.4").contains("absolute path"));
    }

    #[test]
    fn subdirectories_inside_are_accepted_and_ways_out_through_them_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let d = dir.path();
        for inside in ["job/0/0", "job/0/../1/0", "./job/x", "a/b/../../c"] {
            let verdict = check_inside(d, &d.join(inside));
            assert!(
                verdict.is_ok(),
                "expected {inside} to stay inside, saw {verdict:?}"
            );
        }
        for out in ["job/../../x", "a/../../../x", "job/..", "."] {
            let why = refused(d, out);
            assert!(
                why.contains("leads out"),
                "expected {out} to lead out, saw {why}"
            );
        }
        std::os::unix::fs::symlink(outside.path(), d.join("escape")).unwrap();
        let via_link = refused(d, "escape/job.0.0");
        assert!(
            via_link.contains("outside the directory"),
            "expected a name under a linked-out directory refused, saw {via_link}"
        );
        std::os::unix::fs::symlink(d.join("gone"), d.join("dangling")).unwrap();
        let dangling = refused(d, "dangling/job.0.0");
        assert!(
            dangling.contains("dangling"),
            "expected a dangling directory link refused, saw {dangling}"
        );
    }

    #[test]
    fn parents_inside_are_not_made_through_a_link_out_put_there_after_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::os::unix::fs::symlink(outside.path(), d.join("job")).unwrap();
        let message = make_parents(&d.join("job/0/f"), Some(d))
            .unwrap_err()
            .to_string();
        assert!(message.contains("leads out of directory="), "{message}");
        assert!(
            !outside.path().join("0").exists(),
            "expected no directory made outside"
        );
        make_parents(&d.join("sub/0/f"), Some(d)).unwrap();
        assert!(d.join("sub/0").is_dir());
    }

    #[test]
    fn parents_are_made_private_and_existing_ones_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("j/0/1/j.0.0");
        make_parents(&file, None).unwrap();
        let made = dir.path().join("j/0/1");
        assert!(made.is_dir(), "expected {} made", made.display());
        let mode = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode & 0o077,
            0,
            "expected a private 0700 directory (less the umask), saw {mode:o}"
        );
        make_parents(&file, None).unwrap();
        make_parents(Path::new("bare"), None).unwrap();
        assert!(
            !file.exists(),
            "expected only directories made, saw the file itself"
        );
    }
}
