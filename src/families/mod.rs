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

pub mod declared;
pub mod figures;
pub mod list;
pub mod shared;

/// **The registry**: one line a family, its folder and its type (`FamilyModel`). Every
/// list of the families is made from it by handing it to a macro, `families!(m, args…)`,
/// (a path in brackets, `families!([$crate::x::m], args…)`, where `m` is not in scope),
/// which gets `[args…]` and then the lines: the folders' modules (here), the enums of
/// `list.rs` and their dispatch (`on_each!`), `with_family!`, and the command line's family
/// commands (`cli.rs`). Adding a family is its folder and a line here.
macro_rules! families {
    ($then:ident $(, $($args:tt)*)?) => {
        $crate::families::families! { [$then] $(, $($args)*)? }
    };
    ([$($then:tt)*] $(, $($args:tt)*)?) => {
        $($then)*! { [$($($args)*)?]
            ring: Ring,
            workload: Workload,
            latency: Latency,
            command: Command,
            taskset: Taskset,
            server: Server,
        }
    };
}
pub(crate) use families;

macro_rules! folders {
    ([] $($m:ident: $T:ident,)+) => {
        $(pub mod $m;)+
    };
}
families!(folders);

use figures::Figure;

pub use declared::FamilyModel;
pub(crate) use list::on_each;
pub use list::{spec_from_params, Family, FamilyOptions, Outcome, TrialSpec};

/// `body` with `F` standing for `family`'s type (its [`FamilyModel`] and the traits of the
/// layers above): `with_family!(family, F => F::FIGURES)`.
macro_rules! with_family {
    ($family:expr, $F:ident => $body:expr) => {
        $crate::families::families!([$crate::families::with_family_arm], $family, $F => $body)
    };
}

/// `with_family!`'s match, one arm a family of the registry.
macro_rules! with_family_arm {
    ([$family:expr, $F:ident => $body:expr] $($m:ident: $T:ident,)+) => {
        match $family {
            $($crate::families::Family::$T => {
                type $F = $crate::families::$m::$T;
                $body
            })+
        }
    };
}
pub(crate) use with_family;
pub(crate) use with_family_arm;

impl Family {
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
