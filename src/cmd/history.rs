//! `iolens history` (list runs, `--trend METRIC`), `iolens show ID` and
//! `iolens report ID --html FILE`: what the history database holds.

use super::common::{print, skipping_damaged, write_html, CmdError, HistoryFlags};
use super::output;
use super::EXIT_OK;
use crate::cli::{Format, Formats};
use crate::model::metrics::Metric;
use crate::report::{self, Document};
use crate::series::repetitions;
use crate::stats::significance::{shift_from_baseline, Shift, TREND_WINDOW};
use crate::stats::summary::median;
use crate::store::{self, Filter};
use std::fmt::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

pub(super) struct HistoryQuery {
    pub filter: Filter,
    pub trend: Option<String>,
    /// `--with-interrupted`: the trend shows interrupted runs too, marked.
    pub with_interrupted: bool,
}

pub(super) fn history_command(
    history: &HistoryFlags,
    query: &HistoryQuery,
) -> Result<i32, CmdError> {
    let store = history
        .open()
        .map_err(|e| CmdError::run_failed(e.to_string()))?;
    let text = match &query.trend {
        Some(name) => {
            let Some(metric) = Metric::from_name(name) else {
                let names: Vec<_> = Metric::ALL.iter().map(|m| m.name()).collect();
                return Err(CmdError::usage(format!(
                    "--trend {name}: unknown metric (use one of {})",
                    names.join(", ")
                )));
            };
            store.metric_points(metric, &query.filter).map(|points| {
                let (shown, left_out): (Vec<_>, Vec<_>) = skipping_damaged(points)
                    .into_iter()
                    .partition(|p| query.with_interrupted || !p.interrupted);
                render_trend(metric, &shown) + &interrupted_left_out(&left_out)
            })
        }
        None => store
            .list(&query.filter)
            .map(|runs| render_list(&skipping_damaged(runs))),
    };
    print(&text.map_err(|e| CmdError::run_failed(e.to_string()))?)
}

/// A stored run in the formats asked for; in the normal text, a run of a
/// `--repeat` batch is followed by the batch's summary as `--repeat` printed it.
pub(super) fn show_command(
    history: &HistoryFlags,
    id: i64,
    formats: &Formats,
) -> Result<i32, CmdError> {
    let store = history
        .open()
        .map_err(|e| CmdError::run_failed(e.to_string()))?;
    let report = store
        .report(id)
        .map_err(|e| CmdError::run_failed(e.to_string()))?;
    let mut text = output::render(&report, &formats.0);
    if report.interrupted {
        let mark = format!(
            "run {id} was interrupted ({}): its results are partial",
            report.terminated.as_deref().unwrap_or("stopped early")
        );
        match formats.0 == [Format::Normal] {
            true => text = format!("{mark}\n\n{text}"),
            false => eprintln!("iolens: {mark}"),
        }
    }
    if formats.0 == [Format::Normal] {
        let batch = skipping_damaged(
            store
                .batch_of(id)
                .map_err(|e| CmdError::run_failed(e.to_string()))?,
        );
        if batch.len() > 1 {
            let _ = write!(
                text,
                "\nrun {id} is one of the {} repetitions of one --repeat run; over all of them:\n{}",
                batch.len(),
                report::render(&Document::Repeat(&repetitions::build(batch, 0)), Format::Normal)
                    .expect("a --repeat has a text form")
            );
        }
    }
    print(&text)
}

/// `iolens report ID --html FILE`: a stored run, or the whole `--repeat` batch it belongs to.
pub(super) fn report_command(
    history: &HistoryFlags,
    id: i64,
    html_path: &Path,
) -> Result<i32, CmdError> {
    let runs = history
        .open()
        .and_then(|s| Ok(skipping_damaged(s.batch_of(id)?)))
        .map_err(|e| CmdError::run_failed(e.to_string()))?;
    let page = match runs.len() {
        0 => {
            return Err(CmdError::run_failed(format!(
                "run {id} is not in the history"
            )))
        }
        1 => output::render_html(&runs[0]),
        _ => {
            let result = repetitions::build(runs, 0);
            report::render(&Document::Repeat(&result), Format::Html)
                .expect("a --repeat has an HTML page")
        }
    };
    write_html(html_path, &page)?;
    Ok(EXIT_OK)
}

fn render_list(runs: &[store::RunSummary]) -> String {
    if runs.is_empty() {
        return "no runs stored yet (every `iolens run` is saved unless --no-history)\n".into();
    }
    let mut out = format!(
        "{:>5} {:>5}  {:<19}  {:<11}  {:<16} {:<20} {:<8} {:<24} targets\n",
        "id", "batch", "started (UTC)", "ended", "host", "kernel", "version", "jobs"
    );
    for r in runs {
        let _ = writeln!(
            out,
            "{:>5} {:>5}  {:<19}  {:<11}  {:<16} {:<20} {:<8} {:<24} {}",
            r.id,
            r.batch,
            utc_time(r.started_unix_ms),
            if r.interrupted {
                "INTERRUPTED"
            } else {
                "complete"
            },
            fit(r.host.as_deref().unwrap_or("-"), 16),
            fit(r.kernel.as_deref().unwrap_or("-"), 20),
            fit(&r.tool_version, 8),
            fit(&r.jobs, 24),
            r.targets
        );
    }
    out
}

/// `text` cut to `width` characters, the last one an ellipsis when cut, so
/// the columns after it stay where the header puts them.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width - 1).collect();
    format!("{kept}…")
}

/// Each job's metric over time, one series per configuration (job options and
/// target: runs of another configuration are not like for like). A point more
/// than three robust standard deviations worse than the median of the runs of
/// its series before it (up to `TREND_WINDOW`) is a regression.
fn render_trend(metric: Metric, points: &[store::MetricPoint]) -> String {
    let mut jobs: Vec<&str> = points.iter().map(|p| p.job.as_str()).collect();
    jobs.sort_unstable();
    jobs.dedup();
    let mut out = String::new();
    for job in jobs {
        let of_job: Vec<&store::MetricPoint> = points.iter().filter(|p| p.job == job).collect();
        // In the order each configuration first ran.
        let mut configs: Vec<&str> = Vec::new();
        for config in of_job
            .iter()
            .filter_map(|p| p.config_fingerprint.as_deref())
        {
            if !configs.contains(&config) {
                configs.push(config);
            }
        }
        for config in &configs {
            let series: Vec<&store::MetricPoint> = of_job
                .iter()
                .copied()
                .filter(|p| p.config_fingerprint.as_deref() == Some(*config))
                .collect();
            let _ = writeln!(
                out,
                "{} of job '{job}' ({}){}:",
                metric.name(),
                metric.unit(),
                distinguishing_options(&of_job, series[0])
            );
            for (i, p) in series.iter().enumerate() {
                // Only whole runs judge and are judged.
                let whole_before: Vec<f64> = series[..i]
                    .iter()
                    .filter(|p| !p.interrupted)
                    .map(|p| p.value)
                    .collect();
                let baseline = &whole_before[whole_before.len().saturating_sub(TREND_WINDOW)..];
                let note = match p.interrupted {
                    true => "INTERRUPTED: partial results, not judged".to_string(),
                    false => trend_note(metric, baseline, p.value),
                };
                let _ = writeln!(
                    out,
                    "  {:>5}  {:<19}  {:>14.1}  {note}",
                    p.run_id,
                    utc_time(p.started_unix_ms),
                    p.value
                );
            }
        }
        let unreadable = of_job.len()
            - of_job
                .iter()
                .filter(|p| p.config_fingerprint.is_some())
                .count();
        if unreadable > 0 {
            let _ = writeln!(
                out,
                "  ({unreadable} stored run(s) of job '{job}' left out: their configuration is unknown)"
            );
        }
    }
    if out.is_empty() {
        out.push_str("no stored runs have this metric\n");
    }
    out
}

/// The line saying how many interrupted runs' points `--trend` left out; empty when none.
fn interrupted_left_out(left_out: &[store::MetricPoint]) -> String {
    let mut runs: Vec<i64> = left_out.iter().map(|p| p.run_id).collect();
    runs.dedup();
    match runs.len() {
        0 => String::new(),
        n => format!(
            "({n} interrupted run(s) left out: their results are partial; --with-interrupted shows them, marked)\n"
        ),
    }
}

/// ", bs=64k rw=read": the options in which `point`'s configuration differs from
/// other configurations of its job; empty when the job has one configuration.
fn distinguishing_options(of_job: &[&store::MetricPoint], point: &store::MetricPoint) -> String {
    let differs = |key: &String| {
        of_job
            .iter()
            .any(|other| other.config.get(key) != point.config.get(key))
    };
    let mut keys: Vec<&String> = of_job
        .iter()
        .flat_map(|p| p.config.keys())
        .filter(|k| differs(k))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    if keys.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = keys
        .iter()
        .map(|k| {
            format!(
                "{k}={}",
                point.config.get(*k).map_or("(not set)", String::as_str)
            )
        })
        .collect();
    format!(", {}", shown.join(" "))
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
        "{} ({change:+.1} % vs the median of the {} runs of this configuration before)",
        if worse { "REGRESSION" } else { "improvement" },
        baseline.len()
    )
}

/// `--since`: a date (2024-05-31) or an age (90m, 12h, 7d, 2w).
pub(super) fn parse_since(value: &str, now_unix_ms: u64) -> Result<u64, SinceError> {
    let bad = || SinceError(value.into());
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

/// A `--since` value that is neither a date nor an age (the value as given).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("--since {0}: give a date (2024-05-31) or an age (90m, 12h, 7d, 2w)")]
pub(super) struct SinceError(String);

pub(super) fn now_unix_ms() -> u64 {
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
pub(super) fn utc_time(unix_ms: u64) -> String {
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
        assert_eq!(
            parse_since("3x", now).map_err(|e| e.to_string()),
            Err("--since 3x: give a date (2024-05-31) or an age (90m, 12h, 7d, 2w)".into())
        );
    }

    #[test]
    fn long_job_lists_are_cut_and_the_columns_stay_aligned() {
        let run = store::RunSummary {
            id: 7,
            batch: 7,
            started_unix_ms: 0,
            host: Some("h".into()),
            kernel: Some("6.18.0".into()),
            tool_version: "0.1.0".into(),
            jobs: "SEQ1M-Q8T1-read,SEQ1M-Q8T1-write,SEQ1M-Q1T1-read,RND4K-Q32T1-read".into(),
            targets: "/d/.iolens-quick-aaaa (temporary, removed)".into(),
            interrupted: true,
        };
        let text = render_list(&[run]);
        let lines: Vec<&str> = text.lines().collect();
        let column = |line: &str, what: &str| line.find(what).map(|i| line[..i].chars().count());
        assert_eq!(
            column(lines[0], "targets"),
            column(lines[1], "/d/"),
            "expected the targets column where the header puts it:\n{text}"
        );
        assert!(
            lines[1].contains("SEQ1M-Q8T1-read,SEQ1M-Q…")
                && lines[1].contains("(temporary, removed)"),
            "expected the job list cut with an ellipsis and the temporary target marked:\n{text}"
        );
        assert_eq!(
            column(lines[0], "ended"),
            column(lines[1], "INTERRUPTED"),
            "expected the interrupted run marked under 'ended':\n{text}"
        );
    }

    #[test]
    fn a_slower_latency_beyond_the_noise_is_a_regression() {
        let base = [100.0, 101.0, 99.0, 100.0, 100.0];
        assert!(trend_note(Metric::ClatMean, &base, 150.0).starts_with("REGRESSION (+50.0 %"));
        assert!(trend_note(Metric::Iops, &base, 150.0).starts_with("improvement"));
        assert_eq!(trend_note(Metric::Iops, &base, 100.5), "");
    }

    fn point(run_id: i64, job: &str, bs: &str, value: f64) -> store::MetricPoint {
        let config: std::collections::BTreeMap<String, String> =
            [("bs".to_string(), bs.to_string())].into();
        store::MetricPoint {
            run_id,
            started_unix_ms: 0,
            job: job.into(),
            value,
            config_fingerprint: Some(crate::series::fingerprint::fingerprint(&config)),
            config,
            interrupted: false,
        }
    }

    #[test]
    fn the_trend_groups_points_by_job() {
        let points: Vec<_> = (1..=5)
            .map(|i| point(i, "a", "4k", 100.0))
            .chain([point(6, "a", "4k", 50.0), point(7, "b", "4k", 7.0)])
            .collect();
        let text = render_trend(Metric::Iops, &points);
        assert!(
            text.contains("iops of job 'a' (IO/s):") && text.contains("iops of job 'b' (IO/s):"),
            "expected one series per job, got:\n{text}"
        );
        assert_eq!(
            text.matches("REGRESSION").count(),
            1,
            "expected run 6 to be a regression, got:\n{text}"
        );
    }

    #[test]
    fn runs_of_another_configuration_are_another_series() {
        // bs=4k at about 10k IOPS, then bs=64k at far fewer: not a regression of
        // one series but two series, each named by its bs.
        let points: Vec<_> = (1..=6)
            .map(|i| point(i, "x", "4k", 10_000.0 + i as f64))
            .chain((7..=8).map(|i| point(i, "x", "64k", 760.0)))
            .chain([point(9, "x", "4k", 10_003.0)])
            .collect();
        let text = render_trend(Metric::Iops, &points);
        assert!(
            !text.contains("REGRESSION") && !text.contains("improvement"),
            "expected no verdict across configurations, got:\n{text}"
        );
        let series: Vec<&str> = text.lines().filter(|l| l.starts_with("iops")).collect();
        assert_eq!(
            series,
            [
                "iops of job 'x' (IO/s), bs=4k:",
                "iops of job 'x' (IO/s), bs=64k:"
            ],
            "expected a series per configuration, named by what differs, got:\n{text}"
        );
    }

    #[test]
    fn a_point_needs_five_earlier_runs_of_its_configuration() {
        let four = [100.0, 101.0, 99.0, 100.0];
        assert_eq!(
            trend_note(Metric::Iops, &four, 10.0),
            "",
            "expected no verdict against four earlier runs"
        );
        let five = [100.0, 101.0, 99.0, 100.0, 100.0];
        assert!(
            trend_note(Metric::Iops, &five, 10.0).starts_with("REGRESSION"),
            "expected a verdict against five earlier runs"
        );
    }

    #[test]
    fn an_interrupted_point_is_marked_neither_judged_nor_a_baseline() {
        let cut_short = |run_id, value| store::MetricPoint {
            interrupted: true,
            ..point(run_id, "a", "4k", value)
        };
        let points: Vec<_> = (1..=5)
            .map(|i| point(i, "a", "4k", 100.0))
            .chain([cut_short(6, 10.0), cut_short(7, 10.0)])
            .chain((8..=10).map(|i| cut_short(i, 10.0)))
            .chain([point(11, "a", "4k", 100.0)])
            .collect();
        let text = render_trend(Metric::Iops, &points);
        assert_eq!(
            text.matches("INTERRUPTED: partial results, not judged")
                .count(),
            5,
            "expected runs 6 to 10 marked, got:\n{text}"
        );
        assert!(
            !text.contains("REGRESSION") && !text.contains("improvement"),
            "expected neither the partial runs judged nor judging run 11, got:\n{text}"
        );
        assert_eq!(
            interrupted_left_out(&points[5..7]),
            "(2 interrupted run(s) left out: their results are partial; --with-interrupted shows them, marked)\n"
        );
        assert_eq!(interrupted_left_out(&[]), "");
    }
}
