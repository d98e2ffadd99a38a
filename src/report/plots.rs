//! SVG plots of a stored run, drawn here (no external tools, no fonts to load): the ring
//! cost against the projected line with the knee marked, workload wall time and
//! context switches per policy, latency histograms and tail (1 − CDF) plots.

use crate::model::{Family, Outcome, RingOutcome, WorkloadOutcome};
use crate::report::overlay::{Overlay, OverlayLine, OverlayPoint};
use crate::report::stored::{groups, param_text, projected_s, Group};
use crate::stats::{median, Summary};
use crate::store::TrialRecord;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt::Write;

pub struct Chart {
    /// File name without extension: `ring-1`, `workload-2-wall`, ...
    pub name: String,
    pub title: String,
    pub svg: String,
}

const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 55.0;

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Line,
    LinePoints,
    Dashed,
    Step,
}

/// (x, y, optional error bar low..high)
type Point = (f64, f64, Option<(f64, f64)>);

struct Series {
    label: String,
    points: Vec<Point>,
    style: Style,
}

struct Plot {
    title: String,
    x_label: String,
    y_label: String,
    x_log: bool,
    y_log: bool,
    series: Vec<Series>,
    /// Vertical markers: (x, label).
    markers: Vec<(f64, String)>,
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// "1.5k", "20", "0.05", "1e-4": short tick labels.
fn tick_label(v: f64) -> String {
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

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Tick positions for [lo, hi]: 1-2-5 steps, or decades on a log axis.
fn ticks(lo: f64, hi: f64, log: bool) -> Vec<f64> {
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

impl Plot {
    fn render(&self) -> String {
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let xs: Vec<f64> =
            pts().map(|p| p.0).chain(self.markers.iter().map(|m| m.0)).filter(|x| !self.x_log || *x > 0.0).collect();
        let ys: Vec<f64> = pts()
            .flat_map(|p| [Some(p.1), p.2.map(|e| e.0), p.2.map(|e| e.1)])
            .flatten()
            .filter(|y| y.is_finite() && (!self.y_log || *y > 0.0))
            .collect();
        let mut svg = String::new();
        let _ = write!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
             font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"{}\">\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
             <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            esc(&self.title),
            (LEFT + WIDTH - RIGHT) / 2.0,
            esc(&self.title)
        );
        if xs.is_empty() || ys.is_empty() {
            let all_zero = self.y_log && pts().next().is_some() && pts().all(|p| p.1 == 0.0);
            let why = if all_zero { "every value is 0: nothing to draw on a log axis" } else { "no data" };
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{why}</text></svg>",
                WIDTH / 2.0,
                HEIGHT / 2.0
            );
            return svg;
        }
        let bounds = |v: &[f64], log: bool, pad_zero: bool| {
            let (mut lo, mut hi) =
                (v.iter().copied().fold(f64::MAX, f64::min), v.iter().copied().fold(f64::MIN, f64::max));
            if log {
                lo = 10f64.powf(lo.log10().floor());
                hi = 10f64.powf(hi.log10().ceil());
                if hi <= lo {
                    hi = lo * 10.0;
                }
            } else {
                if pad_zero && lo > 0.0 {
                    lo = 0.0;
                }
                if hi <= lo {
                    hi = lo + 1.0;
                }
                hi += (hi - lo) * 0.05;
            }
            (lo, hi)
        };
        let (x0, x1) = bounds(&xs, self.x_log, false);
        let (y0, y1) = bounds(&ys, self.y_log, true);
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let sx = |x: f64| {
            let f =
                if self.x_log { (x.log10() - x0.log10()) / (x1.log10() - x0.log10()) } else { (x - x0) / (x1 - x0) };
            LEFT + f * pw
        };
        let sy = |y: f64| {
            let y = if self.y_log { y.max(y0) } else { y };
            let f =
                if self.y_log { (y.log10() - y0.log10()) / (y1.log10() - y0.log10()) } else { (y - y0) / (y1 - y0) };
            TOP + ph - f * ph
        };
        // Grid and ticks.
        for t in ticks(y0, y1, self.y_log) {
            let y = sy(t);
            let _ = write!(
                svg,
                "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e4e4e4\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                tick_label(t)
            );
        }
        for t in ticks(x0, x1, self.x_log) {
            let x = sx(t);
            let _ = write!(
                svg,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{}\" stroke=\"#f0f0f0\"/>\
                 <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                TOP + ph,
                TOP + ph + 18.0,
                tick_label(t)
            );
        }
        let _ = write!(
            svg,
            "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#333\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
             <text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            LEFT + pw / 2.0,
            HEIGHT - 12.0,
            esc(&self.x_label),
            TOP + ph / 2.0,
            esc(&self.y_label)
        );
        for (x, label) in &self.markers {
            let px = sx(*x);
            let _ = write!(
                svg,
                "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{TOP}\" y2=\"{}\" stroke=\"#b00\" stroke-dasharray=\"6 4\"/>\
                 <text x=\"{:.1}\" y=\"{}\" fill=\"#b00\">{}</text>",
                TOP + ph,
                px + 4.0,
                TOP + 14.0,
                esc(label)
            );
        }
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let mut points: Vec<(f64, f64)> = Vec::new();
            for &(x, y, err) in &s.points {
                if (self.x_log && x <= 0.0) || !y.is_finite() || (self.y_log && y <= 0.0) {
                    continue;
                }
                if s.style == Style::Step {
                    if let Some(&(_, prev_y)) = points.last() {
                        points.push((sx(x), prev_y));
                    }
                }
                points.push((sx(x), sy(y)));
                if let Some((lo, hi)) = err {
                    let (px, a, b) = (sx(x), sy(lo), sy(hi));
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
            let dash = if s.style == Style::Dashed { " stroke-dasharray=\"8 5\"" } else { "" };
            let _ = write!(svg, "<path d=\"{path}\" stroke=\"{color}\" stroke-width=\"2\" fill=\"none\"{dash}/>");
            if s.style == Style::LinePoints {
                for (x, y) in &points {
                    let _ = write!(svg, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{color}\"/>");
                }
            }
            let ly = TOP + 10.0 + i as f64 * 20.0;
            let lx = WIDTH - RIGHT + 12.0;
            let _ = write!(
                svg,
                "<line x1=\"{lx}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
                 <text x=\"{}\" y=\"{}\">{}</text>",
                lx + 22.0,
                lx + 28.0,
                ly + 4.0,
                esc(&s.label)
            );
        }
        svg.push_str("</svg>");
        svg
    }
}

/// Groups of one experiment that differ only in `axis`, keyed by the other varying
/// parameters' text (the series label).
fn series_of<'a, 'b>(
    groups: &'b [&'b Group<'a>],
    axis: &str,
    label_keys: &[String],
) -> BTreeMap<String, Vec<&'b Group<'a>>> {
    let mut out: BTreeMap<String, Vec<&Group>> = BTreeMap::new();
    for g in groups {
        let label: Vec<String> = label_keys
            .iter()
            .filter(|k| k.as_str() != axis)
            .map(|k| format!("{k}={}", param_text(g.params.get(k))))
            .collect();
        out.entry(if label.is_empty() { "measured".into() } else { label.join(" ") }).or_default().push(g);
    }
    out
}

fn x_of(g: &Group, axis: &str) -> Option<f64> {
    g.params.get(axis).and_then(Json::as_f64)
}

pub fn plots(trials: &[TrialRecord]) -> Vec<Chart> {
    let all = groups(trials);
    let mut charts = Vec::new();
    for (experiment, gs) in crate::report::stored::by_experiment(&all) {
        let n = experiment + 1;
        let axes = crate::report::stored::varying(&gs);
        match gs[0].family {
            Family::Ring => charts.extend(ring_chart(n, &gs, &axes)),
            Family::Workload => charts.extend(workload_charts(n, &gs, &axes)),
            Family::Latency => charts.extend(latency_charts(n, &gs, &axes)),
        }
    }
    charts
}

fn ring_chart(n: i64, gs: &[&Group], axes: &[String]) -> Option<Chart> {
    if !axes.iter().any(|a| a == "procs") {
        return None;
    }
    let mut plot = Plot {
        title: format!("Experiment {n}: cost per hop against ring size"),
        x_label: "processes in the ring".into(),
        y_label: "CPU ns per hop (median, min..max)".into(),
        x_log: false,
        y_log: false,
        series: Vec::new(),
        markers: Vec::new(),
    };
    for (label, mut set) in series_of(gs, "procs", axes) {
        set.sort_by(|a, b| x_of(a, "procs").unwrap_or(0.0).total_cmp(&x_of(b, "procs").unwrap_or(0.0)));
        let measured: Vec<Point> = set
            .iter()
            .filter_map(|g| {
                let s = Summary::of(&g.ring(RingOutcome::cpu_ns_per_hop))?;
                Some((x_of(g, "procs")?, s.median, Some((s.min, s.max))))
            })
            .collect();
        // The projection: every hop costing what the smallest ring's did.
        let projected: Vec<Point> = set
            .iter()
            .filter_map(|g| {
                let hops = Summary::of(&g.ring(|o| o.hops as f64))?.median;
                Some((x_of(g, "procs")?, projected_s(gs, g)? / hops * 1e9, None))
            })
            .collect();
        let points: Vec<(f64, Vec<f64>)> =
            set.iter().filter_map(|g| Some((x_of(g, "procs")?, g.ring(RingOutcome::cpu_ns_per_hop)))).collect();
        for k in crate::analysis::knee::analyse(&points).map(|s| s.knees).unwrap_or_default() {
            plot.markers.push(((k.before + k.after) / 2.0, format!("knee {:+.0}%", k.jump * 100.0)));
        }
        plot.series.push(Series { label: label.clone(), points: measured, style: Style::LinePoints });
        plot.series.push(Series {
            label: format!("{} projected", if label == "measured" { "" } else { &label }).trim().to_string(),
            points: projected,
            style: Style::Dashed,
        });
    }
    Some(Chart { name: format!("ring-{n}"), title: plot.title.clone(), svg: plot.render() })
}

fn workload_charts(n: i64, gs: &[&Group], axes: &[String]) -> Vec<Chart> {
    let mut charts = Vec::new();
    let x_axis = "procs";
    let others: Vec<String> = axes.iter().filter(|a| a.as_str() != "workload").cloned().collect();
    let mut by_workload: BTreeMap<String, Vec<&Group>> = BTreeMap::new();
    for g in gs {
        by_workload.entry(param_text(g.params.get("workload"))).or_default().push(g);
    }
    for (workload, set) in by_workload {
        let wall_s: fn(&WorkloadOutcome) -> f64 = |o| o.wall_ns as f64 / 1e9;
        let involuntary: fn(&WorkloadOutcome) -> f64 = |o| o.usage.nivcsw as f64;
        for (figure, what, log) in
            [(wall_s, "wall time, s (mean ± sd)", false), (involuntary, "involuntary switches (log)", true)]
        {
            let mut plot = Plot {
                title: format!(
                    "Experiment {n}: {workload} workload, {}",
                    if log { "involuntary context switches" } else { "wall time" }
                ),
                x_label: "processes".into(),
                y_label: what.into(),
                x_log: false,
                y_log: log,
                series: Vec::new(),
                markers: Vec::new(),
            };
            for (label, mut s) in series_of(&set, x_axis, &others) {
                s.sort_by(|a, b| x_of(a, x_axis).unwrap_or(0.0).total_cmp(&x_of(b, x_axis).unwrap_or(0.0)));
                let points = s
                    .iter()
                    .filter_map(|g| {
                        let values = g.workload(figure);
                        let sum = Summary::of(&values)?;
                        let err = (!log).then_some((sum.mean - sum.sd, sum.mean + sum.sd));
                        Some((x_of(g, x_axis)?, if log { median(&values) } else { sum.mean }, err))
                    })
                    .collect();
                plot.series.push(Series { label: label.replace("policy=", ""), points, style: Style::LinePoints });
            }
            charts.push(Chart {
                name: format!("workload-{n}-{workload}-{}", if log { "switches" } else { "wall" }),
                title: plot.title.clone(),
                svg: plot.render(),
            });
        }
    }
    charts
}

fn latency_charts(n: i64, gs: &[&Group], axes: &[String]) -> Vec<Chart> {
    // Every repeat's buckets together, one histogram per series.
    let mut merged: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
    for (label, set) in series_of(gs, "", axes) {
        let entry = merged.entry(label.replace("policy=", "")).or_default();
        for g in set {
            for o in g.outcomes().filter_map(Outcome::latency) {
                for &(v, c) in &o.histogram {
                    *entry.entry(v).or_default() += c;
                }
            }
        }
    }
    merged.retain(|_, h| !h.is_empty());
    if merged.is_empty() {
        return Vec::new();
    }
    let hist = Plot {
        title: format!("Experiment {n}: wakeup latency histogram"),
        x_label: "latency, µs (log)".into(),
        y_label: "wakeups (log)".into(),
        x_log: true,
        y_log: true,
        series: merged
            .iter()
            .map(|(label, h)| {
                // Coarse log-spaced bins (10 per decade) so the shape reads at a glance,
                // each drawn as a bar outline down to the axis (a count of 1).
                let mut bins: BTreeMap<i64, u64> = BTreeMap::new();
                for (&v, &c) in h {
                    let us = (v as f64 / 1000.0).max(0.001);
                    *bins.entry((us.log10() * 10.0).floor() as i64).or_default() += c;
                }
                let edge = |b: i64| 10f64.powf(b as f64 / 10.0);
                let points = bins
                    .iter()
                    .flat_map(|(&b, &c)| {
                        let c = c as f64;
                        [(edge(b), 1.0, None), (edge(b), c, None), (edge(b + 1), c, None), (edge(b + 1), 1.0, None)]
                    })
                    .collect();
                Series { label: label.clone(), points, style: Style::Line }
            })
            .collect(),
        markers: Vec::new(),
    };
    let tail = Plot {
        title: format!("Experiment {n}: latency tail (share of wakeups later than x)"),
        x_label: "latency, µs (log)".into(),
        y_label: "1 − CDF (log)".into(),
        x_log: true,
        y_log: true,
        series: merged
            .iter()
            .map(|(label, h)| {
                let total: u64 = h.values().sum();
                let mut below = 0u64;
                let points = h
                    .iter()
                    .filter_map(|(&v, &c)| {
                        below += c;
                        let later = (total - below) as f64 / total as f64;
                        (later > 0.0).then_some(((v as f64 / 1000.0).max(0.001), later, None))
                    })
                    .collect();
                Series { label: label.clone(), points, style: Style::Step }
            })
            .collect(),
        markers: Vec::new(),
    };
    vec![
        Chart { name: format!("latency-{n}-histogram"), title: hist.title.clone(), svg: hist.render() },
        Chart { name: format!("latency-{n}-tail"), title: tail.title.clone(), svg: tail.render() },
    ]
}

/// The overlay's colours for imported lines: ten machines never share one.
const OVERLAY_COLORS: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#b8860b",
    "#393b79", "#637939",
];
/// Lines measured by schedlab stand out: black first, then colours no imported line has.
const MEASURED_COLORS: [&str; 4] = ["#000000", "#c51b8a", "#006d2c", "#7a0177"];

/// Each line's colour and, past the palette, a dash pattern so no two lines look alike.
fn overlay_styles(lines: &[&OverlayLine]) -> Vec<(&'static str, &'static str)> {
    let (mut imported, mut measured) = (0, 0);
    lines
        .iter()
        .map(|l| {
            let (palette, count): (&[&'static str], &mut usize) =
                if l.imported { (&OVERLAY_COLORS, &mut imported) } else { (&MEASURED_COLORS, &mut measured) };
            let style = (
                palette[*count % palette.len()],
                if *count >= palette.len() { " stroke-dasharray=\"7 4\"" } else { "" },
            );
            *count += 1;
            style
        })
        .collect()
}

/// The cross-machine overlay: CPU µs per hop against processes, one line per ring
/// series of each run, its knees marked, the legend below the plot (machine names are
/// long). The y axis is logarithmic when the lines span more than a factor of 20, as a
/// 1992 machine (hundreds of µs per hop) beside a current one (a few µs) does.
pub fn overlay_chart(overlay: &Overlay) -> Option<Chart> {
    const W: f64 = 960.0;
    const L: f64 = 84.0;
    const R: f64 = 30.0;
    const T: f64 = 44.0;
    const PH: f64 = 440.0;
    const ROW: f64 = 18.0;
    let lines: Vec<&OverlayLine> = overlay.lines.iter().filter(|l| !l.points.is_empty()).collect();
    let us = |p: &OverlayPoint| p.cpu_ns_per_hop / 1000.0;
    let ys: Vec<f64> =
        lines.iter().flat_map(|l| l.points.iter().map(us)).filter(|y| y.is_finite() && *y > 0.0).collect();
    let xs: Vec<f64> = lines.iter().flat_map(|l| l.points.iter().map(|p| p.procs)).collect();
    if ys.is_empty() || xs.is_empty() {
        return None;
    }
    let (y_min, y_max) = (ys.iter().copied().fold(f64::MAX, f64::min), ys.iter().copied().fold(0.0, f64::max));
    let y_log = y_max / y_min > 20.0;
    // On a log axis the bounds are the nearest 1, 2 or 5 times a power of ten outside the data.
    let nice = |v: f64, up: bool| {
        let decade = 10f64.powf(v.log10().floor());
        let steps = [1.0, 2.0, 5.0, 10.0];
        let pick = if up {
            steps.iter().find(|&&m| m * decade >= v * 0.999)
        } else {
            steps.iter().rev().find(|&&m| m * decade <= v * 1.001)
        };
        pick.map_or(decade, |m| m * decade)
    };
    let (y0, y1) = if y_log { (nice(y_min, false), nice(y_max, true)) } else { (0.0, y_max * 1.08) };
    let (x0, x1) = (0.0, xs.iter().copied().fold(0.0, f64::max) * 1.04);
    let pw = W - L - R;
    let sx = |x: f64| L + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| {
        let f = if y_log { (y.max(y0).log10() - y0.log10()) / (y1.log10() - y0.log10()) } else { (y - y0) / (y1 - y0) };
        T + PH - f * PH
    };
    // The legend: one entry per line with its knees, in two columns when they fit.
    let entries: Vec<String> = lines
        .iter()
        .map(|l| {
            let knees: Vec<String> =
                l.knees.iter().map(|(b, a)| format!("{}→{}", tick_label(*b), tick_label(*a))).collect();
            match knees.len() {
                0 => l.label.clone(),
                1 => format!("{}  ◇ knee {}", l.label, knees[0]),
                _ => format!("{}  ◇ knees {}", l.label, knees.join(", ")),
            }
        })
        .collect();
    let columns = if entries.iter().all(|e| e.chars().count() <= 66) { 2 } else { 1 };
    let rows = entries.len().div_ceil(columns);
    let legend_top = T + PH + 82.0;
    let height = legend_top + rows as f64 * ROW + 10.0;
    let title = "Cost per hop against processes in the ring: CPU µs per hop, median over repeats";
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {height}\" width=\"{W}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"{}\">\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{}</text>",
        esc(title),
        L + pw / 2.0,
        esc(title)
    );
    // Grid: decades, and 2 and 5 within them while there are few decades to label.
    let y_ticks: Vec<(f64, bool)> = if y_log {
        let (first, last) = (y0.log10().floor() as i32, y1.log10().ceil() as i32);
        let steps: &[f64] = if last - first <= 5 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        (first..=last)
            .flat_map(|d| steps.iter().map(move |m| (m * 10f64.powi(d), *m == 1.0)))
            .filter(|(t, _)| *t >= y0 * 0.999 && *t <= y1 * 1.001)
            .collect()
    } else {
        ticks(y0, y1, false).into_iter().map(|t| (t, true)).collect()
    };
    for (t, major) in y_ticks {
        let y = sy(t);
        let stroke = if major { "#d8d8d8" } else { "#eeeeee" };
        let _ = write!(
            svg,
            "<line x1=\"{L}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{stroke}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            L + pw,
            L - 6.0,
            y + 4.0,
            tick_label(t)
        );
    }
    for t in ticks(x0, x1, false) {
        let x = sx(t);
        let _ = write!(
            svg,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{T}\" y2=\"{}\" stroke=\"#f0f0f0\"/>\
             <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            T + PH,
            T + PH + 18.0,
            tick_label(t)
        );
    }
    let y_label = if y_log { "CPU µs per hop (log scale)" } else { "CPU µs per hop" };
    let _ = write!(
        svg,
        "<rect x=\"{L}\" y=\"{T}\" width=\"{pw}\" height=\"{PH}\" fill=\"none\" stroke=\"#333\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">processes in the ring</text>\
         <text transform=\"translate(20 {}) rotate(-90)\" text-anchor=\"middle\">{y_label}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">◇ a knee (a step in the cost between two ring \
         sizes) as each run's findings state it · thick lines: measured by schedlab · thin: imported figures</text>",
        L + pw / 2.0,
        T + PH + 38.0,
        T + PH / 2.0,
        L + pw / 2.0,
        T + PH + 56.0,
    );
    // Imported lines first, so what was measured here is drawn on top.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| !lines[i].imported);
    let styles = overlay_styles(&lines);
    let mut knee_marks = String::new();
    for i in order {
        let line = lines[i];
        let (color, dash) = styles[i];
        let (width, radius) = if line.imported { (1.75, 3.0) } else { (3.0, 4.0) };
        let at = |p: &OverlayPoint| (sx(p.procs), sy(us(p)));
        let drawn: Vec<&OverlayPoint> = line.points.iter().filter(|p| us(p) > 0.0 || !y_log).collect();
        let path: String = drawn
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let (x, y) = at(p);
                format!("{}{x:.1} {y:.1}", if j == 0 { "M" } else { "L" })
            })
            .collect();
        let _ = write!(
            svg,
            "<g><title>{}</title><path class=\"overlay-line\" d=\"{path}\" stroke=\"{color}\" stroke-width=\"{width}\" \
             fill=\"none\"{dash}/>",
            esc(&line.label)
        );
        for p in &drawn {
            let (x, y) = at(p);
            let _ = write!(svg, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{radius}\" fill=\"{color}\"/>");
        }
        svg.push_str("</g>");
        for &(before, after) in &line.knees {
            let find = |procs: f64| drawn.iter().find(|p| p.procs == procs).map(|p| at(p));
            let (Some((xa, ya)), Some((xb, yb))) = (find(before), find(after)) else { continue };
            let (x, y) = ((xa + xb) / 2.0, (ya + yb) / 2.0);
            let _ = write!(
                knee_marks,
                "<polygon class=\"knee\" points=\"{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}\" fill=\"white\" \
                 stroke=\"{color}\" stroke-width=\"2.5\"><title>{}: knee between {} and {} processes</title></polygon>",
                y - 8.0,
                x + 8.0,
                y + 8.0,
                x - 8.0,
                esc(&line.label),
                tick_label(before),
                tick_label(after)
            );
        }
    }
    svg.push_str(&knee_marks);
    let column_width = (W - 2.0 * 20.0) / columns as f64;
    for (i, entry) in entries.iter().enumerate() {
        let (color, dash) = styles[i];
        let width = if lines[i].imported { 1.75 } else { 3.0 };
        let (col, row) = (i / rows, i % rows);
        let (x, y) = (20.0 + col as f64 * column_width, legend_top + row as f64 * ROW);
        let _ = write!(
            svg,
            "<line x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"{width}\"{dash}/>\
             <circle cx=\"{}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/>\
             <text x=\"{}\" y=\"{}\">{}</text>",
            x + 24.0,
            x + 12.0,
            x + 30.0,
            y + 4.0,
            esc(entry)
        );
    }
    svg.push_str("</svg>");
    Some(Chart { name: "overlay".into(), title: title.into(), svg })
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
            title: "t <1>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_log: false,
            y_log: true,
            series: vec![Series {
                label: "a".into(),
                points: vec![(1.0, 10.0, Some((5.0, 20.0))), (2.0, 100.0, None)],
                style: Style::LinePoints,
            }],
            markers: vec![(1.5, "knee".into())],
        };
        let svg = plot.render();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("t &lt;1&gt;") && svg.contains("knee") && svg.contains("<circle"));
        assert_eq!(svg.matches("<svg").count(), 1);
    }
}
