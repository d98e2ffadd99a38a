//! What a family declares of itself at the model layer, in its folder's `mod.rs`: its
//! name, options and figures ([`FamilyModel`]).

use crate::families::figures::Figure;
use crate::families::shared::FamilyTypes;

/// What a family declares of itself at the model layer: its name, options and figures (the
/// options name its spec).
pub trait FamilyModel: FamilyTypes {
    /// Its name: the subcommand, the suite's `family = "…"`, the stored family.
    const NAME: &'static str;
    /// Its own figures, in line order (the load's come after them).
    const FIGURES: &'static [&'static Figure];
    /// Figures declared at run time (a command's parsed ones), after its own.
    fn declared() -> Vec<&'static Figure> {
        Vec::new()
    }
    /// The figures a run's question tests between the cells it compares: the headline.
    fn questioned() -> Vec<&'static Figure> {
        vec![headline_among(Self::FIGURES)]
    }
    /// Suite keys whose value is one value however it is written, never an axis.
    fn whole_value_keys() -> &'static [&'static str] {
        &[]
    }
    /// Suite keys an experiment of this family must give (`workload`), with the message.
    fn required_key() -> Option<(&'static str, &'static str)> {
        None
    }
    /// What to write instead of a suite key the family refuses with a hint (a command's
    /// `figure`, the flag's name, where the suite's key is `figures`).
    fn key_hint(_key: &str) -> Option<&'static str> {
        None
    }
    /// Does a suite compare its policies by default? (A ring's sizes are its question.)
    fn compares_policy_by_default() -> bool {
        true
    }
    /// Its outcome as schedlab 0.1.0 stored it: an untyped JSON object of figures (and a
    /// latency run's histogram). `None` for a family 0.1.0 did not have, or an object that
    /// makes no outcome (a failed trial).
    fn outcome_of_0_1_0(_figures: &serde_json::Value, _histogram: Vec<(u64, u64)>) -> Option<Self::Outcome> {
        None
    }
}

/// The figure marked headline among a family's figures.
fn headline_among(all: &'static [&'static Figure]) -> &'static Figure {
    all.iter().copied().find(|f| f.headline).expect("every family's registry marks one headline figure")
}
