//! The git commit `iolens --version` names (IOLENS_GIT_COMMIT): `git rev-parse --short HEAD`
//! of this checkout, or "unknown" where there is none (a crate tarball, no git).
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let commit = own_checkout(&manifest_dir)
        .then(|| git(&manifest_dir, &["rev-parse", "--short", "HEAD"]))
        .flatten()
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=IOLENS_GIT_COMMIT={commit}");
    // Again when HEAD moves: HEAD itself (a checkout), the branch it names (a commit), and
    // packed-refs (where the branch is when it has no file of its own). A worktree's HEAD
    // and the shared refs live in different directories: git says where.
    println!("cargo:rerun-if-changed=build.rs");
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(&manifest_dir, &["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        let Some(path) = git(&manifest_dir, &["rev-parse", "--git-path", &name]) else {
            continue;
        };
        let path = manifest_dir.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// Whether `dir` is the top of a git checkout: not a tarball unpacked inside another
/// repository, whose commit would be the wrong one.
fn own_checkout(dir: &Path) -> bool {
    let top = git(dir, &["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    match (top.and_then(|t| t.canonicalize().ok()), dir.canonicalize()) {
        (Some(top), Ok(dir)) => top == dir,
        _ => false,
    }
}

/// `git ARGS` run in `dir`: its first line of output, or None when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().next()?.trim().to_string();
    (out.status.success() && !line.is_empty()).then_some(line)
}
