//! Hostile text in every field a user controls (job names, directory and file
//! names, options, the command line) reaches the HTML pages as text only: no
//! element is injected, no script runs, in the run, stored run, repeat, quick
//! and comparison pages, read as written and as Chromium builds them.

use crate::browser::{chromium_or_skip, render};
use crate::support::{iolens_ok, scratch};
use std::path::{Path, PathBuf};

/// Sets the title if it ever runs: the pages' titles must stay their own.
const IMG: &str = "<img src=x onerror=document.title=\"pwned\">";
const SVG: &str = "<svg onload=document.title='pwned'>";
/// Across two path components (a name cannot hold `/`): the path holds the whole tag.
const SCRIPT: &str = "\"'><script>document.title='pwned'</script>";

/// A directory whose path holds all three payloads, inside `root`.
fn hostile_dir(root: &Path) -> PathBuf {
    let (open, close) = SCRIPT.split_once('/').unwrap();
    let dir = root.join(SVG).join(open).join(close);
    std::fs::create_dir_all(&dir).unwrap();
    assert!(dir.to_str().unwrap().contains(SCRIPT) && dir.to_str().unwrap().contains(SVG));
    dir
}

/// The page as written: none of the payloads raw, nothing injected, the CSP in its head.
fn written_page_is_inert(name: &str, html: &Path) -> String {
    let page = std::fs::read_to_string(html).unwrap();
    for raw in [IMG, SVG, SCRIPT] {
        assert!(
            !page.contains(raw),
            "{name}: the raw payload {raw:?} is in the page"
        );
    }
    no_injected_elements(name, &page);
    assert!(
        page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"")
            && page.contains("script-src 'none'"),
        "{name}: expected a CSP forbidding scripts in the head"
    );
    page
}

/// Each element of `html` as its tag name and its attributes' names, lower case
/// (attribute values skipped whole, so markup inside a value is no element).
fn elements(html: &str) -> Vec<(String, Vec<String>)> {
    let b = html.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    let word = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && !b"\t\n\x0c\r />=".contains(&b[*i]) {
            *i += 1;
        }
        html[from..*i].to_ascii_lowercase()
    };
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        i += 1;
        if i < b.len() && (b[i] == b'/' || b[i] == b'!') {
            i += html[i..].find('>').map_or(b.len() - i, |end| end + 1);
            continue;
        }
        let name = word(&mut i);
        let mut attributes = Vec::new();
        while i < b.len() && b[i] != b'>' {
            if b" \t\n\r\x0c/".contains(&b[i]) {
                i += 1;
                continue;
            }
            attributes.push(word(&mut i));
            if i < b.len() && b[i] == b'=' {
                i += 1;
                match b.get(i) {
                    Some(&q) if q == b'"' || q == b'\'' => {
                        i += 1 + html[i + 1..].find(q as char).map_or(b.len(), |end| end + 1);
                    }
                    _ => {
                        word(&mut i);
                    }
                }
            }
        }
        found.push((name, attributes));
    }
    found
}

/// No element a payload would inject and no event handler on any element.
fn no_injected_elements(name: &str, html: &str) {
    for (tag, attributes) in elements(html) {
        assert!(
            !["img", "script", "iframe", "object", "embed"].contains(&tag.as_str()),
            "{name}: an injected <{tag}> element"
        );
        assert!(
            !attributes.iter().any(|a| a.starts_with("on")),
            "{name}: an event handler on <{tag}>: {attributes:?}"
        );
    }
}

/// The DOM Chromium built: nothing injected, the payload as text, the title untouched.
fn dom_is_inert(name: &str, dom: &str, title: &str) {
    no_injected_elements(name, dom);
    assert!(
        dom.contains(&format!("<title>{title}</title>")) && !dom.contains("pwned</title>"),
        "{name}: expected the title {title:?} untouched (no script ran)"
    );
}

#[test]
fn hostile_names_paths_and_options_stay_text_on_every_page() {
    let root = scratch();
    let dir = hostile_dir(root.path());
    let db = root.path().join("h.db");
    let db = db.to_str().unwrap();
    let html = |name: &str| root.path().join(name);
    let run = |page: &Path, extra: &[&str]| {
        let mut args = vec![
            "run".to_string(),
            format!("--name={IMG}"),
            "--rw=randread".into(),
            format!("--directory={}", dir.display()),
            format!("--filename={SVG}.dat"),
            "--size=8m".into(),
            "--bs=4k".into(),
            "--runtime=200ms".into(),
            "--time_based".into(),
            format!("--db={db}"),
            format!("--html={}", page.display()),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        iolens_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    };
    let quick = |page: &Path, extra: &[&str]| {
        let target = dir.display().to_string();
        let page = page.display().to_string();
        let mut args = vec!["quick", &target, "--db", db, "--html", &page];
        args.extend(["--read-only", "--duration=200ms", "--ramp=0", "--size=8m"]);
        args.extend(extra);
        iolens_ok(&args);
    };
    run(&html("run.html"), &[]);
    iolens_ok(&[
        "report",
        "1",
        "--db",
        db,
        "--html",
        html("stored.html").to_str().unwrap(),
    ]);
    run(&html("repeat.html"), &["--repeat=2"]);
    run(&html("compared.html"), &["--compare-with=1"]);
    quick(&html("quick.html"), &[]);
    quick(&html("quick-compared.html"), &["--compare-with=last"]);

    // (name, file, its title, shows the directory (Environment), shows the job name)
    let pages = [
        ("the run page", "run.html", "iolens report", true, true),
        (
            "the stored run's page",
            "stored.html",
            "iolens report",
            true,
            true,
        ),
        (
            "the repeat page",
            "repeat.html",
            "iolens repeat report",
            true,
            true,
        ),
        (
            "the comparison page",
            "compared.html",
            "iolens comparison",
            false,
            true,
        ),
        ("the quick page", "quick.html", "iolens report", true, false),
        (
            "quick's comparison page",
            "quick-compared.html",
            "iolens comparison",
            false,
            false,
        ),
    ];
    for (name, file, _, directory, job) in pages {
        let page = written_page_is_inert(name, &html(file));
        assert!(
            !directory || page.contains("&lt;svg onload=document.title=&#39;pwned&#39;&gt;"),
            "{name}: expected the directory's name shown as text"
        );
        assert!(
            !job || page.contains("&lt;img src=x onerror=document.title=&quot;pwned&quot;&gt;"),
            "{name}: expected the job's name shown as text"
        );
    }
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    for (name, file, title, directory, _) in pages {
        // render also fails on any console message (a CSP violation would log one)
        let dom = render(&chromium, &html(file));
        dom_is_inert(name, &dom, title);
        assert!(
            !directory || dom.contains("&lt;svg onload=document.title='pwned'&gt;"),
            "{name}: expected the directory's name as text in the DOM"
        );
    }
}
