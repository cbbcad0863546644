//! The end of a run on several ranks: every rank's results (and what the first
//! rank of each host saw of it) gathered to the first rank and merged there. A
//! run that was stopped gathers nothing: the others may be stopped anywhere,
//! some never to gather, so each rank's file holds its part.

use super::group::write_rank_file;
use super::ranks::{self, ClusterLink};
use super::{stop_signal, Gathered, RunRequest};
use crate::model::{ClusterReport, DiskUtil, Environment, Observations};

/// What this rank has of the run beyond its results, as the run ends.
pub(super) struct RankTail<'t> {
    /// When its run (and its sampler's clock) started, ms since the Unix epoch.
    pub started_unix_ms: u64,
    pub environment: &'t Environment,
    /// Its host's disks over the run.
    pub disks: &'t [DiskUtil],
}

/// The cluster's part of the report, on the first rank: `gathered`'s results
/// become every rank's merged, and `observations` (this host's) hold every rank
/// that ran on this host. None on the other ranks, when the run was stopped, or
/// when a rank's results do not read (a warning says so).
pub(super) fn gather_ranks(
    req: &RunRequest,
    link: &dyn ClusterLink,
    gathered: &mut Gathered,
    at: RankTail,
    observations: &mut Observations,
) -> Option<Box<ClusterReport>> {
    if let Some(path) = req
        .rank_file
        .filter(|_| stop_signal::stop_requested(req.stop))
    {
        // the first rank reports its own
        write_rank_file(req, link, path, gathered, at.started_unix_ms);
        if link.rank().rank == 0 {
            gathered.warnings.push(format!(
                "stopped before the ranks' results were gathered: this report is rank 0's alone; every rank's results so far are in {} (iolens merge DIR reports them)",
                path.parent().unwrap_or(path).display()
            ));
        }
        return None;
    }
    let mine = ranks::RankResults {
        id: link.rank().clone(),
        groups: std::mem::take(&mut gathered.rank_groups),
        results: std::mem::take(&mut gathered.results),
        // one rank per host speaks for its disks, so no host's are counted twice
        disks: if link.rank().local_rank == 0 {
            at.disks.to_vec()
        } else {
            Vec::new()
        },
        started_unix_ms: at.started_unix_ms,
        series: observations.jobs.clone(),
        workers: observations.workers.clone(),
        host: (link.rank().local_rank == 0 && link.rank().rank != 0).then(|| {
            Box::new(ranks::HostSeen {
                observations: observations.clone(),
                environment: at.environment.clone(),
            })
        }),
    };
    let parts = link.gather(mine.to_bytes());
    gathered.results = mine.results;
    // every rank's results reached the first rank: the file is not needed
    if let Some(path) = req.rank_file {
        let _ = std::fs::remove_file(path);
    }
    let parts = parts?;
    match parts
        .iter()
        .map(|b| ranks::RankResults::from_bytes(b))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(ranks) => {
            let (merged, mut cluster) = ranks::merge(req, &ranks, at.started_unix_ms);
            ranks::pair_hosts(
                req,
                &ranks,
                link.rank(),
                observations,
                at.started_unix_ms,
                &mut cluster,
            );
            gathered.results = merged;
            Some(Box::new(cluster))
        }
        Err(e) => {
            gathered.warnings.push(e.to_string());
            None
        }
    }
}
