//! Comparing results, for `iolens compare`, `iolens ab` and `--compare-with ID`:
//! per job and metric the change with its confidence interval and a verdict,
//! after a check of what differs between the two sides' conditions.

use super::common::{print, write_html, CmdError, HistoryError, HistoryFlags};
use crate::cli::JobPair;
use crate::model::{RepeatReport, RunReport};
use crate::report::{self, Document, Format};
pub(super) use crate::series::metric_changes::Side;
use std::path::Path;

/// After a run: compare its repetitions (B) with stored run `id` and its batch (A);
/// with `html_path`, also as the side-by-side HTML page, which is then the run's
/// page (`--html` with `--compare-with`): with `repeat` (`--repeat N`), the
/// repetitions' charts are on it too.
pub(super) fn against_history(
    id: i64,
    runs: &[RunReport],
    history: &HistoryFlags,
    html_path: Option<&Path>,
    repeat: Option<&RepeatReport>,
) -> Result<(), CmdError> {
    let stored = load_side(&id.to_string(), history)
        .map_err(|e| CmdError::run_failed(format!("--compare-with {id}: {e}")))?;
    let this = Side {
        label: "this run".into(),
        runs: runs.to_vec(),
    };
    // the run is over: say what is partial rather than refuse
    refuse_cut_short([&stored, &this], true)?;
    show(&stored, &this, "\n", html_path, repeat)
}

/// A side holding an interrupted run (partial results: a 3 s run cut short is no
/// match for a 10 s one) is refused unless `allow`, and then named in a warning.
pub(super) fn refuse_cut_short(sides: [&Side; 2], allow: bool) -> Result<(), CmdError> {
    for side in sides {
        let cut = side.runs.iter().filter(|r| r.interrupted).count();
        let what = match (cut, side.runs.len()) {
            (0, _) => continue,
            (_, 1) => format!("{} was interrupted", side.label),
            (cut, n) => format!("{cut} of the {n} runs of {} were interrupted", side.label),
        };
        if !allow {
            return Err(CmdError::usage(format!(
                "{what}: its results are partial, not comparable with a whole run \
                 (--allow-interrupted compares anyway)"
            )));
        }
        eprintln!("iolens: warning: {what}: its results are partial; the changes below are not like for like");
    }
    Ok(())
}

/// The text comparison on stdout (after `separator`), and the HTML page when
/// asked for (with B's repetitions when `repeat`).
pub(super) fn show(
    a: &Side,
    b: &Side,
    separator: &str,
    html_path: Option<&Path>,
    repeat: Option<&RepeatReport>,
) -> Result<(), CmdError> {
    check_jobs_match(a, b, true)?;
    print(&format!("{separator}{}", text(a, b)))?;
    match html_path {
        Some(path) => write_html(path, &render(a, b, repeat, Format::Html)),
        None => Ok(()),
    }
}

/// A with B compared, as text.
pub(super) fn text(a: &Side, b: &Side) -> String {
    render(a, b, None, Format::Normal)
}

/// The names of a side's jobs, in order, once each (from its first run, as the
/// comparison takes them).
fn job_names(side: &Side) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for job in &side.runs[0].jobs {
        if !names.contains(&job.name.as_str()) {
            names.push(&job.name);
        }
    }
    names
}

const PAIRING: &str = "jobs are compared by name: run them with the same --name, or pair two \
                       names with `iolens compare A B --pair A_JOB=B_JOB`";

/// Jobs are compared by name: when no job of A has a namesake in B (the table
/// would be empty) refused, or with `refuse` false (`ab`, whose comparison is all
/// it prints) said on stderr; jobs on one side only are named on stderr.
pub(super) fn check_jobs_match(a: &Side, b: &Side, refuse: bool) -> Result<(), CmdError> {
    let (names_a, names_b) = (job_names(a), job_names(b));
    let only = |side: &[&str], other: &[&str]| -> Vec<String> {
        let alone = side.iter().filter(|n| !other.contains(n));
        alone.map(|n| n.to_string()).collect()
    };
    let (only_a, only_b) = (only(&names_a, &names_b), only(&names_b, &names_a));
    if only_a.len() == names_a.len() {
        let message = format!(
            "no job matches: A ({}) has {}; B ({}) has {}; {PAIRING}",
            a.label,
            names_a.join(", "),
            b.label,
            names_b.join(", ")
        );
        if refuse {
            return Err(CmdError::usage(message));
        }
        eprintln!("iolens: warning: {message}");
        return Ok(());
    }
    let mut unmatched = Vec::new();
    for (key, side, alone) in [("A", a, &only_a), ("B", b, &only_b)] {
        if !alone.is_empty() {
            unmatched.push(format!(
                "only in {key} ({}): {}",
                side.label,
                alone.join(", ")
            ));
        }
    }
    if !unmatched.is_empty() {
        eprintln!(
            "iolens: note: not compared, no job of that name on the other side: {}; {PAIRING}",
            unmatched.join("; ")
        );
    }
    Ok(())
}

/// `--pair A_JOB=B_JOB`: B's job B_JOB is compared as A's A_JOB (renamed so in
/// every run of B). Each name must be a job of its side, and A_JOB no other job of B.
pub(super) fn pair_jobs(a: &Side, b: &mut Side, pairs: &[JobPair]) -> Result<(), CmdError> {
    for pair in pairs {
        let given = format!("--pair={}={}", pair.a, pair.b);
        let (names_a, names_b) = (job_names(a), job_names(b));
        for (key, side, names, name) in [("A", a, &names_a, &pair.a), ("B", &*b, &names_b, &pair.b)]
        {
            if !names.contains(&name.as_str()) {
                return Err(CmdError::usage(format!(
                    "{given}: {key} ({}) has no job {name}; its jobs: {}",
                    side.label,
                    names.join(", ")
                )));
            }
        }
        if pair.a != pair.b && names_b.contains(&pair.a.as_str()) {
            return Err(CmdError::usage(format!(
                "{given}: B ({}) has a job {} of its own, which A's {} is compared with",
                b.label, pair.a, pair.a
            )));
        }
        for run in &mut b.runs {
            let jobs = run.jobs.iter_mut().map(|j| &mut j.name);
            let series = run.observations.jobs.iter_mut().map(|s| &mut s.name);
            for name in jobs.chain(series).filter(|n| **n == pair.b) {
                name.clone_from(&pair.a);
            }
        }
    }
    Ok(())
}

/// A with B compared, as text or as the HTML page.
fn render(a: &Side, b: &Side, repeat: Option<&RepeatReport>, format: Format) -> String {
    report::render(&Document::Comparison { a, b, repeat }, format)
        .expect("a comparison is written as text or HTML")
}

/// A result file (iolens-json of a run or of `--repeat`), or a history id (the
/// whole batch it belongs to).
pub(super) fn load_side(arg: &str, history: &HistoryFlags) -> Result<Side, SideError> {
    let side = read_side(arg, history)?;
    // The comparison and its HTML page start from each side's first run.
    if side.runs.is_empty() {
        return Err(SideError::Empty { arg: arg.into() });
    }
    Ok(side)
}

fn read_side(arg: &str, history: &HistoryFlags) -> Result<Side, SideError> {
    if Path::new(arg).exists() {
        let text = std::fs::read_to_string(arg).map_err(|source| SideError::Read {
            arg: arg.into(),
            source,
        })?;
        let runs = match serde_json::from_str::<RepeatReport>(&text) {
            Ok(r) => r.repetitions,
            Err(_) => vec![serde_json::from_str::<RunReport>(&text).map_err(|source| {
                SideError::NotJson {
                    arg: arg.into(),
                    source,
                }
            })?],
        };
        return Ok(Side {
            label: arg.to_string(),
            runs,
        });
    }
    let id: i64 = arg
        .parse()
        .map_err(|_| SideError::NotAnId { arg: arg.into() })?;
    let runs =
        super::common::skipping_damaged(history.open()?.batch_of(id).map_err(HistoryError::from)?);
    Ok(Side {
        label: format!("run {id}"),
        runs,
    })
}

/// Why one side of a comparison could not be loaded; each names the side as given.
#[derive(Debug, thiserror::Error)]
pub(super) enum SideError {
    /// The side holds no run.
    #[error("{arg}: holds no run to compare")]
    Empty {
        /// The file or id given.
        arg: String,
    },
    /// The result file could not be read.
    #[error("{arg}: {source}")]
    Read {
        /// The file given.
        arg: String,
        /// Why the read failed.
        #[source]
        source: std::io::Error,
    },
    /// The file is not iolens-json.
    #[error(
        "{arg}: not an iolens-json result (write one with --output-format=iolens-json): {source}"
    )]
    NotJson {
        /// The file given.
        arg: String,
        /// Why it did not parse as a run.
        #[source]
        source: serde_json::Error,
    },
    /// Neither an existing file nor a number.
    #[error("{arg}: neither a result file nor a history id")]
    NotAnId {
        /// What was given.
        arg: String,
    },
    /// The history could not be opened or read.
    #[error(transparent)]
    History(#[from] HistoryError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_file_without_runs_is_refused_not_compared() {
        let dir = crate::testutil::scratch_dir();
        let path = dir.path().join("empty.json");
        let empty = RepeatReport {
            schema_version: crate::model::SCHEMA_VERSION,
            tool_version: "0".into(),
            warmup: 0,
            repetitions: Vec::new(),
            summary: Vec::new(),
            findings: Vec::new(),
        };
        std::fs::write(&path, serde_json::to_string(&empty).unwrap()).unwrap();
        let arg = path.display().to_string();
        match load_side(&arg, &HistoryFlags::default()) {
            Err(e) => assert_eq!(
                e.to_string(),
                format!("{arg}: holds no run to compare"),
                "expected a one-line refusal"
            ),
            Ok(side) => panic!("expected a refusal, got a side of {} runs", side.runs.len()),
        }
        std::fs::write(&path, "{}").unwrap();
        let e = load_side(&arg, &HistoryFlags::default())
            .err()
            .expect("not a result");
        assert!(
            e.to_string().starts_with(&format!(
                "{arg}: not an iolens-json result (write one with --output-format=iolens-json): "
            )),
            "got {e}"
        );
        let e = load_side("no-such-result", &HistoryFlags::default())
            .err()
            .expect("no file");
        assert_eq!(
            e.to_string(),
            "no-such-result: neither a result file nor a history id"
        );
    }

    #[test]
    fn a_side_cut_short_is_refused_unless_allowed() {
        let side = |label: &str, cut: &[bool]| Side {
            label: label.into(),
            runs: cut
                .iter()
                .map(|&interrupted| RunReport {
                    interrupted,
                    ..crate::testutil::run_report(&[("x", 1.0)])
                })
                .collect(),
        };
        let (whole, cut, some) = (
            side("a", &[false]),
            side("b", &[true]),
            side("c", &[false, true, true]),
        );
        assert_eq!(refuse_cut_short([&whole, &whole], false), Ok(()));
        assert_eq!(
            refuse_cut_short([&whole, &cut], false)
                .expect_err("one side cut short")
                .to_string(),
            "iolens: b was interrupted: its results are partial, not comparable with a whole run \
             (--allow-interrupted compares anyway)"
        );
        assert!(refuse_cut_short([&some, &whole], false)
            .expect_err("repetitions cut short")
            .message()
            .starts_with("2 of the 3 runs of c were interrupted"));
        assert_eq!(refuse_cut_short([&cut, &some], true), Ok(()));
    }

    #[test]
    fn a_pair_renames_bs_job_in_every_run_and_a_taken_name_is_refused() {
        let side = |label: &str, jobs: &[(&str, f64)], runs: usize| Side {
            label: label.into(),
            runs: (0..runs)
                .map(|_| crate::testutil::run_report(jobs))
                .collect(),
        };
        let a = side("a", &[("seq", 10.0), ("rand", 20.0)], 1);
        let mut b = side("b", &[("seq-new", 12.0), ("rand", 21.0)], 2);
        let pair = |a: &str, b: &str| JobPair {
            a: a.into(),
            b: b.into(),
        };
        pair_jobs(&a, &mut b, &[pair("seq", "seq-new")]).expect("both jobs exist");
        for run in &b.runs {
            let names: Vec<&str> = run.jobs.iter().map(|j| j.name.as_str()).collect();
            assert_eq!(
                names,
                ["seq", "rand"],
                "expected B's seq-new compared as seq"
            );
        }
        assert_eq!(check_jobs_match(&a, &b, true), Ok(()));
        assert_eq!(
            pair_jobs(&a, &mut b, &[pair("seq", "rand")])
                .expect_err("B has a seq of its own now")
                .message(),
            "--pair=seq=rand: B (b) has a job seq of its own, which A's seq is compared with"
        );
        let c = side("c", &[("other", 1.0)], 1);
        assert_eq!(
            check_jobs_match(&a, &c, true)
                .expect_err("no job in common")
                .message(),
            "no job matches: A (a) has seq, rand; B (c) has other; jobs are compared by name: \
             run them with the same --name, or pair two names with \
             `iolens compare A B --pair A_JOB=B_JOB`"
        );
        assert_eq!(
            check_jobs_match(&a, &c, false),
            Ok(()),
            "expected ab's comparison still printed"
        );
    }
}
