//! Rendering the report in the chosen formats, and where it goes.

use crate::cli::Format;
use crate::job::spec::{JobSpec, RwPattern};
use crate::model::{Finding, RunReport};
use crate::report::fio::num2str_bytes;
use crate::report::text::findings;
use crate::report::{self, Document};
use crate::runner::plan::group_ids;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A run's final report in each format, in fio's order.
pub(super) fn render(report: &RunReport, formats: &[Format]) -> String {
    report::render_each(&Document::Run(report), formats).expect("a run has a form in every format")
}

/// A run's HTML page.
pub(super) fn render_html(report: &RunReport) -> String {
    report::render(&Document::Run(report), Format::Html).expect("a run has an HTML page")
}

/// A run's interim report (`--status-interval`).
pub(super) fn render_status(report: &RunReport, formats: &[Format]) -> String {
    report::render_status(report, formats)
}

/// What fio prints before a run when the normal text is among the formats (nothing
/// otherwise): a line per job with its pattern, block sizes, engine and depth (`...`
/// once for its other clones), the version, and how many workers start.
pub(super) fn preamble(specs: &[JobSpec], formats: &[Format], version: &str) -> String {
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
        spec.queue.iodepth
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
pub(super) fn findings_summary(findings: &[Finding], formats: &[Format]) -> Vec<String> {
    if formats.contains(&Format::Normal) {
        return Vec::new();
    }
    findings.iter().map(findings::summary_line).collect()
}

/// Print `findings_summary` on stderr, unless `--quiet-findings`.
pub(super) fn print_findings_summary(findings: &[Finding], formats: &[Format], quiet: bool) {
    if quiet {
        return;
    }
    for line in findings_summary(findings, formats) {
        eprintln!("{line}");
    }
}

/// Where reports go: stdout, or a file created before the run starts, so
/// interim reports and the final one follow each other in it.
pub(super) enum Destination {
    Stdout,
    File { path: PathBuf, file: File },
}

impl Destination {
    pub(super) fn open(path: Option<&Path>) -> Result<Self, DestinationError> {
        match path {
            None => Ok(Destination::Stdout),
            Some(path) => File::create(path)
                .map(|file| Destination::File {
                    path: path.to_path_buf(),
                    file,
                })
                .map_err(|source| DestinationError::File {
                    path: path.to_path_buf(),
                    source,
                }),
        }
    }

    pub(super) fn write(&mut self, text: &str) -> Result<(), DestinationError> {
        match self {
            Destination::Stdout => write_stdout(text).map_err(DestinationError::Stdout),
            Destination::File { path, file } => {
                file.write_all(text.as_bytes())
                    .map_err(|source| DestinationError::File {
                        path: path.clone(),
                        source,
                    })
            }
        }
    }
}

/// Why reports could not go where they go; the caller says what it was doing.
#[derive(Debug, thiserror::Error)]
pub(super) enum DestinationError {
    /// Writing to stdout failed.
    #[error("stdout: {0}")]
    Stdout(#[source] std::io::Error),
    /// Creating or writing the report file failed.
    #[error("{}: {source}", path.display())]
    File {
        /// The report file.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

pub(super) use crate::console::write_stdout;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_file_that_cannot_be_created_is_named() {
        let dir = tempfile::tempdir().expect("a scratch dir");
        let path = dir.path().join("no/such/dir/report");
        let e = Destination::open(Some(&path))
            .err()
            .expect("no such directory");
        assert_eq!(
            e.to_string(),
            format!("{}: No such file or directory (os error 2)", path.display())
        );
        let e = DestinationError::Stdout(std::io::Error::from_raw_os_error(32));
        assert_eq!(e.to_string(), "stdout: Broken pipe (os error 32)");
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
