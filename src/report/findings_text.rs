//! Findings as text, one format for every command that prints them (`run`,
//! `show`, `quick`, `--repeat`): severity and title with the code, the evidence,
//! the advice.

use crate::model::{Finding, Severity};
use std::fmt::Write;

/// The findings block, after a blank line; empty without findings.
pub fn render(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nFindings:\n");
    for f in findings {
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
    out
}

/// A finding as one line for stderr, when the report on stdout is a format
/// people do not read (`iolens: warning served-from-cache: <title>`).
pub fn summary_line(f: &Finding) -> String {
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
