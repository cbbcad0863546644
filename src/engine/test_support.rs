//! Helpers shared by the engine tests: scratch files on a real filesystem, a spec and
//! setup builder, and one write-then-read-back check every engine passes.

use super::{Completion, Engine, EngineSetup, IoRequest, Queued};
use crate::job::spec::{Ddir, EngineKind, EngineSpec, IoUringOptions, Pvsync2Options, StatType};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Arc;
use tempfile::TempDir;

const BS: u32 = 4096;
const FILE_BLOCKS: u64 = 16;
/// Out of order, with a sequential run (0, 1, 2) for the lseek-skipping `sync` engine.
const BLOCKS: [u64; 8] = [5, 0, 1, 2, 9, 15, 3, 8];

pub(crate) fn spec(kind: EngineKind) -> EngineSpec {
    EngineSpec {
        kind,
        io_uring: IoUringOptions::default(),
        pvsync2: Pvsync2Options::default(),
        stat_type: StatType::default(),
        cmdprio: Default::default(),
        submit_mode: Default::default(),
    }
}

pub(crate) fn setup<'a>(
    spec: &'a EngineSpec,
    files: &'a [Arc<File>],
    sizes: &'a [u64],
    slots: u32,
) -> EngineSetup<'a> {
    EngineSetup {
        spec,
        files,
        paths: &[],
        file_sizes: sizes,
        slots,
        slot_size: BS as usize,
        align: 4096,
        sync_writes: false,
        advice: None,
    }
}

/// A file `data` of `len` zero bytes in a temporary directory under the build's target
/// directory: a real filesystem (a tmpfs /tmp would refuse O_DIRECT).
pub(crate) fn scratch_file(len: u64) -> (TempDir, File) {
    let exe = std::env::current_exe().expect("test binary path");
    // The test binary lives in <target>/<profile>/deps/.
    let dir = tempfile::tempdir_in(exe.ancestors().nth(2).expect("target/<profile>"))
        .expect("scratch dir");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.path().join("data"))
        .unwrap();
    file.set_len(len).unwrap();
    (dir, file)
}

/// Queue `reqs` (distinct slots), commit, and collect every completion.
pub(crate) fn run_batch<E: Engine>(engine: &mut E, reqs: &[IoRequest]) -> Vec<Completion> {
    let mut done = Vec::new();
    for req in reqs {
        if let Queued::Completed(result) = engine.queue(req).unwrap() {
            done.push(Completion {
                slot: req.slot,
                result,
            });
        }
    }
    engine.commit().unwrap();
    while done.len() < reqs.len() {
        engine.reap(1, reqs.len() as u32, &mut done).unwrap();
    }
    done
}

fn pattern(block: u64) -> Vec<u8> {
    (0..u64::from(BS))
        .map(|i| (i * 7 + block * 31 + 1) as u8)
        .collect()
}

/// Write a distinct pattern to several blocks through the engine (`depth` at a time),
/// check the file with plain reads, read the blocks back through the engine and compare.
/// Returns the engine's notes.
pub(crate) fn roundtrip_with<E: Engine>(
    spec: &EngineSpec,
    depth: u32,
    direct: bool,
) -> Vec<String> {
    let (dir, plain) = scratch_file(FILE_BLOCKS * u64::from(BS));
    let target = if direct {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(iolens_sys::open_flags::DIRECT)
            .open(dir.path().join("data"))
            .unwrap()
    } else {
        plain.try_clone().unwrap()
    };
    let files = [Arc::new(target)];
    let sizes = [FILE_BLOCKS * u64::from(BS)];
    let mut engine = E::open(&setup(spec, &files, &sizes, depth)).unwrap();
    let request = |slot: usize, block: u64, ddir| IoRequest {
        slot: slot as u32,
        ddir,
        file: 0,
        offset: block * u64::from(BS),
        len: BS,
    };

    for chunk in BLOCKS.chunks(depth as usize) {
        let reqs: Vec<_> = chunk
            .iter()
            .enumerate()
            .map(|(slot, &block)| request(slot, block, Ddir::Write))
            .collect();
        for (slot, &block) in chunk.iter().enumerate() {
            engine.buffer(slot as u32).copy_from_slice(&pattern(block));
        }
        let done = run_batch(&mut engine, &reqs);
        assert!(
            done.iter().all(|c| c.result == i64::from(BS)),
            "writes: {done:?}"
        );
    }
    engine.sync_file(0, true).unwrap();
    for &block in &BLOCKS {
        let mut on_disk = vec![0; BS as usize];
        plain
            .read_exact_at(&mut on_disk, block * u64::from(BS))
            .unwrap();
        assert!(on_disk == pattern(block), "block {block} on disk differs");
    }

    for chunk in BLOCKS.chunks(depth as usize) {
        let reqs: Vec<_> = chunk
            .iter()
            .enumerate()
            .map(|(slot, &block)| request(slot, block, Ddir::Read))
            .collect();
        for slot in 0..chunk.len() {
            engine.buffer(slot as u32).fill(0);
        }
        let done = run_batch(&mut engine, &reqs);
        assert!(
            done.iter().all(|c| c.result == i64::from(BS)),
            "reads: {done:?}"
        );
        for (slot, &block) in chunk.iter().enumerate() {
            assert!(
                engine.buffer(slot as u32) == pattern(block),
                "block {block} read back differs"
            );
        }
    }
    engine.notes()
}

pub(crate) fn roundtrip<E: Engine>(kind: EngineKind, depth: u32) {
    roundtrip_with::<E>(&spec(kind), depth, false);
}

pub(crate) fn roundtrip_direct<E: Engine>(kind: EngineKind, depth: u32) {
    roundtrip_with::<E>(&spec(kind), depth, true);
}

/// What engine `E` reports for a 4 KiB write through a read-only descriptor: -EBADF
/// when the error reaches the I/O's result.
pub(crate) fn write_to_read_only_result<E: Engine>(kind: EngineKind) -> i64 {
    let (dir, _file) = scratch_file(u64::from(BS));
    let read_only = [Arc::new(File::open(dir.path().join("data")).unwrap())];
    let spec = spec(kind);
    let mut engine = E::open(&setup(&spec, &read_only, &[u64::from(BS)], 1)).unwrap();
    let write = IoRequest {
        slot: 0,
        ddir: Ddir::Write,
        file: 0,
        offset: 0,
        len: BS,
    };
    run_batch(&mut engine, &[write])[0].result
}
