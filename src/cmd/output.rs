//! Rendering the report in the chosen formats, and where it goes.

use crate::cli::Format;
use crate::model::{Finding, RunReport};
use crate::report::fio_json::{self, Detail};
use crate::report::{findings_text, json, terse, text};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Render the final report in each format, in order.
pub fn render(report: &RunReport, formats: &[Format]) -> String {
    render_each(report, formats, Layout::Pretty)
}

/// Render an interim report (`--status-interval`): JSON documents take one line
/// each, so a reader can parse the stream line by line.
pub fn render_status(report: &RunReport, formats: &[Format]) -> String {
    render_each(report, formats, Layout::OneLine)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Pretty,
    OneLine,
}

fn render_each(report: &RunReport, formats: &[Format], layout: Layout) -> String {
    let fio = |detail| match layout {
        Layout::Pretty => fio_json::render(report, detail),
        Layout::OneLine => fio_json::render_line(report, detail),
    };
    let mut out = String::new();
    for f in formats {
        match f {
            Format::Normal => out.push_str(&text::render(report)),
            Format::FioJson => out.push_str(&fio(Detail::Json)),
            Format::FioJsonPlus => out.push_str(&fio(Detail::JsonPlus)),
            Format::Terse => out.push_str(&terse::render(report)),
            Format::IolensJson if layout == Layout::OneLine => {
                out.push_str(&json::render_line(report))
            }
            Format::IolensJson => out.push_str(&json::render(report)),
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The lines per finding for stderr: only when no format is the normal text,
/// which has the findings in full.
pub fn findings_summary(findings: &[Finding], formats: &[Format]) -> Vec<String> {
    if formats.contains(&Format::Normal) {
        return Vec::new();
    }
    findings.iter().map(findings_text::summary_line).collect()
}

/// Print `findings_summary` on stderr, unless `--quiet-findings`.
pub fn print_findings_summary(findings: &[Finding], formats: &[Format], quiet: bool) {
    if quiet {
        return;
    }
    for line in findings_summary(findings, formats) {
        eprintln!("{line}");
    }
}

/// Where reports go: stdout, or a file created before the run starts, so
/// interim reports and the final one follow each other in it.
pub enum Destination {
    Stdout,
    File { path: PathBuf, file: File },
}

impl Destination {
    pub fn open(path: Option<&Path>) -> Result<Self, String> {
        match path {
            None => Ok(Destination::Stdout),
            Some(path) => File::create(path)
                .map(|file| Destination::File {
                    path: path.to_path_buf(),
                    file,
                })
                .map_err(|e| format!("{}: {e}", path.display())),
        }
    }

    pub fn write(&mut self, text: &str) -> Result<(), String> {
        match self {
            Destination::Stdout => write_stdout(text).map_err(|e| format!("stdout: {e}")),
            Destination::File { path, file } => file
                .write_all(text.as_bytes())
                .map_err(|e| format!("{}: {e}", path.display())),
        }
    }
}

pub use crate::console::write_stdout;

#[cfg(test)]
mod tests {
    use super::*;

    fn one_job_report() -> RunReport {
        use crate::model::{JobReport, SCHEMA_VERSION};
        let job = JobReport {
            name: "j".into(),
            workers: 1,
            runtime_ns: 1,
            ..Default::default()
        };
        RunReport {
            schema_version: SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            jobs: vec![job],
            ..Default::default()
        }
    }

    #[test]
    fn status_reports_put_each_json_document_on_one_line() {
        let report = one_job_report();
        let formats = [Format::FioJson, Format::FioJsonPlus, Format::IolensJson];
        let status = render_status(&report, &formats);
        let lines: Vec<&str> = status.lines().collect();
        assert_eq!(lines.len(), 3);
        for line in lines {
            serde_json::from_str::<serde_json::Value>(line).expect("one document per line");
        }
        let final_report = render(&report, &[Format::FioJson]);
        assert!(
            final_report.lines().count() > 1,
            "the final report stays pretty"
        );
        let terse = render_status(&report, &[Format::Terse]);
        assert_eq!(terse, terse::render(&report));
    }

    #[test]
    fn findings_go_to_stderr_only_without_the_normal_text() {
        let finding = Finding {
            code: "served-from-cache".into(),
            severity: crate::model::Severity::Warning,
            title: "cached".into(),
            evidence: Vec::new(),
            advice: String::new(),
            at_ns: None,
        };
        let findings = [finding];
        for formats in [
            vec![Format::FioJson],
            vec![Format::FioJsonPlus],
            vec![Format::Terse],
            vec![Format::IolensJson, Format::Terse],
        ] {
            assert_eq!(
                findings_summary(&findings, &formats),
                ["iolens: warning served-from-cache: cached"],
                "expected the summary line for {formats:?}"
            );
        }
        for formats in [vec![Format::Normal], vec![Format::FioJson, Format::Normal]] {
            assert_eq!(
                findings_summary(&findings, &formats),
                Vec::<String>::new(),
                "expected no summary when {formats:?} includes the normal text"
            );
        }
    }
}
