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
/// The longest one trial may be asked to take: a duration, or a count whose trial would
/// take longer even on a fast machine, is a typo rather than a plan (longer measurements
/// are more repeats, each stored as it ends).
pub const MAX_TRIAL: Duration = Duration::from_secs(24 * 3600);
/// The shortest latency interval (10 µs, 100 kHz). cyclictest reads `-i` as whole µs
/// (1 µs is the finest it can ask for) and checks no minimum; below 10 µs the wakeup
/// itself (the syscall, the timer interrupt, the switch back: several µs on a VM) takes
/// most of the period, so nearly every period overruns and the run measures its own cost.
pub const MIN_INTERVAL_NS: u64 = 10_000;

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

/// A count of at least 1 (`_` allowed as a separator): laps, loops, iterations. `what`
/// names the unit in messages ("laps").
fn parse_count(text: &str, what: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("{t} {what} is negative: give a whole number of at least 1"));
    }
    let n: u64 = t.replace('_', "").parse().map_err(|_| {
        if !t.is_empty() && t.replace('_', "").chars().all(|c| c.is_ascii_digit()) {
            format!("{t} {what} is more than schedlab can count: give at most {}", u64::MAX)
        } else {
            format!("'{t}' is not a whole number of {what}: give a count of at least 1, e.g. 1000")
        }
    })?;
    if n == 0 {
        return Err(format!("0 {what} runs nothing: give at least 1"));
    }
    Ok(n)
}

/// Workload iterations (`--iterations`): Monte Carlo samples or mixed iterations per child.
pub fn parse_iterations(text: &str) -> std::result::Result<u64, String> {
    parse_count(text, "iterations")
}

/// Latency periods per thread (`--loops`).
pub fn parse_loops(text: &str) -> std::result::Result<u64, String> {
    parse_count(text, "loops")
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
    parse_count(text, "laps")
}

/// "5s", "250ms", "100us", "1.5m", "2h", "30" (seconds).
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("'{t}' is negative: give a time above zero, e.g. 5s or 250ms"));
    }
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
        return Err(format!("the duration '{text}' must be greater than zero (e.g. 5s, 250ms)"));
    }
    if secs > 7.0 * 86400.0 {
        return Err(format!("the duration '{text}' is longer than a week: give 7d or less, e.g. 24h"));
    }
    // Below a nanosecond the value would round to zero.
    if secs < 1e-9 {
        return Err(format!("the duration '{text}' is below one nanosecond: give 1ns or more"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A time as a flag or suite key takes it, in the largest unit that keeps it exact:
/// "2ms", "640us", "90s", "1500ms".
pub fn duration_arg(ns: u64) -> String {
    const UNITS: [(u64, &str); 6] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    let (scale, unit) = UNITS.into_iter().find(|(scale, _)| ns % scale == 0 && ns >= *scale).unwrap_or((1, "ns"));
    format!("{}{unit}", ns / scale)
}

/// `ns` rounded up to two significant digits, for a suggestion that reads well: 10_485_760 ns
/// becomes 11 ms.
pub fn round_up_2_digits(ns: u64) -> u64 {
    let mut scale = 1u64;
    while ns / scale >= 100 {
        scale *= 10;
    }
    ns.div_ceil(scale).saturating_mul(scale)
}

/// Whether `text` is a bare number, with no unit ("5", "2.5").
pub fn is_bare_number(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '_')
}

/// What to write instead of a bare number where a time needs its unit.
pub fn no_unit_message(number: &str) -> String {
    let n = number.trim();
    format!("{n} has no unit: write {n}us, {n}ms or {n}s")
}

/// The length of one trial (`--duration` of ring and latency): a duration of at most
/// `MAX_TRIAL`. A bare number is seconds, as in cyclictest's `-D` and sleep(1).
pub fn parse_trial_duration(text: &str) -> std::result::Result<Duration, String> {
    let d = parse_duration(text)?;
    if d > MAX_TRIAL {
        return Err(format!(
            "'{}' is longer than the 24 h one trial may take: give 24h or less, and more repeats for a longer \
             measurement",
            text.trim()
        ));
    }
    Ok(d)
}

/// A latency interval (`--interval`, suite key `interval`): the unit is required (a bare
/// number would be seconds here, where cyclictest's `-i` counts µs), from 10 µs
/// (`MIN_INTERVAL_NS`) to 24 h.
pub fn parse_interval(text: &str) -> std::result::Result<Duration, String> {
    if is_bare_number(text) {
        return Err(no_unit_message(text));
    }
    let d = parse_trial_duration(text)?;
    if d < Duration::from_nanos(MIN_INTERVAL_NS) {
        return Err(format!(
            "an interval of {} is below the 10 µs floor: a wakeup costs several µs by itself, so nearly every period \
             would overrun (cyclictest's -i counts whole µs); give 10us or more (e.g. 100us, 1ms)",
            text.trim()
        ));
    }
    Ok(d)
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
    let max_hz = 1e9 / MIN_INTERVAL_NS as f64;
    if hz > max_hz {
        return Err(format!(
            "{hz} Hz is a period of {:.3} µs, below the 10 µs floor of an interval: give at most {max_hz} Hz",
            1e6 / hz
        ));
    }
    Ok(hz)
}

/// A SCHED_DEADLINE time ("100us", "1ms", "1.5ms") in ns. The unit is required: a bare
/// number would be seconds elsewhere, far beyond any sensible period.
pub fn parse_reservation_ns(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    if is_bare_number(t) {
        return Err(no_unit_message(t));
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

/// `target_ci` / `--target-ci`: the relative half-width of a cell's 95 % interval, above 0
/// and below 100 %: "5%", or a fraction such as 0.05 (a bare number above 1 is percent).
pub fn parse_target_ci(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let num = t.strip_suffix('%').unwrap_or(t).trim();
    let v: f64 = num.parse().map_err(|_| format!("'{t}' is not a target (try 5% or 0.05)"))?;
    if !v.is_finite() {
        return Err(format!("'{t}' is not a number: give a percentage above 0 and below 100%, e.g. 5%"));
    }
    if v < 0.0 {
        return Err(format!("'{t}' is negative: an interval's half-width is above 0; give e.g. 5%"));
    }
    if v == 0.0 {
        return Err(format!(
            "'{t}' asks for an interval of zero width, which no number of repeats reaches: give a target above 0, \
             e.g. 5%"
        ));
    }
    if !t.ends_with('%') && v == 1.0 {
        return Err(format!(
            "'{t}' reads as the fraction 1, i.e. 100%, which every interval meets: write 1% for one percent, or a \
             fraction below 1 such as 0.05"
        ));
    }
    let fraction = parse_threshold(t)?;
    if fraction >= 1.0 {
        return Err(format!(
            "'{t}' is 100% or more of the median, which every interval meets: give a target below 100%, e.g. 5%"
        ));
    }
    Ok(fraction)
}

/// `margin`: how far apart two sides' median ratio may be and still be called
/// equivalent, a percentage above 0 and at most 50 % ("10%", or the fraction 0.1).
pub fn parse_margin(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let fraction = parse_threshold(t).map_err(|_| format!("'{t}' is not a margin (try 10% or 0.1)"))?;
    if fraction <= 0.0 {
        return Err(format!(
            "'{t}' calls sides equivalent only when their ratio is exactly 1, which no blocks can show: give a \
             margin above 0, e.g. 5%"
        ));
    }
    if fraction > 0.5 {
        return Err(format!(
            "'{t}' would call sides up to {:.0}% apart equivalent: give a margin of at most 50%, e.g. 10%",
            fraction * 100.0
        ));
    }
    Ok(fraction)
}

/// `max_repeat` / `--max-repeat`: a whole number from 1 to 10000, like `repeat`.
pub fn parse_max_repeat(text: &str) -> std::result::Result<u32, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative: give the most trials of one cell, from 1 to 10000"));
    }
    match parse_whole::<u32>(t)? {
        0 => Err("0 allows no trial at all: give the most trials of one cell, from 1 to 10000".into()),
        n @ 1..=10_000 => Ok(n),
        n => Err(format!("{n} is more trials of one cell than schedlab runs: give 1 to 10000")),
    }
}

/// `budget` / `--budget`: the time an adaptive run may take, above zero (a bare number is
/// seconds), at most a week.
pub fn parse_budget(text: &str) -> std::result::Result<Duration, String> {
    parse_duration(text).map_err(|msg| {
        if msg.contains("greater than zero") {
            format!("a budget of '{}' leaves no time for any trial: give a time such as 5m or 90s", text.trim())
        } else {
            msg
        }
    })
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

/// Readers for typed tables whose values are checked after they are read, where the
/// message names the task or key a value belongs to and quotes what was written instead
/// (`task a: period: 5 is not a time`): `Given` keeps a value of another shape as text,
/// `Keyed` reads a table whose keys decide their values' types, in the order written.
pub(crate) mod given {
    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};
    use std::fmt;

    /// Any value, kept only as text for a message: the compact JSON it reads as (`5`,
    /// `"1ms"`, `[1,2]`), the inline TOML a TOML file would hold (`[1, 2]`, `{ a = 1 }`),
    /// and serde's name for its kind (``integer `5` ``).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Shown {
        pub json: String,
        pub toml: String,
        pub kind: String,
    }

    impl fmt::Display for Shown {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(&self.json)
        }
    }

    struct ShownVisitor;

    impl ShownVisitor {
        /// A number, string or flag: writing it as JSON or TOML cannot fail.
        fn scalar<T: serde::Serialize + Into<toml::Value>>(value: T, kind: Unexpected) -> Shown {
            let json = serde_json::to_string(&value).unwrap_or_default();
            Shown { json, kind: kind.to_string(), toml: value.into().to_string() }
        }
    }

    impl<'de> Visitor<'de> for ShownVisitor {
        type Value = Shown;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any value")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Shown, E> {
            Ok(Self::scalar(v, Unexpected::Bool(v)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Shown, E> {
            Ok(Self::scalar(v, Unexpected::Signed(v)))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Shown, E> {
            let text = v.to_string();
            Ok(Shown { json: text.clone(), toml: text, kind: Unexpected::Unsigned(v).to_string() })
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Shown, E> {
            Ok(Self::scalar(v, Unexpected::Float(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Shown, E> {
            Ok(Self::scalar(v, Unexpected::Str(v)))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Shown, E> {
            Ok(Shown { json: "null".into(), toml: "null".into(), kind: "null".into() })
        }
        fn visit_none<E: de::Error>(self) -> Result<Shown, E> {
            self.visit_unit()
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shown, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<Shown>()? {
                items.push(item);
            }
            let json = items.iter().map(|i| i.json.as_str()).collect::<Vec<_>>().join(",");
            let toml = items.iter().map(|i| i.toml.as_str()).collect::<Vec<_>>().join(", ");
            Ok(Shown { json: format!("[{json}]"), toml: format!("[{toml}]"), kind: "sequence".into() })
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shown, A::Error> {
            let (mut json, mut toml) = (Vec::new(), Vec::new());
            while let Some((key, value)) = map.next_entry::<String, Shown>()? {
                json.push(format!("{}:{}", serde_json::to_string(&key).unwrap_or_default(), value.json));
                let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                let key = if bare { key } else { toml::Value::from(key).to_string() };
                toml.push(format!("{key} = {}", value.toml));
            }
            let toml = if toml.is_empty() { "{}".to_string() } else { format!("{{ {} }}", toml.join(", ")) };
            Ok(Shown { json: format!("{{{}}}", json.join(",")), toml, kind: "map".into() })
        }
    }

    impl<'de> Deserialize<'de> for Shown {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shown, D::Error> {
            d.deserialize_any(ShownVisitor)
        }
    }

    /// A value whose type its key in a table decides (rt-app's `run0` is a time, its `lock`
    /// a name), read by `Keyed`.
    pub trait ByKey<'de>: Sized {
        /// What an error says was expected where no table stands.
        const EXPECTING: &'static str = "a table";
        fn read<A: MapAccess<'de>>(key: &str, map: &mut A) -> Result<Self, A::Error>;
    }

    /// A table's entries in the order written, each value read as its key says (`ByKey`).
    pub struct Keyed<V>(pub Vec<(String, V)>);

    impl<'de, V: ByKey<'de>> Deserialize<'de> for Keyed<V> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct KeyedVisitor<V>(std::marker::PhantomData<V>);
            impl<'de, V: ByKey<'de>> Visitor<'de> for KeyedVisitor<V> {
                type Value = Keyed<V>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str(V::EXPECTING)
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keyed<V>, A::Error> {
                    let mut entries = Vec::new();
                    while let Some(key) = map.next_key::<String>()? {
                        let value = V::read(&key, &mut map)?;
                        entries.push((key, value));
                    }
                    Ok(Keyed(entries))
                }
            }
            d.deserialize_map(KeyedVisitor(std::marker::PhantomData))
        }
    }

    /// What was given where a `T` belongs: one, or something else, shown for the message
    /// the reader words once it knows whose value it is.
    #[derive(Clone, Debug, PartialEq, serde::Deserialize)]
    #[serde(untagged)]
    pub enum Given<T> {
        Is(T),
        Not(Shown),
    }

    impl<T> Given<T> {
        /// The `T`, if one was given.
        pub fn ok(self) -> Option<T> {
            match self {
                Given::Is(v) => Some(v),
                Given::Not(_) => None,
            }
        }
    }

    /// For `#[serde(default, deserialize_with = "present")]`: a key that is there is
    /// `Some`, whatever its value (null included), and only a missing key is `None`.
    pub fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
        T::deserialize(d).map(Some)
    }
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
    fn bad_durations_say_what_to_give() {
        assert!(parse_duration("-5s").unwrap_err().contains("is negative: give a time above zero"));
        assert!(parse_duration("0").unwrap_err().contains("greater than zero (e.g. 5s"));
        assert!(parse_duration("0.1ns").unwrap_err().contains("below one nanosecond"));
        assert!(parse_duration("8d").unwrap_err().contains("unknown time unit"));
        assert!(parse_duration("200h").unwrap_err().contains("longer than a week"));
    }

    #[test]
    fn a_trial_lasts_at_most_a_day() {
        assert_eq!(parse_trial_duration("24h").unwrap(), MAX_TRIAL);
        assert_eq!(parse_trial_duration("30").unwrap(), Duration::from_secs(30), "a bare number is seconds");
        let e = parse_trial_duration("25h").unwrap_err();
        assert!(e.contains("longer than the 24 h one trial may take: give 24h or less"), "{e}");
        assert!(parse_trial_duration("0s").unwrap_err().contains("greater than zero"));
    }

    #[test]
    fn intervals_need_a_unit_and_at_least_10_us() {
        assert_eq!(parse_interval("10us").unwrap(), Duration::from_micros(10));
        assert_eq!(parse_interval("1.5ms").unwrap(), Duration::from_micros(1500));
        for bare in ["5", "5.5", "1_000"] {
            let e = parse_interval(bare).unwrap_err();
            assert_eq!(e, format!("{bare} has no unit: write {bare}us, {bare}ms or {bare}s"));
        }
        for short in ["1ns", "9us", "9999ns", "0.009ms"] {
            let e = parse_interval(short).unwrap_err();
            assert!(e.contains("below the 10 µs floor") && e.contains("give 10us or more"), "{short}: {e}");
        }
        assert!(parse_interval("0us").unwrap_err().contains("greater than zero"));
        assert!(parse_interval("-1ms").unwrap_err().contains("negative"));
        assert!(parse_interval("25h").unwrap_err().contains("24 h"));
    }

    #[test]
    fn frequencies_stop_at_the_interval_floor() {
        assert_eq!(parse_frequency("100000").unwrap(), 100_000.0);
        let e = parse_frequency("1000000000").unwrap_err();
        assert!(e.contains("below the 10 µs floor") && e.contains("at most 100000 Hz"), "{e}");
        assert!(parse_frequency("NaN").unwrap_err().contains("positive"));
    }

    #[test]
    fn counts_are_whole_and_at_least_one() {
        assert_eq!(parse_loops("850").unwrap(), 850);
        assert_eq!(parse_iterations("5_000_000").unwrap(), 5_000_000);
        assert_eq!(parse_loops("0").unwrap_err(), "0 loops runs nothing: give at least 1");
        assert_eq!(parse_iterations("0").unwrap_err(), "0 iterations runs nothing: give at least 1");
        assert_eq!(parse_laps("-5").unwrap_err(), "-5 laps is negative: give a whole number of at least 1");
        assert!(parse_laps("1.5").unwrap_err().contains("not a whole number of laps"));
        assert!(parse_loops("99999999999999999999").unwrap_err().contains("more than schedlab can count"));
    }

    #[test]
    fn target_ci_is_above_0_and_below_100_percent() {
        assert_eq!(parse_target_ci("5%").unwrap(), 0.05);
        assert_eq!(parse_target_ci("0.05").unwrap(), 0.05);
        assert_eq!(parse_target_ci("5").unwrap(), 0.05, "a bare number above 1 is percent");
        assert_eq!(parse_target_ci("1%").unwrap(), 0.01);
        assert_eq!(parse_target_ci("50%").unwrap(), 0.5);
        let refusals = [
            ("0", "zero width"),
            ("0%", "zero width"),
            ("-5%", "is negative"),
            ("-0.05", "is negative"),
            ("NaN", "is not a number"),
            ("inf", "is not a number"),
            ("1", "write 1% for one percent"),
            ("100%", "below 100%"),
            ("150", "below 100%"),
            ("lots", "is not a target (try 5% or 0.05)"),
        ];
        for (text, needle) in refusals {
            let e = parse_target_ci(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn max_repeat_and_budget() {
        assert_eq!(parse_max_repeat("30").unwrap(), 30);
        assert!(parse_max_repeat("0").unwrap_err().contains("0 allows no trial at all"));
        assert!(parse_max_repeat("-1").unwrap_err().contains("negative"));
        assert!(parse_max_repeat("10001").unwrap_err().contains("give 1 to 10000"));
        assert_eq!(parse_budget("90").unwrap(), Duration::from_secs(90), "a bare budget is seconds");
        assert!(parse_budget("0s").unwrap_err().contains("leaves no time for any trial"));
        assert!(parse_budget("-5m").unwrap_err().contains("negative"));
    }

    #[test]
    fn suggested_times_are_exact_and_parse_back() {
        for (ns, text) in [(2_000_000, "2ms"), (640_000, "640us"), (90_000_000_000, "90s"), (1_500_000, "1500us")] {
            assert_eq!(duration_arg(ns), text);
            assert_eq!(parse_duration(text).unwrap(), Duration::from_nanos(ns));
        }
        assert_eq!(duration_arg(3_600_000_000_000), "1h");
        assert_eq!(round_up_2_digits(10_485_760), 11_000_000);
        assert_eq!(round_up_2_digits(640_000), 640_000);
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
        assert_eq!(parse_reservation_ns("100").unwrap_err(), "100 has no unit: write 100us, 100ms or 100s");
        assert!(parse_reservation_ns("0ms").unwrap_err().contains("greater than zero"));
        assert!(parse_reservation_ns("3 fortnights").unwrap_err().contains("unknown time unit"));
    }

    #[test]
    fn a_value_of_another_shape_is_kept_as_its_json_text() {
        use given::Given;
        let read = |text: &str| serde_json::from_str::<Given<String>>(text).unwrap();
        assert_eq!(read("\"1ms\""), Given::Is("1ms".into()));
        let shown = |text: &str| match read(text) {
            Given::Not(s) => (s.json, s.kind),
            Given::Is(s) => panic!("{s} is a string"),
        };
        assert_eq!(shown("5"), ("5".into(), "integer `5`".into()));
        assert_eq!(shown("1.5"), ("1.5".into(), "floating point `1.5`".into()));
        assert_eq!(shown("[1, \"x\", {\"a\": null}]"), ("[1,\"x\",{\"a\":null}]".into(), "sequence".into()));
        let toml: Given<String> = toml::from_str::<std::collections::BTreeMap<String, Given<String>>>("t = 100")
            .unwrap()
            .remove("t")
            .unwrap();
        assert_eq!(toml.ok(), None);
    }

    #[test]
    fn policy_lists() {
        assert_eq!(parse_policies("other,fifo,rr").unwrap().0, vec![Policy::Other, Policy::Fifo, Policy::Rr]);
        assert_eq!(parse_policies("FIFO, fifo").unwrap().0, vec![Policy::Fifo]);
        assert_eq!(parse_policies("deadline").unwrap().0, vec![Policy::Deadline]);
        assert!(parse_policies("fifoo").unwrap_err().contains("unknown policy 'fifoo'"));
    }
}
