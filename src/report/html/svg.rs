//! Inline SVG charts for the HTML report: line charts over time (linear or log y,
//! or a percentile axis in nines), a log-x histogram, dot plots and grouped bars,
//! with labelled axes. Small on purpose: the report needs five chart shapes, not a
//! plotting library.

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

#[derive(Debug, Clone)]
pub(crate) struct Axis {
    /// With the unit: "time (s)", "latency (µs)".
    pub label: String,
    pub scale: Scale,
    /// The span shown, when it is not fitted to the data (a job's window of the run).
    pub span: Option<(f64, f64)>,
}

impl Axis {
    fn new(label: &str, scale: Scale) -> Axis {
        Axis {
            label: label.into(),
            scale,
            span: None,
        }
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
    // Linked markers' labels step down in three rows, so that close moments stay readable.
    let mut linked = 0;
    for m in markers.iter().filter(|m| plot.x.covers(m.x)) {
        let row = match m.link {
            Some(_) => {
                linked += 1;
                linked
            }
            None => 0,
        };
        marker(&mut body, plot, m, row);
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

/// A marker with its label on the top line (`row` 0) or, for rows 1, 2, 3, 4, …,
/// on the first, second, third, first, … line below it; a band shaded up to `until`.
fn marker(body: &mut String, plot: &Plot, m: &Marker, row: usize) {
    let x = plot.px(m.x);
    let color = if m.link.is_some() { PALETTE[1] } else { "#888" };
    if let Some(until) = m.until {
        let end = plot.px(until.min(plot.x.hi));
        let _ = write!(
            body,
            r##"<rect class="band" x="{x:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#888" fill-opacity="0.1"/>"##,
            (end - x).max(0.0),
            HEIGHT - TOP - BOTTOM
        );
    }
    let line = if row == 0 { 0 } else { (row - 1) % 3 + 1 };
    // A band's label sits above the frame, clear of the lines and the legend.
    let label_y = match m.until {
        Some(_) => TOP - 6.0,
        None => TOP + 11.0 + 12.0 * line as f64,
    };
    let drawn = format!(
        r#"<line class="marker" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-dasharray="4 3"/><text x="{:.1}" y="{label_y:.1}" font-size="11" fill="{color}">{}</text>"#,
        HEIGHT - BOTTOM,
        x + 3.0,
        escape(&m.label)
    );
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

/// Dots at (x, y); `highlighted` dots are drawn larger in the second colour with a ring.
pub(crate) fn dot_plot(frame: &Frame, dots: &[(f64, f64)], highlighted: &[usize]) -> String {
    let Some(plot) = Plot::fit(frame, dots.iter().copied(), std::iter::empty()) else {
        return empty(frame);
    };
    let mut body = plot.axes(frame);
    for (i, &(x, y)) in dots.iter().enumerate() {
        let (r, color, class) = match highlighted.contains(&i) {
            true => (6.0, PALETTE[1], "dot outlier"),
            false => (4.0, PALETTE[0], "dot"),
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
    let Some(mut y) = Range::of(values.chain([0.0]), Scale::Linear) else {
        return empty(frame);
    };
    // Room above the tallest bar for its value.
    y.hi *= 1.15;
    let x = Range {
        lo: 0.0,
        hi: groups.len() as f64,
        scale: Scale::Linear,
    };
    let plot = Plot { x, y, y_min: 0.0 };
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
}

#[derive(Clone, Copy)]
struct Range {
    lo: f64,
    hi: f64,
    scale: Scale,
}

impl Range {
    /// The range of `values` on `axis`: its span when it has one (and values to show).
    fn on(axis: &Axis, values: impl Iterator<Item = f64>) -> Option<Range> {
        let fitted = Range::of(values, axis.scale)?;
        Some(match axis.span {
            Some((lo, hi)) if hi > lo => Range { lo, hi, ..fitted },
            _ => fitted,
        })
    }

    fn of(values: impl Iterator<Item = f64>, scale: Scale) -> Option<Range> {
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
            },
            Scale::Log => Range {
                lo: 10f64.powf(lo.log10().floor()),
                hi: 10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
                scale,
            },
            Scale::Linear if hi == lo => Range {
                lo: lo.min(0.0),
                hi: if hi == 0.0 { 1.0 } else { hi.abs() * 1.1 },
                scale,
            },
            Scale::Linear => Range { lo, hi, scale },
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

    /// Ticks with their labels.
    fn labelled_ticks(&self) -> Vec<(f64, String)> {
        self.ticks()
            .into_iter()
            .map(|t| match self.scale {
                Scale::Nines => (t, percentile_label(t)),
                _ => (t, tick_label(t)),
            })
            .collect()
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
                let step = nice_step((self.hi - self.lo) / 5.0);
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
        Some(Plot { x, y, y_min: y.lo })
    }

    fn fits(&self, x: f64, y: f64) -> bool {
        self.x.contains(x) && self.y.contains(y)
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + self.x.fraction(x) * (WIDTH - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        HEIGHT - BOTTOM - self.y.fraction(y) * (HEIGHT - TOP - BOTTOM)
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
            escape(&frame.x.label),
            (y0 + y1) / 2.0,
            (y0 + y1) / 2.0,
            escape(&frame.y.label)
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
    let text = format!("{scaled:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{suffix}")
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

/// Text safe inside XML/HTML text and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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
        let r = Range::of([3.0, 97.0].into_iter(), Scale::Linear).unwrap();
        assert_eq!(r.ticks(), vec![20.0, 40.0, 60.0, 80.0]);
    }
}
