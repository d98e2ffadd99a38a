//! Periodic spikes: do a latency run's largest samples recur with a period?
//!
//! A histogram cannot tell a tail made by an SMI every second or a neighbour's 100 ms
//! timer from one made by chance; the times of the spikes can. The method:
//!
//! 1. Spikes: the kept samples above a level the caller names (schedlab's findings use
//!    the median plus ten robust spreads, twice the p99, and the p99.9 and p99.99: see
//!    `decide::findings::spike_levels`), or within a band (a ladder of bands four times as
//!    wide as their floor, half an octave apart, so that a source's spikes are searched
//!    apart from larger random ones however large those are), where spikes
//!    closer together than half the shortest period searched are merged into their
//!    largest, so one disturbance that delays several wakeups counts once.
//! 2. Fit on one half of the run: each period that the gap between two nearby spikes
//!    suggests (the gap over 1 to 4, for missed beats) is tried with that spike as a
//!    beat, refined by least squares on the spikes within ±2 % of a beat, and scored by
//!    how far its fits exceed chance. A subharmonic fits the same spikes as the period,
//!    so a multiple of the best is preferred when the spikes on the beats it skips are
//!    likelier chance's than a source's. A period whose spikes lie on a finer comb (the
//!    scheduler tick's, every 4 ms at HZ=250) is no period of its own: dropped.
//! 3. Test on the other half, which the fit never saw: cut it into 8 to 32 stretches
//!    of at least a period, count the stretches with a spike on a beat of the fitted grid,
//!    and compare with chance for the spikes each stretch holds (a Poisson-binomial
//!    tail, spike times uniform under the null). Counting stretches rather than spikes
//!    keeps a burst of noise that happens to line up from passing for a period, and a
//!    source that misses beats (a short burst the sampling does not always land in)
//!    still hits most stretches.
//! 4. Both halves in turn at every level and band: the smallest p times the number of
//!    tests (Bonferroni) must be below `ALPHA`; a level's best is preferred to a band's
//!    when it passes. The period, its jitter and the k of N spikes
//!    that fit are then estimated from the whole run.
//!
//! A source whose phase wanders by more than ±2 % of its period over the run, or that
//! beats fewer than 16 times in it, is not found.

use serde::Serialize;

/// A spike fits a beat within this fraction of the period (or one sampling interval,
/// when that is more: a spike's time is known only to the interval).
pub const TOLERANCE: f64 = 0.02;
/// Shortest period searched, and in sampling intervals.
pub const MIN_PERIOD_NS: f64 = 20e6;
pub const MIN_PERIOD_INTERVALS: f64 = 25.0;
/// A period must fit this many times into the run (eight in each half).
pub const MIN_CYCLES: f64 = 16.0;
/// A finer comb the spikes may lie on is looked for down to this period, and this many
/// sampling intervals (`Searcher::on_a_finer_comb`).
const FINEST_COMB_NS: f64 = 1e6;
const FINEST_COMB_INTERVALS: f64 = 4.0;
/// Fewer spikes at a level than this are not searched.
pub const MIN_SPIKES: usize = 8;
/// A period is claimed when the corrected p of its held-out test is below this.
pub const ALPHA: f64 = 1e-3;
/// A claimed period must also put a spike on a beat in at least this many held-out
/// stretches: a source recurs through the run. On the shared VM a sparse train of a dozen
/// spikes (8 on beats over both halves, so at most 4 in the held-out one), a few of which
/// chance lined up, once passed the p bar alone (1 of 22 plain runs: real spike times are
/// not as uniform as the null assumes); the planted 100 ms source hits 20 of 20, and a
/// synthetic one present at 60 % of its beats among random spikes 6 of 19 or more.
pub const MIN_HELD_OUT_HITS: usize = 6;
/// In a band, spikes closer than this many sampling intervals are merged.
const BAND_MERGE_INTERVALS: f64 = 2.5;
/// Spikes a fit on a half must have on its beats before it is tested.
pub const MIN_FITS: usize = 4;
/// Each spike is paired with this many following ones to suggest periods.
const NEIGHBOURS: usize = 8;
/// A gap may span up to this many periods (missed beats).
const MAX_SKIPPED: u32 = 4;
/// The held-out half is cut into at most this many stretches of at least a period each,
/// so that a burst of noise spans few of them however short the period.
const MAX_STRETCHES: usize = 32;
/// Fewer stretches than this in a half: the period is too long to test.
const MIN_STRETCHES: usize = 8;

/// A threshold the spikes must exceed, named by the quantile it is; with `below_ns`, a band
/// whose spikes must also not exceed that, so that larger random spikes (a host's stalls)
/// neither bury a smaller periodic source's nor swallow them when merged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    pub name: &'static str,
    pub above_ns: u64,
    pub below_ns: Option<u64>,
}

impl Level {
    /// Every sample above `above_ns`.
    pub const fn above(name: &'static str, above_ns: u64) -> Level {
        Level { name, above_ns, below_ns: None }
    }

    fn holds(&self, latency_ns: u64) -> bool {
        latency_ns > self.above_ns && self.below_ns.is_none_or(|b| latency_ns <= b)
    }
}

/// The held-out test of a period fitted on the other half of the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeldOutTest {
    /// Stretches of the held-out half, and how many had a spike on a beat.
    pub stretches: usize,
    pub hit: usize,
    /// How many chance gives, for the spikes each stretch holds.
    pub expected: f64,
    /// The Poisson-binomial tail of `hit`, before correcting for the tests made.
    pub p_one: f64,
    /// Tests made (two halves at each level searched).
    pub tests: usize,
    /// `p_one` × `tests`, at most 1.
    pub p: f64,
}

/// The best period found among a run's spikes, significant or not.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpikePeriod {
    /// The level whose spikes recur ("p99.9"), and its value (with the band's top, when the
    /// spikes were those of a band).
    pub level: &'static str,
    pub above_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub below_ns: Option<u64>,
    /// Spikes above the level (after merging), and how many of them fit a beat.
    pub spikes: usize,
    pub fits: usize,
    pub period_ns: f64,
    /// The spread of the fitting spikes' times about their beats: a standard deviation,
    /// estimated robustly (1.4826 × MAD).
    pub jitter_ns: f64,
    /// A beat's time since the thread's start (the first, within one period of it).
    pub phase_ns: f64,
    pub test: HeldOutTest,
}

impl SpikePeriod {
    /// The spikes' magnitude in words: "spikes above 80.0 µs", or "spikes of 400.0-3200.0 µs"
    /// for a band.
    pub fn magnitude(&self) -> String {
        match self.below_ns {
            Some(below) => format!("spikes of {:.1}-{:.1} µs", self.above_ns as f64 / 1e3, below as f64 / 1e3),
            None => format!("spikes above {:.1} µs", self.above_ns as f64 / 1e3),
        }
    }

    /// Whether the period is claimed: the corrected p is below `ALPHA` and the beats held a
    /// spike in at least `MIN_HELD_OUT_HITS` of the held-out stretches.
    pub fn significant(&self) -> bool {
        self.test.p < ALPHA && self.test.hit >= MIN_HELD_OUT_HITS
    }
}

/// Beats at `phase + m * period` for every integer m.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Grid {
    phase: f64,
    period: f64,
}

impl Grid {
    /// How far `t` is from its nearest beat (signed).
    fn residual(&self, t: f64) -> f64 {
        let x = (t - self.phase) / self.period;
        (x - x.round()) * self.period
    }

    fn beat_index(&self, t: f64) -> f64 {
        ((t - self.phase) / self.period).round()
    }
}

struct Searcher {
    min_period: f64,
    max_period: f64,
    interval: f64,
}

impl Searcher {
    fn tolerance(&self, period: f64) -> f64 {
        (TOLERANCE * period).max(self.interval)
    }

    /// The share of the time line within the tolerance of a beat: a random spike's chance to fit.
    fn chance(&self, period: f64) -> f64 {
        (2.0 * self.tolerance(period) / period).min(1.0)
    }

    fn count(&self, times: &[f64], grid: &Grid) -> usize {
        let tol = self.tolerance(grid.period);
        times.iter().filter(|&&t| grid.residual(t).abs() <= tol).count()
    }

    /// Least squares of the fitting spikes' times on their beat numbers, a few rounds (each
    /// round's grid may take in spikes the last one missed).
    fn refine(&self, times: &[f64], mut grid: Grid) -> Grid {
        for _ in 0..3 {
            let tol = self.tolerance(grid.period);
            let points: Vec<(f64, f64)> =
                times.iter().filter(|&&t| grid.residual(t).abs() <= tol).map(|&t| (grid.beat_index(t), t)).collect();
            let Some(rough) = line_fit(&points) else { break };
            // Random spikes near a beat pull the line; fit again without those far off it.
            let residuals: Vec<f64> = points.iter().map(|&(m, t)| t - rough.phase - m * rough.period).collect();
            let keep = (3.0 * robust_sd(&residuals)).max(self.interval);
            let close: Vec<(f64, f64)> =
                points.iter().zip(&residuals).filter(|(_, r)| r.abs() <= keep).map(|(p, _)| *p).collect();
            let fitted = line_fit(&close).unwrap_or(rough);
            if !(self.min_period * 0.9..=self.max_period * 1.1).contains(&fitted.period) || fitted == grid {
                break;
            }
            grid = fitted;
        }
        grid
    }

    /// How many standard deviations the fits of `grid` are above chance among `n` spikes.
    fn score(&self, n: usize, fits: usize, period: f64) -> f64 {
        let q = self.chance(period);
        let expected = n as f64 * q;
        (fits as f64 - expected) / (expected * (1.0 - q)).max(1e-9).sqrt()
    }

    /// The grid that best explains `times` (sorted), with its fit count.
    fn fit(&self, times: &[f64]) -> Option<(Grid, usize)> {
        let n = times.len();
        let mut best: Option<(Grid, usize, f64)> = None;
        for i in 0..n {
            for j in i + 1..n.min(i + 1 + NEIGHBOURS) {
                let gap = times[j] - times[i];
                for skipped in 1..=MAX_SKIPPED {
                    let period = gap / f64::from(skipped);
                    if period < self.min_period {
                        break;
                    }
                    if period > self.max_period {
                        continue;
                    }
                    let grid = Grid { phase: times[i], period };
                    let first = self.count(times, &grid);
                    let best_fits = best.map_or(0, |b| b.1);
                    if first < 3 || first * 2 < best_fits {
                        continue;
                    }
                    let grid = self.refine(times, grid);
                    if !(self.min_period..=self.max_period).contains(&grid.period) {
                        continue;
                    }
                    let fits = self.count(times, &grid);
                    let score = self.score(n, fits, grid.period);
                    let better = match best {
                        None => true,
                        Some((g, _, s)) => score > s + 1e-9 || (score > s - 1e-9 && grid.period > g.period),
                    };
                    if better {
                        best = Some((grid, fits, score));
                    }
                }
            }
        }
        let (mut grid, mut fits, _) = best?;
        // A subharmonic (the period over 2, 3, 4, ...) fits the same spikes as the period:
        // step up by a prime factor while the longer period explains the fits.
        'longer: loop {
            for multiple in [2u32, 3, 5, 7, 11, 13] {
                if grid.period * f64::from(multiple) > self.max_period {
                    continue;
                }
                if let Some(longer) = self.longer_period(times, &grid, fits, multiple) {
                    (grid, fits) = longer;
                    continue 'longer;
                }
            }
            break;
        }
        if fits < MIN_FITS || self.on_a_finer_comb(times, &grid, fits) {
            return None;
        }
        Some((grid, fits))
    }

    /// Whether the spikes on `grid`'s beats are part of a finer comb: a period P/c, below
    /// the range searched, whose other beats hold about as many spikes as a source beating
    /// on them would put there rather than as many as chance would (Poisson). The
    /// scheduler tick makes such a comb (every 4 ms at HZ=250): a grid of 20 ms over it
    /// fits every fifth tick's spikes, far more than chance, yet 20 ms is no period of it.
    fn on_a_finer_comb(&self, times: &[f64], grid: &Grid, fits: usize) -> bool {
        let n = times.len() as f64;
        let coarse_tol = self.tolerance(grid.period);
        let on_beats_by_chance = n * self.chance(grid.period);
        for c in 2u32.. {
            let fine = Grid { phase: grid.phase, period: grid.period / f64::from(c) };
            if fine.period < FINEST_COMB_INTERVALS * self.interval || fine.period < FINEST_COMB_NS {
                return false;
            }
            let fine_tol = self.tolerance(fine.period);
            let between = times
                .iter()
                .filter(|&&t| fine.residual(t).abs() <= fine_tol && grid.residual(t).abs() > coarse_tol)
                .count() as f64;
            let skipped = f64::from(c - 1);
            let chance = n * self.chance(fine.period) * skipped / f64::from(c);
            let source = chance + (fits as f64 - on_beats_by_chance).max(0.0) * skipped;
            let log_likelihood = |mean: f64| between * mean.max(1e-12).ln() - mean;
            if log_likelihood(source) > log_likelihood(chance) {
                return true;
            }
        }
        false
    }

    /// `multiple` times the period of `grid` (which fits `fits` of `times`), on whichever
    /// of its beats fits best, if it is the likelier period: the spikes `grid` fits on the
    /// beats the longer one skips are as many as chance puts there (Poisson), rather than
    /// about as many as a source beating on them would.
    fn longer_period(&self, times: &[f64], grid: &Grid, fits: usize, multiple: u32) -> Option<(Grid, usize)> {
        let period = grid.period * f64::from(multiple);
        let (longer, longer_fits) = (0..multiple)
            .map(|shift| {
                let phase = grid.phase + f64::from(shift) * grid.period;
                let candidate = self.refine(times, Grid { phase, period });
                (candidate, self.count(times, &candidate))
            })
            .filter(|(c, _)| (self.min_period..=self.max_period).contains(&c.period))
            .max_by_key(|c| c.1)?;
        let (n, m) = (times.len() as f64, f64::from(multiple));
        let chance_skipped = n * self.chance(grid.period) * (m - 1.0) / m;
        let chance_kept = n * self.chance(grid.period) / m;
        let source_skipped = chance_skipped + (longer_fits as f64 - chance_kept).max(0.0) * (m - 1.0);
        let extra = fits.saturating_sub(longer_fits) as f64;
        let log_likelihood = |mean: f64| extra * mean.max(1e-12).ln() - mean;
        (log_likelihood(chance_skipped) >= log_likelihood(source_skipped)).then_some((longer, longer_fits))
    }

    /// The held-out test of `grid` on the spikes `times` of [from, to).
    fn held_out(&self, times: &[f64], from: f64, to: f64, grid: &Grid) -> Option<(usize, usize, f64, f64)> {
        let stretches = (((to - from) / grid.period).floor() as usize).min(MAX_STRETCHES);
        if stretches < MIN_STRETCHES {
            return None;
        }
        let width = (to - from) / stretches as f64;
        let tol = self.tolerance(grid.period);
        let mut chances = Vec::with_capacity(stretches);
        let mut hit = 0;
        for s in 0..stretches {
            let (a, b) = (from + s as f64 * width, from + (s + 1) as f64 * width);
            let inside: Vec<f64> = times.iter().copied().filter(|&t| t >= a && t < b).collect();
            let on_beat = (coverage(grid, tol, a, b) / width).min(1.0);
            chances.push(1.0 - (1.0 - on_beat).powi(inside.len() as i32));
            if inside.iter().any(|&t| grid.residual(t).abs() <= tol) {
                hit += 1;
            }
        }
        let expected = chances.iter().sum();
        Some((stretches, hit, expected, poisson_binomial_tail(&chances, hit)))
    }
}

/// The least-squares line t = phase + period × m through (m, t); None without two beats.
fn line_fit(points: &[(f64, f64)]) -> Option<Grid> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_m = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_t = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_m).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_m) * (p.1 - mean_t)).sum();
    let period = sxy / sxx;
    (period > 0.0).then_some(Grid { phase: mean_t - period * mean_m, period })
}

/// The length of [a, b) within `tol` of a beat of `grid`.
fn coverage(grid: &Grid, tol: f64, a: f64, b: f64) -> f64 {
    let first = ((a - tol - grid.phase) / grid.period).floor() as i64;
    let last = ((b + tol - grid.phase) / grid.period).ceil() as i64;
    (first..=last)
        .map(|m| {
            let beat = grid.phase + m as f64 * grid.period;
            ((beat + tol).min(b) - (beat - tol).max(a)).max(0.0)
        })
        .sum()
}

/// 1.4826 × the median absolute deviation: the standard deviation of normal residuals,
/// unmoved by the few random spikes that land within the tolerance of a beat.
fn robust_sd(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let centre = crate::analysis::stats::median(values);
    let deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
    1.4826 * crate::analysis::stats::median(&deviations)
}

/// P(at least `k` successes) among independent trials with these chances.
pub fn poisson_binomial_tail(chances: &[f64], k: usize) -> f64 {
    let mut dist = vec![0.0; chances.len() + 1];
    dist[0] = 1.0;
    for (i, &p) in chances.iter().enumerate() {
        for j in (0..=i + 1).rev() {
            let stay = dist[j] * (1.0 - p);
            let moved = if j > 0 { dist[j - 1] * p } else { 0.0 };
            dist[j] = stay + moved;
        }
    }
    dist.iter().skip(k).sum::<f64>().min(1.0)
}

/// The spikes of `level`, in time order, each cluster closer than `merge` merged into its
/// largest: (time, latency).
fn spikes_within(samples: &[(u64, u64)], level: &Level, merge: f64) -> Vec<(f64, u64)> {
    let mut above: Vec<(u64, u64)> = samples.iter().copied().filter(|s| level.holds(s.1)).collect();
    above.sort_unstable();
    let mut out: Vec<(f64, u64)> = Vec::new();
    let mut last_time = f64::NEG_INFINITY;
    for (at, latency) in above {
        let t = at as f64;
        match out.last_mut() {
            Some(top) if t - last_time < merge => {
                if latency > top.1 {
                    *top = (t, latency);
                }
            }
            _ => out.push((t, latency)),
        }
        last_time = t;
    }
    out
}

/// The shortest period searched at a sampling interval: `MIN_PERIOD_NS`, or
/// `MIN_PERIOD_INTERVALS` intervals where that is longer.
pub fn shortest_period_ns(interval_ns: u64) -> f64 {
    MIN_PERIOD_NS.max(MIN_PERIOD_INTERVALS * interval_ns as f64)
}

/// The most significant period among the spikes of `samples` ((time since start, latency)
/// in ns) over a run of `span_ns` sampled every `interval_ns`, at each of `levels`.
/// None when no level has enough spikes or the run is too short for any period.
pub fn search(samples: &[(u64, u64)], span_ns: u64, interval_ns: u64, levels: &[Level]) -> Option<SpikePeriod> {
    let span = span_ns as f64;
    let searcher = Searcher {
        min_period: shortest_period_ns(interval_ns),
        max_period: span / MIN_CYCLES,
        interval: interval_ns as f64,
    };
    if searcher.max_period < searcher.min_period {
        return None;
    }
    let half = span / 2.0;
    let mut tests = 0;
    /// The held-out test with the smallest p so far, and the spikes of its level.
    struct Best {
        level: Level,
        times: Vec<f64>,
        grid: Grid,
        stretches: usize,
        hit: usize,
        expected: f64,
        p_one: f64,
    }
    // The best above a level and the best in a band, apart: a level's spikes are the plainer
    // finding, so a band's is taken only where no level's passes.
    let (mut best_above, mut best_band): (Option<Best>, Option<Best>) = (None, None);
    for &level in levels {
        // Above a level, a cluster of spikes closer than half the shortest period is one
        // disturbance (a burst of noise), merged so that it counts once. In a band, the
        // larger spikes left out would split such clusters, and merging what remains with
        // a band's dense random spikes would swallow a source's: there only the wakeups one
        // disturbance delayed back to back are merged.
        let merge = match level.below_ns {
            None => searcher.min_period / 2.0,
            Some(_) => BAND_MERGE_INTERVALS * searcher.interval,
        };
        let spikes = spikes_within(samples, &level, merge);
        if spikes.len() < MIN_SPIKES {
            continue;
        }
        tests += 2;
        let times: Vec<f64> = spikes.iter().map(|s| s.0).collect();
        let split = times.partition_point(|&t| t < half);
        let (first, second) = times.split_at(split);
        for (train, test, from, to) in [(first, second, half, span), (second, first, 0.0, half)] {
            let Some((grid, _)) = searcher.fit(train) else { continue };
            let Some((stretches, hit, expected, p_one)) = searcher.held_out(test, from, to, &grid) else { continue };
            let best = if level.below_ns.is_some() { &mut best_band } else { &mut best_above };
            if best.as_ref().is_none_or(|b| p_one < b.p_one) {
                *best = Some(Best { level, times: times.clone(), grid, stretches, hit, expected, p_one });
            }
        }
    }
    let passes = |b: &Best| b.p_one * (tests as f64) < ALPHA && b.hit >= MIN_HELD_OUT_HITS;
    let best = match (best_above, best_band) {
        (Some(above), Some(band)) if passes(&above) || (!passes(&band) && above.p_one <= band.p_one) => above,
        (above, band) => band.or(above)?,
    };
    let Best { level, times, grid, stretches, hit, expected, p_one } = best;
    // The estimate from the whole run: every spike refines the grid the half fitted.
    let grid = searcher.refine(&times, grid);
    let tol = searcher.tolerance(grid.period);
    let residuals: Vec<f64> = times.iter().map(|&t| grid.residual(t)).filter(|r| r.abs() <= tol).collect();
    let fits = residuals.len();
    let jitter_ns = robust_sd(&residuals);
    Some(SpikePeriod {
        level: level.name,
        above_ns: level.above_ns,
        below_ns: level.below_ns,
        spikes: times.len(),
        fits,
        period_ns: grid.period,
        jitter_ns,
        phase_ns: grid.phase.rem_euclid(grid.period),
        test: HeldOutTest { stretches, hit, expected, p_one, tests, p: (p_one * tests as f64).min(1.0) },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::random::SplitMix64;

    const MS: f64 = 1e6;
    const LEVEL: [Level; 1] = [Level::above("p99.9", 100_000)];

    /// A source beating every `period` from `phase`, present at each beat with chance
    /// `present`, each beat moved by up to ±`jitter`, spikes of 150..450 µs.
    fn periodic(
        rng: &mut SplitMix64,
        span: f64,
        period: f64,
        phase: f64,
        present: f64,
        jitter: f64,
    ) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut beat = phase;
        while beat < span {
            if rng.next_f64() < present {
                let t = (beat + (rng.next_f64() * 2.0 - 1.0) * jitter).clamp(0.0, span - 1.0);
                out.push((t as u64, 150_000 + (rng.next_f64() * 300_000.0) as u64));
            }
            beat += period;
        }
        out
    }

    /// Spikes at uniformly random times, `rate` per second, of 101 µs..5 ms.
    fn random(rng: &mut SplitMix64, span: f64, rate: f64) -> Vec<(u64, u64)> {
        let n = (span / 1e9 * rate).round() as usize;
        (0..n).map(|_| ((rng.next_f64() * span) as u64, 101_000 + (rng.next_f64() * 4.9e6) as u64)).collect()
    }

    /// Bursts of noise: in each, spikes every 20..40 ms for 100..400 ms (a neighbour busy for
    /// a while, a host slicing the CPU), at random times, `bursts` of them.
    fn bursts(rng: &mut SplitMix64, span: f64, bursts: usize) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for _ in 0..bursts {
            let start = rng.next_f64() * span;
            let every = (20.0 + rng.next_f64() * 20.0) * MS;
            let length = (100.0 + rng.next_f64() * 300.0) * MS;
            let mut t = start;
            while t < (start + length).min(span) {
                out.push((t as u64, 120_000 + (rng.next_f64() * 500_000.0) as u64));
                t += every;
            }
        }
        out
    }

    fn best(samples: &[(u64, u64)], span: f64, interval: u64) -> Option<SpikePeriod> {
        search(samples, span as u64, interval, &LEVEL)
    }

    #[test]
    fn a_source_that_misses_beats_and_jitters_is_found_among_random_spikes() {
        for seed in 0..20 {
            let mut rng = SplitMix64::new(seed);
            let span = 4_000.0 * MS;
            // 100 ms, present at 60 % of beats, ±0.3 ms, among 10 random spikes a second.
            let mut samples = periodic(&mut rng, span, 100.0 * MS, 37.0 * MS, 0.6, 0.3 * MS);
            let planted = samples.len();
            samples.extend(random(&mut rng, span, 10.0));
            let found = best(&samples, span, 200_000).expect("a period to test");
            assert!(found.significant(), "seed {seed}: {found:?}");
            assert!((found.period_ns / (100.0 * MS) - 1.0).abs() < 0.005, "seed {seed}: {found:?}");
            // A planted spike with a larger random one within 10 ms is merged into it and lost.
            assert!(found.fits >= planted * 7 / 10 && found.fits <= found.spikes, "seed {seed}: {planted} {found:?}");
            assert!(found.jitter_ns > 0.05 * MS && found.jitter_ns < 0.5 * MS, "seed {seed}: {found:?}");
            assert!((found.phase_ns - 37.0 * MS).abs() < MS, "seed {seed}: {found:?}");
        }
    }

    #[test]
    fn random_spikes_never_make_a_period_and_the_test_is_calibrated() {
        let mut p_values = Vec::new();
        for seed in 0..200 {
            let mut rng = SplitMix64::new(1000 + seed);
            // 5 to 55 spikes a second over 4 s, or 4 a second over a minute.
            let (span, rate) =
                if seed % 4 == 3 { (60_000.0 * MS, 4.0) } else { (4_000.0 * MS, 5.0 + seed as f64 / 4.0) };
            let samples = random(&mut rng, span, rate);
            // None: no grid on either half fitted the 4 spikes a test needs.
            if let Some(found) = best(&samples, span, 200_000) {
                assert!(!found.significant(), "seed {seed}: {found:?}");
                p_values.push(found.test.p);
            }
        }
        assert!(p_values.len() >= 150, "{}", p_values.len());
        // Chance alone reaches p < 0.05 about as often as a calibrated test says (at most
        // 5 %, less for the Bonferroni factor), and never the bar of 0.001.
        let share = p_values.iter().filter(|&&p| p < 0.05).count() as f64 / p_values.len() as f64;
        assert!(share > 0.0 && share <= 0.06, "{share}");
    }

    #[test]
    fn bursts_of_locally_regular_noise_are_not_a_period() {
        for seed in 0..100 {
            let mut rng = SplitMix64::new(5000 + seed);
            let span = 4_000.0 * MS;
            let mut samples = bursts(&mut rng, span, 3 + seed as usize % 4);
            samples.extend(random(&mut rng, span, 5.0));
            if let Some(found) = best(&samples, span, 200_000) {
                assert!(!found.significant(), "seed {seed}: {found:?}");
            }
        }
    }

    #[test]
    fn the_period_is_the_source_s_not_a_subharmonic_and_an_odd_period_is_measured() {
        let mut rng = SplitMix64::new(7);
        let span = 10_000.0 * MS;
        // Every beat, no noise: 50, 33 and 25 ms fit the same spikes.
        let samples = periodic(&mut rng, span, 100.0 * MS, 5.0 * MS, 1.0, 0.0);
        let found = best(&samples, span, 1_000_000).unwrap();
        assert!((found.period_ns - 100.0 * MS).abs() < 1e3, "{found:?}");
        assert_eq!((found.fits, found.spikes), (100, 100));
        // A sleep of 100 ms after a 350 µs burst: a period of 100.35 ms, measured to 0.01 %.
        let samples = periodic(&mut rng, span, 100.35 * MS, 60.0 * MS, 0.8, 0.05 * MS);
        let found = best(&samples, span, 200_000).unwrap();
        assert!(found.significant() && (found.period_ns / (100.35 * MS) - 1.0).abs() < 1e-4, "{found:?}");
        // A one-second source (an SMI, a watchdog) over a minute with random spikes.
        let mut samples = periodic(&mut rng, 60_000.0 * MS, 1_000.0 * MS, 300.0 * MS, 0.7, 0.1 * MS);
        samples.extend(random(&mut rng, 60_000.0 * MS, 2.0));
        let found = best(&samples, 60_000.0 * MS, 1_000_000).unwrap();
        assert!(found.significant() && (found.period_ns / (1_000.0 * MS) - 1.0).abs() < 1e-3, "{found:?}");
    }

    #[test]
    fn too_few_spikes_or_too_short_a_run_is_not_searched() {
        let mut rng = SplitMix64::new(3);
        let span = 4_000.0 * MS;
        let samples = periodic(&mut rng, span, 100.0 * MS, 0.0, 1.0, 0.0);
        // Below the level: no spikes at all.
        assert_eq!(search(&samples, span as u64, 200_000, &[Level::above("p99", 10_000_000)]), None);
        assert_eq!(best(&samples[..MIN_SPIKES - 1], span, 200_000), None);
        // 300 ms: shorter than 16 of the shortest period searched (20 ms).
        assert_eq!(best(&samples, 300.0 * MS, 200_000), None);
        // At a 10 ms interval the shortest period is 250 ms: 4 s holds no 16 of them.
        assert_eq!(best(&samples, span, 10_000_000), None);
    }

    #[test]
    fn the_poisson_binomial_tail_is_exact() {
        assert!((poisson_binomial_tail(&[0.5; 4], 3) - 5.0 / 16.0).abs() < 1e-12);
        assert_eq!(poisson_binomial_tail(&[0.3, 0.9], 0), 1.0);
        assert!((poisson_binomial_tail(&[0.3, 0.9], 2) - 0.27).abs() < 1e-12);
        assert!((poisson_binomial_tail(&[0.3, 0.9, 0.0], 1) - (1.0 - 0.7 * 0.1)).abs() < 1e-12);
    }

    #[test]
    fn merging_keeps_one_spike_per_disturbance() {
        let samples = [(1_000, 200_000), (3_000, 900_000), (7_000, 150_000), (40_000, 500_000), (10, 50_000)];
        assert_eq!(
            spikes_within(&samples, &Level::above("p99", 100_000), 5_000.0),
            vec![(3_000.0, 900_000), (40_000.0, 500_000)]
        );
        let band = Level { name: "band", above_ns: 100_000, below_ns: Some(600_000) };
        // The 900 µs spike above the band neither counts nor swallows the 200 µs one beside it.
        assert_eq!(
            spikes_within(&samples, &band, 5_000.0),
            vec![(1_000.0, 200_000), (7_000.0, 150_000), (40_000.0, 500_000)]
        );
    }
}
