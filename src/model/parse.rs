//! Turning the text a user types (on the command line or in a suite file) into values:
//! lists of counts and CPUs, policies, sizes, durations. Pure functions, no system calls;
//! the command line (clap) and suite files (serde) call the same ones, so a value means
//! the same wherever it is written.

use crate::error::{Error, Result};
use crate::model::Policy;
use std::time::Duration;

/// The largest ring schedlab accepts at all; the machine's limits usually bite first.
pub const MAX_PROCS: usize = 1 << 20;
/// The largest per-member working set (1 GiB).
pub const MAX_WORK_KB: usize = 1 << 20;
/// The largest block or transfer schedlab accepts (1 GiB).
pub const MAX_SIZE: u64 = 1 << 30;

/// Ring sizes, ascending and without repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcList(pub Vec<usize>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// "a,b,c" where each item is a number or a range "a..=b" / "a..b" / "a-b" (the last
/// only when `dash_ranges`, as in the kernel's CPU lists).
fn parse_number_list(text: &str, what: &str, dash_ranges: bool) -> std::result::Result<Vec<usize>, String> {
    let number = |s: &str| -> std::result::Result<usize, String> {
        s.trim()
            .replace('_', "")
            .parse::<usize>()
            .map_err(|_| format!("'{}' is not a whole number of {what}", s.trim()))
    };
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("empty item in the list '{text}'"));
        }
        let range = if let Some((a, b)) = item.split_once("..=") {
            Some((number(a)?, number(b)?))
        } else if let Some((a, b)) = item.split_once("..") {
            let (a, b) = (number(a)?, number(b)?);
            if b == 0 || b <= a {
                return Err(format!("the range '{item}' is empty"));
            }
            Some((a, b - 1))
        } else if let Some((a, b)) = item.split_once('-').filter(|_| dash_ranges) {
            Some((number(a)?, number(b)?))
        } else {
            None
        };
        match range {
            Some((a, b)) if b < a => return Err(format!("the range '{item}' is empty")),
            Some((a, b)) if b - a > MAX_PROCS => return Err(format!("the range '{item}' is too long")),
            Some((a, b)) => out.extend(a..=b),
            None => out.push(number(item)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

pub fn parse_procs(text: &str) -> std::result::Result<ProcList, String> {
    let counts = parse_number_list(text, "processes", false)?;
    if let Some(&small) = counts.iter().find(|&&n| n < 2) {
        return Err(format!("a ring needs at least 2 members, got {small}"));
    }
    if let Some(&big) = counts.iter().find(|&&n| n > MAX_PROCS) {
        return Err(format!("{big} members is more than schedlab supports ({MAX_PROCS})"));
    }
    Ok(ProcList(counts))
}

pub fn parse_workload_procs(text: &str) -> std::result::Result<ProcList, String> {
    let counts = parse_number_list(text, "processes", false)?;
    if counts.contains(&0) {
        return Err("a trial needs at least 1 process, got 0".into());
    }
    if let Some(&big) = counts.iter().find(|&&n| n > MAX_PROCS) {
        return Err(format!("{big} processes is more than schedlab supports ({MAX_PROCS})"));
    }
    Ok(ProcList(counts))
}

/// "other,fifo,rr": each policy once, in the order given.
pub fn parse_policies(text: &str) -> std::result::Result<PolicyList, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        let policy = Policy::ALL.into_iter().find(|p| p.as_str() == item.to_ascii_lowercase()).ok_or_else(|| {
            format!("unknown policy '{item}': expected one of other, fifo, rr, batch, idle, deadline (comma-separated)")
        })?;
        if !out.contains(&policy) {
            out.push(policy);
        }
    }
    Ok(PolicyList(out))
}

pub fn parse_iterations(text: &str) -> std::result::Result<u64, String> {
    let n: u64 = text.trim().replace('_', "").parse().map_err(|_| format!("'{text}' is not a whole number"))?;
    if n == 0 {
        return Err("--iterations must be at least 1".into());
    }
    Ok(n)
}

/// "100KiB", "1MiB", "4k", "512", "2M": bytes (k/K/KiB = 1024).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: u64 =
        num.replace('_', "").parse().map_err(|_| format!("'{text}' is not a size (try 1KiB, 100KiB, 4M)"))?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => return Err(format!("unknown size unit '{other}' in '{text}' (use B, KiB, MiB or GiB)")),
    };
    let bytes = value.checked_mul(scale).ok_or_else(|| format!("the size '{text}' is too large"))?;
    if bytes == 0 {
        return Err(format!("the size '{text}' must be greater than zero"));
    }
    if bytes > MAX_SIZE {
        return Err(format!("the size '{text}' is more than the 1 GiB schedlab allows"));
    }
    Ok(bytes)
}

pub fn parse_cpu_list(text: &str) -> std::result::Result<CpuList, String> {
    let cpus = parse_number_list(text, "a CPU", true)?;
    if let Some(&big) = cpus.iter().find(|&&c| c >= 8 * std::mem::size_of::<libc::cpu_set_t>()) {
        return Err(format!("CPU {big} is beyond what Linux can address"));
    }
    Ok(CpuList(cpus))
}

pub fn parse_laps(text: &str) -> std::result::Result<u64, String> {
    let laps: u64 =
        text.trim().replace('_', "").parse().map_err(|_| format!("'{text}' is not a whole number of laps"))?;
    if laps == 0 {
        return Err("--laps must be at least 1".into());
    }
    Ok(laps)
}

/// "5s", "250ms", "100us", "1.5m", "2h", "30" (seconds).
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("'{text}' is not a duration (try 5s, 250ms, 100us)"))?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => return Err(format!("unknown time unit '{other}' in '{text}' (use ns, us, ms, s, m or h)")),
    };
    let secs = value * scale;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("the duration '{text}' must be greater than zero"));
    }
    if secs > 7.0 * 86400.0 {
        return Err(format!("the duration '{text}' is longer than a week"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Check a policy/priority pair and fill in the default priority.
pub fn resolve_priority(policy: Policy, prio: Option<i32>) -> Result<i32> {
    let (lo, hi) = policy.priority_range();
    match prio {
        None => Ok(policy.default_priority()),
        Some(p) if (lo..=hi).contains(&p) => Ok(p),
        Some(p) if policy.is_realtime() => {
            Err(Error::usage(format!("--prio {p} is out of range for {}: use {lo} to {hi}", policy.kernel_name())))
        }
        Some(p) => Err(Error::usage(format!(
            "--prio {p} does not apply to {}: static priorities are only for fifo and rr (1-99)",
            policy.kernel_name()
        ))),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyList(pub Vec<Policy>);

/// A whole number (`_` allowed as a separator), e.g. a priority, nice value or seed.
pub fn parse_whole<T: std::str::FromStr>(text: &str) -> std::result::Result<T, String> {
    text.trim().replace('_', "").parse().map_err(|_| format!("'{text}' is not a whole number in range"))
}

/// Measuring threads: 1 to 4096.
pub fn parse_threads(text: &str) -> std::result::Result<u32, String> {
    match parse_whole::<u32>(text)? {
        n @ 1..=4096 => Ok(n),
        n => Err(format!("{n} threads is out of range: use 1 to 4096")),
    }
}

pub fn parse_frequency(text: &str) -> std::result::Result<f64, String> {
    let hz: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a frequency in Hz (try 85 or 1000)"))?;
    if !hz.is_finite() || hz <= 0.0 {
        return Err(format!("the frequency '{text}' must be a positive number of Hz"));
    }
    if hz > 1e9 {
        return Err(format!("{hz} Hz asks for a period below one nanosecond"));
    }
    Ok(hz)
}

/// A SCHED_DEADLINE time ("100us", "1ms", "1.5ms") in ns. The unit is required: a bare
/// number would be seconds elsewhere, far beyond any sensible period.
pub fn parse_reservation_ns(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!("'{text}' needs a unit: ns, us, ms or s (e.g. 100us)"));
    }
    let d = parse_duration(t)?;
    Ok(d.as_nanos().min(u128::from(u64::MAX)) as u64)
}

pub fn parse_break_us(text: &str) -> std::result::Result<f64, String> {
    let us: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a number of µs"))?;
    if !us.is_finite() || us <= 0.0 {
        return Err(format!("--break-us '{text}' must be a positive number of µs"));
    }
    Ok(us)
}

/// "5%", "0.05" or "5" (a number above 1 is read as percent).
pub fn parse_threshold(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let (num, percent) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let v: f64 = num.parse().map_err(|_| format!("'{text}' is not a threshold (try 5% or 0.05)"))?;
    let v = if percent || v > 1.0 { v / 100.0 } else { v };
    if !v.is_finite() || v < 0.0 {
        return Err(format!("the threshold '{text}' must be zero or more"));
    }
    Ok(v)
}

/// `target_ci`: "5%" or 0.05, through the parser of `--target-ci`.
pub fn parse_target_ci(text: &str) -> std::result::Result<f64, String> {
    let v = parse_threshold(text)?;
    if v <= 0.0 || v >= 1.0 {
        return Err(format!("'{text}' must be above 0 and below 100% (e.g. 5%)"));
    }
    Ok(v)
}

/// `max_repeat`: a whole number from 1 to 10000, like `repeat`.
pub fn parse_max_repeat(text: &str) -> std::result::Result<u32, String> {
    match parse_whole::<u32>(text)? {
        n @ 1..=10_000 => Ok(n),
        n => Err(format!("{n} is out of range: use 1 to 10000")),
    }
}

/// Suite files give values as TOML numbers or strings; either way the text goes through
/// the same parser the command line uses. `text_value!(name, Type, parser)` makes a serde
/// `deserialize_with` function for an `Option<Type>` field.
pub(crate) mod from_text {
    use serde::de::{self, Deserializer, Visitor};
    use std::fmt;

    struct ScalarText;

    impl Visitor<'_> for ScalarText {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number or a string")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
            Ok(v.to_string())
        }
    }

    pub fn parse_with<'de, D: Deserializer<'de>, T>(
        d: D,
        parser: fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, D::Error> {
        let text = d.deserialize_any(ScalarText)?;
        parser(&text).map(Some).map_err(de::Error::custom)
    }

    macro_rules! text_value {
        ($name:ident, $ty:ty, $parser:expr) => {
            pub(crate) fn $name<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<$ty>, D::Error> {
                $crate::model::parse::from_text::parse_with(d, $parser)
            }
        };
    }
    pub(crate) use text_value;
}

/// "0-3,6,8-9": the kernel's own CPU list notation.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procs_lists_and_ranges() {
        assert_eq!(parse_procs("2,4,8").unwrap().0, vec![2, 4, 8]);
        assert_eq!(parse_procs("8").unwrap().0, vec![8]);
        assert_eq!(parse_procs("2..=5").unwrap().0, vec![2, 3, 4, 5]);
        assert_eq!(parse_procs("2..5").unwrap().0, vec![2, 3, 4]);
        assert_eq!(parse_procs("16, 4,4, 2..=3").unwrap().0, vec![2, 3, 4, 16]);
        assert_eq!(parse_procs("1_000").unwrap().0, vec![1000]);
        assert_eq!(parse_procs("2,4,8,10,16,20,32,48,64").unwrap().0, vec![2, 4, 8, 10, 16, 20, 32, 48, 64]);
    }

    #[test]
    fn procs_refuses_small_empty_and_junk() {
        assert!(parse_procs("1").unwrap_err().contains("at least 2"));
        assert!(parse_procs("0").unwrap_err().contains("at least 2"));
        assert!(parse_procs("5..=3").unwrap_err().contains("empty"));
        assert!(parse_procs("4..4").unwrap_err().contains("empty"));
        assert!(parse_procs("two").unwrap_err().contains("not a whole number"));
        assert!(parse_procs("2,,4").unwrap_err().contains("empty item"));
        assert!(parse_procs("-3").is_err());
        assert!(parse_procs(&format!("{}", MAX_PROCS + 1)).unwrap_err().contains("more than"));
    }

    #[test]
    fn cpu_lists_accept_kernel_notation() {
        assert_eq!(parse_cpu_list("0-2,5").unwrap().0, vec![0, 1, 2, 5]);
        assert_eq!(parse_cpu_list("3").unwrap().0, vec![3]);
        assert!(parse_cpu_list("100000").is_err());
    }

    #[test]
    fn laps_must_be_positive() {
        assert_eq!(parse_laps("1_000").unwrap(), 1000);
        assert!(parse_laps("0").unwrap_err().contains("at least 1"));
        assert!(parse_laps("-1").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("0s").unwrap_err().contains("greater than zero"));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("unknown time unit"));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn priorities() {
        assert_eq!(resolve_priority(Policy::Fifo, None).unwrap(), 50);
        assert_eq!(resolve_priority(Policy::Rr, Some(99)).unwrap(), 99);
        assert!(resolve_priority(Policy::Fifo, Some(0)).unwrap_err().to_string().contains("1 to 99"));
        assert!(resolve_priority(Policy::Other, Some(5)).unwrap_err().to_string().contains("only for fifo and rr"));
        assert_eq!(resolve_priority(Policy::Batch, Some(0)).unwrap(), 0);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100KiB").unwrap(), 102_400);
        assert_eq!(parse_size("1k").unwrap(), 1024);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("2M").unwrap(), 2 << 20);
        assert!(parse_size("0").unwrap_err().contains("greater than zero"));
        assert!(parse_size("5 parsecs").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("2GiB").unwrap_err().contains("1 GiB"));
    }

    #[test]
    fn reservation_times_need_a_unit() {
        assert_eq!(parse_reservation_ns("100us").unwrap(), 100_000);
        assert_eq!(parse_reservation_ns("1.5ms").unwrap(), 1_500_000);
        assert!(parse_reservation_ns("100").unwrap_err().contains("needs a unit"));
        assert!(parse_reservation_ns("0ms").unwrap_err().contains("greater than zero"));
        assert!(parse_reservation_ns("3 fortnights").unwrap_err().contains("unknown time unit"));
    }

    #[test]
    fn policy_lists() {
        assert_eq!(parse_policies("other,fifo,rr").unwrap().0, vec![Policy::Other, Policy::Fifo, Policy::Rr]);
        assert_eq!(parse_policies("FIFO, fifo").unwrap().0, vec![Policy::Fifo]);
        assert_eq!(parse_policies("deadline").unwrap().0, vec![Policy::Deadline]);
        assert!(parse_policies("fifoo").unwrap_err().contains("unknown policy 'fifoo'"));
    }
}
