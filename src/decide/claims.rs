//! The seeds' own conclusions, written down as claims and decided twice: on the seed's
//! published data and on this run. A claim is a set of comparisons ("OTHER's wall time
//! below FIFO's and RR's, at 10, 50 and 100 processes"); it **holds** when every one of
//! them is significant in its direction (the claim's p is the largest of theirs, an
//! intersection-union test), is **refuted** when one is significant the other way (or,
//! for "alike", clearly apart), and is **undecided** otherwise. A claim whose cells a data
//! set lacks is **not covered** there, never counted as holding; one the published data
//! cannot test (one run a cell, no samples) is **untestable** there.
//!
//! The tests differ with the data: a seed's runs are independent repeats (five a cell in
//! 2014), so two cells are compared by an exact Mann-Whitney test and "alike" by the
//! distribution-free 90 % interval of their log ratio; a schedlab run ran its cells in
//! paired blocks, so they are compared by the run's own anytime-valid sign test on the
//! within-block ratios (valid however many blocks it chose to run). Each claim is judged
//! at p < 0.05 on its own, as the question "does this data support this claim?" asks;
//! beside it stands its p Holm-adjusted over the table's claims, and the table says how
//! many verdicts also stand at that family level (with five runs a cell the smallest
//! possible p is 2/252, so the 2014 data cannot carry seven claims at once).

use crate::analysis::knee::{self, Shape};
use crate::analysis::sequential::{pair_blocks, Paired, MARGIN};
use crate::analysis::stats::{holm, mann_whitney_exact, median, shift_ci, shift_equivalence_p};
use crate::families::Outcome;
use crate::store::seeds::{Claim, ClaimFigure, Seed, Test, SEEDS};
use crate::store::TrialRecord;
use serde::Serialize;

/// The level each table's family of claims is held to: the one every verdict uses.
pub use crate::analysis::verdict::ALPHA;
/// "Alike" on a seed's data: its 90 % interval of the ratio lies within 1 ± this.
const ALIKE: f64 = 0.10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimVerdict {
    Holds,
    Refuted,
    Undecided,
    NotCovered,
    Untestable,
}

impl ClaimVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimVerdict::Holds => "holds",
            ClaimVerdict::Refuted => "refuted",
            ClaimVerdict::Undecided => "undecided",
            ClaimVerdict::NotCovered => "not covered",
            ClaimVerdict::Untestable => "untestable",
        }
    }
}

/// One claim's verdict on one data set, with what decided it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evidence {
    pub verdict: ClaimVerdict,
    /// The test: "Mann-Whitney, exact", "sign-test confidence sequence on paired blocks".
    pub test: String,
    /// How many values: "5 v 5 a cell, 6 comparisons".
    pub n: String,
    /// The effect: "OTHER / FIFO wall 0.87..0.95".
    pub effect: String,
    /// The claim's p (the largest of its comparisons' for a claim that holds or is
    /// undecided, the refuting comparison's for one refuted), and Holm-adjusted over the
    /// table's claims.
    pub p: Option<f64>,
    pub p_adjusted: Option<f64>,
    /// The ratio of each comparison, as the effect states it (its range is the effect's):
    /// what the forest plot of the claims draws. Not part of the JSON, which has the effect.
    #[serde(skip)]
    pub ratios: Vec<f64>,
}

impl Evidence {
    fn without_test(verdict: ClaimVerdict, why: impl Into<String>) -> Evidence {
        Evidence {
            verdict,
            test: why.into(),
            n: String::new(),
            effect: String::new(),
            p: None,
            p_adjusted: None,
            ratios: Vec::new(),
        }
    }
}

/// A claim and its two verdicts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimRow {
    pub id: &'static str,
    pub claim: &'static str,
    pub seed_data: Evidence,
    pub this_run: Evidence,
}

/// A seed's claims, decided on its data and on a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimsTable {
    pub seed: &'static str,
    pub title: &'static str,
    pub rows: Vec<ClaimRow>,
}

/// How a data set's cells are compared.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Method {
    /// Independent repeats: exact Mann-Whitney, distribution-free interval.
    Ranks,
    /// Paired blocks: the run's sign test on within-block ratios.
    Blocks,
}

/// A data set: its trials, and how its cells are compared.
struct Data<'a> {
    trials: &'a [TrialRecord],
    method: Method,
    /// The seed's machines, each its name and trials (a curve each); `None` for a run,
    /// which is one.
    machines: Option<&'a [(String, Vec<TrialRecord>)]>,
}

/// A parameter's value as text ("fifo", "10"), where the trial's suite set it: the spec's
/// where it holds the key as one field (`TrialSpec::key_text`), the suite's value for a
/// key it does not hold and for a trial without a spec.
fn param(t: &TrialRecord, key: &str) -> Option<String> {
    let stored = t.params.get(key)?;
    let suites = || stored.as_str().map_or_else(|| stored.text(), str::to_lowercase);
    Some(t.spec.as_ref().and_then(|s| s.key_text(key)).unwrap_or_else(suites))
}

impl Data<'_> {
    /// The figure's values (with their block) of the ok trials whose parameters match.
    /// Counts compared by their within-block ratio get half a count added.
    fn cell(&self, want: &[(&str, String)], figure: ClaimFigure) -> Vec<(u32, f64)> {
        let shift = if figure.is_count() && self.method == Method::Blocks { 0.5 } else { 0.0 };
        self.trials
            .iter()
            .filter(|t| t.is_ok() && want.iter().all(|(k, v)| param(t, k).as_ref() == Some(v)))
            .filter_map(|t| Some((t.repeat as u32, figure.of(t.outcome.as_ref()?)? + shift)))
            .filter(|(_, v)| v.is_finite())
            .collect()
    }

    /// A against B: two-sided p, whether A is the lower, the ratio B / A, the sizes, and
    /// whether they are alike (within the margin).
    fn compare(&self, a: &[(u32, f64)], b: &[(u32, f64)]) -> Option<ClaimTest> {
        match self.method {
            Method::Ranks => {
                let (xa, xb): (Vec<f64>, Vec<f64>) = (a.iter().map(|x| x.1).collect(), b.iter().map(|x| x.1).collect());
                let (u, p) = mann_whitney_exact(&xa, &xb)?;
                let (ma, mb) = (median(&xa), median(&xb));
                let logs = |v: &[f64]| v.iter().filter(|x| **x > 0.0).map(|x| x.ln()).collect::<Vec<f64>>();
                let (la, lb) = (logs(&xa), logs(&xb));
                let (low, high) = ((1.0 - ALIKE).ln(), (1.0 + ALIKE).ln());
                let p_alike = shift_equivalence_p(&la, &lb, low, high);
                // Apart: the 90 % interval of the log ratio wholly outside the margin.
                let apart = shift_ci(&la, &lb, 0.90).is_some_and(|(lo, hi)| hi < low || lo > high);
                Some(ClaimTest {
                    p,
                    // U counts A's wins: fewer than half of the pairs, A is the lower.
                    a_lower: u < (xa.len() * xb.len()) as f64 / 2.0,
                    ratio: if ma > 0.0 { mb / ma } else { f64::NAN },
                    sizes: Sizes::Repeats(xa.len(), xb.len()),
                    alike: p_alike.is_some_and(|q| q <= ALPHA),
                    apart: apart && p <= ALPHA,
                    p_alike,
                })
            }
            Method::Blocks => {
                let paired = Paired::of(&pair_blocks(a, b))?;
                // Apart: the confidence sequence's interval of the ratio wholly outside
                // the margin.
                let apart = match paired.interval(ALPHA) {
                    (_, Some(hi)) if hi < 1.0 - MARGIN => true,
                    (Some(lo), _) if lo > 1.0 + MARGIN => true,
                    _ => false,
                };
                Some(ClaimTest {
                    p: paired.p_differ,
                    a_lower: paired.ratio > 1.0,
                    ratio: paired.ratio,
                    sizes: Sizes::Blocks(paired.blocks),
                    alike: paired.p_equivalent <= ALPHA,
                    apart,
                    p_alike: Some(paired.p_equivalent),
                })
            }
        }
    }

    fn test_name(&self) -> String {
        match self.method {
            Method::Ranks => "Mann-Whitney, exact (independent repeats)".to_string(),
            Method::Blocks => "sign-test confidence sequence on paired blocks".to_string(),
        }
    }
}

struct ClaimTest {
    p: f64,
    a_lower: bool,
    ratio: f64,
    sizes: Sizes,
    /// Shown equivalent within the margin, and shown apart by more than it (an interval
    /// wholly outside: the same whichever side is A).
    alike: bool,
    apart: bool,
    /// The equivalence test's own p.
    p_alike: Option<f64>,
}

/// How many values a comparison had: independent repeats of each side, or paired blocks.
#[derive(Clone, Copy, PartialEq)]
enum Sizes {
    Repeats(usize, usize),
    Blocks(usize),
}

impl std::fmt::Display for Sizes {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Sizes::Repeats(a, b) => write!(f, "{a} v {b}"),
            Sizes::Blocks(n) => write!(f, "{n} blocks"),
        }
    }
}

/// The cells a claim looks at: each a set of parameter values ("workload" = "cpu",
/// "procs" = "10").
type CellParams = [Vec<(&'static str, String)>];

fn with_policy(cell: &[(&'static str, String)], policy: &str) -> Vec<(&'static str, String)> {
    let mut c = cell.to_vec();
    c.push((crate::model::cell::axis::POLICY, policy.to_string()));
    c
}

/// "The first policies' figure is below each of the second's, in every cell."
fn lower(data: &Data, cells: &CellParams, lows: &[&str], highs: &[&str], figure: ClaimFigure) -> Evidence {
    let mut ps = Vec::new();
    let mut ratios = Vec::new();
    let mut sizes = Vec::new();
    let mut refuted: Option<f64> = None;
    let mut missing = 0;
    for cell in cells {
        for low in lows {
            for high in highs {
                let (a, b) = (data.cell(&with_policy(cell, low), figure), data.cell(&with_policy(cell, high), figure));
                let Some(c) = (!a.is_empty() && !b.is_empty()).then(|| data.compare(&a, &b)).flatten() else {
                    missing += 1;
                    continue;
                };
                if c.p <= ALPHA && !c.a_lower {
                    refuted = Some(refuted.map_or(c.p, |r: f64| r.min(c.p)));
                }
                ps.push(if c.a_lower { c.p } else { 1.0 });
                ratios.push(1.0 / c.ratio);
                sizes.push(c.sizes);
            }
        }
    }
    let comparisons = ps.len() + missing;
    let effect = range_text(&format!("{} / {} {}", names(lows), names(highs), figure.words), &ratios);
    let n = sizes_text(&sizes, comparisons, missing);
    let (verdict, p) = match (refuted, missing, ps.iter().copied().reduce(f64::max)) {
        (Some(p), _, _) => (ClaimVerdict::Refuted, Some(p)),
        (None, m, _) if m > 0 => (ClaimVerdict::NotCovered, None),
        (None, _, Some(p)) => (if p <= ALPHA { ClaimVerdict::Holds } else { ClaimVerdict::Undecided }, Some(p)),
        (None, _, None) => (ClaimVerdict::NotCovered, None),
    };
    Evidence { verdict, test: data.test_name(), n, effect, p, p_adjusted: None, ratios }
}

/// "The two policies' figures are alike (within the margin), in every cell."
fn alike(data: &Data, cells: &CellParams, x: &str, y: &str, figure: ClaimFigure) -> Evidence {
    let mut ratios = Vec::new();
    let mut sizes = Vec::new();
    let (mut all_alike, mut apart, mut missing) = (true, None::<f64>, 0);
    let mut p_alike: Option<f64> = None;
    for cell in cells {
        let (a, b) = (data.cell(&with_policy(cell, x), figure), data.cell(&with_policy(cell, y), figure));
        let Some(c) = (!a.is_empty() && !b.is_empty()).then(|| data.compare(&a, &b)).flatten() else {
            missing += 1;
            continue;
        };
        all_alike &= c.alike;
        if let Some(p) = c.p_alike {
            p_alike = Some(p_alike.map_or(p, |q| q.max(p)));
        }
        if c.apart {
            apart = Some(apart.map_or(c.p, |q| q.min(c.p)));
        }
        ratios.push(c.ratio);
        sizes.push(c.sizes);
    }
    let how = match data.method {
        Method::Ranks => format!("; alike: the 90 % interval of the ratio within ±{:.0} %", ALIKE * 100.0),
        Method::Blocks => format!("; alike: equivalence within ±{:.0} %", MARGIN * 100.0),
    };
    let effect = range_text(&format!("{} / {} {}", y.to_uppercase(), x.to_uppercase(), figure.words), &ratios);
    let n = sizes_text(&sizes, sizes.len() + missing, missing);
    let (verdict, p) = match (apart, missing) {
        (Some(p), _) => (ClaimVerdict::Refuted, Some(p)),
        (None, m) if m > 0 => (ClaimVerdict::NotCovered, None),
        (None, _) if sizes.is_empty() => (ClaimVerdict::NotCovered, None),
        (None, _) if all_alike => (ClaimVerdict::Holds, p_alike),
        (None, _) => (ClaimVerdict::Undecided, p_alike),
    };
    Evidence { verdict, test: format!("{}{how}", data.test_name()), n, effect, p, p_adjusted: None, ratios }
}

fn names(policies: &[&str]) -> String {
    policies.iter().map(|p| p.to_uppercase()).collect::<Vec<_>>().join("+")
}

fn range_text(what: &str, ratios: &[f64]) -> String {
    let finite: Vec<f64> = ratios.iter().copied().filter(|r| r.is_finite()).collect();
    match (finite.iter().copied().reduce(f64::min), finite.iter().copied().reduce(f64::max)) {
        (Some(lo), Some(hi)) if (hi - lo).abs() < 0.005 => format!("{what} {lo:.2}"),
        (Some(lo), Some(hi)) => format!("{what} {lo:.2}..{hi:.2}"),
        _ => String::new(),
    }
}

fn sizes_text(sizes: &[Sizes], comparisons: usize, missing: usize) -> String {
    let blocks: Vec<usize> = sizes
        .iter()
        .filter_map(|s| match s {
            Sizes::Blocks(n) => Some(*n),
            Sizes::Repeats(..) => None,
        })
        .collect();
    let each = if !blocks.is_empty() && blocks.len() == sizes.len() {
        let (lo, hi) = (blocks.iter().min().unwrap_or(&0), blocks.iter().max().unwrap_or(&0));
        if lo == hi {
            format!("{lo} blocks")
        } else {
            format!("{lo}..{hi} blocks")
        }
    } else {
        let mut distinct: Vec<String> = sizes.iter().map(Sizes::to_string).collect();
        distinct.sort();
        distinct.dedup();
        distinct.join(", ")
    };
    let each = if each.is_empty() { "no such cell in the data".to_string() } else { each };
    let mut text = format!("{each}; {comparisons} comparison{}", if comparisons == 1 { "" } else { "s" });
    if missing > 0 {
        text.push_str(&format!(", {missing} not in the data"));
    }
    text
}

/// Holm over one data set's claims: each claim's adjusted p, beside its own.
fn adjust(evidence: &mut [&mut Evidence]) {
    let adjusted = holm(&evidence.iter().map(|e| e.p).collect::<Vec<_>>());
    for (e, q) in evidence.iter_mut().zip(adjusted) {
        e.p_adjusted = q;
    }
}

/// Of one data set's decided claims (held or refuted): how many the family-level test
/// keeps (Holm-adjusted p at most `ALPHA`), and how many there are; `None` when none was
/// decided.
pub fn standing(rows: &[ClaimRow], side: impl Fn(&ClaimRow) -> &Evidence) -> Option<(usize, usize)> {
    let decided: Vec<&Evidence> =
        rows.iter().map(side).filter(|e| matches!(e.verdict, ClaimVerdict::Holds | ClaimVerdict::Refuted)).collect();
    let stand = decided.iter().filter(|e| e.p_adjusted.is_none_or(|q| q <= ALPHA)).count();
    (!decided.is_empty()).then_some((stand, decided.len()))
}

/// The claims table of a run of a seed's suite (`pipeline-1992`, `policy-study`,
/// `hrtimers-2007`: each seed's `Claims::suite`), its seed's data built in; `None` for
/// other suites.
pub fn for_run(run: &crate::store::RunRecord, trials: &[TrialRecord]) -> Option<ClaimsTable> {
    let seed = SEEDS.iter().find(|s| s.claims().suite == run.suite_name)?;
    let published: Vec<(String, Vec<TrialRecord>)> = seed
        .runs()
        .ok()?
        .into_iter()
        .map(|(r, t)| (r.machine.hostname().unwrap_or(&r.suite_name).to_string(), t))
        .collect();
    Some(table(*seed, &published, trials))
}

/// `seed`'s claims decided on its `published` runs (each machine's name and trials:
/// independent repeats) and on a `run` of its suite (paired blocks). Holm adjusts each
/// side's comparisons of policies as one family; a curve's reading stands on its own.
pub fn table(seed: &dyn Seed, published: &[(String, Vec<TrialRecord>)], run: &[TrialRecord]) -> ClaimsTable {
    let claims = seed.claims();
    let all_published: Vec<TrialRecord> = published.iter().flat_map(|(_, t)| t.iter().cloned()).collect();
    let on_seed = Data { trials: &all_published, method: Method::Ranks, machines: Some(published) };
    let on_run = Data { trials: run, method: Method::Blocks, machines: None };
    let mut rows: Vec<ClaimRow> = claims
        .claims
        .iter()
        .map(|c| ClaimRow {
            id: c.id,
            claim: c.claim,
            seed_data: decide(&c.on_seed, &on_seed),
            this_run: decide(&c.on_run, &on_run),
        })
        .collect();
    let compares = |test: &Test| matches!(test, Test::Lower { .. } | Test::Alike { .. });
    let family = |side: fn(&Claim) -> &Test, rows: &mut [ClaimRow], pick: fn(&mut ClaimRow) -> &mut Evidence| {
        let mut evidence: Vec<&mut Evidence> =
            rows.iter_mut().zip(&claims.claims).filter(|(_, c)| compares(side(c))).map(|(r, _)| pick(r)).collect();
        adjust(&mut evidence);
    };
    family(|c| &c.on_seed, &mut rows, |r| &mut r.seed_data);
    family(|c| &c.on_run, &mut rows, |r| &mut r.this_run);
    ClaimsTable { seed: seed.name(), title: claims.title, rows }
}

/// One claim's test on one data set.
fn decide(test: &Test, data: &Data) -> Evidence {
    match *test {
        Test::Lower { cells, lows, highs, figure } => lower(data, &cells.each(), lows, highs, figure),
        Test::Alike { cells, pairs, figure } => pairs
            .iter()
            .map(|(x, y)| alike(data, &cells.each(), x, y, figure))
            .reduce(both)
            .unwrap_or_else(|| Evidence::without_test(ClaimVerdict::NotCovered, "no policies to compare")),
        Test::Shown { low, high, figure, why } => shown(data, low, high, figure, why),
        Test::RingCostRises => match data.machines {
            Some(machines) => rises_on_several(machines),
            None => rises_on_the_run(data.trials),
        },
        Test::KneesPastBanks(banks) => knees_past_banks(data.machines.unwrap_or_default(), banks),
        Test::Untestable(why) => Evidence::without_test(ClaimVerdict::Untestable, why),
        Test::NotCovered(why) => Evidence::without_test(ClaimVerdict::NotCovered, why),
    }
}

/// Published figures without samples: the ratio of `low`'s figure to `high`'s, one value a
/// run in the runs' order, shown with why nothing can be tested.
fn shown(data: &Data, low: &str, high: &str, figure: ClaimFigure, why: &str) -> Evidence {
    let value = |policy: &str| -> Vec<f64> {
        data.cell(&[(crate::model::cell::axis::POLICY, policy.to_string())], figure)
            .into_iter()
            .map(|(_, v)| v)
            .collect()
    };
    let (highs, lows) = (value(high), value(low));
    let ratios: Vec<f64> = highs.iter().zip(&lows).map(|(h, l)| l / h).collect();
    Evidence {
        verdict: ClaimVerdict::Untestable,
        test: why.to_string(),
        n: format!("{} v {} runs", lows.len(), highs.len()),
        effect: range_text(&format!("{} / {} {}", names(&[low]), names(&[high]), figure.words), &ratios),
        p: None,
        p_adjusted: None,
        ratios,
    }
}

/// Two parts of one claim: both must hold; either refuted refutes it.
fn both(a: Evidence, b: Evidence) -> Evidence {
    let verdict = match (a.verdict, b.verdict) {
        (ClaimVerdict::Refuted, _) | (_, ClaimVerdict::Refuted) => ClaimVerdict::Refuted,
        (ClaimVerdict::NotCovered, _) | (_, ClaimVerdict::NotCovered) => ClaimVerdict::NotCovered,
        (ClaimVerdict::Holds, ClaimVerdict::Holds) => ClaimVerdict::Holds,
        _ => ClaimVerdict::Undecided,
    };
    let p = match verdict {
        // The refuting part's p, not a part that holds.
        ClaimVerdict::Refuted => {
            [&a, &b].iter().filter(|e| e.verdict == ClaimVerdict::Refuted).filter_map(|e| e.p).reduce(f64::min)
        }
        ClaimVerdict::NotCovered => None,
        _ => [a.p, b.p].into_iter().flatten().reduce(f64::max),
    };
    let join = |x: &str, y: &str| {
        if x == y {
            x.to_string()
        } else {
            [x, y].iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join("; ")
        }
    };
    Evidence {
        verdict,
        test: a.test.clone(),
        n: join(&a.n, &b.n),
        effect: join(&a.effect, &b.effect),
        p,
        p_adjusted: None,
        ratios: a.ratios.iter().chain(&b.ratios).copied().collect(),
    }
}

/// A curve's verdict on "the cost rises", what was read, and the rising knee's p.
type Reading = (ClaimVerdict, String, Option<f64>);

/// Whether a ring curve's cost per hop rises: a rising knee or a steady rise; flat
/// (linear total) with no knee says it does not.
fn rises(points: &[(f64, Vec<f64>)]) -> Option<Reading> {
    let s = knee::analyse(points)?;
    let up = s.knees.iter().filter(|k| k.jump > 0.0).count();
    // The strongest rising knee's p, where its test has one (repeats on both sides).
    let p = s
        .knees
        .iter()
        .filter(|k| k.jump > 0.0)
        .filter_map(|k| match k.test {
            knee::StepTest::MannWhitney { p, .. } => Some(p),
            knee::StepTest::RobustZ { .. } => None,
        })
        .reduce(f64::min);
    let verdict = if up > 0 || s.shape == Shape::SteadyRise {
        ClaimVerdict::Holds
    } else if s.shape == Shape::Linear || s.shape == Shape::SteadyFall {
        ClaimVerdict::Refuted
    } else {
        ClaimVerdict::Undecided
    };
    let knees: Vec<String> =
        s.knees.iter().map(|k| format!("{}→{} {:+.0} % ({})", k.before, k.after, k.jump * 100.0, k.test)).collect();
    let text = format!(
        "{:+.0} % across {}..{} ({:?}){}",
        s.trend * 100.0,
        s.from,
        s.to,
        s.shape,
        if knees.is_empty() { String::new() } else { format!(", knees {}", knees.join(", ")) }
    );
    Some((verdict, text, p))
}

/// Each ring curve of `trials` (one per run given): CPU ns per hop against processes.
fn ring_curve(trials: &[TrialRecord]) -> Vec<(f64, Vec<f64>)> {
    let mut by_procs: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for t in trials.iter().filter(|t| t.is_ok()) {
        let Some(Outcome::Ring(r)) = &t.outcome else { continue };
        if r.hops > 0 {
            by_procs.entry(r.procs as u64).or_default().push(r.cpu_ns() as f64 / r.hops as f64);
        }
    }
    by_procs.into_iter().map(|(n, v)| (n as f64, v)).collect()
}

/// "Context switch time is not constant for many systems" on the seed's machines: rising
/// on several of those read, and not a property of every one (the report shows linear ones
/// too). Refuted only when every machine could be read and none rises.
fn rises_on_several(machines: &[(String, Vec<TrialRecord>)]) -> Evidence {
    let read: Vec<(&str, Option<Reading>)> = machines
        .iter()
        .map(|(name, trials)| (name.split(" (").next().unwrap_or(name), rises(&ring_curve(trials))))
        .collect();
    let readable: Vec<(&str, &Reading)> = read.iter().filter_map(|(n, r)| Some((*n, r.as_ref()?))).collect();
    let rising: Vec<&str> = readable.iter().filter(|(_, r)| r.0 == ClaimVerdict::Holds).map(|(n, _)| *n).collect();
    let flat = readable.iter().filter(|(_, r)| r.0 == ClaimVerdict::Refuted).count();
    Evidence {
        verdict: if readable.is_empty() {
            ClaimVerdict::NotCovered
        } else if rising.is_empty() && flat == read.len() {
            ClaimVerdict::Refuted
        } else if rising.len() >= 2 && rising.len() < readable.len() {
            ClaimVerdict::Holds
        } else {
            ClaimVerdict::Undecided
        },
        test: "schedlab's ring reading per machine (knees by step test, trend by fit)".to_string(),
        n: format!("{} machines, one value a size", read.len()),
        effect: format!("rising on {} of {}: {}", rising.len(), read.len(), rising.join("; ")),
        p: None,
        p_adjusted: None,
        ratios: Vec::new(),
    }
}

/// The same claim on one run: rising bears it out; a flat one is one of the "not all".
fn rises_on_the_run(trials: &[TrialRecord]) -> Evidence {
    let curve = ring_curve(trials);
    match rises(&curve) {
        Some((verdict, text, p)) => Evidence {
            verdict: if verdict == ClaimVerdict::Holds { ClaimVerdict::Holds } else { ClaimVerdict::Undecided },
            test: "schedlab's ring reading (knees by step test, trend by fit)".to_string(),
            n: format!("{} ring sizes", curve.len()),
            effect: text,
            p,
            p_adjusted: None,
            ratios: Vec::new(),
        },
        None => Evidence::without_test(ClaimVerdict::NotCovered, "too few ring sizes in this run"),
    }
}

/// Each named machine has a rising knee at or past its bank count (the system's other
/// processes hold windows too), and not far beyond it.
fn knees_past_banks(machines: &[(String, Vec<TrialRecord>)], banks: &[(&str, f64)]) -> Evidence {
    let knee_of = |name: &str, banks: f64| -> Option<String> {
        let trials = &machines.iter().find(|(n, _)| n.contains(name))?.1;
        let s = knee::analyse(&ring_curve(trials))?;
        s.knees
            .iter()
            .find(|k| k.jump > 0.0 && k.after >= banks && k.before <= 2.0 * banks)
            .map(|k| format!("{name}: knee {}→{} {:+.0} % ({})", k.before, k.after, k.jump * 100.0, k.test))
    };
    let found: Vec<String> = banks.iter().filter_map(|&(name, count)| knee_of(name, count)).collect();
    let counts: Vec<String> = banks.iter().map(|(_, count)| count.to_string()).collect();
    Evidence {
        verdict: if found.len() == banks.len() { ClaimVerdict::Holds } else { ClaimVerdict::Undecided },
        test: "schedlab's knee step test on each machine's curve".to_string(),
        n: format!("{} machines, one value a size", banks.len()),
        effect: if found.is_empty() { format!("no knee at or past {}", counts.join(" or ")) } else { found.join("; ") },
        p: None,
        p_adjusted: None,
        ratios: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::workload::model::WorkloadOutcome;
    use crate::families::{Family, TrialSpec};
    use crate::model::{Policy, TrialStatus, Usage};
    use crate::store::seeds::Cells;

    /// The 2014 policy study, the seed these tests decide claims of.
    fn study() -> &'static dyn Seed {
        crate::store::seeds::seed("csci3753-2014").unwrap()
    }

    /// A workload trial of `policy` × `procs` with `wall_s` and switch counts.
    fn trial(workload: &str, policy: &str, procs: u32, repeat: i64, wall_s: f64, invol: u64) -> TrialRecord {
        let outcome = WorkloadOutcome {
            children: procs as usize,
            wall_ns: (wall_s * 1e9) as u64,
            usage: Usage { nivcsw: invol, nvcsw: 10, ..Usage::default() },
            ..WorkloadOutcome::default()
        };
        TrialRecord {
            seq: repeat,
            experiment: 0,
            family: Family::Workload,
            repeat,
            params: crate::model::cell::Cell::from_iter([
                ("workload", workload.into()),
                ("policy", policy.into()),
                ("procs", procs.into()),
            ]),
            spec: None,
            outcome: Some(Outcome::Workload(outcome)),
            status: TrialStatus::Ok,
            started: String::new(),
            elapsed_s: 0.0,
        }
    }

    #[test]
    fn a_cells_axes_are_read_from_the_spec_where_it_has_them() {
        let (_, seed) = study().runs().unwrap().remove(0);
        let mut t = seed.into_iter().find(|t| t.spec.as_ref().is_some_and(|s| s.policy() == Policy::Fifo)).unwrap();
        // A stored parameter that disagrees with the spec: the spec is what ran.
        t.params.insert("policy", "SCHED_FIFO");
        assert_eq!(param(&t, "policy").as_deref(), Some("fifo"));
        assert_eq!(param(&t, "procs"), t.spec.as_ref().and_then(TrialSpec::procs).map(|n| n.to_string()));
        // A key the suite did not set is on no axis, though the spec has a value for it.
        t.params.remove("procs");
        assert_eq!(param(&t, "procs"), None);
        // Without a spec (an old import whose parameters no longer make one): the suite's.
        t.spec = None;
        assert_eq!(param(&t, "policy").as_deref(), Some("sched_fifo"));
    }

    /// The 2014 appendix's CPU-bound 10-process cells (wall s, i-switched).
    fn cpu_10() -> Vec<TrialRecord> {
        let cells: [(&str, [(f64, u64); 5]); 3] = [
            ("fifo", [(17.34, 44), (16.95, 42), (16.61, 47), (16.10, 46), (16.93, 51)]),
            ("other", [(14.28, 5961), (14.79, 6348), (14.43, 6153), (16.20, 6637), (16.59, 6661)]),
            ("rr", [(16.48, 188), (15.86, 180), (15.95, 180), (16.04, 186), (16.32, 182)]),
        ];
        cells
            .iter()
            .flat_map(|(policy, runs)| {
                runs.iter()
                    .enumerate()
                    .map(move |(i, &(wall, invol))| trial("cpu", policy, 10, i as i64 + 1, wall, invol))
            })
            .collect()
    }

    #[test]
    fn overlapping_cells_are_decided_by_the_exact_rank_test() {
        // OTHER 14.28..16.59 s against FIFO 16.10..17.34 s: U = 2 of 25, two-sided exact
        // p = 8/252; against RR 15.86..16.48: U = 6, p = 0.15 — not significant.
        let seed = Data { trials: &cpu_10(), method: Method::Ranks, machines: None };
        let cells = Cells::Workloads(&["cpu"], &[10]).each();
        let fifo = lower(&seed, &cells, &["other"], &["fifo"], ClaimFigure::WALL);
        assert_eq!(fifo.verdict, ClaimVerdict::Holds);
        assert!((fifo.p.unwrap() - 8.0 / 252.0).abs() < 1e-12, "{fifo:?}");
        assert!(fifo.n.starts_with("5 v 5"), "{fifo:?}");
        let rr = lower(&seed, &cells, &["other"], &["rr"], ClaimFigure::WALL);
        assert_eq!(rr.verdict, ClaimVerdict::Undecided, "{rr:?}");
        // Both together: the claim is as strong as its weakest comparison.
        let both = lower(&seed, &cells, &["other"], &["fifo", "rr"], ClaimFigure::WALL);
        assert_eq!((both.verdict, both.p), (ClaimVerdict::Undecided, rr.p));
        // The switches are apart beyond doubt, and the claim "more" is about OTHER.
        let switches = lower(&seed, &cells, &["fifo", "rr"], &["other"], ClaimFigure::INVOLUNTARY);
        assert_eq!(switches.verdict, ClaimVerdict::Holds, "{switches:?}");
        // A claim the other way round is refuted by the same data.
        let wrong = lower(&seed, &cells, &["fifo"], &["other"], ClaimFigure::WALL);
        assert_eq!(wrong.verdict, ClaimVerdict::Refuted, "{wrong:?}");
    }

    #[test]
    fn cells_a_data_set_lacks_are_not_covered_never_holding() {
        let seed = Data { trials: &cpu_10(), method: Method::Ranks, machines: None };
        let e = lower(
            &seed,
            &Cells::Workloads(&["cpu"], &[10, 500]).each(),
            &["fifo", "rr"],
            &["other"],
            ClaimFigure::INVOLUNTARY,
        );
        assert_eq!(e.verdict, ClaimVerdict::NotCovered, "{e:?}");
        assert!(e.n.contains("2 not in the data"), "{e:?}");
        let none = alike(&seed, &Cells::Workloads(&["io"], &[10]).each(), "fifo", "rr", ClaimFigure::WALL);
        assert_eq!(none.verdict, ClaimVerdict::NotCovered);
    }

    #[test]
    fn alike_needs_the_interval_inside_the_margin() {
        // FIFO and RR at 10 processes: RR / FIFO 0.96, its 90 % interval inside ±10 %.
        let seed = Data { trials: &cpu_10(), method: Method::Ranks, machines: None };
        let e = alike(&seed, &Cells::Workloads(&["cpu"], &[10]).each(), "fifo", "rr", ClaimFigure::WALL);
        assert_eq!(e.verdict, ClaimVerdict::Holds, "{e:?}");
        // OTHER against FIFO: 13 % apart and significant, but with five runs a side the
        // interval still reaches inside ±10 %: not shown apart either way.
        let near = alike(&seed, &Cells::Workloads(&["cpu"], &[10]).each(), "fifo", "other", ClaimFigure::WALL);
        assert_eq!(near.verdict, ClaimVerdict::Undecided, "{near:?}");
        // Their involuntary switches (about 46 against 6,300): apart beyond doubt, whichever
        // side is named first.
        for (x, y) in [("fifo", "other"), ("other", "fifo")] {
            let apart = alike(&seed, &Cells::Workloads(&["cpu"], &[10]).each(), x, y, ClaimFigure::INVOLUNTARY);
            assert_eq!(apart.verdict, ClaimVerdict::Refuted, "{apart:?}");
        }
    }

    #[test]
    fn a_whole_table_is_one_family_and_says_what_it_could_not_cover() {
        let table = table(study(), &[(String::new(), cpu_10())], &[]);
        assert_eq!(table.rows.len(), 7);
        for r in &table.rows {
            // This run has nothing: every claim is not covered there.
            assert_eq!(r.this_run.verdict, ClaimVerdict::NotCovered, "{r:?}");
        }
        assert!(table.rows.iter().any(|r| r.claim.contains("CPU-bound: SCHED_OTHER has the lowest wall time")));
    }

    /// The two-sided exact Mann-Whitney p by brute force: every way of choosing which 5 of
    /// the 10 pooled values are A's, counting those with U at least as far from its mean.
    fn by_hand(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let u = |xs: &[f64], ys: &[f64]| -> f64 {
            xs.iter()
                .map(|x| {
                    ys.iter()
                        .map(|y| {
                            if x > y {
                                1.0
                            } else if x == y {
                                0.5
                            } else {
                                0.0
                            }
                        })
                        .sum::<f64>()
                })
                .sum()
        };
        let observed = (u(a, b) - 12.5).abs();
        let (mut extreme, mut all) = (0u32, 0u32);
        for mask in 0u32..1 << 10 {
            if mask.count_ones() != 5 {
                continue;
            }
            let (xs, ys): (Vec<f64>, Vec<f64>) = {
                let x: Vec<f64> = (0..10).filter(|i| mask >> i & 1 == 1).map(|i| pooled[i]).collect();
                let y: Vec<f64> = (0..10).filter(|i| mask >> i & 1 == 0).map(|i| pooled[i]).collect();
                (x, y)
            };
            all += 1;
            if (u(&xs, &ys) - 12.5).abs() >= observed - 1e-9 {
                extreme += 1;
            }
        }
        f64::from(extreme) / f64::from(all)
    }

    #[test]
    fn the_studys_verdicts_are_the_exact_rank_tests_by_hand() {
        let (_, seed) = study().runs().unwrap().remove(0);
        let table = table(study(), &[(String::new(), seed.clone())], &[]);
        let walls = |workload: &str, policy: &str, procs: u32| -> Vec<f64> {
            seed.iter()
                .filter(|t| {
                    param(t, "workload").as_deref() == Some(workload)
                        && param(t, "policy").as_deref() == Some(policy)
                        && param(t, "procs") == Some(procs.to_string())
                })
                .filter_map(|t| ClaimFigure::WALL.of(t.outcome.as_ref()?))
                .collect()
        };
        // "I/O: FIFO and RR faster than OTHER at 10, 50, 100": the largest of the six p.
        let mut largest: f64 = 0.0;
        for n in [10, 50, 100] {
            for rt in ["fifo", "rr"] {
                let (fast, other) = (walls("io", rt, n), walls("io", "other", n));
                assert_eq!((fast.len(), other.len()), (5, 5));
                largest = largest.max(by_hand(&fast, &other));
            }
        }
        let row = table.rows.iter().find(|r| r.id == "io-rt-faster").unwrap();
        assert!((row.seed_data.p.unwrap() - largest).abs() < 1e-12, "{row:?} against {largest}");
        // The CPU-bound lead of OTHER at 10 processes against FIFO: 8/252, by hand too.
        assert!((by_hand(&walls("cpu", "other", 10), &walls("cpu", "fifo", 10)) - 8.0 / 252.0).abs() < 1e-12);
        // Verdicts follow each claim's own p; the family's adjusted p sits beside it.
        for r in &table.rows {
            let e = &r.seed_data;
            match e.verdict {
                ClaimVerdict::Holds | ClaimVerdict::Refuted => assert!(e.p.unwrap() <= ALPHA, "{r:?}"),
                _ => {}
            }
            if let (Some(p), Some(q)) = (e.p, e.p_adjusted) {
                assert!(q >= p, "{r:?}");
            }
        }
    }
}
