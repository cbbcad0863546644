//! Inline SVG charts for the HTML report: line charts over time (linear or log y,
//! or a percentile axis in nines), a log-x histogram, dot plots and grouped bars,
//! with labelled axes. Small on purpose: the report needs five chart shapes, not a
//! plotting library.

use super::escape::escape;
use std::fmt::Write;

/// Drawing area in SVG units; the page scales it to its width.
const WIDTH: f64 = 1160.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 42.0;

/// Colours that stay apart in print and for common colour blindness.
pub(crate) const PALETTE: [&str; 6] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    Linear,
    /// Base 10; values ≤ 0 are left out.
    Log,
    /// Percentiles (0 ≤ p < 100) placed by their nines, −log10(1 − p/100), so that
    /// p90, p99, p99.9 and p99.99 are evenly spread and the tail has room.
    Nines,
}

/// What an axis' values are, and so how its ticks are said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Plain numbers, the unit in the axis label: 0.5, 20, 1.5k, 2M.
    Number,
    /// Whole things (repetitions, I/Os, ranks): integer ticks only.
    Count,
    /// Nanoseconds, said in ns, µs, ms or s as their size asks, as the text report does.
    Nanoseconds,
    /// Bytes per second, said in B/s, KiB/s, MiB/s or GiB/s (fio's binary units).
    BytesPerSec,
}

#[derive(Debug, Clone)]
pub(crate) struct Axis {
    /// What the axis shows; with a plain unit also that: "time (s)", "IOPS". An
    /// axis in `Unit::Nanoseconds` or `Unit::BytesPerSec` gets its unit added.
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
    /// The span shown, when it is not fitted to the data (a job's window of the run).
    pub span: Option<(f64, f64)>,
}

impl Axis {
    fn new(label: &str, scale: Scale) -> Axis {
        Axis {
            label: label.into(),
            scale,
            unit: Unit::Number,
            span: None,
        }
    }
    /// A linear axis of whole things: ticks at integers only.
    pub(crate) fn count(label: &str) -> Axis {
        Axis::linear(label).in_unit(Unit::Count)
    }
    /// This axis with its values in `unit`.
    pub(crate) fn in_unit(self, unit: Unit) -> Axis {
        Axis { unit, ..self }
    }
    pub(crate) fn linear(label: &str) -> Axis {
        Axis::new(label, Scale::Linear)
    }
    pub(crate) fn log(label: &str) -> Axis {
        Axis::new(label, Scale::Log)
    }
    pub(crate) fn nines(label: &str) -> Axis {
        Axis::new(label, Scale::Nines)
    }
    /// This axis showing `from..to` whatever the data: points outside are not drawn.
    pub(crate) fn spanning(self, from: f64, to: f64) -> Axis {
        Axis {
            span: Some((from, to)),
            ..self
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A vertical line at `x` with a short label: a job start, a moment a finding points at;
/// with `until`, a shaded band from `x` to it (a job's window).
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    pub x: f64,
    pub until: Option<f64>,
    pub label: String,
    /// Where the marker links to (a finding's anchor); such markers are drawn in the warning colour.
    pub link: Option<String>,
}

/// What every chart has: an id (for links and tests), a title and two axes.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
}

/// Lines through each series' points, in order.
pub(crate) fn line_chart(frame: &Frame, series: &[Series], markers: &[Marker]) -> String {
    let all = series.iter().flat_map(|s| s.points.iter().copied());
    let marked = markers
        .iter()
        .flat_map(|m| std::iter::once(m.x).chain(m.until));
    match Plot::fit(frame, all, marked) {
        Some(plot) => draw_lines(&plot, frame, series, markers),
        None => empty(frame),
    }
}

/// Line charts drawn on the same axes (fitted to all their points), to be read one
/// above the other; the first frame's scales apply to all.
pub(crate) fn line_charts_on_shared_axes(charts: &[(Frame, Vec<Series>)]) -> Vec<String> {
    let all = charts
        .iter()
        .flat_map(|(_, series)| series.iter().flat_map(|s| s.points.iter().copied()));
    let plot = charts
        .first()
        .and_then(|(frame, _)| Plot::fit(frame, all, std::iter::empty()));
    charts
        .iter()
        .map(|(frame, series)| match &plot {
            Some(plot) if series.iter().any(|s| !s.points.is_empty()) => {
                draw_lines(plot, frame, series, &[])
            }
            _ => empty(frame),
        })
        .collect()
}

fn draw_lines(plot: &Plot, frame: &Frame, series: &[Series], markers: &[Marker]) -> String {
    let mut body = plot.axes(frame);
    let shown: Vec<&Marker> = markers.iter().filter(|m| plot.x.covers(m.x)).collect();
    for (m, label) in shown.iter().zip(marker_labels(plot, &shown)) {
        marker(&mut body, plot, m, label);
    }
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .filter(|&&(x, y)| plot.fits(x, y))
            .map(|&(x, y)| format!("{:.1},{:.1}", plot.px(x), plot.py(y)))
            .collect();
        let _ = write!(
            body,
            r#"<polyline class="series" fill="none" stroke="{color}" stroke-width="1.8" points="{}"/>"#,
            path.join(" ")
        );
        legend(&mut body, i, &s.label, color);
    }
    wrap(frame, &body)
}

/// The font size of markers' labels.
const LABEL_FONT: f64 = 11.0;
/// The space between two labels on a line.
const LABEL_GAP: f64 = 4.0;

/// The width `text` takes at `font_size`, estimated from its length: sans-serif
/// glyphs average under 0.6 em, so this errs on the wide side.
fn text_width(text: &str, font_size: f64) -> f64 {
    text.chars().count() as f64 * font_size * 0.6
}

/// A label that wants to start at `x`, on the first of `rows` with room.
struct LabelSpec<'a> {
    x: f64,
    text: &'a str,
    rows: std::ops::Range<usize>,
}

/// Where a label went: its row, its start and the text shown (shortened with "…"
/// when the next label needed the room).
#[derive(Debug, Clone, PartialEq)]
struct Placed {
    row: usize,
    x: f64,
    text: String,
}

/// Lays out labels so that no two overlap, judged by `text_width`: in order of
/// x, each goes on the first of its rows where it clears the labels already
/// there. When none has room, the label on its rows that ends first is
/// shortened to end before it ("rand…"); when that would leave fewer than two
/// of its characters, the new label is left out (None) instead. Labels that
/// would run past `right` start further left.
fn layout_labels(labels: &[LabelSpec], font_size: f64, right: f64) -> Vec<Option<Placed>> {
    let mut placed: Vec<Option<Placed>> = vec![None; labels.len()];
    let rows = labels.iter().map(|l| l.rows.end).max().unwrap_or(0);
    // The label placed last on each row: the rightmost, as labels come in order of x.
    let mut last: Vec<Option<usize>> = vec![None; rows];
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| labels[a].x.total_cmp(&labels[b].x));
    for i in order {
        let label = &labels[i];
        let x = label
            .x
            .min(right - text_width(label.text, font_size))
            .max(0.0);
        let end = |row: usize| -> f64 {
            last[row]
                .and_then(|j| placed[j].as_ref())
                .map_or(f64::NEG_INFINITY, |p| p.x + text_width(&p.text, font_size))
        };
        let free = label.rows.clone().find(|&r| end(r) + LABEL_GAP <= x);
        let row = match free {
            Some(row) => row,
            None => {
                let Some(row) = label
                    .rows
                    .clone()
                    .min_by(|&a, &b| end(a).total_cmp(&end(b)))
                else {
                    continue;
                };
                let Some(earlier) = last[row].and_then(|j| placed[j].as_mut()) else {
                    continue;
                };
                let room = x - LABEL_GAP - earlier.x;
                let Some(short) = shortened(&earlier.text, room, font_size) else {
                    continue;
                };
                earlier.text = short;
                row
            }
        };
        placed[i] = Some(Placed {
            row,
            x,
            text: label.text.to_string(),
        });
        last[row] = Some(i);
    }
    placed
}

/// `text` cut to fit `room` with "…" after it, if at least two of its characters fit.
fn shortened(text: &str, room: f64, font_size: f64) -> Option<String> {
    let chars = (room / text_width("x", font_size)).floor() as usize;
    let keep = chars.checked_sub(1).filter(|&n| n >= 2)?;
    Some(text.chars().take(keep).chain(['…']).collect())
}

/// Where each marker's label goes: a band's above the frame, on two lines; a
/// moment's inside the frame, the job starts' on its top line and the linked
/// moments' on the three lines below it. (y, x, text) in SVG units; None: no room.
fn marker_labels(plot: &Plot, markers: &[&Marker]) -> Vec<Option<(f64, f64, String)>> {
    let specs: Vec<LabelSpec> = markers
        .iter()
        .map(|m| LabelSpec {
            x: plot.px(m.x) + 3.0,
            text: &m.label,
            rows: match (m.until, &m.link) {
                (Some(_), _) => 0..2,
                (None, None) => 2..3,
                (None, Some(_)) => 3..6,
            },
        })
        .collect();
    layout_labels(&specs, LABEL_FONT, WIDTH - 2.0)
        .into_iter()
        .map(|p| {
            p.map(|p| {
                let y = match p.row {
                    above @ 0..2 => TOP - 6.0 - 12.0 * above as f64,
                    line => TOP + 11.0 + 12.0 * (line - 2) as f64,
                };
                (y, p.x, p.text)
            })
        })
        .collect()
}

/// A marker, a band shaded up to `until` and its label where `marker_labels` put
/// it; a label shortened or left out is the tooltip of its band or line.
fn marker(body: &mut String, plot: &Plot, m: &Marker, label: Option<(f64, f64, String)>) {
    let x = plot.px(m.x);
    let color = if m.link.is_some() { PALETTE[1] } else { "#888" };
    let tooltip = match &label {
        Some((_, _, text)) if *text == m.label => String::new(),
        _ => format!("<title>{}</title>", escape(&m.label)),
    };
    if let Some(until) = m.until {
        let end = plot.px(until.min(plot.x.hi));
        let _ = write!(
            body,
            r##"<rect class="band" x="{x:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#888" fill-opacity="0.1">{tooltip}</rect>"##,
            (end - x).max(0.0),
            HEIGHT - TOP - BOTTOM
        );
    }
    let mut drawn = format!(
        r#"<line class="marker" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-dasharray="4 3">{tooltip}</line>"#,
        HEIGHT - BOTTOM,
    );
    if let Some((y, text_x, text)) = label {
        let _ = write!(
            drawn,
            r#"<text class="marker-label" x="{text_x:.1}" y="{y:.1}" font-size="{LABEL_FONT}" fill="{color}">{}</text>"#,
            escape(&text)
        );
    }
    match &m.link {
        Some(href) => {
            let _ = write!(body, r#"<a href="{}">{drawn}</a>"#, escape(href));
        }
        None => body.push_str(&drawn),
    }
}

/// One bar per (from, to, height) on the x axis: a histogram (x is usually log).
pub(crate) fn histogram(frame: &Frame, bars: &[(f64, f64, f64)]) -> String {
    let corners = bars.iter().flat_map(|&(a, b, h)| [(a, 0.0), (b, h)]);
    let Some(plot) = Plot::fit(frame, corners, std::iter::empty()) else {
        return empty(frame);
    };
    let mut body = plot.axes(frame);
    let base = plot.py(plot.y_min);
    for &(a, b, h) in bars {
        let (x0, x1, top) = (plot.px(a), plot.px(b), plot.py(h));
        let _ = write!(
            body,
            r#"<rect class="bar" x="{x0:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
            (x1 - x0).max(1.0),
            (base - top).max(0.0),
            PALETTE[0]
        );
    }
    wrap(frame, &body)
}

/// The radius of a dot and of a highlighted one.
const DOT: f64 = 4.0;
const BIG_DOT: f64 = 6.0;

/// Dots at (x, y); `highlighted` dots are drawn larger in the second colour.
/// The dots sit inside the frame by more than the largest radius, so that those
/// at the ends of the axes are whole.
pub(crate) fn dot_plot(frame: &Frame, dots: &[(f64, f64)], highlighted: &[usize]) -> String {
    let Some(plot) = Plot::fit(frame, dots.iter().copied(), std::iter::empty()) else {
        return empty(frame);
    };
    let plot = plot.inset(BIG_DOT + 4.0);
    let mut body = plot.axes(frame);
    for (i, &(x, y)) in dots.iter().enumerate() {
        let (r, color, class) = match highlighted.contains(&i) {
            true => (BIG_DOT, PALETTE[1], "dot outlier"),
            false => (DOT, PALETTE[0], "dot"),
        };
        let _ = write!(
            body,
            r#"<circle class="{class}" cx="{:.1}" cy="{:.1}" r="{r}" fill="{color}"/>"#,
            plot.px(x),
            plot.py(y)
        );
    }
    wrap(frame, &body)
}

/// A group of bars side by side, one per series (None: that series has no bar here).
#[derive(Debug, Clone)]
pub(crate) struct BarGroup {
    pub label: String,
    pub values: Vec<Option<f64>>,
    /// A word over the group on a band shaded in the warning colour (a straggler).
    pub mark: Option<String>,
}

/// Past this many groups only every few are labelled and the bars carry no values:
/// there is no room for them.
const LABELLED_GROUPS: usize = 32;

/// Groups of bars along x, each bar in its series' colour with its value above it
/// (`value_text`; with many groups, no values and every few groups labelled); the
/// y axis is linear from zero.
pub(crate) fn grouped_bars(
    frame: &Frame,
    series: &[&str],
    groups: &[BarGroup],
    value_text: fn(f64) -> String,
) -> String {
    let values = groups
        .iter()
        .flat_map(|g| g.values.iter().flatten().copied());
    let Some(mut y) = Range::of(values.chain([0.0]), Scale::Linear, frame.y.unit) else {
        return empty(frame);
    };
    // Room above the tallest bar for its value.
    y.hi *= 1.15;
    let x = Range {
        lo: 0.0,
        hi: groups.len() as f64,
        scale: Scale::Linear,
        unit: Unit::Count,
    };
    let plot = Plot {
        x,
        y,
        y_min: 0.0,
        inset: 0.0,
    };
    let every = groups.len().div_ceil(LABELLED_GROUPS).max(1);
    let ticks = groups
        .iter()
        .enumerate()
        .step_by(every)
        .map(|(i, g)| (i as f64 + 0.5, g.label.clone()))
        .collect();
    let mut body = plot.axes_with(frame, ticks);
    let width = 0.7 / series.len().max(1) as f64;
    for (i, g) in groups.iter().enumerate() {
        if let Some(mark) = &g.mark {
            let (x0, x1) = (plot.px(i as f64), plot.px(i as f64 + 1.0));
            let _ = write!(
                body,
                r#"<rect class="mark" data-group="{}" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="0.15"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="{}">{}</text>"#,
                escape(&g.label),
                x1 - x0,
                HEIGHT - TOP - BOTTOM,
                PALETTE[1],
                (x0 + x1) / 2.0,
                TOP - 6.0,
                PALETTE[1],
                escape(mark)
            );
        }
        for (s, value) in g.values.iter().enumerate() {
            let Some(value) = *value else { continue };
            let from = i as f64 + 0.15 + s as f64 * width;
            let (x0, x1, top) = (plot.px(from), plot.px(from + width), plot.py(value));
            let _ = write!(
                body,
                r#"<rect class="bar {}" data-group="{}" data-value="{value}" x="{x0:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                escape(series.get(s).copied().unwrap_or_default()),
                escape(&g.label),
                x1 - x0 - 2.0,
                (plot.py(0.0) - top).max(0.0),
                PALETTE[s % PALETTE.len()],
                (x0 + x1) / 2.0,
                top - 4.0,
                if every == 1 {
                    escape(&value_text(value))
                } else {
                    String::new()
                }
            );
        }
    }
    // one series is named by the y axis
    for (s, label) in series.iter().enumerate().filter(|_| series.len() > 1) {
        legend(&mut body, s, label, PALETTE[s % PALETTE.len()]);
    }
    wrap(frame, &body)
}

/// Data ranges mapped onto the drawing area.
struct Plot {
    x: Range,
    y: Range,
    y_min: f64,
    /// Room in SVG units between the frame and the data on every side, so that
    /// what is drawn around a point (a dot's radius) at the ends stays inside the frame.
    inset: f64,
}

#[derive(Clone, Copy)]
struct Range {
    lo: f64,
    hi: f64,
    scale: Scale,
    unit: Unit,
}

impl Range {
    /// The range of `values` on `axis`: its span when it has one (and values to show).
    fn on(axis: &Axis, values: impl Iterator<Item = f64>) -> Option<Range> {
        let fitted = Range::of(values, axis.scale, axis.unit)?;
        Some(match axis.span {
            Some((lo, hi)) if hi > lo => Range { lo, hi, ..fitted },
            _ => fitted,
        })
    }

    fn of(values: impl Iterator<Item = f64>, scale: Scale, unit: Unit) -> Option<Range> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|&v| Range::valid(scale, v)) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo > hi {
            return None;
        }
        Some(match scale {
            // From p0 to the first whole number of nines at or above the highest percentile.
            Scale::Nines => Range {
                lo: 0.0,
                hi: from_nines((nines(hi) - 1e-9).ceil().max(1.0)),
                scale,
                unit,
            },
            Scale::Log => Range {
                lo: 10f64.powf(lo.log10().floor()),
                hi: 10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
                scale,
                unit,
            },
            // One whole number (a single repetition): it, half a step each side.
            Scale::Linear if hi == lo && unit == Unit::Count => Range {
                lo: lo - 0.5,
                hi: hi + 0.5,
                scale,
                unit,
            },
            Scale::Linear if hi == lo => Range {
                lo: lo.min(0.0),
                hi: if hi == 0.0 { 1.0 } else { hi.abs() * 1.1 },
                scale,
                unit,
            },
            Scale::Linear => Range {
                lo,
                hi,
                scale,
                unit,
            },
        })
    }

    /// A value this scale can place: finite, positive for log, a percentile below 100 for nines.
    fn valid(scale: Scale, v: f64) -> bool {
        v.is_finite()
            && match scale {
                Scale::Linear => true,
                Scale::Log => v > 0.0,
                Scale::Nines => (0.0..100.0).contains(&v),
            }
    }

    /// 0..1 across the range.
    fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
            Scale::Nines => (nines(v) - nines(self.lo)) / (nines(self.hi) - nines(self.lo)),
        }
    }

    /// A value that can be drawn: placeable and, on a spanned axis, inside the span.
    fn contains(&self, v: f64) -> bool {
        Range::valid(self.scale, v) && self.covers(v)
    }

    /// Inside the range (with a rounding error's tolerance).
    fn covers(&self, v: f64) -> bool {
        let slack = (self.hi - self.lo).abs() * 1e-9;
        v >= self.lo - slack && v <= self.hi + slack
    }

    /// Ticks with their labels: on a linear axis in the axis' unit (`unit_of`),
    /// on a log axis each in its own (1 µs, 10 µs, … 1 ms).
    fn labelled_ticks(&self) -> Vec<(f64, String)> {
        let (divisor, _) = self.unit_of();
        self.ticks()
            .into_iter()
            .map(|t| match self.scale {
                Scale::Nines => (t, percentile_label(t)),
                Scale::Log if self.unit.scales() => (t, with_unit(t, self.unit)),
                _ if self.unit.scales() => (t, plain_number(t / divisor)),
                _ => (t, tick_label(t)),
            })
            .collect()
    }

    /// The divisor and name of the unit a linear axis' ticks are said in: the
    /// largest of `unit`'s that keeps the axis' largest value at 1 or more (1, ""
    /// for units that do not scale, and for log axes, whose ticks name their own).
    fn unit_of(&self) -> (f64, &'static str) {
        match self.scale {
            Scale::Linear => unit_for(self.lo.abs().max(self.hi.abs()), self.unit),
            _ => (1.0, ""),
        }
    }

    /// `label` with the unit the ticks are said in: "latency (ms)".
    fn titled(&self, label: &str) -> String {
        match self.unit_of() {
            (_, "") => label.to_string(),
            (_, name) => format!("{label} ({name})"),
        }
    }

    /// Tick values: powers of ten for log, about five round steps for linear,
    /// p50 and each whole number of nines (p90, p99, p99.9, …) for nines.
    fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Nines => {
                let top = nines(self.hi).round() as i32;
                std::iter::once(50.0)
                    .chain((1..=top).map(|k| from_nines(f64::from(k))))
                    .filter(|&p| self.covers(p))
                    .collect()
            }
            Scale::Log => {
                let (a, b) = (
                    self.lo.log10().round() as i32,
                    self.hi.log10().round() as i32,
                );
                (a..=b).map(|e| 10f64.powi(e)).collect()
            }
            Scale::Linear => {
                // Round steps of the unit the ticks are said in; whole ones for counts.
                let (divisor, _) = self.unit_of();
                let mut step = nice_step((self.hi - self.lo) / divisor / 5.0) * divisor;
                if self.unit == Unit::Count {
                    step = step.max(1.0);
                }
                let first = (self.lo / step).ceil() as i64;
                let last = (self.hi / step).floor() as i64;
                (first..=last).map(|i| i as f64 * step).collect()
            }
        }
    }
}

/// The number of nines of percentile `p`: 1 for p90, 2 for p99, 3 for p99.9.
fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// The percentile with `k` nines.
fn from_nines(k: f64) -> f64 {
    100.0 * (1.0 - 10f64.powf(-k))
}

/// "p50", "p99", "p99.99": as many decimals as its nines need.
fn percentile_label(p: f64) -> String {
    let decimals = (nines(p).round() as usize).saturating_sub(2);
    format!("p{p:.decimals$}")
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * power)
}

impl Plot {
    fn fit(
        frame: &Frame,
        points: impl Iterator<Item = (f64, f64)> + Clone,
        extra_x: impl Iterator<Item = f64>,
    ) -> Option<Plot> {
        let x = Range::on(&frame.x, points.clone().map(|p| p.0).chain(extra_x))?;
        // The y range of the points shown: inside x's span when it has one.
        let shown = points.filter(|p| x.covers(p.0)).map(|p| p.1);
        let mut y = Range::on(&frame.y, shown)?;
        // Rates and counts read best from zero.
        if y.scale == Scale::Linear && y.lo > 0.0 {
            y.lo = 0.0;
        }
        Some(Plot {
            x,
            y,
            y_min: y.lo,
            inset: 0.0,
        })
    }

    /// This plot with the data `inset` SVG units inside its frame on every side.
    fn inset(self, inset: f64) -> Plot {
        Plot { inset, ..self }
    }

    fn fits(&self, x: f64, y: f64) -> bool {
        self.x.contains(x) && self.y.contains(y)
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + self.inset + self.x.fraction(x) * (WIDTH - LEFT - RIGHT - 2.0 * self.inset)
    }

    fn py(&self, y: f64) -> f64 {
        HEIGHT
            - BOTTOM
            - self.inset
            - self.y.fraction(y) * (HEIGHT - TOP - BOTTOM - 2.0 * self.inset)
    }

    /// Frame, grid, ticks and axis labels.
    fn axes(&self, frame: &Frame) -> String {
        self.axes_with(frame, self.x.labelled_ticks())
    }

    /// Frame, grid, the x ticks given, y ticks and axis labels. The frame carries
    /// the x range shown (`data-x-from`, `data-x-to`) for readers of the page.
    fn axes_with(&self, frame: &Frame, x_ticks: Vec<(f64, String)>) -> String {
        let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
        let mut out = format!(
            r##"<rect class="plot-area" data-x-from="{}" data-x-to="{}" x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
            self.x.lo,
            self.x.hi,
            x1 - x0,
            y0 - y1
        );
        for (t, label) in x_ticks {
            let x = self.px(t);
            let _ = write!(
                out,
                r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{:.1}" stroke="#999"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
                y0 + 4.0,
                y0 + 16.0,
                escape(&label)
            );
        }
        for (t, label) in self.y.labelled_ticks() {
            let y = self.py(t);
            let _ = write!(
                out,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
                x0 - 6.0,
                y + 4.0,
                escape(&label)
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text><text x="14" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
            (x0 + x1) / 2.0,
            HEIGHT - 6.0,
            escape(&self.x.titled(&frame.x.label)),
            (y0 + y1) / 2.0,
            (y0 + y1) / 2.0,
            escape(&self.y.titled(&frame.y.label))
        );
        out
    }
}

/// 0.5, 20, 1.5k, 2M: short enough for a tick.
fn tick_label(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = match a {
        _ if a >= 1e9 => (v / 1e9, "G"),
        _ if a >= 1e6 => (v / 1e6, "M"),
        _ if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    format!("{}{suffix}", plain_number(scaled))
}

/// At most two decimals, none that are zero: 0.25, 1.5, 20.
fn plain_number(v: f64) -> String {
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    match text {
        "-0" => "0".into(),
        _ => text.into(),
    }
}

impl Unit {
    /// The unit's steps, smallest first: (divisor, name).
    fn steps(self) -> &'static [(f64, &'static str)] {
        const KIB: f64 = 1024.0;
        match self {
            Unit::Number | Unit::Count => &[(1.0, "")],
            Unit::Nanoseconds => &[(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")],
            Unit::BytesPerSec => &[
                (1.0, "B/s"),
                (KIB, "KiB/s"),
                (KIB * KIB, "MiB/s"),
                (KIB * KIB * KIB, "GiB/s"),
            ],
        }
    }

    /// Whether values are said in steps of the unit (ns, µs, …) rather than as plain numbers.
    fn scales(self) -> bool {
        self.steps().len() > 1
    }
}

/// The step of `unit` to say values up to `magnitude` in: the first that leaves
/// them under 1000, so that ticks read "0, 0.5, 1, 1.5 ms", never "1.5M ns", and
/// "0.98 GiB/s" rather than "1000 MiB/s".
fn unit_for(magnitude: f64, unit: Unit) -> (f64, &'static str) {
    let steps = unit.steps();
    let last = steps.len() - 1;
    steps
        .iter()
        .enumerate()
        .find(|&(i, &(divisor, _))| i == last || magnitude < 1000.0 * divisor)
        .map_or(steps[0], |(_, &step)| step)
}

/// `v` in the step of `unit` its own size asks for: "100 µs", "1 ms", "2 GiB/s".
fn with_unit(v: f64, unit: Unit) -> String {
    let (divisor, name) = unit_for(v.abs(), unit);
    match name {
        "" => tick_label(v),
        _ => format!("{} {name}", plain_number(v / divisor)),
    }
}

fn legend(body: &mut String, index: usize, label: &str, color: &str) {
    let x = WIDTH - RIGHT - 180.0;
    let y = TOP + 14.0 + 15.0 * index as f64;
    let _ = write!(
        body,
        r#"<rect x="{x}" y="{:.1}" width="12" height="4" fill="{color}"/><text class="legend" x="{:.1}" y="{y:.1}" font-size="11">{}</text>"#,
        y - 4.0,
        x + 16.0,
        escape(label)
    );
}

fn wrap(frame: &Frame, body: &str) -> String {
    format!(
        r#"<figure class="chart" id="{}"><figcaption>{}</figcaption><svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" font-family="sans-serif">{body}</svg></figure>"#,
        escape(&frame.id),
        escape(&frame.title),
        escape(&frame.title)
    )
}

/// A chart with nothing to draw still has its place and says why it is empty.
fn empty(frame: &Frame) -> String {
    let body = format!(
        r##"<text x="{:.1}" y="{:.1}" font-size="13" text-anchor="middle" fill="#666">no data</text>"##,
        WIDTH / 2.0,
        HEIGHT / 2.0
    );
    wrap(frame, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(y: Axis) -> Frame {
        Frame {
            id: "c1".into(),
            title: "IOPS <read>".into(),
            x: Axis::linear("time (s)"),
            y,
        }
    }

    #[test]
    fn a_line_chart_has_its_series_axes_and_escaped_labels() {
        let s = Series {
            label: "read".into(),
            points: vec![(0.0, 10.0), (1.0, 20.0), (2.0, 15.0)],
        };
        let job_start = Marker {
            x: 1.0,
            until: None,
            label: "job b".into(),
            link: None,
        };
        let finding = Marker {
            x: 1.5,
            until: None,
            label: "writeback-stall".into(),
            link: Some("#finding-0".into()),
        };
        let svg = line_chart(&frame(Axis::linear("IOPS")), &[s], &[job_start, finding]);
        assert!(svg.starts_with(r#"<figure class="chart" id="c1">"#));
        assert!(svg.contains("IOPS &lt;read&gt;"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches(r#"class="marker""#).count(), 2);
        assert_eq!(svg.matches(r##"<a href="#finding-0"><line"##).count(), 1);
        assert!(svg.contains(">writeback-stall</text></a>"), "{svg}");
        // The job start's label on the top line, the finding's on the line below.
        assert!(svg.contains(&format!(
            r##"y="{:.1}" font-size="11" fill="#888">job b<"##,
            TOP + 11.0
        )));
        assert!(svg.contains(&format!(
            r#"y="{:.1}" font-size="11" fill="{}">writeback-stall<"#,
            TOP + 23.0,
            PALETTE[1]
        )));
        assert!(svg.contains(">time (s)<") && svg.contains(">IOPS<"));
        // x from 0 to 2: the first point on the left edge, the last on the right.
        assert!(svg.contains(&format!("{LEFT:.1},")), "{svg}");
        assert!(svg.contains(&format!("{:.1},", WIDTH - RIGHT)), "{svg}");
    }

    #[test]
    fn log_axes_tick_at_powers_of_ten_and_drop_non_positive_values() {
        let s = Series {
            label: "p99".into(),
            points: vec![(0.0, 0.0), (1.0, 150.0), (2.0, 40_000.0)],
        };
        let svg = line_chart(&frame(Axis::log("latency (µs)")), &[s], &[]);
        for tick in [">100<", ">1k<", ">10k<", ">100k<"] {
            assert!(svg.contains(tick), "{tick} missing");
        }
        assert_eq!(first_line_points(&svg).len(), 2);
    }

    #[test]
    fn shared_axes_fit_every_chart() {
        let chart = |id: &str, points: Vec<(f64, f64)>| {
            let frame = Frame {
                id: id.into(),
                ..frame(Axis::linear("IOPS"))
            };
            let series = vec![Series {
                label: "read".into(),
                points,
            }];
            (frame, series)
        };
        let svgs = line_charts_on_shared_axes(&[
            chart("a", vec![(0.0, 10.0), (1.0, 10.0)]),
            chart("b", vec![(0.0, 40.0), (2.0, 40.0)]),
            chart("c", Vec::new()),
        ]);
        // A's line ends half-way across and a quarter of the way up, as it would on B's chart.
        let mid_x = LEFT + (WIDTH - LEFT - RIGHT) / 2.0;
        let quarter_y = HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) / 4.0;
        assert!(
            svgs[0].contains(&format!("{mid_x:.1},{quarter_y:.1}")),
            "{}",
            svgs[0]
        );
        assert!(svgs[1].contains(r#"id="b""#) && svgs[1].contains(">40<"));
        assert!(svgs[2].contains("no data"));
    }

    #[test]
    fn empty_data_says_so() {
        let svg = line_chart(&frame(Axis::linear("IOPS")), &[], &[]);
        assert!(svg.contains("no data") && svg.contains(r#"id="c1""#));
        assert!(histogram(&frame(Axis::linear("I/Os")), &[]).contains("no data"));
    }

    #[test]
    fn histogram_bars_and_highlighted_dots() {
        let f = Frame {
            x: Axis::log("latency (µs)"),
            ..frame(Axis::linear("I/Os"))
        };
        let svg = histogram(&f, &[(1.0, 2.0, 5.0), (10.0, 20.0, 50.0)]);
        assert_eq!(svg.matches(r#"class="bar""#).count(), 2);
        let dots = dot_plot(
            &frame(Axis::linear("IOPS")),
            &[(1.0, 5.0), (2.0, 9.0)],
            &[1],
        );
        assert_eq!(dots.matches("<circle").count(), 2);
        assert_eq!(dots.matches("dot outlier").count(), 1);
    }

    /// The "x,y" points of the first polyline in `svg`.
    fn first_line_points(svg: &str) -> Vec<&str> {
        let points = svg
            .split("points=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("expected a polyline in {svg}"));
        points.split(' ').collect()
    }

    /// The x of each tick label in `svg` with that text.
    fn tick_x(svg: &str, label: &str) -> f64 {
        let end = svg
            .find(&format!(r#"text-anchor="middle">{label}</text>"#))
            .unwrap_or_else(|| panic!("expected a tick labelled {label} in {svg}"));
        let start = svg[..end].rfind("<text x=\"").unwrap() + 9;
        svg[start..].split('"').next().unwrap().parse().unwrap()
    }

    #[test]
    fn a_nines_axis_spreads_the_tail_evenly_and_labels_it() {
        let f = Frame {
            x: Axis::nines("percentile"),
            ..frame(Axis::log("latency (µs)"))
        };
        let curve = Series {
            label: "clat".into(),
            points: vec![
                (1.0, 10.0),
                (50.0, 20.0),
                (99.0, 80.0),
                (99.99, 900.0),
                (100.0, 5000.0),
            ],
        };
        let svg = line_chart(&f, &[curve], &[]);
        let x: Vec<f64> = ["p50", "p90", "p99", "p99.9", "p99.99"]
            .iter()
            .map(|label| tick_x(&svg, label))
            .collect();
        let steps: Vec<f64> = x.windows(2).skip(1).map(|w| w[1] - w[0]).collect();
        assert!(
            steps.iter().all(|s| (s - steps[0]).abs() < 0.2) && steps[0] > 200.0,
            "expected p90, p99, p99.9, p99.99 a quarter of the width apart, saw ticks at {x:?}"
        );
        assert!(
            (x[4] - (WIDTH - RIGHT)).abs() < 0.1 && x[0] > LEFT && x[0] < x[1],
            "expected p99.99 at the right edge and p50 left of p90, saw {x:?}"
        );
        let points = first_line_points(&svg);
        assert_eq!(
            points.len(),
            4,
            "expected p100 (no place on a nines axis) left out, saw points {points:?}"
        );
        assert_eq!(percentile_label(from_nines(3.0)), "p99.9");
        assert_eq!(percentile_label(90.0), "p90");
    }

    #[test]
    fn a_spanned_axis_shows_its_span_and_nothing_outside() {
        let f = Frame {
            x: Axis::linear("time (s)").spanning(2.0, 4.0),
            ..frame(Axis::linear("IOPS"))
        };
        let s = Series {
            label: "read".into(),
            points: vec![(1.0, 500.0), (2.5, 10.0), (3.5, 20.0), (9.0, 700.0)],
        };
        let inside = Marker {
            x: 3.0,
            until: None,
            label: "in".into(),
            link: None,
        };
        let outside = Marker {
            x: 8.0,
            label: "out".into(),
            ..inside.clone()
        };
        let svg = line_chart(&f, &[s], &[inside, outside]);
        assert!(
            svg.contains(r#"data-x-from="2" data-x-to="4""#),
            "expected the x range 2..4 on the frame, saw {svg}"
        );
        let points = first_line_points(&svg);
        assert_eq!(
            points.len(),
            2,
            "expected only the points at 2.5 s and 3.5 s, saw {points:?}"
        );
        assert!(
            svg.contains(">in<") && !svg.contains(">out<"),
            "expected the marker at 3 s drawn and the one at 8 s not, saw {svg}"
        );
        assert!(
            !svg.contains(">600<"),
            "expected the y axis fitted to the points shown (up to 20), not to the 700 outside, saw {svg}"
        );
    }

    #[test]
    fn a_band_shades_a_window_with_its_label_above_the_frame() {
        let band = Marker {
            x: 1.0,
            until: Some(3.0),
            label: "job a".into(),
            link: None,
        };
        let s = Series {
            label: "busy".into(),
            points: vec![(0.0, 1.0), (4.0, 2.0)],
        };
        let svg = line_chart(&frame(Axis::linear("%")), &[s], &[band]);
        let quarter = (WIDTH - LEFT - RIGHT) / 4.0;
        let expected = format!(
            r#"<rect class="band" x="{:.1}" y="{TOP}" width="{:.1}""#,
            LEFT + quarter,
            2.0 * quarter
        );
        assert!(
            svg.contains(&expected),
            "expected {expected} (1 s to 3 s of 0..4 s), saw {svg}"
        );
        assert!(
            svg.contains(&format!(
                r##"y="{:.1}" font-size="11" fill="#888">job a<"##,
                TOP - 6.0
            )),
            "expected the band's label above the frame, saw {svg}"
        );
    }

    #[test]
    fn many_groups_are_labelled_every_few_without_values() {
        let groups: Vec<BarGroup> = (0..100)
            .map(|i| BarGroup {
                label: format!("r{i}"),
                values: vec![Some(10.0 + f64::from(i))],
                mark: None,
            })
            .collect();
        let svg = grouped_bars(&frame(Axis::linear("MB/s")), &["MB/s"], &groups, |v| {
            format!("{v:.1}")
        });
        let bars = svg.matches(r#"class="bar MB/s""#).count();
        let labels = (0..100)
            .filter(|i| svg.contains(&format!(">r{i}</text>")))
            .count();
        assert_eq!(
            (bars, labels, svg.contains(">109.0</text>")),
            (100, 25, false),
            "expected 100 bars, every 4th group labelled and no values, saw {bars} bars and {labels} labels in {svg}"
        );
        assert!(
            !svg.contains("class=\"legend\""),
            "expected no legend for one series (the y axis names it), saw {svg}"
        );
    }

    #[test]
    fn grouped_bars_have_a_bar_per_value_with_its_number() {
        let groups = [
            BarGroup {
                label: "SEQ1M Q8T1".into(),
                values: vec![Some(400.0), Some(200.0)],
                mark: None,
            },
            BarGroup {
                label: "RND4K Q1T1".into(),
                values: vec![Some(50.0), None],
                mark: Some("slow".into()),
            },
        ];
        let svg = grouped_bars(
            &frame(Axis::linear("MB/s")),
            &["read", "write"],
            &groups,
            |v| format!("{v:.1}"),
        );
        assert_eq!(
            svg.matches(r#"class="bar read""#).count(),
            2,
            "expected a read bar per group in {svg}"
        );
        assert_eq!(
            svg.matches(r#"class="bar write""#).count(),
            1,
            "expected one write bar (the second group has none) in {svg}"
        );
        for text in [
            r#"data-group="SEQ1M Q8T1" data-value="200""#,
            ">400.0</text>",
            ">50.0</text>",
            ">RND4K Q1T1</text>",
            r#"<rect class="mark" data-group="RND4K Q1T1""#,
            ">slow</text>",
        ] {
            assert!(svg.contains(text), "expected {text} in {svg}");
        }
        assert_eq!(
            svg.matches(r#"class="mark""#).count(),
            1,
            "expected the marked group's band only in {svg}"
        );
        // Bars stand on zero: the 200 bar is half as tall as the 400 one.
        let height = |value: &str| -> f64 {
            let bar = svg
                .split(&format!(r#"data-value="{value}""#))
                .nth(1)
                .unwrap();
            let h = bar.split("height=\"").nth(1).unwrap();
            h.split('"').next().unwrap().parse().unwrap()
        };
        assert!(
            (height("400") - 2.0 * height("200")).abs() < 0.2,
            "expected the 400 bar twice the 200 bar, saw {} and {}",
            height("400"),
            height("200")
        );
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(0.37), 0.5);
        assert_eq!(nice_step(13.0), 20.0);
        assert_eq!(tick_label(1500.0), "1.5k");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(2e6), "2M");
        let r = Range::of([3.0, 97.0].into_iter(), Scale::Linear, Unit::Number).unwrap();
        assert_eq!(r.ticks(), vec![20.0, 40.0, 60.0, 80.0]);
    }

    fn linear(lo: f64, hi: f64, unit: Unit) -> Range {
        Range::of([lo, hi].into_iter(), Scale::Linear, unit).unwrap()
    }

    #[test]
    fn a_count_axis_ticks_at_whole_numbers_only() {
        for n in 1..=12 {
            let r = linear(1.0, f64::from(n), Unit::Count);
            let ticks = r.labelled_ticks();
            assert!(
                !ticks.is_empty() && ticks.iter().all(|(t, _)| t.fract() == 0.0),
                "expected whole ticks for repetitions 1..={n}, saw {ticks:?}"
            );
            assert!(
                ticks.iter().all(|(_, l)| l.parse::<u32>().is_ok()),
                "expected integer labels for 1..={n}, saw {ticks:?}"
            );
        }
        let two = linear(1.0, 2.0, Unit::Count).ticks();
        assert_eq!(two, vec![1.0, 2.0], "not 1, 1.2, 1.4, …");
        // One repetition: its tick alone, half a step each side.
        let one = linear(1.0, 1.0, Unit::Count);
        assert_eq!((one.lo, one.hi, one.ticks()), (0.5, 1.5, vec![1.0]));
        // A plain axis of the same range may have fractions.
        let plain = linear(1.0, 2.0, Unit::Number).ticks();
        assert!(plain.iter().any(|t| t.fract() != 0.0), "{plain:?}");
    }

    #[test]
    fn times_and_rates_are_said_in_units_their_size_asks_for() {
        let labels =
            |r: Range| -> Vec<String> { r.labelled_ticks().into_iter().map(|(_, l)| l).collect() };
        // 0 to 4 ms in ns: ms ticks, the unit in the title, no "4M ns".
        let ms = linear(0.0, 4.2e6, Unit::Nanoseconds);
        assert_eq!(labels(ms), ["0", "1", "2", "3", "4"]);
        assert_eq!(ms.titled("clat_p99"), "clat_p99 (ms)");
        let us = linear(0.0, 950.0 * 1e3, Unit::Nanoseconds);
        assert_eq!(us.titled("lat"), "lat (µs)");
        assert_eq!(
            linear(0.0, 900.0, Unit::Nanoseconds).titled("lat"),
            "lat (ns)"
        );
        assert_eq!(linear(0.0, 3e9, Unit::Nanoseconds).titled("t"), "t (s)");
        // 60 MiB/s in B/s: round MiB/s ticks.
        let bw = linear(0.0, 60.0 * 1024.0 * 1024.0, Unit::BytesPerSec);
        assert_eq!(bw.titled("bw"), "bw (MiB/s)");
        assert_eq!(labels(bw), ["0", "20", "40", "60"]);
        // 1000 MiB/s and more in GiB/s: no tick of 1000 in the unit shown.
        let gib = linear(0.0, 1010.0 * 1024.0 * 1024.0, Unit::BytesPerSec);
        assert_eq!(gib.titled("bw"), "bw (GiB/s)");
        assert_eq!(with_unit(1000.0, Unit::BytesPerSec), "0.98 KiB/s");
        assert_eq!(with_unit(999.0, Unit::Nanoseconds), "999 ns");
        assert_eq!(with_unit(1000.0, Unit::Nanoseconds), "1 µs");
        // A log axis names each tick's own unit.
        let log = Range::of([50.0, 2e6].into_iter(), Scale::Log, Unit::Nanoseconds).unwrap();
        assert_eq!(
            labels(log),
            ["10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms"]
        );
        assert_eq!(log.titled("latency"), "latency");
        assert_eq!(with_unit(1.5e9, Unit::Nanoseconds), "1.5 s");
        assert_eq!(
            with_unit(2.0 * 1024.0 * 1024.0 * 1024.0, Unit::BytesPerSec),
            "2 GiB/s"
        );
        // Plain numbers keep their k and M, with the unit in the title.
        let iops = linear(0.0, 2e6, Unit::Number);
        assert!(labels(iops).contains(&"2M".to_string()));
        assert_eq!(iops.titled("IOPS"), "IOPS");
    }

    /// (cx, cy, r) of each circle in `svg`.
    fn circles(svg: &str) -> Vec<(f64, f64, f64)> {
        let number = |c: &str, name: &str| -> f64 {
            let v = c.split(&format!(" {name}=\"")).nth(1).unwrap();
            v.split('"').next().unwrap().parse().unwrap()
        };
        svg.split("<circle")
            .skip(1)
            .map(|c| (number(c, "cx"), number(c, "cy"), number(c, "r")))
            .collect()
    }

    #[test]
    fn dots_at_the_ends_of_the_axes_are_whole_inside_the_frame() {
        let dots = [(1.0, 0.0), (2.0, 5e6), (3.0, 1e6)];
        let f = Frame {
            x: Axis::count("repetition"),
            ..frame(Axis::linear("clat").in_unit(Unit::Nanoseconds))
        };
        let svg = dot_plot(&f, &dots, &[1]);
        let seen = circles(&svg);
        assert_eq!(seen.len(), 3);
        for (cx, cy, r) in seen {
            assert!(
                cx - r >= LEFT
                    && cx + r <= WIDTH - RIGHT
                    && cy - r >= TOP
                    && cy + r <= HEIGHT - BOTTOM,
                "expected the dot at ({cx}, {cy}) r {r} inside the frame in {svg}"
            );
        }
        // The ticks are where the dots are: repetition 1 under the first dot.
        assert!(
            (tick_x(&svg, "1") - (LEFT + BIG_DOT + 4.0)).abs() < 0.1,
            "{svg}"
        );
        assert!(svg.contains(">clat (ms)<") && !svg.contains("M<"), "{svg}");
    }

    /// The boxes of placed labels overlap: on one row and sharing some of its width.
    fn overlapping(placed: &[Option<Placed>], font_size: f64) -> Option<(Placed, Placed)> {
        let placed: Vec<&Placed> = placed.iter().flatten().collect();
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                let (a_end, b_end) = (
                    a.x + text_width(&a.text, font_size),
                    b.x + text_width(&b.text, font_size),
                );
                if a.row == b.row && a.x < b_end && b.x < a_end {
                    return Some(((*a).clone(), (*b).clone()));
                }
            }
        }
        None
    }

    #[test]
    fn labels_starting_together_go_on_rows_of_their_own() {
        let spec = |x: f64, text: &'static str| LabelSpec {
            x,
            text,
            rows: 0..2,
        };
        let placed = layout_labels(
            &[spec(130.0, "randread"), spec(130.0, "randwrite")],
            11.0,
            1160.0,
        );
        assert_eq!(
            placed
                .iter()
                .flatten()
                .map(|p| (p.row, p.text.as_str()))
                .collect::<Vec<_>>(),
            [(0, "randread"), (1, "randwrite")]
        );
        // A third on the same spot has no row: left out, the others whole.
        let three = layout_labels(
            &[
                spec(130.0, "randread"),
                spec(130.0, "randwrite"),
                spec(131.0, "seq"),
            ],
            11.0,
            1160.0,
        );
        assert_eq!(three[2], None);
        // A little later, there is room to shorten the one before it.
        let later = layout_labels(
            &[
                spec(130.0, "randread"),
                spec(130.0, "randwrite"),
                spec(170.0, "seq"),
            ],
            11.0,
            1160.0,
        );
        let texts: Vec<&str> = later.iter().flatten().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["rand…", "randwrite", "seq"]);
        assert_eq!(overlapping(&later, 11.0), None);
        // At the right edge a label starts early enough to end inside.
        let edge = layout_labels(&[spec(1150.0, "randwrite")], 11.0, 1160.0);
        let p = edge[0].as_ref().unwrap();
        assert!(p.x + text_width(&p.text, 11.0) <= 1160.0, "{p:?}");
    }

    #[test]
    fn no_two_laid_out_labels_overlap() {
        // Many labels at pseudo-random places, of pseudo-random lengths.
        let mut seed: u64 = 7;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let names = [
            "a",
            "seq-read",
            "randwrite",
            "RND4K-Q32T1-read",
            "writeback-stall",
            "xy",
        ];
        for round in 0..200 {
            let count = 1 + next(12) as usize;
            let specs: Vec<LabelSpec> = (0..count)
                .map(|_| LabelSpec {
                    x: next(1200) as f64,
                    text: names[next(names.len() as u64) as usize],
                    rows: match next(3) {
                        0 => 0..1,
                        1 => 0..2,
                        _ => 1..4,
                    },
                })
                .collect();
            let placed = layout_labels(&specs, 11.0, 1160.0);
            assert_eq!(
                overlapping(&placed, 11.0),
                None,
                "round {round}: overlapping labels"
            );
            for (spec, p) in specs.iter().zip(&placed) {
                let Some(p) = p else { continue };
                assert!(spec.rows.contains(&p.row) && p.x + text_width(&p.text, 11.0) <= 1160.0);
                assert!(p.text == spec.text || p.text.ends_with('…'));
            }
        }
    }

    #[test]
    fn job_bands_starting_together_label_on_two_lines_above_the_frame() {
        let band = |label: &str| Marker {
            x: 1.0,
            until: Some(3.0),
            label: label.into(),
            link: None,
        };
        let s = Series {
            label: "busy".into(),
            points: vec![(0.0, 1.0), (4.0, 2.0)],
        };
        let svg = line_chart(
            &frame(Axis::linear("%")),
            &[s],
            &[band("randread"), band("randwrite"), band("seq")],
        );
        assert!(
            svg.contains(&format!(
                r##"y="{:.1}" font-size="11" fill="#888">randread<"##,
                TOP - 6.0
            )),
            "{svg}"
        );
        assert!(
            svg.contains(&format!(
                r##"y="{:.1}" font-size="11" fill="#888">randwrite<"##,
                TOP - 18.0
            )),
            "{svg}"
        );
        assert!(
            !svg.contains(">seq</text>") && svg.contains("<title>seq</title>"),
            "expected the third label left out, its name the band's tooltip, in {svg}"
        );
    }
}
