//! Which priority each I/O carries (`cmdprio_percentage`): for every read or write, a draw
//! from its own stream decides whether it goes with the direction's cmdprio priority.

use rand::Rng;

use crate::job::spec::{ioprio_value, CmdprioSpec, Ddir, PrioShare};
use crate::workload::rng::{stream_rng, RngStream, WorkerRng};

/// The priorities of one worker's I/Os.
pub(crate) struct PrioChooser {
    spec: CmdprioSpec,
    /// The ioprio of the I/Os that do not get a cmdprio priority: the job's
    /// (`prioclass`/`prio`), 0 when it has none.
    own: u16,
    rng: WorkerRng,
}

impl PrioChooser {
    pub(crate) fn new(spec: CmdprioSpec, own: Option<(u32, u32)>, seed: u64) -> Self {
        Self {
            spec,
            own: own.map_or(0, |(class, level)| ioprio_value(class as u16, level as u16)),
            rng: stream_rng(seed, RngStream::Priorities),
        }
    }

    /// The priorities this worker's `ddir` I/Os can carry, the job's own first, then
    /// cmdprio's in the order of its shares (fio's order).
    pub(crate) fn priorities(&self, ddir: Ddir) -> Vec<u16> {
        let mut all = vec![self.own];
        for share in self.shares(ddir) {
            if !all.contains(&share.ioprio) {
                all.push(share.ioprio);
            }
        }
        all
    }

    /// The ioprio of the next `ddir` I/O of `len` bytes: one draw from 0 to 99 against
    /// the shares of its size, in turn.
    #[inline]
    pub(crate) fn pick(&mut self, ddir: Ddir, len: u32) -> u16 {
        let fits = |s: &&PrioShare| s.bs.is_none_or(|bs| bs == u64::from(len));
        let all = self
            .spec
            .dirs
            .get(ddir.index())
            .map_or(&[][..], Vec::as_slice);
        if !all.iter().any(|s| fits(&s)) {
            return self.own;
        }
        let draw = self.rng.random_range(0..100);
        let mut below = 0;
        for share in all.iter().filter(fits) {
            below += share.percent;
            if draw < below {
                return share.ioprio;
            }
        }
        self.own
    }

    fn shares(&self, ddir: Ddir) -> &[PrioShare] {
        shares_of(&self.spec, ddir)
    }
}

/// The shares of `ddir`'s I/Os (none for trims).
fn shares_of(spec: &CmdprioSpec, ddir: Ddir) -> &[PrioShare] {
    spec.dirs.get(ddir.index()).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIGH: u16 = 1 << 13;

    fn chooser(read: u32, write: u32, own: Option<(u32, u32)>) -> PrioChooser {
        let share = |percent| {
            let share = PrioShare {
                bs: None,
                percent,
                ioprio: HIGH,
            };
            (percent > 0).then_some(share).into_iter().collect()
        };
        let spec = CmdprioSpec {
            dirs: [share(read), share(write)],
        };
        PrioChooser::new(spec, own, 42)
    }

    /// The share of `n` draws of `len`-byte reads that got each of `ioprios`.
    fn shares_seen(c: &mut PrioChooser, len: u32, n: u32, ioprios: &[u16]) -> Vec<f64> {
        let picks: Vec<u16> = (0..n).map(|_| c.pick(Ddir::Read, len)).collect();
        ioprios
            .iter()
            .map(|&p| 100.0 * picks.iter().filter(|&&q| q == p).count() as f64 / f64::from(n))
            .collect()
    }

    #[test]
    fn each_direction_gets_its_share_within_binomial_noise() {
        let mut c = chooser(30, 80, None);
        let n = 20_000;
        for (ddir, percent) in [(Ddir::Read, 30.0), (Ddir::Write, 80.0)] {
            let high = (0..n).filter(|_| c.pick(ddir, 4096) == HIGH).count() as f64;
            let expected = n as f64 * percent / 100.0;
            // five standard deviations of a binomial count
            let sigma = (n as f64 * percent / 100.0 * (1.0 - percent / 100.0)).sqrt();
            assert!(
                (high - expected).abs() < 5.0 * sigma,
                "{ddir:?}: expected about {expected} of {n} I/Os at the cmdprio priority, saw {high}"
            );
        }
    }

    #[test]
    fn the_rest_keep_the_jobs_own_priority_and_trims_get_none() {
        let mut c = chooser(50, 0, Some((2, 5)));
        let own = 2 << 13 | 5;
        let reads: std::collections::BTreeSet<u16> =
            (0..200).map(|_| c.pick(Ddir::Read, 4096)).collect();
        assert_eq!(
            reads.into_iter().collect::<Vec<_>>(),
            [HIGH, own],
            "expected reads (in ioprio order) at the job's class 2 level 5 and at cmdprio's class 1"
        );
        assert!(
            (0..200).all(|_| c.pick(Ddir::Write, 4096) == own && c.pick(Ddir::Trim, 4096) == own),
            "expected writes (0%) and trims at the job's own priority only"
        );
        assert_eq!(
            (c.priorities(Ddir::Read), c.priorities(Ddir::Write)),
            (vec![own, HIGH], vec![own]),
            "expected the job's own priority first, then cmdprio's where it applies"
        );
    }

    #[test]
    fn the_same_seed_picks_the_same_priorities() {
        let picks = |c: &mut PrioChooser| {
            (0..64)
                .map(|_| c.pick(Ddir::Read, 4096))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            picks(&mut chooser(50, 0, None)),
            picks(&mut chooser(50, 0, None)),
            "expected a seeded chooser to repeat its picks"
        );
    }

    #[test]
    fn bssplit_shares_apply_to_their_block_size_only() {
        let (low, idle) = (2 << 13 | 5, 3 << 13 | 1);
        let share = |bs, percent, ioprio| PrioShare {
            bs: Some(bs),
            percent,
            ioprio,
        };
        let spec = CmdprioSpec {
            dirs: [
                vec![
                    share(4096, 20, low),
                    share(4096, 30, idle),
                    share(65536, 100, idle),
                ],
                Vec::new(),
            ],
        };
        let mut c = PrioChooser::new(spec, None, 7);
        assert_eq!(
            c.priorities(Ddir::Read),
            [0, low, idle],
            "expected the job's own priority, then the shares' in their order"
        );
        let at_4k = shares_seen(&mut c, 4096, 20_000, &[0, low, idle]);
        for (seen, expected) in at_4k.iter().zip([50.0, 20.0, 30.0]) {
            assert!(
                (seen - expected).abs() < 2.0,
                "4k reads: expected {expected}% at each priority (0, 2/5, 3/1), saw {at_4k:?}"
            );
        }
        assert_eq!(
            shares_seen(&mut c, 65536, 500, &[idle]),
            [100.0],
            "expected every 64k read at 3/1"
        );
        assert_eq!(
            shares_seen(&mut c, 8192, 500, &[0]),
            [100.0],
            "expected 8k reads, which no share names, at the job's own priority"
        );
    }
}
