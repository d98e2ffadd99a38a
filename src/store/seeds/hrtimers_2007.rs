//! The 2007 hrtimers blog post: its table of min, max and avg wakeup latency (850 wakeups
//! at 85 Hz) on two kernels, without and with high-resolution timers, as a normal user
//! and as root, built into the binary (`data/hrtimers-2007.toml`) and stored by
//! `import --reference hrtimers-2007` as two runs; its conclusions as claims;
//! `report --against hrtimers-2007`'s words. The post gives no percentiles: they are
//! unknown in the outcome.

use super::{
    bug, finished_run, Against, AgainstForm, Cells, Claim, ClaimFigure, Claims, Published, ReferenceOptions, Seed, Test,
};
use crate::error::Result;
use crate::families::latency::model::{LatencyLength, LatencyOutcome, LatencySpec, Placement, ThreadStats};
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell::Cell;
use crate::model::{BesideSpec, Policy, TrialStatus};
use crate::store::{RunRecord, TrialRecord};
use serde::{Deserialize, Serialize};

/// `import --reference hrtimers-2007`: the 2007 hrtimers post's table.
const NAME: &str = "hrtimers-2007";

const HRTIMERS_TOML: &str = include_str!("../../../data/hrtimers-2007.toml");
const HRTIMERS_FILE: &str = "data/hrtimers-2007.toml (built into schedlab)";

/// Where the post's figures were published.
const HRTIMERS_CITATION: &str = "\"hrtimers\", a blog post of February 14, 2007 (author and address not in the \
                                 copy schedlab was built from)";

pub struct Hrtimers2007;

impl Seed for Hrtimers2007 {
    fn name(&self) -> &'static str {
        NAME
    }

    fn holds(&self) -> &'static str {
        "the 2007 hrtimers post's min/max/avg table: two kernels, two runs"
    }

    fn citation(&self) -> &'static str {
        HRTIMERS_CITATION
    }

    fn runs(&self) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
        kernel_runs()
    }

    /// SCHED_FIFO lowers the average and the worst wakeup latency: on the published figures
    /// (one run per kernel and policy) only shown, on a run of `hrtimers-2007` tested.
    fn claims(&self) -> Claims {
        const NO_SAMPLES: &str = "one run a kernel and policy, no samples published: no test possible";
        let fifo_lowers = |id, claim, figure| Claim {
            id,
            claim,
            on_seed: Test::Shown { low: "fifo", high: "other", figure, why: NO_SAMPLES },
            on_run: Test::Lower { cells: Cells::All, lows: &["fifo"], highs: &["other"], figure },
        };
        Claims {
            suite: "hrtimers-2007",
            title: "The 2007 hrtimers post's conclusions",
            claims: vec![
                fifo_lowers(
                    "fifo-lowers-average",
                    "SCHED_FIFO lowers the average wakeup latency against a normal (SCHED_OTHER) task",
                    ClaimFigure::LATENCY_AVG,
                ),
                fifo_lowers(
                    "fifo-lowers-worst",
                    "SCHED_FIFO lowers the worst wakeup latency against a normal (SCHED_OTHER) task",
                    ClaimFigure::LATENCY_MAX,
                ),
                Claim {
                    id: "hrtimers-lower-latency",
                    claim: "High-resolution timers cut the worst case from about 10 ms to about 0.4 ms, the average \
                            from about 6 ms to 0.04 ms",
                    on_seed: Test::Untestable("one run a kernel, no samples published: no test possible"),
                    on_run: Test::NotCovered("a claim about two 2007 kernels: one kernel here"),
                },
            ],
        }
    }

    fn against(&self) -> Option<Against> {
        Some(Against {
            help: "the min/max/avg latency table beside the 2007 kernels' columns",
            form: AgainstForm::LatencyColumns {
                title: "wakeup latency, ns: this run beside the 2007 kernels",
                rest: "the last four the 2007 post's (imported, not measured by schedlab: \"user\" is a normal \
                       user's run at SCHED_OTHER, \"root\" one at SCHED_FIFO 99; 850 wakeups at 85 Hz); min and max \
                       over repeats, avg their mean, p50 and p99 the median over repeats; the post gives no \
                       percentiles (-)",
                notes: &["the post's table ran its digits together; its split is data/hrtimers-2007.toml's (max and \
                          avg from the post's own words, min from reasoning)"],
            },
            needs: "latency trials beside the 2007 post's min/max/avg table; run a suite with a latency experiment \
                    (e.g. `schedlab run hrtimers-2007`)",
            label: "2007",
            heading: |run| {
                format!(
                    "against {NAME}: the 2007 hrtimers table, run {run}'s latency beside 2.6.19-rc6 (without \
                     high-resolution timers) and 2.6.20-hrt-dynticks1 (with them); {HRTIMERS_CITATION}"
                )
            },
        })
    }
}

/// One column of the post's table: min, max and avg wakeup latency in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostColumn {
    pub min: u64,
    pub max: u64,
    pub avg: u64,
}

/// One kernel of the post's table: its two columns.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostKernel {
    pub id: String,
    /// The kernel as the table's header names it.
    pub heading: String,
    pub kernel_release: String,
    pub hrtimers: bool,
    /// As a normal user: SCHED_OTHER (the program's request for SCHED_FIFO fails).
    pub user: PostColumn,
    /// As root: SCHED_FIFO 99.
    pub root: PostColumn,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PostFile {
    post: Post,
    kernel: Vec<PostKernel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Post {
    title: String,
    date: String,
    frequency_hz: u64,
    period_ns: u64,
    iterations: u64,
    printed: String,
}

fn read_post() -> Result<PostFile> {
    let file: PostFile =
        toml::from_str(HRTIMERS_TOML).map_err(|e| bug(HRTIMERS_FILE, format_args!("does not read ({e})")))?;
    check_split(&file)?;
    Ok(file)
}

/// Each printed row's digits, as the four columns (vanilla user, vanilla root, hrt user,
/// hrt root) written one after the other must give them.
fn check_split(file: &PostFile) -> Result<()> {
    type PostFigure = fn(&PostColumn) -> u64;
    let rows: [(&str, PostFigure); 3] = [("min", |c| c.min), ("max", |c| c.max), ("avg", |c| c.avg)];
    for (name, figure) in rows {
        let printed = file
            .post
            .printed
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .ok_or_else(|| bug(HRTIMERS_FILE, format_args!("the printed table has no {name} row")))?;
        let joined: String =
            file.kernel.iter().flat_map(|k| [figure(&k.user), figure(&k.root)]).map(|v| v.to_string()).collect();
        if joined != printed {
            return Err(bug(
                HRTIMERS_FILE,
                format_args!("the {name} row's split {joined} is not the printed digits {printed}"),
            ));
        }
    }
    for k in &file.kernel {
        for c in [k.user, k.root] {
            if !(c.min <= c.avg && c.avg <= c.max) {
                return Err(bug(HRTIMERS_FILE, format_args!("{}: min <= avg <= max does not hold", k.id)));
            }
        }
    }
    Ok(())
}

/// The post's kernels, each with its two columns as split from the run-together table
/// (`data/hrtimers-2007.toml` explains the split).
#[cfg(test)]
pub fn post_kernels() -> Result<Vec<PostKernel>> {
    Ok(read_post()?.kernel)
}

const HRTIMERS_SPLIT_NOTE: &str = "the post's table ran its digits together (each row's four numbers printed as one); \
                                   the split is data/hrtimers-2007.toml's, from the post's own words for max and avg \
                                   and from reasoning for min (see that file's header)";

/// A kernel of the post as its run stores it: named by the table's header, marked as
/// imported.
#[derive(Serialize)]
struct PostMachine<'a> {
    hostname: String,
    kernel_release: &'a str,
    hrtimers: bool,
    imported: bool,
    figures: &'static str,
    source: String,
}

/// One column of a kernel (the user's or root's, with its policy and priority) as an ok
/// latency trial: the post's min, max and avg, its percentiles and run-queue figures
/// unknown.
fn column_trial(
    post: &Post,
    (column, policy, prio): (PostColumn, Policy, i32),
    seq: usize,
    started: &str,
) -> TrialRecord {
    let mut params = Cell::new();
    params.insert("freq", post.frequency_hz);
    params.insert("loops", post.iterations);
    params.insert("policy", policy.as_str());
    let spec = LatencySpec {
        interval_ns: post.period_ns,
        length: LatencyLength::Loops(post.iterations),
        policy,
        prio,
        placement: Placement::Unpinned,
        hold_dma_latency: false,
        break_ns: None,
        beside: BesideSpec::default(),
    };
    let stats = ThreadStats {
        cpu: None,
        samples: post.iterations,
        overruns: 0,
        min_ns: column.min,
        avg_ns: column.avg as f64,
        p50_ns: None,
        p90_ns: None,
        p99_ns: None,
        p999_ns: None,
        p9999_ns: None,
        max_ns: column.max,
        run_delay_ns: None,
        migrations: None,
    };
    let outcome = LatencyOutcome {
        threads: vec![stats.clone()],
        all: stats,
        // The post printed one thread's figures and nothing of how the run was set up.
        ..LatencyOutcome::default()
    };
    TrialRecord {
        seq: seq as i64,
        experiment: 0,
        family: Family::Latency,
        repeat: 1,
        params,
        spec: Some(TrialSpec::Latency(spec)),
        outcome: Some(Outcome::Latency(outcome)),
        status: TrialStatus::Ok,
        started: started.to_string(),
        elapsed_s: 0.0,
    }
}

/// The 2007 post's table as two finished runs, one per kernel (2.6.19-rc6 vanilla,
/// 2.6.20-hrt-dynticks1), each with two ok latency trials: as a normal user (SCHED_OTHER)
/// and as root (SCHED_FIFO 99), 850 wakeups at 85 Hz. min, max and avg are the post's;
/// the percentiles are unknown (`None`), as are the run-queue figures; overruns are 0
/// (every max is below the period).
fn kernel_runs() -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
    let file = read_post()?;
    let post = &file.post;
    let started = format!("{}T00:00:00.000Z", post.date);
    let mut out = Vec::new();
    for k in &file.kernel {
        let mut trials = Vec::new();
        for (seq, (column, policy, prio)) in
            [(k.user, Policy::Other, 0), (k.root, Policy::Fifo, 99)].into_iter().enumerate()
        {
            if column.max >= post.period_ns {
                return Err(bug(HRTIMERS_FILE, format_args!("{}: a max of a whole period is an overrun", k.id)));
            }
            trials.push(column_trial(post, (column, policy, prio), seq, &started));
        }
        let hrt = if k.hrtimers { "with high-resolution timers" } else { "without high-resolution timers" };
        let machine = PostMachine {
            hostname: format!("Linux {} (hrtimers 2007, published)", k.heading),
            kernel_release: &k.kernel_release,
            hrtimers: k.hrtimers,
            imported: true,
            figures: "published in the post; built into schedlab: imported, not measured by schedlab",
            source: format!("{HRTIMERS_CITATION}: the table's \"{}\" columns", k.heading),
        };
        let notice = format!(
            "published figures: the 2007 hrtimers post's \"{}\" columns ({hrt}), imported, not measured by schedlab; \
             the post gives min, max and avg of {} wakeups at {} Hz as a normal user (SCHED_OTHER) and as root \
             (SCHED_FIFO 99): its percentiles are unknown",
            k.heading, post.iterations, post.frequency_hz
        );
        let suite_text = format!(
            "{HRTIMERS_CITATION}\n\"{}\": wake every 1/{} s ({} ns), {} times, as a normal user and as root \
             (SCHED_FIFO 99); ns\n\nthe table as printed:\n{}\n\nthis run, \"{}\":\n  user: min {} max {} avg {}\n  \
             root (SCHED_FIFO): min {} max {} avg {}\n",
            post.title,
            post.frequency_hz,
            post.period_ns,
            post.iterations,
            post.printed.trim(),
            k.heading,
            k.user.min,
            k.user.max,
            k.user.avg,
            k.root.min,
            k.root.max,
            k.root.avg
        );
        let published = Published {
            identity: format!("reference/{NAME}/{}", k.id),
            suite_name: format!("{NAME}-published"),
            suite_text,
            options: ReferenceOptions { kernel: Some(&k.id), ..ReferenceOptions::of(NAME) },
            machine,
            started: started.clone(),
            warnings: vec![notice, HRTIMERS_SPLIT_NOTE.to_string()],
        };
        out.push((finished_run(published, trials.len()), trials));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_post_is_two_kernels_split_from_the_printed_digits() {
        let kernels = post_kernels().unwrap();
        assert_eq!(kernels.len(), 2);
        let columns: Vec<[u64; 3]> =
            kernels.iter().flat_map(|k| [k.user, k.root]).map(|c| [c.min, c.max, c.avg]).collect();
        assert_eq!(
            columns,
            [
                [2_809_853, 10_877_151, 6_862_276],
                [2_331_812, 10_091_750, 6_208_266],
                [2_939, 393_117, 37_788],
                [2_803, 226_885, 30_500]
            ]
        );
        // The post's sentences: worst case about 10 ms -> about 0.4 ms, average about
        // 6 ms -> 0.04 ms.
        assert!(
            kernels[0].user.max.abs_diff(10_000_000) < 1_000_000
                && kernels[0].root.max.abs_diff(10_000_000) < 1_000_000
        );
        assert!(kernels[1].user.max.abs_diff(400_000) < 10_000);
        assert!(kernels[0].user.avg / 1_000_000 == 6 && kernels[0].root.avg / 1_000_000 == 6);
        assert!(kernels[1].user.avg.abs_diff(40_000) < 5_000 && kernels[1].root.avg.abs_diff(40_000) < 10_000);
    }

    #[test]
    fn the_post_runs_know_min_max_avg_and_nothing_else() {
        let runs = kernel_runs().unwrap();
        assert_eq!(runs.len(), 2);
        let (run, trials) = &runs[1];
        assert_eq!(run.machine.kernel_release(), Some("2.6.20-hrt-dynticks1"));
        assert!(run.machine.is_imported());
        assert_eq!(trials.len(), 2);
        let root = trials[1].outcome.as_ref().and_then(Outcome::latency).unwrap();
        assert_eq!(
            (root.all.min_ns, root.all.max_ns, root.all.avg_ns, root.all.samples),
            (2803, 226_885, 30_500.0, 850)
        );
        assert_eq!((root.all.p50_ns, root.all.p99_ns, root.all.run_delay_ns), (None, None, None));
        assert_eq!(root.all.overruns, 0);
        let TrialSpec::Latency(spec) = trials[1].spec.as_ref().unwrap() else { panic!("a latency spec") };
        assert_eq!((spec.policy, spec.prio, spec.interval_ns), (Policy::Fifo, 99, 11_764_705));
        assert_ne!(runs[0].0.uuid, run.uuid);
        assert_eq!(kernel_runs().unwrap()[1].0.uuid, run.uuid, "fixed ids");
    }
}
