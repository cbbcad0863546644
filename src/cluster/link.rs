//! Every MPI call of iolens (rsmpi, safe Rust): start and end MPI, the barrier,
//! and gathering bytes to the first rank. Waits poll a non-blocking request with
//! short sleeps: a blocking MPI wait spins a core that I/O workers (of this rank
//! or of another rank on the host) need.

use crate::runner::ranks::{ClusterLink, RankId};
use crate::runner::stop_signal::{received_signal, stop_requested};
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::point_to_point::{MatchedReceiveVec, Message, Status};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long a wait sleeps between looks: short against a barrier's skew, long
/// against a core's time.
const POLL: Duration = Duration::from_micros(100);

/// The tag of "my workers of this group are done" messages.
const DONE: mpi::Tag = 1;
/// The tag of liveness news (runner/alive.rs).
const ALIVE: mpi::Tag = 2;

/// This process as one rank of MPI's world; MPI ends when it is dropped.
pub(crate) struct MpiLink {
    world: SimpleCommunicator,
    id: RankId,
    run_key: u64,
    /// Every rank's host, by rank.
    hosts: Vec<String>,
    // Last: dropped after the communicator, it ends MPI; None once given up.
    universe: Option<Universe>,
}

impl Drop for MpiLink {
    fn drop(&mut self) {
        // Ending MPI waits for every rank and for mpirun, which is killing the
        // ranks after a Ctrl-C: a stopped rank ends without it.
        if received_signal().is_some() {
            std::mem::forget(self.universe.take());
        }
    }
}

impl MpiLink {
    /// Start MPI (once per process). Err: why it cannot start.
    pub(crate) fn start() -> Result<MpiLink, String> {
        let universe = mpi::initialize().ok_or("MPI was started twice in one process")?;
        let world = universe.world();
        // the ranks that share this host (MPI's shared-memory domain)
        let local_rank = world.split_shared(0).rank();
        // the first rank's start, the same on every rank
        let mut run_key = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        world.process_at_rank(0).broadcast_into(&mut run_key);
        let hosts = all_hostnames(&world, &super::hostname());
        let id = RankId {
            rank: rank_number(world.rank()),
            local_rank: rank_number(local_rank),
            hostname: super::hostname(),
        };
        Ok(MpiLink {
            world,
            id,
            run_key,
            hosts,
            universe: Some(universe),
        })
    }
}

impl MpiLink {
    /// Every message tagged `tag` that arrived, each taken by `receive`, with the
    /// rank it came from; never waits.
    fn drain<T>(
        &self,
        tag: mpi::Tag,
        receive: impl Fn((Message, Status)) -> (T, Status),
    ) -> Vec<(u32, T)> {
        let mut heard = Vec::new();
        while let Some(probed) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(tag)
        {
            let (value, status) = receive(probed);
            heard.push((rank_number(status.source_rank()), value));
        }
        heard
    }
}

/// The longest host name kept (Linux allows 64 bytes).
const HOST_BYTES: usize = 64;

/// Every rank's host name, by rank (each rank's name, cut to `HOST_BYTES`).
fn all_hostnames(world: &SimpleCommunicator, mine: &str) -> Vec<String> {
    let mut name = [0u8; HOST_BYTES];
    let len = mine.len().min(HOST_BYTES);
    name[..len].copy_from_slice(&mine.as_bytes()[..len]);
    let mut all = vec![0u8; HOST_BYTES * world.size() as usize];
    world.all_gather_into(&name[..], &mut all[..]);
    all.chunks(HOST_BYTES)
        .map(|n| {
            let end = n.iter().position(|&b| b == 0).unwrap_or(n.len());
            String::from_utf8_lossy(&n[..end]).into_owned()
        })
        .collect()
}

fn rank_number(n: i32) -> u32 {
    u32::try_from(n).expect("MPI numbers ranks from 0")
}

impl ClusterLink for MpiLink {
    fn rank(&self) -> &RankId {
        &self.id
    }

    fn barrier(&self, stop: &AtomicBool, waiting: &mut dyn FnMut() -> bool) -> bool {
        let mut request = self.world.immediate_barrier();
        loop {
            match request.test() {
                Ok(_) => return true,
                Err(pending) => request = pending,
            }
            if stop_requested(stop) || !waiting() {
                // A barrier cannot be cancelled; the stopped rank only ends.
                std::mem::forget(request);
                return false;
            }
            std::thread::sleep(POLL);
        }
    }

    fn ranks(&self) -> u32 {
        rank_number(self.world.size())
    }

    fn run_key(&self) -> u64 {
        self.run_key
    }

    fn host_of(&self, rank: u32) -> &str {
        self.hosts.get(rank as usize).map_or("", String::as_str)
    }

    fn abort(&self, message: &str) -> ! {
        // one write, so that the ranks' lines do not interleave
        crate::console::warn(format_args!("{message}"));
        self.world.abort(1)
    }

    fn announce_done(&self, at_ns: u64) {
        // 8 bytes go out eagerly: each send returns at once
        for rank in (0..self.world.size()).filter(|&r| r != self.world.rank()) {
            self.world.process_at_rank(rank).send_with_tag(&at_ns, DONE);
        }
    }

    fn tell(&self, to: u32, news: &[u8]) {
        // a few dozen bytes go out eagerly: the send returns at once
        let to = i32::try_from(to).expect("MPI numbers ranks in an int");
        self.world.process_at_rank(to).send_with_tag(news, ALIVE);
    }

    fn heard(&self) -> Vec<(u32, Vec<u8>)> {
        self.drain(ALIVE, |probed| probed.matched_receive_vec::<u8>())
    }

    fn heard_done(&self) -> Vec<(u32, u64)> {
        self.drain(DONE, |(message, _)| message.matched_receive::<u64>())
    }

    fn gather(&self, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        // every rank arrives first (polled), so the blocking gather is brief
        self.barrier(&AtomicBool::new(false), &mut || true);
        let root = self.world.process_at_rank(0);
        let len = Count::try_from(mine.len()).expect("a rank's results fit in 2 GiB");
        if self.world.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(&mine[..]);
            return None;
        }
        let mut lens: Vec<Count> = vec![0; self.world.size() as usize];
        root.gather_into_root(&len, &mut lens[..]);
        let displs: Vec<Count> = lens
            .iter()
            .scan(0, |at, &n| {
                let here = *at;
                *at += n;
                Some(here)
            })
            .collect();
        let total: usize = lens.iter().map(|&n| n as usize).sum();
        let mut all = vec![0u8; total];
        {
            let mut partition = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(&mine[..], &mut partition);
        }
        Some(
            lens.iter()
                .zip(&displs)
                .map(|(&n, &at)| all[at as usize..(at + n) as usize].to_vec())
                .collect(),
        )
    }
}
