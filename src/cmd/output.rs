//! Output formats and where they go.

use crate::report::{fio_json, json, model::RunReport, text};
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// fio's human layout.
    Normal,
    /// fio's JSON layout.
    FioJson,
    /// iolens' own JSON (the full report model).
    IolensJson,
}

/// Parse `--output-format=` (fio allows a comma list).
pub fn parse_formats(value: &str) -> Result<Vec<Format>, String> {
    value
        .split(',')
        .map(|f| match f.trim() {
            "normal" => Ok(Format::Normal),
            "json" => Ok(Format::FioJson),
            "iolens-json" => Ok(Format::IolensJson),
            other => Err(format!(
                "--output-format={other}: unknown format (use normal, json or iolens-json; several with commas)"
            )),
        })
        .collect()
}

/// Render the report in each format, in order.
pub fn render(report: &RunReport, formats: &[Format]) -> String {
    let mut out = String::new();
    for f in formats {
        match f {
            Format::Normal => out.push_str(&text::render(report)),
            Format::FioJson => out.push_str(&fio_json::render(report)),
            Format::IolensJson => out.push_str(&json::render(report)),
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Write to stdout; a closed pipe (`iolens … | head`) is not an error.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comma_lists_and_rejects_unknown_formats() {
        assert_eq!(
            parse_formats("normal,json").unwrap(),
            vec![Format::Normal, Format::FioJson]
        );
        let err = parse_formats("xml").unwrap_err();
        assert!(err.contains("--output-format=xml"), "{err}");
    }
}
