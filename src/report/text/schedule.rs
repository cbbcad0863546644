//! iolens' lines for a rate-limited job, after fio's `issued rwts`: how the
//! schedule was kept (late I/Os, how far behind, the stalls), then per direction
//! the latency counted from each I/O's due time in fio's latency layout (`due
//! lat`): the view corrected for coordinated omission, beside fio's own.

use std::fmt::{self, Write};

use crate::diagnose::duration_text;
use crate::diagnose::missed_schedule::stalls_text;
use crate::model::{ScheduleReport, DIRECTIONS};

/// The seconds with I/Os behind shown in the text; the rest are counted.
const SECONDS_SHOWN: usize = 12;

pub(super) fn write(out: &mut String, s: &ScheduleReport) -> fmt::Result {
    writeln!(out, "     schedule  : {}", summary(s))?;
    if let Some(seconds) = behind_seconds(s) {
        writeln!(
            out,
            "     behind    : most I/Os due and not issued per second: {seconds}"
        )?;
    }
    for (name, corrected) in DIRECTIONS.iter().zip(&s.corrected) {
        if let Some(corrected) = corrected {
            writeln!(
                out,
                "  {name}: latency from each I/O's due time (corrected for coordinated omission):"
            )?;
            super::write_latency(out, "due lat", corrected)?;
        }
    }
    Ok(())
}

/// "ios=1800, late=590 (32.78%), most behind=1.51 s (302 ios) at 2.03 s,
/// behind at end=0 ios, stalls=1.50 s from 2.03 s (300 I/Os due)".
pub(crate) fn summary(s: &ScheduleReport) -> String {
    let mut text = format!(
        "ios={}, late={} ({:.2}%), most behind={} ({} ios) at {:.2} s, behind at end={} ios",
        s.ios,
        s.late_ios,
        s.late_ios as f64 * 100.0 / s.ios.max(1) as f64,
        duration_text(s.max_behind_ns),
        s.max_behind_ios,
        s.max_behind_at_ns as f64 / 1e9,
        s.end_behind_ios
    );
    if !s.stalls.is_empty() {
        text += ", stalls=";
        text += &stalls_text(&s.stalls);
    }
    text
}

/// The seconds in which I/Os were behind: "1 s=200, 2 s=306, 4 s=150", the
/// first `SECONDS_SHOWN` of them, then how many more; None when none was.
fn behind_seconds(s: &ScheduleReport) -> Option<String> {
    let behind: Vec<String> = s
        .behind_per_second
        .iter()
        .enumerate()
        .filter(|&(_, &ios)| ios > 0)
        .map(|(second, ios)| format!("{second} s={ios}"))
        .collect();
    let (shown, more) = behind.split_at(behind.len().min(SECONDS_SHOWN));
    match (shown, more.len()) {
        ([], _) => None,
        (_, 0) => Some(shown.join(", ")),
        (_, more) => Some(format!("{}, … ({more} more)", shown.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LatSummary, Stall};

    const MS: u64 = 1_000_000;

    #[test]
    fn a_stalled_schedule_reads_as_lines_and_a_due_latency_block() {
        let s = ScheduleReport {
            ios: 1_800,
            late_ios: 590,
            max_behind_ns: 1_510 * MS,
            max_behind_at_ns: 2_030 * MS,
            max_behind_ios: 302,
            end_behind_ios: 0,
            stalls: vec![Stall {
                at_ns: 2_030 * MS,
                len_ns: 1_500 * MS,
                missed_ios: 300,
            }],
            behind_per_second: vec![0, 0, 200, 302],
            corrected: [
                None,
                Some(LatSummary {
                    min_ns: 300_000,
                    max_ns: 1_510 * MS,
                    mean_ns: 120e6,
                    stddev_ns: 300e6,
                    samples: 1_800,
                    percentiles: vec![(50.0, 400_000), (99.0, 1_400 * MS)],
                    ..Default::default()
                }),
                None,
            ],
        };
        let mut out = String::new();
        write(&mut out, &s).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "     schedule  : ios=1800, late=590 (32.78%), most behind=1.51 s (302 ios) at 2.03 s, behind at end=0 ios, stalls=1.50 s from 2.03 s (300 I/Os due)"
        );
        assert_eq!(
            lines[1],
            "     behind    : most I/Os due and not issued per second: 2 s=200, 3 s=302"
        );
        assert_eq!(
            lines[2],
            "  write: latency from each I/O's due time (corrected for coordinated omission):"
        );
        assert!(
            lines[3].starts_with(" due lat (usec): min=300, max=1510.0k"),
            "{out}"
        );
        assert_eq!(lines[4], " due lat percentiles (usec):");
        assert_eq!(lines.len(), 6, "{out}");
    }

    #[test]
    fn a_long_series_shows_its_first_seconds_behind_and_counts_the_rest() {
        let s = ScheduleReport {
            behind_per_second: (0..20).collect(),
            ..Default::default()
        };
        let shown = behind_seconds(&s).unwrap();
        assert!(shown.starts_with("1 s=1, 2 s=2, "), "{shown}");
        assert!(shown.ends_with(", 12 s=12, … (7 more)"), "{shown}");
        assert_eq!(behind_seconds(&ScheduleReport::default()), None);
    }
}
