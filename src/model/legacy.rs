//! Results written by schedlab 0.1.0 kept each trial's figures as an untyped JSON object
//! (seconds as floats, keyed by name). What every family's reader of such an object uses
//! (`FamilyModel::outcome_of_0_1_0`): seconds were ns / 1e9 in an f64, so rounding back to
//! ns is exact.

use crate::model::Usage;
pub use serde_json::Value as Json;

/// A whole number the object holds under `key`.
pub fn int(f: &Json, key: &str) -> Option<u64> {
    f.get(key)?.as_u64()
}

/// A time the object holds in seconds under `seconds_key`, in ns.
pub fn ns(f: &Json, seconds_key: &str) -> Option<u64> {
    Some((f.get(seconds_key)?.as_f64()? * 1e9).round() as u64)
}

/// User and system time and the counters 0.1.0 kept (absent ones are zero).
pub fn usage(f: &Json) -> Option<Usage> {
    let count = |key| int(f, key).unwrap_or(0);
    Some(Usage {
        utime_ns: ns(f, "user_s")?,
        stime_ns: ns(f, "sys_s")?,
        maxrss_kb: count("member_maxrss_kb"),
        minflt: count("minflt"),
        majflt: count("majflt"),
        inblock: count("inblock"),
        oublock: count("oublock"),
        nvcsw: count("nvcsw"),
        nivcsw: count("nivcsw"),
        ..Usage::default()
    })
}
