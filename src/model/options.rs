//! What a user may ask of each family, as one definition that serves twice: clap reads
//! it as the command's flags (`schedlab ring --procs 2,4`), serde reads it as a suite
//! experiment's keys (`procs = 4`). Every field is optional so that defaults are applied
//! in one place, `to_specs`, which also checks the combinations. No system calls here:
//! what needs the machine (CPUs, privileges, limits) is the preflight's job.
//!
//! Flags that families share are defined once, as groups (`LoadOptions`, `DeadlineOptions`,
//! `ObserveOptions`) that clap flattens into each family and `read_family` reads for serde,
//! and their checks are written once beside them.

use crate::error::{Error, Result};
use crate::model::load::{parse_load, LoadArg, LoadKind, LoadSpec};
use crate::model::parse::from_text::text_value;
use crate::model::parse::*;
use crate::model::{DeadlineParams, Policy};
use clap::Args;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value as Json};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

pub(crate) fn max_trial_ns() -> u64 {
    MAX_TRIAL.as_nanos() as u64
}

text_value!(de_ring_procs, ProcList, parse_procs);
text_value!(de_workload_procs, ProcList, parse_workload_procs);
text_value!(de_laps, u64, parse_laps);
text_value!(de_duration, Duration, parse_duration);
text_value!(de_trial_duration, Duration, parse_trial_duration);
text_value!(de_interval, Duration, parse_interval);
text_value!(de_loops, u64, parse_loops);
text_value!(de_cpus, CpuList, parse_cpu_list);
text_value!(de_policies, PolicyList, parse_policies);
text_value!(de_iterations, u64, parse_iterations);
text_value!(de_size, u64, parse_size);
text_value!(de_frequency, f64, parse_frequency);
text_value!(de_break_us, f64, parse_break_us);
text_value!(de_i32, i32, parse_whole::<i32>);
text_value!(de_u64, u64, parse_whole::<u64>);
text_value!(de_usize, usize, parse_whole::<usize>);
text_value!(de_threads, u32, parse_threads);
text_value!(de_load, LoadArg, parse_load);
text_value!(de_reservation, u64, parse_reservation_ns);

/// Whether a reading is taken (`--schedstat on|off`, suite key `schedstat = "off"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum OnOff {
    On,
    Off,
}

/// On unless switched off.
pub(crate) fn reads(switch: Option<OnOff>) -> bool {
    switch != Some(OnOff::Off)
}

/// The background load beside a trial (`--load` and its three companions), worded alike in
/// ring, workload and latency (a command's are worded for a program, without `--load-dir`).
/// Like the other groups it is read within a family, which refuses keys nobody knows.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "kebab-case", default)]
pub struct LoadOptions {
    /// Background load during each trial: none, cpu, io, pipe or mixed, optionally :N instances (e.g. cpu:2) [default: none; N: one per allowed CPU]
    #[arg(long, value_name = "KIND[:N]", value_parser = parse_load)]
    #[serde(deserialize_with = "de_load")]
    pub load: Option<LoadArg>,

    /// CPUs the load may run on (e.g. 1 or 0-3) [default: every allowed CPU]
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    #[serde(deserialize_with = "de_cpus")]
    pub load_cpus: Option<CpuList>,

    /// Nice value (-20..19) of the load processes, which are always SCHED_OTHER [default: schedlab's own]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de_i32")]
    pub load_nice: Option<i32>,

    /// Where io load writes its O_SYNC files (unlinked at once, so nothing is left) [default: the temp directory]
    #[arg(long, value_name = "DIR")]
    pub load_dir: Option<PathBuf>,
}

impl LoadOptions {
    /// The load these flags ask for: see `load_spec`.
    pub fn to_spec(&self) -> Result<LoadSpec> {
        load_spec(self.load, &self.load_cpus, self.load_nice, &self.load_dir)
    }
}

/// A SCHED_DEADLINE reservation (`--runtime`, `--deadline`, `--period`), for the families
/// whose tasks take one (latency words `--period`'s help itself: there the period is its
/// sampling interval).
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "kebab-case", default)]
pub struct DeadlineOptions {
    /// SCHED_DEADLINE: CPU time each job may use per period (e.g. 100us); with --policy deadline
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub runtime: Option<u64>,

    /// SCHED_DEADLINE: time from a period's start by which its job must be done [default: --period]
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub deadline: Option<u64>,

    /// SCHED_DEADLINE: time between the starts of two jobs (e.g. 1ms); with --policy deadline
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub period: Option<u64>,
}

impl DeadlineOptions {
    /// The reservation for these policies: see `resolve_deadline`.
    pub fn resolve(&self, policies: &[Policy]) -> Result<Option<DeadlineParams>> {
        resolve_deadline(policies, self.runtime, self.deadline, self.period)
    }
}

/// The policies a family compares and how their tasks are set (`--policy`, `--prio`,
/// `--nice`), for the families that take a list of policies (workload, command, taskset,
/// server). Each family words their help for what it runs (`mut_arg` on the family), so
/// the fields carry no doc comment of their own.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "kebab-case", default)]
pub struct PolicyOptions {
    #[arg(long, value_name = "LIST", value_parser = parse_policies)]
    #[serde(deserialize_with = "de_policies")]
    pub policy: Option<PolicyList>,
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "de_i32")]
    pub prio: Option<i32>,
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de_i32")]
    pub nice: Option<i32>,
}

impl PolicyOptions {
    /// The policies asked for; OTHER when none is.
    pub fn policies(&self) -> Vec<Policy> {
        self.policy.as_ref().map_or(vec![Policy::Other], |p| p.0.clone())
    }

    /// The nice value of a task under `policy`: only the policies that take one get it.
    pub fn nice_for(&self, policy: Policy) -> Option<i32> {
        self.nice.filter(|_| policy.takes_nice())
    }
}

/// What is read and recorded beside a trial's own figures (`--schedstat`, `--trace`). Each
/// family words their help for what it measures, with `schedstat_help` and its own trace
/// text (`mut_arg` on the family), so the fields carry no doc comment of their own.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "kebab-case", default)]
pub struct ObserveOptions {
    #[arg(long, value_enum, value_name = "on|off")]
    pub schedstat: Option<OnOff>,
    #[arg(long, value_enum, value_name = "on|off")]
    pub trace: Option<OnOff>,
}

impl ObserveOptions {
    /// The per-task accounting is read unless switched off.
    pub fn schedstat(&self) -> bool {
        reads(self.schedstat)
    }

    /// Tracing costs, so it is off unless switched on.
    pub fn trace(&self) -> bool {
        self.trace == Some(OnOff::On)
    }
}

/// The groups ring, workload and latency options share, flattened last into each: the
/// background load, the SCHED_DEADLINE reservation and what is read beside the trial (what
/// `BesideSpec::from_options` makes their specs' shared group of). serde's `flatten` is
/// safe here, unlike on a family: `read_family` has already refused every key no part of
/// the family knows, and these groups do not deny unknown keys, so each reads its own.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct BesideOptions {
    #[command(flatten)]
    #[serde(flatten)]
    pub background: LoadOptions,
    #[command(flatten)]
    #[serde(flatten)]
    pub reservation: DeadlineOptions,
    #[command(flatten)]
    #[serde(flatten)]
    pub observe: ObserveOptions,
}

/// `--schedstat`'s help, for the family whose tasks are `whose` ("member's").
pub(crate) fn schedstat_help(whose: &str) -> String {
    format!(
        "Read each {whose} run-queue wait and migrations from /proc at the edges of its measured window; off only to \
         measure what the reading costs (the figures are then stored as unknown) [default: on]"
    )
}

/// Reads a family's suite keys when some of its flags live in the shared groups above.
/// serde's `flatten` cannot say which keys are known (with `deny_unknown_fields` it refuses
/// `lapz` without naming `laps`), so instead every part (each group, and the family's own
/// derived reader, `remote = "Self"`) reads the same object and passes over the keys that
/// are not its own, and this refuses a key no part has with serde's own message, naming
/// every key in flag order (the family's clap arguments, whose ids are its field names).
/// Keys are first read one at a time, in the order given, so that the first bad key is the
/// one reported, as when one derived reader read them all.
pub(crate) fn read_family<'de, F: Args, D: Deserializer<'de>>(
    d: D,
    known: &'static OnceLock<&'static [&'static str]>,
    read: impl Fn(&Json) -> serde_json::Result<F>,
) -> std::result::Result<F, D::Error> {
    let known: &'static [&'static str] = known.get_or_init(|| {
        let flags = F::augment_args(clap::Command::new("keys"));
        // Built once per family; serde's message wants a list that lives for ever.
        let keys = flags.get_arguments().map(|a| &*Box::leak(a.get_id().as_str().replace('_', "-").into_boxed_str()));
        Box::leak(keys.collect::<Vec<&str>>().into_boxed_slice())
    });
    let keys = Map::<String, Json>::deserialize(d)?;
    for (key, value) in &keys {
        if !known.contains(&key.as_str()) {
            return Err(serde::de::Error::unknown_field(key, known));
        }
        let one = Json::Object(Map::from_iter([(key.clone(), value.clone())]));
        read(&one).map_err(serde::de::Error::custom)?;
    }
    read(&Json::Object(keys)).map_err(serde::de::Error::custom)
}

/// The `Deserialize` of a family with shared groups: each group field read by its own
/// type, the rest by the family's derived reader (see `read_family`).
macro_rules! read_with_groups {
    ($family:ident { $($group:ident),+ }) => {
        impl<'de> Deserialize<'de> for $family {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                static KEYS: OnceLock<&'static [&'static str]> = OnceLock::new();
                read_family(d, &KEYS, |keys| {
                    Ok($family { $($group: Deserialize::deserialize(keys)?,)+ ..$family::deserialize(keys)? })
                })
            }
        }
    };
}
pub(crate) use read_with_groups;
/// The CPUs a CPU-list flag (`flag`: "--cpus") names, refused when it names none.
pub(crate) fn chosen_cpus(cpus: &Option<CpuList>, flag: &str) -> Result<Option<Vec<usize>>> {
    match cpus {
        Some(list) if list.0.is_empty() => Err(Error::usage(format!("{flag} names no CPU"))),
        other => Ok(other.as_ref().map(|c| c.0.clone())),
    }
}

/// `--prio` sets a static priority, which only fifo and rr have.
pub(crate) fn check_prio(prio: Option<i32>, policies: &[Policy]) -> Result<()> {
    if prio.is_some() && !policies.iter().any(|p| p.is_realtime()) {
        return Err(Error::usage("--prio applies only to fifo and rr, and no real-time policy was chosen"));
    }
    Ok(())
}

/// `--nice` within the kernel's range, and for a policy that takes one.
pub(crate) fn check_nice(nice: Option<i32>, policies: &[Policy]) -> Result<()> {
    let Some(nice) = nice else { return Ok(()) };
    if !(-20..=19).contains(&nice) {
        return Err(Error::usage(format!("--nice {nice} is out of range: use -20 to 19")));
    }
    if !policies.iter().any(|p| p.takes_nice()) {
        return Err(Error::usage("--nice applies only to other and batch, and neither was chosen"));
    }
    Ok(())
}

/// The load a trial runs beside it, from `--load`, `--load-cpus`, `--load-nice` and
/// `--load-dir`. Without a load the other three are ignored, so a suite may vary
/// `load = ["none", "cpu"]` with `load_cpus` set once for the experiment.
pub(crate) fn load_spec(
    load: Option<LoadArg>,
    cpus: &Option<CpuList>,
    nice: Option<i32>,
    dir: &Option<PathBuf>,
) -> Result<LoadSpec> {
    let Some(arg) = load.filter(|a| a.kind != LoadKind::None) else { return Ok(LoadSpec::default()) };
    if let Some(nice) = nice.filter(|n| !(-20..=19).contains(n)) {
        return Err(Error::usage(format!("--load-nice {nice} is out of range: use -20 to 19")));
    }
    let cpus = chosen_cpus(cpus, "--load-cpus")?;
    if dir.is_some() && !arg.kind.writes_files() {
        return Err(Error::usage("--load-dir applies only to the io and mixed loads, which write files"));
    }
    Ok(LoadSpec { kind: arg.kind, instances: arg.instances, cpus, nice, dir: dir.clone() })
}

/// Why deadline tasks are never pinned: the kernel's rule, and what schedlab does instead.
pub const DEADLINE_PLACEMENT: &str = "--policy deadline cannot be pinned: the kernel refuses SCHED_DEADLINE to a task \
     whose CPU affinity is narrower than its root domain (every online CPU unless exclusive cpusets split it), so \
     schedlab leaves deadline tasks to the scheduler. Drop --cpus/--threads/--all-cpus/--pin same|spread, or give \
     the run its own root domain with an exclusive cpuset and run schedlab inside it";

/// The reservation the deadline flags ask for: checked against each other and the kernel's
/// 1024 ns minimum, and refused when no deadline policy was chosen (or the reverse).
pub fn resolve_deadline(
    policies: &[Policy],
    runtime: Option<u64>,
    deadline: Option<u64>,
    period: Option<u64>,
) -> Result<Option<DeadlineParams>> {
    let wanted = policies.iter().any(|p| p.is_deadline());
    if !wanted {
        if runtime.is_some() || deadline.is_some() || period.is_some() {
            return Err(Error::usage(
                "--runtime, --deadline and --period apply only to --policy deadline, and it was not chosen",
            ));
        }
        return Ok(None);
    }
    let (Some(runtime_ns), Some(period_ns)) = (runtime, period) else {
        return Err(Error::usage(
            "--policy deadline needs --runtime and --period (e.g. --runtime 100us --period 1ms; --deadline defaults \
             to the period)",
        ));
    };
    let deadline_ns = deadline.unwrap_or(period_ns);
    let min = DeadlineParams::MIN_NS;
    if runtime_ns < min {
        return Err(Error::usage(format!(
            "--runtime {runtime_ns} ns is below the kernel's minimum of {min} ns for SCHED_DEADLINE"
        )));
    }
    if runtime_ns > deadline_ns {
        return Err(Error::usage(format!(
            "--runtime {} is longer than --deadline {}: the kernel needs runtime <= deadline <= period",
            crate::model::format_ns(runtime_ns),
            crate::model::format_ns(deadline_ns)
        )));
    }
    if deadline_ns > period_ns {
        return Err(Error::usage(format!(
            "--deadline {} is longer than --period {}: the kernel needs runtime <= deadline <= period",
            crate::model::format_ns(deadline_ns),
            crate::model::format_ns(period_ns)
        )));
    }
    Ok(Some(DeadlineParams { runtime_ns, deadline_ns, period_ns }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::shared::SpecSource;
    use crate::families::{latency::model::*, ring::model::*, workload::model::*};

    fn workload(text: &str) -> Result<Vec<WorkloadSpec>> {
        let options: WorkloadOptions = toml::from_str(text).map_err(|e| Error::usage(e.to_string()))?;
        options.to_specs()
    }

    #[test]
    fn ring_specs_are_ascending_with_defaults() {
        let options = RingOptions {
            procs: Some(parse_procs("8,2").unwrap()),
            policy: Some(Policy::Rr),
            ..RingOptions::default()
        };
        let specs = options.to_specs().unwrap();
        assert_eq!(specs.iter().map(|s| s.procs).collect::<Vec<_>>(), vec![2, 8]);
        assert_eq!(specs[0].length, RingLength::Laps(DEFAULT_LAPS));
        assert_eq!((specs[0].prio, specs[0].pin), (50, Pin::Same));
        assert_eq!(RingOptions::default().to_specs().unwrap().len(), 9, "the NCAR sweep");
    }

    #[test]
    fn suite_keys_go_through_the_command_line_parsers() {
        let options: RingOptions = toml::from_str("procs = 4\nlaps = \"1_000\"\nwork-kb = 8\npin = \"none\"").unwrap();
        let spec = &options.to_specs().unwrap()[0];
        assert_eq!((spec.procs, spec.length, spec.work_kb, spec.pin), (4, RingLength::Laps(1000), 8, Pin::None));
        let err = toml::from_str::<RingOptions>("procs = 1").unwrap_err().to_string();
        assert!(err.contains("at least 2"), "{err}");
        let err = toml::from_str::<RingOptions>("lapz = 1").unwrap_err().to_string();
        assert!(err.contains("unknown field") && err.contains("laps"), "{err}");
    }

    #[test]
    fn shared_groups_read_within_their_family_which_names_every_key() {
        let ring: RingOptions =
            toml::from_str("load = \"cpu\"\nperiod = \"1ms\"\ntrace = \"on\"\nwork-kb = 8").unwrap();
        assert_eq!(ring.beside.background.load.map(|l| l.kind), Some(LoadKind::Cpu));
        assert_eq!(
            (ring.beside.reservation.period, ring.beside.observe.trace(), ring.work_kb),
            (Some(1_000_000), true, Some(8))
        );
        let err = toml::from_str::<LatencyOptions>("loopz = 1").unwrap_err().to_string();
        let listed = "`break-us`, `load`, `load-cpus`, `load-nice`, `load-dir`, `runtime`, `deadline`, `period`, \
                      `schedstat`, `trace`";
        assert!(err.contains("unknown field `loopz`, expected one of `freq`") && err.contains(listed), "{err}");
        // The first bad key (in the reader's order) is the one named, whichever part reads it.
        let err = toml::from_str::<WorkloadOptions>("load-nice = \"x\"\nworkers = 1").unwrap_err().to_string();
        assert!(err.contains("not a whole number"), "{err}");
        let err = toml::from_str::<WorkloadOptions>("kind = 1\nload-nice = \"x\"").unwrap_err().to_string();
        assert!(err.contains("unknown field `kind`"), "{err}");
    }

    #[test]
    fn every_number_reads_from_text_too_and_ranges_hold_in_suites() {
        let ring: RingOptions = toml::from_str("prio = \"80\"\npolicy = \"fifo\"\nwork-kb = \"8\"").unwrap();
        assert_eq!((ring.prio, ring.work_kb), (Some(80), Some(8)));
        let workload: WorkloadOptions = toml::from_str("seed = \"42\"\nnice = -5").unwrap();
        assert_eq!((workload.seed, workload.scheduling.nice), (Some(42), Some(-5)));
        for bad in ["threads = 0", "threads = 5000", "threads = \"two\""] {
            assert!(toml::from_str::<LatencyOptions>(bad).is_err(), "{bad}");
        }
        assert_eq!(toml::from_str::<LatencyOptions>("threads = 2").unwrap().threads, Some(2));
    }

    #[test]
    fn workload_specs_cross_policies_and_counts() {
        let specs = workload("workload = \"cpu\"\nprocs = \"4,2\"\npolicy = \"other,fifo\"").unwrap();
        let cells: Vec<(Policy, usize, i32)> = specs.iter().map(|s| (s.policy, s.procs, s.prio)).collect();
        assert_eq!(
            cells,
            vec![(Policy::Other, 2, 0), (Policy::Other, 4, 0), (Policy::Fifo, 2, 99), (Policy::Fifo, 4, 99)]
        );
        assert_eq!(specs[0].params.iterations, DEFAULT_CPU_ITERATIONS);
        let mixed = workload("workload = \"mixed\"\npolicy = \"rr\"\nprio = 10").unwrap();
        assert_eq!((mixed[0].prio, mixed[0].params.iterations), (10, DEFAULT_MIXED_ITERATIONS));
    }

    #[test]
    fn workload_refuses_bad_combinations() {
        let err = |text: &str| workload(&format!("{text}\n")).unwrap_err().to_string();
        assert!(err("workload = \"io\"\nblock-size = \"4KiB\"\ntransfer-size = \"1KiB\"").contains("larger than"));
        assert!(err("workload = \"io\"\nblock-size = 1000\ntransfer-size = 2500").contains("not a multiple"));
        assert!(err("workload = \"cpu\"\nprio = 50").contains("no real-time policy"));
        assert!(err("workload = \"cpu\"\npolicy = \"fifo\"\nnice = 5").contains("neither was chosen"));
        assert!(err("workload = \"cpu\"\nnice = 30").contains("out of range"));
        assert!(err("workload = \"cpu\"\ndir = \"/tmp\"").contains("only to the io and mixed"));
        assert!(err("workload = \"cpu\"\nprocs = 0").contains("at least 1"));
        assert!(err("workload = \"gpu\"").contains("unknown variant"));
        assert!(err("procs = 2").contains("needs its kind"));
    }

    #[test]
    fn load_keys_make_a_load_spec_and_are_ignored_without_a_load() {
        let loaded: LatencyOptions = toml::from_str("load = \"io:2\"\nload-cpus = \"1\"\nload-nice = 5").unwrap();
        let spec = &loaded.to_specs().unwrap()[0];
        assert_eq!(
            spec.beside.load,
            LoadSpec { kind: LoadKind::Io, instances: Some(2), cpus: Some(vec![1]), nice: Some(5), dir: None }
        );
        let idle: RingOptions = toml::from_str("procs = 2\nload = \"none\"\nload-cpus = \"1\"").unwrap();
        assert!(idle.to_specs().unwrap()[0].beside.load.is_none());
        let err = |text: &str| toml::from_str::<WorkloadOptions>(text).map(|o| o.to_specs().map(|_| ()));
        assert!(err("workload = \"cpu\"\nload = \"gpu\"").unwrap_err().to_string().contains("unknown load kind"));
        assert!(err("workload = \"cpu\"\nload = \"cpu:0\"").unwrap_err().to_string().contains("at least 1"));
        let refused = |text: &str| err(text).unwrap().unwrap_err().to_string();
        assert!(refused("workload = \"cpu\"\nload = \"cpu\"\nload-nice = 20").contains("out of range"));
        assert!(refused("workload = \"cpu\"\nload = \"cpu\"\nload-dir = \"/tmp\"").contains("only to the io and mixed"));
    }

    #[test]
    fn deadline_reservations_reach_the_deadline_specs_alone() {
        let ms = 1_000_000;
        let ring: RingOptions =
            toml::from_str("policy = \"deadline\"\nruntime = \"100us\"\nperiod = \"1ms\"\nprocs = 2").unwrap();
        let spec = &ring.to_specs().unwrap()[0];
        let want = DeadlineParams { runtime_ns: 100_000, deadline_ns: ms, period_ns: ms };
        assert_eq!(
            (spec.beside.deadline, spec.pin, spec.prio),
            (Some(want), Pin::None, 0),
            "deadline defaults to the period"
        );
        let specs = workload(
            "workload = \"cpu\"\npolicy = \"other,deadline\"\nruntime = \"1ms\"\ndeadline = \"2ms\"\nperiod = \"3ms\"",
        )
        .unwrap();
        let got: Vec<_> = specs.iter().map(|s| (s.policy, s.beside.deadline.map(|d| d.deadline_ns))).collect();
        assert_eq!(got, vec![(Policy::Other, None), (Policy::Deadline, Some(2 * ms))]);
        let latency = LatencyOptions {
            beside: BesideOptions {
                reservation: DeadlineOptions { runtime: Some(100_000), period: Some(2 * ms), ..Default::default() },
                ..Default::default()
            },
            interval: Some(std::time::Duration::from_millis(1)),
            ..LatencyOptions::default()
        };
        let both = PolicyList(vec![Policy::Fifo, Policy::Deadline]);
        let specs = latency.to_specs_comparing(Some(&both)).unwrap();
        assert_eq!((specs[0].interval_ns, specs[0].beside.deadline), (ms, None));
        assert_eq!(specs[1].interval_ns, 2 * ms, "a deadline run samples once a period");
        let err = |r: Option<u64>, d: Option<u64>, p: Option<u64>| {
            resolve_deadline(&[Policy::Deadline], r, d, p).unwrap_err().to_string()
        };
        assert!(err(Some(2 * ms), Some(ms), Some(3 * ms)).contains("longer than --deadline"));
        assert!(err(Some(ms), Some(3 * ms), Some(2 * ms)).contains("longer than --period"));
        assert!(err(Some(1023), None, Some(ms)).contains("1024 ns"));
        assert!(err(None, None, Some(ms)).contains("needs --runtime and --period"));
        assert!(resolve_deadline(&[Policy::Fifo], None, Some(ms), None)
            .unwrap_err()
            .to_string()
            .contains("apply only"));
        assert_eq!(resolve_deadline(&[Policy::Other], None, None, None).unwrap(), None);
    }

    #[test]
    fn ring_lengths_must_be_timeable_and_end_within_a_day() {
        let err = |text: &str| toml::from_str::<RingOptions>(text).unwrap().to_specs().unwrap_err().to_string();
        let e = err("procs = 2\nduration = \"500us\"");
        assert!(
            e.contains("too short to time a ring of 2 members") && e.contains("give --duration 1ms or more"),
            "{e}"
        );
        // 10 µs a member: 1000 members need 10 ms.
        let e = err("procs = \"2,1000\"\nduration = \"5ms\"");
        assert!(e.contains("ring of 1000 members") && e.contains("--duration 10ms or more"), "{e}");
        let ok: RingOptions = toml::from_str("procs = 64\nduration = \"1ms\"").unwrap();
        assert_eq!(ok.to_specs().unwrap()[0].length, RingLength::Duration(Duration::from_millis(1)));
        let e = err("procs = 64\nlaps = 1_000_000_000_000");
        assert!(e.contains("more than 24 h even at 100 ns a hop") && e.contains("at most 13500000000 laps"), "{e}");
        let most: RingOptions = toml::from_str("procs = 64\nlaps = 13_500_000_000").unwrap();
        assert!(most.to_specs().is_ok());
        let e = err("procs = 2\nduration = \"2s\"\ntimeout = \"2s\"");
        assert!(
            e.contains("--timeout 2s is not longer than --duration 2s") && e.contains("--timeout 4s or more"),
            "{e}"
        );
    }

    #[test]
    fn latency_lengths_hold_at_least_one_period_and_at_most_a_day() {
        let err = |text: &str| toml::from_str::<LatencyOptions>(text).unwrap().to_specs().unwrap_err().to_string();
        let e = err("interval = \"5ms\"\nduration = \"1ms\"");
        assert!(e.contains("shorter than one sampling interval (5 ms)") && e.contains("--duration 5ms or more"), "{e}");
        let e = err("interval = \"1ms\"\nloops = 100_000_000_000");
        assert!(e.contains("more than the 24 h") && e.contains("at most 86400000 loops"), "{e}");
        let e = err("freq = 0.00001");
        assert!(e.contains("shorter than one sampling interval"), "a 27 h period against the default 10 s: {e}");
        let day: LatencyOptions = toml::from_str("interval = \"1ms\"\nloops = 86_400_000").unwrap();
        assert!(day.to_specs().is_ok());
        for bad in ["interval = 5", "interval = \"9us\"", "loops = 0", "duration = \"25h\"", "freq = 200000"] {
            assert!(toml::from_str::<LatencyOptions>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn workload_iterations_end_within_a_day() {
        let e = workload("workload = \"cpu\"\niterations = 100_000_000_000_000").unwrap_err().to_string();
        assert!(e.contains("more than 24 h even at 1 ns a sample") && e.contains("at most 86400000000000"), "{e}");
        let e = workload("workload = \"mixed\"\niterations = 100_000_000_000").unwrap_err().to_string();
        assert!(e.contains("each mixed child") && e.contains("at most 86400000000"), "{e}");
        assert!(workload("workload = \"cpu\"\niterations = 86_400_000_000_000").is_ok());
        // io ignores iterations; its length is bounded by the 1 GiB transfer.
        assert!(workload("workload = \"io\"\niterations = 100_000_000_000_000").is_ok());
    }

    #[test]
    fn latency_specs_one_per_policy() {
        let options = LatencyOptions { prio: Some(80), ..LatencyOptions::default() };
        let both = PolicyList(vec![Policy::Other, Policy::Fifo]);
        let specs = options.to_specs_comparing(Some(&both)).unwrap();
        assert_eq!(
            specs.iter().map(|s| (s.policy, s.prio)).collect::<Vec<_>>(),
            [(Policy::Other, 0), (Policy::Fifo, 80)]
        );
        assert!(options.to_specs().unwrap_err().to_string().contains("no real-time policy"));
        let fast = LatencyOptions { freq: Some(85.0), loops: Some(850), ..LatencyOptions::default() };
        let spec = &fast.to_specs().unwrap()[0];
        assert_eq!(
            (spec.interval_ns, spec.length, &spec.placement),
            (11_764_706, LatencyLength::Loops(850), &Placement::Unpinned)
        );
    }
}
