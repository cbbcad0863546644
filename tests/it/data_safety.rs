//! Data safety under hostile conditions: what iolens may delete, overwrite or fill,
//! and what it must leave alone.

use crate::support::{iolens, scratch, stderr};

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
