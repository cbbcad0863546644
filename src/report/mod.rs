//! Reports: renderings of the model (`crate::model`). Every document is
//! rendered through `render`, one match over (document, format): fio's formats
//! are in `fio/`, the human text (fio's normal layout and iolens' own tables) in
//! `text/`, the self-contained page in `html/`; `json` is iolens' own model as
//! it is. The renderers are visible inside `report` only, so that `render` is
//! the way in.
pub(crate) mod fio;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod text;

use crate::model::{RepeatReport, RunReport};
use crate::series::metric_changes::Side;
use fio::json::Detail;

/// A report format: `--output-format`'s, and the HTML page of `--html FILE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// fio's human layout.
    Normal,
    /// fio's JSON layout.
    FioJson,
    /// fio's JSON with latency histograms (`json+`).
    FioJsonPlus,
    /// fio's terse (semicolon-separated) version 3 line per job.
    Terse,
    /// iolens' own JSON (the full report model).
    IolensJson,
    /// The self-contained HTML page.
    Html,
}

/// What is reported: one run, the runs of `--repeat` with their statistics, or
/// two sides compared (`compare`, `ab`, `--compare-with`).
pub(crate) enum Document<'a> {
    Run(&'a RunReport),
    Repeat(&'a RepeatReport),
    /// `repeat`: B's repetitions with their statistics (`--repeat N --compare-with
    /// ID`), which the HTML page shows after the comparison.
    Comparison {
        a: &'a Side,
        b: &'a Side,
        repeat: Option<&'a RepeatReport>,
    },
}

/// How JSON documents are laid out: pretty for the final report, one line each
/// for interim reports (`--status-interval`), so a reader parses the stream
/// line by line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Pretty,
    OneLine,
}

/// `document` in `format`; None when the document has no such form: fio's
/// formats hold one run, a comparison is text or HTML.
pub(crate) fn render(document: &Document, format: Format) -> Option<String> {
    render_in(document, format, Layout::Pretty)
}

fn render_in(document: &Document, format: Format, layout: Layout) -> Option<String> {
    let one_line = layout == Layout::OneLine;
    let fio_json = |report, detail| match layout {
        Layout::Pretty => fio::json::render(report, detail),
        Layout::OneLine => fio::json::render_line(report, detail),
    };
    Some(match (document, format) {
        (Document::Run(report), Format::Normal) => text::render(report),
        (Document::Run(report), Format::FioJson) => fio_json(report, Detail::Json),
        (Document::Run(report), Format::FioJsonPlus) => fio_json(report, Detail::JsonPlus),
        (Document::Run(report), Format::Terse) => fio::terse::render(report),
        (Document::Run(report), Format::IolensJson) if one_line => json::render_line(report),
        (Document::Run(report), Format::IolensJson) => json::render(report),
        (Document::Run(report), Format::Html) => html::render_run(report),
        (Document::Repeat(result), Format::Normal) => text::repeat_table::render_table(result),
        (Document::Repeat(result), Format::IolensJson) => json::render(result),
        (Document::Repeat(result), Format::Html) => html::render_repeat(result),
        (Document::Comparison { a, b, .. }, Format::Normal) => text::comparison::render(a, b),
        (Document::Comparison { a, b, repeat }, Format::Html) => {
            let conditions = text::comparison::comparability(&a.runs[0], &b.runs[0]);
            html::render_compare(a, b, &conditions, *repeat)
        }
        (Document::Repeat(_) | Document::Comparison { .. }, _) => return None,
    })
}

/// The final report in each format, each ending in a newline: a run's in fio's
/// order (`in_fio_order`), the other documents' in the order given. None when
/// one of the formats has no form of this document.
pub(crate) fn render_each(document: &Document, formats: &[Format]) -> Option<String> {
    render_each_in(document, formats, Layout::Pretty)
}

/// An interim report of a run (`--status-interval`) in each format: JSON
/// documents one line each.
pub(crate) fn render_status(report: &RunReport, formats: &[Format]) -> String {
    render_each_in(&Document::Run(report), formats, Layout::OneLine)
        .expect("a run has a form in every format")
}

fn render_each_in(document: &Document, formats: &[Format], layout: Layout) -> Option<String> {
    let formats = match document {
        Document::Run(_) => in_fio_order(formats),
        Document::Repeat(_) | Document::Comparison { .. } => formats.to_vec(),
    };
    let mut out = String::new();
    for format in formats {
        out.push_str(&render_in(document, format, layout)?);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Some(out)
}

/// The formats as fio prints them, whatever order they were given in: terse, then
/// JSON (json+ when both are asked for: one document), then the normal text;
/// iolens' own JSON, then the HTML page, last. Each once.
fn in_fio_order(formats: &[Format]) -> Vec<Format> {
    let rank = |f: &Format| match f {
        Format::Terse => 0,
        Format::FioJson | Format::FioJsonPlus => 1,
        Format::Normal => 2,
        Format::IolensJson => 3,
        Format::Html => 4,
    };
    let plus = formats.contains(&Format::FioJsonPlus);
    let mut ordered: Vec<Format> = formats
        .iter()
        .copied()
        .filter(|f| !(plus && *f == Format::FioJson))
        .collect();
    ordered.sort_by_key(rank);
    ordered.dedup();
    ordered
}

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
        let formats = [Format::FioJson, Format::IolensJson];
        let status = render_status(&report, &formats);
        let lines: Vec<&str> = status.lines().collect();
        assert_eq!(lines.len(), 2);
        for line in lines {
            serde_json::from_str::<serde_json::Value>(line).expect("one document per line");
        }
        let final_report = render_each(&Document::Run(&report), &[Format::FioJson]).unwrap();
        assert!(
            final_report.lines().count() > 1,
            "the final report stays pretty"
        );
        let terse = render_status(&report, &[Format::Terse]);
        assert_eq!(terse, fio::terse::render(&report));
    }

    #[test]
    fn formats_print_in_fios_order_each_once() {
        use Format::*;
        for (given, printed) in [
            (vec![Normal, FioJson], vec![FioJson, Normal]),
            (vec![FioJson, Normal], vec![FioJson, Normal]),
            (vec![Normal, Terse, FioJson], vec![Terse, FioJson, Normal]),
            (vec![IolensJson, Normal], vec![Normal, IolensJson]),
            (vec![FioJsonPlus, FioJson], vec![FioJsonPlus]),
            (vec![Normal, Normal], vec![Normal]),
        ] {
            assert_eq!(in_fio_order(&given), printed, "for {given:?}");
        }
        let report = one_job_report();
        let text = render_each(&Document::Run(&report), &[Normal, FioJson]).unwrap();
        assert!(
            text.starts_with('{') && text.contains("}\n\nj: (groupid=0"),
            "expected the JSON document first, then the normal text:\n{text}"
        );
    }
}
