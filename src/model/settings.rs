//! Machine settings as typed sides (`ab --a-set`) and suite axes: a sched_ext scheduler
//! (`scx`), kernel tunables (`sysctl`), a private cgroup's CPU weight, bandwidth or idle
//! class (`cgroup`), the cpufreq governor (`governor`) and SMT (`smt`). One vocabulary
//! for both: a suite writes `cgroup = [{}, { max = "50ms/100ms" }, { weight = 100 }]`, an
//! A/B side `--b-set 'cgroup = { max = "50ms/100ms" }'`.
//!
//! This module only reads and checks what is asked (the allow-list, the bounds); the
//! switching, reading back and restoring is `sys::settings`. A setting travels in a
//! trial's parameters as its canonical text (`cgroup = "max=50ms/100ms"`), so every
//! table, export and comparison shows it as the parameter it is, and a resumed run
//! switches what its trials name.

use crate::model::cell::Cell;
use crate::model::parse::given::{ByKey, Given, Keyed, Shown};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The keys that name a setting rather than a family's option.
pub const KEYS: [&str; 5] = ["scx", "sysctl", "cgroup", "governor", "smt"];

/// Sysctls that may be switched besides `kernel.sched_*` and `kernel.timer_*`.
const ALSO_ALLOWED: [&str; 3] = ["kernel.numa_balancing", "kernel.nmi_watchdog", "kernel.watchdog"];

/// The shortest CFS bandwidth quota or period (the kernel's own floor is 1 ms).
const MIN_BANDWIDTH_US: u64 = 1_000;
/// The longest CFS bandwidth period the kernel takes (1 s).
const MAX_PERIOD_US: u64 = 1_000_000;

/// Whether `key` is a setting's key.
pub fn is_key(key: &str) -> bool {
    KEYS.contains(&key)
}

/// A private cgroup's CPU setting; all `None`/false is a group of the default weight with
/// no limit (a "no limit" cell whose throttling and pressure are still read).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupSetting {
    /// cgroup v2 `cpu.weight` (1-10000, 100 the default); v1 `cpu.shares` = weight × 1024 / 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    /// CFS bandwidth: (quota, period) in µs; v2 `cpu.max`, v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_us: Option<(u64, u64)>,
    /// `cpu.idle` = 1: the group's tasks are SCHED_IDLE against the rest of the machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
}

impl CgroupSetting {
    /// "max=50ms/100ms", "weight=100", "idle", "weight=50,idle"; "default" for none.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(w) = self.weight {
            parts.push(format!("weight={w}"));
        }
        if let Some((q, p)) = self.max_us {
            parts.push(format!("max={}/{}", us_text(q), us_text(p)));
        }
        if self.idle {
            parts.push("idle".to_string());
        }
        if parts.is_empty() {
            "default".to_string()
        } else {
            parts.join(",")
        }
    }

    /// Read the canonical text back.
    pub fn parse_text(text: &str) -> Result<CgroupSetting, String> {
        let mut out = CgroupSetting::default();
        if text == "default" {
            return Ok(out);
        }
        for part in text.split(',') {
            match part.split_once('=') {
                Some(("weight", w)) => out.weight = Some(parse_weight(w)?),
                Some(("max", m)) => out.max_us = Some(parse_max(m)?),
                None if part == "idle" => out.idle = true,
                _ => return Err(format!("'{part}' is no cgroup setting (weight=N, max=QUOTA/PERIOD or idle)")),
            }
        }
        Ok(out)
    }

    /// From a table: `{ weight = 100 }`, `{ max = "50ms/100ms" }`, `{ idle = true }`.
    fn from_table(table: Given<Keyed<CgroupValue>>) -> Result<CgroupSetting, String> {
        let Given::Is(Keyed(entries)) = table else {
            return Err(
                "cgroup takes a table: { weight = 100 }, { max = \"50ms/100ms\" }, { idle = true } or {} (no limit)"
                    .into(),
            );
        };
        let mut out = CgroupSetting::default();
        for (key, value) in entries {
            match value {
                CgroupValue::Weight(Given::Is(w)) => out.weight = Some(parse_weight(&w.to_string())?),
                CgroupValue::Max(Given::Is(m)) => out.max_us = Some(parse_max(&m)?),
                CgroupValue::Idle(Given::Is(b)) => out.idle = b,
                CgroupValue::Weight(Given::Not(other))
                | CgroupValue::Max(Given::Not(other))
                | CgroupValue::Idle(Given::Not(other)) => {
                    return Err(format!(
                        "cgroup {key} = {} is not understood: write weight = 100, max = \"50ms/100ms\" or idle = true",
                        other.toml
                    ))
                }
                CgroupValue::Unknown => {
                    return Err(format!("unknown cgroup key '{key}': expected weight, max or idle"))
                }
            }
        }
        Ok(out)
    }
}

/// A `cgroup` table's value, read by its key.
enum CgroupValue {
    Weight(Given<i64>),
    Max(Given<String>),
    Idle(Given<bool>),
    Unknown,
}

impl<'de> ByKey<'de> for CgroupValue {
    fn read<A: de::MapAccess<'de>>(key: &str, map: &mut A) -> Result<Self, A::Error> {
        Ok(match key {
            "weight" => CgroupValue::Weight(map.next_value()?),
            "max" => CgroupValue::Max(map.next_value()?),
            "idle" => CgroupValue::Idle(map.next_value()?),
            _ => {
                map.next_value::<de::IgnoredAny>()?;
                CgroupValue::Unknown
            }
        })
    }
}

/// A whole number of µs in the largest unit that keeps it exact: "50ms", "250us", "1s".
fn us_text(us: u64) -> String {
    if us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us % 1_000 == 0 {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

fn parse_weight(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(w) if (1..=10_000).contains(&w) => Ok(w),
        _ => Err(format!("cgroup weight {text} is out of range: give 1 to 10000 (100 is the default)")),
    }
}

/// "50ms/100ms" (quota/period) or "50ms" (period 100 ms) -> (quota, period) in µs; a quota
/// or period below 1 ms is refused.
fn parse_max(text: &str) -> Result<(u64, u64), String> {
    let (quota, period) = text.split_once('/').unwrap_or((text, "100ms"));
    let us = |t: &str| -> Result<u64, String> {
        let d = crate::model::parse::parse_duration(t)
            .map_err(|e| format!("cgroup max \"{text}\": {e} (write QUOTA/PERIOD, e.g. \"50ms/100ms\")"))?;
        let us = d.as_micros() as u64;
        if us * 1_000 != d.as_nanos() as u64 {
            return Err(format!("cgroup max \"{text}\": {t} is not a whole number of µs"));
        }
        Ok(us)
    };
    let (q, p) = (us(quota.trim())?, us(period.trim())?);
    if q < MIN_BANDWIDTH_US {
        return Err(format!(
            "cgroup max \"{text}\": a quota of {} is below 1 ms: the kernel refuses it, and a group that small would \
             spend its life throttled; give 1ms or more",
            us_text(q)
        ));
    }
    if !(MIN_BANDWIDTH_US..=MAX_PERIOD_US).contains(&p) {
        return Err(format!("cgroup max \"{text}\": the period must be from 1ms to 1s (the kernel's bounds)"));
    }
    Ok((q, p))
}

/// What a trial's private cgroup did over the trial: CFS bandwidth periods and throttling
/// (`cpu.stat`), and the time its tasks waited for a CPU (`cpu.pressure`, `some`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupFigures {
    /// "v1" or "v2": where the setting was made.
    pub hierarchy: String,
    /// The setting's text ("max=50ms/100ms").
    pub setting: String,
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_ns: u64,
    /// CPU time of the group's tasks (v2's `usage_usec`; none on v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_ns: Option<u64>,
    /// The group's `some` CPU pressure over the trial; none where no v2 group could hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_ns: Option<u64>,
}

/// One side's (or one trial's) settings. Empty: the machine as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// sched_ext scheduler to run ("none": the kernel's own scheduler, checked to be on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scx: Option<String>,
    /// sysctl name (dotted) -> the value to write.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sysctl: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupSetting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// "on" or "off".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<String>,
}

impl Settings {
    pub fn is_empty(&self) -> bool {
        *self == Settings::default()
    }

    /// From `--a-set` texts, each a line of TOML in the suite's vocabulary:
    /// `sysctl = { "kernel.sched_rt_runtime_us" = 980000 }`,
    /// `sysctl.kernel.sched_rt_runtime_us = 980000`, `cgroup = { max = "50ms/100ms" }`.
    pub fn from_texts(texts: &[String]) -> Result<Settings, String> {
        let mut out = Settings::default();
        for text in texts {
            let Keyed::<SettingText>(keys) = toml::from_str(text).map_err(|e| {
                format!(
                    "'{text}' is no setting: {} (write e.g. 'sysctl.kernel.sched_rt_runtime_us = 980000' or \
                     'cgroup = {{ max = \"50ms/100ms\" }}')",
                    e.message().trim()
                )
            })?;
            for (key, SettingText(one)) in keys {
                out.merge(&key, &one?)?;
            }
        }
        Ok(out)
    }

    /// Add one key's canonical text (as `values` gives it).
    fn merge(&mut self, key: &str, text: &str) -> Result<(), String> {
        match key {
            "scx" => self.scx = Some(text.to_string()),
            "governor" => self.governor = Some(text.to_string()),
            "smt" => self.smt = Some(text.to_string()),
            "cgroup" => self.cgroup = Some(CgroupSetting::parse_text(text)?),
            "sysctl" => {
                for pair in text.split(',') {
                    let (name, value) =
                        pair.split_once('=').ok_or_else(|| format!("'{pair}' is no sysctl setting (NAME=VALUE)"))?;
                    check_sysctl(name, value)?;
                    self.sysctl.insert(name.to_string(), value.to_string());
                }
            }
            other => return Err(unknown_setting(other)),
        }
        Ok(())
    }

    /// The settings a trial's parameters name (its keys in [`KEYS`]); `None` when none.
    pub fn from_params(params: &Cell) -> Result<Option<Settings>, String> {
        let mut out = Settings::default();
        let mut any = false;
        for (key, text) in named(params) {
            out.merge(key, text)?;
            any = true;
        }
        Ok(any.then_some(out))
    }

    /// Each setting as a fingerprint field: `sysctl.kernel.sched_rt_runtime_us` -> "980000",
    /// `cgroup` -> "max=50ms/100ms", `scx` -> "rusty".
    pub fn flat(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (name, value) in &self.sysctl {
            out.insert(format!("sysctl.{name}"), value.clone());
        }
        if let Some(c) = &self.cgroup {
            out.insert("cgroup".into(), c.text());
        }
        for (key, value) in [("scx", &self.scx), ("governor", &self.governor), ("smt", &self.smt)] {
            if let Some(v) = value {
                out.insert(key.into(), v.clone());
            }
        }
        out
    }

    /// "sysctl kernel.sched_rt_runtime_us=980000, cgroup max=50ms/100ms"; "none" when empty.
    pub fn describe(&self) -> String {
        if self.is_empty() {
            return "none".into();
        }
        self.flat()
            .iter()
            .map(|(k, v)| match k.strip_prefix("sysctl.") {
                Some(name) => format!("sysctl {name}={v}"),
                None => format!("{k} {v}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether these settings turn RT throttling off (`kernel.sched_rt_runtime_us` = -1, or
    /// a runtime as long as the period).
    pub fn rt_throttling_off(&self, period_us: i64) -> bool {
        let period =
            self.sysctl.get("kernel.sched_rt_period_us").and_then(|p| p.trim().parse().ok()).unwrap_or(period_us);
        self.sysctl
            .get("kernel.sched_rt_runtime_us")
            .and_then(|r| r.trim().parse::<i64>().ok())
            .is_some_and(|r| r < 0 || r >= period)
    }
}

/// Check a sysctl's name against the allow-list and its value for what a /proc/sys file
/// takes.
fn check_sysctl(name: &str, value: &str) -> Result<(), String> {
    let well_formed = !name.is_empty()
        && name.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    if !well_formed {
        return Err(format!("'{name}' is no sysctl name (dotted, as `sysctl` writes it: kernel.sched_rt_runtime_us)"));
    }
    let allowed =
        name.starts_with("kernel.sched_") || name.starts_with("kernel.timer_") || ALSO_ALLOWED.contains(&name);
    if !allowed {
        return Err(format!(
            "sysctl {name} is outside what schedlab switches: kernel.sched_*, kernel.timer_* and {} (a side may \
             only change the scheduler's own tunables; use --a-setup/--b-setup for anything else)",
            ALSO_ALLOWED.join(", ")
        ));
    }
    if value.is_empty() || value.contains(['\n', ',', '=']) {
        return Err(format!("sysctl {name} = '{value}': give one value (a number or a word)"));
    }
    Ok(())
}

/// A `sysctl` table's entries in order: `{ kernel = { sched_rt_runtime_us = 1 } }` (dotted
/// keys, unquoted) and `{ "kernel.sched_rt_runtime_us" = 1 }` alike.
#[derive(Deserialize)]
struct SysctlTable(Keyed<SysctlValue>);

#[derive(Deserialize)]
#[serde(untagged)]
enum SysctlValue {
    Table(SysctlTable),
    Whole(i64),
    Word(String),
    Flag(bool),
    Other(Shown),
}

impl<'de> ByKey<'de> for SysctlValue {
    fn read<A: de::MapAccess<'de>>(_: &str, map: &mut A) -> Result<Self, A::Error> {
        map.next_value()
    }
}

/// `sysctl`'s canonical text: "NAME=VALUE,…", each name allow-listed.
fn sysctl_text(value: Given<SysctlTable>) -> Result<String, String> {
    let Given::Is(table) = value else {
        return Err("sysctl takes a table: sysctl = { \"kernel.sched_rt_runtime_us\" = 980000 }".into());
    };
    let mut pairs = Vec::new();
    flatten_sysctl("", table, &mut pairs)?;
    if pairs.is_empty() {
        return Err("sysctl = {} names no sysctl".into());
    }
    for (name, v) in &pairs {
        check_sysctl(name, v)?;
    }
    Ok(pairs.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(","))
}

/// `scx`, `governor` or `smt`: a name in quotes, checked.
fn name_text(key: &str, value: Given<String>) -> Result<String, String> {
    let Given::Is(text) = value else {
        return Err(format!("{key} takes a name in quotes, e.g. {key} = \"{}\"", example(key)));
    };
    let ok = match key {
        "smt" => matches!(text.as_str(), "on" | "off"),
        _ => !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-".contains(&b)),
    };
    if !ok {
        return Err(format!("{key} = \"{text}\" is not understood: e.g. {key} = \"{}\"", example(key)));
    }
    Ok(text)
}

fn unknown_setting(key: &str) -> String {
    format!("unknown setting '{key}': expected one of {}", KEYS.join(", "))
}

/// One key of an `--a-set` text, read as its setting takes it and made its canonical text
/// (or the reason it cannot be).
struct SettingText(Result<String, String>);

impl<'de> ByKey<'de> for SettingText {
    fn read<A: de::MapAccess<'de>>(key: &str, map: &mut A) -> Result<Self, A::Error> {
        Ok(SettingText(match key {
            "cgroup" => CgroupSetting::from_table(map.next_value()?).map(|c| c.text()),
            "sysctl" => sysctl_text(map.next_value()?),
            "scx" | "governor" | "smt" => name_text(key, map.next_value()?),
            other => {
                map.next_value::<de::IgnoredAny>()?;
                Err(unknown_setting(other))
            }
        }))
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "scx" => "rusty",
        "governor" => "performance",
        _ => "off",
    }
}

/// The table's entries as (dotted name, value text) pairs.
fn flatten_sysctl(prefix: &str, table: SysctlTable, out: &mut Vec<(String, String)>) -> Result<(), String> {
    let SysctlTable(Keyed(entries)) = table;
    for (k, v) in entries {
        let name = if prefix.is_empty() { k } else { format!("{prefix}.{k}") };
        match v {
            SysctlValue::Table(inner) => flatten_sysctl(&name, inner, out)?,
            SysctlValue::Whole(i) => out.push((name, i.to_string())),
            SysctlValue::Word(s) => out.push((name, s.trim().to_string())),
            SysctlValue::Flag(b) => out.push((name, u8::from(b).to_string())),
            SysctlValue::Other(other) => {
                return Err(format!("sysctl {name} = {}: give a whole number or a word", other.toml))
            }
        }
    }
    Ok(())
}

/// One value, or a list of them (an axis).
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrList<T> {
    List(Vec<T>),
    One(T),
}

/// A suite key's values, each as its canonical text: one for a scalar (a table for
/// `cgroup` and `sysctl`), several for a list (an axis).
pub fn values<'de, D: Deserializer<'de>>(key: &str, value: D) -> Result<Vec<String>, String> {
    fn texts<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        key: &str,
        value: D,
        text: impl Fn(T) -> Result<String, String>,
    ) -> Result<Vec<String>, String> {
        let items = match OneOrList::<T>::deserialize(value).map_err(|e| format!("{key}: {e}"))? {
            OneOrList::List(items) if items.is_empty() => {
                return Err(format!("{key} is an empty list: give at least one value"))
            }
            OneOrList::List(items) => items,
            OneOrList::One(item) => vec![item],
        };
        let mut out: Vec<String> = Vec::new();
        for item in items {
            let one = text(item)?;
            if !out.contains(&one) {
                out.push(one);
            }
        }
        Ok(out)
    }
    match key {
        "cgroup" => texts(key, value, |t| CgroupSetting::from_table(t).map(|c| c.text())),
        "sysctl" => texts(key, value, sysctl_text),
        "scx" | "governor" | "smt" => texts(key, value, |t| name_text(key, t)),
        other => Err(unknown_setting(other)),
    }
}

/// The settings a cell's parameters name: each key of [`KEYS`] it has, with its text.
fn named(params: &Cell) -> impl Iterator<Item = (&'static str, &str)> {
    KEYS.iter().filter_map(|key| Some((*key, params.get(key)?.as_str()?)))
}

/// Every setting a plan's trials name, key by key, for the run's fingerprint: a key's
/// one value, or its values joined by " | " where it is an axis.
pub fn of_plan<'a>(params: impl Iterator<Item = &'a Cell>) -> Option<BTreeMap<String, String>> {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in params {
        for (key, text) in named(p) {
            let list = seen.entry(key.to_string()).or_default();
            if !list.iter().any(|t| t == text) {
                list.push(text.to_string());
            }
        }
    }
    (!seen.is_empty()).then(|| seen.into_iter().map(|(k, v)| (k, v.join(" | "))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml(text: &str) -> toml::Value {
        toml::from_str::<toml::Table>(&format!("v = {text}")).unwrap()["v"].clone()
    }

    #[test]
    fn cgroup_settings_read_and_round_trip() {
        let v = values("cgroup", toml("[{}, { max = \"50ms/100ms\" }, { weight = 100 }, { idle = true }]")).unwrap();
        assert_eq!(v, ["default", "max=50ms/100ms", "weight=100", "idle"]);
        for text in &v {
            assert_eq!(&CgroupSetting::parse_text(text).unwrap().text(), text);
        }
        assert_eq!(CgroupSetting::parse_text("max=50ms/100ms").unwrap().max_us, Some((50_000, 100_000)));
        assert_eq!(
            values("cgroup", toml("{ max = \"1500us/1s\", weight = 50 }")).unwrap(),
            ["weight=50,max=1500us/1s"]
        );
    }

    #[test]
    fn a_max_below_a_millisecond_and_odd_keys_are_refused() {
        let e = values("cgroup", toml("{ max = \"500us/100ms\" }")).unwrap_err();
        assert!(e.contains("below 1 ms"), "{e}");
        assert!(values("cgroup", toml("{ max = \"50ms/2s\" }")).unwrap_err().contains("period"));
        assert!(values("cgroup", toml("{ shares = 10 }")).unwrap_err().contains("unknown cgroup key"));
        assert!(values("cgroup", toml("{ weight = 0 }")).unwrap_err().contains("1 to 10000"));
        assert!(values("cgroup", toml("\"max\"")).unwrap_err().contains("takes a table"));
        // What was written instead is quoted as TOML writes it.
        let e = values("cgroup", toml("{ idle = { a = 1 } }")).unwrap_err();
        assert!(e.starts_with("cgroup idle = { a = 1 } is not understood"), "{e}");
        let e = values("sysctl", toml("{ kernel = { sched_rt_runtime_us = [1, \"x\"] } }")).unwrap_err();
        assert_eq!(e, "sysctl kernel.sched_rt_runtime_us = [1, \"x\"]: give a whole number or a word");
    }

    #[test]
    fn sysctls_are_allow_listed_and_written_either_way() {
        let v = values("sysctl", toml("{ \"kernel.sched_rt_runtime_us\" = 980000 }")).unwrap();
        assert_eq!(v, ["kernel.sched_rt_runtime_us=980000"]);
        let dotted = Settings::from_texts(&["sysctl.kernel.sched_rt_runtime_us = 980000".into()]).unwrap();
        assert_eq!(dotted.sysctl["kernel.sched_rt_runtime_us"], "980000");
        assert_eq!(dotted.flat()["sysctl.kernel.sched_rt_runtime_us"], "980000");
        let e = values("sysctl", toml("{ \"vm.swappiness\" = 10 }")).unwrap_err();
        assert!(e.contains("outside what schedlab switches"), "{e}");
        assert!(values("sysctl", toml("{ \"kernel.sched_x/../../y\" = 1 }")).is_err());
        assert!(values("sysctl", toml("{ \"kernel.timer_migration\" = 0 }")).is_ok());
        assert!(values("sysctl", toml("{ \"kernel.numa_balancing\" = 0 }")).is_ok());
    }

    #[test]
    fn params_carry_settings_as_text() {
        let mut params = Cell::new();
        params.insert("policy", "other");
        assert_eq!(Settings::from_params(&params).unwrap(), None);
        params.insert("cgroup", "max=50ms/100ms");
        params.insert("sysctl", "kernel.sched_rt_runtime_us=980000,kernel.timer_migration=0");
        let s = Settings::from_params(&params).unwrap().unwrap();
        assert_eq!(s.cgroup.unwrap().max_us, Some((50_000, 100_000)));
        assert_eq!(s.sysctl.len(), 2);
        let plan = of_plan([&params, &params].into_iter()).unwrap();
        assert_eq!(plan["cgroup"], "max=50ms/100ms");
    }

    #[test]
    fn rt_throttling_off_is_seen() {
        let off = Settings::from_texts(&["sysctl.kernel.sched_rt_runtime_us = -1".into()]).unwrap();
        assert!(off.rt_throttling_off(1_000_000));
        let on = Settings::from_texts(&["sysctl.kernel.sched_rt_runtime_us = 980000".into()]).unwrap();
        assert!(!on.rt_throttling_off(1_000_000));
        assert!(!Settings::default().rt_throttling_off(1_000_000));
    }

    #[test]
    fn named_settings_are_checked() {
        assert!(Settings::from_texts(&["smt = \"maybe\"".into()]).is_err());
        assert_eq!(Settings::from_texts(&["scx = \"rusty\"".into()]).unwrap().scx.as_deref(), Some("rusty"));
        assert!(Settings::from_texts(&["scx = \"../x\"".into()]).is_err());
        assert!(Settings::from_texts(&["nice = 1".into()]).unwrap_err().contains("unknown setting"));
    }
}
