//! `io_submit_mode=offload`: the worker generates the I/Os and a pool of `iodepth`
//! submitting threads issues them, each with an engine of its own (one buffer slot),
//! as fio's submit workers do. So even a blocking engine keeps up to `iodepth` I/Os in
//! flight.
//!
//! `Offload<E>` is itself an `Engine` that queues every I/O: the worker's hot loop
//! (queue, depth counts, timing, checks, verify, stop) runs unchanged over it, and the
//! inline path never pays for the pool. Each slot's engine travels with its I/O: it
//! sits in `idle` while its slot is free (the worker fills and inspects its buffer
//! there), goes to a submit thread with the I/O and comes back with the completion.
//! No buffer is ever shared, so no lock guards one.

use crate::engine::{Completion, Engine, EngineSetup, IoRequest, Queued, TrimMethod};
use std::fs::File;
use std::io;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One I/O on its way to a submit thread, with the engine that issues it.
struct Work<E> {
    engine: E,
    req: IoRequest,
}

/// A finished I/O on its way back, with the engine it borrowed.
struct Done<E> {
    engine: E,
    completion: Completion,
}

pub(super) struct Offload<E: Engine> {
    /// Each slot's engine while the slot is free; `None` while a submit thread holds it.
    idle: Vec<Option<E>>,
    /// Taken in `drop` to tell the submit threads to end.
    work: Option<Sender<Work<E>>>,
    done: Receiver<Done<E>>,
    threads: Vec<JoinHandle<()>>,
    /// The priority `set_ioprio` asked for, given to each engine as it leaves.
    ioprio: Option<u16>,
    wait_limit: Option<Duration>,
}

impl<E: Engine> Offload<E> {
    /// The engine of a free slot (any: the runner syncs and trims with nothing in flight).
    fn an_idle_engine(&mut self) -> io::Result<&mut E> {
        self.idle
            .iter_mut()
            .find_map(Option::as_mut)
            .ok_or_else(|| runner_bug("a sync or trim with every slot in flight"))
    }

    fn take_back(&mut self, done: Done<E>, out: &mut Vec<Completion>) {
        let slot = done.completion.slot as usize;
        self.idle[slot] = Some(done.engine);
        out.push(done.completion);
    }
}

impl<E: Engine> Engine for Offload<E> {
    fn open(setup: &EngineSetup) -> io::Result<Self> {
        let threads = setup.slots.max(1);
        let idle = (0..threads)
            .map(|_| E::open(&EngineSetup { slots: 1, ..*setup }).map(Some))
            .collect::<io::Result<Vec<_>>>()?;
        let (work, queued) = mpsc::channel();
        let (finished, done) = mpsc::channel();
        let queued = Arc::new(Mutex::new(queued));
        let threads = (0..threads)
            .map(|i| {
                let queued = Arc::clone(&queued);
                let finished = finished.clone();
                std::thread::Builder::new()
                    .name(format!("iolens-submit-{i}"))
                    .spawn(move || submit_thread(&queued, &finished))
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Self {
            idle,
            work: Some(work),
            done,
            threads,
            ioprio: None,
            wait_limit: None,
        })
    }

    fn notes(&self) -> Vec<String> {
        self.idle
            .iter()
            .flatten()
            .next()
            .map(E::notes)
            .unwrap_or_default()
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        match self.idle.get_mut(slot as usize) {
            Some(Some(engine)) => engine.buffer(0),
            _ => panic!("runner bug: the buffer of slot {slot}, which is in flight"),
        }
    }

    fn queue(&mut self, req: &IoRequest) -> io::Result<Queued> {
        let mut engine = self
            .idle
            .get_mut(req.slot as usize)
            .and_then(Option::take)
            .ok_or_else(|| runner_bug("an I/O queued in a slot already in flight"))?;
        if let Some(ioprio) = self.ioprio {
            engine.set_ioprio(ioprio);
        }
        let sent = self
            .work
            .as_ref()
            .map(|work| work.send(Work { engine, req: *req }));
        match sent {
            Some(Ok(())) => Ok(Queued::Queued),
            _ => Err(io::Error::other("the submit threads have ended")),
        }
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<()> {
        let ended = || io::Error::other("the submit threads have ended");
        for got in 0..max {
            let done = if got < min {
                match self.wait_limit {
                    None => self.done.recv().map_err(|_| ended())?,
                    Some(limit) => match self.done.recv_timeout(limit) {
                        Ok(done) => done,
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return Err(ended()),
                    },
                }
            } else {
                match self.done.try_recv() {
                    Ok(done) => done,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return Err(ended()),
                }
            };
            self.take_back(done, out);
        }
        Ok(())
    }

    fn set_wait_limit(&mut self, limit: Option<Duration>) {
        self.wait_limit = limit;
    }

    fn set_ioprio(&mut self, ioprio: u16) {
        self.ioprio = Some(ioprio);
    }

    fn sync_file(&mut self, file: u32, datasync: bool) -> io::Result<()> {
        self.an_idle_engine()?.sync_file(file, datasync)
    }

    fn trim(&mut self, target: &File, method: TrimMethod, offset: u64, len: u64) -> io::Result<()> {
        self.an_idle_engine()?.trim(target, method, offset, len)
    }
}

impl<E: Engine> Drop for Offload<E> {
    /// Closing the work channel ends each submit thread once its I/O (if any) is done;
    /// every thread is joined, so none outlives the worker.
    fn drop(&mut self) {
        self.work = None;
        for thread in self.threads.drain(..) {
            // a panicked submit thread already printed its message
            let _ = thread.join();
        }
    }
}

/// One submit thread: take the next I/O any thread is free for, issue it with the
/// engine it came with, wait for it, send it back. Ends when the worker closes the
/// work channel (or is gone).
fn submit_thread<E: Engine>(queued: &Mutex<Receiver<Work<E>>>, finished: &Sender<Done<E>>) {
    let mut reaped = Vec::with_capacity(1);
    loop {
        // only the thread holding the lock waits on the channel; the others wait for the lock
        let next = match queued.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(Work { mut engine, req }) = next else {
            return;
        };
        let result = issue(&mut engine, &req, &mut reaped);
        let completion = Completion {
            slot: req.slot,
            result,
        };
        if finished.send(Done { engine, completion }).is_err() {
            return;
        }
    }
}

/// Issue one I/O in the engine's only slot and wait for it: bytes done, or `-errno`.
fn issue<E: Engine>(engine: &mut E, req: &IoRequest, reaped: &mut Vec<Completion>) -> i64 {
    let own = IoRequest { slot: 0, ..*req };
    let queued = engine.queue(&own).and_then(|queued| match queued {
        Queued::Completed(result) => Ok(result),
        Queued::Queued => {
            engine.commit()?;
            reaped.clear();
            while reaped.is_empty() {
                engine.reap(1, 1, reaped)?;
            }
            Ok(reaped[0].result)
        }
    });
    queued.unwrap_or_else(|e| -i64::from(e.raw_os_error().unwrap_or(libc::EIO)))
}

#[cold]
fn runner_bug(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("runner bug: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::{
        roundtrip, run_batch, setup, spec, write_to_read_only_result,
    };
    use crate::engine::{libaio::Libaio, mmap::Mmap, null::Null, psync::Psync, sync::Sync};
    use crate::job::spec::{Ddir, EngineKind};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Barrier, OnceLock};

    const DEPTH: u32 = 4;

    /// Held by every test that makes a pool, so one can count the submit threads alive.
    static POOLS: Mutex<()> = Mutex::new(());

    fn one_pool_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        POOLS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Threads of this process named as submit threads, once their number is
    /// `expected` (or after 10 s): a joined thread leaves /proc/self/task a moment
    /// after the join returns, later on a loaded machine.
    fn submit_threads_alive(expected: usize) -> usize {
        let count = || {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                .filter(|name| name.starts_with("iolens-submit"))
                .count()
        };
        let mut seen = count();
        for _ in 0..1000 {
            if seen == expected {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            seen = count();
        }
        seen
    }

    #[test]
    fn blocking_engines_write_and_read_back_through_the_pool() {
        let _one = one_pool_at_a_time();
        roundtrip::<Offload<Psync>>(EngineKind::Psync, DEPTH);
        // one submit thread: sync's file position is shared by the pool (deeper is refused)
        roundtrip::<Offload<Sync>>(EngineKind::Sync, 1);
        roundtrip::<Offload<Mmap>>(EngineKind::Mmap, DEPTH);
    }

    #[test]
    fn a_queueing_engine_works_one_io_per_submit_thread() {
        let _one = one_pool_at_a_time();
        roundtrip::<Offload<Libaio>>(EngineKind::Libaio, DEPTH);
    }

    #[test]
    fn an_io_error_comes_back_as_the_completions_result() {
        let _one = one_pool_at_a_time();
        let result = write_to_read_only_result::<Offload<Psync>>(EngineKind::Psync);
        assert_eq!(
            result,
            -i64::from(libc::EBADF),
            "expected -EBADF for a write through a read-only descriptor, saw {result}"
        );
    }

    /// An engine whose every I/O waits until `DEPTH` I/Os are inside `queue` at once:
    /// it completes only if that many are truly issued side by side.
    struct Gate {
        buf: Vec<u8>,
    }

    fn gate() -> &'static Barrier {
        static GATE: OnceLock<Barrier> = OnceLock::new();
        GATE.get_or_init(|| Barrier::new(DEPTH as usize))
    }

    static OPENED: AtomicUsize = AtomicUsize::new(0);

    impl Engine for Gate {
        fn open(setup: &EngineSetup) -> io::Result<Self> {
            assert_eq!(
                setup.slots, 1,
                "expected one slot per submit thread's engine"
            );
            OPENED.fetch_add(1, Ordering::Relaxed);
            Ok(Self {
                buf: vec![0; setup.slot_size],
            })
        }
        fn buffer(&mut self, _slot: u32) -> &mut [u8] {
            &mut self.buf
        }
        fn queue(&mut self, req: &IoRequest) -> io::Result<Queued> {
            gate().wait();
            Ok(Queued::Completed(i64::from(req.len)))
        }
        fn sync_file(&mut self, _file: u32, _datasync: bool) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_pool_keeps_iodepth_blocking_ios_in_flight_at_once() {
        let _one = one_pool_at_a_time();
        let spec = spec(EngineKind::Psync);
        let mut pool = Offload::<Gate>::open(&setup(&spec, &[], &[], DEPTH)).unwrap();
        assert_eq!(
            OPENED.load(Ordering::Relaxed),
            DEPTH as usize,
            "expected one engine per submit thread"
        );
        let reqs: Vec<_> = (0..DEPTH)
            .map(|slot| IoRequest {
                slot,
                ddir: Ddir::Read,
                file: 0,
                offset: u64::from(slot) * 4096,
                len: 4096,
            })
            .collect();
        // Twice: the engines came back to their slots after the first round.
        for round in 0..2 {
            let mut done = run_batch(&mut pool, &reqs);
            done.sort_by_key(|c| c.slot);
            let slots: Vec<_> = done.iter().map(|c| (c.slot, c.result)).collect();
            let expected: Vec<_> = (0..DEPTH).map(|s| (s, 4096)).collect();
            assert_eq!(
                slots, expected,
                "round {round}: expected every slot done once"
            );
        }
        drop(pool);
    }

    #[test]
    fn a_wait_limit_returns_without_a_completion_and_drop_joins_the_threads() {
        let _one = one_pool_at_a_time();
        let spec = spec(EngineKind::Null);
        let mut pool = Offload::<Null>::open(&setup(&spec, &[], &[], 2)).unwrap();
        pool.set_wait_limit(Some(Duration::from_millis(1)));
        let mut out = Vec::new();
        pool.reap(1, 2, &mut out).unwrap();
        assert!(
            out.is_empty(),
            "expected no completion with nothing queued, saw {out:?}"
        );
        let alive = submit_threads_alive(2);
        assert_eq!(alive, 2, "expected 2 submit threads alive, saw {alive}");
        pool.queue(&IoRequest {
            slot: 1,
            ddir: Ddir::Write,
            file: 0,
            offset: 0,
            len: 512,
        })
        .unwrap();
        let again = pool.queue(&IoRequest {
            slot: 1,
            ddir: Ddir::Write,
            file: 0,
            offset: 512,
            len: 512,
        });
        assert!(
            again.is_err(),
            "expected a slot in flight to be refused, saw {again:?}"
        );
        pool.set_wait_limit(None);
        pool.reap(1, 2, &mut out).unwrap();
        assert_eq!(
            out,
            [Completion {
                slot: 1,
                result: 512
            }],
            "expected slot 1's write back"
        );
        pool.sync_file(0, false).unwrap();
        pool.queue(&IoRequest {
            slot: 0,
            ddir: Ddir::Read,
            file: 0,
            offset: 0,
            len: 512,
        })
        .unwrap();
        // dropped with an I/O in flight, as a worker that failed would
        drop(pool);
        let alive = submit_threads_alive(0);
        assert_eq!(
            alive, 0,
            "expected no submit thread left after the drop, saw {alive}"
        );
    }
}
