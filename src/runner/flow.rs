//! fio's flow control (`flow`, `flow_id`, `flow_sleep`): the workers sharing a
//! `flow_id` keep the I/Os they issue in the ratio of their `flow` weights.
//!
//! As in fio, a worker may issue its next I/O while its share of the flow's
//! I/Os (counted from 1) is no larger than its share of the flow's weights;
//! otherwise it is held back and tries again (after waiting for its I/Os in
//! flight and `flow_sleep`, when that is set). A worker's weight and its count
//! take part from just before its group's start until the group's supervisor
//! notices that it ended (fio's reap), so a job's end frees the others of its
//! flow no earlier than it stops them under `exitall`. Each worker
//! publishes both in its slot of the live board, so thread and process
//! workers see each other the same way; nothing is locked.

use crate::job::spec::{FlowSpec, JobSpec};
use crate::observe::live::LiveCounters;
use std::time::Duration;

/// One worker's part in its flow.
pub(super) struct FlowControl<'a> {
    me: LiveCounters<'a>,
    /// The live slots of every worker of the run in the same flow, this one's included.
    members: Vec<LiveCounters<'a>>,
    weight: u64,
    issued: u64,
    /// `flow_sleep`.
    pub sleep: Duration,
}

impl<'a> FlowControl<'a> {
    /// Join the flow: from now on this worker's weight counts.
    pub(super) fn join(
        spec: &FlowSpec,
        me: LiveCounters<'a>,
        members: Vec<LiveCounters<'a>>,
    ) -> Self {
        let weight = u64::from(spec.weight);
        me.set_flow(weight, 0);
        FlowControl {
            me,
            members,
            weight,
            issued: 0,
            sleep: spec.sleep,
        }
    }

    /// May this worker issue an I/O now? If so the I/O is counted.
    #[inline]
    pub(super) fn admit(&mut self) -> bool {
        // fio's shared counter starts at 1
        let (weights, issued) = self
            .members
            .iter()
            .map(LiveCounters::flow)
            .fold((0u64, 1u64), |(w, i), (weight, count)| {
                (w + weight, i + count)
            });
        // issued/all issued > weight/all weights, without division
        let ahead = u128::from(self.issued) * u128::from(weights)
            > u128::from(self.weight) * u128::from(issued);
        if ahead {
            return false;
        }
        self.issued += 1;
        self.me.set_flow(self.weight, self.issued);
        true
    }
}

/// The live-board slots (fio's worker numbers − 1) of every worker of the run
/// in the flow of job `job_index`; empty when that job takes part in none.
pub(super) fn member_slots(jobs: &[JobSpec], job_index: usize) -> Vec<usize> {
    let Some(flow) = jobs[job_index].pacing.flow else {
        return Vec::new();
    };
    let mut first_slot = 0;
    let mut slots = Vec::new();
    for job in jobs {
        let workers = job.exec.numjobs as usize;
        if job.pacing.flow.is_some_and(|other| other.id == flow.id) {
            slots.extend(first_slot..first_slot + workers);
        }
        first_slot += workers;
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::live::LiveBoard;

    fn spec(weight: u32) -> FlowSpec {
        FlowSpec {
            id: 1,
            weight,
            sleep: Duration::ZERO,
        }
    }

    #[test]
    fn workers_issue_in_the_ratio_of_their_weights() {
        let board = LiveBoard::new([3]);
        let members = || (0..3).map(|i| board.slot(i)).collect::<Vec<_>>();
        let mut flows: Vec<FlowControl> = [1, 5, 10]
            .iter()
            .enumerate()
            .map(|(i, &w)| FlowControl::join(&spec(w), board.slot(i), members()))
            .collect();
        // each tries in turn, as fast as it can: the weights decide who goes
        let mut issued = [0u64; 3];
        for _ in 0..16_000 {
            for (i, flow) in flows.iter_mut().enumerate() {
                issued[i] += u64::from(flow.admit());
            }
        }
        let total: u64 = issued.iter().sum();
        for (i, weight) in [1, 5, 10].into_iter().enumerate() {
            let share = issued[i] as f64 / total as f64;
            let expected = weight as f64 / 16.0;
            assert!(
                (share - expected).abs() < 0.01,
                "expected worker {i} (flow={weight}) to issue {expected:.3} of the I/Os, saw {share:.3} ({issued:?})"
            );
        }
    }

    #[test]
    fn a_worker_that_ends_leaves_the_flow() {
        let board = LiveBoard::new([2]);
        let members = || (0..2).map(|i| board.slot(i)).collect::<Vec<_>>();
        let mut light = FlowControl::join(&spec(1), board.slot(0), members());
        let _heavy = FlowControl::join(&spec(3), board.slot(1), members());
        // the heavy worker issues nothing: the light one is held to its share
        let admitted = (0..100).filter(|_| light.admit()).count();
        assert_eq!(
            admitted, 1,
            "expected 1 I/O while the idle peer holds 3/4 of the weight"
        );
        board.slot(1).leave_flow();
        let admitted = (0..100).filter(|_| light.admit()).count();
        assert_eq!(
            admitted, 100,
            "expected no holding back once the peer ended, saw {admitted} of 100"
        );
    }

    #[test]
    fn members_are_the_workers_of_the_same_flow_id() {
        let job = |args: &[&str]| {
            let args = [&["--name=t", "--filename=/tmp/f"], args].concat();
            crate::testutil::job_spec(&args)
        };
        let jobs = [
            job(&["--flow=1", "--flow_id=2", "--numjobs=2"]),
            job(&[]),
            job(&["--flow=3", "--flow_id=2"]),
            job(&["--flow=3", "--flow_id=5"]),
        ];
        assert_eq!(member_slots(&jobs, 0), [0, 1, 3]);
        assert_eq!(member_slots(&jobs, 2), [0, 1, 3]);
        assert_eq!(member_slots(&jobs, 3), [4]);
        assert!(
            member_slots(&jobs, 1).is_empty(),
            "expected no flow without a weight"
        );
    }
}
