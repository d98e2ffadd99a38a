//! Weights summed per source, a task's priorities merged: what the tail and the windows
//! count with.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use crate::analysis::trace::Source;

/// A source as the tail counts it: a task is its comm and pid, whatever its priority.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Identity {
    Task { comm: String, pid: i32 },
    Other(Source),
}

impl Identity {
    pub(super) fn of(source: &Source) -> Self {
        match source {
            Source::Task { comm, pid, .. } => Identity::Task { comm: comm.clone(), pid: *pid },
            other => Identity::Other(other.clone()),
        }
    }
}

/// One source's sums: its total weight, a task's by priority, and the spikes it was in.
#[derive(Default)]
pub(super) struct SourceSums<W> {
    pub(super) total: W,
    pub(super) by_prio: BTreeMap<i32, W>,
    pub(super) spikes: usize,
}

/// Weights (ns, or excess ns) summed per source, a task's priorities merged.
pub(super) struct SourceTally<W> {
    pub(super) entries: BTreeMap<Identity, SourceSums<W>>,
}

impl<W> Default for SourceTally<W> {
    fn default() -> Self {
        SourceTally { entries: BTreeMap::new() }
    }
}

impl<W: Copy + Default + PartialOrd + AddAssign> SourceTally<W> {
    pub(super) fn add(&mut self, source: &Source, weight: W) -> &mut SourceSums<W> {
        let entry = self.entries.entry(Identity::of(source)).or_default();
        entry.total += weight;
        if let Source::Task { prio, .. } = source {
            *entry.by_prio.entry(*prio).or_default() += weight;
        }
        entry
    }

    /// Each source with its sums; a task at the priority it held for most of its weight
    /// (the most urgent of equals).
    pub(super) fn into_sources(self) -> impl Iterator<Item = (Source, SourceSums<W>)> {
        self.entries.into_iter().map(|(identity, entry)| {
            let source = match identity {
                Identity::Task { comm, pid } => {
                    let mut prio = 0;
                    let mut most: Option<W> = None;
                    for (&candidate, &weight) in &entry.by_prio {
                        if most.is_none_or(|most| weight > most) {
                            prio = candidate;
                            most = Some(weight);
                        }
                    }
                    Source::Task { comm, pid, prio }
                }
                Identity::Other(source) => source,
            };
            (source, entry)
        })
    }
}
