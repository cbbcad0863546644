//! Data safety under hostile conditions: what iolens may delete, overwrite or fill,
//! and what it must leave alone.

use crate::support::{iolens, scratch, stderr};
use std::path::Path;

#[test]
fn readonly_keeps_the_file_that_unlink_would_remove() {
    let dir = scratch();
    let path = dir.path().join("data");
    let content = vec![0x5au8; 1 << 20];
    std::fs::write(&path, &content).unwrap();
    let out = iolens(&[
        "run",
        "--no-history",
        "--readonly",
        "--name=r",
        &format!("--filename={}", path.display()),
        "--rw=read",
        "--bs=64k",
        "--size=1m",
        "--unlink=1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&path).ok(),
        Some(content),
        "expected --readonly to keep {} whole despite unlink=1",
        path.display()
    );
    assert!(
        stderr(&out).contains("unlink=1 removes nothing under --readonly"),
        "expected a warning that unlink=1 was not carried out, saw: {}",
        stderr(&out)
    );
}

/// `iolens quick FILE` on `path`, short, without history.
fn quick_on(path: &Path, extra: &[&str]) -> std::process::Output {
    let target = path.display().to_string();
    let mut args = vec![
        "quick",
        target.as_str(),
        "--no-history",
        "--duration=200ms",
        "--ramp=0",
    ];
    args.extend(extra);
    iolens(&args)
}

#[test]
fn quick_overwrites_an_existing_file_only_when_allowed() {
    let dir = scratch();
    let path = dir.path().join("precious");
    let content: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &content).unwrap();

    let refused = quick_on(&path, &[]);
    let err = stderr(&refused);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "expected quick to refuse an existing file, saw: {err}"
    );
    let named = path.display().to_string();
    assert!(
        err.lines()
            .any(|l| l.contains(&named) && l.contains("--allow-destructive")),
        "expected one line naming {named} and --allow-destructive, saw: {err}"
    );
    assert!(
        std::fs::read(&path).unwrap() == content,
        "expected {named} unchanged after the refusal"
    );

    let read_only = quick_on(&path, &["--read-only"]);
    assert_eq!(read_only.status.code(), Some(0), "{}", stderr(&read_only));
    assert!(
        std::fs::read(&path).unwrap() == content,
        "expected a --read-only quick to leave {named} unchanged"
    );

    let allowed = quick_on(&path, &["--allow-destructive"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
}
