//! `missed-schedule`: a rate-limited job whose I/Os went out late, beyond what a
//! sleep's overshoot or a busy scheduler explains: while the device or the
//! filesystem held an I/O, the ones due after it were never timed, so the usual
//! percentiles (counted from when each I/O went out) leave the wait out
//! (coordinated omission). The latencies counted from the due times show it.

use super::duration_text;
use crate::model::{Finding, JobReport, LatSummary, ScheduleReport, Severity, Stall, DIRECTIONS};

/// Late I/Os, per cent of those issued, past which the schedule was missed: a
/// clean paced run has none or a handful from the machine's own hiccups.
const MIN_LATE_PCT: f64 = 2.0;

pub(super) fn missed_schedule(report: &crate::model::RunReport) -> Vec<Finding> {
    report
        .jobs
        .iter()
        .filter_map(|job| Some((job, job.schedule.as_ref()?)))
        .filter(|(_, s)| s.ios > 0 && late_pct(s) >= MIN_LATE_PCT)
        .map(|(job, s)| finding(job, s))
        .collect()
}

/// The stalls, the longest first: "1.50 s from 2.03 s (300 I/Os due), …".
pub(crate) fn stalls_text(stalls: &[Stall]) -> String {
    let each: Vec<String> = stalls
        .iter()
        .map(|stall| {
            format!(
                "{} from {:.2} s ({} I/Os due)",
                duration_text(stall.len_ns),
                stall.at_ns as f64 / 1e9,
                stall.missed_ios
            )
        })
        .collect();
    each.join(", ")
}

/// More than 1 % of the I/Os were still due when the last one went out: the
/// job never caught up, the rate asked was not reached.
fn never_caught_up(s: &ScheduleReport) -> bool {
    s.end_behind_ios * 100 > s.ios
}

fn late_pct(s: &ScheduleReport) -> f64 {
    s.late_ios as f64 * 100.0 / s.ios as f64
}

fn finding(job: &JobReport, s: &ScheduleReport) -> Finding {
    let due = s.ios + s.end_behind_ios;
    let mut title = if never_caught_up(s) {
        format!(
            "job '{}' missed its rate: {} of the {due} I/Os due went out ({:.0}%), {} of them late",
            job.name,
            s.ios,
            s.ios as f64 * 100.0 / due as f64,
            s.late_ios
        )
    } else {
        format!(
            "job '{}' fell behind its rate: {} of {} I/Os ({:.0}%) went out late",
            job.name,
            s.late_ios,
            s.ios,
            late_pct(s)
        )
    };
    let mut evidence = Vec::new();
    // a job that never caught up is told by its totals; its stalls come as evidence
    if let Some(longest) = s.stalls.first().filter(|_| !never_caught_up(s)) {
        title += &format!(
            "; nothing could be issued for {} from {:.2} s",
            duration_text(longest.len_ns),
            longest.at_ns as f64 / 1e9
        );
    }
    if !s.stalls.is_empty() {
        evidence.push(format!(
            "stalls, the longest first (seconds after the measured time began): {}",
            stalls_text(&s.stalls)
        ));
    }
    evidence.push(format!(
        "most behind: {} ({} I/Os due and not issued) at {:.2} s; at the end {}",
        duration_text(s.max_behind_ns),
        s.max_behind_ios,
        s.max_behind_at_ns as f64 / 1e9,
        match s.end_behind_ios {
            0 => "caught up (as fio does, the I/Os missed went out as fast as they could after it)"
                .to_string(),
            n => format!("{n} I/Os behind: the rate asked was not reached"),
        }
    ));
    evidence.extend(hidden_latencies(job, s));
    Finding {
        code: "missed-schedule".into(),
        severity: Severity::Warning,
        title,
        evidence,
        advice: "the usual percentiles time each I/O from when it went out, so the I/Os that should have gone out during a stall are missing from them (coordinated omission): for a paced job quote the latencies counted from the due times, and look at what held the device or filesystem then (a freeze or snapshot, writeback, another tenant)".into(),
        at_ns: None,
    }
}

/// For each direction with corrected latencies: the usual p99 against the one
/// counted from the due times.
fn hidden_latencies(job: &JobReport, s: &ScheduleReport) -> Vec<String> {
    let p99 = |summary: &LatSummary| {
        summary
            .at_percentile(99.0)
            .map_or_else(|| "?".to_string(), duration_text)
    };
    DIRECTIONS
        .iter()
        .zip(&s.corrected)
        .zip(&job.dirs)
        .filter_map(|((name, corrected), dir)| {
            let corrected = corrected.as_ref()?;
            let usual = dir.latency_with_percentiles()?;
            Some(format!(
                "{name}: p99 {} counted from when each I/O went out, {} counted from when it was due (max {})",
                p99(usual),
                p99(corrected),
                duration_text(corrected.max_ns)
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DirReport, RunReport, Stall};
    use crate::testutil::p99_summary;

    const MS: u64 = 1_000_000;

    fn paced_job(late_ios: u64, stalls: Vec<Stall>) -> RunReport {
        // the total latency without percentiles, as by default
        let mut write = DirReport {
            clat: Some(p99_summary(823_000)),
            lat: Some(LatSummary::default()),
            ..Default::default()
        };
        write.total_ios = 1_800;
        let job = JobReport {
            name: "paced".into(),
            dirs: [DirReport::default(), write, DirReport::default()],
            schedule: Some(ScheduleReport {
                ios: 1_800,
                late_ios,
                max_behind_ns: 1_500 * MS,
                max_behind_at_ns: 2_000 * MS,
                max_behind_ios: 300,
                end_behind_ios: 0,
                stalls,
                behind_per_second: vec![0, 0, 300],
                corrected: [None, Some(p99_summary(1_400 * MS)), None],
            }),
            ..Default::default()
        };
        RunReport {
            jobs: vec![job],
            ..crate::diagnose::fixture::run(0)
        }
    }

    #[test]
    fn a_stalled_paced_job_is_named_with_its_stalls_and_what_the_percentiles_leave_out() {
        let stall = |at_ms, len_ms| Stall {
            at_ns: at_ms * MS,
            len_ns: len_ms * MS,
            missed_ios: len_ms / 5,
        };
        let found = missed_schedule(&paced_job(
            590,
            vec![stall(2_000, 1_500), stall(5_000, 1_400)],
        ));
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.code, "missed-schedule");
        assert_eq!(
            f.title,
            "job 'paced' fell behind its rate: 590 of 1800 I/Os (33%) went out late; nothing could be issued for 1.50 s from 2.00 s"
        );
        assert_eq!(
            f.evidence[0],
            "stalls, the longest first (seconds after the measured time began): 1.50 s from 2.00 s (300 I/Os due), 1.40 s from 5.00 s (280 I/Os due)"
        );
        assert!(
            f.evidence[1].contains("at the end caught up"),
            "{:?}",
            f.evidence
        );
        assert_eq!(
            f.evidence[2],
            "write: p99 0.8 ms counted from when each I/O went out, 1.40 s counted from when it was due (max 1.40 s)"
        );
    }

    #[test]
    fn a_job_that_never_caught_up_is_told_by_the_ios_due() {
        let mut report = paced_job(1_700, Vec::new());
        report.jobs[0].schedule.as_mut().unwrap().end_behind_ios = 600;
        let found = missed_schedule(&report);
        assert_eq!(
            found[0].title,
            "job 'paced' missed its rate: 1800 of the 2400 I/Os due went out (75%), 1700 of them late"
        );
        assert!(
            found[0].evidence[0]
                .ends_with("at the end 600 I/Os behind: the rate asked was not reached"),
            "{:?}",
            found[0].evidence
        );
    }

    #[test]
    fn a_few_late_ios_and_unpaced_jobs_are_silent() {
        assert!(missed_schedule(&paced_job(20, Vec::new())).is_empty());
        let mut unpaced = paced_job(590, Vec::new());
        unpaced.jobs[0].schedule = None;
        assert!(missed_schedule(&unpaced).is_empty());
    }
}
