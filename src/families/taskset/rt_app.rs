//! rt-app's JSON task files, read into the task set's model (`--rt-app FILE`).

use super::task::{Event, Phase, TaskDecl};
use crate::error::{Error, Result};
use crate::model::parse::given::{present, ByKey, Given, Keyed};
use crate::model::Policy;
use serde::{Deserialize, Deserializer};

/// The rt-app keys of a task that are its settings, not events.
const RT_APP_SETTINGS: [&str; 8] =
    ["instance", "loop", "priority", "policy", "cpus", "dl-runtime", "dl-deadline", "phases"];

/// One value of an rt-app task or phase, read by its key's kind (rt-app numbers repeats:
/// run0, run1).
enum RtAppEntry {
    Instance(Option<u64>),
    /// A task's passes through its phases, or a phase's activations (-1: for ever).
    Loop(Given<i64>),
    /// `policy`: what its priority is written for (each trial runs under its --policy).
    Policy(Option<String>),
    /// A task's phases, in order, each an object of events and settings.
    Phases(Given<Keyed<RtAppTask>>),
    Priority(Option<i64>),
    /// The CPUs the task's threads run on.
    Cpus(Given<Vec<usize>>),
    /// Whole µs each.
    Run(Given<u64>),
    Sleep(Given<u64>),
    DlRuntime(Given<u64>),
    DlDeadline(Given<u64>),
    /// The mutex's name.
    Lock(Option<String>),
    Unlock(Option<String>),
    Yield,
    Timer(Option<RtAppTimer>),
    /// Wall-clock busy time, whole µs.
    Runtime(Given<u64>),
    /// `suspend`, `resume`, `signal`, `broad`, `barrier`: the object's name.
    Named(Option<String>),
    /// `wait` and `sync`: `{ "ref": COND, "mutex": MUTEX }`.
    WaitOn(Option<RtAppWait>),
    Unsupported,
}

/// `T` read from an object only: a derived struct would also take a list of its fields in
/// order, where rt-app's keys that are not objects mean "not given".
struct FromObject<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for FromObject<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = FromObject<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(FromObject)
            }
        }
        d.deserialize_map(Visitor(std::marker::PhantomData))
    }
}

/// An rt-app `wait` or `sync`: the condition variable and the mutex it holds.
#[derive(Deserialize)]
struct RtAppWait {
    #[serde(rename = "ref")]
    cond: Given<String>,
    mutex: Given<String>,
}

/// An rt-app timer: `{ "ref": "t", "period": 1000 }` (µs).
#[derive(Deserialize)]
struct RtAppTimer {
    #[serde(default, deserialize_with = "present")]
    period: Option<Given<u64>>,
    #[serde(default, rename = "ref")]
    name: Option<Given<String>>,
    #[serde(default)]
    mode: Option<Given<String>>,
}

impl<'de> ByKey<'de> for RtAppEntry {
    fn read<A: serde::de::MapAccess<'de>>(key: &str, map: &mut A) -> std::result::Result<Self, A::Error> {
        let ignore = |map: &mut A| map.next_value::<serde::de::IgnoredAny>().map(|_| ());
        Ok(match key.trim_end_matches(|c: char| c.is_ascii_digit()) {
            "instance" => RtAppEntry::Instance(map.next_value::<Given<u64>>()?.ok()),
            "loop" => RtAppEntry::Loop(map.next_value()?),
            "policy" => RtAppEntry::Policy(map.next_value::<Given<String>>()?.ok()),
            "phases" => RtAppEntry::Phases(map.next_value()?),
            "priority" => RtAppEntry::Priority(map.next_value::<Given<i64>>()?.ok()),
            "cpus" => RtAppEntry::Cpus(map.next_value()?),
            "run" => RtAppEntry::Run(map.next_value()?),
            "sleep" => RtAppEntry::Sleep(map.next_value()?),
            "dl-runtime" => RtAppEntry::DlRuntime(map.next_value()?),
            "dl-deadline" => RtAppEntry::DlDeadline(map.next_value()?),
            "lock" => RtAppEntry::Lock(map.next_value::<Given<String>>()?.ok()),
            "unlock" => RtAppEntry::Unlock(map.next_value::<Given<String>>()?.ok()),
            "yield" => {
                ignore(map)?;
                RtAppEntry::Yield
            }
            "runtime" => RtAppEntry::Runtime(map.next_value()?),
            "suspend" | "resume" | "signal" | "broad" | "barrier" => {
                RtAppEntry::Named(map.next_value::<Given<String>>()?.ok())
            }
            "wait" | "sync" => RtAppEntry::WaitOn(map.next_value::<Given<FromObject<RtAppWait>>>()?.ok().map(|w| w.0)),
            "timer" => {
                let timer = map.next_value::<Given<FromObject<RtAppTimer>>>()?;
                RtAppEntry::Timer(timer.ok().map(|t| t.0))
            }
            _ => {
                ignore(map)?;
                RtAppEntry::Unsupported
            }
        })
    }
}

/// An rt-app task: its keys in order (events run in the order written), each read as its
/// kind takes it; anything but an object is kept to be named in the message.
struct RtAppTask(Given<Keyed<RtAppEntry>>);

impl<'de> ByKey<'de> for RtAppTask {
    const EXPECTING: &'static str = "a JSON object";
    fn read<A: serde::de::MapAccess<'de>>(_: &str, map: &mut A) -> std::result::Result<Self, A::Error> {
        map.next_value().map(RtAppTask)
    }
}

/// rt-app's `global`: `pi_enabled`, `duration` and `lock_pages` are honoured, each only
/// when it has its type; every other key is read and named as not used.
#[derive(Deserialize)]
struct RtAppGlobal {
    #[serde(default)]
    pi_enabled: Option<Given<bool>>,
    /// Whole seconds; -1 (rt-app's default) for ever.
    #[serde(default)]
    duration: Option<Given<i64>>,
    #[serde(default)]
    lock_pages: Option<Given<bool>>,
    #[serde(default)]
    default_policy: Option<Given<String>>,
    #[serde(flatten)]
    rest: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

/// Why schedlab does not use a `global` key rt-app has, where the key is well known.
fn unused_because(key: &str) -> Option<&'static str> {
    Some(match key {
        "calibration" => "a run is the thread's own CPU time, not a calibrated loop",
        "logdir" | "log_basename" | "log_size" | "gnuplot" => "schedlab keeps its own records (--activations, --store)",
        "ftrace" => "tracing is --trace on",
        _ => return None,
    })
}

/// A policy as rt-app names it ("SCHED_FIFO").
fn policy_named(name: &str) -> Option<Policy> {
    Some(match name {
        "SCHED_OTHER" => Policy::Other,
        "SCHED_FIFO" => Policy::Fifo,
        "SCHED_RR" => Policy::Rr,
        "SCHED_BATCH" => Policy::Batch,
        "SCHED_IDLE" => Policy::Idle,
        "SCHED_DEADLINE" => Policy::Deadline,
        _ => return None,
    })
}

/// An rt-app file as schedlab runs it: its tasks, and what its `global` asks of the run.
#[derive(Debug)]
pub struct RtAppSet {
    pub tasks: Vec<TaskDecl>,
    /// `global.duration`, where it is positive: the trial's length unless --duration is given.
    pub duration: Option<std::time::Duration>,
    /// `global.lock_pages`: the trial locks its memory (mlockall).
    pub lock_pages: bool,
    /// The `global` keys read and not used, each with why where it is known.
    pub unused: Vec<String>,
}

/// The tasks of an rt-app JSON file (rt-app's own format: `tasks`, each an object whose
/// keys are its settings and its events in order, times in µs; `global` ignored but for
/// `pi_enabled`). The one `timer` event is the activation: the events after it run first
/// in each period, then those before it. Whatever schedlab does not run is refused, named.
pub fn read_rt_app(path: &std::path::Path) -> Result<RtAppSet> {
    let mut text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("cannot read {}: {}", path.display(), crate::error::describe_io(&e))))?;
    let bad = |msg: String| Error::usage(format!("{}: {msg}", path.display()));
    // rt-app's reader (json-c) takes `/* */` and `//` comments and trailing commas, and its
    // own examples use both: blank them, keeping every other byte where it was, so a parse
    // error still names the line and column of the file as written.
    json_strip_comments::strip(&mut text).map_err(|e| bad(format!("not an rt-app file: {e}")))?;
    #[derive(Deserialize)]
    struct RtAppFile {
        tasks: Keyed<RtAppTask>,
        #[serde(default)]
        global: Option<Given<FromObject<RtAppGlobal>>>,
    }
    let file: RtAppFile = serde_json::from_str(&text).map_err(|e| bad(format!("not an rt-app file: {e}")))?;
    let global = file.global.and_then(Given::ok).map(|g| g.0);
    let pi = global.as_ref().and_then(|g| g.pi_enabled.clone()).and_then(Given::ok).unwrap_or(false);
    let duration = global
        .as_ref()
        .and_then(|g| g.duration.clone())
        .and_then(Given::ok)
        .filter(|&s| s > 0)
        .map(|s| std::time::Duration::from_secs(s as u64));
    let lock_pages = global.as_ref().and_then(|g| g.lock_pages.clone()).and_then(Given::ok).unwrap_or(false);
    // rt-app's default is SCHED_OTHER.
    let default_policy = match global.as_ref().and_then(|g| g.default_policy.clone()).and_then(Given::ok) {
        Some(name) => policy_named(&name).ok_or_else(|| bad(format!("global: default_policy {name} is no policy")))?,
        None => Policy::Other,
    };
    let unused = global
        .iter()
        .flat_map(|g| g.rest.keys())
        .map(|k| match unused_because(k) {
            Some(why) => format!("{k} ({why})"),
            None => k.clone(),
        })
        .collect();
    let mut out = Vec::new();
    for (name, RtAppTask(body)) in file.tasks.0 {
        let entries = object_of(&name, "", body).map_err(bad)?;
        let mut decl = TaskDecl {
            name: name.clone(),
            count: 1,
            phases: Vec::new(),
            deadline_ns: None,
            prio: None,
            prio_policy: Some(default_policy),
            runtime_ns: None,
            cpus: None,
            passes: None,
        };
        let mut reader = PhaseReader { task: &name, pi, events: Vec::new() };
        let mut written_phases = None;
        for (key, entry) in entries {
            match entry {
                RtAppEntry::Instance(n) => decl.count = n.and_then(|n| u32::try_from(n).ok()).unwrap_or(0),
                RtAppEntry::Loop(n) => decl.passes = loop_count(&name, &key, &n).map_err(bad)?,
                RtAppEntry::Policy(name) => {
                    let policy = name.as_deref().and_then(policy_named);
                    decl.prio_policy = Some(policy.ok_or_else(|| {
                        bad(format!("task {name_}: {key} is one of SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_IDLE, SCHED_DEADLINE", name_ = decl.name))
                    })?);
                }
                RtAppEntry::Priority(p) => decl.prio = p.map(|p| p as i32),
                RtAppEntry::Cpus(Given::Is(list)) => decl.cpus = Some(list),
                RtAppEntry::Cpus(Given::Not(other)) => {
                    return Err(bad(format!("task {name}: {key} is a list of CPU numbers, not {other}")))
                }
                RtAppEntry::DlRuntime(v) => decl.runtime_ns = Some(us(&name, &key, &v).map_err(bad)?),
                RtAppEntry::DlDeadline(v) => decl.deadline_ns = Some(us(&name, &key, &v).map_err(bad)?),
                RtAppEntry::Phases(phases) => written_phases = Some(phases),
                event => reader.read(&key, event).map_err(bad)?,
            }
        }
        decl.phases = match written_phases {
            // rt-app runs the phases and ignores events written beside them.
            Some(phases) => read_phases(&name, pi, phases).map_err(bad)?,
            None => vec![reader.phase(1)],
        };
        out.push(decl);
    }
    Ok(RtAppSet { tasks: out, duration, lock_pages, unused })
}

/// A times key's value in ns: rt-app writes whole µs.
fn us(task: &str, key: &str, v: &Given<u64>) -> std::result::Result<u64, String> {
    match v {
        Given::Is(n) => Ok(n * 1000),
        Given::Not(other) => Err(format!("task {task}: {key} is a whole number of µs, not {other}")),
    }
}

/// A `loop`: a positive count, or −1 (or absent) for ever.
fn loop_count(task: &str, key: &str, n: &Given<i64>) -> std::result::Result<Option<u64>, String> {
    match n {
        Given::Is(-1) => Ok(None),
        Given::Is(n) if *n > 0 => Ok(Some(*n as u64)),
        Given::Is(n) => Err(format!("task {task}: {key} {n} runs nothing: give a count above 0, or -1 for ever")),
        Given::Not(other) => Err(format!("task {task}: {key} is a whole number, not {other}")),
    }
}

/// The entries of an rt-app object (a task or a phase), or why it is not one.
fn object_of(task: &str, phase: &str, body: Given<Keyed<RtAppEntry>>) -> std::result::Result<Vec<(String, RtAppEntry)>, String> {
    match body {
        Given::Is(Keyed(entries)) => Ok(entries),
        Given::Not(other) => Err(format!("task {task}{phase}: invalid type: {}, expected a JSON object", other.kind)),
    }
}

/// A task's `phases`, each its own loop count, timer and events; a phase's own scheduling
/// keys are refused, named (the task's apply to every phase).
fn read_phases(task: &str, pi: bool, phases: Given<Keyed<RtAppTask>>) -> std::result::Result<Vec<Phase>, String> {
    let phases = match phases {
        Given::Is(Keyed(phases)) => phases,
        Given::Not(other) => return Err(format!("task {task}: phases is an object of phases, not {other}")),
    };
    if phases.is_empty() {
        return Err(format!("task {task}: phases holds no phase"));
    }
    let mut out = Vec::new();
    for (phase_name, RtAppTask(body)) in phases {
        let what = format!("{task}, phase {phase_name}");
        let mut reader = PhaseReader { task: &what, pi, events: Vec::new() };
        let mut loops = 1;
        let mut cpus = None;
        for (key, entry) in object_of(task, &format!(", phase {phase_name}"), body)? {
            match entry {
                RtAppEntry::Cpus(Given::Is(list)) => cpus = Some(list),
                RtAppEntry::Cpus(Given::Not(other)) => {
                    return Err(format!("task {what}: {key} is a list of CPU numbers, not {other}"))
                }
                RtAppEntry::Loop(n) => loops = loop_count(&what, &key, &n)?.map_or(u32::MAX, |n| n.min(u64::from(u32::MAX)) as u32),
                RtAppEntry::Priority(_) | RtAppEntry::Policy(_) | RtAppEntry::DlRuntime(_) | RtAppEntry::DlDeadline(_) => {
                    return Err(format!(
                        "task {what}: '{key}' in a phase changes the task's scheduling as it runs, which schedlab does \
                         not: set it on the task"
                    ))
                }
                RtAppEntry::Instance(_) | RtAppEntry::Phases(_) => {
                    return Err(format!("task {what}: '{key}' belongs to the task, not to a phase"))
                }
                event => reader.read(&key, event)?,
            }
        }
        out.push(Phase { cpus, ..reader.phase(loops) });
    }
    Ok(out)
}

/// The events of one phase (or of a task without phases) as they are read, in order.
struct PhaseReader<'a> {
    /// "a", or "a, phase p1": how messages name it.
    task: &'a str,
    /// The file's `pi_enabled`: whether its mutexes inherit priority.
    pi: bool,
    /// Each event, with the key it was written under (a timer's period as its event).
    events: Vec<(String, PhaseEvent)>,
}

enum PhaseEvent {
    Event(Event),
    /// Its period and its name.
    Timer(u64, Option<String>),
}

impl PhaseReader<'_> {
    fn read(&mut self, key: &str, entry: RtAppEntry) -> std::result::Result<(), String> {
        let task = self.task;
        let kind = key.trim_end_matches(|c: char| c.is_ascii_digit());
        let mutex = |m: Option<String>| m.ok_or_else(|| format!("task {task}: {key} names a mutex"));
        let event = match entry {
            // rt-app takes a run or sleep of 0 (its template's `"sleep": 0`) as no event.
            RtAppEntry::Run(v) => Some(us(task, key, &v)?).filter(|&ns| ns > 0).map(|ns| PhaseEvent::Event(Event::Run(ns))),
            RtAppEntry::Sleep(v) => {
                Some(us(task, key, &v)?).filter(|&ns| ns > 0).map(|ns| PhaseEvent::Event(Event::Sleep(ns)))
            }
            RtAppEntry::Lock(m) => Some(PhaseEvent::Event(Event::Lock { name: mutex(m)?, pi: self.pi })),
            RtAppEntry::Unlock(m) => Some(PhaseEvent::Event(Event::Unlock(mutex(m)?))),
            RtAppEntry::Yield => Some(PhaseEvent::Event(Event::Yield)),
            RtAppEntry::Runtime(v) => {
                Some(us(task, key, &v)?).filter(|&ns| ns > 0).map(|ns| PhaseEvent::Event(Event::Runtime(ns)))
            }
            RtAppEntry::Named(name) => {
                let name = name.ok_or_else(|| format!("task {task}: {key} names its object (a string)"))?;
                Some(PhaseEvent::Event(match kind {
                    "suspend" => Event::Suspend(name),
                    "resume" => Event::Resume(name),
                    "signal" => Event::Signal(name),
                    "broad" => Event::Broadcast(name),
                    _ => Event::Barrier(name),
                }))
            }
            RtAppEntry::WaitOn(w) => {
                let how = format!("task {task}: {key} is {{ \"ref\": CONDITION, \"mutex\": MUTEX }}");
                let w = w.ok_or_else(|| how.clone())?;
                let (Given::Is(cond), Given::Is(mutex)) = (w.cond, w.mutex) else { return Err(how) };
                Some(PhaseEvent::Event(Event::Wait { cond, mutex, signal_first: kind == "sync" }))
            }
            RtAppEntry::Timer(_) if self.events.iter().any(|(_, e)| matches!(e, PhaseEvent::Timer(..))) => {
                return Err(format!("task {task}: a second timer ({key}): schedlab runs one timer a phase"))
            }
            RtAppEntry::Timer(t) => {
                let t = t.ok_or_else(|| format!("task {task}: {key} has no period"))?;
                let p = t.period.ok_or_else(|| format!("task {task}: {key} has no period"))?;
                match t.mode {
                    None => {}
                    Some(Given::Is(m)) if m == "absolute" => {}
                    Some(mode) => {
                        return Err(format!(
                            "task {task}: {key}'s mode {}: schedlab's timers are absolute (a late tick is caught up, \
                             never moved): drop the mode",
                            mode.ok().unwrap_or_default()
                        ))
                    }
                }
                let name = match t.name {
                    Some(Given::Is(name)) => Some(name),
                    None => None,
                    Some(Given::Not(other)) => return Err(format!("task {task}: {key}'s ref is a name, not {other}")),
                };
                Some(PhaseEvent::Timer(us(task, key, &p)?, name))
            }
            _ => {
                return Err(format!(
                    "task {task}: '{kind}' is not supported: schedlab runs rt-app's run, runtime, sleep, timer, lock, \
                     unlock, yield, suspend, resume, wait, signal, broad, sync and barrier, and the settings {}",
                    RT_APP_SETTINGS.join(", ")
                ))
            }
        };
        self.events.extend(event.map(|e| (key.to_string(), e)));
        Ok(())
    }

    /// The phase read: with a timer, each activation starts at its tick, so the events
    /// after it run first, then those before it; without one, in the order written.
    fn phase(self, loops: u32) -> Phase {
        let at = self.events.iter().position(|(_, e)| matches!(e, PhaseEvent::Timer(..)));
        let (period_ns, timer) = match at.map(|i| &self.events[i].1) {
            Some(PhaseEvent::Timer(p, shared)) => (*p, shared.clone()),
            _ => (0, None),
        };
        let mut events: Vec<Event> =
            self.events.into_iter().filter_map(|(_, e)| if let PhaseEvent::Event(e) = e { Some(e) } else { None }).collect();
        if let Some(i) = at {
            events.rotate_left(i);
        }
        Phase { loops, period_ns, deadline_ns: 0, events, timer, cpus: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> std::result::Result<Vec<TaskDecl>, String> {
        read_set(name, text).map(|set| set.tasks)
    }

    fn read_set(name: &str, text: &str) -> std::result::Result<RtAppSet, String> {
        let dir = std::env::temp_dir().join(format!("schedlab-rt-app-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("set.json");
        std::fs::write(&file, text).unwrap();
        let read = read_rt_app(&file).map_err(|e| e.to_string());
        std::fs::remove_dir_all(&dir).unwrap();
        read
    }

    #[test]
    fn the_global_duration_and_lock_pages_are_used_and_the_rest_named() {
        let text = r#"{"tasks": {"a": {"run": 100, "sleep": 900}},
            "global": {"duration": 3, "lock_pages": true, "calibration": "CPU0", "logdir": "./", "frag": 1}}"#;
        let set = read_set("global", text).unwrap();
        assert_eq!((set.duration, set.lock_pages), (Some(std::time::Duration::from_secs(3)), true));
        let named: Vec<&str> = set.unused.iter().map(|u| u.split(' ').next().unwrap()).collect();
        assert_eq!(named, ["calibration", "frag", "logdir"]);
        assert!(set.unused[0].contains("not a calibrated loop"), "{:?}", set.unused);
        // rt-app's -1 is for ever: the trial's own --duration (or its default) then.
        let forever = read_set("global-forever", r#"{"tasks": {"a": {"run": 100, "sleep": 900}}, "global": {"duration": -1}}"#);
        assert_eq!(forever.unwrap().duration, None);
    }

    #[test]
    fn comments_and_trailing_commas_are_read_as_rt_app_reads_them() {
        let text = r#"/* a set of one */
{
    "tasks": {
        "a": { // the only task
            "run": 100, /* µs */
            "timer": { "ref": "t//not a comment", "period": 1000, },
        },
    },
}
"#;
        let tasks = read("comments", text).unwrap();
        assert_eq!((tasks[0].name.as_str(), tasks[0].phases[0].period_ns), ("a", 1_000_000));
        assert_eq!(tasks[0].phases[0].events, [Event::Run(100_000)]);
    }

    #[test]
    fn a_tasks_cpus_are_read_and_a_list_is_required() {
        let tasks = read("cpus", r#"{"tasks": {"a": {"cpus": [1], "run": 100, "timer": {"period": 1000}}}}"#).unwrap();
        assert_eq!(tasks[0].cpus, Some(vec![1]));
        let e = read("cpus-bad", r#"{"tasks": {"a": {"cpus": 1, "run": 100, "timer": {"period": 1000}}}}"#).unwrap_err();
        assert!(e.contains("task a: cpus is a list of CPU numbers"), "{e}");
    }

    #[test]
    fn a_run_or_sleep_of_zero_is_no_event_as_in_rt_app() {
        let text = r#"{"tasks": {"a": {"run": 100, "sleep": 0, "run1": 0, "timer": {"period": 1000}}}}"#;
        assert_eq!(read("zero", text).unwrap()[0].phases[0].events, [Event::Run(100_000)]);
    }

    #[test]
    fn a_malformed_file_is_refused_where_it_was_written() {
        // Two comments before the error: its line and column are the file's own.
        let e = read("malformed", "// one\n/* two */ {\"tasks\": {\"a\": {\"run\" 100}}}\n").unwrap_err();
        assert!(e.contains("not an rt-app file") && e.contains("line 2 column"), "{e}");
    }

    #[test]
    fn phases_loops_and_timers_are_read_as_rt_app_runs_them() {
        let text = r#"{"tasks": {
            "ramp": {"loop": 3, "phases": {
                "light": {"loop": 10, "run": 3000, "timer": {"ref": "unique", "period": 30000}},
                "idle": {"timer": {"ref": "tick", "period": 50000}},
                "loose": {"run": 100, "sleep": 900}}},
            "plain": {"run": 100, "sleep": 900}}}"#;
        let tasks = read("phases", text).unwrap();
        let ramp = &tasks[0];
        assert_eq!(ramp.passes, Some(3));
        let shape: Vec<(u32, u64, Option<&str>, usize)> =
            ramp.phases.iter().map(|p| (p.loops, p.period_ns, p.shared_timer(), p.events.len())).collect();
        // A "unique" timer is the thread's own, any other shared; a phase may be its timer alone.
        assert_eq!(shape, [(10, 30_000_000, None, 1), (1, 50_000_000, Some("tick"), 0), (1, 0, None, 2)]);
        // A task without phases or a timer is one run/sleep loop, for ever.
        assert_eq!((tasks[1].passes, tasks[1].phases.len(), tasks[1].phases[0].period_ns), (None, 1, 0));
        for (text, needle) in [
            (r#"{"tasks": {"a": {"phases": {"p": {"priority": 5, "run": 100}}}}}"#, "phase p: 'priority' in a phase"),
            (r#"{"tasks": {"a": {"phases": {}}}}"#, "phases holds no phase"),
            (r#"{"tasks": {"a": {"loop": 0, "run": 100}}}"#, "loop 0 runs nothing"),
            (
                r#"{"tasks": {"a": {"run": 100, "timer": {"ref": "t", "period": 1000, "mode": "relative"}}}}"#,
                "mode relative: schedlab's timers are absolute",
            ),
        ] {
            let e = read("phases-bad", text).unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn rt_apps_synchronising_events_are_read_with_their_objects() {
        let text = r#"{"tasks": {"a": {"lock": "m", "sync": {"ref": "q", "mutex": "m"}, "unlock": "m",
            "suspend": "a", "resume": "b", "broad": "q", "signal": "q", "barrier": "x", "runtime": 50}}}"#;
        let events = &read("sync", text).unwrap()[0].phases[0].events;
        let wait = Event::Wait { cond: "q".into(), mutex: "m".into(), signal_first: true };
        assert_eq!(
            events[1..],
            [
                wait,
                Event::Unlock("m".into()),
                Event::Suspend("a".into()),
                Event::Resume("b".into()),
                Event::Broadcast("q".into()),
                Event::Signal("q".into()),
                Event::Barrier("x".into()),
                Event::Runtime(50_000),
            ]
        );
        let e = read("sync-bad", r#"{"tasks": {"a": {"run": 1, "wait": "q"}}}"#).unwrap_err();
        assert!(e.contains(r#"wait is { "ref": CONDITION, "mutex": MUTEX }"#), "{e}");
    }
}
