//! The forest plot of decisions: one row per question (or compared figure, or seed
//! claim), its ratio a point, its interval a bar, the margin of equivalence a band round
//! 1, each row coloured by its answer. It reads `glance::DecisionRow`s only: what is drawn
//! is what was decided, on the same numbers the question table prints.

use crate::report::glance::{Call, DecisionRow};
use std::fmt::Write;

/// The band round 1 and what it is called in the note ("the ±5% margin of equivalence").
pub struct Band {
    pub half_width: f64,
    pub label: String,
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const WIDTH: f64 = 960.0;
const ROW: f64 = 18.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 38.0;
/// Characters of a row's label at the label font's width (about 6.4 px a character).
const LABEL_CHARS: usize = 56;
const ANSWER_CHARS: usize = 26;
const CHAR_PX: f64 = 6.4;
/// The answer is bold: wider characters.
const BOLD_PX: f64 = 7.4;

/// `text` cut to `n` characters, the cut marked with "…" (the full text is the row's
/// tooltip, and the table above names it in full).
fn cut(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(n - 1).collect::<String>())
    }
}

/// Tick values for a log axis from `lo` to `hi`, at least `min_px` apart over `px` pixels.
fn ticks(lo: f64, hi: f64, px: f64, min_px: f64) -> Vec<f64> {
    let mut candidates: Vec<f64> = Vec::new();
    for e in -3..=3 {
        for m in [1.0, 2.0, 5.0] {
            candidates.push(m * 10f64.powi(e));
        }
    }
    candidates.extend([0.8, 0.9, 0.95, 1.05, 1.1, 1.25, 1.5, 3.0]);
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    let span = (hi / lo).ln();
    let at = |v: f64| (v / lo).ln() / span * px;
    let mut out: Vec<f64> = vec![1.0];
    // Nearest to 1 first, so the band's edges win over far decades.
    candidates.retain(|v| *v >= lo && *v <= hi && *v != 1.0);
    candidates.sort_by(|a, b| a.ln().abs().total_cmp(&b.ln().abs()));
    for v in candidates {
        if out.iter().all(|t| (at(*t) - at(v)).abs() >= min_px) {
            out.push(v);
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

fn tick_text(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The forest's ratio axis: its range and the column it is drawn in, between the rows'
/// labels and their answers.
struct Axis {
    lo: f64,
    hi: f64,
    x0: f64,
    x1: f64,
    /// The bottom of the last row.
    y_end: f64,
}

impl Axis {
    /// The axis for the rows drawn: every point, every finite interval end and the band,
    /// with room round them; the column as wide as the labels and answers leave.
    fn of(drawn: &[&DecisionRow], band: &Band) -> Axis {
        let widest = drawn.iter().filter_map(|r| r.margin).fold(band.half_width, f64::max);
        let mut values: Vec<f64> = vec![1.0 - 2.0 * widest, 1.0 + 2.0 * widest];
        for r in drawn {
            values.extend(
                r.ratio.iter().chain(&r.low).chain(&r.high).chain(&r.range).filter(|v| v.is_finite() && **v > 0.0),
            );
        }
        // Beyond 1/100..100 the bar runs off the axis (drawn as an arrow).
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min).max(0.01);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max).min(100.0);
        let pad = (hi / lo).ln() * 0.04;
        let (lo, hi) = ((lo.ln() - pad).exp(), (hi.ln() + pad).exp());

        let label_w = drawn
            .iter()
            .map(|r| format!("{}: {}", r.question, r.compared).chars().count().min(LABEL_CHARS))
            .max()
            .unwrap_or(0) as f64
            * CHAR_PX
            + 16.0;
        let answer_w =
            drawn.iter().map(|r| r.answer.chars().count().min(ANSWER_CHARS)).max().unwrap_or(0) as f64 * BOLD_PX + 18.0;
        let (x0, x1) = (label_w, WIDTH - answer_w);
        let y_end = TOP + ROW * drawn.len() as f64;
        Axis { lo, hi, x0, x1, y_end }
    }

    fn plot_w(&self) -> f64 {
        self.x1 - self.x0
    }

    /// Screen x of the ratio `v`, clamped to the axis.
    fn x(&self, v: f64) -> f64 {
        let (lo, hi) = (self.lo, self.hi);
        self.x0 + (v.clamp(lo, hi) / lo).ln() / (hi / lo).ln() * self.plot_w()
    }
}

/// The legend: the calls present, in the order they first appear, then what the shaded
/// band is.
fn write_legend(s: &mut String, drawn: &[&DecisionRow], band: &Band) {
    let mut calls: Vec<Call> = Vec::new();
    for r in drawn {
        if !calls.contains(&r.call) {
            calls.push(r.call);
        }
    }
    let mut lx = 8.0;
    for c in &calls {
        let _ = write!(
            s,
            "<circle cx=\"{}\" cy=\"30\" r=\"4.5\" fill=\"{}\"/><text x=\"{}\" y=\"34\">{}</text>",
            lx + 5.0,
            c.color(),
            lx + 14.0,
            c.legend()
        );
        lx += 24.0 + c.legend().chars().count() as f64 * CHAR_PX;
    }
    let band_text = format!("shaded: {}", band.label);
    let _ = write!(
        s,
        "<rect x=\"{lx}\" y=\"24\" width=\"14\" height=\"12\" fill=\"#e3f1e5\" stroke=\"#b9dcc0\"/>\
         <text x=\"{}\" y=\"34\">{}</text>",
        lx + 20.0,
        esc(&band_text)
    );
}

/// Row stripes, the band, and a row's own band where its question was asked at another
/// margin.
fn write_background(s: &mut String, drawn: &[&DecisionRow], band: &Band, axis: &Axis) {
    for i in (0..drawn.len()).step_by(2) {
        let _ = write!(
            s,
            "<rect x=\"0\" y=\"{}\" width=\"{WIDTH}\" height=\"{ROW}\" fill=\"#f6f7f9\"/>",
            TOP + ROW * i as f64
        );
    }
    let (b0, b1) = (axis.x(1.0 - band.half_width), axis.x(1.0 + band.half_width));
    let _ = write!(
        s,
        "<rect class=\"band\" x=\"{b0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#e3f1e5\" \
         fill-opacity=\"0.85\"/>",
        b1 - b0,
        axis.y_end - TOP
    );
    // A question asked at another margin: its own band, on its row.
    for (i, r) in drawn.iter().enumerate() {
        let Some(m) = r.margin.filter(|m| *m != band.half_width) else { continue };
        let (r0, r1) = (axis.x(1.0 - m), axis.x(1.0 + m));
        let _ = write!(
            s,
            "<rect class=\"row-band\" x=\"{r0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#e3f1e5\" \
             stroke=\"#b9dcc0\"/>",
            TOP + ROW * i as f64 + 2.0,
            r1 - r0,
            ROW - 4.0
        );
    }
}

/// The grid (the line at 1 solid), the axis line and the note under it.
fn write_grid(s: &mut String, axis: &Axis, note: &str) {
    let Axis { x0, x1, y_end, .. } = *axis;
    for t in ticks(axis.lo, axis.hi, axis.plot_w(), 44.0) {
        let tx = axis.x(t);
        let (stroke, dash) = if t == 1.0 { ("#555", "") } else { ("#ddd", " stroke-dasharray=\"3 3\"") };
        let _ = write!(
            s,
            "<line x1=\"{tx:.1}\" y1=\"{TOP}\" x2=\"{tx:.1}\" y2=\"{y_end}\" stroke=\"{stroke}\"{dash}/>\
             <text x=\"{tx:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
            y_end + 15.0,
            tick_text(t)
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{x0}\" y1=\"{y_end}\" x2=\"{x1}\" y2=\"{y_end}\" stroke=\"#888\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
        (x0 + x1) / 2.0,
        y_end + 30.0,
        esc(note)
    );
}

/// Row `i`: its label, its bar (an interval, or a claim's range), its answer, all in a
/// group whose tooltip gives the row's numbers in full.
fn write_row(s: &mut String, i: usize, r: &DecisionRow, axis: &Axis) {
    let cy = TOP + ROW * i as f64 + ROW / 2.0;
    let color = r.call.color();
    let label = format!("{}: {}", r.question, r.compared);
    let tip = format!(
        "{label}: {} (ratio {}, interval {}{}, blocks {}, Holm p {})",
        r.answer,
        r.ratio_text(),
        r.interval_text(),
        r.confidence.map_or(String::new(), |c| format!(" at {:.1}%", c * 100.0)),
        r.blocks_text(),
        r.p_text()
    );
    let _ = write!(s, "<g class=\"row\"><title>{}</title>", esc(&tip));
    let _ = write!(s, "<text x=\"8\" y=\"{:.1}\">{}</text>", cy + 4.0, esc(&cut(&label, LABEL_CHARS)));
    if r.range.is_empty() {
        write_interval(s, r, axis, cy, color);
    } else {
        // A claim: the range of its comparisons' ratios, dashed, each ratio a dot.
        let lo_r = r.range.iter().copied().fold(f64::INFINITY, f64::min);
        let hi_r = r.range.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let _ = write!(
            s,
            "<line x1=\"{:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{color}\" stroke-width=\"2\" \
             stroke-dasharray=\"4 3\"/>",
            axis.x(lo_r),
            axis.x(hi_r)
        );
        for v in &r.range {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"3.5\" fill=\"#fff\" stroke=\"{color}\" stroke-width=\"2\"/>",
                axis.x(*v)
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{color}\" font-weight=\"bold\">{}</text></g>",
        axis.x1 + 10.0,
        cy + 4.0,
        esc(&cut(&r.answer, ANSWER_CHARS))
    );
}

/// A row's interval, a solid bar (an unbounded or off-axis end an arrow, a bounded one a
/// tick), and its ratio a dot, at height `cy`.
fn write_interval(s: &mut String, r: &DecisionRow, axis: &Axis, cy: f64, color: &str) {
    if r.low.is_some() || r.high.is_some() {
        let from = r.low.unwrap_or(0.0);
        let to = r.high.unwrap_or(f64::INFINITY);
        let (a, b) = (axis.x(from), axis.x(to));
        let _ = write!(
            s,
            "<line x1=\"{a:.1}\" y1=\"{cy:.1}\" x2=\"{b:.1}\" y2=\"{cy:.1}\" stroke=\"{color}\" \
             stroke-width=\"2.5\"/>"
        );
        for (end, open, dir) in [(a, from < axis.lo, -1.0), (b, to > axis.hi, 1.0)] {
            if open {
                let _ = write!(
                    s,
                    "<path d=\"M{:.1} {:.1}l{:.1} 4l0 -8z\" fill=\"{color}\"/>",
                    end + dir * 2.0,
                    cy,
                    -dir * 7.0
                );
            } else {
                let _ = write!(
                    s,
                    "<line x1=\"{end:.1}\" y1=\"{:.1}\" x2=\"{end:.1}\" y2=\"{:.1}\" stroke=\"{color}\" \
                     stroke-width=\"1.5\"/>",
                    cy - 4.0,
                    cy + 4.0
                );
            }
        }
    }
    if let Some(v) = r.ratio.filter(|v| v.is_finite()) {
        let _ = write!(s, "<circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{color}\" stroke=\"#fff\"/>", axis.x(v));
    }
}

/// The plot as SVG, `None` when no row has anything to draw.
pub fn svg(title: &str, rows: &[DecisionRow], band: &Band, note: &str) -> Option<String> {
    let drawn: Vec<&DecisionRow> = rows.iter().filter(|r| r.drawn()).collect();
    if drawn.is_empty() {
        return None;
    }
    let axis = Axis::of(&drawn, band);
    let height = TOP + ROW * drawn.len() as f64 + BOTTOM;

    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"forest\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"system-ui,sans-serif\" font-size=\"12\">\
         <title>{}</title><rect width=\"{WIDTH}\" height=\"{height}\" fill=\"#fff\"/>\
         <text x=\"8\" y=\"16\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        esc(title),
        esc(title)
    );
    write_legend(&mut s, &drawn, band);
    // Row stripes, the band, the grid and the line at 1.
    write_background(&mut s, &drawn, band, &axis);
    write_grid(&mut s, &axis, note);
    for (i, r) in drawn.iter().enumerate() {
        write_row(&mut s, i, r, &axis);
    }
    s.push_str("</svg>");
    Some(s)
}

/// The forest of a run's questions: the band is the run's margin of equivalence (a
/// question asked at another margin has its own band on its row).
pub fn questions_svg(rows: &[DecisionRow]) -> Option<String> {
    let shared = crate::report::glance::shared_margin(rows);
    let margin = shared.unwrap_or(crate::analysis::sequential::MARGIN);
    let own = if shared.is_some() { "" } else { "; a question's own margin, on its row" };
    svg(
        "Decisions: the median within-block ratio and its interval, per question",
        rows,
        &Band {
            half_width: margin, label: format!("within ±{:.0}% (the margin of equivalence){own}", margin * 100.0)
        },
        "runner-up / leader (log scale): a lead's interval lies right of 1, an equivalence's inside the band",
    )
}

/// The forest of a seed's claims: each comparison's ratio a dot, a claim's range of them
/// dashed; the band is a run's margin of equivalence (the seed's data is held to ±10%).
pub fn claims_svg(rows: &[DecisionRow]) -> Option<String> {
    let margin = crate::analysis::sequential::MARGIN;
    svg(
        "The seed's claims: the ratio of each comparison, on the seed's data and on this run",
        rows,
        &Band { half_width: margin, label: format!("within ±{:.0}% (this run's margin)", margin * 100.0) },
        "ratio as each claim's effect states it (log scale); dashed: the range over the claim's comparisons",
    )
}

/// The forest of a comparison: B over A per figure; the band is the regression
/// threshold (a regression's whole interval lies right of it).
pub fn compare_svg(rows: &[DecisionRow], threshold: f64, interleaved: bool) -> Option<String> {
    let interval = if interleaved { "the sign test's confidence sequence" } else { "95% bootstrap interval" };
    svg(
        "B against A: the ratio of each figure and its interval",
        rows,
        &Band {
            half_width: threshold, label: format!("within ±{:.1}% (the regression threshold)", threshold * 100.0)
        },
        &format!("B / A (log scale; {interval}): right of 1, B is slower"),
    )
}

/// A run's forest plots for `report --svg`: its questions' (`forest`) and, for a seed's
/// suite, its claims' (`claims-forest`).
pub fn run_charts(
    found: &[crate::decide::findings::Finding],
    claims: Option<&crate::decide::claims::ClaimsTable>,
) -> Vec<crate::report::chart::Chart> {
    let questions = crate::report::glance::questions(found);
    let claim_rows = claims.map(crate::report::glance::claim_rows).unwrap_or_default();
    [("forest", questions_svg(&questions)), ("claims-forest", claims_svg(&claim_rows))]
        .into_iter()
        .filter_map(|(name, svg)| Some(crate::report::chart::Chart { name: name.to_string(), svg: svg? }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(call: Call, ratio: f64, low: Option<f64>, high: Option<f64>) -> DecisionRow {
        DecisionRow {
            question: "workload cpu procs=8".into(),
            compared: "OTHER/FIFO wall".into(),
            call,
            answer: "FIFO leads".into(),
            ratio: Some(ratio),
            low,
            high,
            confidence: Some(0.98),
            range: Vec::new(),
            blocks: Some(20),
            p: Some(0.01),
            margin: Some(0.05),
        }
    }

    #[test]
    fn a_row_is_drawn_where_its_numbers_say() {
        let rows = [
            row(Call::Lead, 1.3, Some(1.1), Some(1.5)),
            row(Call::Equivalent, 1.0, Some(0.98), Some(1.03)),
            row(Call::Open, 1.02, Some(0.9), None),
            DecisionRow { ratio: None, low: None, high: None, ..row(Call::Reading, 1.0, None, None) },
        ];
        let svg = questions_svg(&rows).unwrap();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        // Three rows drawn (the reading has no ratio), each with its answer's colour.
        assert_eq!(svg.matches("<g class=\"row\">").count(), 3);
        for c in [Call::Lead, Call::Equivalent, Call::Open] {
            assert!(svg.contains(&format!("fill=\"{}\" stroke=\"#fff\"", c.color())), "{c:?}");
        }
        // The unbounded high end is an arrow; the band spans 0.95..1.05.
        assert_eq!(svg.matches("<path").count(), 1);
        let band = svg.split("class=\"band\" x=\"").nth(1).unwrap();
        let bx: f64 = band.split('"').next().unwrap().parse().unwrap();
        let ones = svg.split("stroke=\"#555\"").count() - 1;
        assert_eq!(ones, 1, "one line at 1");
        assert!(bx > 0.0 && bx < WIDTH);
        assert!(svg.contains("<text x=\"8\" y=\"") && svg.contains("FIFO leads"));
    }

    #[test]
    fn a_question_at_its_own_margin_has_its_own_band() {
        let wide = DecisionRow { margin: Some(0.10), ..row(Call::Equivalent, 1.04, Some(0.97), Some(1.08)) };
        let same = [row(Call::Lead, 1.3, Some(1.1), Some(1.5)), row(Call::Equivalent, 1.0, Some(0.98), Some(1.03))];
        let svg = questions_svg(&same).unwrap();
        assert!(!svg.contains("row-band") && !svg.contains("own margin"), "{svg}");
        let svg = questions_svg(&[same[0].clone(), wide]).unwrap();
        assert_eq!(svg.matches("class=\"row-band\"").count(), 1, "{svg}");
        assert!(svg.contains("a question&#39;s own margin") || svg.contains("a question's own margin"), "{svg}");
    }

    #[test]
    fn every_text_from_a_run_is_escaped() {
        let mut r = row(Call::Lead, 1.3, Some(1.1), Some(1.5));
        r.question = "command cmd=<script>alert(\"x\")</script>".into();
        r.answer = "a&b leads".into();
        let svg = questions_svg(&[r]).unwrap();
        assert!(!svg.contains("<script") && svg.contains("&lt;script&gt;alert(&quot;x&quot;)"), "{svg}");
        assert!(svg.contains("a&amp;b leads") && !svg.contains("a&b"), "{svg}");
    }

    #[test]
    fn nothing_to_draw_is_no_plot() {
        let reading = DecisionRow { ratio: None, low: None, high: None, ..row(Call::Reading, 1.0, None, None) };
        assert!(questions_svg(&[reading]).is_none());
    }

    #[test]
    fn ticks_keep_one_and_their_distance() {
        let t = ticks(0.9, 8.0, 500.0, 44.0);
        assert!(t.contains(&1.0) && t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
        let at = |v: f64| (v / 0.9f64).ln() / (8.0f64 / 0.9).ln() * 500.0;
        assert!(t.windows(2).all(|w| at(w[1]) - at(w[0]) >= 44.0), "{t:?}");
    }
}
