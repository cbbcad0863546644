//! Runs cases under fio and iolens and compares what both report, knowing
//! the differences that are deliberate (or waiting for a fix elsewhere).

use super::gen::{Case, Section, Separator};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// A difference between fio's and iolens' numbers the harness expects, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Known {
    /// bsrange/bssplit: each tool draws the sizes from its own random stream.
    RandomSizes,
    /// Random offsets with bsrange/bssplit: both random maps shorten an I/O to
    /// the free blocks; each tool draws the sizes from its own stream.
    RandomMapSizes,
    /// rw/randrw: each tool draws the direction of each I/O from its own stream.
    MixedSplit,
    /// A clone starts past its files' end: fio refuses that job and runs the
    /// others, iolens refuses the job file.
    RefusedOffset,
}

/// The documented list (docs/fio-differences.md): each class and its reason.
pub(super) const KNOWN: &[(Known, &str)] = &[
    (
        Known::RandomSizes,
        "bsrange/bssplit sizes come from each tool's own random stream: the \
         I/O count may differ; the bytes differ by less than one largest block \
         per pass and job",
    ),
    (
        Known::RandomMapSizes,
        "random offsets with bsrange/bssplit: both random maps cut an I/O \
         short at a used block, the sizes come from each tool's own stream: the \
         bytes differ by less than one largest block per pass and job (with \
         number_ios, plus number_ios x (largest - smallest) per loop and job), \
         the I/O counts by at most bytes / smallest - bytes / largest block, and \
         each tool's bytes per I/O lie between the smallest and largest block",
    ),
    (
        Known::MixedSplit,
        "rw/randrw directions come from each tool's own random stream: the \
         read/write split may differ within binomial noise, and the totals by \
         one block per pass and job (which direction reaches the region's end \
         first decides when the pass ends)",
    ),
    (
        Known::RefusedOffset,
        "offset= + clone x offset_increment= past filesize= (or past a size=N% \
         file), or less than the smallest block past it: fio refuses that job (\"you need to specify \
         valid offset=\", \"blocksize is larger than data set range\"), runs \
         the others and exits non-zero; iolens refuses the whole job file before \
         any I/O (exit 2), so only the two refusals are compared",
    ),
];

/// One JSON job entry: (io_bytes, total_ios) of reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Entry {
    pub group: u64,
    pub read: [u64; 2],
    pub write: [u64; 2],
}

impl Entry {
    fn total(&self, i: usize) -> u64 {
        self.read[i] + self.write[i]
    }
}

/// What one tool did with a job file.
#[derive(Debug, Clone)]
pub(super) struct Outcome {
    pub status: Option<i32>,
    /// Per case seed, its entries in report order.
    pub entries: BTreeMap<u64, Vec<Entry>>,
    pub stderr: String,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Tool {
    Fio,
    Iolens,
}

impl Tool {
    fn command(self, job: &Path, dir: &Path) -> Command {
        let mut cmd = match self {
            Tool::Fio => crate::support::isolated("fio"),
            Tool::Iolens => {
                let mut cmd = crate::support::command();
                cmd.args(["run", "--no-history"]);
                cmd
            }
        };
        cmd.arg("--output-format=json")
            .arg(job)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

pub(super) fn fio_present() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs `cases` as one job file under both tools at once, each in its own
/// directory under `scratch` (named after the first case, so batches may run
/// side by side).
pub(super) fn run_both(cases: &[&Case], scratch: &Path) -> [Outcome; 2] {
    let text: String = cases.iter().map(|case| case.job_text()).collect();
    let tools = [Tool::Fio, Tool::Iolens];
    let children: Vec<_> = tools
        .iter()
        .map(|&tool| {
            let dir = scratch.join(format!("{}-{tool:?}", cases[0].seed).to_lowercase());
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            for case in cases {
                for (name, len) in &case.files {
                    std::fs::write(dir.join(name), vec![0x5a; *len as usize]).unwrap();
                }
            }
            let job = dir.join("cases.fio");
            std::fs::write(&job, &text).unwrap();
            tool.command(&job, &dir)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {tool:?}: {e}"))
        })
        .collect();
    let outcomes: Vec<Outcome> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            parse(out.status.code(), &out.stdout, &out.stderr)
        })
        .collect();
    outcomes.try_into().unwrap()
}

fn parse(status: Option<i32>, stdout: &[u8], stderr: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(stdout);
    let mut entries: BTreeMap<u64, Vec<Entry>> = BTreeMap::new();
    // fio may print notes before the document
    let doc: Option<serde_json::Value> = text
        .find('{')
        .and_then(|start| serde_json::from_str(&text[start..]).ok());
    let jobs = doc
        .as_ref()
        .and_then(|d| d["jobs"].as_array().cloned())
        .unwrap_or_default();
    for job in jobs {
        // fio prints an empty entry (group 4294967295) for a group that mixes
        // jobs with and without group_reporting; iolens prints none
        if job["groupid"].as_u64() == Some(u64::from(u32::MAX)) {
            continue;
        }
        let name = job["jobname"].as_str().unwrap_or_default();
        let Some(seed) = name
            .strip_prefix('c')
            .and_then(|rest| rest.split('s').next())
            .and_then(|seed| seed.parse().ok())
        else {
            continue;
        };
        let counts =
            |ddir: &str| ["io_bytes", "total_ios"].map(|key| job[ddir][key].as_u64().unwrap_or(0));
        entries.entry(seed).or_default().push(Entry {
            group: job["groupid"].as_u64().unwrap_or(0),
            read: counts("read"),
            write: counts("write"),
        });
    }
    Outcome {
        status,
        entries,
        stderr: String::from_utf8_lossy(stderr).into_owned(),
    }
}

/// The known classes that apply to a case.
pub(super) fn classes(case: &Case) -> Vec<Known> {
    let mut found = Vec::new();
    let any = |f: fn(&Section) -> bool| case.sections.iter().any(f);
    if any(|s| s.random_sizes() && !s.random()) {
        found.push(Known::RandomSizes);
    }
    if any(|s| s.random_sizes() && s.random()) {
        found.push(Known::RandomMapSizes);
    }
    if any(Section::mixed) {
        found.push(Known::MixedSplit);
    }
    if case.sections.iter().any(|s| case.refuses(s)) {
        found.push(Known::RefusedOffset);
    }
    found
}

/// The sections behind each entry, in report order: with group_reporting
/// one entry per reporting group (a stonewall or new_group starts one),
/// without it one per job.
fn entry_sections(case: &Case) -> Vec<Vec<&Section>> {
    let mut entries: Vec<Vec<&Section>> = Vec::new();
    for s in &case.sections {
        if !s.has("group_reporting") {
            entries.extend(std::iter::repeat_n(vec![s], s.numjobs() as usize));
        } else if s.separator == Separator::None && !entries.is_empty() {
            entries.last_mut().unwrap().push(s);
        } else {
            entries.push(vec![s]);
        }
    }
    entries
}

/// Entries with their groups renumbered from 0 within the case.
fn relative(entries: &[Entry]) -> Vec<Entry> {
    let first = entries.iter().map(|e| e.group).min().unwrap_or(0);
    entries
        .iter()
        .map(|e| Entry {
            group: e.group - first,
            ..*e
        })
        .collect()
}

/// How far apart fio's and iolens' numbers of one entry may be.
struct Tolerance {
    /// Per direction: I/Os and bytes.
    split_ios: u64,
    split_bytes: u64,
    /// Read plus write: I/Os and bytes.
    total_ios: u64,
    total_bytes: u64,
    /// Random offsets with random sizes: the smallest and largest block, which
    /// bound each tool's bytes per I/O (its count is judged against its bytes).
    block_range: Option<(u64, u64)>,
}

fn tolerance(sections: &[&Section], fio: &Entry) -> Tolerance {
    let mut t = Tolerance {
        split_ios: 0,
        split_bytes: 0,
        total_ios: 0,
        total_bytes: 0,
        block_range: None,
    };
    for s in sections {
        let jobs = s.numjobs();
        let max_bs = s.max_bs();
        let passes = s.get("loops").map_or(1, |n| n.parse().unwrap()) + 1;
        if s.random_sizes() && s.random() {
            // both random maps cover each block once a pass: the bytes agree;
            // fio's count lies anywhere from bytes / largest to bytes / smallest
            let min_bs = s.min_bs();
            let bytes = fio.total(0);
            t.total_bytes += max_bs * passes * jobs;
            t.total_ios += bytes / min_bs - bytes / max_bs + passes * jobs;
            // number_ios: the count is fixed, the bytes follow the drawn sizes
            if let Some(ios) = s.get("number_ios") {
                let ios: u64 = ios.parse().unwrap();
                t.total_bytes += ios * (passes - 1) * jobs * (max_bs - min_bs);
            }
            // the entry's other sections count too
            let low = sections.iter().map(|s| s.min_bs()).min().unwrap();
            let high = sections.iter().map(|s| s.max_bs()).max().unwrap();
            t.block_range = Some((low, high));
        } else if s.random_sizes() {
            t.total_bytes += max_bs * passes * jobs;
            // sizes are drawn differently: the count follows the bytes / mean size
            t.total_ios += fio.total(1) / 4 + 2 * jobs;
        }
        if s.mixed() {
            let n = fio.total(1) as f64;
            let p = s.get("rwmixread").map_or(50.0, |r| r.parse().unwrap()) / 100.0;
            let ios = (5.0 * (n * p * (1.0 - p)).sqrt()) as u64 + 2;
            t.split_ios += ios;
            t.split_bytes += ios * max_bs;
            // the direction whose walk reaches the end first ends the pass
            t.total_ios += passes * jobs;
            t.total_bytes += passes * jobs * max_bs;
        }
    }
    t.split_ios = t.split_ios.saturating_add(t.total_ios);
    t.split_bytes = t.split_bytes.saturating_add(t.total_bytes);
    t
}

fn within(a: u64, b: u64, tolerance: u64) -> bool {
    a.abs_diff(b) <= tolerance
}

/// Each I/O moved between the smallest and the largest block.
fn sizes_fit(entry: &Entry, (low, high): (u64, u64)) -> bool {
    [entry.read, entry.write]
        .iter()
        .all(|[bytes, ios]| ios * low <= *bytes && *bytes <= ios * high)
}

fn entries_agree(sections: &[&Section], fio: &Entry, iolens: &Entry) -> bool {
    let t = tolerance(sections, fio);
    let sizes = t
        .block_range
        .is_none_or(|range| sizes_fit(fio, range) && sizes_fit(iolens, range));
    sizes
        && fio.group == iolens.group
        && (0..2).all(|i| {
            let total = if i == 0 { t.total_bytes } else { t.total_ios };
            let split = if i == 0 { t.split_bytes } else { t.split_ios };
            within(fio.total(i), iolens.total(i), total)
                && within(fio.read[i], iolens.read[i], split)
                && within(fio.write[i], iolens.write[i], split)
        })
}

/// The verdict on one case.
#[derive(Debug)]
pub(super) enum Verdict {
    /// Equal, or within the tolerances of the known classes that apply.
    Same,
    Differs(String),
}

pub(super) fn judge(case: &Case, fio: &Outcome, iolens: &Outcome) -> Verdict {
    let none = Vec::new();
    let f = relative(fio.entries.get(&case.seed).unwrap_or(&none));
    let i = relative(iolens.entries.get(&case.seed).unwrap_or(&none));
    if classes(case).contains(&Known::RefusedOffset) {
        let refused = fio.status != Some(0)
            && [
                "you need to specify valid offset=",
                "larger than data set range",
            ]
            .iter()
            .any(|why| fio.stderr.contains(why))
            && iolens.status == Some(2)
            && ["lies past filesize=", "less than the smallest block"]
                .iter()
                .any(|why| iolens.stderr.contains(why));
        return if refused {
            Verdict::Same
        } else {
            Verdict::Differs(report(
                case,
                fio,
                iolens,
                "refusal of a start past filesize=",
            ))
        };
    }
    if fio.status != iolens.status {
        return Verdict::Differs(report(case, fio, iolens, "exit status"));
    }
    let sections = entry_sections(case);
    if f.len() != i.len() || (fio.status == Some(0) && f.len() != sections.len()) {
        return Verdict::Differs(report(case, fio, iolens, "number of entries"));
    }
    let agree = f
        .iter()
        .zip(&i)
        .zip(&sections)
        .all(|((a, b), own)| entries_agree(own, a, b));
    if agree {
        Verdict::Same
    } else {
        Verdict::Differs(report(case, fio, iolens, "numbers"))
    }
}

fn report(case: &Case, fio: &Outcome, iolens: &Outcome, what: &str) -> String {
    let mut text = format!(
        "case seed {} differs ({what}); known classes {:?}\n--- job file\n{}",
        case.seed,
        classes(case),
        case.job_text()
    );
    let none = Vec::new();
    for (tool, outcome) in [("fio", fio), ("iolens", iolens)] {
        writeln!(text, "--- {tool}: exit {:?}", outcome.status).unwrap();
        for e in relative(outcome.entries.get(&case.seed).unwrap_or(&none)) {
            writeln!(
                text,
                "  group {}: read {} B / {} ios, write {} B / {} ios",
                e.group, e.read[0], e.read[1], e.write[0], e.write[1]
            )
            .unwrap();
        }
        if outcome.status != Some(0) {
            let tail: String = outcome
                .stderr
                .lines()
                .take(5)
                .collect::<Vec<_>>()
                .join("\n");
            writeln!(text, "  stderr: {tail}").unwrap();
        }
    }
    text
}
