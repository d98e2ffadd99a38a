//! A cell's parameters as its suite (or command) gave them, key and value in the suite's
//! order, and how every report and message writes them: `procs=4 policy=fifo`.

use serde_json::{Map, Value as Json};

/// A parameter's value as text: a string as written, any other value as JSON (`4`, `true`).
pub fn value_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `key=value` for each parameter whose key `keep` keeps, in order.
pub fn parts(params: &Map<String, Json>, keep: impl Fn(&str) -> bool) -> Vec<String> {
    params.iter().filter(|(k, _)| keep(k)).map(|(k, v)| format!("{k}={}", value_text(v))).collect()
}

/// The kept parameters as one line: `procs=4 policy=fifo`.
pub fn text(params: &Map<String, Json>, keep: impl Fn(&str) -> bool) -> String {
    parts(params, keep).join(" ")
}

/// The parameters but `without` (an axis, or none) as JSON text: what tells one cell, or
/// one question of a compared axis, from another.
pub fn key(params: &Map<String, Json>, without: Option<&str>) -> String {
    let mut rest = params.clone();
    if let Some(axis) = without {
        rest.remove(axis);
    }
    Json::Object(rest).to_string()
}

/// Keys only a deadline trial has: its reservation, and taskset's `reclaim`. A policy
/// axis that mixes deadline with other policies keeps them in the deadline cells alone.
pub const DEADLINE_ONLY: [&str; 4] = ["runtime", "deadline", "period", "reclaim"];

/// What tells one question of a compared `axis` from another: the parameters but the axis
/// and, for the policy axis, the keys only its deadline cells have — so those cells are
/// compared with the other policies' and not asked apart.
pub fn question_key(params: &Map<String, Json>, axis: &str) -> String {
    let mut rest = params.clone();
    rest.remove(axis);
    if axis == "policy" {
        for k in DEADLINE_ONLY {
            rest.remove(k);
        }
    }
    Json::Object(rest).to_string()
}

/// Every parameter.
pub fn all(_: &str) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_written_bare_and_the_rest_as_json() {
        let params: Map<String, Json> =
            serde_json::from_str(r#"{"policy": "fifo", "procs": 4, "trace": true, "cmd": ["a", "b"]}"#).unwrap();
        assert_eq!(text(&params, all), r#"policy=fifo procs=4 trace=true cmd=["a","b"]"#);
        assert_eq!(parts(&params, |k| k != "procs"), ["policy=fifo", "trace=true", r#"cmd=["a","b"]"#]);
        assert_eq!(text(&Map::new(), all), "");
        let without_procs: Json = serde_json::from_str(&key(&params, Some("procs"))).unwrap();
        assert_eq!(without_procs, serde_json::json!({"policy": "fifo", "trace": true, "cmd": ["a", "b"]}));
        assert_eq!(key(&params, None), key(&params, Some("absent")));
    }
}
