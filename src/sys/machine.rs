//! The machine fingerprint: what a result depends on besides the code (kernel,
//! preemption model, CPUs, frequency and idle drivers, RT throttling, isolation,
//! mitigations, virtualisation, load). Captured at the start of every run and stored with
//! it. Anything that cannot be read is `None` ("unknown"), never a guess.

use crate::sys::sched::{self, RtThrottling};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A fingerprint. Read from a stored run, a field it lacks (an older schedlab's, or an
/// imported run's short record) is None.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Machine {
    pub hostname: Option<String>,
    pub kernel_release: Option<String>,
    pub kernel_version: Option<String>,
    pub architecture: Option<String>,
    /// "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT" or "none", from the kernel's version string.
    pub preemption_model: Option<String>,
    /// The active PREEMPT_DYNAMIC mode (none, voluntary, full, lazy), where debugfs shows it.
    pub preempt_dynamic_mode: Option<String>,
    /// /sys/kernel/realtime: 1 on a PREEMPT_RT kernel; None where the file does not exist.
    pub sys_kernel_realtime: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus_online: Option<String>,
    pub cpus_allowed: Option<String>,
    pub cpus_isolated: Option<String>,
    pub cpus_nohz_full: Option<String>,
    /// "on", "off", "notsupported", ... from /sys/devices/system/cpu/smt/control.
    pub smt: Option<String>,
    /// Governor -> CPU list, e.g. {"performance": "0-15"}.
    pub cpufreq_governor: Option<BTreeMap<String, String>>,
    pub cpufreq_driver: Option<BTreeMap<String, String>>,
    pub cpuidle_driver: Option<String>,
    pub cpuidle_governor: Option<String>,
    pub clocksource: Option<String>,
    pub sched_rt_runtime_us: Option<i64>,
    pub sched_rt_period_us: Option<i64>,
    /// The bounds on a SCHED_DEADLINE period (/proc/sys/kernel/sched_deadline_period_
    /// {max,min}_us, Linux 5.5+); None where the kernel has no such file.
    pub sched_deadline_period_max_us: Option<u64>,
    pub sched_deadline_period_min_us: Option<u64>,
    pub kernel_cmdline: Option<String>,
    /// Counts of each kind of status over /sys/devices/system/cpu/vulnerabilities.
    pub mitigations_summary: Option<String>,
    pub vulnerabilities: Option<BTreeMap<String, String>>,
    /// The CPU's "hypervisor" flag: true inside a virtual machine.
    pub hypervisor_flag: Option<bool>,
    pub hypervisor_type: Option<String>,
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
    pub memory_total_kb: Option<u64>,
    pub load_average: Option<[f64; 3]>,
    /// This machine's noise just before the run's trials, by a short probe; none where the
    /// run was started with `--noise-probe off`, or by a schedlab before the probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<NoiseFloor>,
    pub schedlab_version: String,
    /// What the run switched (`model::settings`): an A/B side's settings, or the settings
    /// a suite's trials name (an axis's values joined by " | "); none where nothing was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<BTreeMap<String, String>>,
    /// Set by `import` on a run whose figures were published, not measured here; never
    /// captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<bool>,
}

/// How noisy the machine was just before a run, measured by `exec::noise::probe` in a few
/// seconds: steal per CPU, an idle SCHED_OTHER thread's wakeup latency on the CPUs the
/// trials use, a 2-member ring's cost per hop, and the share of a CPU a busy loop gets. Each timed figure is kept per repeat, so
/// that its spread (lowest to highest) says how far it moves by itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct NoiseFloor {
    /// The probe's length (s).
    pub probe_s: f64,
    /// Each CPU's steal over the probe, ms per s ("0": 1.2), known to ± `steal_resolution`.
    pub steal_ms_per_s: BTreeMap<String, f64>,
    pub steal_resolution_ms_per_s: f64,
    /// The CPUs the wakeup latency was measured on, one thread each (the trials' CPUs).
    pub wakeup_cpus: String,
    /// Each repeat's p99 wakeup latency of the worst of those CPUs (µs), at 1 kHz.
    pub wakeup_p99_us: Vec<f64>,
    /// The CPU both ring members share.
    pub ring_cpu: Option<usize>,
    /// Each repeat's cost of one hop of the 2-member ring (ns).
    pub ring_ns_per_hop: Vec<f64>,
    /// Each repeat's share (%) of its CPU that a SCHED_OTHER busy loop got, on the worst of
    /// the wakeup CPUs: under 100 where something else wants the CPU too.
    pub cpu_share_pct: Vec<f64>,
}

/// A figure's repeats: the median and the spread (lowest, highest); `None` when empty.
pub fn median_and_spread(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    Some((median, v[0], v[n - 1]))
}

impl NoiseFloor {
    /// The steal rate of the busiest CPU (ms per s).
    pub fn worst_steal(&self) -> Option<(String, f64)> {
        self.steal_ms_per_s.iter().max_by(|a, b| a.1.total_cmp(b.1)).map(|(c, v)| (c.clone(), *v))
    }

    /// "steal ≤ 4.0 ms/s on every CPU; idle wakeup p99 62 µs (48-80) on CPUs 0-1; 2-member
    /// ring 3.9 µs/hop (3.8-4.1) on CPU 0": the run header's line.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match self.worst_steal() {
            Some((cpu, rate)) if rate > 0.0 => {
                let per_cpu: Vec<String> = self.steal_ms_per_s.iter().map(|(c, v)| format!("CPU {c} {v:.1}")).collect();
                parts.push(format!(
                    "steal {} ms/s (± {:.1}; worst CPU {cpu})",
                    per_cpu.join(", "),
                    self.steal_resolution_ms_per_s
                ));
            }
            Some(_) => parts.push(format!("no steal (< {:.1} ms/s on every CPU)", self.steal_resolution_ms_per_s)),
            None => parts.push("steal unknown".into()),
        }
        if let Some((m, lo, hi)) = median_and_spread(&self.wakeup_p99_us) {
            parts.push(format!("idle wakeup p99 {m:.0} µs ({lo:.0}-{hi:.0}) on CPU {}", self.wakeup_cpus));
        }
        if let Some((m, lo, hi)) = median_and_spread(&self.ring_ns_per_hop) {
            let cpu = self.ring_cpu.map_or(String::new(), |c| format!(" on CPU {c}"));
            parts.push(format!("2-member ring {:.2} µs/hop ({:.2}-{:.2}){cpu}", m / 1000.0, lo / 1000.0, hi / 1000.0));
        }
        if let Some((m, lo, hi)) = median_and_spread(&self.cpu_share_pct) {
            parts.push(format!("a busy loop gets {m:.0} % ({lo:.0}-{hi:.0}) of the worst CPU"));
        }
        parts.join("; ")
    }

    /// Where this floor and `other` differ by more than their own spread: a timed figure
    /// whose repeats' ranges are further apart than either range is wide (and than 5 % of
    /// its median), or a CPU's steal rates further apart than both probes' resolutions. Each as a sentence naming both values; empty when alike.
    pub fn differences(&self, other: &NoiseFloor, a: &str, b: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut timed = |what: &str, unit: &str, scale: f64, x: &[f64], y: &[f64]| {
            let (Some((mx, lx, hx)), Some((my, ly, hy))) = (median_and_spread(x), median_and_spread(y)) else {
                return;
            };
            // Apart by more than their own spread: the gap between the two ranges is wider
            // than either range (merely disjoint ranges of 3 repeats happen by chance),
            // and than 5 % of the larger median (3 repeats can agree closer than the
            // figure moves from one minute to the next).
            let gap = (ly - hx).max(lx - hy);
            let spread = (hx - lx).max(hy - ly).max(0.05 * mx.max(my));
            if gap > spread {
                let fmt =
                    |m: f64, l: f64, h: f64| format!("{:.2} {unit} ({:.2}-{:.2})", m / scale, l / scale, h / scale);
                out.push(format!(
                    "{what}: {} in {a}, {} in {b} ({:.2}×): further apart than either's repeats spread",
                    fmt(mx, lx, hx),
                    fmt(my, ly, hy),
                    my / mx
                ));
            }
        };
        timed("idle wakeup p99", "µs", 1.0, &self.wakeup_p99_us, &other.wakeup_p99_us);
        timed("2-member ring", "µs/hop", 1000.0, &self.ring_ns_per_hop, &other.ring_ns_per_hop);
        timed("a busy loop's share of the worst CPU", "%", 1.0, &self.cpu_share_pct, &other.cpu_share_pct);
        let resolution = self.steal_resolution_ms_per_s + other.steal_resolution_ms_per_s;
        for (cpu, x) in &self.steal_ms_per_s {
            if let Some(y) = other.steal_ms_per_s.get(cpu) {
                if (x - y).abs() > resolution {
                    out.push(format!(
                        "steal on CPU {cpu}: {x:.1} ms/s in {a}, {y:.1} ms/s in {b} (each known to ± its probe's tick)"
                    ));
                }
            }
        }
        out
    }
}

/// A run's fingerprint as stored: typed for reading, and kept as stored (its fields, their
/// order, keys this schedlab does not know), so it is shown and written back unchanged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredMachine {
    typed: Machine,
    stored: serde_json::Value,
}

impl StoredMachine {
    /// The stored JSON; fields of a shape this schedlab does not read are unknown.
    pub fn from_json(stored: serde_json::Value) -> StoredMachine {
        let typed = serde_json::from_value(stored.clone()).unwrap_or_default();
        StoredMachine { typed, stored }
    }

    /// The typed fields (None where the record lacks one).
    pub fn fields(&self) -> &Machine {
        &self.typed
    }

    /// The record as stored, for display and export field by field.
    pub fn as_json(&self) -> &serde_json::Value {
        &self.stored
    }

    pub fn hostname(&self) -> Option<&str> {
        self.typed.hostname.as_deref()
    }

    pub fn kernel_release(&self) -> Option<&str> {
        self.typed.kernel_release.as_deref()
    }

    /// Whether the run's figures were imported rather than measured by schedlab.
    pub fn is_imported(&self) -> bool {
        self.typed.imported == Some(true)
    }

    /// Where this record's noise floor and `other`'s differ by more than their own spread
    /// (`NoiseFloor::differences`, each named by its label); none when either has no floor.
    pub fn floor_differences(&self, other: &StoredMachine, this: &str, that: &str) -> Vec<String> {
        match (&self.typed.noise_floor, &other.typed.noise_floor) {
            (Some(a), Some(b)) => a.differences(b, this, that),
            _ => Vec::new(),
        }
    }
}

impl From<&Machine> for StoredMachine {
    fn from(machine: &Machine) -> StoredMachine {
        // Plain strings, numbers and maps with string keys: encoding cannot fail.
        StoredMachine { typed: machine.clone(), stored: serde_json::to_value(machine).unwrap_or_default() }
    }
}

impl Serialize for StoredMachine {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.stored.serialize(serializer)
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn cpuinfo_field(cpuinfo: &str, names: &[&str]) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        names.contains(&key.trim()).then(|| value.trim().to_string()).filter(|v| !v.is_empty())
    })
}

/// The preemption model as the kernel's version string ("#1 SMP PREEMPT_DYNAMIC ...") names it.
fn preemption_model(version: &str) -> String {
    let words: Vec<&str> = version.split_whitespace().collect();
    for model in ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"] {
        if words.contains(&model) {
            return model.to_string();
        }
    }
    "none".to_string()
}

/// "none voluntary (full) lazy" -> "full".
fn active_choice(text: &str) -> Option<String> {
    text.split_whitespace().find_map(|w| w.strip_prefix('(')?.strip_suffix(')').map(str::to_string))
}

/// Group a per-CPU value: {"performance": "0-3", "powersave": "4-7"}.
fn per_cpu(online: &[usize], file: &str) -> Option<BTreeMap<String, String>> {
    let mut by_value: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &cpu in online {
        let value = read(format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/{file}"))?;
        by_value.entry(value).or_default().push(cpu);
    }
    (!by_value.is_empty())
        .then(|| by_value.into_iter().map(|(v, cpus)| (v, crate::model::parse::format_cpu_list(&cpus))).collect())
}

/// "0-3,6" -> [0, 1, 2, 3, 6]; an unreadable list is empty.
fn parse_cpu_list(text: &str) -> Vec<usize> {
    crate::model::parse::parse_cpu_list(text).map(|c| c.0).unwrap_or_default()
}

fn vulnerabilities() -> Option<BTreeMap<String, String>> {
    let entries = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities").ok()?;
    let mut map = BTreeMap::new();
    for entry in entries.flatten() {
        if let Some(value) = read(entry.path()) {
            map.insert(entry.file_name().to_string_lossy().into_owned(), value);
        }
    }
    (!map.is_empty()).then_some(map)
}

/// "3 mitigated, 1 vulnerable, 14 not affected".
fn mitigations_summary(map: &BTreeMap<String, String>) -> String {
    let (mut mitigated, mut vulnerable, mut unaffected, mut other) = (0, 0, 0, 0);
    for status in map.values() {
        if status.starts_with("Mitigation") {
            mitigated += 1;
        } else if status.starts_with("Vulnerable") {
            vulnerable += 1;
        } else if status.starts_with("Not affected") {
            unaffected += 1;
        } else {
            other += 1;
        }
    }
    let mut parts = vec![format!("{mitigated} mitigated"), format!("{vulnerable} vulnerable")];
    parts.push(format!("{unaffected} not affected"));
    if other > 0 {
        parts.push(format!("{other} other"));
    }
    parts.join(", ")
}

fn uname() -> Option<libc::utsname> {
    // SAFETY: zeroed utsname is valid; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid, writable struct.
    (unsafe { libc::uname(&mut u) } == 0).then_some(u)
}

fn field(chars: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    (!text.is_empty()).then_some(text)
}

impl Machine {
    /// Read everything now. Never fails: what cannot be read stays unknown.
    pub fn capture() -> Machine {
        let u = uname();
        let kernel_version = u.as_ref().and_then(|u| field(&u.version));
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let online_text = read("/sys/devices/system/cpu/online");
        let online = online_text.as_deref().map(parse_cpu_list).unwrap_or_default();
        let throttling = RtThrottling::read();
        let deadline_limits = sched::DeadlinePeriodLimits::read();
        let vulnerabilities = vulnerabilities();
        let flags = cpuinfo_field(&cpuinfo, &["flags", "Features"]);
        let load_average = read("/proc/loadavg").and_then(|text| {
            let v: Vec<f64> = text.split_whitespace().take(3).filter_map(|x| x.parse().ok()).collect();
            (v.len() == 3).then(|| [v[0], v[1], v[2]])
        });
        let memory_total_kb = read("/proc/meminfo").and_then(|text| {
            text.lines().find_map(|l| l.strip_prefix("MemTotal:")?.trim().trim_end_matches("kB").trim().parse().ok())
        });
        Machine {
            hostname: u.as_ref().and_then(|u| field(&u.nodename)),
            kernel_release: u.as_ref().and_then(|u| field(&u.release)),
            preemption_model: kernel_version.as_deref().map(preemption_model),
            kernel_version,
            architecture: u.as_ref().and_then(|u| field(&u.machine)),
            preempt_dynamic_mode: read("/sys/kernel/debug/sched/preempt").and_then(|t| active_choice(&t)),
            sys_kernel_realtime: read("/sys/kernel/realtime"),
            cpu_model: cpuinfo_field(&cpuinfo, &["model name", "Model", "Hardware", "cpu model"]),
            cpus_online: online_text,
            cpus_allowed: sched::allowed_cpus().ok().map(|c| crate::model::parse::format_cpu_list(&c)),
            // An empty file means "none": that is known, not unknown.
            cpus_isolated: std::fs::read_to_string("/sys/devices/system/cpu/isolated").ok().map(|t| t.trim().into()),
            cpus_nohz_full: std::fs::read_to_string("/sys/devices/system/cpu/nohz_full").ok().map(|t| t.trim().into()),
            smt: read("/sys/devices/system/cpu/smt/control"),
            cpufreq_governor: per_cpu(&online, "scaling_governor"),
            cpufreq_driver: per_cpu(&online, "scaling_driver"),
            cpuidle_driver: read("/sys/devices/system/cpu/cpuidle/current_driver"),
            cpuidle_governor: read("/sys/devices/system/cpu/cpuidle/current_governor_ro")
                .or_else(|| read("/sys/devices/system/cpu/cpuidle/current_governor")),
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            sched_rt_runtime_us: throttling.map(|t| t.runtime_us),
            sched_rt_period_us: throttling.map(|t| t.period_us),
            sched_deadline_period_max_us: deadline_limits.max_us,
            sched_deadline_period_min_us: deadline_limits.min_us,
            kernel_cmdline: read("/proc/cmdline"),
            mitigations_summary: vulnerabilities.as_ref().map(mitigations_summary),
            vulnerabilities,
            hypervisor_flag: flags.map(|f| f.split_whitespace().any(|w| w == "hypervisor")),
            hypervisor_type: read("/sys/hypervisor/type"),
            dmi_vendor: read("/sys/class/dmi/id/sys_vendor"),
            dmi_product: read("/sys/class/dmi/id/product_name"),
            memory_total_kb,
            load_average,
            noise_floor: None,
            schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
            settings: None,
            imported: None,
        }
    }

    pub fn is_virtual(&self) -> Option<bool> {
        if self.hypervisor_flag == Some(true) || self.hypervisor_type.is_some() {
            return Some(true);
        }
        self.hypervisor_flag
    }

    /// Conditions that make results noisy, one sentence each (empty when none is seen).
    pub fn noise_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(governors) = &self.cpufreq_governor {
            let others: Vec<String> = governors
                .iter()
                .filter(|(g, _)| *g != "performance")
                .map(|(g, cpus)| format!("{g} on {cpus}"))
                .collect();
            if !others.is_empty() {
                out.push(format!(
                    "the CPU frequency governor is not 'performance' ({}): clock speed changes add noise",
                    others.join(", ")
                ));
            }
        }
        if self.is_virtual() == Some(true) {
            out.push(
                "this is a virtual machine: the hypervisor's scheduling adds noise and cross-CPU wakeups are slow"
                    .into(),
            );
        }
        let cpus = self.cpus_online.as_deref().map(|t| parse_cpu_list(t).len()).unwrap_or(0).max(1);
        if let Some([one_minute, ..]) = self.load_average {
            if one_minute > 0.5 * cpus as f64 {
                out.push(format!(
                    "the 1-minute load average is {one_minute:.2} on {cpus} CPUs: other work competes with the trials"
                ));
            }
        }
        if let (Some(runtime), Some(period)) = (self.sched_rt_runtime_us, self.sched_rt_period_us) {
            if !(RtThrottling { runtime_us: runtime, period_us: period }).is_on() {
                out.push(format!(
                    "RT throttling is off (sched_rt_runtime_us = {runtime}): a runaway real-time trial can stall the machine"
                ));
            }
        }
        out
    }
}

/// One stored fingerprint field as text: null is "unknown", an empty string "(none)", a
/// per-CPU map "performance: 0-3; powersave: 4-7".
pub fn field_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "unknown".to_string(),
        serde_json::Value::String(s) if s.is_empty() => "(none)".to_string(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(map) => {
            map.iter().map(|(k, v)| format!("{k}: {}", field_text(v))).collect::<Vec<_>>().join("; ")
        }
        other => other.to_string(),
    }
}

/// "key: value" lines for a fingerprint stored as JSON (it may come from another
/// machine or a newer schedlab, so it is shown field by field as stored).
pub fn describe(machine: &serde_json::Value) -> String {
    let Some(fields) = machine.as_object() else { return "machine: unknown\n".into() };
    let width = fields.keys().map(String::len).max().unwrap_or(0);
    fields.iter().map(|(key, value)| format!("{key:<width$}  {}\n", field_display(key, value))).collect()
}

/// A stored field as a reader sees it: the noise floor as its summary, not its repeats'
/// raw numbers; any other field as `field_text` writes it.
pub fn field_display(key: &str, value: &serde_json::Value) -> String {
    let floor = (key == "noise_floor").then(|| serde_json::from_value::<NoiseFloor>(value.clone()).ok()).flatten();
    floor.map_or_else(|| field_text(value), |f| f.summary())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor(wakeup: &[f64], ring: &[f64], steal: &[(&str, f64)]) -> NoiseFloor {
        NoiseFloor {
            probe_s: 2.0,
            steal_ms_per_s: steal.iter().map(|(c, v)| (c.to_string(), *v)).collect(),
            steal_resolution_ms_per_s: 5.0,
            wakeup_cpus: "0-1".into(),
            wakeup_p99_us: wakeup.to_vec(),
            ring_cpu: Some(0),
            ring_ns_per_hop: ring.to_vec(),
            cpu_share_pct: Vec::new(),
        }
    }

    #[test]
    fn floors_differ_only_by_more_than_their_own_spread() {
        let quiet = floor(&[60.0, 70.0, 80.0], &[3200.0, 3250.0, 3300.0], &[("0", 0.0), ("1", 5.0)]);
        // Disjoint, but closer than either spread: alike.
        let near = floor(&[85.0, 88.0, 95.0], &[3320.0, 3350.0, 3400.0], &[("0", 5.0), ("1", 5.0)]);
        assert_eq!(quiet.differences(&near, "run 1", "run 2"), Vec::<String>::new());
        // Beside a hog: far apart on both timed figures, and a CPU's steal beyond both ticks.
        let loud = floor(&[3600.0, 3700.0, 3690.0], &[370_000.0, 405_000.0, 414_000.0], &[("0", 0.0), ("1", 25.0)]);
        let d = quiet.differences(&loud, "run 1", "run 2");
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].starts_with("idle wakeup p99: 70.00 µs (60.00-80.00) in run 1"), "{d:?}");
        assert!(d[1].contains("2-member ring") && d[2].starts_with("steal on CPU 1"), "{d:?}");
        // Either way round.
        assert_eq!(loud.differences(&quiet, "a", "b").len(), 3);
        // Ranges apart by more than their width but within 5 % of the median: alike.
        let tight = floor(&[70.0, 70.1, 70.2], &[3100.0, 3101.0, 3102.0], &[]);
        let close = floor(&[71.0, 71.1, 71.2], &[3110.0, 3111.0, 3112.0], &[]);
        assert_eq!(tight.differences(&close, "a", "b"), Vec::<String>::new());
        // A CPU shared with a hog: half of it for a busy loop.
        let (mut alone, mut shared) = (tight.clone(), tight.clone());
        alone.cpu_share_pct = vec![99.4, 99.8, 99.9];
        shared.cpu_share_pct = vec![49.3, 49.3, 51.3];
        let d = alone.differences(&shared, "run 1", "run 2");
        assert!(d.len() == 1 && d[0].starts_with("a busy loop's share of the worst CPU: 99.80 %"), "{d:?}");
        // A floor without a figure says nothing of it.
        assert_eq!(floor(&[], &[], &[]).differences(&loud, "a", "b"), Vec::<String>::new());
    }

    #[test]
    fn a_floor_summary_names_each_figure_with_its_spread() {
        let f = floor(&[60.0, 70.0, 80.0], &[3200.0, 3250.0, 3300.0], &[("0", 0.0), ("1", 5.0)]);
        assert_eq!(
            f.summary(),
            "steal CPU 0 0.0, CPU 1 5.0 ms/s (± 5.0; worst CPU 1); idle wakeup p99 70 µs (60-80) on CPU 0-1; \
             2-member ring 3.25 µs/hop (3.20-3.30) on CPU 0"
        );
        assert!(floor(&[], &[], &[("0", 0.0)]).summary().starts_with("no steal (< 5.0 ms/s"));
        assert_eq!(median_and_spread(&[3.0, 1.0, 2.0, 10.0]), Some((2.5, 1.0, 10.0)));
    }

    #[test]
    fn preemption_from_version_string() {
        assert_eq!(preemption_model("#1 SMP PREEMPT_DYNAMIC Debian 6.1"), "PREEMPT_DYNAMIC");
        assert_eq!(preemption_model("#1 SMP PREEMPT_RT Debian"), "PREEMPT_RT");
        assert_eq!(preemption_model("#1 SMP PREEMPT Mon"), "PREEMPT");
        assert_eq!(preemption_model("#1 SMP Mon Jan"), "none");
        assert_eq!(active_choice("none voluntary (full) lazy").as_deref(), Some("full"));
        assert_eq!(active_choice("none voluntary full"), None);
    }

    #[test]
    fn mitigation_counts() {
        let map: BTreeMap<String, String> = [
            ("a", "Mitigation: PTI"),
            ("b", "Not affected"),
            ("c", "Vulnerable: SMT"),
            ("d", "Mitigation: x"),
            ("e", "Unknown: y"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(mitigations_summary(&map), "2 mitigated, 1 vulnerable, 1 not affected, 1 other");
    }

    #[test]
    fn stored_records_read_typed_and_stay_as_stored() {
        let imported = serde_json::json!({"hostname": "Sun-4/280", "imported": true, "source": "NCAR 1992"});
        let m = StoredMachine::from_json(imported.clone());
        assert_eq!((m.hostname(), m.kernel_release(), m.is_imported()), (Some("Sun-4/280"), None, true));
        assert_eq!(serde_json::to_value(&m).unwrap(), imported, "no field added, none lost, same order");
        let captured = Machine::capture();
        let stored = StoredMachine::from(&captured);
        assert!(!stored.is_imported() && stored.as_json().get("imported").is_none());
        let back = StoredMachine::from_json(serde_json::to_value(&stored).unwrap());
        assert_eq!(back.fields(), &captured);
        let odd = StoredMachine::from_json(serde_json::json!({"hostname": 7}));
        assert_eq!(odd.hostname(), None, "a field of another shape is unknown");
    }

    #[test]
    fn capture_reads_this_machine() {
        let m = Machine::capture();
        assert!(m.kernel_release.is_some());
        assert!(m.cpus_allowed.is_some());
        assert_eq!(parse_cpu_list("0-2,5"), vec![0, 1, 2, 5]);
    }
}
