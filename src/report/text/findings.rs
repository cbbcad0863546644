//! Findings as text, one format for every command that prints them (`run`,
//! `show`, `quick`, `--repeat`, `compare`): severity and title with the code, the
//! evidence, the advice.

use crate::model::{Finding, RepeatReport, Severity};
use crate::series::metric_changes::Side;
use crate::series::repetitions::{self, Occurrence};
use crate::units::run_numbers;
use std::fmt::Write;

/// The findings block, after a blank line; empty without findings.
pub(crate) fn render(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nFindings:\n");
    for f in findings {
        write_finding(&mut out, f);
    }
    out
}

fn write_finding(out: &mut String, f: &Finding) {
    let severity = match f.severity {
        Severity::Info => "info",
        Severity::Warning => "WARNING",
    };
    let _ = writeln!(out, "  [{severity}] {} ({})", f.title, f.code);
    for line in &f.evidence {
        let _ = writeln!(out, "      - {line}");
    }
    if !f.advice.is_empty() {
        let _ = writeln!(out, "      what to do: {}", f.advice);
    }
}

/// The findings of a code of the repetitions as the first repetition that had
/// it reported them (one per job, say).
pub(crate) fn first_reported<'r>(
    r: &'r RepeatReport,
    o: &'r Occurrence,
) -> impl Iterator<Item = &'r Finding> + 'r {
    r.repetitions[o.runs[0]]
        .findings
        .iter()
        .filter(move |f| f.code == o.code)
}

/// The findings of both sides of a comparison: A's block and B's (a side of
/// several runs gives each finding once, with the runs that had it, then the
/// findings over its repetitions), then the findings only one side had, which
/// often explain the difference. Empty when neither side had one.
pub(crate) fn render_comparison(a: &Side, b: &Side) -> String {
    let sides = [("A", a), ("B", b)].map(|(key, side)| SideFindings::of(key, side));
    let mut out = String::new();
    for side in &sides {
        side.write_block(&mut out);
    }
    let [a, b] = &sides;
    let mut only: Vec<String> = Vec::new();
    for (side, code, runs) in a.codes_not_in(b).chain(b.codes_not_in(a)) {
        let line = format!("  {code}: only {side} had it{runs}\n");
        // A finding over the repetitions comes once per job.
        if !only.contains(&line) {
            only.push(line);
        }
    }
    if !only.is_empty() {
        out.push_str("\nFound on one side only (it may explain the difference):\n");
        out.extend(only);
    }
    out
}

/// One side's runs with the finding codes each run had.
struct SideFindings<'a> {
    key: &'static str,
    label: &'a str,
    repeat: RepeatReport,
    occurrences: Vec<Occurrence>,
}

impl<'a> SideFindings<'a> {
    fn of(key: &'static str, side: &'a Side) -> Self {
        let repeat = repetitions::build(side.runs.clone(), 0);
        let occurrences = repetitions::occurrences(&repeat);
        SideFindings {
            key,
            label: &side.label,
            repeat,
            occurrences,
        }
    }

    fn write_block(&self, out: &mut String) {
        if self.occurrences.is_empty() && self.repeat.findings.is_empty() {
            return;
        }
        let total = self.repeat.repetitions.len();
        let _ = write!(out, "\nFindings of {} ({}", self.key, self.label);
        if total > 1 {
            let _ = write!(out, ", {total} runs");
        }
        out.push_str("):\n");
        for o in &self.occurrences {
            for f in first_reported(&self.repeat, o) {
                write_finding(out, f);
            }
            if total > 1 {
                let _ = write!(out, "      in {}", self.runs_text(&o.runs));
                for (job, label) in &o.splits {
                    let _ = write!(out, " — those are the {label} cluster of job '{job}'");
                }
                out.push('\n');
            }
        }
        for f in &self.repeat.findings {
            write_finding(out, f);
        }
    }

    /// "runs #1, #3 of 4", or "all 3 runs".
    fn runs_text(&self, runs: &[usize]) -> String {
        let total = self.repeat.repetitions.len();
        if runs.len() == total {
            format!("all {total} runs")
        } else {
            format!("runs {} of {total}", run_numbers(runs))
        }
    }

    /// (this side's key, code, " (runs …)" on a side of several runs) for every
    /// code of this side that `other` does not have.
    fn codes_not_in<'s>(
        &'s self,
        other: &'s SideFindings,
    ) -> impl Iterator<Item = (&'static str, &'s str, String)> + 's {
        let runs = self.occurrences.iter().map(|o| {
            let runs = match self.repeat.repetitions.len() {
                1 => String::new(),
                _ => format!(" ({})", self.runs_text(&o.runs)),
            };
            (o.code.as_str(), runs)
        });
        let overall = self
            .repeat
            .findings
            .iter()
            .map(|f| (f.code.as_str(), String::new()));
        runs.chain(overall)
            .filter(|(code, _)| !other.has(code))
            .map(|(code, runs)| (self.key, code, runs))
    }

    fn has(&self, code: &str) -> bool {
        self.occurrences.iter().any(|o| o.code == code)
            || self.repeat.findings.iter().any(|f| f.code == code)
    }
}

/// A finding as one line for stderr, when the report on stdout is a format
/// people do not read (`iolens: warning served-from-cache: <title>`).
pub(crate) fn summary_line(f: &Finding) -> String {
    format!("iolens: {} {}: {}", f.severity.name(), f.code, f.title)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_findings() -> [Finding; 2] {
        [
            Finding {
                code: "served-from-cache".into(),
                severity: Severity::Warning,
                title: "reads came from the page cache".into(),
                evidence: vec!["90 % of the target was cached".into()],
                advice: "use direct=1".into(),
                at_ns: None,
            },
            Finding {
                code: "cpu-frequency".into(),
                severity: Severity::Info,
                title: "the governor is powersave".into(),
                evidence: Vec::new(),
                advice: String::new(),
                at_ns: None,
            },
        ]
    }

    #[test]
    fn a_finding_has_severity_title_code_evidence_and_advice() {
        let text = render(&two_findings());
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "",
                "Findings:",
                "  [WARNING] reads came from the page cache (served-from-cache)",
                "      - 90 % of the target was cached",
                "      what to do: use direct=1",
                "  [info] the governor is powersave (cpu-frequency)",
            ],
            "expected the one findings format, got:\n{text}"
        );
        assert_eq!(render(&[]), "", "expected nothing without findings");
    }

    fn side(label: &str, codes_per_run: &[&[&str]]) -> Side {
        Side {
            label: label.into(),
            runs: codes_per_run
                .iter()
                .map(|codes| {
                    let mut r = crate::testutil::run_report(&[("rr", 100.0)]);
                    r.findings = codes.iter().map(|c| crate::testutil::finding(c)).collect();
                    r
                })
                .collect(),
        }
    }

    #[test]
    fn a_comparison_shows_each_sides_findings_and_those_of_one_side_only() {
        let a = side("run 1", &[&["read-from-holes"]]);
        let b = side(
            "run 2",
            &[
                &["read-from-holes", "cpu-starvation"],
                &["read-from-holes"],
                &["read-from-holes", "cpu-starvation"],
            ],
        );
        let text = render_comparison(&a, &b);
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "",
                "Findings of A (run 1):",
                "  [WARNING] read-from-holes (read-from-holes)",
                "",
                "Findings of B (run 2, 3 runs):",
                "  [WARNING] read-from-holes (read-from-holes)",
                "      in all 3 runs",
                "  [WARNING] cpu-starvation (cpu-starvation)",
                "      in runs #1, #3 of 3",
                "",
                "Found on one side only (it may explain the difference):",
                "  cpu-starvation: only B had it (runs #1, #3 of 3)",
            ],
            "expected A's block, B's block with each finding once and its runs, and B's own finding named, got:\n{text}"
        );
        let swapped = render_comparison(&b, &a);
        assert!(
            swapped.ends_with("  cpu-starvation: only A had it (runs #1, #3 of 3)\n"),
            "expected the finding named for side A when A has it, got:\n{swapped}"
        );
    }

    #[test]
    fn a_comparison_without_findings_says_nothing_of_them() {
        let quiet = side("a.json", &[&[], &[]]);
        assert_eq!(
            render_comparison(&quiet, &side("b.json", &[&[]])),
            "",
            "expected no findings text when neither side had a finding"
        );
        let text = render_comparison(&quiet, &side("b.json", &[&["served-from-cache"]]));
        assert!(
            !text.contains("Findings of A")
                && text.contains("Findings of B (b.json):")
                && text.ends_with("  served-from-cache: only B had it\n"),
            "expected only B's block and B's finding named, got:\n{text}"
        );
    }

    #[test]
    fn the_summary_line_has_severity_code_and_title() {
        let lines: Vec<String> = two_findings().iter().map(summary_line).collect();
        assert_eq!(
            lines,
            [
                "iolens: warning served-from-cache: reads came from the page cache",
                "iolens: info cpu-frequency: the governor is powersave",
            ],
            "expected severity, code and title per finding"
        );
    }
}
