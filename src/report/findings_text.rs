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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_has_severity_title_code_evidence_and_advice() {
        let findings = [
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
        ];
        let text = render(&findings);
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
}
