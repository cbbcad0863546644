//! `iolens history` (list runs, `--trend METRIC`), `iolens show ID`, and the
//! recording of every run into the history database.

use super::output::{self, Format};
use super::{EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE};
use crate::report::metrics::Metric;
use crate::report::model::RunReport;
use crate::report::{html, repeat as report_repeat};
use crate::stats::compare::{shift_from_baseline, Shift};
use crate::stats::repeat::median;
use crate::store::{self, Filter, Store};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Earlier points a trend point is judged against (the most recent ones).
const TREND_WINDOW: usize = 10;

/// Where runs are remembered: `--db PATH` / `IOLENS_DB` / the data directory; `--no-history` skips it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryFlags {
    pub db: Option<PathBuf>,
    pub enabled: bool,
}

impl Default for HistoryFlags {
    fn default() -> Self {
        HistoryFlags {
            db: None,
            enabled: true,
        }
    }
}

impl HistoryFlags {
    pub fn open(&self) -> Result<Store, String> {
        let path = store::resolve_path(self.db.as_deref()).map_err(|e| e.to_string())?;
        Store::open(&path).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Store `reports` as one batch unless `--no-history`. The run already
    /// succeeded, so a history problem is a warning, not a failure.
    pub fn record(&self, reports: &[RunReport]) {
        if !self.enabled || reports.is_empty() {
            return;
        }
        let stored = self.open().and_then(|mut store| {
            let first = store.insert(&reports[0], None).map_err(|e| e.to_string())?;
            for r in &reports[1..] {
                store.insert(r, Some(first)).map_err(|e| e.to_string())?;
            }
            Ok(first)
        });
        match stored {
            Ok(id) => {
                eprintln!("iolens: saved in the history as run {id} (see `iolens show {id}`)")
            }
            Err(e) => eprintln!("iolens: warning: not saved in the history: {e}"),
        }
    }
}

pub struct HistoryQuery {
    pub filter: Filter,
    pub trend: Option<String>,
}

pub fn history_command(history: &HistoryFlags, query: &HistoryQuery) -> i32 {
    let store = match history.open() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let text = match &query.trend {
        Some(name) => {
            let Some(metric) = Metric::from_name(name) else {
                let names: Vec<_> = Metric::ALL.iter().map(|m| m.name()).collect();
                eprintln!(
                    "iolens: --trend {name}: unknown metric (use one of {})",
                    names.join(", ")
                );
                return EXIT_USAGE;
            };
            store
                .metric_points(metric, &query.filter)
                .map(|points| render_trend(metric, &points))
        }
        None => store.list(&query.filter).map(|runs| render_list(&runs)),
    };
    match text {
        Ok(t) => finish(output::write_stdout(&t)),
        Err(e) => fail(&e.to_string()),
    }
}

pub fn show_command(history: &HistoryFlags, id: i64, formats: &str) -> i32 {
    let formats: Vec<Format> = match output::parse_formats(formats) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("iolens: {e}");
            return EXIT_USAGE;
        }
    };
    match history
        .open()
        .and_then(|s| s.report(id).map_err(|e| e.to_string()))
    {
        Ok(report) => finish(output::write_stdout(&output::render(&report, &formats))),
        Err(e) => fail(&e),
    }
}

/// `iolens report ID --html FILE`: a stored run, or the whole `--repeat` batch it belongs to.
pub fn report_command(history: &HistoryFlags, id: i64, html_path: &Path) -> i32 {
    let runs = match history
        .open()
        .and_then(|s| s.batch_of(id).map_err(|e| e.to_string()))
    {
        Ok(runs) => runs,
        Err(e) => return fail(&e),
    };
    let page = match runs.len() {
        0 => return fail(&format!("run {id} is not in the history")),
        1 => html::render_run(&runs[0]),
        _ => html::render_repeat(&report_repeat::build(runs, 0)),
    };
    match super::quick::write_html(html_path, &page) {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}

fn fail(message: &str) -> i32 {
    eprintln!("iolens: {message}");
    EXIT_RUN_FAILED
}

fn finish(written: std::io::Result<()>) -> i32 {
    match written {
        Ok(()) => EXIT_OK,
        Err(e) => fail(&format!("stdout: {e}")),
    }
}

fn render_list(runs: &[store::RunSummary]) -> String {
    if runs.is_empty() {
        return "no runs stored yet (every `iolens run` is saved unless --no-history)\n".into();
    }
    let mut out = format!(
        "{:>5} {:>5}  {:<19}  {:<16} {:<20} {:<8} {:<24} targets\n",
        "id", "batch", "started (UTC)", "host", "kernel", "version", "jobs"
    );
    for r in runs {
        let _ = writeln!(
            out,
            "{:>5} {:>5}  {:<19}  {:<16} {:<20} {:<8} {:<24} {}",
            r.id,
            r.batch,
            utc_time(r.started_unix_ms),
            r.host.as_deref().unwrap_or("-"),
            r.kernel.as_deref().unwrap_or("-"),
            r.tool_version,
            r.jobs,
            r.targets
        );
    }
    out
}

/// Each job's metric over time; a point more than three robust standard
/// deviations worse than the median of the runs before it is a regression.
fn render_trend(metric: Metric, points: &[store::MetricPoint]) -> String {
    let mut jobs: Vec<&str> = points.iter().map(|p| p.job.as_str()).collect();
    jobs.sort_unstable();
    jobs.dedup();
    let mut out = String::new();
    for job in jobs {
        let values: Vec<&store::MetricPoint> = points.iter().filter(|p| p.job == job).collect();
        let _ = writeln!(out, "{} of job '{job}' ({}):", metric.name(), metric.unit());
        for (i, p) in values.iter().enumerate() {
            let baseline: Vec<f64> = values[i.saturating_sub(TREND_WINDOW)..i]
                .iter()
                .map(|p| p.value)
                .collect();
            let note = trend_note(metric, &baseline, p.value);
            let _ = writeln!(
                out,
                "  {:>5}  {:<19}  {:>14.1}  {note}",
                p.run_id,
                utc_time(p.started_unix_ms),
                p.value
            );
        }
    }
    if out.is_empty() {
        out.push_str("no stored runs have this metric\n");
    }
    out
}

fn trend_note(metric: Metric, baseline: &[f64], value: f64) -> String {
    let shift = shift_from_baseline(baseline, value);
    let worse = match shift {
        Shift::Above => !metric.higher_is_better(),
        Shift::Below => metric.higher_is_better(),
        Shift::Within | Shift::NoBaseline => return String::new(),
    };
    let center = median(baseline);
    let change = if center == 0.0 {
        0.0
    } else {
        100.0 * (value - center) / center
    };
    format!(
        "{} ({change:+.1} % vs the median of the {} runs before)",
        if worse { "REGRESSION" } else { "improvement" },
        baseline.len()
    )
}

/// `--since`: a date (2024-05-31) or an age (90m, 12h, 7d, 2w).
pub fn parse_since(value: &str, now_unix_ms: u64) -> Result<u64, String> {
    let bad = || format!("--since {value}: give a date (2024-05-31) or an age (90m, 12h, 7d, 2w)");
    if let Some((y, md)) = value.split_once('-') {
        let (m, d) = md.split_once('-').ok_or_else(bad)?;
        let (y, m, d) = (
            y.parse().map_err(|_| bad())?,
            m.parse().map_err(|_| bad())?,
            d.parse().map_err(|_| bad())?,
        );
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return Err(bad());
        }
        let days = days_from_civil(y, m, d);
        return u64::try_from(days * 86_400_000).map_err(|_| bad());
    }
    let split = value.len().checked_sub(1).ok_or_else(bad)?;
    let (count, unit) = value.split_at(split);
    let count: u64 = count.parse().map_err(|_| bad())?;
    let unit_ms = match unit {
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return Err(bad()),
    };
    Ok(now_unix_ms.saturating_sub(count * unit_ms))
}

pub fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// "YYYY-MM-DD HH:MM:SS" in UTC (the inverse of `days_from_civil`).
pub fn utc_time(unix_ms: u64) -> String {
    let secs = (unix_ms / 1000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_convert_both_ways() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00");
        assert_eq!(utc_time(951_782_400_000 + 3_661_000), "2000-02-29 01:01:01");
        assert_eq!(parse_since("2000-02-29", 0), Ok(951_782_400_000));
    }

    #[test]
    fn ages_count_back_from_now() {
        let now = 10 * 86_400_000;
        assert_eq!(parse_since("2d", now), Ok(8 * 86_400_000));
        assert_eq!(parse_since("90m", now), Ok(now - 90 * 60_000));
        assert!(parse_since("3x", now).is_err());
        assert!(parse_since("", now).is_err());
        assert!(parse_since("2024-13-01", now).is_err());
    }

    #[test]
    fn a_slower_latency_beyond_the_noise_is_a_regression() {
        let base = [100.0, 101.0, 99.0, 100.0];
        assert!(trend_note(Metric::ClatMean, &base, 150.0).starts_with("REGRESSION (+50.0 %"));
        assert!(trend_note(Metric::Iops, &base, 150.0).starts_with("improvement"));
        assert_eq!(trend_note(Metric::Iops, &base, 100.5), "");
    }

    #[test]
    fn the_trend_groups_points_by_job() {
        let point = |run_id, job: &str, value| store::MetricPoint {
            run_id,
            started_unix_ms: 0,
            job: job.into(),
            value,
        };
        let points: Vec<_> = (1..=4)
            .map(|i| point(i, "a", 100.0))
            .chain([point(5, "a", 50.0), point(6, "b", 7.0)])
            .collect();
        let text = render_trend(Metric::Iops, &points);
        assert!(
            text.contains("iops of job 'a'") && text.contains("iops of job 'b'"),
            "{text}"
        );
        assert_eq!(text.matches("REGRESSION").count(), 1, "{text}");
    }
}
