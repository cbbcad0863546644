//! `null`: no syscall at all; every I/O "transfers" its full length. It measures the
//! cost of iolens itself. With more than one slot it acts like an async engine
//! (queued → committed → reaped), so the runner's async path can be measured too;
//! like fio's, it holds one committed batch at a time (`EngineDef::one_batch_in_flight`).

use super::{Completion, Engine, EngineSetup, IoRequest, Queued, TrimMethod};
use iolens_sys::Slots;
use std::fs::File;
use std::io;

pub(crate) struct Null {
    bufs: Slots,
    /// Complete inside `queue` (one slot) or through commit/reap (several).
    immediate: bool,
    /// Queued I/Os; the first `committed` of them are complete. Capacity = slots.
    queued: Vec<Completion>,
    committed: usize,
}

impl Engine for Null {
    fn open(setup: &EngineSetup) -> io::Result<Self> {
        Ok(Self {
            bufs: Slots::new(setup.slots, setup.slot_size, setup.align)?,
            immediate: setup.slots == 1,
            queued: Vec::with_capacity(setup.slots as usize),
            committed: 0,
        })
    }

    #[inline]
    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    #[inline]
    fn queue(&mut self, req: &IoRequest) -> io::Result<Queued> {
        if self.immediate {
            return Ok(Queued::Completed(i64::from(req.len)));
        }
        self.queued.push(Completion {
            slot: req.slot,
            result: i64::from(req.len),
        });
        Ok(Queued::Queued)
    }

    #[inline]
    fn commit(&mut self) -> io::Result<()> {
        self.committed = self.queued.len();
        Ok(())
    }

    #[inline]
    fn reap(&mut self, _min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let n = self.committed.min(max as usize);
        out.extend(self.queued.drain(..n));
        self.committed -= n;
        Ok(())
    }

    fn sync_file(&mut self, _file: u32, _datasync: bool) -> io::Result<()> {
        Ok(())
    }

    fn trim(&mut self, _: &File, _: TrimMethod, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{run_batch, scratch_file, setup, spec};
    use crate::job::spec::{Ddir, EngineKind};
    use std::sync::Arc;

    fn requests(n: u32) -> Vec<IoRequest> {
        (0..n)
            .map(|slot| IoRequest {
                slot,
                ddir: Ddir::Write,
                file: 0,
                offset: 0,
                len: 512 * (slot + 1),
            })
            .collect()
    }

    #[test]
    fn one_slot_completes_in_queue() {
        let (_dir, file) = scratch_file(0);
        let spec = spec(EngineKind::Null);
        let files = [Arc::new(file)];
        let mut engine = Null::open(&setup(&spec, &files, &[0], 1)).unwrap();
        assert_eq!(
            engine.queue(&requests(1)[0]).unwrap(),
            Queued::Completed(512)
        );
    }

    #[test]
    fn several_slots_complete_through_reap_only_after_commit() {
        let (_dir, file) = scratch_file(0);
        let spec = spec(EngineKind::Null);
        let files = [Arc::new(file)];
        let mut engine = Null::open(&setup(&spec, &files, &[0], 4)).unwrap();
        let reqs = requests(4);
        assert_eq!(engine.queue(&reqs[0]).unwrap(), Queued::Queued);
        let mut out = Vec::new();
        engine.reap(0, 4, &mut out).unwrap();
        assert!(out.is_empty(), "nothing is done before commit");
        engine.commit().unwrap();
        engine.reap(0, 4, &mut out).unwrap();
        assert_eq!(
            out,
            [Completion {
                slot: 0,
                result: 512
            }]
        );

        let mut done = run_batch(&mut engine, &reqs);
        done.sort_by_key(|c| c.slot);
        let expected: Vec<_> = reqs
            .iter()
            .map(|r| Completion {
                slot: r.slot,
                result: i64::from(r.len),
            })
            .collect();
        assert_eq!(done, expected);
    }

    #[test]
    fn reap_respects_max() {
        let (_dir, file) = scratch_file(0);
        let spec = spec(EngineKind::Null);
        let files = [Arc::new(file)];
        let mut engine = Null::open(&setup(&spec, &files, &[0], 4)).unwrap();
        for req in requests(4) {
            engine.queue(&req).unwrap();
        }
        engine.commit().unwrap();
        let mut out = Vec::new();
        engine.reap(1, 3, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        engine.reap(1, 3, &mut out).unwrap();
        assert_eq!(out.len(), 4);
    }
}
