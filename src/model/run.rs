//! What a stored run was started with, beside its suite: its options (whole suite or
//! quick, shuffle seed, adaptive plan, background loads, A/B session). Stored as JSON in
//! the run's `options` column; keys this schedlab does not know (an import's provenance, a
//! newer schedlab's) are kept in `extra`, so a run is written back as it was read.

use crate::model::LoadSpec;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value as Json};

/// One experiment's stopping rule.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoppingRule {
    /// The largest relative half-width of the interval that counts as converged:
    /// max(median − low, high − median) / median, e.g. 0.05 for ±5 %.
    pub ci: f64,
    /// Trials of each cell in the planned minimum (the experiment's `repeat`).
    pub min_repeat: u32,
    /// No cell gets more trials than this (failed ones count: a cell that keeps failing
    /// must not run forever).
    pub max_repeat: u32,
}

/// A run's adaptive settings, resolved from the suite and the command line. Stored in the
/// run's options under `adaptive`, so a resumed run and every later report apply exactly
/// the rule the run was started with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AdaptivePlan {
    /// By experiment index; `None` where the experiment runs a fixed number of repeats.
    pub targets: Vec<Option<StoppingRule>>,
    /// The run's time for its trials, planned minimum included; `None`: no limit but
    /// each experiment's `max_repeat`.
    pub budget_s: Option<f64>,
}

/// A run's options. A key absent from the stored JSON stays absent when written back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// `--full`: the suite's full sizes. Absent for an imported run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<bool>,
    /// `--shuffle --seed`: `run` stores null when the order was not shuffled, `ab` nothing.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub shuffle_seed: Option<Option<u64>>,
    /// The adaptive plan, for a run of adaptive repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptivePlan>,
    /// The background loads the suite's trials run beside them, each once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loads: Option<Vec<LoadSpec>>,
    /// One side of an A/B session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<AbSide>,
    /// What each experiment's questions ask, as the suite said when the run was made;
    /// absent for a run stored before runs kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<Vec<Asking>>,
    #[serde(flatten)]
    pub extra: Map<String, Json>,
}

/// What one experiment's questions ask: the compared axis, how near two sides must be to
/// be called equivalent, and which of the family's questioned figures they test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Asking {
    pub compare: Option<String>,
    pub margin: f64,
    /// The keys of the family's questioned figures its questions test (`ask = ["p99_ns"]`);
    /// `None`: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<Vec<String>>,
}

impl Asking {
    /// Whether its questions test `figure`: any figure its family does not question by
    /// default (a cgroup question's pressure) is tested, the family's own ones as `ask` says.
    pub fn tests(&self, family: crate::families::Family, figure: &crate::families::figures::Figure) -> bool {
        match &self.ask {
            Some(keys) => {
                keys.iter().any(|k| k == figure.key) || !family.questioned().iter().any(|f| f.key == figure.key)
            }
            None => true,
        }
    }

    /// The figures its questions test, read from one of their trials (`figures::questioned_of`).
    pub fn tested_of(&self, o: &crate::families::Outcome) -> Vec<&'static crate::families::figures::Figure> {
        crate::families::figures::questioned_of(o).into_iter().filter(|f| self.tests(o.family(), f)).collect()
    }
}

/// A run's side of an A/B session, as `schedlab ab` stores it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AbSide {
    /// "a" or "b".
    pub side: String,
    /// The other side's run uuid.
    pub pair: String,
    pub blocks: u32,
    pub seed: u64,
    /// The setup command ("" where the side had only settings).
    pub setup: String,
    pub cleanup: Option<String>,
    /// The sides' block order, e.g. "ABBA".
    pub order: String,
    /// The side's typed settings (`--a-set`), switched for each of its blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<crate::model::settings::Settings>,
}

/// A key that is present (even as null) is `Some`, so null is written back as null.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

impl RunOptions {
    /// The stored JSON as options. Options whose known keys do not read (written by a
    /// schedlab that changed their shape) are all kept as unknown keys.
    pub fn from_json(value: Json) -> RunOptions {
        match serde_json::from_value(value.clone()) {
            Ok(options) => options,
            Err(_) => RunOptions { extra: value.as_object().cloned().unwrap_or_default(), ..RunOptions::default() },
        }
    }

    /// Whether the run was measured at the suite's full sizes.
    pub fn is_full(&self) -> bool {
        self.full.unwrap_or(false)
    }

    /// The seed the run's order was shuffled with, if it was.
    pub fn seed(&self) -> Option<u64> {
        self.shuffle_seed.flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(stored: &str) -> RunOptions {
        let options = RunOptions::from_json(serde_json::from_str(stored).unwrap());
        assert_eq!(serde_json::to_string(&options).unwrap(), stored, "written back as read");
        options
    }

    #[test]
    fn run_options_read_typed_and_write_back_as_stored() {
        let plain = round_trip(r#"{"full":false,"shuffle_seed":null}"#);
        assert_eq!((plain.is_full(), plain.seed(), plain.shuffle_seed), (false, None, Some(None)));
        let run = round_trip(
            r#"{"full":true,"shuffle_seed":7,"adaptive":{"targets":[null,{"ci":0.05,"min_repeat":3,"max_repeat":30}],"budget_s":60.0},"loads":[{"kind":"cpu","instances":1,"cpus":null,"nice":null,"dir":null}]}"#,
        );
        assert_eq!((run.is_full(), run.seed()), (true, Some(7)));
        assert_eq!(run.adaptive.unwrap().targets[1].unwrap().max_repeat, 30);
        assert_eq!(run.loads.unwrap().len(), 1);
        let ab = round_trip(
            r#"{"full":false,"ab":{"side":"a","pair":"u","blocks":4,"seed":9,"setup":"true","cleanup":null,"order":"ABBA"}}"#,
        );
        assert_eq!(ab.shuffle_seed, None, "absent stays absent");
        assert_eq!(ab.asked, None, "a run stored before runs kept what they ask");
        let asked =
            round_trip(r#"{"full":false,"asked":[{"compare":"policy","margin":0.1},{"compare":null,"margin":0.05}]}"#);
        let asked = asked.asked.unwrap();
        assert_eq!(
            (asked[0].compare.as_deref(), asked[0].margin, asked[1].compare.as_deref()),
            (Some("policy"), 0.1, None)
        );
        assert_eq!(ab.ab.unwrap().order, "ABBA");
    }

    #[test]
    fn unknown_and_unreadable_keys_are_kept() {
        let import = round_trip(r#"{"import":"ncar","file":"t.txt","machine":"m","laps":1000}"#);
        assert_eq!(import.full, None);
        assert_eq!(import.extra["laps"], 1000);
        let newer = json!({"full": true, "loads": "a shape this schedlab does not know", "later": 1});
        let options = RunOptions::from_json(newer.clone());
        assert_eq!(options.loads, None);
        assert_eq!(serde_json::to_value(&options).unwrap(), newer);
    }
}
