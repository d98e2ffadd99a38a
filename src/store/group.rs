//! A stored run's trials grouped by cell: the trials of one experiment that share their
//! parameters, in plan order. What every report table, finding, comparison and trend reads.

use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell::{self, Cell, CellValue};
use crate::model::Policy;
use crate::store::TrialRecord;

/// Trials of one parameter combination.
pub struct Group<'a> {
    pub experiment: i64,
    pub family: Family,
    pub params: Cell,
    pub trials: Vec<&'a TrialRecord>,
}

impl Group<'_> {
    pub fn ok(&self) -> impl Iterator<Item = &TrialRecord> {
        self.trials.iter().copied().filter(|t| t.is_ok())
    }

    /// The outcome of every ok trial.
    pub fn outcomes(&self) -> impl Iterator<Item = &Outcome> {
        self.ok().filter_map(|t| t.outcome.as_ref())
    }

    /// A figure of every ok trial that has a finite one, keyed by the repeat it ran in
    /// (a run's block, or an `ab` session's block pair): what paired blocks are made of.
    pub fn by_repeat(&self, figure: &crate::families::figures::Figure) -> Vec<(u32, f64)> {
        self.ok()
            .filter_map(|t| Some((u32::try_from(t.repeat).ok()?, figure.value(t.outcome.as_ref()?)?)))
            .filter(|(_, v)| v.is_finite())
            .collect()
    }

    /// A figure of every ok trial that has one.
    pub fn values(&self, figure: impl Fn(&Outcome) -> Option<f64>) -> Vec<f64> {
        self.outcomes().filter_map(figure).collect()
    }

    /// The spec the group's trials ran (they share their parameters, so one for all);
    /// `None` where their stored parameters no longer make a spec (an old import).
    pub fn spec(&self) -> Option<&TrialSpec> {
        self.trials.iter().find_map(|t| t.spec.as_ref())
    }

    /// The group's processes where its suite set them (a group left at the default is on
    /// no procs axis), read from its trials' spec (from the suite's value for a trial whose
    /// stored parameters no longer make a spec).
    pub fn procs(&self) -> Option<f64> {
        let suites = self.params.get(cell::axis::PROCS)?;
        match self.spec() {
            Some(spec) => spec.procs().map(|n| n as f64),
            None => suites.as_f64(),
        }
    }

    /// The policy this group ran under, read from its trials' spec; `None` for trials
    /// whose stored parameters no longer make one (an old import).
    pub fn policy(&self) -> Option<Policy> {
        self.spec().map(TrialSpec::policy)
    }

    /// A parameter's value as text ("fifo", "10"; "-" where the suite did not set it):
    /// the spec's where it holds the key as one field (`TrialSpec::key_text`), the suite's
    /// value otherwise.
    pub fn value_text(&self, key: &str) -> String {
        match self.params.get(key) {
            Some(_) => self.spec().and_then(|s| s.key_text(key)).unwrap_or_else(|| param_text(self.params.get(key))),
            None => param_text(None),
        }
    }

    /// The headline figure (`Outcome::headline`) of every ok trial that has one (published
    /// latency figures give no p99).
    pub fn headlines(&self) -> Vec<f64> {
        self.values(|o| Some(o.headline()).filter(|v| !v.is_nan()))
    }
}

/// Group trials by experiment and parameters, in plan order.
pub fn groups(trials: &[TrialRecord]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    // Index by identity, so ten thousand trials group in one pass.
    let mut index: std::collections::HashMap<(i64, Family, &Cell), usize> = std::collections::HashMap::new();
    for t in trials {
        let key = (t.experiment, t.family, &t.params);
        match index.get(&key) {
            Some(&i) => out[i].trials.push(t),
            None => {
                index.insert(key, out.len());
                out.push(Group {
                    experiment: t.experiment,
                    family: t.family,
                    params: t.params.clone(),
                    trials: vec![t],
                });
            }
        }
    }
    out
}

/// Parameters whose value differs between the groups of one experiment.
pub fn varying(groups: &[&Group]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for g in groups {
        for k in g.params.keys() {
            if !keys.iter().any(|known| known == k) {
                keys.push(k.to_string());
            }
        }
    }
    keys.into_iter().filter(|k| groups.iter().any(|g| g.params.get(k) != groups[0].params.get(k))).collect()
}

/// A parameter's value as a table cell: "-" where the cell has no such parameter.
pub fn param_text(v: Option<&CellValue>) -> String {
    v.map_or_else(|| "-".into(), CellValue::text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{sample_ring, Policy, TrialStatus};

    /// A ring trial whose suite gave it `params` (a JSON object).
    fn ring_trial(params: &str, spec: Option<TrialSpec>) -> TrialRecord {
        let params = serde_json::from_str(params).unwrap();
        let (seq, experiment, repeat, elapsed_s) = (0, 0, 1, 0.0);
        let (outcome, status, started) = (None, TrialStatus::Ok, String::new());
        TrialRecord { seq, experiment, family: Family::Ring, repeat, params, spec, outcome, status, started, elapsed_s }
    }

    fn group(t: &TrialRecord) -> Group<'_> {
        Group { experiment: 0, family: t.family, params: t.params.clone(), trials: vec![t] }
    }

    #[test]
    fn a_groups_policy_comes_from_its_spec_and_its_texts_from_params_without_one() {
        let (mut spec, _) = sample_ring(4, 10, 1000);
        spec.policy = Policy::Fifo;
        let params = r#"{"policy": "SCHED_FIFO", "procs": 4, "laps": 10}"#;
        let typed = ring_trial(params, Some(TrialSpec::Ring(spec)));
        let g = group(&typed);
        assert_eq!(
            (g.policy(), g.procs(), g.value_text("policy")),
            (Some(Policy::Fifo), Some(4.0), "fifo".to_string())
        );
        // A key the spec does not hold as one field, and one the suite did not set.
        assert_eq!((g.value_text("laps"), g.value_text("work_kb")), ("10".to_string(), "-".to_string()));
        let old = ring_trial(r#"{"policy": "rr", "procs": 3}"#, None);
        let g = group(&old);
        // Without a spec the suite's text is shown as written, but no policy is read from it.
        assert_eq!((g.policy(), g.procs(), g.value_text("policy")), (None, Some(3.0), "rr".to_string()));
        assert_eq!(group(&ring_trial("{}", None)).policy(), None);
    }
}
