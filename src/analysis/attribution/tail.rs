//! A run's tail: each spike's excess over the p99 split across its sources, the period's
//! beat culprits, and how sources and priorities are written.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::analysis::trace::{Culprit, Source, SpikeAttribution, TailCulprit};

use super::tally::{Identity, SourceTally};

/// The tail's culprits: each spike's excess over `p99_ns` (spikes at or below it are
/// skipped) split across its sources (culprits, and `Source::Unseen` for its unseen time)
/// in proportion to their time in its window. A source's share is its summed excess over
/// the total; `spikes` counts the spikes it took time in. Sorted by share, largest first.
/// A spike with an empty split (no window) is all unseen, so the shares still sum to 1.
pub fn tail_culprits(spikes: &[SpikeAttribution], p99_ns: u64) -> Vec<TailCulprit> {
    let mut tally: SourceTally<f64> = SourceTally::default();
    let mut total_excess = 0.0;
    for spike in spikes {
        let excess = spike.latency_ns.saturating_sub(p99_ns);
        if excess == 0 {
            continue;
        }
        let unseen = Culprit { source: Source::Unseen, ns: spike.unseen_ns };
        let parts: Vec<&Culprit> = spike.culprits.iter().chain([&unseen]).filter(|c| c.ns > 0).collect();
        let window_ns: f64 = parts.iter().map(|c| c.ns as f64).sum();
        total_excess += excess as f64;
        if parts.is_empty() {
            tally.add(&Source::Unseen, excess as f64).spikes += 1;
            continue;
        }
        let mut counted = BTreeSet::new();
        for part in parts {
            let entry = tally.add(&part.source, excess as f64 * part.ns as f64 / window_ns);
            // A task listed twice in one spike (under two priorities) took time in one spike.
            if counted.insert(Identity::of(&part.source)) {
                entry.spikes += 1;
            }
        }
    }
    if total_excess == 0.0 {
        return Vec::new();
    }
    let mut culprits: Vec<TailCulprit> = tally
        .into_sources()
        .map(|(source, entry)| TailCulprit { source, share: entry.total / total_excess, spikes: entry.spikes })
        .collect();
    culprits.sort_by(|a, b| {
        b.share.total_cmp(&a.share).then_with(|| b.spikes.cmp(&a.spikes)).then_with(|| a.source.cmp(&b.source))
    });
    culprits
}

/// How much of a tail the attribution explains: the excess above the p99 summed over the
/// spikes, the share of it named sources took (tasks, handlers, the wait for the CPU), the
/// share not visible to the kernel, and how much of that the CPU's steal over the run can
/// cover at most. The guest accounts steal per tick (and shows it per USER_HZ tick), never
/// per spike, so steal is a bound on the not-visible part, never a named source of a spike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TailAccount {
    pub excess_ns: f64,
    pub named_share: f64,
    pub unseen_share: f64,
    /// The CPU's steal over the run as the kernel counted it (whole ticks), and one tick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_resolution_ns: Option<u64>,
    /// The largest share of the tail's excess that steal could be: the counted steal plus
    /// one tick, at most the not-visible share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_at_most_share: Option<f64>,
}

impl TailAccount {
    /// `tail` as `tail_culprits` made it from `spikes` above `p99_ns`; `steal` the CPU's
    /// (counted ns, one tick ns) over the run, where known.
    pub fn of(
        tail: &[TailCulprit],
        spikes: &[SpikeAttribution],
        p99_ns: u64,
        steal: Option<(u64, u64)>,
    ) -> TailAccount {
        let excess_ns: f64 = spikes.iter().map(|s| s.latency_ns.saturating_sub(p99_ns) as f64).sum();
        let unseen_share: f64 = tail.iter().filter(|c| c.source == Source::Unseen).map(|c| c.share).sum();
        let named_share = if tail.is_empty() { 0.0 } else { (1.0 - unseen_share).max(0.0) };
        let steal_at_most_share = steal.filter(|_| excess_ns > 0.0).map(|(counted, tick)| {
            let bound = (counted + tick) as f64 / excess_ns;
            bound.min(unseen_share)
        });
        TailAccount {
            excess_ns,
            named_share,
            unseen_share,
            steal_ns: steal.map(|s| s.0),
            steal_resolution_ns: steal.map(|s| s.1),
            steal_at_most_share,
        }
    }

    /// "named sources 39 % of the excess; not visible to the kernel 61 %; steal on this CPU
    /// over the run 20 ms (± 10): at most 61 % of the excess, so at least 0 % is neither".
    pub fn describe(&self) -> String {
        let mut text = format!(
            "named sources: {} of the excess ({:.1} µs); not visible to the kernel: {}",
            percent(self.named_share),
            self.excess_ns / 1e3,
            percent(self.unseen_share)
        );
        if let (Some(steal), Some(tick), Some(most)) =
            (self.steal_ns, self.steal_resolution_ns, self.steal_at_most_share)
        {
            text.push_str(&format!(
                "; the hypervisor's steal on this CPU over the run: {:.0} ms (± {:.0}; counted per tick, not per spike), \
                 at most {} of the excess, so at least {} is not visible and not steal",
                steal as f64 / 1e6,
                tick as f64 / 1e6,
                percent(most),
                percent((self.unseen_share - most).max(0.0))
            ));
        }
        text
    }
}

/// Who ran on a periodic source's beats: of the attributed `spikes` (times since the
/// thread's start, as the period's phase), those above `above_ns` within three jitters
/// (and half an interval, the sampling's own resolution) of a beat, and their culprits
/// ranked as the tail's are, by share of their excess over `p99_ns`.
pub fn beat_culprits(
    spikes: &[SpikeAttribution],
    period_ns: f64,
    phase_ns: f64,
    jitter_ns: f64,
    interval_ns: u64,
    above_ns: u64,
    p99_ns: u64,
) -> (usize, Vec<TailCulprit>) {
    if period_ns <= 0.0 {
        return (0, Vec::new());
    }
    let tolerance = 3.0 * jitter_ns + interval_ns as f64 / 2.0;
    let on_beats: Vec<SpikeAttribution> = spikes
        .iter()
        .filter(|s| s.latency_ns > above_ns)
        .filter(|s| {
            let off = (s.at_ns as f64 - phase_ns).rem_euclid(period_ns);
            off.min(period_ns - off) <= tolerance
        })
        .cloned()
        .collect();
    (on_beats.len(), tail_culprits(&on_beats, p99_ns))
}

/// One line per culprit, the `top` largest: "ksoftirqd/0 (pid 15, nice 0): 41 % of the
/// excess, in 38 of 50 spikes", where `n_spikes` is how many spikes the tail has.
pub fn describe_tail(culprits: &[TailCulprit], n_spikes: usize, top: usize) -> Vec<String> {
    culprits
        .iter()
        .take(top)
        .map(|c| {
            format!(
                "{}: {} of the excess, in {} of {} spikes",
                describe_source(&c.source),
                percent(c.share),
                c.spikes,
                n_spikes
            )
        })
        .collect()
}

/// A source as the findings name it: "ksoftirqd/0 (pid 15, nice 0)", "softirq TIMER",
/// "irq 24 (virtio0-input.0)", "local timer interrupt".
pub fn describe_source(source: &Source) -> String {
    match source {
        Source::Task { comm, pid, prio } => format!("{comm} (pid {pid}, {})", describe_prio(*prio)),
        Source::Irq { irq, name } if name.is_empty() => format!("irq {irq}"),
        Source::Irq { irq, name } => format!("irq {irq} ({name})"),
        Source::Softirq { name } => format!("softirq {name}"),
        Source::LocalTimer => "local timer interrupt".to_string(),
        Source::Runnable => "runnable, waiting for the CPU".to_string(),
        Source::Unseen => "not visible to the kernel (irqs off, hypervisor, SMI)".to_string(),
    }
}

/// A kernel priority as a user sets it: 0..=98 is SCHED_FIFO/RR priority 99 − prio,
/// 100..=139 is nice prio − 120, −1 is SCHED_DEADLINE; anything else is shown raw.
pub fn describe_prio(prio: i32) -> String {
    match prio {
        -1 => "DEADLINE".to_string(),
        0..=98 => format!("FIFO/RR {}", 99 - prio),
        100..=139 => format!("nice {}", prio - 120),
        _ => format!("prio {prio}"),
    }
}

/// A share as a whole percentage; a share too small to round to 1 % is not shown as 0.
pub(super) fn percent(share: f64) -> String {
    let share = if share.is_nan() { 0.0 } else { share.clamp(0.0, 1.0) };
    let rounded = (share * 100.0).round();
    if share > 0.0 && rounded == 0.0 {
        "< 1 %".to_string()
    } else {
        format!("{rounded:.0} %")
    }
}
