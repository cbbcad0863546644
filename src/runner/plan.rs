//! Reporting groups: jobs run concurrently within a group; a job with
//! `stonewall` or `new_group` starts a new one (fio's rules). Groups run one
//! after another.

use crate::job::spec::JobSpec;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub id: u32,
    /// Indexes into the job list.
    pub jobs: Vec<usize>,
}

/// Split jobs into groups in order.
pub(crate) fn groups(jobs: &[JobSpec]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let starts_new = job.exec.stonewall || job.exec.new_group;
        match out.last_mut() {
            Some(g) if !starts_new => g.jobs.push(i),
            _ => out.push(Group {
                id: out.len() as u32,
                jobs: vec![i],
            }),
        }
    }
    out
}

/// The group id of every job, by job index.
pub(crate) fn group_ids(jobs: &[JobSpec]) -> Vec<u32> {
    let mut ids = vec![0; jobs.len()];
    for g in groups(jobs) {
        for j in g.jobs {
            ids[j] = g.id;
        }
    }
    ids
}
