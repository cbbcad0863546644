//! Rendering the report in the chosen formats, and where it goes.

use crate::cli::Format;
use crate::job::spec::{JobSpec, RwPattern};
use crate::model::{Finding, RunReport};
use crate::report::fio::json::{self as fio_json, Detail};
use crate::report::fio::num2str_bytes;
use crate::report::fio::terse;
use crate::report::json;
use crate::report::text::{self, findings};
use crate::runner::plan::group_ids;
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
    for f in &in_fio_order(formats) {
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

/// The formats as fio prints them, whatever order they were given in: terse, then
/// JSON (json+ when both are asked for: one document), then the normal text;
/// iolens' own JSON last. Each once.
fn in_fio_order(formats: &[Format]) -> Vec<Format> {
    let rank = |f: &Format| match f {
        Format::Terse => 0,
        Format::FioJson | Format::FioJsonPlus => 1,
        Format::Normal => 2,
        Format::IolensJson => 3,
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

/// What fio prints before a run when the normal text is among the formats (nothing
/// otherwise): a line per job with its pattern, block sizes, engine and depth (`...`
/// once for its other clones), the version, and how many workers start.
pub fn preamble(specs: &[JobSpec], formats: &[Format], version: &str) -> String {
    if !formats.contains(&Format::Normal) {
        return String::new();
    }
    let mut out = String::new();
    let groups = group_ids(specs);
    for (spec, group) in specs.iter().zip(groups) {
        out.push_str(&job_line(spec, group));
        if spec.exec.numjobs > 1 {
            out.push_str("...\n");
        }
    }
    out.push_str(version);
    out.push('\n');
    out.push_str(&starting_line(specs));
    out
}

/// `x: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1`
fn job_line(spec: &JobSpec, group: u32) -> String {
    let size = |n| {
        let figures = spec.measure.significant_figures as usize;
        num2str_bytes(n, figures, spec.measure.binary_prefixes)
    };
    let [r, w, t] = spec
        .workload
        .bs
        .each_ref()
        .map(|bs| format!("{}-{}", size(bs.min()), size(bs.max())));
    format!(
        "{}: (g={group}): rw={}, bs=(R) {r}, (W) {w}, (T) {t}, ioengine={}, iodepth={}\n",
        spec.name,
        rw_name(spec.workload.rw),
        spec.engine.kind.name(),
        spec.engine.iodepth
    )
}

/// fio's name for the pattern (`readwrite` is shown as `rw`).
fn rw_name(rw: RwPattern) -> &'static str {
    match rw {
        RwPattern::Read => "read",
        RwPattern::Write => "write",
        RwPattern::RandRead => "randread",
        RwPattern::RandWrite => "randwrite",
        RwPattern::ReadWrite => "rw",
        RwPattern::RandRw => "randrw",
        RwPattern::Trim => "trim",
        RwPattern::RandTrim => "randtrim",
        RwPattern::TrimWrite => "trimwrite",
        RwPattern::RandTrimWrite => "randtrimwrite",
    }
}

/// `Starting 2 processes`, `Starting 1 thread`, `Starting 2 threads and 1 process`:
/// every clone of every job, as threads (`thread`) or processes.
fn starting_line(specs: &[JobSpec]) -> String {
    let count = |threads: bool| -> u32 {
        let matching = specs.iter().filter(|s| s.exec.thread == threads);
        matching.map(|s| s.exec.numjobs).sum()
    };
    let (threads, processes) = (count(true), count(false));
    let plural = |n: u32, one: &str, many: &str| {
        let word = if n > 1 { many } else { one };
        format!("{n} {word}")
    };
    let mut parts = Vec::new();
    if threads > 0 {
        parts.push(plural(threads, "thread", "threads"));
    }
    if processes > 0 {
        parts.push(plural(processes, "process", "processes"));
    }
    format!("Starting {}\n", parts.join(" and "))
}

/// The lines per finding for stderr: only when no format is the normal text,
/// which has the findings in full.
pub fn findings_summary(findings: &[Finding], formats: &[Format]) -> Vec<String> {
    if formats.contains(&Format::Normal) {
        return Vec::new();
    }
    findings.iter().map(findings::summary_line).collect()
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
        let formats = [Format::FioJson, Format::IolensJson];
        let status = render_status(&report, &formats);
        let lines: Vec<&str> = status.lines().collect();
        assert_eq!(lines.len(), 2);
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
        let text = render(&report, &[Normal, FioJson]);
        assert!(
            text.starts_with('{') && text.contains("}\n\nj: (groupid=0"),
            "expected the JSON document first, then the normal text:\n{text}"
        );
    }

    fn spec(words: &[&str]) -> Vec<JobSpec> {
        crate::job::resolve::tests::run(words)
            .expect("valid jobs")
            .jobs
    }

    #[test]
    fn the_preamble_has_a_line_per_job_the_version_and_the_workers() {
        let specs = spec(&[
            "--ioengine=null",
            "--size=1m",
            "--name=a",
            "--rw=randrw",
            "--bs=4k,64k",
            "--numjobs=3",
            "--name=b",
            "--rw=trim",
            "--bsrange=512-128k",
            "--thread",
            "--iodepth=8",
            "--stonewall",
        ]);
        let text = preamble(&specs, &[Format::Normal], "fio-3.33-iolens-0");
        assert_eq!(
            text,
            "a: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 64.0KiB-64.0KiB, (T) 64.0KiB-64.0KiB, ioengine=null, iodepth=1\n\
             ...\n\
             b: (g=1): rw=trim, bs=(R) 512B-128KiB, (W) 512B-128KiB, (T) 512B-128KiB, ioengine=null, iodepth=8\n\
             fio-3.33-iolens-0\n\
             Starting 1 thread and 3 processes\n"
        );
        assert_eq!(
            preamble(&specs, &[Format::FioJson, Format::Terse], "v"),
            "",
            "expected nothing without the normal text"
        );
        let one = spec(&["--ioengine=null", "--size=1m", "--name=t", "--thread"]);
        assert!(preamble(&one, &[Format::Normal], "v").ends_with("\nStarting 1 thread\n"));
        let two = spec(&["--ioengine=null", "--size=1m", "--name=p", "--numjobs=2"]);
        assert!(preamble(&two, &[Format::Normal], "v").ends_with("\nStarting 2 processes\n"));
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
