//! The HTML pages in a real browser: Chromium headless renders a page at a
//! desktop's and a narrow window's width, and its DOM is read back to check the
//! charts as drawn: integer ticks on counts, human units, dots inside their
//! frames, no two marker labels on top of each other.

use crate::support::{iolens_ok, stderr};
use std::path::{Path, PathBuf};

/// Chromium, if installed; else the caller's test is skipped, saying so.
pub(crate) fn chromium_or_skip() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
    }
    found
}

/// Chromium headless with a fresh profile, quiet about everything but the page.
pub(crate) fn headless(chromium: &Path, profile: &Path, args: &[&str]) -> std::process::Output {
    crate::support::isolated(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("run chromium")
}

/// The page at `html` as a desktop (1280 px) and a narrow window (720 px) show
/// it: each screenshot as wide as its window, in the charts' colours, with no
/// console messages. Returns the DOM Chromium built.
pub(crate) fn render(chromium: &Path, html: &Path) -> String {
    let url = format!("file://{}", html.display());
    let shots = tempfile::tempdir().unwrap();
    for (width, height) in [(1280, 2400), (720, 1600)] {
        let png = shots.path().join(format!("shot-{width}.png"));
        let profile = tempfile::tempdir().unwrap();
        let shot = headless(
            chromium,
            profile.path(),
            &[
                &format!("--window-size={width},{height}"),
                &format!("--screenshot={}", png.display()),
                &url,
            ],
        );
        let log = stderr(&shot);
        assert!(
            png.exists(),
            "expected a screenshot of {} at {width}×{height}, saw none: {log}",
            html.display()
        );
        let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
        assert!(
            console.is_empty(),
            "expected no console messages from {}, saw {console:?}",
            html.display()
        );
        let (seen_width, colours) = png_width_and_colours(&png);
        assert_eq!(
            seen_width, width,
            "expected the screenshot as wide as the window"
        );
        assert!(
            colours > 16,
            "expected the charts' colours (a blank page has few), saw {colours} colours"
        );
    }
    let profile = tempfile::tempdir().unwrap();
    crate::support::stdout(&headless(chromium, profile.path(), &["--dump-dom", &url]))
}

/// The image width and the number of distinct RGB colours in it.
pub(crate) fn png_width_and_colours(path: &Path) -> (u32, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let mut colours: Vec<[u8; 3]> = pixels[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| p.len() >= 3)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    colours.sort_unstable();
    colours.dedup();
    (info.width, colours.len())
}

/// The figure with id `id` in the page.
pub(crate) fn chart<'a>(dom: &'a str, id: &str) -> &'a str {
    dom.split(&format!("id=\"{id}\""))
        .nth(1)
        .and_then(|rest| rest.split("</figure>").next())
        .unwrap_or_else(|| panic!("expected the chart {id} in the DOM"))
}

/// The number in attribute `name` of the first element of `svg` that has it.
pub(crate) fn attribute(svg: &str, name: &str) -> f64 {
    let value = text_attribute(svg, name).unwrap_or_else(|| panic!("expected {name} in {svg}"));
    value
        .parse()
        .unwrap_or_else(|e| panic!("expected a number in {name}, saw {value}: {e}"))
}

/// Attribute `name` of the first element of `svg` that has it.
fn text_attribute<'a>(svg: &'a str, name: &str) -> Option<&'a str> {
    svg.split(&format!(" {name}=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
}

/// A chart as Chromium built it: its id, its frame and what is drawn in it.
struct Chart<'a> {
    id: &'a str,
    /// The plot area: left, top, right, bottom.
    frame: (f64, f64, f64, f64),
    svg: &'a str,
}

/// The page's charts that have axes (a chart with no data has none).
fn charts(dom: &str) -> Vec<Chart<'_>> {
    dom.split("<figure class=\"chart\" id=\"")
        .skip(1)
        .filter_map(|rest| {
            let id = rest.split('"').next().unwrap();
            let svg = rest.split("</figure>").next().unwrap();
            let area = svg.split("class=\"plot-area\"").nth(1)?;
            let area = &area[..area.find('>').unwrap()];
            let (x, y) = (attribute(area, "x"), attribute(area, "y"));
            let (w, h) = (attribute(area, "width"), attribute(area, "height"));
            Some(Chart {
                id,
                frame: (x, y, x + w, y + h),
                svg,
            })
        })
        .collect()
}

/// A text element: its opening tag's attributes and what it says.
struct Text<'a> {
    tag: &'a str,
    says: String,
}

impl Text<'_> {
    fn number(&self, name: &str) -> f64 {
        attribute(self.tag, name)
    }
}

/// The text elements of `svg` (the words only, not a tooltip's).
fn texts(svg: &str) -> Vec<Text<'_>> {
    svg.split("<text")
        .skip(1)
        .map(|rest| {
            let end = rest.find('>').unwrap();
            let body = &rest[end + 1..];
            let body = &body[..body.find("</text>").unwrap_or(body.len())];
            let says = body.split('<').next().unwrap_or_default();
            Text {
                tag: &rest[..end],
                says: says
                    .replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">"),
            }
        })
        .collect()
}

/// "1.5k" as 1500, "2M" as 2000000: a tick's number without its unit.
fn tick_value(label: &str) -> Option<f64> {
    let number = label.split(' ').next()?;
    let (digits, factor) = match number.chars().last()? {
        'k' => (&number[..number.len() - 1], 1e3),
        'M' => (&number[..number.len() - 1], 1e6),
        'G' => (&number[..number.len() - 1], 1e9),
        _ => (number, 1.0),
    };
    digits.parse::<f64>().ok().map(|v| v * factor)
}

/// Every chart on the page reads as a person expects: checks of the charts as
/// Chromium built them, failing with every problem seen.
pub(crate) fn charts_are_legible(page: &str, dom: &str) {
    let charts = charts(dom);
    assert!(!charts.is_empty(), "expected charts on {page}");
    let mut problems: Vec<String> = Vec::new();
    for c in &charts {
        chart_problems(c, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "expected {page}'s charts legible, saw {} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// What is wrong with chart `c`, each problem a line in `problems`.
fn chart_problems(c: &Chart, problems: &mut Vec<String>) {
    let (left, top, right, bottom) = c.frame;
    let texts = texts(c.svg);
    // The x ticks hang below the frame, the y ticks stand left of it; the axis
    // titles are the larger text, the y axis' turned.
    let x_ticks: Vec<&Text> = texts
        .iter()
        .filter(|t| {
            let y = t.number("y");
            t.tag.contains("text-anchor=\"middle\"")
                && y > bottom
                && y <= bottom + 20.0
                && !t.tag.contains("font-size=\"12\"")
        })
        .collect();
    let y_ticks: Vec<&Text> = texts
        .iter()
        .filter(|t| t.tag.contains("text-anchor=\"end\"") && t.number("x") < left)
        .collect();
    let titles: Vec<&Text> = texts
        .iter()
        .filter(|t| t.tag.contains("font-size=\"12\""))
        .collect();
    let x_title = titles.iter().find(|t| !t.tag.contains("rotate"));
    let y_title = titles.iter().find(|t| t.tag.contains("rotate"));

    if x_title.is_some_and(|t| t.says.starts_with("repetition")) {
        let labels: Vec<&str> = x_ticks.iter().map(|t| t.says.as_str()).collect();
        if labels.is_empty() || labels.iter().any(|l| l.parse::<u64>().is_err()) {
            problems.push(format!(
                "{}: expected whole repetition numbers on the x axis, saw ticks {labels:?}",
                c.id
            ));
        }
    }

    // Times and rates in human units: no "4M ns", no tick of 1000 ns, µs, ms,
    // B/s, KiB/s or MiB/s (the next unit up says it).
    let units = ["ns", "µs", "ms", "B/s", "KiB/s", "MiB/s"];
    for t in &texts {
        let unit = t.says.rsplit(' ').next().unwrap_or_default();
        let number = t.says.strip_suffix(unit).map(str::trim_end);
        if t.says.contains(' ')
            && units.contains(&unit)
            && number.and_then(tick_value).is_some_and(|v| v >= 1000.0)
        {
            problems.push(format!(
                "{}: expected {:?} said in the next unit up",
                c.id, t.says
            ));
        }
    }
    for (title, ticks) in [(x_title, &x_ticks), (y_title, &y_ticks)] {
        let Some(title) = title else { continue };
        let scaled = units
            .iter()
            .any(|u| title.says == *u || title.says.ends_with(&format!("({u})")));
        let big: Vec<&str> = ticks
            .iter()
            .filter(|t| tick_value(&t.says).is_some_and(|v| v >= 1000.0))
            .map(|t| t.says.as_str())
            .collect();
        if scaled && !big.is_empty() {
            problems.push(format!(
                "{}: expected an axis in {:?} to tick below 1000, saw {big:?}",
                c.id, title.says
            ));
        }
    }

    // Every dot whole inside its frame.
    for dot in c.svg.split("<circle").skip(1) {
        let dot = &dot[..dot.find('>').unwrap()];
        let (cx, cy, r) = (
            attribute(dot, "cx"),
            attribute(dot, "cy"),
            attribute(dot, "r"),
        );
        if !(cx - r >= left && cx + r <= right && cy - r >= top && cy + r <= bottom) {
            problems.push(format!(
                "{}: expected the dot at ({cx}, {cy}) of radius {r} inside the frame {:?}",
                c.id, c.frame
            ));
        }
    }

    // Markers' labels (a job's span, a finding's moment) clear of each other,
    // their widths estimated from their length.
    let labels: Vec<(f64, f64, f64, f64, String)> = c
        .svg
        .split("class=\"marker\"")
        .skip(1)
        .filter_map(|rest| {
            let line_end = rest.find("</line>").map_or(0, |e| e + 7);
            // A label left out has no text after its line.
            let text = rest[line_end..].trim_start_matches("</a>");
            if !text.starts_with("<text") {
                return None;
            }
            let label = self::texts(text).into_iter().next()?;
            let (x, y) = (label.number("x"), label.number("y"));
            let size = text_attribute(label.tag, "font-size")
                .and_then(|s| s.parse().ok())
                .unwrap_or(11.0);
            let width = label.says.chars().count() as f64 * size * 0.6;
            Some((x, y - size, x + width, y, label.says))
        })
        .collect();
    for (i, a) in labels.iter().enumerate() {
        for b in &labels[i + 1..] {
            let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
            if !apart {
                problems.push(format!(
                    "{}: expected the labels {:?} and {:?} apart, their boxes overlap: {a:?} {b:?}",
                    c.id, a.4, b.4
                ));
            }
        }
    }
}

/// `iolens run` with the options given, its HTML page written to `html`.
fn run_page(dir: &Path, html: &Path, jobs: &[&str]) {
    let db = dir.join("h.db");
    let mut args = vec![
        "run".to_string(),
        format!("--directory={}", dir.display()),
        "--size=8m".into(),
        "--bs=4k".into(),
        "--runtime=300ms".into(),
        "--time_based".into(),
        format!("--db={}", db.display()),
        format!("--html={}", html.display()),
    ];
    args.extend(jobs.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    iolens_ok(&args);
}

#[test]
fn run_pages_render_legibly_in_a_browser() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = crate::support::scratch();
    // Two jobs side by side: their spans start together on the system's charts.
    let together = [
        "--name=randread",
        "--rw=randread",
        "--name=randwrite",
        "--rw=randwrite",
    ];
    let run = dir.path().join("run.html");
    run_page(dir.path(), &run, &together);
    let dom = render(&chromium, &run);
    let bands = chart(&dom, "chart-obs-ios")
        .matches("class=\"band\"")
        .count();
    assert_eq!(bands, 2, "expected a span per job on the system's charts");
    charts_are_legible("the run page", &dom);

    // Three repetitions: a dot per repetition, at 1, 2 and 3.
    let repeat = dir.path().join("repeat.html");
    let mut repeated = vec!["--repeat=3"];
    repeated.extend(together);
    run_page(dir.path(), &repeat, &repeated);
    let dom = render(&chromium, &repeat);
    let dots = chart(&dom, "chart-repeat-0").matches("<circle").count();
    assert_eq!(dots, 3, "expected a dot per repetition");
    charts_are_legible("the repetitions page", &dom);
}
