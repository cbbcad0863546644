//! Helpers shared by unit tests.

/// A temporary directory on a real (disk-backed) filesystem: under `target/`,
/// because /tmp may be tmpfs, which refuses O_DIRECT.
pub fn scratch_dir() -> tempfile::TempDir {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-scratch");
    std::fs::create_dir_all(&base).expect("create target/test-scratch");
    tempfile::tempdir_in(base).expect("create scratch dir")
}
