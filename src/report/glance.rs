//! Answers at a glance: one row per question of a run (or per compared figure, or per
//! seed claim), read off the typed answers that `findings`, `compare` and `claims` already
//! decided, never recomputed. The same rows feed the terminal's question table (one line a
//! question, at most `TEXT_WIDTH` columns), the Markdown and HTML tables, and the forest
//! plot (`report::forest`). The long form of each finding stays where it was: the text and
//! JSON reports, and a disclosure on the HTML page.

use crate::analysis::knee::Shape;
use crate::analysis::sequential::{self, MARGIN};
use crate::decide::findings::{question_answered, Answer, AnswerVerdict, Finding};
use crate::report::compare::p_text;
use crate::report::table::Table;

/// The widest line of the terminal's question table.
pub const TEXT_WIDTH: usize = 100;

/// What a row's answer is, which decides its colour in the forest plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// A question's leader is below every other cell.
    Lead,
    /// Equal within the margin.
    Equivalent,
    /// Not decided yet (or not decidable with these blocks).
    Open,
    /// A curve's reading (a ring sweep's shape): no ratio to draw.
    Reading,
    /// A seed's claim on one data set.
    Holds,
    Refuted,
    /// `compare`: B against A.
    Faster,
    Slower,
    Regression,
}

impl Call {
    /// The colour of its point and bar, and its legend entry.
    pub fn color(self) -> &'static str {
        match self {
            Call::Lead | Call::Holds | Call::Faster => "#1f6fb4",
            Call::Equivalent => "#2a9d3a",
            Call::Open | Call::Reading => "#8a8a8a",
            Call::Slower => "#e07b00",
            Call::Refuted | Call::Regression => "#c62828",
        }
    }

    pub fn legend(self) -> &'static str {
        match self {
            Call::Lead => "a lead",
            Call::Equivalent => "equivalent",
            Call::Open => "open",
            Call::Reading => "a reading",
            Call::Holds => "holds",
            Call::Refuted => "refuted",
            Call::Faster => "B faster",
            Call::Slower => "B slower",
            Call::Regression => "B slower: a regression",
        }
    }

    /// The CSS class of its answer cell on the HTML page.
    pub fn class(self) -> &'static str {
        match self {
            Call::Lead | Call::Holds | Call::Faster => "call-lead",
            Call::Equivalent => "call-equivalent",
            Call::Open => "call-open",
            Call::Reading => "call-reading",
            Call::Slower => "call-slower",
            Call::Refuted | Call::Regression => "call-refuted",
        }
    }
}

/// One row of a question table, and of the forest plot when it has a ratio.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionRow {
    /// Which question: the family and what sets it apart from the run's other questions
    /// ("workload cpu procs=8").
    pub question: String,
    /// What the ratio is of: "OTHER/FIFO wall" (the runner-up over the leader).
    pub compared: String,
    pub call: Call,
    /// "FIFO leads", "equivalent ±5%", "open, within ±7%".
    pub answer: String,
    /// The ratio and its interval (an end `None`: unbounded that way).
    pub ratio: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// The interval's confidence (0.983), where it has one.
    pub confidence: Option<f64>,
    /// A claim's bar is the range of its comparisons' ratios (drawn dashed, each ratio a
    /// dot), not an interval.
    pub range: Vec<f64>,
    pub blocks: Option<usize>,
    /// The Holm-adjusted p of the answer given (an open question's: the nearer of a lead
    /// and equivalence).
    pub p: Option<f64>,
    /// The margin of equivalence its question was asked at, where it has one.
    pub margin: Option<f64>,
}

impl DecisionRow {
    /// A row with an answer but no ratio, interval, blocks or p (a ring's reading, a
    /// claim before its range and p are set).
    fn answer_only(question: String, compared: String, call: Call, answer: String) -> DecisionRow {
        DecisionRow {
            question,
            compared,
            call,
            answer,
            ratio: None,
            low: None,
            high: None,
            confidence: None,
            range: Vec::new(),
            blocks: None,
            p: None,
            margin: None,
        }
    }

    /// Drawn in the forest plot: a ratio, or a claim's range.
    pub fn drawn(&self) -> bool {
        self.ratio.is_some_and(f64::is_finite) || !self.range.is_empty()
    }

    pub fn ratio_text(&self) -> String {
        self.ratio.filter(|r| r.is_finite()).map_or("-".into(), |r| format!("{r:.3}"))
    }

    /// "0.999..1.032", "1.200..∞", or "-".
    pub fn interval_text(&self) -> String {
        match (self.low, self.high) {
            (None, None) => "-".into(),
            (low, high) => format!(
                "{}..{}",
                low.map_or("0".into(), |v| format!("{v:.3}")),
                high.map_or("∞".into(), |v| format!("{v:.3}"))
            ),
        }
    }

    pub fn blocks_text(&self) -> String {
        self.blocks.map_or("-".into(), |b| b.to_string())
    }

    pub fn p_text(&self) -> String {
        self.p.map_or("-".into(), p_text)
    }
}

/// A finding's "what", "workload (iterations=10000000 procs=8 workload=cpu)", as its
/// family and its settings (a value may hold spaces: a key starts each setting).
fn split_what(what: &str) -> (String, Vec<(String, String)>) {
    let Some((family, rest)) = what.split_once(" (") else { return (what.to_string(), Vec::new()) };
    let inner = rest.strip_suffix(')').unwrap_or(rest);
    let is_key = |w: &str| {
        w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !k.starts_with(char::is_numeric)
        })
    };
    let mut settings: Vec<(String, String)> = Vec::new();
    for word in inner.split(' ') {
        match settings.last_mut() {
            Some((_, value)) if !is_key(word) => {
                value.push(' ');
                value.push_str(word);
            }
            _ => {
                let (k, v) = word.split_once('=').unwrap_or((word, ""));
                settings.push((k.to_string(), v.to_string()));
            }
        }
    }
    (family.to_string(), settings)
}

/// Short names for questions: the family, the workload kind, and the settings that differ
/// between the questions of the same family and kind (the rest is in the tables and the
/// findings in full).
fn short_names(whats: &[&str]) -> Vec<String> {
    let split: Vec<(String, Vec<(String, String)>)> = whats.iter().map(|w| split_what(w)).collect();
    let kind = |s: &[(String, String)]| s.iter().find(|(k, _)| k == "workload").map(|(_, v)| v.clone());
    split
        .iter()
        .map(|(family, settings)| {
            let peers: Vec<&Vec<(String, String)>> =
                split.iter().filter(|(f, s)| f == family && kind(s) == kind(settings)).map(|(_, s)| s).collect();
            let mut name = family.clone();
            if let Some(k) = kind(settings) {
                name.push(' ');
                name.push_str(&k);
            }
            for (key, value) in settings.iter().filter(|(k, _)| k != "workload") {
                let shared = peers.iter().all(|s| s.iter().any(|(k, v)| k == key && v == value));
                if !shared {
                    name.push_str(&format!(" {key}={value}"));
                }
            }
            name
        })
        .collect()
}

/// A question's answer as a row: its call, its short answer, its ratio and interval.
fn answer_row(question: String, compared: String, leader: &str, a: &Answer) -> DecisionRow {
    let (call, answer, p) = match a.verdict {
        AnswerVerdict::Leads => (Call::Lead, format!("{leader} leads"), a.p_leads),
        AnswerVerdict::Equivalent => {
            (Call::Equivalent, format!("equivalent ±{:.0}%", a.margin * 100.0), a.p_equivalent)
        }
        AnswerVerdict::TooFewBlocks => (Call::Open, "open, too few blocks".to_string(), a.p_leads.min(a.p_equivalent)),
        AnswerVerdict::Undecided => {
            // What is known: the narrowest margin shown, or the blocks a lead needs at least.
            let known = match a.supported_margin.filter(|m| *m < 1.0) {
                Some(m) => format!(", within ±{}%", (m * 100.0).ceil()),
                None if a.blocks < a.fewest_blocks => format!(", needs {}+ blocks", a.fewest_blocks),
                None => a.more_blocks.map_or(String::new(), |n| format!(", ~{n} more blocks")),
            };
            (Call::Open, format!("open{known}"), a.p_leads.min(a.p_equivalent))
        }
    };
    DecisionRow {
        question,
        compared,
        call,
        answer,
        ratio: Some(a.ratio).filter(|r| r.is_finite()),
        low: a.ci_low,
        high: a.ci_high,
        confidence: (a.ci_low.is_some() || a.ci_high.is_some()).then_some(1.0 - a.ci_level),
        range: Vec::new(),
        blocks: Some(a.blocks),
        p: Some(p),
        margin: Some(a.margin),
    }
}

/// The run's questions, one row each, in the findings' order: each question's answer on
/// its headline figure (a latency question's p99; its maximum is in the findings in full),
/// and each ring sweep's reading.
pub fn questions(found: &[Finding]) -> Vec<DecisionRow> {
    let asked: Vec<&Finding> = found.iter().filter(|f| question_answered(f).is_some()).collect();
    let whats: Vec<&str> = asked
        .iter()
        .map(|f| match f {
            Finding::BestPolicy { what, .. }
            | Finding::TailLeader { what, .. }
            | Finding::Compared { what, .. }
            | Finding::Scaling { what, .. } => what.as_str(),
            _ => "",
        })
        .collect();
    let names = short_names(&whats);
    asked
        .iter()
        .zip(names)
        .filter_map(|(f, name)| match f {
            Finding::BestPolicy { best, next, answer, .. } => Some(answer_row(
                name,
                format!("{}/{} wall", next.to_uppercase(), best.to_uppercase()),
                &best.to_uppercase(),
                answer,
            )),
            Finding::TailLeader { p99_policy, p99_answer, overruns, .. } => {
                let leader = p99_policy.to_uppercase();
                // The runner-up is named where the question has two policies.
                let others: Vec<String> =
                    overruns.iter().map(|(p, _)| p.to_uppercase()).filter(|p| *p != leader).collect();
                let next = if others.len() == 1 { others[0].clone() } else { "next".to_string() };
                Some(answer_row(name, format!("{next}/{leader} p99"), &leader, p99_answer))
            }
            Finding::Compared { axis, figure, best, next, answer, .. } => {
                Some(answer_row(format!("{name} by {axis}"), format!("{next}/{best} {figure}"), best, answer))
            }
            Finding::Scaling { from, to, knees, shape, .. } => {
                let (call, reading) = match shape {
                    Shape::Linear => (Call::Reading, "flat cost"),
                    Shape::SteadyRise => (Call::Reading, "rising cost"),
                    Shape::SteadyFall => (Call::Reading, "falling cost"),
                    Shape::Unclear => (Call::Open, "unclear"),
                };
                let knees = match knees {
                    0 => "no knee".to_string(),
                    1 => "1 knee".to_string(),
                    n => format!("{n} knees"),
                };
                Some(DecisionRow::answer_only(
                    name,
                    format!("CPU/hop {from}..{to}"),
                    call,
                    format!("{reading}, {knees}"),
                ))
            }
            _ => None,
        })
        .collect()
}

/// The findings in full that no row of the question table stands for: knees (a row
/// counts them) and questions are left out; periodic spikes are not.
pub fn other_findings(found: &[Finding]) -> Vec<&Finding> {
    found.iter().filter(|f| matches!(f, Finding::SpikePeriod { .. })).collect()
}

pub const HEADERS: [&str; 7] = ["question", "compared", "answer", "ratio", "interval", "blocks", "Holm p"];

/// The margin of equivalence the rows share, or `None` when their questions were asked
/// at different margins.
pub fn shared_margin(rows: &[DecisionRow]) -> Option<f64> {
    let mut margins = rows.iter().filter_map(|r| r.margin);
    let first = margins.next().unwrap_or(MARGIN);
    margins.all(|m| m == first).then_some(first)
}

/// The method, stated once under the table.
pub fn method_text(rows: &[DecisionRow]) -> String {
    let margin =
        shared_margin(rows).map_or("the margin its answer names".to_string(), |m| format!("{:.0}%", m * 100.0));
    format!(
        "Ratio: the runner-up's over the leader's, the median of its blocks; interval: at the level Holm gave its \
         claim (equivalence: inside 1 ± {margin}). Holm p: of the answer given (an open question's: the nearer of a \
         lead and equivalence). Method: {}.",
        sequential::METHOD
    )
}

fn cells(r: &DecisionRow) -> [String; 7] {
    [
        r.question.clone(),
        r.compared.clone(),
        r.answer.clone(),
        r.ratio_text(),
        r.interval_text(),
        r.blocks_text(),
        r.p_text(),
    ]
}

/// `text` cut to `width` characters, the cut marked with "…".
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The question table for the terminal: a header, then one line a question, none wider
/// than `TEXT_WIDTH`. The numbers are never cut; where the names are too long for the
/// line, what the ratio is of gives way first, then the question's name; the answer never
/// (each cut marked with "…"; the findings in full name them all).
pub fn text(rows: &[DecisionRow]) -> String {
    let all: Vec<[String; 7]> = rows.iter().map(cells).collect();
    let mut widths: Vec<usize> = (0..7)
        .map(|c| all.iter().map(|r| r[c].chars().count()).chain([HEADERS[c].chars().count()]).max().unwrap_or(0))
        .collect();
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * (w.len() - 1);
    // What the ratio is of gives way down to 15 columns, then the question's name down
    // to 12, then what the ratio is of down to 8; the answer is never cut.
    for (column, floor) in [(1, 15), (0, 12), (1, 8)] {
        let over = total(&widths).saturating_sub(TEXT_WIDTH);
        widths[column] = widths[column].saturating_sub(over).max(floor.min(widths[column]));
    }
    let line = |cells: &[String]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| {
                let cell = fit(cell, w);
                if c < 3 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = line(&HEADERS.map(String::from));
    out.push('\n');
    for r in &all {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

/// `text` wrapped at `width` columns on spaces, each line after the first indented.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let limit = if lines.is_empty() { width } else { width - indent.chars().count() };
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > limit {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| if i == 0 { l.clone() } else { format!("{indent}{l}") })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The question table as a `Table` (Markdown; the HTML page draws its own).
pub fn table(rows: &[DecisionRow]) -> Table {
    let mut t = Table::new(HEADERS).left_align(0).left_align(1).left_align(2);
    for r in rows {
        t.push(cells(r).to_vec());
    }
    t
}

/// "questions: 5 of 6 answered": how many rows are decided (a lead, an equivalence, a
/// ring's reading).
pub fn headline(rows: &[DecisionRow]) -> String {
    let answered = rows.iter().filter(|r| r.call != Call::Open).count();
    format!("questions: {answered} of {} answered", rows.len())
}

/// The question block of a terminal or text report: the headline, the table, the method
/// wrapped to the table's width. Empty when the run asked no question.
pub fn text_block(rows: &[DecisionRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    format!("{}\n{}{}\n", headline(rows), text(rows), wrap(&method_text(rows), TEXT_WIDTH, "  "))
}

/// A seed's claims as forest rows: each claim on the seed's data and on this run, where
/// its comparisons have ratios (the range of them, as its effect states it).
pub fn claim_rows(table: &crate::decide::claims::ClaimsTable) -> Vec<DecisionRow> {
    use crate::decide::claims::ClaimVerdict as Claim;
    let mut rows = Vec::new();
    for r in &table.rows {
        for (side, e) in [("seed data", &r.seed_data), ("this run", &r.this_run)] {
            let ratios: Vec<f64> = e.ratios.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
            if ratios.is_empty() {
                continue;
            }
            let call = match e.verdict {
                Claim::Holds => Call::Holds,
                Claim::Refuted => Call::Refuted,
                Claim::Undecided | Claim::NotCovered | Claim::Untestable => Call::Open,
            };
            // The effect without its numbers: "OTHER / FIFO+RR wall".
            let what = e.effect.split("; ").next().unwrap_or_default();
            let what = what.rsplit_once(' ').map_or(what, |(words, _)| words);
            rows.push(DecisionRow {
                range: ratios,
                p: e.p_adjusted.or(e.p),
                ..DecisionRow::answer_only(
                    format!("{} · {side}", r.id),
                    what.to_string(),
                    call,
                    e.verdict.as_str().to_string(),
                )
            });
        }
    }
    rows
}

/// A comparison of two runs (`compare`, `ab`) as rows: one a compared figure, B over A
/// with its interval, coloured by its verdict.
pub fn compare_rows(rows: &[crate::decide::compare::Row]) -> Vec<DecisionRow> {
    use crate::decide::compare::Verdict as Cmp;
    let whats: Vec<String> = rows
        .iter()
        .map(|r| {
            let settings = r.params.all_text();
            if settings.is_empty() {
                r.family.as_str().to_string()
            } else {
                format!("{} ({settings})", r.family.as_str())
            }
        })
        .collect();
    let names = short_names(&whats.iter().map(String::as_str).collect::<Vec<_>>());
    rows.iter()
        .zip(names)
        .map(|(r, name)| {
            let call = match r.verdict {
                Cmp::Slower if r.regression => Call::Regression,
                Cmp::Slower => Call::Slower,
                Cmp::Faster => Call::Faster,
                Cmp::Equivalent => Call::Equivalent,
                Cmp::NoDifference | Cmp::Drift | Cmp::TooFew(_) => Call::Open,
            };
            // Short: the table beside it has the verdict in full.
            let answer = match &r.verdict {
                Cmp::TooFew(_) => "too few to decide".to_string(),
                Cmp::Slower if r.regression => "B slower: REGRESSION".to_string(),
                Cmp::NoDifference => "no difference shown".to_string(),
                Cmp::Drift => "inside the drift".to_string(),
                Cmp::Equivalent => format!("equivalent ±{:.0}%", r.margin * 100.0),
                v => v.label(),
            };
            DecisionRow {
                question: name,
                compared: format!("B/A {}", r.label),
                call,
                answer,
                ratio: r.ratio.filter(|v| v.is_finite()),
                low: r.ci.map(|c| c.0),
                high: r.ci.map(|c| c.1),
                confidence: None,
                range: Vec::new(),
                blocks: r.blocks,
                p: r.p_adjusted,
                // Its forest's band is the regression threshold, not a margin.
                margin: None,
            }
        })
        .collect()
}

/// A seed's claims for the terminal: both verdicts, then the claim, wrapped; the evidence
/// is in the findings in full (`report`, `--format json`, the HTML page).
pub fn claims_text(table: &crate::decide::claims::ClaimsTable) -> String {
    let mut out = format!("{} (seed data: {}, built in; this run):\n", table.title, table.seed);
    out.push_str(&format!("{:<11}  {:<11}  claim\n", "seed data", "this run"));
    for r in &table.rows {
        let line = format!("{:<11}  {:<11}  {}", r.seed_data.verdict.as_str(), r.this_run.verdict.as_str(), r.claim);
        out.push_str(&wrap(&line, TEXT_WIDTH, &" ".repeat(26)));
        out.push('\n');
    }
    out
}

/// What `schedlab run` ends with: a seed suite's claims, the question table, the warnings
/// (the run's, and periodic spikes found), and one line on where the detail is.
pub fn run_end(
    run_id: i64,
    warnings: &[String],
    found: &[Finding],
    claims: Option<&crate::decide::claims::ClaimsTable>,
    page: Option<&std::path::Path>,
) -> String {
    let mut out = String::new();
    if let Some(c) = claims {
        out.push_str(&format!("\n{}", claims_text(c)));
    }
    let block = text_block(&questions(found));
    if !block.is_empty() {
        out.push_str(&format!("\n{block}"));
    }
    let also = other_findings(found);
    if !warnings.is_empty() || !also.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in warnings {
            out.push_str(&format!("{}\n", wrap(&format!("- {w}"), TEXT_WIDTH, "  ")));
        }
        for f in also {
            out.push_str(&format!("{}\n", wrap(&format!("- {f}"), TEXT_WIDTH, "  ")));
        }
    }
    // One line, whatever its length: a path is not cut.
    let page = page.map_or(String::new(), |p| format!("; the page {}", p.display()));
    out.push_str(&format!("\ndetail: every finding in full in `schedlab report {run_id}` (or --format json){page}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::answers::TEST;

    fn answer(verdict: AnswerVerdict, ratio: f64, ci: (Option<f64>, Option<f64>), supported: Option<f64>) -> Answer {
        Answer {
            verdict,
            blocks: 46,
            next_higher: 24,
            ratio,
            ci_low: ci.0,
            ci_high: ci.1,
            ci_level: 0.0083,
            p_leads: 0.04,
            p_equivalent: 0.6,
            margin: 0.05,
            claims: 12,
            at_once: 6,
            fewest_blocks: 10,
            supported_margin: supported,
            more_blocks: None,
            block_s: None,
            test: TEST,
        }
    }

    fn best(what: &str, best: &str, next: &str, a: Answer) -> Finding {
        Finding::BestPolicy {
            what: what.into(),
            best: best.into(),
            best_wall_s: 0.1,
            next: next.into(),
            next_wall_s: 0.11,
            answer: a,
            switches: None,
            preempted: Vec::new(),
        }
    }

    /// The glance's count and the run's (its JSON, its questions line) are one rule: a
    /// ring sweep with too few sizes for a knee is no question in either.
    #[test]
    fn the_glance_counts_the_questions_the_run_counts() {
        let found = vec![
            Finding::TooFewSizes { what: "ring (procs=2)".into(), sizes: 1 },
            best(
                "workload (procs=2 workload=cpu)",
                "fifo",
                "other",
                answer(AnswerVerdict::Leads, 1.1, (Some(1.02), None), None),
            ),
        ];
        assert_eq!(crate::decide::findings::questions_answered(&found), (1, 1));
        assert_eq!(headline(&questions(&found)), "questions: 1 of 1 answered");
    }

    #[test]
    fn names_keep_what_sets_a_question_apart() {
        let whats = [
            "workload (iterations=10000000 procs=2 workload=cpu)",
            "workload (iterations=10000000 procs=8 workload=cpu)",
            "workload (procs=2 transfer_size=400KiB workload=io)",
            "ring (duration=50ms pin=same)",
            "command (cmd=hackbench -g 2 policy=fifo)",
            "command (cmd=sleep 1 policy=fifo)",
        ];
        assert_eq!(
            short_names(&whats),
            [
                "workload cpu procs=2",
                "workload cpu procs=8",
                "workload io",
                "ring",
                "command cmd=hackbench -g 2",
                "command cmd=sleep 1"
            ]
        );
    }

    #[test]
    fn each_answer_reads_short_and_keeps_its_numbers() {
        let found = [
            best(
                "workload (procs=8 workload=cpu)",
                "fifo",
                "other",
                answer(AnswerVerdict::Equivalent, 1.013, (Some(0.999), Some(1.032)), None),
            ),
            best(
                "workload (procs=2 workload=io)",
                "other",
                "fifo",
                answer(AnswerVerdict::Undecided, 1.009, (Some(0.941), None), Some(0.0981)),
            ),
            best(
                "workload (procs=2 workload=mixed)",
                "fifo",
                "other",
                answer(AnswerVerdict::Leads, 1.3, (Some(1.1), Some(1.5)), None),
            ),
        ];
        let rows = questions(&found);
        assert_eq!(rows[0].answer, "equivalent ±5%");
        assert_eq!((rows[0].call, rows[0].compared.as_str()), (Call::Equivalent, "OTHER/FIFO wall"));
        assert_eq!((rows[0].p, rows[0].interval_text().as_str()), (Some(0.6), "0.999..1.032"));
        assert_eq!((rows[1].answer.as_str(), rows[1].interval_text().as_str()), ("open, within ±10%", "0.941..∞"));
        assert_eq!((rows[1].call, rows[1].p), (Call::Open, Some(0.04)));
        assert_eq!((rows[2].answer.as_str(), rows[2].call), ("FIFO leads", Call::Lead));
        assert_eq!(headline(&rows), "questions: 2 of 3 answered");
    }

    #[test]
    fn every_line_of_the_terminal_table_fits_and_no_number_is_cut() {
        let long = "workload (iterations=10000000 procs=8 workload=cpu nice=a-very-long-setting-value-that-goes-on)";
        let found = [
            best(
                long,
                "other",
                "fifo",
                answer(AnswerVerdict::Undecided, 123.456, (Some(0.5), Some(200.25)), Some(0.5)),
            ),
            best(
                "workload (procs=2 workload=cpu)",
                "fifo",
                "other",
                answer(AnswerVerdict::TooFewBlocks, 2.955, (None, None), None),
            ),
        ];
        let text = text_block(&questions(&found));
        for line in text.lines() {
            assert!(line.chars().count() <= TEXT_WIDTH, "{} columns: {line}", line.chars().count());
        }
        let row = text.lines().nth(2).unwrap();
        assert!(row.contains("123.456") && row.contains("0.500..200.250") && row.contains('…'), "{text}");
        assert!(row.contains("open, within ±50%"), "{text}");
        assert!(text.lines().nth(3).unwrap().contains("open, too few blocks"), "{text}");
        assert!(text.contains("Method: paired blocks"), "{text}");
    }

    #[test]
    fn wrapping_breaks_on_spaces_and_indents() {
        assert_eq!(wrap("aa bb cc dd", 5, " "), "aa bb\n cc\n dd");
    }
}
