//! The layering test: every `crate::` path in the library's own code (tests
//! left out) must follow an arrow of the module table in docs/ARCHITECTURE.md,
//! and no module outside `cmd/` and `console.rs` prints. The table is the one
//! place the allowed dependencies are written down; this test reads it, so the
//! document and the code cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The architecture page whose module table holds the allowed arrows.
const ARCHITECTURE: &str = include_str!("../docs/ARCHITECTURE.md");

/// A module's name (its file or folder under src/) and the modules it may use.
type Arrows = BTreeMap<String, BTreeSet<String>>;

/// The table rows of ARCHITECTURE.md's module table: `| \`name\` | … | \`a\` \`b\` |`,
/// the last column naming what the module may use ("—" for nothing).
fn allowed_arrows(page: &str) -> Arrows {
    let mut arrows = Arrows::new();
    for line in page.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let names = |cell: &str| -> BTreeSet<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(|name| {
                    name.trim_end_matches('/')
                        .trim_end_matches(".rs")
                        .to_string()
                })
                .collect()
        };
        let module = names(cells[0]).into_iter().next().expect("a module name");
        let uses = names(cells.last().expect("a last column"));
        arrows.insert(module, uses);
    }
    arrows
}

/// The module a line declares (`mod x;`, `pub(super) mod tests {`), if it declares one.
fn declared_module(line: &str) -> Option<&str> {
    let line = line.trim();
    let line = match line.strip_prefix("pub") {
        Some(rest) if rest.starts_with('(') => rest.split_once(") ")?.1,
        Some(rest) => rest.trim_start(),
        None => line,
    };
    let name = line.strip_prefix("mod ")?;
    Some(name.trim_end_matches([';', '{', ' ']))
}

/// Every source file under `dir`, with the test-only modules (`#[cfg(test)] mod x;`,
/// in `dir/x.rs` when declared by a `mod.rs`, in `dir/file/x.rs` when declared by
/// `dir/file.rs`) left out.
fn library_sources(dir: &Path, test_only: &mut BTreeSet<PathBuf>, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read a source directory")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let text = std::fs::read_to_string(path).expect("read a source file");
        let lines: Vec<&str> = text.lines().collect();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let home = match stem {
            "mod" | "lib" | "main" => dir.to_path_buf(),
            _ => dir.join(stem),
        };
        for pair in lines.windows(2) {
            if pair[0].trim() == "#[cfg(test)]" && pair[1].trim_end().ends_with(';') {
                if let Some(name) = declared_module(pair[1]) {
                    test_only.insert(home.join(name));
                    test_only.insert(home.join(format!("{name}.rs")));
                }
            }
        }
    }
    for path in entries {
        if test_only.contains(&path) {
            continue;
        }
        if path.is_dir() {
            library_sources(&path, test_only, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a source file up to its `#[cfg(test)]` module: the library's own code.
fn without_tests(text: &str) -> &str {
    let mut at = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let next_declares = lines
            .peek()
            .is_some_and(|next| declared_module(next).is_some());
        if line.trim() == "#[cfg(test)]" && next_declares {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// The top-level module a file under src/ belongs to (`runner` for src/runner/worker.rs).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("a file under src/");
    let first = relative.components().next().expect("a path");
    let name = first.as_os_str().to_str().expect("a UTF-8 name");
    name.trim_end_matches(".rs").to_string()
}

/// The modules a text names with `crate::NAME`, among `modules`.
fn used_modules(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    text.match_indices("crate::")
        .filter(|(at, _)| !text[..*at].ends_with('$'))
        .filter_map(|(at, found)| {
            let rest = &text[at + found.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            modules.contains(&name).then_some(name)
        })
        .collect()
}

/// Each module's arrows as the code has them, and the files that print.
fn arrows_in_code() -> (Arrows, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    library_sources(&src, &mut BTreeSet::new(), &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut arrows = Arrows::new();
    let mut printing = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).expect("read a source file");
        let code = without_tests(&text);
        let mut uses = used_modules(code, &modules);
        uses.remove(&module);
        arrows.entry(module.clone()).or_default().extend(uses);
        let prints = ["println!(", "print!(", "eprintln!(", "eprint!("]
            .iter()
            .any(|mac| code.contains(mac));
        if prints && !matches!(module.as_str(), "cmd" | "console" | "main") {
            printing.push(file.strip_prefix(&src).unwrap().display().to_string());
        }
    }
    (arrows, printing)
}

#[test]
fn every_dependency_follows_an_arrow_of_the_architecture_table() {
    let allowed = allowed_arrows(ARCHITECTURE);
    let (found, _) = arrows_in_code();
    let mut stray = Vec::new();
    for (module, uses) in &found {
        let Some(may) = allowed.get(module) else {
            stray.push(format!("{module}: not in the table (it uses {uses:?})"));
            continue;
        };
        for used in uses.difference(may) {
            stray.push(format!("{module} → {used}"));
        }
    }
    assert!(
        stray.is_empty(),
        "expected every arrow in docs/ARCHITECTURE.md's module table; not there: {stray:?}"
    );
    let unused: Vec<String> = allowed
        .iter()
        .flat_map(|(module, may)| {
            let uses = found.get(module).cloned().unwrap_or_default();
            may.difference(&uses)
                .map(|m| format!("{module} → {m}"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        unused.is_empty(),
        "expected the table to allow only arrows the code has; remove: {unused:?}"
    );
}

#[test]
fn only_cmd_and_console_print() {
    let (_, printing) = arrows_in_code();
    assert!(
        printing.is_empty(),
        "expected printing only in cmd/ and console.rs (other modules return text or call \
         console::warn); printing: {printing:?}"
    );
}

/// A module that reaches itself through the table's arrows, if any: the layers
/// must stack, so no chain of arrows may come back to where it started.
fn first_cycle(arrows: &Arrows) -> Option<Vec<String>> {
    fn visit(module: &str, arrows: &Arrows, path: &mut Vec<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        path.push(module.to_string());
        for next in arrows.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, arrows, path) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    arrows
        .keys()
        .find_map(|module| visit(module, arrows, &mut Vec::new()))
}

#[test]
fn the_table_has_no_cycle() {
    let cycle = first_cycle(&allowed_arrows(ARCHITECTURE));
    assert_eq!(
        cycle, None,
        "expected the module table's arrows to form layers"
    );
    let looped = allowed_arrows("| `a` | x | `b` |\n| `b` | y | `a` |\n");
    assert_eq!(
        first_cycle(&looped),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
}

#[test]
fn a_table_row_names_the_module_and_what_it_may_use() {
    let page = "| `runner/` | the run | `engine/` `stats` |\n| `units` | numbers | — |\n";
    let arrows = allowed_arrows(page);
    assert_eq!(
        arrows["runner"],
        BTreeSet::from(["engine".into(), "stats".into()])
    );
    assert!(arrows["units"].is_empty());
}

#[test]
fn test_modules_and_macro_paths_are_not_arrows() {
    assert_eq!(declared_module("pub(super) mod tests {"), Some("tests"));
    assert_eq!(declared_module("mod proptests;"), Some("proptests"));
    assert_eq!(declared_module("fn f() {"), None);
    let modules = BTreeSet::from(["job".to_string(), "report".to_string()]);
    let text = "use crate::job::X;\n$crate::report::y\n#[cfg(test)]\nmod tests {\n use crate::report::Z;\n}\n";
    assert_eq!(
        used_modules(without_tests(text), &modules),
        BTreeSet::from(["job".to_string()])
    );
}
