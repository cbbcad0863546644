//! The documentation does not drift from the code: its relative links resolve, the README
//! opens with the set-up commands CI runs, and every example marked `<!-- checked -->` is run
//! and its output compared with the shown one, in shape (lines, labels, column names; numbers
//! and their units are placeholders).
//!
//! The markers, in README.md and docs/*.md:
//!
//! - `<!-- file: NAME -->` before a fenced block: the block is written to NAME in the scratch
//!   directory of that Markdown file, for the examples after it.
//! - `<!-- checked -->` before a fenced block whose first line is `$ iolens ARGS`: ARGS are run
//!   there and the rest of the block is the output shown; `<!-- checked: iolens ARGS -->` runs
//!   these ARGS instead (a shorter run of the shown command). The examples of one Markdown file
//!   run in order in one scratch directory with one history database, so a later `compare 1 2`
//!   sees the runs stored before it.
//!
//! A comparison's verdict ending a line ("B faster", "B uses less CPU", "no significant
//! difference" …) is a placeholder too.
//! Each shown line must match an output line (stdout in order and without gaps, unless the doc
//! shows a line of its own `…`; else a line of stderr); `…` inside a line stands for any text.

use std::path::{Path, PathBuf};

use crate::support::{command, scratch, stderr, stdout};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, CONTRIBUTING.md and every chapter in docs/.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("read docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    files.extend(chapters);
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The lines outside fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// `line` without its inline code spans.
fn without_code(line: &str) -> String {
    line.split('`').step_by(2).collect()
}

/// GitHub's anchor for a heading: lowercase, spaces to '-', punctuation but '-' and '_' dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (a repeated heading gets `-1`, `-2`, … as on GitHub).
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for line in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.push(anchor);
    }
    seen
}

/// The targets of the Markdown links `[text](target)` and images in `text`'s prose.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            targets.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn docs_links_resolve() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = read(&file);
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !resolved.exists() {
                broken.push(format!("{name}: ({target}): no file {path}"));
                continue;
            }
            if let Some(anchor) = anchor {
                if resolved.extension().is_some_and(|e| e == "md")
                    && !anchors(&read(&resolved)).iter().any(|a| a == anchor)
                {
                    broken.push(format!(
                        "{name}: ({target}): no heading #{anchor} in {path}"
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Every chapter can be found: the README and the book's index link each one.
#[test]
fn docs_every_chapter_is_linked() {
    let readme = link_targets(&read(&root().join("README.md")));
    let index = link_targets(&read(&root().join("docs/README.md")));
    for chapter in markdown_files()
        .iter()
        .filter(|f| f.starts_with(root().join("docs")))
    {
        let name = chapter.file_name().unwrap().to_string_lossy();
        let linked = |targets: &[String], target: &str| {
            targets.iter().any(|t| t.split('#').next() == Some(target))
        };
        assert!(
            linked(&readme, &format!("docs/{name}")),
            "expected README.md to link docs/{name}"
        );
        assert!(
            name == "README.md" || linked(&index, &name),
            "expected docs/README.md to link {name}"
        );
    }
}

#[test]
fn docs_slugs_follow_github() {
    assert_eq!(slug("Repeat, compare, remember"), "repeat-compare-remember");
    assert_eq!(slug("Many hosts (MPI)"), "many-hosts-mpi");
    assert_eq!(slug("fio's own test suite"), "fios-own-test-suite");
    assert_eq!(slug("io_submit_mode=offload"), "io_submit_modeoffload");
    assert_eq!(anchors("# A\n```\n# not\n```\n## A\n"), ["a", "a-1"]);
}

/// The fenced blocks of `text`: the lines of the block's contents, each with the nearest
/// HTML comment above it (only blank lines between).
fn fenced_blocks(text: &str) -> Vec<(Option<String>, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut comment: Option<String> = None;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            let body = lines
                .by_ref()
                .take_while(|l| !l.trim_start().starts_with("```"))
                .map(str::to_string)
                .collect();
            blocks.push((comment.take(), body));
        } else if let Some(inner) = trimmed
            .strip_prefix("<!--")
            .and_then(|c| c.strip_suffix("-->"))
        {
            comment = Some(inner.trim().to_string());
        } else if !trimmed.is_empty() {
            comment = None;
        }
    }
    blocks
}

#[test]
fn docs_readme_opens_with_the_set_up_commands() {
    let readme = read(&root().join("README.md"));
    let (_, first) = fenced_blocks(&readme)
        .into_iter()
        .next()
        .expect("a fenced block");
    let commands: Vec<&str> = first
        .iter()
        .map(|line| line.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(
        commands,
        ["cargo run --release", "cargo test --workspace"],
        "expected the README's first block to be the two set-up commands"
    );
    let ci = read(&root().join(".ci/run"));
    assert!(
        ci.lines()
            .any(|line| line.trim() == "cargo test --workspace"),
        "expected .ci/run to run the README's test command"
    );
}

/// Split a shell command line into words (single and double quotes, no escapes).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (_, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The arguments of `iolens ARGS  # comment`.
fn iolens_args(line: &str) -> Vec<String> {
    let line = line.split(" #").next().unwrap();
    let mut words = words(line);
    assert_eq!(
        words.first().map(String::as_str),
        Some("iolens"),
        "expected a checked example to run iolens: {line:?}"
    );
    words.remove(0);
    words
}

const UNITS: &[&str] = &[
    "ns", "µs", "us", "ms", "s", "m", "h", "B", "KiB", "MiB", "GiB", "TiB", "kB", "MB", "GB", "k",
    "%", "x", "×",
];

/// The verdicts a comparison prints (`series::metric_changes::verdict`), whole: which
/// one a short run gets is the machine's noise, not the code's decision.
const VERDICTS: &[&str] = &[
    "no significant difference",
    "no verdict (single run)",
    "B faster",
    "B slower",
    "B uses less CPU",
    "B uses more CPU",
];

/// A line's shape: every number (with its sign and unit), a lone `-` (no value), a list of
/// numbers (`#1, #3`) and a verdict become `#`; runs of spaces one space.
fn shape(line: &str) -> String {
    let words: Vec<String> = numbers_hidden(line)
        .replace(", #", ",#")
        .split(' ')
        .map(|word| {
            if word == "-" || (word.contains('#') && word.chars().all(|c| c == '#' || c == ',')) {
                "#".to_string()
            } else {
                word.to_string()
            }
        })
        .collect();
    let mut shaped = words.join(" ");
    for verdict in VERDICTS {
        if shaped.ends_with(&format!(" {verdict}")) {
            shaped.truncate(shaped.len() - verdict.len());
            shaped.push('#');
        }
    }
    shaped
}

fn numbers_hidden(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            if matches!(out.chars().last(), Some('+' | '-' | '−'))
                && !out.chars().rev().nth(1).is_some_and(char::is_alphanumeric)
            {
                out.pop();
            }
            // a unit right after the number, or after one space
            let gap = usize::from(chars.get(i) == Some(&' '));
            let unit = UNITS.iter().find(|unit| {
                let end = i + gap + unit.chars().count();
                chars
                    .get(i + gap..end)
                    .is_some_and(|s| s.iter().copied().eq(unit.chars()))
                    && !chars.get(end).is_some_and(|c| c.is_alphanumeric())
            });
            if let Some(unit) = unit {
                i += gap + unit.chars().count();
            }
            out.push('#');
        } else if c.is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
            out.push(' ');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.trim().to_string()
}

/// Whether an output line has the shape of a shown line, where `…` stands for any text.
fn matches(shown: &str, actual: &str) -> bool {
    let actual = shape(actual);
    let parts: Vec<String> = shown.split('…').map(shape).collect();
    let mut rest = actual.as_str();
    for (n, part) in parts.iter().enumerate() {
        let last = n + 1 == parts.len();
        if n == 0 {
            match rest.strip_prefix(part.as_str()) {
                Some(after) => rest = after,
                None => return false,
            }
        } else if last {
            return rest.ends_with(part.as_str());
        } else {
            match rest.find(part.as_str()) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    rest.is_empty()
}

/// Check the shown output lines against what the command printed: each shown line matches the
/// next line of stdout (a shown line of its own `…` lets stdout skip lines), else some line of
/// stderr. The reason it does not, if so.
fn compare_output(shown: &[String], out: &str, err: &str) -> Result<(), String> {
    let out: Vec<&str> = out.lines().collect();
    let err: Vec<&str> = err.lines().collect();
    let mut next = 0;
    let mut may_skip = false;
    for line in shown {
        if line.trim() == "…" {
            may_skip = true;
            continue;
        }
        let window = if may_skip {
            &out[next.min(out.len())..]
        } else {
            &out[next.min(out.len())..(next + 1).min(out.len())]
        };
        if let Some(at) = window.iter().position(|actual| matches(line, actual)) {
            next += at + 1;
            may_skip = false;
        } else if !err.iter().any(|actual| matches(line, actual)) {
            let expected = out
                .get(next)
                .map_or("(the end of stdout)".to_string(), |l| {
                    format!("{l:?}, shape {:?}", shape(l))
                });
            return Err(format!(
                "the shown line {line:?} (shape {:?}) is not printed there: stdout has {expected}",
                shape(line)
            ));
        }
    }
    Ok(())
}

/// A Markdown file's checked examples: (the arguments to run, the shown output).
fn checked_examples(text: &str) -> Vec<(Vec<String>, Vec<String>)> {
    fenced_blocks(text)
        .into_iter()
        .filter_map(|(comment, body)| {
            let comment = comment?;
            let given = comment.strip_prefix("checked")?;
            let (first, shown) = body.split_first().expect("a checked block is not empty");
            let shown_command = first
                .strip_prefix("$ ")
                .unwrap_or_else(|| panic!("expected a checked block to start with `$ `: {first}"));
            let args = match given.trim().strip_prefix(':') {
                Some(run) => iolens_args(run.trim()),
                None => iolens_args(shown_command),
            };
            Some((args, shown.to_vec()))
        })
        .collect()
}

/// The files an example needs: the blocks marked `<!-- file: NAME -->`.
fn example_files(text: &str) -> Vec<(String, String)> {
    fenced_blocks(text)
        .into_iter()
        .filter_map(|(comment, body)| {
            let name = comment?.strip_prefix("file:")?.trim().to_string();
            Some((name, body.join("\n") + "\n"))
        })
        .collect()
}

#[test]
fn docs_checked_examples_print_what_they_show() {
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        let examples = checked_examples(&text);
        if examples.is_empty() {
            continue;
        }
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        let dir = scratch();
        for (file_name, contents) in example_files(&text) {
            std::fs::write(dir.path().join(file_name), contents).unwrap();
        }
        let db = dir.path().join("history.db");
        for (args, shown) in examples {
            let out = command()
                .current_dir(dir.path())
                .env("IOLENS_DB", &db)
                .args(&args)
                .output()
                .expect("run iolens");
            let run = format!("{name}: `iolens {}`", args.join(" "));
            assert!(
                out.status.success(),
                "{run} failed ({:?}): {}",
                out.status.code(),
                stderr(&out)
            );
            if let Some(html) = args.iter().position(|a| a == "--html") {
                let page = dir.path().join(&args[html + 1]);
                assert!(
                    page.exists(),
                    "{run}: expected it to write {}",
                    page.display()
                );
            }
            if let Err(why) = compare_output(&shown, &stdout(&out), &stderr(&out)) {
                panic!(
                    "{run}: {why}\n--- stdout:\n{}--- stderr:\n{}",
                    stdout(&out),
                    stderr(&out)
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 5,
        "expected the docs to check at least the tour's examples, found {checked}"
    );
}

#[test]
fn docs_shapes_hide_numbers_not_words() {
    assert_eq!(
        shape("SEQ1M-Q8T1-read    1579.1   1506   5.29 ms  644.51 µs"),
        "SEQ#M-Q#T#-read # # # #"
    );
    assert_eq!(shape("+3.2 % (-1.0 % … −4 %)"), "# (# … #)");
    assert_eq!(shape("  iops  -  #2  #1, #3"), "iops # # #");
    assert_eq!(shape("r iops 5k IO/s +1.0%  B slower"), "r iops # IO/s # #");
    assert_eq!(
        shape("r cpu_per_io 9.04 µs 7.71 µs -14.7% B uses less CPU"),
        shape("r cpu_per_io 5.78 µs 5.60 µs -3.2% no significant difference")
    );
    assert!(matches("test  MB/s  IOPS", "test     MB/s      IOPS"));
    assert!(!matches("test  MB/s  IOPS", "test     MiB/s     IOPS"));
    assert!(matches(
        "iolens quick: ./… (temporary)",
        "iolens quick: ./.iolens-x1 (temporary)"
    ));
    let shown = ["a 1".to_string(), "…".to_string(), "c 3".to_string()];
    assert!(compare_output(&shown, "a 5\nb 6\nc 7\n", "").is_ok());
    assert!(compare_output(&shown[..1], "a 5\n", "").is_ok());
    assert!(compare_output(&["a".to_string(), "c".to_string()], "a\nb\nc\n", "").is_err());
    assert!(compare_output(&["note".to_string()], "a\n", "x\nnote\n").is_ok());
}
