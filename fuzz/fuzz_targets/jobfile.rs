//! The job-file reader and resolver on arbitrary bytes: errors are fine, panics and hangs are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// One scratch file per fuzzing process (the reader takes a path: includes are relative to it).
fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("iolens-fuzz-{}.fio", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).expect("write the scratch job file");
    iolens::fuzzing::job_file(path);
});
