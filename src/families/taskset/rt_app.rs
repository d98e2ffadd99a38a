//! rt-app's JSON task files, read into the task set's model (`--rt-app FILE`).

use super::task::{Event, TaskDecl};
use crate::error::{Error, Result};
use crate::model::parse::given::{present, ByKey, Given, Keyed};
use serde::{Deserialize, Deserializer};

/// The rt-app keys of a task that are its settings, not events.
const RT_APP_SETTINGS: [&str; 7] = ["instance", "loop", "priority", "policy", "cpus", "dl-runtime", "dl-deadline"];

/// One value of an rt-app task, read by its key's kind (rt-app numbers repeats: run0, run1).
enum RtAppEntry {
    Instance(Option<u64>),
    /// `loop` and `policy`: schedlab runs for --duration, under the --policy of each trial.
    Ignored,
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
    Timer(Option<Given<u64>>),
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

/// An rt-app timer: `{ "ref": "t", "period": 1000 }` (µs).
#[derive(Deserialize)]
struct RtAppTimer {
    #[serde(default, deserialize_with = "present")]
    period: Option<Given<u64>>,
}

impl<'de> ByKey<'de> for RtAppEntry {
    fn read<A: serde::de::MapAccess<'de>>(key: &str, map: &mut A) -> std::result::Result<Self, A::Error> {
        let ignore = |map: &mut A| map.next_value::<serde::de::IgnoredAny>().map(|_| ());
        Ok(match key.trim_end_matches(|c: char| c.is_ascii_digit()) {
            "instance" => RtAppEntry::Instance(map.next_value::<Given<u64>>()?.ok()),
            "loop" | "policy" => {
                ignore(map)?;
                RtAppEntry::Ignored
            }
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
            "timer" => {
                let timer = map.next_value::<Given<FromObject<RtAppTimer>>>()?;
                RtAppEntry::Timer(timer.ok().and_then(|t| t.0.period))
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

/// rt-app's `global`: only `pi_enabled` is read, and only when it is true or false.
#[derive(Deserialize)]
struct RtAppGlobal {
    #[serde(default)]
    pi_enabled: Option<Given<bool>>,
}

/// The tasks of an rt-app JSON file (rt-app's own format: `tasks`, each an object whose
/// keys are its settings and its events in order, times in µs; `global` ignored but for
/// `pi_enabled`). The one `timer` event is the activation: the events after it run first
/// in each period, then those before it. Whatever schedlab does not run is refused, named.
pub fn read_rt_app(path: &std::path::Path) -> Result<Vec<TaskDecl>> {
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
    let pi = file.global.and_then(Given::ok).and_then(|g| g.0.pi_enabled).and_then(Given::ok).unwrap_or(false);
    let us = |task: &str, key: &str, v: &Given<u64>| -> Result<u64> {
        match v {
            Given::Is(n) => Ok(n * 1000),
            Given::Not(other) => Err(bad(format!("task {task}: {key} is a whole number of µs, not {other}"))),
        }
    };
    let mut out = Vec::new();
    for (name, RtAppTask(body)) in file.tasks.0 {
        let entries = match body {
            Given::Is(Keyed(entries)) => entries,
            Given::Not(other) => {
                return Err(bad(format!("task {name}: invalid type: {}, expected a JSON object", other.kind)))
            }
        };
        let mut decl = TaskDecl {
            name: name.clone(),
            count: 1,
            period_ns: 0,
            deadline_ns: None,
            events: Vec::new(),
            prio: None,
            runtime_ns: None,
            cpus: None,
        };
        // Events before and after the timer, and the timer's period.
        let (mut before, mut after, mut period) = (Vec::new(), Vec::new(), None);
        for (key, entry) in entries {
            let kind = key.trim_end_matches(|c: char| c.is_ascii_digit());
            let events = if period.is_some() { &mut after } else { &mut before };
            let mutex = |m: Option<String>| m.ok_or_else(|| bad(format!("task {name}: {key} names a mutex")));
            match entry {
                RtAppEntry::Instance(n) => decl.count = n.and_then(|n| u32::try_from(n).ok()).unwrap_or(0),
                RtAppEntry::Ignored => {}
                RtAppEntry::Priority(p) => decl.prio = p.map(|p| p as i32),
                RtAppEntry::Cpus(Given::Is(list)) => decl.cpus = Some(list),
                RtAppEntry::Cpus(Given::Not(other)) => {
                    return Err(bad(format!("task {name}: {key} is a list of CPU numbers, not {other}")))
                }
                // rt-app takes a run or sleep of 0 (its template's `"sleep": 0`) as no event.
                RtAppEntry::Run(v) => events.extend(Some(us(&name, &key, &v)?).filter(|&ns| ns > 0).map(Event::Run)),
                RtAppEntry::Sleep(v) => {
                    events.extend(Some(us(&name, &key, &v)?).filter(|&ns| ns > 0).map(Event::Sleep))
                }
                RtAppEntry::DlRuntime(v) => decl.runtime_ns = Some(us(&name, &key, &v)?),
                RtAppEntry::DlDeadline(v) => decl.deadline_ns = Some(us(&name, &key, &v)?),
                RtAppEntry::Lock(m) => events.push(Event::Lock { name: mutex(m)?, pi }),
                RtAppEntry::Unlock(m) => events.push(Event::Unlock(mutex(m)?)),
                RtAppEntry::Yield => events.push(Event::Yield),
                RtAppEntry::Timer(_) if period.is_some() => {
                    return Err(bad(format!("task {name}: a second timer ({key}): schedlab runs one period a task")))
                }
                RtAppEntry::Timer(p) => {
                    let p = p.ok_or_else(|| bad(format!("task {name}: {key} has no period")))?;
                    period = Some(us(&name, &key, &p)?);
                }
                RtAppEntry::Unsupported => {
                    return Err(bad(format!(
                        "task {name}: '{kind}' is not supported: schedlab runs rt-app's run, sleep, timer, lock, \
                         unlock and yield, and the settings {}",
                        RT_APP_SETTINGS.join(", ")
                    )))
                }
            }
        }
        decl.period_ns = period.ok_or_else(|| {
            bad(format!("task {name}: no timer: schedlab runs periodic tasks (add \"timer\": {{ \"ref\": \"t\", \"period\": 1000 }})"))
        })?;
        decl.events = after.into_iter().chain(before).collect();
        out.push(decl);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> std::result::Result<Vec<TaskDecl>, String> {
        let dir = std::env::temp_dir().join(format!("schedlab-rt-app-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("set.json");
        std::fs::write(&file, text).unwrap();
        let read = read_rt_app(&file).map_err(|e| e.to_string());
        std::fs::remove_dir_all(&dir).unwrap();
        read
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
        assert_eq!((tasks[0].name.as_str(), tasks[0].period_ns), ("a", 1_000_000));
        assert_eq!(tasks[0].events, [Event::Run(100_000)]);
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
        assert_eq!(read("zero", text).unwrap()[0].events, [Event::Run(100_000)]);
    }

    #[test]
    fn a_malformed_file_is_refused_where_it_was_written() {
        // Two comments before the error: its line and column are the file's own.
        let e = read("malformed", "// one\n/* two */ {\"tasks\": {\"a\": {\"run\" 100}}}\n").unwrap_err();
        assert!(e.contains("not an rt-app file") && e.contains("line 2 column"), "{e}");
    }
}
