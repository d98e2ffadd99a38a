//! What the report layer needs of a family, implemented once in each family's folder
//! (`families/<name>/report.rs`): its stored table as columns over the figure registry,
//! a stored trial's figures as one object, and its charts. The tables, exports and the
//! HTML page reach every family through this trait and the list's dispatch macros.

use crate::analysis::stats::Summary;
use crate::families::declared::FamilyModel;
use crate::families::figures::Figure;
use crate::report::cells::{ci_cell, fixed, headline, RunRule};
use crate::report::chart::Chart;
use crate::report::table::Table;
use crate::store::group::Group;
use crate::store::TrialRecord;
use serde::Serialize;

pub trait FamilyReport: FamilyModel {
    /// The columns of the family's stored table, after each cell's axes and its ok/runs.
    fn columns() -> Vec<Column>;

    /// A stored trial's line, as the family's command prints it with `--json`: what
    /// exports and CSV rows carry as its figures. `None` where its spec or outcome cannot
    /// make one.
    fn stored_line(t: &TrialRecord) -> Option<impl Serialize>;

    /// Values beside a cell's summaries in `report --format json` that the family derives
    /// from the cell and its experiment (a ring's projected seconds).
    fn summary_extras(_groups: &[&Group], _g: &Group) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// Tables the family adds under an experiment's table of cells (`axes`: the parameters
    /// that vary between them), each with its title.
    fn extra_tables(_groups: &[&Group], _axes: &[String]) -> Vec<(String, Table)> {
        Vec::new()
    }

    /// A note under an experiment's table of cells, in the text tables and on the page (a
    /// workload's starvation line); `None` where the family has none.
    fn experiment_note(_groups: &[&Group]) -> Option<String> {
        None
    }

    /// The charts of one experiment (`n`, counted from 1) over its cells.
    fn charts(_n: i64, _groups: &[&Group], _axes: &[String]) -> Vec<Chart> {
        Vec::new()
    }
}

/// How a column sums up a figure over a cell's ok repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summarise {
    Median,
    Mean,
    Min,
    Max,
    /// The total (0 for a cell with no value).
    Sum,
    /// "0.123 ± 0.004": the mean and the sample sd.
    MeanSd,
    /// "1234 (1200..1300)": the median and the range.
    MedianRange,
}

/// One column of a stored table.
pub enum Column {
    /// A figure of the registry summed up over the cell's ok repeats, divided by `per`
    /// (1000 shows ns as µs) and written with `decimals` places.
    Figure { header: &'static str, figure: &'static Figure, how: Summarise, per: f64, decimals: usize },
    /// The 95% CI of the cell's headline median, with how an adaptive cell stopped.
    Ci,
    /// A value the family derives from the cell and its experiment's other cells (a
    /// ring's projected linear cost).
    Derived { header: &'static str, value: fn(&[&Group], &Group) -> Option<f64>, decimals: usize },
}

impl Column {
    /// A figure's column under its own label.
    pub fn of(figure: &'static Figure, how: Summarise, decimals: usize) -> Column {
        Column::Figure { header: figure.label, figure, how, per: 1.0, decimals }
    }

    /// A figure's column under another heading.
    pub fn named(header: &'static str, figure: &'static Figure, how: Summarise, decimals: usize) -> Column {
        Column::Figure { header, figure, how, per: 1.0, decimals }
    }

    /// A figure in ns, shown in µs with one decimal.
    pub fn micros(header: &'static str, figure: &'static Figure, how: Summarise) -> Column {
        Column::Figure { header, figure, how, per: 1000.0, decimals: 1 }
    }

    pub fn header(&self) -> &'static str {
        match self {
            Column::Figure { header, .. } | Column::Derived { header, .. } => header,
            Column::Ci => "95% CI",
        }
    }

    /// The column's cell for `g`, one of `groups`.
    pub fn cell(&self, groups: &[&Group], g: &Group, rule: &RunRule) -> String {
        match *self {
            Column::Ci => ci_cell(&headline(g, rule)),
            Column::Derived { value, decimals, .. } => fixed(value(groups, g), decimals),
            Column::Figure { figure, how, per, decimals, .. } => {
                let values = g.values(|o| figure.value(o));
                let summary = Summary::of(&values);
                let scaled = |v: f64| v / per;
                match how {
                    Summarise::Median => fixed(summary.map(|s| scaled(s.median)), decimals),
                    Summarise::Mean => fixed(summary.map(|s| scaled(s.mean)), decimals),
                    Summarise::Min => fixed(summary.map(|s| scaled(s.min)), decimals),
                    Summarise::Max => fixed(summary.map(|s| scaled(s.max)), decimals),
                    Summarise::Sum => fixed(Some(scaled(values.iter().sum())), decimals),
                    Summarise::MeanSd => match summary {
                        None => "-".into(),
                        Some(s) => format!("{:.decimals$} ± {:.decimals$}", scaled(s.mean), scaled(s.sd)),
                    },
                    Summarise::MedianRange => match summary {
                        None => "-".into(),
                        Some(s) if s.n == 1 => format!("{:.decimals$}", scaled(s.median)),
                        Some(s) => format!(
                            "{:.decimals$} ({:.decimals$}..{:.decimals$})",
                            scaled(s.median),
                            scaled(s.min),
                            scaled(s.max)
                        ),
                    },
                }
            }
        }
    }
}
