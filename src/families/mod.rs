//! The benchmark families, one folder each, and this file: **the one list of them**.
//!
//! A family's folder holds every layer of it, one file a layer, each file in the layer its
//! name says (docs/architecture.md, checked by tests/layers.rs): `mod.rs` and `model.rs`
//! (what the family declares of itself: options, spec, outcome, figures — [`FamilyModel`]),
//! `kernel.rs` (the measurement), `trial.rs` (its checks and its trial in the executor —
//! `exec::family::FamilyTrial`), `report.rs` (its tables, lines and plots —
//! `report::family::FamilyReport`) and `live.rs` (its command as a `report::live::Door`,
//! which `commands::family`, the one front door, runs).
//!
//! Adding a family is its folder, its docs page and tests, and one line in each enum below
//! and each arm list of the dispatch macros under them; code elsewhere reaches a family
//! through those traits and macros, never by naming its variants.

pub mod command;
pub mod declared;
pub mod figures;
pub mod latency;
pub mod list;
pub mod ring;
pub mod server;
pub mod shared;
pub mod taskset;
pub mod workload;

use figures::Figure;

pub use declared::FamilyModel;
pub(crate) use list::on_each;
pub use list::{spec_from_params, Family, FamilyOptions, Outcome, TrialSpec};

/// `body` with `F` standing for `family`'s type (its [`FamilyModel`] and the traits of the
/// layers above): `with_family!(family, F => F::FIGURES)`.
macro_rules! with_family {
    ($family:expr, $F:ident => $body:expr) => {
        match $family {
            $crate::families::Family::Ring => {
                type $F = $crate::families::ring::Ring;
                $body
            }
            $crate::families::Family::Workload => {
                type $F = $crate::families::workload::Workload;
                $body
            }
            $crate::families::Family::Latency => {
                type $F = $crate::families::latency::Latency;
                $body
            }
            $crate::families::Family::Command => {
                type $F = $crate::families::command::Command;
                $body
            }
            $crate::families::Family::Taskset => {
                type $F = $crate::families::taskset::Taskset;
                $body
            }
            $crate::families::Family::Server => {
                type $F = $crate::families::server::Server;
                $body
            }
        }
    };
}
pub(crate) use with_family;

impl Family {
    pub const ALL: [Family; 6] =
        [Family::Ring, Family::Workload, Family::Latency, Family::Command, Family::Taskset, Family::Server];

    pub fn as_str(self) -> &'static str {
        with_family!(self, F => F::NAME)
    }

    /// Suite keys whose value is one value however it is written, never an axis: a
    /// command's program line and its declared figures (lists themselves).
    pub fn whole_value_keys(self) -> &'static [&'static str] {
        with_family!(self, F => F::whole_value_keys())
    }

    /// A suite key an experiment of this family must give, with the message if it does not.
    pub fn required_key(self) -> Option<(&'static str, &'static str)> {
        with_family!(self, F => F::required_key())
    }

    /// What to write instead of a suite key the family refuses with a hint.
    pub fn key_hint(self, key: &str) -> Option<&'static str> {
        with_family!(self, F => F::key_hint(key))
    }

    /// Does a suite whose experiment has a policy axis compare it unless told otherwise?
    pub fn compares_policy_by_default(self) -> bool {
        with_family!(self, F => F::compares_policy_by_default())
    }

    pub fn parse(text: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.as_str() == text)
    }

    /// The family's own figures, in line order.
    pub fn figures(self) -> &'static [&'static Figure] {
        with_family!(self, F => F::FIGURES)
    }

    /// Figures declared at run time for the family (a command's parsed ones).
    pub fn declared(self) -> Vec<&'static Figure> {
        with_family!(self, F => F::declared())
    }

    /// The figures a run's question tests between the cells it compares.
    pub fn questioned(self) -> Vec<&'static Figure> {
        with_family!(self, F => F::questioned())
    }

    /// The figure a cell of this family is judged by: the one its confidence interval,
    /// adaptive repeats and verdicts are about (the figure registry marks it).
    pub fn headline_figure(self) -> &'static str {
        figures::headline(self).key
    }
}

impl Outcome {
    /// The family's headline figure, as the figure registry marks it (a ring's cost per
    /// switch in ns, a workload's wall time in s, a latency run's p99 over all threads).
    pub fn headline(&self) -> f64 {
        figures::headline_of(self).value(self).unwrap_or(f64::NAN)
    }
}
