//! Unit tests of `report::html`.

use super::*;
use crate::model::{
    CacheGuard, JobInterval, JobSeries, LatSummary, MetricSummary, Severity, Summary,
};
use crate::testutil::run_report;

fn observed_report() -> RunReport {
    let mut r = run_report(&[("seq <read>", 1000.0)]);
    r.jobs[0].dirs[0].clat = Some(LatSummary {
        mean_ns: 2_000.0,
        percentiles: vec![(50.0, 1_800), (99.0, 9_000)],
        bins: [(1_800, 900), (9_000, 100)].into_iter().collect(),
        ..LatSummary::default()
    });
    r.observations.interval_ns = 100_000_000;
    r.observations.t_ns = vec![100_000_000, 200_000_000];
    r.observations.jobs = vec![JobSeries {
        name: "seq <read>".into(),
        workers: 1,
        intervals: vec![
            JobInterval {
                ios: [100, 0],
                bytes: [409_600, 0],
                lat_mean_ns: 2_000,
                lat_max_ns: 9_000,
                lat_p99_ns: 8_500,
                ..JobInterval::default()
            };
            2
        ],
        ..JobSeries::default()
    }];
    r.observations.cache_guards = vec![CacheGuard {
        job: "seq <read>".into(),
        ..CacheGuard::default()
    }];
    r.findings = vec![Finding {
        code: "c".into(),
        severity: Severity::Warning,
        title: "cache & co".into(),
        evidence: vec!["e1".into()],
        advice: "a".into(),
        at_ns: Some(200_000_000),
    }];
    r
}

#[test]
fn chart_rates_divide_by_each_interval_s_real_length() {
    let mut r = observed_report();
    let obs = &mut r.observations;
    // A tick 200 ms late, then the stop sample 50 µs after it.
    obs.t_ns = vec![100_000_000, 400_000_000, 400_050_000];
    let io = |ios: u64| JobInterval {
        ios: [ios, 0],
        bytes: [ios << 20, 0],
        ..JobInterval::default()
    };
    let intervals = vec![io(100), io(300), io(8)];
    let lengths: Vec<Option<f64>> = (0..3).map(|i| obs.rate_secs(i)).collect();
    let [(_, iops), (_, bw), _] =
        job_charts("c", Axis::linear("t"), &seconds(obs), &intervals, &lengths);
    let points = |series: &[Series]| series[0].points.clone();
    assert_eq!(
        points(&iops),
        vec![(0.1, 1000.0), (0.4, 1000.0)],
        "expected 1000 IOPS over 100 ms and over the late 300 ms, and no point for the 50 µs sliver"
    );
    let mib_s = 1000.0 * 1024.0 * 1024.0;
    assert_eq!(
        points(&bw),
        vec![(0.1, mib_s), (0.4, mib_s)],
        "expected 1000 MiB/s in both full intervals"
    );
}

#[test]
fn a_run_page_has_every_chart_and_finding_and_no_scripts() {
    let mut report = observed_report();
    report.observations.jobs[0].cpu_wait = Some(crate::model::CpuWait {
        run_delay_ns: 52_000_000,
        worker_ns: 200_000_000,
        pct: 26.0,
    });
    let html = render_run(&report);
    assert!(
        html.contains("CPU wait 26.0% (0.05 s waiting for a CPU in 0.20 s of worker time)"),
        "expected the job's CPU wait as the other reports print it"
    );
    for id in [
        "chart-job-0-iops",
        "chart-job-0-bw",
        "chart-job-0-lat",
        "chart-job-0-hist",
        "chart-job-0-pct",
        "chart-obs-cache",
        "chart-obs-dirty",
        "chart-obs-ios",
        "chart-obs-cpu",
        "finding-0",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id} missing");
    }
    assert!(html.contains("cache &amp; co") && html.contains("seq &lt;read&gt;"));
    // The finding at t=0.2 s: a link to the job's chart, and a marker on each time chart with data.
    assert!(html.contains(r##"<a href="#chart-job-0-iops">See t=0.2 s in the charts</a>"##));
    assert_eq!(
        html.matches(r##"<a href="#finding-0"><line"##).count(),
        4,
        "iops, bw, lat, job I/Os: the time charts with data"
    );
    assert!(!html.contains("<script") && !html.contains("http:") && !html.contains("https:"));
    assert_eq!(
        html.matches("<polyline").count(),
        7,
        "iops, bw, lat ×3, pct, jobs"
    );
}

#[test]
fn a_compare_page_of_a_report_with_fewer_sample_times_than_intervals_renders() {
    let mut a = observed_report();
    a.observations.t_ns.truncate(1);
    let side = |run: RunReport| Side {
        label: "a".into(),
        runs: vec![run],
    };
    let html = render_compare(&side(a), &side(observed_report()), "", None);
    assert!(
        html.contains("id=\"chart-b-job-0-iops\""),
        "expected B's charts still drawn"
    );
}

#[test]
fn a_compare_page_has_the_changes_and_both_runs_on_shared_axes() {
    let a = observed_report();
    let mut b = observed_report();
    b.jobs[0].dirs[0].iops = 1500.0;
    b.findings.clear();
    for iv in &mut b.observations.jobs[0].intervals {
        iv.ios[0] = 400;
    }
    let side = |label: &str, run: RunReport| Side {
        label: label.into(),
        runs: vec![run],
    };
    let html = render_compare(
        &side("run <1>", a),
        &side("this run", b),
        "comparability: same iolens version",
        None,
    );
    for id in [
        "changes",
        "chart-a-job-0-iops",
        "chart-b-job-0-iops",
        "chart-a-job-0-bw",
        "chart-b-job-0-lat",
        "findings-a",
        "findings-b",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id} missing");
    }
    assert!(html.contains("run &lt;1&gt;") && html.contains("comparability: same"));
    let iops_row = html
        .split("<tr>")
        .find(|row| row.contains("<td>iops</td>"))
        .unwrap();
    assert!(iops_row.contains("+50.0 %") && iops_row.contains("no verdict (single run)"));
    assert!(html.contains("no verdict is possible"));
    // Same axes: B's 4000 IOPS sets the top tick of A's chart too.
    assert!(element(&html, "chart-a-job-0-iops", "figure").contains(">4k<"));
    let a_finding = element(&html, "finding-a-0", "div");
    for part in [
        "warning: cache &amp; co",
        "<code>c</code>",
        "<li>e1</li>",
        "What to do: a",
    ] {
        assert!(
            a_finding.contains(part),
            "expected A's finding to show {part} as the run page does, saw {a_finding}"
        );
    }
    assert!(html.contains("Findings of B</h2><p class=\"note\">No findings:"));
    assert!(!html.contains("<script") && !html.contains("http:") && !html.contains("https:"));
}

#[test]
fn a_compare_side_of_several_runs_names_the_runs_of_each_finding() {
    let clean = run_report(&[("seq <read>", 1000.0)]);
    let a = Side {
        label: "batch".into(),
        runs: vec![clean.clone(), observed_report()],
    };
    let b = Side {
        label: "one".into(),
        runs: vec![observed_report()],
    };
    let html = render_compare(&a, &b, "", None);
    let a_part = html.split("id=\"findings-a\"").nth(1).unwrap();
    let a_part = a_part.split("id=\"findings-b\"").next().unwrap();
    assert!(
        a_part.contains("<p class=\"occurrence\">c in repetitions #2</p>"),
        "expected A's finding named with the run that had it, saw {a_part}"
    );
    let b_part = html.split("id=\"findings-b\"").nth(1).unwrap();
    assert!(
        !b_part.contains("class=\"occurrence\"") && b_part.contains("id=\"finding-b-0\""),
        "expected B's one run's finding without a line of runs, saw {b_part}"
    );
}

/// The element with id `id` in `html` up to its first `end` tag ("figure", "div").
fn element<'a>(html: &'a str, id: &str, end: &str) -> &'a str {
    html.split(&format!("id=\"{id}\""))
        .nth(1)
        .and_then(|rest| rest.split(&format!("</{end}>")).next())
        .unwrap_or_else(|| panic!("expected an element with id {id} in {html}"))
}

/// The x range (`data-x-from`, `data-x-to`) of chart `id` in `html`.
fn x_range(html: &str, id: &str) -> (f64, f64) {
    let chart = element(html, id, "figure");
    let attr = |name: &str| -> f64 {
        let value = chart
            .split(&format!("{name}=\""))
            .nth(1)
            .unwrap_or_else(|| panic!("expected {name} in chart {id}, saw {chart}"));
        value.split('"').next().unwrap().parse().unwrap()
    };
    (attr("data-x-from"), attr("data-x-to"))
}

#[test]
fn each_job_is_charted_over_its_own_window_and_the_system_over_the_run() {
    let mut r = run_report(&[("a", 1000.0), ("b", 1000.0)]);
    let obs = &mut r.observations;
    obs.interval_ns = 100_000_000;
    obs.t_ns = (1..=10).map(|i| i * 100_000_000).collect();
    // Stonewalled: a does I/O in intervals 0..=2 (up to 0.3 s), b in 5..=8 (0.5 s to 0.9 s).
    let series = |name: &str, busy: std::ops::RangeInclusive<usize>| JobSeries {
        name: name.into(),
        workers: 1,
        intervals: (0..10)
            .map(|i| JobInterval {
                ios: [if busy.contains(&i) { 100 } else { 0 }, 0],
                lat_mean_ns: if busy.contains(&i) { 2_000 } else { 0 },
                ..JobInterval::default()
            })
            .collect(),
        ..JobSeries::default()
    };
    obs.jobs = vec![series("a", 0..=2), series("b", 5..=8)];
    let html = render_run(&r);
    let close = |seen: (f64, f64), expected: (f64, f64)| {
        (seen.0 - expected.0).abs() < 1e-9 && (seen.1 - expected.1).abs() < 1e-9
    };
    for kind in ["iops", "bw", "lat"] {
        let seen = x_range(&html, &format!("chart-job-1-{kind}"));
        assert!(
            close(seen, (0.48, 0.92)),
            "expected b's {kind} chart over its window 0.5..0.9 s with 5 % margins (0.48..0.92), saw {seen:?}"
        );
    }
    let seen = x_range(&html, "chart-job-0-iops");
    assert!(
        close(seen, (0.0, 0.315)),
        "expected a's chart from the run's start to 0.3 s plus 5 % (0..0.315), saw {seen:?}"
    );
    let seen = x_range(&html, "chart-obs-ios");
    assert!(
        close(seen, (0.0, 1.0)),
        "expected the system's chart over the whole run, from a's start (0..1.0 s), saw {seen:?}"
    );
    let system = element(&html, "chart-obs-ios", "figure");
    assert_eq!(
        system.matches("class=\"band\"").count(),
        2,
        "expected a band per job on the system's chart, saw {system}"
    );
    assert!(
        system.contains("fill=\"#888\">a</text>") && system.contains("fill=\"#888\">b</text>"),
        "expected the bands labelled a and b, saw {system}"
    );
}

#[test]
fn a_quick_page_opens_with_its_results_side_by_side() {
    let mut r = run_report(&[
        ("SEQ1M-Q8T1-read", 1000.0),
        ("SEQ1M-Q8T1-write", 500.0),
        ("RND4K-Q1T1-read", 2000.0),
        ("RND4K-Q1T1-write", 300.0),
    ]);
    for job in r.jobs.iter_mut().filter(|j| j.name.ends_with("write")) {
        job.dirs.swap(0, 1);
    }
    r.command_line = vec!["quick".into(), "/data".into()];
    let html = render_run(&r);
    let overview = html.find("id=\"overview\"").unwrap_or(usize::MAX);
    assert!(
        overview < html.find("id=\"findings\"").unwrap(),
        "expected the side-by-side results before the findings, saw {html}"
    );
    for (chart, direction, test, value) in [
        ("iops", "read", "SEQ1M Q8T1", "1000"),
        ("iops", "write", "SEQ1M Q8T1", "500"),
        ("iops", "read", "RND4K Q1T1", "2000"),
        ("iops", "write", "RND4K Q1T1", "300"),
        ("mbs", "read", "SEQ1M Q8T1", "4.096"),
        ("mbs", "write", "RND4K Q1T1", "1.2288"),
    ] {
        let figure = element(&html, &format!("chart-overview-{chart}"), "figure");
        let bar = format!("class=\"bar {direction}\" data-group=\"{test}\" data-value=\"{value}\"");
        assert!(
            figure.contains(&bar),
            "expected {bar} in the {chart} overview, saw {figure}"
        );
    }
    assert_eq!(
        html.matches("class=\"bar read\"").count() + html.matches("class=\"bar write\"").count(),
        8,
        "expected 2 tests × read/write in MB/s and in IOPS"
    );
    r.command_line = vec!["run".into(), "job.fio".into()];
    assert!(
        !render_run(&r).contains("id=\"overview\""),
        "expected no side-by-side results on the page of `iolens run`"
    );
}

#[test]
fn the_percentile_curve_has_a_nines_axis() {
    let html = render_run(&observed_report());
    let chart = element(&html, "chart-job-0-pct", "figure");
    for tick in [">p50<", ">p90<", ">p99<"] {
        assert!(chart.contains(tick), "expected the tick {tick} in {chart}");
    }
}

#[test]
fn a_repeat_page_names_the_repetitions_of_each_finding_shows_it_and_marks_a_partial_one() {
    let reps: Vec<RunReport> = [100.0, 60.0, 100.0]
        .iter()
        .map(|&v| {
            let mut r = run_report(&[("j", v)]);
            if v < 80.0 {
                r.findings = observed_report().findings;
            }
            r
        })
        .collect();
    let mut reps = reps;
    reps[2].interrupted = true;
    let html = render_repeat(&crate::series::repetitions::build(reps, 0));
    let partial = "<p class=\"note\">repetition #3: interrupted, its results are partial</p>";
    assert!(
        html.contains(partial),
        "expected the partial repetition marked with {partial}, saw {html}"
    );
    assert!(
        html.contains("<p class=\"occurrence\">c in repetitions #2</p>"),
        "expected the text summary's line naming repetition #2, saw {html}"
    );
    let block = element(&html, "finding-0", "div");
    for part in ["warning: cache &amp; co", "<li>e1</li>", "What to do: a"] {
        assert!(block.contains(part), "expected {part} in {block}");
    }
}

#[test]
fn a_repeat_page_marks_outliers() {
    let summary = MetricSummary {
        job: "j".into(),
        metric: "iops".into(),
        unit: "IO/s".into(),
        values: vec![100.0, 101.0, 60.0],
        stats: Summary {
            median: 100.0,
            min: 60.0,
            max: 101.0,
            mean: 87.0,
            stddev: 20.0,
            cv_pct: 23.0,
            median_ci95: (60.0, 101.0),
            outliers: vec![2],
        },
    };
    let result = RepeatReport {
        schema_version: 1,
        tool_version: "x".into(),
        warmup: 0,
        repetitions: vec![run_report(&[("j", 100.0)])],
        summary: vec![summary],
        findings: Vec::new(),
    };
    let html = render_repeat(&result);
    assert!(html.contains("id=\"chart-repeat-0\""));
    assert_eq!(html.matches("dot outlier").count(), 1);
    assert!(html.contains("No findings"));
}

/// Markup planted where a user's text (names, paths, options, hostnames) reaches the pages.
const HOSTILE: [&str; 3] = [
    "<img src=x onerror=document.title=\"pwned\">",
    "<svg onload=alert(1)>",
    "\"'><script>alert(2)</script>",
];

/// A run whose every user-controlled string carries the hostile markup.
fn hostile_report() -> RunReport {
    let [img, svg, script] = HOSTILE;
    let mut r = observed_report();
    r.command_line = vec!["quick".into(), format!("--name={img}"), script.into()];
    r.jobs[0].name = format!("{img}-read");
    r.jobs[0].error = Some(format!("open {svg}/f: {script}"));
    r.observations.jobs[0].name = r.jobs[0].name.clone();
    r.observations.notes = vec![format!("note {svg}")];
    r.observations.targets = vec![crate::model::TargetObservation {
        path: format!("/d/{svg}/{script}"),
        ..Default::default()
    }];
    let e = &mut r.environment;
    e.kernel_release = img.into();
    e.cpu_model = script.into();
    e.cpufreq_governors = vec![svg.into()];
    e.devices = vec![crate::model::DeviceInfo {
        name: svg.into(),
        model: Some(img.into()),
        ..Default::default()
    }];
    e.filesystems = vec![crate::model::FilesystemInfo {
        target: format!("/d/{img}/{svg}/{script}"),
        fs_type: img.into(),
        mount_point: svg.into(),
        source: script.into(),
        mount_options: img.into(),
    }];
    e.vm_dirty = vec![(svg.into(), script.into())];
    let f = &mut r.findings[0];
    f.code = svg.into();
    f.title = img.into();
    f.evidence = vec![script.into()];
    f.advice = format!("see {img}");
    let mut cluster = crate::testutil::four_ranks_ending_at([1000, 1010, 1005, 4000])
        .cluster
        .unwrap();
    for rank in &mut cluster.ranks {
        rank.hostname = svg.into();
        rank.report.disks = vec![crate::model::DiskUtil {
            name: img.into(),
            ..Default::default()
        }];
    }
    r.cluster = Some(cluster);
    r
}

/// No raw payload, no element or handler it would inject, and a CSP forbidding scripts.
fn assert_inert(page: &str, html: &str) {
    for raw in HOSTILE {
        assert!(!html.contains(raw), "{page}: raw {raw:?} in {html}");
    }
    for injected in [
        "<img",
        "<script",
        "<svg onload",
        " onerror=\"",
        " onload=\"",
    ] {
        assert!(
            !html.contains(injected),
            "{page}: {injected} in the page (only escaped forms may appear): {html}"
        );
    }
    assert!(
        html.contains("&lt;img src=x onerror=document.title=&quot;pwned&quot;&gt;"),
        "{page}: expected the hostile text shown escaped"
    );
    assert!(
        html.contains(&format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
        )) && CSP.contains("script-src 'none'"),
        "{page}: expected the CSP in the head"
    );
}

#[test]
fn hostile_text_in_every_field_is_escaped_on_every_page() {
    let run = hostile_report();
    assert_inert("run page", &render_run(&run));
    let repeat = crate::series::repetitions::build(vec![run.clone(), run.clone()], 0);
    assert_inert("repeat page", &render_repeat(&repeat));
    let side = |label: &str| Side {
        label: label.into(),
        runs: vec![run.clone()],
    };
    let compare = render_compare(
        &side(HOSTILE[0]),
        &side(HOSTILE[1]),
        HOSTILE[2],
        Some(&repeat),
    );
    assert_inert("comparison page", &compare);
}
