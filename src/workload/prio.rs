//! Which priority each I/O carries (`cmdprio_percentage`): for every read or write, a draw
//! from its own stream decides whether it goes with the direction's cmdprio priority.

use rand::Rng;

use crate::job::spec::{ioprio_value, CmdprioSpec, Ddir, PrioShare};
use crate::workload::rng::{stream_rng, RngStream, WorkerRng};

/// The priorities of one worker's I/Os.
pub struct PrioChooser {
    spec: CmdprioSpec,
    /// The ioprio of the I/Os that do not get a cmdprio priority: the job's
    /// (`prioclass`/`prio`), 0 when it has none.
    own: u16,
    rng: WorkerRng,
}

impl PrioChooser {
    pub fn new(spec: CmdprioSpec, own: Option<(u32, u32)>, seed: u64) -> Self {
        Self {
            spec,
            own: own.map_or(0, |(class, level)| ioprio_value(class as u16, level as u16)),
            rng: stream_rng(seed, RngStream::Priorities),
        }
    }

    /// The priorities this worker's `ddir` I/Os can carry, the job's own first (fio's order).
    pub fn priorities(&self, ddir: Ddir) -> Vec<u16> {
        let mut all = vec![self.own];
        if let Some(share) = self.share(ddir) {
            if share.ioprio != self.own {
                all.push(share.ioprio);
            }
        }
        all
    }

    /// The ioprio of the next `ddir` I/O.
    #[inline]
    pub fn pick(&mut self, ddir: Ddir) -> u16 {
        match self.share(ddir) {
            Some(share) if self.rng.random_range(0..100) < share.percent => share.ioprio,
            _ => self.own,
        }
    }

    fn share(&self, ddir: Ddir) -> Option<PrioShare> {
        self.spec.dirs.get(ddir.index()).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIGH: u16 = 1 << 13;

    fn chooser(read: u32, write: u32, own: Option<(u32, u32)>) -> PrioChooser {
        let share = |percent| {
            (percent > 0).then_some(PrioShare {
                percent,
                ioprio: HIGH,
            })
        };
        let spec = CmdprioSpec {
            dirs: [share(read), share(write)],
        };
        PrioChooser::new(spec, own, 42)
    }

    #[test]
    fn each_direction_gets_its_share_within_binomial_noise() {
        let mut c = chooser(30, 80, None);
        let n = 20_000;
        for (ddir, percent) in [(Ddir::Read, 30.0), (Ddir::Write, 80.0)] {
            let high = (0..n).filter(|_| c.pick(ddir) == HIGH).count() as f64;
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
        let reads: std::collections::BTreeSet<u16> = (0..200).map(|_| c.pick(Ddir::Read)).collect();
        assert_eq!(
            reads.into_iter().collect::<Vec<_>>(),
            [HIGH, own],
            "expected reads (in ioprio order) at the job's class 2 level 5 and at cmdprio's class 1"
        );
        assert!(
            (0..200).all(|_| c.pick(Ddir::Write) == own && c.pick(Ddir::Trim) == own),
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
        let picks = |c: &mut PrioChooser| (0..64).map(|_| c.pick(Ddir::Read)).collect::<Vec<_>>();
        assert_eq!(
            picks(&mut chooser(50, 0, None)),
            picks(&mut chooser(50, 0, None)),
            "expected a seeded chooser to repeat its picks"
        );
    }
}
