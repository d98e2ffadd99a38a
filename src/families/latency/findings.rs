//! The latency family's findings of its own: a question over the policy answered as the
//! leaders by p99 and by maximum, and spikes that recur with a period. For each measuring
//! thread, the levels and bands its largest samples are searched above, and the held-out
//! test of the most significant period among them (`analysis::period`).

use super::figures::{MAX_NS, OVERRUNS, P99_NS};
use super::model::{LatencyOutcome, ThreadOutliers, ThreadStats};
use super::Latency;
use crate::analysis::period::{self, Level, SpikePeriod};
use crate::decide::findings::{describe, Answered, FamilyFindings, Finding, MaxLeader};
use crate::families::TrialSpec;
use crate::store::TrialRecord;

impl FamilyFindings for Latency {
    /// A question over the policy holds its p99 and its maximum, or the p99 alone where
    /// `ask` left the maximum out; any other set of figures (a stored run with no
    /// percentiles, a cgroup's pressure beside them) is told figure by figure.
    fn of_question(q: &Answered) -> Option<Finding> {
        let [(p99, c99, a99), max @ ..] = q.figures.as_slice() else { return None };
        let max_left_out = q.asking.is_some_and(|asking| !asking.tests(q.set[0].family, &MAX_NS));
        let pair = p99.key == P99_NS.key
            && match max {
                [] => max_left_out,
                [(max, ..)] => max.key == MAX_NS.key,
                _ => false,
            };
        (q.is_over_policy() && pair).then(|| Finding::TailLeader {
            what: q.what.clone(),
            p99_policy: q.label(c99.leader),
            p99_ns: q.level(p99, c99.leader),
            p99_answer: a99.clone(),
            max: max.first().map(|(fig, c, ans)| MaxLeader {
                max_policy: q.label(c.leader),
                max_ns: q.level(fig, c.leader),
                max_answer: ans.clone(),
            }),
            overruns: q
                .set
                .iter()
                .filter_map(|g| {
                    let total = g.values(|o| OVERRUNS.value(o)).iter().sum::<f64>();
                    Some((g.policy()?.as_str().to_string(), total as u64))
                })
                .collect(),
        })
    }

    /// The threads of a trial whose spikes recur with a period.
    fn of_trial(t: &TrialRecord) -> Vec<Finding> {
        let (Some(TrialSpec::Latency(spec)), Some(o)) = (&t.spec, t.outcome.as_ref().and_then(|o| o.latency()))
        else {
            return Vec::new();
        };
        let what = format!("latency{} trial {}", describe(&t.params, &[]), t.seq);
        spike_periods(o, spec.interval_ns)
            .into_iter()
            .filter_map(|s| Some(Finding::SpikePeriod { what: what.clone(), cpu: s.cpu, period: s.claimed()?.clone() }))
            .collect()
    }
}

/// One measuring thread's spike-period search: the most significant period among its
/// spikes, significant or not (none: too few spikes, or a run too short to search).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadSpikes {
    pub cpu: Option<usize>,
    pub period: Option<SpikePeriod>,
}

impl ThreadSpikes {
    /// The period, when the held-out test is significant.
    pub fn claimed(&self) -> Option<&SpikePeriod> {
        self.period.as_ref().filter(|p| p.significant())
    }
}

/// A spike is a sample above this many times the thread's p99: well out of the body of
/// the distribution. The tail's own small delays (on the shared VM, the scheduler tick's
/// and a 20 ms housekeeping beat's 40-60 µs, about the p99) are then no spikes, and a
/// period among them is not taken for a source of spikes.
const SPIKE_OVER_P99: u64 = 2;

/// A spike is also a sample this many robust spreads (p90 − p50) above the median. A source
/// that delays 1-5 % of the samples (1.5 ms every 100 ms at 1 kHz) *is* the p99, so twice
/// the p99 is above all of its spikes; the median and p90 are not moved by it. On the
/// shared VM the spread is 6-15 µs, so this level is 80-160 µs: above the tick's and the
/// housekeeping beat's delays (measured with `bench/spike-periods.sh`).
const SPIKE_BODY_SPREADS: u64 = 10;

/// The levels a thread's spikes are searched above, lowest first: the median plus ten
/// spreads where that is below twice the p99, twice the p99, and the p99.9 and p99.99 where
/// they are higher. When the buffer of largest samples is full and its smallest is above a
/// level, samples between the two were not kept, so that level becomes "above the
/// smallest kept".
pub(crate) fn spike_levels(stats: &ThreadStats, kept: &ThreadOutliers) -> Vec<Level> {
    let smallest_kept = kept.samples.iter().map(|s| s.1).min().unwrap_or(0);
    let full = kept.capacity > 0 && kept.samples.len() >= kept.capacity;
    // Without the percentiles (published figures that give none) there is no level.
    let (Some(p50), Some(p90), Some(p99)) = (stats.p50_ns, stats.p90_ns, stats.p99_ns) else { return Vec::new() };
    let twice_p99 = SPIKE_OVER_P99 * p99;
    let body = p50 + SPIKE_BODY_SPREADS * p90.saturating_sub(p50);
    let floor = body.min(twice_p99);
    let below_twice_p99 = (body < twice_p99).then_some(("p50 + 10 × (p90 − p50)", body));
    let mut levels: Vec<Level> = Vec::new();
    let tail = [("p99.9", stats.p999_ns), ("p99.99", stats.p9999_ns)];
    for (name, value) in below_twice_p99
        .into_iter()
        .chain([("2 × p99", twice_p99)])
        .chain(tail.into_iter().filter_map(|(name, v)| Some((name, v?))))
    {
        let value = value.max(floor);
        let above_ns = if full && smallest_kept > value { smallest_kept - 1 } else { value };
        // The same spikes as a level before: one test, not two.
        if levels.iter().any(|l| l.above_ns >= above_ns) {
            continue;
        }
        levels.push(Level::above(name, above_ns));
    }
    levels.extend(spike_bands(p50, floor, kept));
    levels
}

/// A band's top is this many times its floor: a source's spikes vary with where in its
/// burst the sampling lands (a 1.5 ms burst sampled at 1 kHz delays a wakeup by 0.5-1.5 ms),
/// so a band must hold a factor of three. Wider bands hold more random spikes beside the
/// source's: on synthetic runs whose stalls lift every level (15 % of wakeups), bands of 4
/// found a source in 16 of 20, of 8 in 7 of 20.
const SPIKE_BAND_WIDTH: f64 = 4.0;

/// Each band's floor is this many times the one below it: half an octave, so that some
/// band holds nearly all of a factor-of-three spread wherever it lies.
const SPIKE_BAND_STEP: f64 = std::f64::consts::SQRT_2;

/// The lowest band floor, in medians: a wakeup delayed by this much is out of the body of
/// the distribution however much of it random stalls have lifted (the median stays put
/// until half the samples are hit). On the shared VM the tick's and the housekeeping
/// beat's delays are 3-5 medians.
const SPIKE_BAND_MEDIANS: u64 = 8;

/// Bands of spikes, `SPIKE_BAND_STEP` apart, each `SPIKE_BAND_WIDTH` wide, from the lowest floor
/// (`SPIKE_BAND_MEDIANS` medians, or the smallest kept sample when the buffer is full: a
/// rung of the levels' `floor` at or just above that) up to the last band with kept samples
/// above it. Where a machine's random stalls are larger than a periodic source's spikes and
/// lift every level above them (a host slicing the CPU 10 ms at a time beside a 1.5 ms
/// source), the band around the source's spikes holds them apart from the stalls.
fn spike_bands(p50: u64, floor: u64, kept: &ThreadOutliers) -> Vec<Level> {
    let largest = kept.samples.iter().map(|s| s.1).max().unwrap_or(0);
    let full = kept.capacity > 0 && kept.samples.len() >= kept.capacity;
    let smallest_kept = if full { kept.samples.iter().map(|s| s.1).min().unwrap_or(0) } else { 0 };
    let lowest = (SPIKE_BAND_MEDIANS * p50).max(smallest_kept).max(1);
    // Octave rungs of `floor`, down to the lowest floor allowed.
    let (lowest, step) = (lowest as f64, SPIKE_BAND_STEP);
    let mut rung = floor.max(1) as f64;
    while rung < lowest {
        rung *= step;
    }
    while rung / step >= lowest {
        rung /= step;
    }
    let mut bands = Vec::new();
    while rung * SPIKE_BAND_WIDTH < largest as f64 {
        let (above_ns, below_ns) = (rung.round() as u64, (rung * SPIKE_BAND_WIDTH).round() as u64);
        bands.push(Level { name: "a band, larger spikes left out", above_ns, below_ns: Some(below_ns) });
        rung *= step;
    }
    bands
}

/// The spike-period search of every thread of a latency outcome that kept its largest
/// samples (runs stored before schedlab kept them have none).
pub fn spike_periods(o: &LatencyOutcome, interval_ns: u64) -> Vec<ThreadSpikes> {
    o.outliers
        .iter()
        .zip(&o.threads)
        .map(|(kept, stats)| ThreadSpikes {
            cpu: kept.cpu,
            period: period::search(&kept.samples, kept.span_ns, interval_ns, &spike_levels(stats, kept)),
        })
        .collect()
}
