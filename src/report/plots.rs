//! SVG plots of a stored run, drawn here (no external tools, no fonts to load): the ring
//! cost against the projected line with the knee marked, workload wall time and
//! context switches per policy, latency histograms and tail (1 − CDF) plots, and the
//! cross-machine overlay of several runs' rings. One renderer, `Plot`, draws them all.

use crate::analysis::stats::median;
use crate::families::with_family;
use crate::report::chart::{tick_label, Chart, Layout, Mark, Plot, Point, Series, Style};
use crate::report::family::FamilyReport;
use crate::report::overlay::{Overlay, OverlayLine};
use crate::store::group::{groups, Group};
use crate::store::TrialRecord;
use std::collections::BTreeMap;

/// Groups of one experiment that differ only in `axis`, keyed by the other varying
/// parameters' text (the series label).
pub fn series_of<'a, 'b>(
    groups: &'b [&'b Group<'a>],
    axis: &str,
    label_keys: &[String],
) -> BTreeMap<String, Vec<&'b Group<'a>>> {
    let mut out: BTreeMap<String, Vec<&Group>> = BTreeMap::new();
    for g in groups {
        let label: Vec<String> =
            label_keys.iter().filter(|k| k.as_str() != axis).map(|k| format!("{k}={}", g.value_text(k))).collect();
        out.entry(if label.is_empty() { "measured".into() } else { label.join(" ") }).or_default().push(g);
    }
    out
}

pub fn plots(trials: &[TrialRecord]) -> Vec<Chart> {
    let all = groups(trials);
    let mut charts = Vec::new();
    for (experiment, gs) in crate::report::cells::by_experiment(&all) {
        let n = experiment + 1;
        let axes = crate::store::group::varying(&gs);
        charts.extend(with_family!(gs[0].family, F => F::charts(n, &gs, &axes)));
    }
    charts
}

/// The overlay's colours for imported lines: ten machines never share one.
const OVERLAY_COLORS: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#b8860b",
    "#393b79", "#637939",
];
/// Lines measured by schedlab stand out: black first, then colours no imported line has.
const MEASURED_COLORS: [&str; 4] = ["#000000", "#c51b8a", "#006d2c", "#7a0177"];

/// Each line's colour and, past the palette, a dash pattern so no two lines look alike.
fn overlay_styles(lines: &[&OverlayLine]) -> Vec<(&'static str, Option<&'static str>)> {
    let (mut imported, mut measured) = (0, 0);
    lines
        .iter()
        .map(|l| {
            let (palette, count): (&[&'static str], &mut usize) =
                if l.imported { (&OVERLAY_COLORS, &mut imported) } else { (&MEASURED_COLORS, &mut measured) };
            let style = (palette[*count % palette.len()], (*count >= palette.len()).then_some("7 4"));
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
    let lines: Vec<&OverlayLine> = overlay.lines.iter().filter(|l| !l.points.is_empty()).collect();
    if !lines.iter().flat_map(|l| &l.points).any(|p| p.cpu_ns_per_hop.is_finite() && p.cpu_ns_per_hop > 0.0) {
        return None;
    }
    let mut plot = Plot {
        x_from_zero: true,
        y_log_beyond: Some(20.0),
        fine_log: true,
        note: Some(
            "◇ a knee (a step in the cost between two ring sizes) as each run's findings state it · \
             thick lines: measured by schedlab · thin: imported figures"
                .into(),
        ),
        layout: Layout::WIDE,
        ..Plot::new(
            "Cost per hop against processes in the ring: CPU µs per hop, median over repeats",
            "processes in the ring",
            "CPU µs per hop",
        )
    };
    for (line, (color, dash)) in lines.iter().zip(overlay_styles(&lines)) {
        let knees: Vec<String> =
            line.knees.iter().map(|(b, a)| format!("{}→{}", tick_label(*b), tick_label(*a))).collect();
        let legend = match knees.len() {
            0 => line.label.clone(),
            1 => format!("{}  ◇ knee {}", line.label, knees[0]),
            _ => format!("{}  ◇ knees {}", line.label, knees.join(", ")),
        };
        let points = line.points.iter().map(|p| (p.procs, p.cpu_ns_per_hop / 1000.0, None)).collect();
        // Imported lines behind and thin, so what was measured here is seen on top.
        plot.series.push(Series {
            color: Some(color),
            dash,
            width: if line.imported { 1.75 } else { 3.0 },
            in_front: !line.imported,
            marks: line
                .knees
                .iter()
                .map(|&(before, after)| Mark {
                    x: (before + after) / 2.0,
                    class: "knee",
                    title: format!(
                        "{}: knee between {} and {} processes",
                        line.label,
                        tick_label(before),
                        tick_label(after)
                    ),
                })
                .collect(),
            ..Series::new(legend, points, Style::LinePoints)
        });
    }
    Some(Chart { name: "overlay".into(), svg: plot.render() })
}

/// A trend: one cell's figure run after run (x: the run's place in time order), the level
/// of each segment between change points as a step line, and a ◇ where each shift began.
pub fn trend_chart(series: &crate::decide::trend::TrendSeries, name: &str) -> Chart {
    let values: Vec<f64> = series.points.iter().map(|p| p.value).collect();
    let points: Vec<Point> = values.iter().enumerate().map(|(i, v)| ((i + 1) as f64, *v, None)).collect();
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(series.shifts.iter().map(|c| c.point.index));
    bounds.push(values.len());
    let mut levels: Vec<Point> = Vec::new();
    for pair in bounds.windows(2) {
        let level = median(&values[pair[0]..pair[1]]);
        levels.push((pair[0] as f64 + 0.5, level, None));
        levels.push((pair[1] as f64 + 0.5, level, None));
    }
    let marks = series
        .shifts
        .iter()
        .map(|c| Mark {
            x: c.point.index as f64 + 0.5,
            class: "change",
            title: format!("run {}: {:+.1}% (p {:.1e})", c.run, c.point.change() * 100.0, c.point.p),
        })
        .collect();
    let mut plot = Plot {
        y_log_beyond: Some(20.0),
        note: Some("◇ a change point: the run where a new level began · dashed: the median of each segment".into()),
        ..Plot::new(
            format!("{} on {}: {}", series.label, series.machine, series.cell_text()),
            "n-th run of this series, in time order",
            series.label,
        )
    };
    plot.series.push(Series { marks, ..Series::new("run median", points, Style::LinePoints) });
    plot.series.push(Series { dash: Some("6 4"), width: 1.5, ..Series::new("segment level", levels, Style::Line) });
    Chart { name: name.to_string(), svg: plot.render() }
}
