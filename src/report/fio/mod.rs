//! fio's formats: `json` (json and json+), `terse`, and `agg_bw_log` (the
//! `--bandwidth-log` files); fio's normal layout is `report::text`. This file holds
//! the conventions they share with the normal text: fio's bucket labels, its
//! display floors for small percentages, its ctime-style timestamp and scaled
//! byte counts, and how a job's bandwidth relates to its group.

pub(crate) mod agg_bw_log;
pub(crate) mod json;
pub(crate) mod terse;

use crate::model::{DirReport, JobReport, RunReport};

/// Labels of the queue-depth buckets (`DepthReport::level_pct`).
pub(crate) const DEPTH_LEVEL_LABELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// Labels of the submit/complete batch buckets.
pub(crate) const DEPTH_BATCH_LABELS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
/// Labels of `LatBuckets::ns_pct` and `us_pct`.
pub(crate) const LAT_LABELS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// Labels of `LatBuckets::ms_pct`.
pub(crate) const LAT_MS_LABELS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// fio never shows a nonzero depth share as 0.0%: it shows at least 0.1.
pub(crate) fn depth_pct(pct: f64) -> f64 {
    floor_nonzero(pct, 0.1)
}

/// Same for the latency distribution, at 0.01.
pub(crate) fn lat_pct(pct: f64) -> f64 {
    floor_nonzero(pct, 0.01)
}

fn floor_nonzero(pct: f64, floor: f64) -> f64 {
    if pct > 0.0 && pct < floor {
        floor
    } else {
        pct
    }
}

/// A direction's runtime as fio shows it: whole milliseconds, rounded up (fio
/// keeps it so; a direction that took any time took at least 1 ms).
pub(crate) fn runtime_ms(ns: u64) -> u64 {
    ns.div_ceil(1_000_000)
}

/// Aggregate [read, write, trim] bandwidth of the job's reporting group, bytes/s.
pub(crate) fn group_bw(report: &RunReport, groupid: u32) -> [f64; 3] {
    report
        .groups
        .iter()
        .find(|g| g.id == groupid)
        .map_or([0.0; 3], |g| g.dirs.each_ref().map(|d| d.bw_bytes_per_sec))
}

/// The direction blocks a job's report shows, in fio's order, each with its group's
/// aggregate bandwidth: read, write and trim unless `unified_rw_reporting=mixed`
/// replaces them, then the merged `mixed` block when the option is on.
pub(crate) fn shown_dirs<'a>(
    report: &RunReport,
    job: &'a JobReport,
) -> Vec<(&'static str, &'a DirReport, f64)> {
    let group = report.groups.iter().find(|g| g.id == job.groupid);
    let [read_bw, write_bw, trim_bw] = group_bw(report, job.groupid);
    let mut shown = Vec::with_capacity(4);
    if !job.mixed.as_ref().is_some_and(|m| m.only) {
        shown.push(("read", &job.dirs[0], read_bw));
        shown.push(("write", &job.dirs[1], write_bw));
        shown.push(("trim", &job.dirs[2], trim_bw));
    }
    if let Some(mixed) = &job.mixed {
        let mixed_bw = group
            .and_then(|g| g.mixed.as_ref())
            .map_or(0.0, |m| m.report.bw_bytes_per_sec);
        shown.push(("mixed", &mixed.report, mixed_bw));
    }
    shown
}

/// A job's mean sampled bandwidth as a percentage of its group's aggregate
/// (fio's `per=` and `bw_agg`), capped at 100 like fio; 100 without a group figure.
pub(crate) fn share_of_group(mean_bw: f64, group_bw: f64) -> f64 {
    if group_bw > 0.0 {
        (mean_bw * 100.0 / group_bw).min(100.0)
    } else {
        100.0
    }
}

/// fio's unit prefixes: powers of 1024 (IEC) and of 1000 (SI).
pub(crate) const BINARY_PREFIXES: [&str; 6] = ["", "Ki", "Mi", "Gi", "Ti", "Pi"];
pub(crate) const DECIMAL_PREFIXES: [&str; 6] = ["", "k", "M", "G", "T", "P"];

/// fio's num2str: at most `max_chars` digits and point, scaled by powers of `base`
/// with the matching prefix; decimals fill the space left (29146 → "29.1k" in 4).
pub(crate) fn scaled(value: f64, base: f64, prefixes: &[&str; 6], max_chars: usize) -> String {
    let limit = 10f64.powi(max_chars as i32);
    let mut value = value.max(0.0);
    let mut power = 0;
    while value.round() >= limit && power + 1 < prefixes.len() {
        value /= base;
        power += 1;
    }
    let decimals = if power == 0 {
        0
    } else {
        let int_digits = (value.trunc() as u64).to_string().len();
        max_chars.saturating_sub(int_digits + 1)
    };
    format!("{value:.decimals$}{}", prefixes[power])
}

/// A byte count as fio shows block sizes: `scaled` with a `B`, by 1024 with IEC
/// prefixes (`binary`) or by 1000 with SI ones. 4096 → "4096B", 65536 → "64.0KiB",
/// 1 MiB → "1024KiB"; 16384 in decimal → "16.4kB".
pub(crate) fn num2str_bytes(value: u64, digits: usize, binary: bool) -> String {
    let (base, prefixes) = match binary {
        true => (1024.0, &BINARY_PREFIXES),
        false => (1000.0, &DECIMAL_PREFIXES),
    };
    format!("{}B", scaled(value as f64, base, prefixes, digits))
}

/// A Unix time as ctime shows it ("Sat Nov 21 23:50:09 2026"), in UTC.
pub(crate) fn ctime_utc(unix_secs: u64) -> String {
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix_secs / 86_400;
    let secs_of_day = unix_secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        WEEKDAYS[(days % 7) as usize],
        MONTHS[month as usize - 1],
        day,
        secs_of_day / 3600,
        secs_of_day / 60 % 60,
        secs_of_day % 60,
        year
    )
}

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01, by the
/// well-known era arithmetic on a calendar that starts in March (so the leap
/// day falls at the end of the year).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_round_up_to_whole_milliseconds() {
        let shown = [0, 1, 999_999, 1_000_000, 1_000_001].map(runtime_ms);
        assert_eq!(
            shown,
            [0, 1, 1, 1, 2],
            "fio rounds a runtime up to whole ms"
        );
    }

    #[test]
    fn unified_rw_reporting_chooses_the_blocks_shown() {
        use crate::model::{GroupReport, Mixed};
        let mut report = crate::testutil::run_report(&[("j", 1000.0)]);
        let names = |r: &RunReport| -> Vec<&str> {
            shown_dirs(r, &r.jobs[0]).iter().map(|s| s.0).collect()
        };
        assert_eq!(names(&report), ["read", "write", "trim"]);
        report.jobs[0].mixed = Some(Mixed {
            only: false,
            report: DirReport::default(),
        });
        report.groups = vec![GroupReport {
            mixed: Some(Mixed {
                only: false,
                report: crate::model::GroupDirSummary {
                    bw_bytes_per_sec: 5.0,
                    ..Default::default()
                },
            }),
            ..Default::default()
        }];
        assert_eq!(names(&report), ["read", "write", "trim", "mixed"]);
        assert_eq!(shown_dirs(&report, &report.jobs[0])[3].2, 5.0);
        report.jobs[0].mixed.as_mut().unwrap().only = true;
        assert_eq!(names(&report), ["mixed"]);
    }

    #[test]
    fn byte_counts_scale_like_fios_num2str() {
        let binary = |n| num2str_bytes(n, 4, true);
        assert_eq!(binary(512), "512B");
        assert_eq!(binary(4096), "4096B");
        assert_eq!(binary(65_536), "64.0KiB");
        assert_eq!(binary(131_072), "128KiB");
        assert_eq!(binary(1 << 20), "1024KiB");
        assert_eq!(binary(4 << 20), "4096KiB");
        assert_eq!(binary(16 << 20), "16.0MiB");
        assert_eq!(num2str_bytes(16_384, 4, false), "16.4kB");
        assert_eq!(num2str_bytes(8192, 4, false), "8192B");
        assert_eq!(num2str_bytes(1_049_600, 4, true), "1025KiB");
        assert_eq!(
            num2str_bytes(65_535, 4, true),
            "64.0KiB",
            "0.999 rounds into the whole part"
        );
        assert_eq!(num2str_bytes(65_536, 6, true), "65536B");
    }

    #[test]
    fn ctime_matches_known_dates() {
        assert_eq!(ctime_utc(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
        assert_eq!(ctime_utc(1_795_305_010), "Sat Nov 21 23:50:10 2026");
        assert_eq!(ctime_utc(1_688_423_433), "Mon Jul  3 22:30:33 2023");
    }

    #[test]
    fn small_shares_are_floored_but_zero_stays_zero() {
        assert_eq!(depth_pct(0.0), 0.0);
        assert_eq!(depth_pct(0.004), 0.1);
        assert_eq!(depth_pct(42.0), 42.0);
        assert_eq!(lat_pct(0.004), 0.01);
    }
}
