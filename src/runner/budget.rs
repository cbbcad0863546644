//! How much a size-bound worker issues, and when it goes over its regions again:
//! fio's arithmetic of `size`, `io_size`, `loops` and `number_ios`.
//!
//! - A pass issues at most `size` bytes (with `rw=randwrite` and `norandommap`,
//!   up to `io_size`), and ends early once the regions have no block left that
//!   fits: a block that does not fit in the region is never issued. With holes
//!   (`rw=write:4k`) the walk wraps at the file's end instead of ending, so, as in
//!   fio, a pass goes on until all the bytes of all loops are issued (unless a
//!   block ends exactly at the file's end, which ends the walk).
//! - Over all passes at most `(io_size or size) × loops` bytes and
//!   `number_ios × loops` I/Os are issued.
//! - After the `loops` passes another pass starts only while the bytes done are
//!   short of `io_size or size` by at least the largest block, and either
//!   `io_size` was given or the last pass ended on its byte limit rather than
//!   with its regions exhausted.

use crate::job::spec::{Ddir, JobSpec};

#[derive(Debug, Clone)]
pub(super) struct Budget {
    pass_limit: u64,
    total_limit: u64,
    /// `io_size`, else `size`: the amount another pass tries to reach.
    target: u64,
    io_size_given: bool,
    max_block: u64,
    ios_limit: Option<u64>,
    loops: u32,
    time_based: bool,
    pass_bytes: u64,
    /// The pass's regions had no block left that fits.
    pass_exhausted: bool,
    bytes: u64,
    ios: u64,
    passes_done: u32,
}

impl Budget {
    /// `region_total`: the bytes of the worker's regions (its `size`).
    pub(super) fn new(job: &JobSpec, region_total: u64) -> Self {
        let w = &job.workload;
        // (rand)trimwrite moves each block twice, its trim and its write (fio counts both)
        let moves_per_block = if w.rw.writes_after_trim() { 2 } else { 1 };
        // fio: size= caps the bytes of all files (nrfiles × filesize may be more)
        let region_total = match job.target.size {
            Some(crate::job::spec::SizeOrPercent::Bytes(size)) if job.target.filesize.is_some() => {
                size.min(region_total)
            }
            _ => region_total,
        };
        // fio: sprandom's io_size is the target's physical size, whatever io_size says
        let io_size = match &w.sprandom {
            Some(spr) => Some(spr.physical_size(region_total, w.bs[Ddir::Write.index()].min())),
            None => job.target.io_size.map(|s| s.resolve(region_total)),
        };
        let target = io_size.unwrap_or(region_total);
        let overwrites = w.rw.is_random() && !w.randommap && w.rw.directions()[1];
        let loops = job.target.loops.max(1);
        let holes = !w.rw.is_random() && w.rw_modifier > 0;
        let pass_limit = match io_size {
            _ if holes => target.saturating_mul(u64::from(loops)),
            Some(io_size) if overwrites => io_size.max(region_total),
            _ => region_total,
        };
        let max_block = w.used_block_sizes().map(|bs| bs.max()).max().unwrap_or(1);
        Budget {
            pass_limit: pass_limit.saturating_mul(moves_per_block).max(1),
            total_limit: target
                .saturating_mul(u64::from(loops))
                .saturating_mul(moves_per_block)
                .max(1),
            target: target.saturating_mul(moves_per_block),
            io_size_given: io_size.is_some(),
            max_block,
            ios_limit: job.target.number_ios.map(|n| {
                n.saturating_mul(u64::from(loops))
                    .saturating_mul(moves_per_block)
            }),
            loops,
            time_based: job.exec.time_based,
            pass_bytes: 0,
            pass_exhausted: false,
            bytes: 0,
            ios: 0,
            passes_done: 0,
        }
    }

    /// Issue at most `ios` I/Os in all (`verify_state_load` on a job that reads:
    /// fio stops it after as many reads as the writer finished writes).
    pub(super) fn cap_ios(&mut self, ios: u64) {
        self.ios_limit = Some(self.ios_limit.map_or(ios, |n| n.min(ios)));
    }

    /// No more I/O at all: the byte or I/O count over all passes is reached.
    pub(super) fn spent(&self) -> bool {
        !self.time_based
            && (self.bytes >= self.total_limit || self.ios_limit.is_some_and(|n| self.ios >= n))
    }

    /// This pass is over: it issued its bytes, or its regions ran out.
    pub(super) fn pass_over(&self) -> bool {
        self.pass_bytes >= self.pass_limit || self.pass_exhausted
    }

    /// The regions have no block left that fits in this pass.
    pub(super) fn regions_exhausted(&mut self) {
        self.pass_exhausted = true;
    }

    /// Passes ended so far.
    pub(super) fn passes_done(&self) -> u32 {
        self.passes_done
    }

    /// Passes the job asks for (`loops`).
    pub(super) fn loops(&self) -> u32 {
        self.loops
    }

    pub(super) fn issued(&mut self, len: u64) {
        self.pass_bytes += len;
        self.bytes += len;
        self.ios += 1;
    }

    /// The pass is over; true when another one starts.
    pub(super) fn next_pass(&mut self) -> bool {
        let exhausted = self.pass_exhausted;
        self.passes_done += 1;
        let again = self.time_based
            || self.passes_done < self.loops
            || (!self.spent()
                && self.target.saturating_sub(self.bytes) >= self.max_block
                && (self.io_size_given || !exhausted));
        if again {
            self.pass_bytes = 0;
            self.pass_exhausted = false;
        }
        again
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::spec::SizeOrPercent;

    const MIB: u64 = 1 << 20;

    fn job(args: &[&str]) -> JobSpec {
        crate::testutil::job_spec(args)
    }

    /// Bytes issued: passes of `per_pass` bytes (what fits of the region)
    /// in `block` I/Os, as the worker drives the budget.
    fn run(budget: &mut Budget, per_pass: u64, block: u64) -> u64 {
        loop {
            let mut in_pass = 0;
            loop {
                if budget.spent() {
                    return budget.bytes;
                }
                if budget.pass_over() {
                    break;
                }
                if in_pass + block > per_pass {
                    budget.regions_exhausted();
                    break;
                }
                in_pass += block;
                budget.issued(block);
            }
            if !budget.next_pass() {
                return budget.bytes;
            }
        }
    }

    #[test]
    fn a_block_that_does_not_fit_is_not_issued() {
        // fio: size=64m bs=10m writes 6 blocks, not a 7th wrapped to offset 0
        let spec = job(&["--name=s", "--size=64m", "--bs=10m", "--rw=write"]);
        let mut budget = Budget::new(&spec, 64 * MIB);
        assert_eq!(
            run(&mut budget, 60 * MIB, 10 * MIB),
            60 * MIB,
            "expected 6 blocks"
        );
    }

    #[test]
    fn sprandom_writes_the_physical_size_whatever_io_size_says() {
        // fio 3.42: 32M with spr_op=0.10 is 9012 blocks of 4k (rounded up)
        let args = [
            "--name=s",
            "--size=32m",
            "--rw=randwrite",
            "--sprandom=1",
            "--spr_op=0.10",
            "--io_size=1m",
        ];
        let mut budget = Budget::new(&job(&args), 32 * MIB);
        assert_eq!(
            run(&mut budget, u64::MAX, 4096),
            9012 * 4096,
            "expected the physical size, 9012 blocks of 4k"
        );
    }

    #[test]
    fn io_size_goes_round_again_and_stops_at_its_bytes() {
        let mut spec = job(&["--name=s", "--size=64m", "--bs=10m", "--rw=write"]);
        spec.target.io_size = Some(SizeOrPercent::Bytes(100 * MIB));
        let mut budget = Budget::new(&spec, 64 * MIB);
        assert_eq!(
            run(&mut budget, 60 * MIB, 10 * MIB),
            100 * MIB,
            "6 + 4 blocks"
        );
        spec.target.loops = 2;
        let mut budget = Budget::new(&spec, 64 * MIB);
        assert_eq!(
            run(&mut budget, 60 * MIB, 10 * MIB),
            120 * MIB,
            "two full passes"
        );
    }

    #[test]
    fn a_hole_walk_goes_on_until_io_size_is_reached() {
        // fio: write:4k bs=4k size=32k io_size=34k wraps and issues 9 blocks
        let mut spec = job(&["--name=s", "--size=32k", "--bs=4k", "--rw=write:4k"]);
        spec.target.io_size = Some(SizeOrPercent::Bytes(34 << 10));
        for (loops, blocks) in [(1, 9), (2, 17)] {
            spec.target.loops = loops;
            let mut budget = Budget::new(&spec, 32 << 10);
            let bytes = run(&mut budget, u64::MAX, 4 << 10);
            assert_eq!(
                bytes,
                blocks << 12,
                "loops={loops}: expected {blocks} blocks of 4k, saw {bytes} bytes"
            );
        }
    }

    #[test]
    fn loops_and_number_ios_multiply() {
        let mut spec = job(&["--name=s", "--size=27k", "--bs=2k", "--rw=write"]);
        spec.target.loops = 2;
        let mut budget = Budget::new(&spec, 27 << 10);
        assert_eq!(
            run(&mut budget, 26 << 10, 2 << 10),
            52 << 10,
            "13 blocks a loop"
        );
        spec.target.number_ios = Some(5);
        let mut budget = Budget::new(&spec, 27 << 10);
        assert_eq!(
            run(&mut budget, 26 << 10, 2 << 10),
            20 << 10,
            "5 I/Os a loop"
        );
    }
}
