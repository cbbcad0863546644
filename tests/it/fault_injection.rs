//! Faults a real device has, injected below the filesystem (tests/it/fault_fs.rs):
//! what iolens reports for each, checked end to end through the binary.

use crate::fault_fs::{FaultFs, Fault, Op, Rule};
use std::os::unix::fs::FileExt;
use std::time::Duration;

#[test]
fn the_fault_filesystem_does_what_it_is_told() {
    let Some(fs) = FaultFs::mount("f", 1 << 20) else {
        return;
    };
    let file = std::fs::File::options().read(true).write(true).open(fs.file()).unwrap();
    fs.inject(Rule::once(Op::Read, 4096..8192, Fault::Fail(libc::EIO)));
    let mut buf = [0u8; 4096];
    let err = file.read_at(&mut buf, 4096).expect_err("expected the first read at 4096 to fail");
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "expected EIO, saw {err}");
    file.read_at(&mut buf, 4096).expect("expected the second read at 4096 to pass (once)");
    fs.inject(Rule::always(Op::Write, 0..4096, Fault::Drop));
    fs.inject(Rule::always(Op::Write, 8192..12288, Fault::Tear));
    file.write_all_at(&[7u8; 4096], 0).unwrap();
    file.write_all_at(&[9u8; 4096], 8192).unwrap();
    let stored = fs.stored();
    assert!(stored[..4096].iter().all(|&b| b == 0), "expected the dropped write not stored");
    assert!(stored[8192..10240].iter().all(|&b| b == 9) && stored[10240..12288].iter().all(|&b| b == 0),
        "expected only the first half of the torn write stored");
    fs.heal();
    fs.inject(Rule::once(Op::Write, 16384..20480, Fault::Hang));
    let path = fs.file();
    let writer = std::thread::spawn(move || {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.write_all_at(&[5u8; 4096], 16384)
    });
    while fs.held() == 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!writer.is_finished(), "expected the hung write to wait");
    assert_eq!(fs.release(), 1, "expected one held write");
    writer.join().unwrap().expect("expected the released write to succeed");
    assert!(fs.stored()[16384..20480].iter().all(|&b| b == 5), "expected the released write stored");
}
