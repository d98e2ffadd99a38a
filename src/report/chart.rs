//! A chart as data (its plots, series, marks, legend and layout) and its drawing as
//! SVG: what every family's charts, the overlay and the trend page are drawn with.

use std::fmt::Write;

pub struct Chart {
    /// File name without extension: `ring-1`, `workload-2-wall`, ...
    pub name: String,
    pub svg: String,
}

pub(crate) const COLORS: [&str; 8] =
    ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// Where the legend goes.
#[derive(Clone, Copy, PartialEq)]
pub enum Legend {
    /// One entry a row in the right margin.
    Right,
    /// Under the axis, in two columns when every entry fits in half the width (long
    /// labels, many lines); each entry's sample shows the series' dots too.
    Below,
}

/// The canvas: its width, the margins round the plotting area and the legend's place.
/// The height follows from what goes under the axis.
#[derive(Clone, Copy)]
pub struct Layout {
    width: f64,
    left: f64,
    right: f64,
    top: f64,
    plot_height: f64,
    legend: Legend,
}

impl Layout {
    /// A run's charts: 720 x 420, the legend at the right.
    pub const STANDARD: Layout =
        Layout { width: 720.0, left: 80.0, right: 170.0, top: 40.0, plot_height: 325.0, legend: Legend::Right };
    /// The overlay: wider and taller for many lines, the legend below (machine names are long).
    pub const WIDE: Layout =
        Layout { width: 960.0, left: 84.0, right: 30.0, top: 44.0, plot_height: 440.0, legend: Legend::Below };
}

/// How a series' points are joined.
#[derive(Clone, Copy, PartialEq)]
pub enum Style {
    Line,
    /// A line with a dot at every point.
    LinePoints,
    /// Horizontal then vertical, as a distribution's tail steps.
    Step,
    /// Dots alone, unjoined: a strip plot of events over time.
    Points,
}

/// (x, y, optional error bar low..high)
pub type Point = (f64, f64, Option<(f64, f64)>);

/// A ◇ on a series' line at `x` (anywhere the line spans, between points too).
pub struct Mark {
    pub x: f64,
    /// The SVG class, naming what is marked ("knee").
    pub class: &'static str,
    /// Shown when the pointer rests on it.
    pub title: String,
}

pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
    pub style: Style,
    /// None: the palette's colour for the series' position.
    pub color: Option<&'static str>,
    /// Line width; the dots are a little wider.
    pub width: f64,
    /// An SVG stroke-dasharray ("8 5"), or a solid line.
    pub dash: Option<&'static str>,
    /// Drawn after the other series, so that nothing hides it.
    pub in_front: bool,
    pub marks: Vec<Mark>,
}

impl Series {
    pub fn new(label: impl Into<String>, points: Vec<Point>, style: Style) -> Series {
        Series {
            label: label.into(),
            points,
            style,
            color: None,
            width: 2.0,
            dash: None,
            in_front: false,
            marks: Vec::new(),
        }
    }
}

pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Make y logarithmic when its largest value is more than this times its smallest
    /// (the label then says "log scale"): lines far apart stay readable.
    pub y_log_beyond: Option<f64>,
    /// Start x at 0 rather than at its smallest value.
    pub x_from_zero: bool,
    /// Log axes end at the nearest 1, 2 or 5 times a power of ten outside the data,
    /// not at whole decades, with grid lines at 2 and 5 while there are few decades.
    pub fine_log: bool,
    pub series: Vec<Series>,
    /// Vertical markers: (x, label).
    pub markers: Vec<(f64, String)>,
    /// A line of explanation under the x axis label.
    pub note: Option<String>,
    pub layout: Layout,
}

impl Plot {
    pub fn new(title: impl Into<String>, x_label: impl Into<String>, y_label: impl Into<String>) -> Plot {
        Plot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_log: false,
            y_log: false,
            y_log_beyond: None,
            x_from_zero: false,
            fine_log: false,
            series: Vec::new(),
            markers: Vec::new(),
            note: None,
            layout: Layout::STANDARD,
        }
    }
}

pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// "1.5k", "20", "0.05", "1e-4": short tick labels.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else if a >= 0.01 {
        trim(v)
    } else {
        format!("{v:.0e}")
    }
}

pub fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Tick positions for [lo, hi]: 1-2-5 steps, or decades on a log axis.
pub fn ticks(lo: f64, hi: f64, log: bool) -> Vec<f64> {
    if log {
        let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        return (a..=b).map(|e| 10f64.powi(e)).filter(|&t| t >= lo * 0.999 && t <= hi * 1.001).collect();
    }
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| span / s <= 7.0).unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// Grid lines for [lo, hi], each with whether it is a major one: `ticks`, and on a fine
/// log axis the 2s and 5s of each decade as minor lines while there are five decades or fewer.
fn grid_ticks(lo: f64, hi: f64, log: bool, fine: bool) -> Vec<(f64, bool)> {
    if !(log && fine) {
        return ticks(lo, hi, log).into_iter().map(|t| (t, true)).collect();
    }
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let steps: &[f64] = if last - first <= 5 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    (first..=last)
        .flat_map(|d| steps.iter().map(move |m| (m * 10f64.powi(d), *m == 1.0)))
        .filter(|(t, _)| *t >= lo * 0.999 && *t <= hi * 1.001)
        .collect()
}

/// The nearest 1, 2 or 5 times a power of ten at or below (at or above, with `up`) `v` > 0.
fn one_two_five(v: f64, up: bool) -> f64 {
    let decade = 10f64.powf(v.log10().floor());
    let steps = [1.0, 2.0, 5.0, 10.0];
    let pick = if up {
        steps.iter().find(|&&m| m * decade >= v * 0.999)
    } else {
        steps.iter().rev().find(|&&m| m * decade <= v * 1.001)
    };
    pick.map_or(decade, |m| m * decade)
}

/// Where a drawn line (screen points, x ascending) passes screen x `px`, if it spans it.
fn on_line(points: &[(f64, f64)], px: f64) -> Option<(f64, f64)> {
    if let [(x, y)] = points {
        return (*x == px).then_some((*x, *y));
    }
    points.windows(2).find_map(|w| {
        let ((xa, ya), (xb, yb)) = (w[0], w[1]);
        let f = if xb > xa { (px - xa) / (xb - xa) } else { 0.0 };
        (xa <= px && px <= xb).then_some((px, ya + f * (yb - ya)))
    })
}

/// Height of a row of the legend below the plot.
const LEGEND_ROW: f64 = 18.0;

/// Where a plot's parts go on its canvas, worked out from its layout before drawing.
#[derive(Clone, Copy)]
struct Frame {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    /// The plotting area's width and height.
    pw: f64,
    ph: f64,
    legend: Legend,
    /// The baselines of the x axis label and of the note under it (the label's when
    /// there is no note).
    x_label_y: f64,
    text_bottom: f64,
    /// Where a legend below starts, and its columns and rows.
    legend_top: f64,
    columns: usize,
    rows: usize,
}

/// The ranges the axes show and how a value maps to a point on the canvas.
struct Scales {
    x: (f64, f64),
    y: (f64, f64),
    x_log: bool,
    y_log: bool,
    frame: Frame,
}

impl Scales {
    /// Screen x of the value `x`.
    fn sx(&self, x: f64) -> f64 {
        let ((x0, x1), Frame { left, pw, .. }) = (self.x, self.frame);
        let f = if self.x_log { (x.log10() - x0.log10()) / (x1.log10() - x0.log10()) } else { (x - x0) / (x1 - x0) };
        left + f * pw
    }

    /// Screen y of the value `y`; on a log axis a value below the range sits at its bottom.
    fn sy(&self, y: f64) -> f64 {
        let ((y0, y1), Frame { top, ph, .. }) = (self.y, self.frame);
        let y = if self.y_log { y.max(y0) } else { y };
        let f = if self.y_log { (y.log10() - y0.log10()) / (y1.log10() - y0.log10()) } else { (y - y0) / (y1 - y0) };
        top + ph - f * ph
    }
}

impl Series {
    /// The series' ` stroke-dasharray="…"` attribute, or nothing for a solid line.
    fn dash_attribute(&self) -> String {
        self.dash.map(|d| format!(" stroke-dasharray=\"{d}\"")).unwrap_or_default()
    }
}

impl Plot {
    /// The y axis is logarithmic: asked for, or the values spread wider than `y_log_beyond`.
    fn y_is_log(&self) -> bool {
        let ys = || self.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|y| y.is_finite() && *y > 0.0);
        let spread = ys().fold(f64::MIN, f64::max) / ys().fold(f64::MAX, f64::min);
        self.y_log || self.y_log_beyond.is_some_and(|beyond| spread > beyond)
    }

    pub fn render(&self) -> String {
        let frame = self.frame();
        let y_log = self.y_is_log();
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let xs: Vec<f64> =
            pts().map(|p| p.0).chain(self.markers.iter().map(|m| m.0)).filter(|x| !self.x_log || *x > 0.0).collect();
        let ys: Vec<f64> = pts()
            .flat_map(|p| [Some(p.1), p.2.map(|e| e.0), p.2.map(|e| e.1)])
            .flatten()
            .filter(|y| y.is_finite() && (!y_log || *y > 0.0))
            .collect();
        let mut svg = String::new();
        self.write_head(&mut svg, &frame);
        if xs.is_empty() || ys.is_empty() {
            let all_zero = y_log && pts().next().is_some() && pts().all(|p| p.1 == 0.0);
            let why = if all_zero { "every value is 0: nothing to draw on a log axis" } else { "no data" };
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{why}</text></svg>",
                frame.width / 2.0,
                frame.height / 2.0
            );
            return svg;
        }
        let (x0, x1) = self.bounds(&xs, self.x_log, self.x_from_zero);
        let (y0, y1) = self.bounds(&ys, y_log, true);
        let scales = Scales { x: (x0, x1), y: (y0, y1), x_log: self.x_log, y_log, frame };
        self.draw_grid(&mut svg, &scales);
        self.draw_axes(&mut svg, &frame, y_log);
        self.draw_markers(&mut svg, &scales);
        self.draw_series(&mut svg, &scales);
        self.draw_legend(&mut svg, &frame);
        svg.push_str("</svg>");
        svg
    }

    /// Where everything goes: the plotting area, and under the axis its label, the note,
    /// then the legend when it goes below (in one or two columns).
    fn frame(&self) -> Frame {
        let Layout { width, left, right, top, plot_height: ph, legend } = self.layout;
        let pw = width - left - right;
        // Under the axis: its label, the note, then the legend when it goes below.
        let x_label_y = top + ph + 43.0;
        let text_bottom = if self.note.is_some() { x_label_y + 18.0 } else { x_label_y };
        // A legend column is wide enough for labels of ~6.5 px a character at 12 px.
        let columns = if self.series.iter().all(|s| 30.0 + s.label.chars().count() as f64 * 6.5 <= (width - 40.0) / 2.0)
        {
            2
        } else {
            1
        };
        let rows = self.series.len().div_ceil(columns);
        let legend_top = text_bottom + 26.0;
        let height =
            if legend == Legend::Below { legend_top + rows as f64 * LEGEND_ROW + 10.0 } else { text_bottom + 12.0 };
        Frame { width, height, left, right, top, pw, ph, legend, x_label_y, text_bottom, legend_top, columns, rows }
    }

    /// The range an axis shows of the values `v`: out to whole decades on a log axis (to
    /// the nearest 1, 2 or 5 with `fine_log`); on a linear one from 0 with `from_zero`,
    /// and 5 % above the largest.
    fn bounds(&self, v: &[f64], log: bool, from_zero: bool) -> (f64, f64) {
        let (mut lo, mut hi) = (v.iter().copied().fold(f64::MAX, f64::min), v.iter().copied().fold(f64::MIN, f64::max));
        if log {
            if self.fine_log {
                (lo, hi) = (one_two_five(lo, false), one_two_five(hi, true));
            } else {
                lo = 10f64.powf(lo.log10().floor());
                hi = 10f64.powf(hi.log10().ceil());
            }
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            if from_zero && lo > 0.0 {
                lo = 0.0;
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
            hi += (hi - lo) * 0.05;
        }
        (lo, hi)
    }

    /// The opening `<svg>` with its white background and the title.
    fn write_head(&self, svg: &mut String, frame: &Frame) {
        let Frame { width, height, left, pw, .. } = *frame;
        let _ = write!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" \
             font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"{}\">\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
             <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            esc(&self.title),
            left + pw / 2.0,
            esc(&self.title)
        );
    }

    /// Grid and ticks; where 2s and 5s are drawn, the decades stand out from them.
    fn draw_grid(&self, svg: &mut String, scales: &Scales) {
        let Frame { left, top, pw, ph, .. } = scales.frame;
        let (x0, x1) = scales.x;
        let (y0, y1) = scales.y;
        let y_ticks = grid_ticks(y0, y1, scales.y_log, self.fine_log);
        let major = if y_ticks.iter().any(|t| !t.1) { "#d8d8d8" } else { "#e4e4e4" };
        for (t, is_major) in y_ticks {
            let y = scales.sy(t);
            let stroke = if is_major { major } else { "#eeeeee" };
            let _ = write!(
                svg,
                "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{stroke}\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left + pw,
                left - 6.0,
                y + 4.0,
                tick_label(t)
            );
        }
        for (t, _) in grid_ticks(x0, x1, self.x_log, self.fine_log) {
            let x = scales.sx(t);
            let _ = write!(
                svg,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{}\" stroke=\"#f0f0f0\"/>\
                 <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                top + ph,
                top + ph + 18.0,
                tick_label(t)
            );
        }
    }

    /// The box round the plotting area, the axis labels (y's saying "log scale" when
    /// the spread made it so) and the note.
    fn draw_axes(&self, svg: &mut String, frame: &Frame, y_log: bool) {
        let Frame { left, top, pw, ph, x_label_y, text_bottom, .. } = *frame;
        let y_label = if y_log && !self.y_log { format!("{} (log scale)", self.y_label) } else { self.y_label.clone() };
        let _ = write!(
            svg,
            "<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#333\"/>\
             <text x=\"{}\" y=\"{x_label_y}\" text-anchor=\"middle\">{}</text>\
             <text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            left + pw / 2.0,
            esc(&self.x_label),
            top + ph / 2.0,
            esc(&y_label)
        );
        if let Some(note) = &self.note {
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{text_bottom}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
                left + pw / 2.0,
                esc(note)
            );
        }
    }

    /// The vertical markers, dashed, each with its label at the top.
    fn draw_markers(&self, svg: &mut String, scales: &Scales) {
        let Frame { top, ph, .. } = scales.frame;
        for (x, label) in &self.markers {
            let px = scales.sx(*x);
            let _ = write!(
                svg,
                "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{top}\" y2=\"{}\" stroke=\"#b00\" stroke-dasharray=\"6 4\"/>\
                 <text x=\"{:.1}\" y=\"{}\" fill=\"#b00\">{}</text>",
                top + ph,
                px + 4.0,
                top + 14.0,
                esc(label)
            );
        }
    }

    /// Series `i`'s colour: its own, or the palette's for its place.
    fn color(&self, i: usize) -> &'static str {
        self.series[i].color.unwrap_or(COLORS[i % COLORS.len()])
    }

    /// The series in front last; the marks on every line above all of them.
    fn draw_series(&self, svg: &mut String, scales: &Scales) {
        let mut order: Vec<usize> = (0..self.series.len()).collect();
        order.sort_by_key(|&i| self.series[i].in_front);
        let mut marks = String::new();
        for i in order {
            self.draw_one_series(i, svg, &mut marks, scales);
        }
        svg.push_str(&marks);
    }

    /// Series `i` as a titled group: its error bars, its line (or steps) and its dots; the
    /// ◇ of its marks go to `marks`, drawn after every series.
    fn draw_one_series(&self, i: usize, svg: &mut String, marks: &mut String, scales: &Scales) {
        let (s, color) = (&self.series[i], self.color(i));
        let _ = write!(svg, "<g><title>{}</title>", esc(&s.label));
        let mut points: Vec<(f64, f64)> = Vec::new();
        for &(x, y, err) in &s.points {
            if (self.x_log && x <= 0.0) || !y.is_finite() || (scales.y_log && y <= 0.0) {
                continue;
            }
            if s.style == Style::Step {
                if let Some(&(_, prev_y)) = points.last() {
                    points.push((scales.sx(x), prev_y));
                }
            }
            points.push((scales.sx(x), scales.sy(y)));
            if let Some((lo, hi)) = err {
                let (px, a, b) = (scales.sx(x), scales.sy(lo), scales.sy(hi));
                let _ = write!(
                    svg,
                    "<path d=\"M{px:.1} {a:.1}V{b:.1}M{:.1} {a:.1}h8M{:.1} {b:.1}h8\" stroke=\"{color}\" fill=\"none\"/>",
                    px - 4.0,
                    px - 4.0
                );
            }
        }
        let path: String = points
            .iter()
            .enumerate()
            .map(|(j, (x, y))| format!("{}{x:.1} {y:.1}", if j == 0 { "M" } else { "L" }))
            .collect();
        if s.style != Style::Points {
            let _ = write!(
                svg,
                "<path d=\"{path}\" stroke=\"{color}\" stroke-width=\"{}\" fill=\"none\"{}/>",
                s.width,
                s.dash_attribute()
            );
        }
        if s.style == Style::Points {
            for (x, y) in &points {
                let _ = write!(
                    svg,
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2.5\" fill=\"{color}\" fill-opacity=\"0.75\"/>"
                );
            }
        }
        if s.style == Style::LinePoints {
            for (x, y) in &points {
                let _ =
                    write!(svg, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{}\" fill=\"{color}\"/>", 2.5 + s.width / 2.0);
            }
        }
        svg.push_str("</g>");
        for mark in &s.marks {
            let Some((x, y)) = on_line(&points, scales.sx(mark.x)) else { continue };
            let _ = write!(
                marks,
                "<polygon class=\"{}\" points=\"{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}\" fill=\"white\" \
                 stroke=\"{color}\" stroke-width=\"2.5\"><title>{}</title></polygon>",
                mark.class,
                y - 8.0,
                x + 8.0,
                y + 8.0,
                x - 8.0,
                esc(&mark.title)
            );
        }
    }

    /// The legend: one entry a row at the right, or in columns below the axis.
    fn draw_legend(&self, svg: &mut String, frame: &Frame) {
        let Frame { width, right, top, legend, legend_top, columns, rows, .. } = *frame;
        for (i, s) in self.series.iter().enumerate() {
            let (color, dash) = (self.color(i), s.dash_attribute());
            let entry = match legend {
                Legend::Right if s.style == Style::Points => {
                    let (x, y) = (width - right + 12.0, top + 10.0 + i as f64 * 20.0);
                    format!(
                        "<circle cx=\"{}\" cy=\"{y}\" r=\"3.5\" fill=\"{color}\"/><text x=\"{}\" y=\"{}\">{}</text>",
                        x + 11.0,
                        x + 28.0,
                        y + 4.0,
                        esc(&s.label)
                    )
                }
                Legend::Right => {
                    let (x, y) = (width - right + 12.0, top + 10.0 + i as f64 * 20.0);
                    format!(
                        "<line x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"{}\"{dash}/>\
                         <text x=\"{}\" y=\"{}\">{}</text>",
                        x + 22.0,
                        s.width,
                        x + 28.0,
                        y + 4.0,
                        esc(&s.label)
                    )
                }
                Legend::Below => {
                    let (col, row) = (i / rows, i % rows);
                    let x = 20.0 + col as f64 * (width - 40.0) / columns as f64;
                    let y = legend_top + row as f64 * LEGEND_ROW;
                    let dot = if s.style == Style::LinePoints {
                        format!("<circle cx=\"{}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/>", x + 12.0)
                    } else {
                        String::new()
                    };
                    format!(
                        "<line x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"{}\"{dash}/>\
                         {dot}<text x=\"{}\" y=\"{}\">{}</text>",
                        x + 24.0,
                        s.width,
                        x + 30.0,
                        y + 4.0,
                        esc(&s.label)
                    )
                }
            };
            svg.push_str(&entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(ticks(0.0, 10.0, false), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(1.0, 1000.0, true), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(tick_label(15000.0), "15k");
        assert_eq!(tick_label(2.5), "2.5");
    }

    #[test]
    fn a_plot_is_well_formed_svg_with_its_series() {
        let plot = Plot {
            y_log: true,
            series: vec![Series::new("a", vec![(1.0, 10.0, Some((5.0, 20.0))), (2.0, 100.0, None)], Style::LinePoints)],
            markers: vec![(1.5, "knee".into())],
            ..Plot::new("t <1>", "x", "y")
        };
        let svg = plot.render();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("t &lt;1&gt;") && svg.contains("knee") && svg.contains("<circle"));
        assert_eq!(svg.matches("<svg").count(), 1);
    }

    #[test]
    fn a_mark_sits_on_its_line_and_a_wide_spread_turns_y_logarithmic() {
        // Between two points the mark is on the segment; outside the line it is not drawn.
        assert_eq!(on_line(&[(0.0, 10.0), (10.0, 30.0), (20.0, 30.0)], 5.0), Some((5.0, 20.0)));
        assert_eq!(on_line(&[(0.0, 10.0), (10.0, 30.0)], 12.0), None);
        assert_eq!(
            grid_ticks(2.0, 50.0, true, true),
            vec![(2.0, false), (5.0, false), (10.0, true), (20.0, false), (50.0, false)]
        );
        assert_eq!((one_two_five(2.6, false), one_two_five(2.6, true), one_two_five(640.0, true)), (2.0, 5.0, 1000.0));

        // Two lines, the first with a knee: 10x apart stays linear, 100x apart turns log.
        let plot = |far: f64| {
            let line =
                |label: &str, y: f64| Series::new(label, vec![(1.0, y, None), (3.0, 2.0 * y, None)], Style::Line);
            let knee = Mark { x: 2.0, class: "knee", title: "step".into() };
            Plot {
                y_log_beyond: Some(20.0),
                series: vec![Series { marks: vec![knee], ..line("near", 1.0) }, line("far", far)],
                layout: Layout::WIDE,
                note: Some("a note".into()),
                ..Plot::new("t", "x", "y")
            }
        };
        let (linear, log) = (plot(10.0).render(), plot(100.0).render());
        assert!(!linear.contains("log scale") && log.contains("y (log scale)"));
        for svg in [&linear, &log] {
            assert_eq!(svg.matches("class=\"knee\"").count(), 1);
            assert!(svg.contains("<title>step</title>") && svg.contains(">a note</text>"));
        }
    }
}
