//! `--repeat`: per job and metric the statistics over the repetitions, and
//! the findings they support: `bimodal-results` (the runs fall into two
//! groups; the recorded conditions that separate them are named) and
//! `first-run-effect` (the first run is an outlier).

use crate::model::metrics::{values_of, Metric};
use crate::model::{Finding, MetricSummary, RepeatReport, RunReport, Severity, SCHEMA_VERSION};
use crate::stats::summary::{find_clusters, summarize, Clusters};
use crate::units::{format_value, run_numbers};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Fixed so that the same repetitions always give the same confidence interval.
const BOOTSTRAP_SEED: u64 = 0x5eed_0005;

/// Fewest repetitions for the findings: with fewer, an outlier or a cluster is a guess.
const MIN_RUNS_FOR_FINDINGS: usize = 4;

/// At most this many observations are named as separating two clusters.
const MAX_SEPARATORS: usize = 3;

pub(crate) fn build(repetitions: Vec<RunReport>, warmup: u32) -> RepeatReport {
    let summary = summarize_all(&measured(&repetitions));
    let mut findings = if repetitions.len() >= MIN_RUNS_FOR_FINDINGS {
        findings(&repetitions, &summary)
    } else {
        Vec::new()
    };
    findings.extend(repeated_stragglers(&repetitions));
    RepeatReport {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        warmup,
        repetitions,
        summary,
        findings,
    }
}

/// What the statistics are over: the runs' jobs, or for runs on several ranks
/// their "All clients" entry (every rank's workers merged).
fn measured(reps: &[RunReport]) -> Cow<'_, [RunReport]> {
    let all_clients: Option<Vec<RunReport>> = reps
        .iter()
        .map(|r| r.cluster.as_ref().map(|c| c.all_clients.clone()))
        .collect();
    match all_clients {
        Some(merged) if !merged.is_empty() => Cow::Owned(merged),
        _ => Cow::Borrowed(reps),
    }
}

/// Every metric of every job (named in the first repetition; one of several
/// entries of a name, as clones without group_reporting give) that all
/// repetitions measured.
fn summarize_all(reps: &[RunReport]) -> Vec<MetricSummary> {
    let Some(first) = reps.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for job in &first.jobs {
        if !names.contains(&job.name.as_str()) {
            names.push(&job.name);
        }
    }
    for job in names {
        for metric in Metric::ALL {
            let Some(values) = values_of(reps, job, metric) else {
                continue;
            };
            out.push(MetricSummary {
                job: job.to_string(),
                metric: metric.name().to_string(),
                unit: metric.unit().to_string(),
                stats: summarize(&values, BOOTSTRAP_SEED),
                values,
            });
        }
    }
    out
}

/// Per job, the first metric (in `Metric::ALL` order) whose repetitions fall into two clusters.
fn job_clusters(summary: &[MetricSummary]) -> Vec<(&MetricSummary, Clusters)> {
    let mut jobs: Vec<&str> = summary.iter().map(|s| s.job.as_str()).collect();
    jobs.dedup();
    jobs.into_iter()
        .filter_map(|job| {
            summary
                .iter()
                .filter(|s| s.job == job)
                .find_map(|s| find_clusters(&s.values).map(|c| (s, c)))
        })
        .collect()
}

/// A finding code of the repetitions' own reports: which repetitions (0-based)
/// had it, and which clusters ("slow" or "fast" runs of a job) it marks exactly.
#[derive(Debug, PartialEq)]
pub(crate) struct Occurrence {
    pub code: String,
    pub runs: Vec<usize>,
    /// (job, "slow" | "fast"): every run of that cluster had the finding and no other run did.
    pub splits: Vec<(String, &'static str)>,
}

/// Every finding code of the repetitions, in order of first appearance.
pub(crate) fn occurrences(r: &RepeatReport) -> Vec<Occurrence> {
    let clusters = if r.repetitions.len() >= MIN_RUNS_FOR_FINDINGS {
        job_clusters(&r.summary)
    } else {
        Vec::new()
    };
    by_code(&r.repetitions)
        .into_iter()
        .map(|(code, runs)| {
            let splits = clusters
                .iter()
                .filter_map(|(s, c)| marked_cluster(&runs, s, c).map(|l| (s.job.clone(), l)))
                .collect();
            Occurrence { code, runs, splits }
        })
        .collect()
}

/// Finding codes of the repetitions with the repetitions (0-based, ascending) that had each.
fn by_code(reps: &[RunReport]) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, rep) in reps.iter().enumerate() {
        for f in &rep.findings {
            match out.iter_mut().find(|(code, _)| *code == f.code) {
                Some((_, runs)) if runs.last() == Some(&i) => {}
                Some((_, runs)) => runs.push(i),
                None => out.push((f.code.clone(), vec![i])),
            }
        }
    }
    out
}

fn findings(reps: &[RunReport], summary: &[MetricSummary]) -> Vec<Finding> {
    let mut out = Vec::new();
    let clusters = job_clusters(summary);
    let codes = by_code(reps);
    let mut jobs: Vec<&str> = summary.iter().map(|s| s.job.as_str()).collect();
    jobs.dedup();
    for job in jobs {
        if let Some((s, c)) = clusters.iter().find(|(s, _)| s.job == job) {
            out.push(bimodal_finding(reps, &codes, s, c));
        }
        let first_outliers: Vec<&MetricSummary> = summary
            .iter()
            .filter(|s| s.job == job && s.stats.outliers.contains(&0))
            .collect();
        if !first_outliers.is_empty() {
            out.push(first_run_finding(job, &first_outliers));
        }
    }
    out
}

/// A cluster's runs (in value order) and its label, "slow" or "fast".
type Labelled<'a> = (&'a [usize], &'static str);

/// The slow and the fast cluster of a metric's runs.
fn slow_and_fast<'a>(s: &MetricSummary, c: &'a Clusters) -> (Labelled<'a>, Labelled<'a>) {
    let metric = Metric::from_name(&s.metric).expect("summaries use metric names");
    if metric.higher_is_better() {
        ((&c.low, "slow"), (&c.high, "fast"))
    } else {
        ((&c.high, "slow"), (&c.low, "fast"))
    }
}

/// "slow" or "fast" when `runs` (ascending) are exactly that cluster's runs.
fn marked_cluster(runs: &[usize], s: &MetricSummary, c: &Clusters) -> Option<&'static str> {
    let (slow, fast) = slow_and_fast(s, c);
    [slow, fast]
        .into_iter()
        .find(|(members, _)| {
            let mut members = members.to_vec();
            members.sort_unstable();
            members == runs
        })
        .map(|(_, label)| label)
}

fn bimodal_finding(
    reps: &[RunReport],
    codes: &[(String, Vec<usize>)],
    s: &MetricSummary,
    c: &Clusters,
) -> Finding {
    let ((slow, slow_name), (fast, fast_name)) = slow_and_fast(s, c);
    let describe = |runs: &[usize], label: &str| {
        let values: Vec<f64> = runs.iter().map(|&i| s.values[i]).collect();
        format!(
            "{} {label} runs ({}): {} {}",
            runs.len(),
            run_numbers(runs),
            value_range(&values, &s.unit),
            s.metric
        )
    };
    let mut evidence = vec![describe(slow, slow_name), describe(fast, fast_name)];
    for (code, runs) in codes {
        if let Some(label) = marked_cluster(runs, s, c) {
            evidence.push(format!(
                "finding {code}: in every {label} run and in none of the others"
            ));
        }
    }
    let as_json: Vec<Value> = reps
        .iter()
        .map(|r| serde_json::to_value(r).expect("RunReport serializes to JSON"))
        .collect();
    let separators = separators(&as_json, slow, fast);
    if separators.is_empty() {
        evidence.push(
            "no recorded condition of the runs differs between the two groups; look for what changes between runs (cache contents, background work, the device's internal state)".into(),
        );
    } else {
        evidence.extend(separators.into_iter().map(|sep| {
            format!(
                "{}: the {slow_name} runs had {}; the {fast_name} runs had {}",
                sep.path, sep.slow, sep.fast
            )
        }));
    }
    Finding {
        code: "bimodal-results".into(),
        severity: Severity::Warning,
        title: format!(
            "job '{}': the repetitions fall into two groups {:.0} % apart in {}",
            s.job,
            100.0 * c.gap / s.stats.median.abs().max(f64::MIN_POSITIVE),
            s.metric
        ),
        evidence,
        advice: "a single run of this job reports one of two different numbers; find and control what differs between the groups before quoting either".into(),
        at_ns: None,
    }
}

/// On a run on several ranks: per rank named a straggler in any repetition, in
/// which ones. One in every repetition is the host's doing; one that comes and
/// goes, passing load's.
fn repeated_stragglers(reps: &[RunReport]) -> Vec<Finding> {
    // (rank, host) → the repetitions (0-based) that named it
    let mut named: BTreeMap<(u32, &str), Vec<usize>> = BTreeMap::new();
    for (i, rep) in reps.iter().enumerate() {
        let Some(cluster) = &rep.cluster else {
            continue;
        };
        for r in crate::diagnose::straggler::stragglers(cluster) {
            let rank = &cluster.ranks[r];
            named
                .entry((rank.rank, rank.hostname.as_str()))
                .or_default()
                .push(i);
        }
    }
    named
        .into_iter()
        .map(|((rank, host), runs)| {
            let every = runs.len() == reps.len();
            let (severity, which, advice) = if every {
                (
                    Severity::Warning,
                    "every repetition".to_string(),
                    format!("a straggler in every repetition is its host's doing: look at {host}, as each repetition's straggler finding says"),
                )
            } else {
                (
                    Severity::Info,
                    format!("repetitions {}", run_numbers(&runs)),
                    "a straggler that comes and goes points at passing load (on the host or the shared storage) more than at the host: repeat more, and look at what else ran then".to_string(),
                )
            };
            Finding {
                code: "repeated-straggler".into(),
                severity,
                title: format!(
                    "rank {rank} on {host} was a straggler in {which} ({} of {})",
                    runs.len(),
                    reps.len()
                ),
                evidence: vec![format!(
                    "each repetition's straggler finding names the ranks far from the others' throughput or end; rank {rank} in {}",
                    run_numbers(&runs)
                )],
                advice,
                at_ns: None,
            }
        })
        .collect()
}

fn first_run_finding(job: &str, metrics: &[&MetricSummary]) -> Finding {
    Finding {
        code: "first-run-effect".into(),
        severity: Severity::Warning,
        title: format!("job '{job}': the first repetition is an outlier"),
        evidence: metrics
            .iter()
            .map(|s| {
                format!(
                    "{}: first run {}, median of all runs {}",
                    s.metric,
                    format_value(s.values[0], &s.unit),
                    format_value(s.stats.median, &s.unit)
                )
            })
            .collect(),
        advice: "the first run ran under different conditions (cold caches, file layout, device warm-up); add --warmup 1 or discard it".into(),
        at_ns: None,
    }
}

/// An observation that takes different values in the two groups of runs.
#[derive(Debug, PartialEq)]
struct Separator {
    path: String,
    slow: String,
    fast: String,
}

/// The conditions of a run, at summary level, from its serialised report: the
/// environment, the pre-run cache checks, per-worker totals, `vm.dirty_*`
/// changes and each target's cached pages at start, peak and end. The
/// measurements cannot explain why runs differ, and per-sample series are left
/// out: among thousands of samples some always split two groups by chance.
fn conditions(report: &Value) -> Value {
    let obs = &report["observations"];
    let targets: Vec<Value> = obs["targets"]
        .as_array()
        .map(|ts| ts.iter().map(|t| target_summary(t, obs)).collect())
        .unwrap_or_default();
    serde_json::json!({
        "interrupted": report["interrupted"],
        "environment": report["environment"],
        "observations": {
            "cache_guards": obs["cache_guards"],
            "workers": obs["workers"],
            "tunable_changes": obs["tunable_changes"],
            "targets": targets,
        },
    })
}

/// A target's cache series reduced to first, peak and last cached pages, from
/// the samples taken once its first job started (as `Observations::cache_during_jobs`:
/// earlier ones show the layout and the guard's purge, not a run's condition).
fn target_summary(target: &Value, obs: &Value) -> Value {
    let start = obs["cache_guards"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| g["path"] == target["path"])
        .filter_map(|g| g["t_ns"].as_u64())
        .min()
        .unwrap_or(0);
    let times = obs["t_ns"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let cached: Vec<u64> = target["cache_series"]
        .as_array()
        .map(|series| {
            series
                .iter()
                .enumerate()
                .filter(|(i, _)| times.get(*i).and_then(Value::as_u64).unwrap_or(0) >= start)
                .filter_map(|(_, p)| p["cached"].as_u64())
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({
        "name": target["path"],
        "sparse": target["sparse"],
        "cached_pages_first": cached.first(),
        "cached_pages_max": cached.iter().max(),
        "cached_pages_last": cached.last(),
    })
}

/// Numeric leaves of the reports' conditions whose values in the
/// slow runs and the fast runs do not overlap, best separated first.
fn separators(reports: &[Value], slow: &[usize], fast: &[usize]) -> Vec<Separator> {
    let leaves: Vec<BTreeMap<String, f64>> = reports
        .iter()
        .map(|r| {
            let mut leaves = BTreeMap::new();
            if let Value::Object(top) = conditions(r) {
                for (key, v) in &top {
                    numeric_leaves(key, v, &mut leaves);
                }
            }
            leaves
        })
        .collect();
    let mut found: Vec<(f64, Separator)> = leaves[0]
        .keys()
        .filter_map(|path| {
            let pick = |runs: &[usize]| -> Option<Vec<f64>> {
                runs.iter().map(|&i| leaves[i].get(path).copied()).collect()
            };
            let (s, f) = (pick(slow)?, pick(fast)?);
            let score = separation(&s, &f)?;
            Some((
                score,
                Separator {
                    path: path.clone(),
                    slow: value_range(&s, ""),
                    fast: value_range(&f, ""),
                },
            ))
        })
        .collect();
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    found
        .into_iter()
        .take(MAX_SEPARATORS)
        .map(|(_, s)| s)
        .collect()
}

/// How cleanly two groups of values separate: the gap between them over their
/// combined ranges (infinite for two different constants); None if they overlap.
fn separation(a: &[f64], b: &[f64]) -> Option<f64> {
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    let ((alo, ahi), (blo, bhi)) = (range(a), range(b));
    let gap = (blo - ahi).max(alo - bhi);
    if gap <= 0.0 {
        return None;
    }
    let widths = (ahi - alo) + (bhi - blo);
    Some(if widths == 0.0 {
        f64::INFINITY
    } else {
        gap / widths
    })
}

/// Flatten a JSON value into `path → number`; array elements are named by their
/// `name` field when they have one ("targets[/dev/sdb].cached_pages").
fn numeric_leaves(path: &str, v: &Value, out: &mut BTreeMap<String, f64>) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.insert(path.to_string(), x);
            }
        }
        Value::Bool(b) => {
            out.insert(path.to_string(), f64::from(u8::from(*b)));
        }
        Value::Object(map) => {
            for (k, v) in map {
                numeric_leaves(&format!("{path}.{k}"), v, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let label = item
                    .get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| i.to_string(), str::to_string);
                numeric_leaves(&format!("{path}[{label}]"), item, out);
            }
        }
        Value::Null | Value::String(_) => {}
    }
}

/// "all 25" or "12–30" (with the unit formatted).
fn value_range(values: &[f64], unit: &str) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo == hi {
        format!("all {}", format_value(lo, unit))
    } else {
        format!("{}–{}", format_value(lo, unit), format_value(hi, unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{finding, run_report};

    fn reps(iops: &[f64]) -> Vec<RunReport> {
        iops.iter().map(|&v| run_report(&[("rr", v)])).collect()
    }

    #[test]
    fn a_rank_named_straggler_in_every_repetition_is_the_hosts_doing_else_passing_load() {
        use crate::testutil::four_ranks_ending_at as four_ending_at;
        let steady = [0, 1, 2].map(|_| four_ending_at([1000, 1010, 1005, 4000]));
        let titles = |reps: Vec<RunReport>| -> Vec<(String, Severity)> {
            let found = build(reps, 0).findings;
            found.into_iter().map(|f| (f.title, f.severity)).collect()
        };
        assert_eq!(
            titles(steady.to_vec()),
            [(
                "rank 3 on h3 was a straggler in every repetition (3 of 3)".to_string(),
                Severity::Warning
            )],
            "expected rank 3 named once over the repetitions, as a warning"
        );
        let passing = vec![
            four_ending_at([1000, 1010, 1005, 1000]),
            four_ending_at([4000, 1010, 1005, 1000]),
            four_ending_at([1000, 1010, 1005, 4000]),
        ];
        assert_eq!(
            titles(passing),
            [
                (
                    "rank 0 on h0 was a straggler in repetitions #2 (1 of 3)".to_string(),
                    Severity::Info
                ),
                (
                    "rank 3 on h3 was a straggler in repetitions #3 (1 of 3)".to_string(),
                    Severity::Info
                )
            ],
            "expected each rank named with the repetitions it straggled in, as information"
        );
        let alone = build(reps(&[100.0, 110.0, 90.0]), 0).findings;
        assert!(
            alone.is_empty(),
            "expected no straggler finding without ranks, saw {alone:?}"
        );
    }

    #[test]
    fn runs_on_ranks_are_summarised_by_all_clients_and_a_name_once() {
        let on_ranks = [100.0, 110.0].map(|iops| {
            let mut r = run_report(&[("s", 1.0), ("s", 2.0)]);
            r.cluster = Some(Box::new(crate::model::ClusterReport {
                all_clients: run_report(&[("All clients", iops)]),
                ..Default::default()
            }));
            r
        });
        let summary = build(on_ranks.to_vec(), 0).summary;
        let iops: Vec<(&str, &[f64])> = summary
            .iter()
            .filter(|s| s.metric == "iops")
            .map(|s| (s.job.as_str(), s.values.as_slice()))
            .collect();
        assert_eq!(
            iops,
            [("All clients", &[100.0, 110.0][..])],
            "expected the IOPS of every rank merged, once"
        );
        let clones = build(vec![run_report(&[("j", 1.0), ("j", 5.0)])], 0).summary;
        let iops: Vec<&[f64]> = clones
            .iter()
            .filter(|s| s.metric == "iops")
            .map(|s| s.values.as_slice())
            .collect();
        assert_eq!(
            iops,
            [&[1.0][..]],
            "expected job 'j' summarised once (its first entry) though two entries carry its name"
        );
    }

    #[test]
    fn every_metric_of_every_job_is_summarised() {
        let r = build(reps(&[100.0, 110.0, 90.0]), 1);
        assert_eq!(r.summary.len(), Metric::ALL.len());
        let iops = &r.summary[0];
        assert_eq!((iops.metric.as_str(), iops.stats.median), ("iops", 100.0));
        assert_eq!(iops.values, vec![100.0, 110.0, 90.0]);
        assert!(r.findings.is_empty(), "three runs are too few for findings");
    }

    #[test]
    fn two_groups_of_runs_give_a_bimodal_finding() {
        let values = [
            2400.0, 3800.0, 2410.0, 3790.0, 2395.0, 3805.0, 2405.0, 3810.0,
        ];
        let report = build(reps(&values), 0);
        let bimodal = bimodal_of(&report);
        assert!(bimodal.title.contains("iops"), "{bimodal:?}");
        assert!(
            bimodal.evidence[0].starts_with("4 slow runs (#1, #3, #5, #7): 2.40k IO/s–2.41k IO/s"),
            "{bimodal:?}"
        );
        assert!(
            bimodal.evidence[1].starts_with("4 fast runs (#2, #4, #6, #8)"),
            "{bimodal:?}"
        );
        // These reports record no conditions of the run, so nothing can be named.
        assert!(
            bimodal.evidence[2].contains("no recorded condition"),
            "{bimodal:?}"
        );
    }

    fn bimodal_of(report: &RepeatReport) -> &Finding {
        report
            .findings
            .iter()
            .find(|f| f.code == "bimodal-results")
            .expect("expected a bimodal-results finding, saw none")
    }

    /// Alternating slow and fast runs; `code` in the runs whose index `has` accepts.
    fn alternating_with(code: &str, has: impl Fn(usize) -> bool) -> Vec<RunReport> {
        let values = [2400.0, 3800.0, 2410.0, 3790.0, 2395.0, 3805.0];
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let mut r = run_report(&[("rr", v)]);
                if has(i) {
                    r.findings.push(crate::testutil::finding(code));
                }
                r
            })
            .collect()
    }

    #[test]
    fn a_finding_in_exactly_one_cluster_splits_it() {
        let report = build(
            alternating_with("pagecache-under-direct-io", |i| i % 2 == 0),
            0,
        );
        assert_eq!(
            occurrences(&report),
            vec![Occurrence {
                code: "pagecache-under-direct-io".into(),
                runs: vec![0, 2, 4],
                splits: vec![("rr".into(), "slow")],
            }],
            "expected the finding in runs 0, 2, 4 to mark the slow cluster of 'rr'"
        );
        let bimodal = bimodal_of(&report);
        assert!(
            bimodal.evidence.contains(
                &"finding pagecache-under-direct-io: in every slow run and in none of the others"
                    .to_string()
            ),
            "expected the splitting finding in the evidence, got {:?}",
            bimodal.evidence
        );
    }

    #[test]
    fn a_finding_in_part_of_a_cluster_or_across_both_splits_nothing() {
        for (what, has) in [
            (
                "part of the slow cluster",
                (|i| i == 0 || i == 2) as fn(usize) -> bool,
            ),
            ("the slow cluster and a fast run", |i| i % 2 == 0 || i == 1),
        ] {
            let report = build(alternating_with("served-from-cache", has), 0);
            let occ = occurrences(&report);
            assert_eq!(
                occ.len(),
                1,
                "{what}: expected one finding code, got {occ:?}"
            );
            assert!(
                occ[0].splits.is_empty(),
                "{what}: expected no cluster marked, got {occ:?}"
            );
            let bimodal = bimodal_of(&report);
            assert!(
                bimodal.evidence.iter().all(|e| !e.starts_with("finding ")),
                "{what}: expected no splitting finding in the evidence, got {:?}",
                bimodal.evidence
            );
        }
    }

    #[test]
    fn each_code_lists_its_runs_once_in_order_of_first_appearance() {
        let mut reps = reps(&[100.0, 101.0, 99.0]);
        reps[1].findings = vec![finding("b"), finding("a"), finding("b")];
        reps[2].findings = vec![finding("a")];
        assert_eq!(
            by_code(&reps),
            vec![("b".to_string(), vec![1]), ("a".to_string(), vec![1, 2])],
            "expected codes in first-seen order, each run counted once"
        );
        let occ = occurrences(&build(reps, 0));
        assert!(
            occ.iter().all(|o| o.splits.is_empty()),
            "three runs are too few for clusters, got {occ:?}"
        );
    }

    #[test]
    fn the_observation_that_splits_the_groups_is_named() {
        let runs: Vec<Value> = (0..6)
            .map(|i| {
                let slow = i % 2 == 0;
                serde_json::json!({
                    "tool_version": "0.1.0",
                    "started_unix_ms": 1000 + i,
                    "jobs": [{"name": "rr", "dirs": [{"iops": if slow { 2400 } else { 3800 }}]}],
                    "environment": {
                        "load_avg": [1.0 + i as f64 * 0.1],
                        "targets": [{"name": "/dev/vdb", "cached_pages_at_start": if slow { 25 } else { 0 }}],
                        "dirty_bytes": if slow { 4096 + i } else { 8192 + i },
                    }
                })
            })
            .collect();
        let seps = separators(&runs, &[0, 2, 4], &[1, 3, 5]);
        assert_eq!(
            seps,
            vec![
                Separator {
                    path: "environment.targets[/dev/vdb].cached_pages_at_start".into(),
                    slow: "all 25".into(),
                    fast: "all 0".into(),
                },
                Separator {
                    path: "environment.dirty_bytes".into(),
                    slow: "4096–4100".into(),
                    fast: "8193–8197".into(),
                },
            ],
            "measured values, run times and overlapping observations are not separators"
        );
    }

    #[test]
    fn per_sample_series_are_never_separators_but_target_summaries_are() {
        let runs: Vec<Value> = (0..6)
            .map(|i| {
                let slow = i % 2 == 0;
                let cached = if slow { 192 } else { 0 };
                serde_json::json!({
                    "observations": {
                        // Sample 3 happens to split the groups; it is one of thousands.
                        "t_ns": [0, 100, 200, if slow { 301 } else { 299 }],
                        "memory_series": [{"dirty_bytes": if slow { 10 } else { 20 }}],
                        "targets": [{"path": "/dev/vdb", "cache_series": [{"cached": cached}, null, {"cached": 5}]}],
                    }
                })
            })
            .collect();
        let seps = separators(&runs, &[0, 2, 4], &[1, 3, 5]);
        let paths: Vec<&str> = seps.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "observations.targets[/dev/vdb].cached_pages_first",
                "observations.targets[/dev/vdb].cached_pages_max",
            ]
        );
    }

    #[test]
    fn cache_samples_from_before_the_first_job_are_no_condition() {
        let obs = serde_json::json!({
            "t_ns": [0, 100, 200],
            "cache_guards": [{"path": "/f", "t_ns": 150}],
        });
        let target = serde_json::json!({
            "path": "/f",
            "cache_series": [{"cached": 65536}, {"cached": 65536}, {"cached": 3}],
        });
        let summary = target_summary(&target, &obs);
        assert_eq!(
            (
                summary["cached_pages_first"].as_u64(),
                summary["cached_pages_max"].as_u64()
            ),
            (Some(3), Some(3)),
            "expected the samples before the guard's end at 150 ns left out, got {summary}"
        );
    }

    #[test]
    fn separation_needs_non_overlapping_groups() {
        assert_eq!(separation(&[25.0, 25.0], &[0.0, 0.0]), Some(f64::INFINITY));
        assert_eq!(separation(&[1.0, 3.0], &[5.0, 7.0]), Some(0.5));
        assert_eq!(separation(&[1.0, 6.0], &[5.0, 7.0]), None);
    }

    #[test]
    fn an_outlying_first_run_is_a_finding() {
        let r = build(reps(&[50.0, 100.0, 101.0, 99.0, 100.0]), 0);
        let f = r
            .findings
            .iter()
            .find(|f| f.code == "first-run-effect")
            .expect("finding");
        assert!(
            f.evidence[0].starts_with("iops: first run 50.0 IO/s"),
            "{f:?}"
        );
        assert!(build(reps(&[100.0, 50.0, 101.0, 99.0, 100.0]), 0)
            .findings
            .iter()
            .all(|f| f.code != "first-run-effect"));
    }
}
