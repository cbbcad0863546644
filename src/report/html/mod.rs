//! The self-contained HTML report: inline CSS and SVG, no scripts, no network.
//! Per job its I/O over time and latency distribution, the system observations on
//! the same time axis, and the findings (a rate-limited job also its schedule,
//! `schedule`); for `--repeat`, every repetition's values.
//! Its charts are `svg`'s, the ranks' section of a run on several ranks `cluster`'s.

mod cluster;
pub(crate) mod escape;
mod schedule;
pub(crate) mod svg;

use crate::model::{
    DirReport, Finding, JobInterval, JobReport, Observations, RepeatReport, RunReport,
};
use crate::report::text::findings;
use crate::report::text::quick::{main_direction, p99_ns};
use crate::report::text::repeat_table::{occurrence_line, partial_runs};
use crate::series::metric_changes::{metric_changes, verdicts_possible, Side, NO_VERDICT};
use crate::series::repetitions;
use crate::units::format_value;
use escape::escape;
use std::fmt::Write;
use svg::{Axis, BarGroup, Frame, Marker, Series, Unit};

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1200px;margin:1em auto;\
padding:0 1em;color:#222}h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:1.6em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;\
text-align:right}td:first-child,th:first-child{text-align:left}figure{margin:.8em 0}\
figcaption{font-weight:600}svg{width:100%;height:auto}.finding{border-left:4px solid #0072b2;\
padding:.3em .8em;margin:.6em 0}.finding.warning{border-color:#d55e00}.note{color:#555}\
table.kv td{text-align:left}pre{white-space:pre-wrap}tr.straggler td{background:#fbe4d5}#ranks td:nth-child(2){text-align:left}
@media print{h2{page-break-before:auto}figure{page-break-inside:avoid}}";

/// The report of one run; a run of the `quick` suite (also one read from the
/// history) opens with its results side by side.
pub(in crate::report) fn render_run(report: &RunReport) -> String {
    let mut body = String::new();
    header(&mut body, report);
    if report.command_line.first().is_some_and(|c| c == "quick") {
        overview(&mut body, report);
    }
    findings(&mut body, &report.findings, Some(&report.observations));
    summary_table(&mut body, report);
    if let Some(cluster) = &report.cluster {
        cluster::section(&mut body, cluster);
    }
    environment(&mut body, report);
    let moments = finding_markers(&report.findings);
    for (i, job) in report.jobs.iter().enumerate() {
        job_section(&mut body, i, job, &report.observations, &moments);
    }
    let mut markers = job_bands(&report.observations);
    markers.extend(moments);
    observations(&mut body, &report.observations, &markers);
    page("iolens report", &body)
}

/// The results side by side as CrystalDiskMark shows them: per test (SEQ1M Q8T1, …)
/// its read and its write bar, in MB/s and in IOPS.
fn overview(out: &mut String, report: &RunReport) {
    let mut tests: Vec<(String, [Option<&DirReport>; 2])> = Vec::new();
    for job in &report.jobs {
        let (test, direction) = match job.name.strip_suffix("-write") {
            Some(test) => (test, 1),
            None => (job.name.strip_suffix("-read").unwrap_or(&job.name), 0),
        };
        let label = test.replace('-', " ");
        let index = match tests.iter().position(|(l, _)| *l == label) {
            Some(i) => i,
            None => {
                tests.push((label, [None, None]));
                tests.len() - 1
            }
        };
        tests[index].1[direction] = Some(main_direction(job));
    }
    let groups = |value: fn(&DirReport) -> f64| -> Vec<BarGroup> {
        tests
            .iter()
            .map(|(label, dirs)| BarGroup {
                label: label.clone(),
                values: dirs.iter().map(|d| d.map(value)).collect(),
                mark: None,
            })
            .collect()
    };
    out.push_str("<h2 id=\"overview\">Results side by side</h2>");
    let frame = |kind: &str, title: &str, unit: &str| Frame {
        id: format!("chart-overview-{kind}"),
        title: title.into(),
        x: Axis::linear("test"),
        y: Axis::linear(unit),
    };
    out.push_str(&svg::grouped_bars(
        &frame("mbs", "Bandwidth per test (MB/s, decimal)", "MB/s"),
        &["read", "write"],
        &groups(|d| d.bw_bytes_per_sec / 1e6),
        |v| format!("{v:.1}"),
    ));
    out.push_str(&svg::grouped_bars(
        &frame("iops", "IOPS per test", "IOPS"),
        &["read", "write"],
        &groups(|d| d.iops),
        |v| format!("{v:.0}"),
    ));
}

/// The repetitions of `--repeat`: per job and metric each repetition's value, outliers marked.
pub(in crate::report) fn render_repeat(result: &RepeatReport) -> String {
    let mut body = format!(
        "<h1>iolens: {} repetitions</h1><p>after {} unmeasured warm-up run(s); iolens {}</p>",
        result.repetitions.len(),
        result.warmup,
        escape(&result.tool_version)
    );
    for line in partial_runs(result) {
        let _ = write!(body, "<p class=\"note\">{}</p>", escape(&line));
    }
    body.push_str("<h2 id=\"findings\">Findings</h2>");
    findings_of_runs(&mut body, "finding", result);
    repetition_charts(&mut body, result);
    if let Some(first) = result.repetitions.first() {
        environment(&mut body, first);
    }
    page("iolens repeat report", &body)
}

/// Per job and metric each repetition's value, outliers marked.
fn repetition_charts(body: &mut String, result: &RepeatReport) {
    body.push_str("<h2 id=\"repetitions\">Repetitions</h2><p class=\"note\">One dot per repetition in run order; larger orange dots are outliers (modified z-score).</p>");
    for (i, m) in result.summary.iter().enumerate() {
        let frame = Frame {
            id: format!("chart-repeat-{i}"),
            title: format!(
                "{} {}: median {}, CV {:.1} %",
                m.job,
                m.metric,
                format_value(m.stats.median, &m.unit),
                m.stats.cv_pct
            ),
            x: Axis::count("repetition"),
            y: metric_axis(&m.metric, &m.unit),
        };
        let dots: Vec<(f64, f64)> = m
            .values
            .iter()
            .enumerate()
            .map(|(r, &v)| ((r + 1) as f64, v))
            .collect();
        body.push_str(&svg::dot_plot(&frame, &dots, &m.stats.outliers));
    }
}

/// The y axis of a metric in `unit` (a `Metric::unit`): latencies and times in
/// ns, µs, ms or s and bandwidths in KiB/s, MiB/s, … as their size asks, IOPS as fio says them.
fn metric_axis(metric: &str, unit: &str) -> Axis {
    match unit {
        "ns" => Axis::linear(metric).in_unit(Unit::Nanoseconds),
        "B/s" => Axis::linear(metric).in_unit(Unit::BytesPerSec),
        "IO/s" => Axis::linear("IOPS"),
        other => Axis::linear(other),
    }
}

/// The findings of several runs (the repetitions of `--repeat`, a side of a
/// comparison), as the text reports give them: per finding code the finding as
/// the first run that had it reported it, after the line naming the runs that
/// had it (when there are several runs), then the findings over the runs. Ids
/// are `{id_prefix}-N`.
fn findings_of_runs(out: &mut String, id_prefix: &str, runs: &RepeatReport) {
    let occurrences = repetitions::occurrences(runs);
    if occurrences.is_empty() && runs.findings.is_empty() {
        out.push_str(NO_FINDINGS);
    }
    let mut shown = 0;
    for o in &occurrences {
        if runs.repetitions.len() > 1 {
            let _ = write!(
                out,
                "<p class=\"occurrence\">{}</p>",
                escape(&occurrence_line(o))
            );
        }
        for f in findings::first_reported(runs, o) {
            finding(out, &format!("{id_prefix}-{shown}"), f, None);
            shown += 1;
        }
    }
    for f in &runs.findings {
        finding(out, &format!("{id_prefix}-{shown}"), f, None);
        shown += 1;
    }
}

/// Two results side by side (`iolens compare A B --html`): what differs in their
/// conditions, per job and metric the change with its verdict, and per job both
/// sides' I/O over time one above the other on the same axes; with `repeat` (B's
/// repetitions, `--repeat N --compare-with ID`) their charts too, after the per-job charts.
pub(in crate::report) fn render_compare(
    a: &Side,
    b: &Side,
    comparability: &str,
    repeat: Option<&RepeatReport>,
) -> String {
    let mut body = String::from("<h1>iolens comparison</h1>");
    for (key, side) in [("A", a), ("B", b)] {
        let first = &side.runs[0];
        let _ = write!(
            body,
            "<p><strong>{key}</strong>: {} · {} run{} · started {} UTC · iolens {}</p>",
            escape(&side.label),
            side.runs.len(),
            if side.runs.len() == 1 { "" } else { "s" },
            crate::report::fio::ctime_utc(first.started_unix_ms / 1000),
            escape(&first.tool_version)
        );
    }
    let _ = write!(
        body,
        "<h2 id=\"comparability\">Comparability</h2><pre>{}</pre>",
        escape(comparability.trim_end())
    );
    change_table(&mut body, a, b);
    let (first_a, first_b) = (&a.runs[0], &b.runs[0]);
    body.push_str("<p class=\"note\">Below, per job: A's and B's I/O over time on the same axes, from the start of the job (the first run of each side).</p>");
    let shared = first_a
        .jobs
        .iter()
        .filter(|j| first_b.jobs.iter().any(|k| k.name == j.name));
    for (i, job) in shared.enumerate() {
        let _ = write!(
            body,
            "<h2 id=\"job-{i}\">Job {}: A above B</h2>",
            escape(&job.name)
        );
        let [a_charts, b_charts] = [("a", first_a), ("b", first_b)].map(|(key, run)| {
            job_charts_from_its_start(&format!("chart-{key}-job-{i}"), run, &job.name).map(
                |(mut frame, series)| {
                    frame.title = format!("{}: {}", key.to_uppercase(), frame.title);
                    (frame, series)
                },
            )
        });
        for pair in a_charts.into_iter().zip(b_charts) {
            for svg in svg::line_charts_on_shared_axes(&[pair.0, pair.1]) {
                body.push_str(&svg);
            }
        }
    }
    if let Some(result) = repeat {
        repetition_charts(&mut body, result);
    }
    for (key, side) in [("a", a), ("b", b)] {
        side_findings(&mut body, key, side);
    }
    page("iolens comparison", &body)
}

/// Per job and metric: both means, the change, its confidence interval and the verdict.
fn change_table(out: &mut String, a: &Side, b: &Side) {
    out.push_str("<h2 id=\"changes\">Change from A to B</h2><table><tr><th>job</th><th>metric</th><th>A mean</th><th>B mean</th><th>change</th><th>95% CI</th><th>verdict</th></tr>");
    for c in metric_changes(a, b) {
        let ci = c.ci_text();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1} %</td><td>{}</td><td>{}</td></tr>",
            escape(&c.job),
            escape(c.metric.name()),
            format_value(c.mean_a, c.metric.unit()),
            format_value(c.mean_b, c.metric.unit()),
            c.change_pct,
            escape(&ci),
            escape(c.verdict)
        );
    }
    out.push_str("</table>");
    if !verdicts_possible(a, b) {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(NO_VERDICT));
    }
}

/// A job's charts with time counted from the sample before its first I/O, so
/// that the same job of two runs lines up.
fn job_charts_from_its_start(
    id_prefix: &str,
    run: &RunReport,
    job: &str,
) -> [(Frame, Vec<Series>); 3] {
    let obs = &run.observations;
    let intervals = obs
        .jobs
        .iter()
        .find(|s| s.name == job)
        .map_or(&[][..], |s| &s.intervals[..]);
    let window = match busy_intervals(intervals) {
        Some((first, last)) => first.saturating_sub(1)..last + 1,
        None => 0..0,
    };
    // A report read from a file may hold fewer sample times than intervals: no chart then.
    let t_ns = obs.t_ns.get(window.clone()).unwrap_or_default();
    let window = if t_ns.is_empty() { 0..0 } else { window };
    let t: Vec<f64> = t_ns
        .iter()
        .map(|&t| t.saturating_sub(t_ns[0]) as f64 / 1e9)
        .collect();
    let lengths: Vec<Option<f64>> = window.clone().map(|i| obs.rate_secs(i)).collect();
    job_charts(
        id_prefix,
        Axis::linear("time since the job started (s)"),
        &t,
        &intervals[window],
        &lengths,
    )
}

/// One side's findings as the repeat page shows them (as the run page does, for one run).
fn side_findings(out: &mut String, key: &str, side: &Side) {
    let _ = write!(
        out,
        "<h2 id=\"findings-{key}\">Findings of {}</h2>",
        key.to_uppercase()
    );
    findings_of_runs(
        out,
        &format!("finding-{key}"),
        &repetitions::build(side.runs.clone(), 0),
    );
}

/// The pages' Content-Security-Policy: their inline style and nothing else, no
/// script of any kind, no request anywhere (inline SVG needs no source).
pub(crate) const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'none'; base-uri 'none'; form-action 'none'";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\"><title>{}</title>\
         <meta name=\"viewport\" content=\"width=device-width\"><style>{STYLE}</style></head>\
         <body>{body}</body></html>\n",
        escape(title)
    )
}

fn header(out: &mut String, r: &RunReport) {
    let _ = write!(
        out,
        "<h1>iolens report</h1><p>iolens {} · started {} UTC · <code>iolens {}</code>{}</p>",
        escape(&r.tool_version),
        crate::report::fio::ctime_utc(r.started_unix_ms / 1000),
        escape(&r.command_line.join(" ")),
        if r.interrupted {
            " · <strong>interrupted: the results are partial</strong>"
        } else {
            ""
        }
    );
}

const NO_FINDINGS: &str =
    "<p class=\"note\">No findings: no rule saw a reason to doubt these numbers.</p>";

/// The findings, each linked to the charts of the run when there are any
/// (`observed`): to the moment it names, else to the system's charts.
fn findings(out: &mut String, findings: &[Finding], observed: Option<&Observations>) {
    out.push_str("<h2 id=\"findings\">Findings</h2>");
    if findings.is_empty() {
        out.push_str(NO_FINDINGS);
    }
    for (i, f) in findings.iter().enumerate() {
        finding(out, &format!("finding-{i}"), f, observed);
    }
}

/// One finding as every page shows it: severity, title and code, the evidence,
/// what to do, and the link to its moment.
fn finding(out: &mut String, id: &str, f: &Finding, observed: Option<&Observations>) {
    let severity = f.severity.name();
    let _ = write!(
        out,
        "<div class=\"finding {severity}\" id=\"{id}\"><strong>{severity}: {}</strong> <code>{}</code><ul>",
        escape(&f.title),
        escape(&f.code)
    );
    for e in &f.evidence {
        let _ = write!(out, "<li>{}</li>", escape(e));
    }
    let _ = write!(out, "</ul><p>What to do: {}</p>", escape(&f.advice));
    if let Some(obs) = observed {
        let link = match f.at_ns {
            Some(at_ns) => format!(
                "<a href=\"#{}\">See t={:.1} s in the charts</a> (marked <code>{}</code>)",
                chart_at(obs, at_ns),
                at_ns as f64 / 1e9,
                escape(&f.code)
            ),
            None => "<a href=\"#observations\">See the system during the run</a>".into(),
        };
        let _ = write!(out, "<p class=\"note\">{link}</p>");
    }
    out.push_str("</div>");
}

/// The chart to show for a moment: the IOPS chart of the job doing I/O then, else the system's.
fn chart_at(obs: &Observations, at_ns: u64) -> String {
    // Interval i covers t_ns[i-1]..t_ns[i]; the moment may also be the start of the next.
    let sample = obs.t_ns.partition_point(|&t| t < at_ns);
    let busy = |job: &&crate::model::JobSeries| {
        job.intervals
            .iter()
            .skip(sample)
            .take(2)
            .any(|iv| iv.ios[0] + iv.ios[1] > 0)
    };
    match obs.jobs.iter().position(|j| busy(&j)) {
        Some(job) => format!("chart-job-{job}-iops"),
        None => "observations".into(),
    }
}

fn summary_table(out: &mut String, r: &RunReport) {
    out.push_str("<h2 id=\"summary\">Results</h2><table><tr><th>job</th><th>MB/s</th><th>IOPS</th><th>lat mean</th><th>lat p99</th><th>CPU/IO</th><th>runtime</th></tr>");
    for (i, job) in r.jobs.iter().enumerate() {
        let dir = main_direction(job);
        let _ = write!(
            out,
            "<tr><td><a href=\"#job-{i}\">{}</a></td><td>{:.1}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1} s</td></tr>",
            escape(&job.name),
            dir.bw_bytes_per_sec / 1e6,
            dir.iops,
            dir.clat.as_ref().map_or("-".into(), |c| format_value(c.mean_ns, "ns")),
            p99_ns(dir).map_or("-".into(), |v| format_value(v as f64, "ns")),
            format_value(job.cpu.cpu_ns_per_io, "ns"),
            job.runtime_ns as f64 / 1e9
        );
    }
    out.push_str("</table>");
}

fn environment(out: &mut String, r: &RunReport) {
    let e = &r.environment;
    out.push_str("<h2 id=\"environment\">Environment</h2><table class=\"kv\">");
    let mut row = |k: &str, v: String| escape::row(out, k, &v);
    row("kernel", e.kernel_release.clone());
    row("CPU", format!("{} × {}", e.cpu_count, e.cpu_model));
    row("clocksource", e.clocksource.clone());
    row("cpufreq governors", e.cpufreq_governors.join(", "));
    for d in &e.devices {
        row(
            &format!("device {}", d.name),
            format!(
                "{} · scheduler {} · {} · write cache {}",
                d.model.as_deref().unwrap_or("-"),
                d.scheduler.as_deref().unwrap_or("-"),
                match d.rotational {
                    Some(true) => "rotational",
                    Some(false) => "non-rotational",
                    None => "-",
                },
                d.write_cache.as_deref().unwrap_or("-")
            ),
        );
    }
    for f in &e.filesystems {
        row(
            &format!("filesystem of {}", f.target),
            format!("{} on {} ({})", f.fs_type, f.mount_point, f.source),
        );
    }
    for (name, value) in &e.vm_dirty {
        row(name, value.clone());
    }
    out.push_str("</table>");
}

/// Seconds since the run started of each sample.
fn seconds(obs: &Observations) -> Vec<f64> {
    obs.t_ns.iter().map(|&t| t as f64 / 1e9).collect()
}

/// The first and the last interval in which the job completed I/Os.
fn busy_intervals(intervals: &[JobInterval]) -> Option<(usize, usize)> {
    let busy = |iv: &JobInterval| iv.ios[0] + iv.ios[1] > 0;
    Some((
        intervals.iter().position(busy)?,
        intervals.iter().rposition(busy)?,
    ))
}

/// A job's window in seconds since the run started: from the start of its first
/// interval with I/O to the end of its last (interval i ends at sample i).
fn job_window(obs: &Observations, intervals: &[JobInterval]) -> Option<(f64, f64)> {
    let (first, last) = busy_intervals(intervals)?;
    let from = first
        .checked_sub(1)
        .map_or(Some(0), |i| obs.t_ns.get(i).copied())?;
    let to = *obs.t_ns.get(last)?;
    Some((from as f64 / 1e9, to as f64 / 1e9))
}

/// The run-wide charts' marks of the jobs: a band over each job's window, labelled with its name.
fn job_bands(obs: &Observations) -> Vec<Marker> {
    obs.jobs
        .iter()
        .filter_map(|job| {
            let (from, to) = job_window(obs, &job.intervals)?;
            Some(Marker {
                x: from,
                until: Some(to),
                label: job.name.clone(),
                link: None,
            })
        })
        .collect()
}

/// The moments findings point at, linked to them.
fn finding_markers(findings: &[Finding]) -> Vec<Marker> {
    findings
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            Some(Marker {
                x: f.at_ns? as f64 / 1e9,
                until: None,
                label: f.code.clone(),
                link: Some(format!("#finding-{i}")),
            })
        })
        .collect()
}

/// The x axis of a job's time charts: run time over the job's window with a margin
/// of a twentieth of it each side (the whole run when the job did no I/O).
fn job_time_axis(window: Option<(f64, f64)>) -> Axis {
    let axis = Axis::linear(RUN_TIME);
    match window {
        Some((from, to)) => {
            let margin = (to - from) / 20.0;
            axis.spanning((from - margin).max(0.0), to + margin)
        }
        None => axis,
    }
}

const RUN_TIME: &str = "time since the run started (s)";

fn time_frame(id: String, title: &str, y: Axis) -> Frame {
    Frame {
        id,
        title: title.into(),
        x: Axis::linear(RUN_TIME),
        y,
    }
}

fn job_section(
    out: &mut String,
    index: usize,
    job: &JobReport,
    obs: &Observations,
    markers: &[Marker],
) {
    let _ = write!(out, "<h2 id=\"job-{index}\">Job {}</h2>", escape(&job.name));
    if let Some(e) = &job.error {
        let _ = write!(out, "<p><strong>error:</strong> {}</p>", escape(e));
    }
    let series = obs.jobs.get(index);
    let intervals = series.map_or(&[][..], |s| &s.intervals[..]);
    out.push_str("<p class=\"note\">Per sampling interval, from the workers' live counters.</p>");
    if let Some(wait) = series.and_then(|s| s.cpu_wait) {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(&wait.describe()));
    }
    let lengths: Vec<Option<f64>> = (0..intervals.len()).map(|i| obs.rate_secs(i)).collect();
    let charts = job_charts(
        &format!("chart-job-{index}"),
        job_time_axis(job_window(obs, intervals)),
        &seconds(obs),
        intervals,
        &lengths,
    );
    for (frame, series) in charts {
        out.push_str(&svg::line_chart(&frame, &series, markers));
    }
    let dir = main_direction(job);
    latency_distribution(out, index, dir);
    if let Some(s) = &job.schedule {
        schedule::section(out, index, job, s);
    }
}

/// A job's I/O over time: IOPS and bandwidth per direction, latency mean, p99 and
/// max; `t` is the x of each interval on axis `x`, and `lengths` the seconds
/// each interval really lasted (None: too short for a rate, no point).
/// Frame ids are `{id_prefix}-iops|bw|lat`.
fn job_charts(
    id_prefix: &str,
    x: Axis,
    t: &[f64],
    intervals: &[JobInterval],
    lengths: &[Option<f64>],
) -> [(Frame, Vec<Series>); 3] {
    let frame = |kind: &str, title: &str, y: Axis| Frame {
        id: format!("{id_prefix}-{kind}"),
        title: title.into(),
        x: x.clone(),
        y,
    };
    let per_dir = |value: &dyn Fn(usize, &JobInterval) -> f64| -> Vec<Series> {
        ["read", "write"]
            .iter()
            .enumerate()
            .filter(|&(d, _)| intervals.iter().any(|iv| iv.ios[d] > 0))
            .map(|(d, label)| Series {
                label: label.to_string(),
                points: t
                    .iter()
                    .zip(intervals)
                    .zip(lengths)
                    .filter_map(|((&x, iv), secs)| Some((x, value(d, iv) / (*secs)?)))
                    .collect(),
            })
            .collect()
    };
    let lat = |label: &str, f: fn(&JobInterval) -> u64| Series {
        label: label.into(),
        points: t
            .iter()
            .zip(intervals)
            .map(|(&x, iv)| (x, f(iv) as f64))
            .collect(),
    };
    [
        (
            frame("iops", "IOPS over time", Axis::linear("IOPS")),
            per_dir(&|d, iv| iv.ios[d] as f64),
        ),
        (
            frame(
                "bw",
                "Bandwidth over time",
                Axis::linear("bandwidth").in_unit(Unit::BytesPerSec),
            ),
            per_dir(&|d, iv| iv.bytes[d] as f64),
        ),
        (
            frame(
                "lat",
                "Latency over time (per interval; p99 from a coarse histogram, within 12.5 %)",
                Axis::log("latency").in_unit(Unit::Nanoseconds),
            ),
            vec![
                lat("mean", |iv| iv.lat_mean_ns),
                lat("p99", |iv| iv.lat_p99_ns),
                lat("max", |iv| iv.lat_max_ns),
            ],
        ),
    ]
}

/// Completion latency: a histogram over fio's buckets and the percentile curve.
fn latency_distribution(out: &mut String, index: usize, dir: &DirReport) {
    let empty = Default::default();
    let clat = dir.clat.as_ref().unwrap_or(&empty);
    // Each bin is keyed by its value; it spans up to the next bin's value.
    let bins: Vec<(f64, f64)> = clat
        .bins
        .iter()
        .map(|(&ns, &n)| (ns as f64, n as f64))
        .collect();
    let bars: Vec<(f64, f64, f64)> = bins
        .iter()
        .enumerate()
        .map(|(i, &(ns, n))| {
            let next = bins.get(i + 1).map_or(ns * 1.1, |b| b.0);
            (ns, next.min(ns * 1.5).max(ns * 1.02), n)
        })
        .collect();
    out.push_str(&svg::histogram(
        &Frame {
            id: format!("chart-job-{index}-hist"),
            title: "Completion latency distribution".into(),
            x: Axis::log("completion latency").in_unit(Unit::Nanoseconds),
            y: Axis::count("I/Os"),
        },
        &bars,
    ));
    let curve = Series {
        label: "clat".into(),
        points: clat
            .percentiles
            .iter()
            .map(|&(p, ns)| (p, ns as f64))
            .collect(),
    };
    out.push_str(&svg::line_chart(
        &Frame {
            id: format!("chart-job-{index}-pct"),
            title: "Completion latency percentiles (x in nines: the tail spread out)".into(),
            x: Axis::nines("percentile"),
            y: Axis::log("completion latency").in_unit(Unit::Nanoseconds),
        },
        &[curve],
        &[],
    ));
}

/// The sampler's series on the run's time axis: cache, dirty memory, device vs job I/Os, CPU.
fn observations(out: &mut String, obs: &Observations, markers: &[Marker]) {
    out.push_str("<h2 id=\"observations\">The system during the run</h2>");
    for note in &obs.notes {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    let t = seconds(obs);
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let page = obs.page_size_bytes;
    let cache: Vec<Series> = obs
        .targets
        .iter()
        .map(|target| Series {
            label: target.path.clone(),
            points: t
                .iter()
                .zip(&target.cache_series)
                .filter_map(|(&x, c)| c.map(|c| (x, mib(c.cached * page))))
                .collect(),
        })
        .collect();
    out.push_str(&svg::line_chart(
        &time_frame(
            "chart-obs-cache".into(),
            "Page cache of the targets",
            Axis::linear("cached (MiB)"),
        ),
        &cache,
        markers,
    ));
    let memory = |label: &str, f: fn(&crate::model::MemorySample) -> u64| Series {
        label: label.into(),
        points: t
            .iter()
            .zip(&obs.memory_series)
            .map(|(&x, m)| (x, mib(f(m))))
            .collect(),
    };
    out.push_str(&svg::line_chart(
        &time_frame(
            "chart-obs-dirty".into(),
            "Dirty and Writeback memory (system)",
            Axis::linear("MiB"),
        ),
        &[
            memory("Dirty", |m| m.dirty_bytes),
            memory("Writeback", |m| m.writeback_bytes),
        ],
        markers,
    ));
    out.push_str(&svg::line_chart(
        &time_frame(
            "chart-obs-ios".into(),
            "Device I/Os vs job I/Os per interval",
            Axis::count("I/Os per interval"),
        ),
        &io_series(obs, &t),
        markers,
    ));
    let busy: Vec<(f64, f64)> = obs
        .system_cpu_series
        .windows(2)
        .zip(t.iter().skip(1))
        .map(|(w, &x)| {
            let total = |c: &crate::model::SystemCpuSample| {
                c.user_ns
                    + c.nice_ns
                    + c.system_ns
                    + c.idle_ns
                    + c.iowait_ns
                    + c.irq_ns
                    + c.softirq_ns
                    + c.steal_ns
            };
            let all = total(&w[1]).saturating_sub(total(&w[0])).max(1) as f64;
            let idle = (w[1].idle_ns + w[1].iowait_ns).saturating_sub(w[0].idle_ns + w[0].iowait_ns)
                as f64;
            (x, 100.0 * (1.0 - idle / all))
        })
        .collect();
    out.push_str(&svg::line_chart(
        &time_frame(
            "chart-obs-cpu".into(),
            "CPU busy (all CPUs)",
            Axis::linear("busy (%)"),
        ),
        &[Series {
            label: "busy".into(),
            points: busy,
        }],
        markers,
    ));
}

/// Completed I/Os per interval of each device (diffed counters) and of all jobs together.
fn io_series(obs: &Observations, t: &[f64]) -> Vec<Series> {
    let mut series: Vec<Series> = obs
        .devices
        .iter()
        .map(|d| Series {
            label: format!("device {}", d.name),
            points: d
                .counter_series
                .windows(2)
                .zip(t.iter().skip(1))
                .map(|(w, &x)| {
                    let ios = |c: &crate::model::DeviceCounters| c.read_ios + c.write_ios;
                    (x, ios(&w[1]).saturating_sub(ios(&w[0])) as f64)
                })
                .collect(),
        })
        .collect();
    let job_ios = t
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let ios: u64 = obs
                .jobs
                .iter()
                .filter_map(|j| j.intervals.get(i))
                .map(|iv| iv.ios[0] + iv.ios[1])
                .sum();
            (x, ios as f64)
        })
        .collect();
    series.push(Series {
        label: "jobs".into(),
        points: job_ios,
    });
    series
}

#[cfg(test)]
mod tests;
