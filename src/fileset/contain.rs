//! Files iolens names inside `directory=` stay inside it: a job name cannot
//! climb out with `/` or `..`, and a symlink planted at a generated name cannot
//! redirect the layout (or a later unlink) to a file elsewhere.

use super::TargetError;
use std::path::Path;

/// Refuse a generated `path` that would lead out of `directory`.
pub fn check_inside(directory: &Path, path: &Path) -> Result<(), TargetError> {
    let refuse = |why: String| {
        TargetError::Config(format!(
            "{}: {why}; iolens creates and removes files only inside directory={} \
             (rename the job or remove the link)",
            path.display(),
            directory.display()
        ))
    };
    // A directory that does not exist yet fails later with its own message.
    let Ok(dir) = std::fs::canonicalize(directory) else {
        return Ok(());
    };
    let parent = path.parent().and_then(|p| std::fs::canonicalize(p).ok());
    if parent.as_deref() != Some(dir.as_path()) {
        return Err(refuse("the job name leads out of the directory".into()));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
            Ok(target) if target.starts_with(&dir) => Ok(()),
            Ok(target) => Err(refuse(format!(
                "is a symbolic link to {} outside the directory",
                target.display()
            ))),
            Err(_) => Err(refuse("is a dangling symbolic link".into())),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_links_that_lead_out_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(check_inside(d, &d.join("job.0.0")).is_ok());
        let climbing = check_inside(d, &d.join("../job.0.0")).unwrap_err();
        assert!(climbing.to_string().contains("leads out"), "{climbing}");

        let victim = outside.path().join("precious");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("job.0.1")).unwrap();
        let linked = check_inside(d, &d.join("job.0.1")).unwrap_err();
        assert!(
            linked.to_string().contains("outside the directory"),
            "{linked}"
        );

        std::os::unix::fs::symlink(d.join("missing"), d.join("job.0.2")).unwrap();
        assert!(check_inside(d, &d.join("job.0.2")).is_err());

        std::fs::write(d.join("real"), b"").unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("job.0.3")).unwrap();
        assert!(check_inside(d, &d.join("job.0.3")).is_ok());
    }
}
