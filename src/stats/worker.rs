//! One worker's counters, owned by its thread (no locks), merged at the end.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::job::spec::{ioprio_parts, DDIRS};
use crate::model::{DepthReport, DirReport, LatBuckets, PrioReport, SyncReport};
use crate::stats::histogram::LatHistogram;
use crate::stats::schedule::ScheduleStats;
use crate::stats::series::RateSeries;

/// Latencies and totals of one direction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DirStats {
    /// Submission latency: start of submit until the engine accepted the I/O.
    pub slat: LatHistogram,
    /// Completion latency: accepted until completed.
    pub clat: LatHistogram,
    /// Total latency: start of submit until completed.
    pub lat: LatHistogram,
    pub bytes: u64,
    pub ios: u64,
    /// I/Os that transferred fewer bytes than asked.
    pub short_ios: u64,
    /// One latency histogram per I/O priority, the job's own first; empty without `cmdprio_*`.
    #[serde(default)]
    pub prios: Vec<PrioLat>,
}

/// The latencies of the I/Os of one priority (fio's `clat_prio`): completion latency,
/// or total latency with `lat_percentiles`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PrioLat {
    pub ioprio: u16,
    pub lat: LatHistogram,
}

impl DirStats {
    pub(crate) fn merge(&mut self, other: &DirStats) {
        self.slat.merge(&other.slat);
        self.clat.merge(&other.clat);
        self.lat.merge(&other.lat);
        self.bytes += other.bytes;
        self.ios += other.ios;
        self.short_ios += other.short_ios;
        for theirs in &other.prios {
            match self.prios.iter_mut().find(|p| p.ioprio == theirs.ioprio) {
                Some(mine) => mine.lat.merge(&theirs.lat),
                None => self.prios.push(theirs.clone()),
            }
        }
    }

    /// Count `ns` in the latencies of priority `ioprio`, if this direction keeps them.
    #[inline]
    pub(crate) fn record_prio(&mut self, ioprio: u16, ns: u64) {
        if let Some(p) = self.prios.iter_mut().find(|p| p.ioprio == ioprio) {
            p.lat.record(ns);
        }
    }

    /// fio's per-priority report: only with two priorities or more that have samples.
    fn prio_reports(&self, percentiles: PercentileChoice) -> Vec<PrioReport> {
        let with_samples = || self.prios.iter().filter(|p| p.lat.count() > 0);
        if with_samples().count() < 2 {
            return Vec::new();
        }
        let total_latency = !percentiles.lat.is_empty();
        let pcts = if total_latency {
            percentiles.lat
        } else {
            percentiles.clat
        };
        with_samples()
            .map(|p| {
                let (prioclass, prio) = ioprio_parts(p.ioprio);
                PrioReport {
                    prioclass,
                    prio,
                    total_latency,
                    lat: p.lat.summary(pcts),
                }
            })
            .collect()
    }

    /// The model's view of this direction over `runtime_ns`, with the
    /// percentiles `percentiles` asks for and the rate samples of `rates`.
    /// Latencies that were never measured (slat of a sync engine) are `None`.
    pub(crate) fn report(
        &self,
        runtime_ns: u64,
        percentiles: PercentileChoice,
        rates: &RateSeries,
    ) -> DirReport {
        let per_second = |n: u64| {
            if runtime_ns == 0 {
                0.0
            } else {
                n as f64 * 1e9 / runtime_ns as f64
            }
        };
        let measured = |h: &LatHistogram, pcts: &[f64]| (h.count() > 0).then(|| h.summary(pcts));
        DirReport {
            io_bytes: self.bytes,
            total_ios: self.ios,
            short_ios: self.short_ios,
            runtime_ns,
            bw_bytes_per_sec: per_second(self.bytes),
            iops: per_second(self.ios),
            slat: measured(&self.slat, percentiles.slat),
            clat: measured(&self.clat, percentiles.clat),
            lat: measured(&self.lat, percentiles.lat),
            bw_samples: rates.bw_summary(),
            iops_samples: rates.iops_summary(),
            prios: self.prio_reports(percentiles),
        }
    }
}

/// The percentiles reported for each latency; an empty list reports none
/// (fio's `slat_percentiles`, `clat_percentiles`, `lat_percentiles`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PercentileChoice<'a> {
    pub slat: &'a [f64],
    pub clat: &'a [f64],
    pub lat: &'a [f64],
}

/// Everything one worker measures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WorkerStats {
    /// [read, write, trim], indexed by `Ddir::index`.
    pub dirs: [DirStats; DDIRS],
    /// fsync/fdatasync latency.
    pub sync_lat: LatHistogram,
    /// fsyncs issued; fdatasyncs are timed in `sync_lat` but not counted here, as
    /// fio counts only its DDIR_SYNC in the JSON's `sync.total_ios`.
    pub sync_ios: u64,
    pub depth: DepthCounters,
    /// `rate`, `rate_iops`: how the schedule was kept; None without a rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleStats>,
}

impl WorkerStats {
    pub(crate) fn merge(&mut self, other: &WorkerStats) {
        for (mine, theirs) in self.dirs.iter_mut().zip(&other.dirs) {
            mine.merge(theirs);
        }
        self.sync_lat.merge(&other.sync_lat);
        self.sync_ios += other.sync_ios;
        self.depth.merge(&other.depth);
        match (&mut self.schedule, &other.schedule) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (None, Some(theirs)) => self.schedule = Some(theirs.clone()),
            _ => {}
        }
    }

    pub(crate) fn sync_report(&self, percentiles: &[f64]) -> SyncReport {
        SyncReport {
            total_ios: self.sync_ios,
            lat: (self.sync_lat.count() > 0).then(|| self.sync_lat.summary(percentiles)),
        }
    }

    /// fio's latency distribution covers the total latency of every direction.
    pub(crate) fn lat_buckets(&self) -> LatBuckets {
        let mut all = self.dirs[0].lat.clone();
        for dir in &self.dirs[1..] {
            all.merge(&dir.lat);
        }
        all.lat_buckets()
    }
}

impl AddAssign<&WorkerStats> for WorkerStats {
    fn add_assign(&mut self, other: &WorkerStats) {
        self.merge(other);
    }
}

/// Queue-depth counters behind fio's "IO depths", "submit" and "complete" lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DepthCounters {
    /// Buckets 1, 2, 4, 8, 16, 32, >=64: each covers depths up to the next.
    level: [u64; 7],
    /// Buckets 0, 4, 8, 16, 32, 64, >=64: a batch of n counts in the
    /// smallest bucket >= n (so "4" is 1..=4 and ">=64" is more than 64).
    submit: [u64; 7],
    complete: [u64; 7],
}

impl DepthCounters {
    /// `ios` I/Os submitted together, leaving `in_flight_after_submit` in flight: fio
    /// counts each of a batch at the depth the whole batch reached.
    #[inline]
    pub(crate) fn record_level(&mut self, in_flight_after_submit: u32, ios: u32) {
        let power_of_two = 31u32.saturating_sub(in_flight_after_submit.leading_zeros());
        self.level[power_of_two.min(6) as usize] += u64::from(ios);
    }

    /// One submit call that handed `batch` I/Os to the engine.
    #[inline]
    pub(crate) fn record_submit(&mut self, batch: u32) {
        self.submit[batch_bucket(batch)] += 1;
    }

    /// One reap call that returned `batch` completions.
    #[inline]
    pub(crate) fn record_complete(&mut self, batch: u32) {
        self.complete[batch_bucket(batch)] += 1;
    }

    pub(crate) fn merge(&mut self, other: &DepthCounters) {
        let pairs = [
            (&mut self.level, &other.level),
            (&mut self.submit, &other.submit),
            (&mut self.complete, &other.complete),
        ];
        for (mine, theirs) in pairs {
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        }
    }

    /// Each distribution in percent of its own total.
    pub(crate) fn report(&self) -> DepthReport {
        DepthReport {
            level_pct: percentages(&self.level),
            submit_pct: percentages(&self.submit),
            complete_pct: percentages(&self.complete),
        }
    }
}

/// Bucket of a batch of `n`: 0 → 0, 1..=4 → 1, 5..=8 → 2, …, 33..=64 → 5, more → 6.
#[inline]
fn batch_bucket(n: u32) -> usize {
    if n == 0 {
        return 0;
    }
    let ceil_log2 = 32 - (n - 1).leading_zeros();
    (ceil_log2.max(2) - 1).min(6) as usize
}

fn percentages(counts: &[u64; 7]) -> [f64; 7] {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return [0.0; 7];
    }
    counts.map(|c| c as f64 * 100.0 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direction keeping priorities `ioprios`, with `samples[i]` latencies of 1 µs each.
    fn with_prios(ioprios: &[u16], samples: &[u64]) -> DirStats {
        let mut d = DirStats {
            prios: ioprios
                .iter()
                .map(|&ioprio| PrioLat {
                    ioprio,
                    ..PrioLat::default()
                })
                .collect(),
            ..DirStats::default()
        };
        for (&ioprio, &n) in ioprios.iter().zip(samples) {
            for _ in 0..n {
                d.record_prio(ioprio, 1000);
            }
        }
        d
    }

    fn heads(d: &DirStats, percentiles: PercentileChoice) -> Vec<(u16, u16, bool, u64)> {
        d.report(1, percentiles, &RateSeries::default())
            .prios
            .iter()
            .map(|p| (p.prioclass, p.prio, p.total_latency, p.lat.samples))
            .collect()
    }

    #[test]
    fn priorities_are_reported_only_when_two_have_samples_as_in_fio() {
        let high = 1 << 13 | 2;
        let none = PercentileChoice::default();
        assert_eq!(
            heads(&with_prios(&[0, high], &[5, 0]), none),
            [],
            "expected no per-priority report with one priority used"
        );
        assert_eq!(
            heads(&with_prios(&[0, high], &[5, 3]), none),
            [(0, 0, false, 5), (1, 2, false, 3)],
            "expected the job's own priority, then class 1 level 2, as completion latencies"
        );
        let lat = PercentileChoice {
            lat: &[50.0],
            ..none
        };
        assert!(
            heads(&with_prios(&[0, high], &[1, 1]), lat)[0].2,
            "expected total latencies with lat_percentiles"
        );
        assert_eq!(
            heads(&DirStats::default(), none),
            [],
            "expected nothing without cmdprio"
        );
    }

    #[test]
    fn merging_adds_samples_of_the_same_priority_and_keeps_the_others() {
        let mut a = with_prios(&[0, 8192], &[2, 3]);
        a.merge(&with_prios(&[0, 3 << 13], &[4, 1]));
        let seen: Vec<(u16, u64)> = a.prios.iter().map(|p| (p.ioprio, p.lat.count())).collect();
        assert_eq!(
            seen,
            [(0, 6), (8192, 3), (3 << 13, 1)],
            "expected priority 0 summed and the other two kept in order of appearance"
        );
    }

    #[test]
    fn batch_buckets_match_fio() {
        let expect = [
            (0, 0),
            (1, 1),
            (4, 1),
            (5, 2),
            (8, 2),
            (9, 3),
            (16, 3),
            (17, 4),
        ];
        for (n, bucket) in
            expect
                .into_iter()
                .chain([(32, 4), (33, 5), (64, 5), (65, 6), (u32::MAX, 6)])
        {
            assert_eq!(batch_bucket(n), bucket, "batch {n}");
        }
    }

    #[test]
    fn depth_levels_round_down_to_a_power_of_two() {
        let mut d = DepthCounters::default();
        for level in [1, 2, 3, 4, 7, 8, 31, 32, 63, 64, 1000] {
            d.record_level(level, 1);
        }
        assert_eq!(d.level, [1, 2, 2, 1, 1, 2, 2]);
        d.record_level(5, 4);
        assert_eq!(
            d.level,
            [1, 2, 6, 1, 1, 2, 2],
            "expected a batch of 4 counted 4 times at the depth it reached"
        );
    }

    #[test]
    fn depth_report_is_percent_of_each_total() {
        let mut d = DepthCounters::default();
        d.record_submit(1);
        d.record_submit(1);
        d.record_submit(8);
        d.record_submit(100);
        d.record_complete(1);
        let r = d.report();
        assert_eq!(r.submit_pct, [0.0, 50.0, 25.0, 0.0, 0.0, 0.0, 25.0]);
        assert_eq!(r.complete_pct[1], 100.0);
        assert_eq!(r.level_pct, [0.0; 7]);
    }

    fn worker(read_lat: &[u64], write_lat: &[u64]) -> WorkerStats {
        worker_with_trims(read_lat, write_lat, &[])
    }

    fn worker_with_trims(read_lat: &[u64], write_lat: &[u64], trim_lat: &[u64]) -> WorkerStats {
        let mut w = WorkerStats::default();
        for (dir, lats) in w.dirs.iter_mut().zip([read_lat, write_lat, trim_lat]) {
            for &ns in lats {
                dir.clat.record(ns);
                dir.lat.record(ns + 100);
                dir.bytes += 4096;
                dir.ios += 1;
            }
        }
        w.depth.record_level(1, 1);
        w
    }

    #[test]
    fn merge_adds_everything() {
        let mut merged = worker(&[1000, 2000], &[500]);
        merged += &worker(&[3000], &[]);
        // `worker` records one depth level each, so the merge holds two.
        let mut expected = worker(&[1000, 2000, 3000], &[500]);
        expected.depth.record_level(1, 1);
        assert_eq!(merged, expected);
    }

    #[test]
    fn dir_report_rates_and_optional_latencies() {
        let w = worker(&[1000, 3000], &[]);
        let clat_only = PercentileChoice {
            clat: &[50.0],
            ..Default::default()
        };
        let r = w.dirs[0].report(2_000_000_000, clat_only, &RateSeries::default());
        assert_eq!(
            (r.io_bytes, r.total_ios, r.bw_bytes_per_sec, r.iops),
            (8192, 2, 4096.0, 1.0)
        );
        assert!(r.slat.is_none());
        assert_eq!(r.clat.unwrap().percentiles, vec![(50.0, 1004)]);
        assert!(r.lat.as_ref().unwrap().percentiles.is_empty());
        assert_eq!(r.lat.unwrap().mean_ns, 2100.0);
        let lat_only = PercentileChoice {
            lat: &[50.0],
            ..Default::default()
        };
        let r = w.dirs[0].report(2_000_000_000, lat_only, &RateSeries::default());
        assert!(r.clat.unwrap().percentiles.is_empty());
        assert_eq!(r.lat.unwrap().percentiles, vec![(50.0, 1096)]);
        let none = PercentileChoice::default();
        assert_eq!(w.dirs[1].report(0, none, &RateSeries::default()).iops, 0.0);
    }

    #[test]
    fn lat_buckets_cover_every_direction() {
        let b = worker(&[1500], &[1_500_000]).lat_buckets();
        assert_eq!(b.us_pct[0], 50.0);
        assert_eq!(b.ms_pct[0], 50.0);
        let b = worker_with_trims(&[1500], &[], &[1_500_000, 1_600_000, 1_700_000]).lat_buckets();
        assert_eq!((b.us_pct[0], b.ms_pct[0]), (25.0, 75.0));
    }

    #[test]
    fn merge_keeps_trims_apart() {
        let mut merged = worker_with_trims(&[], &[500], &[9000]);
        merged += &worker_with_trims(&[], &[], &[7000]);
        assert_eq!((merged.dirs[1].ios, merged.dirs[2].ios), (1, 2));
        assert_eq!(merged.dirs[2].bytes, 8192);
    }
}
