//! The server's trial in the executor: its checks (the policy, nice and CPUs its threads
//! ask for, and whether the workers could serve the rate at all) and its run in the trial
//! process.

use super::model::{check_worker_capacity, Rate, ServerSpec};
use crate::error::Result;
use crate::exec::family::FamilyTrial;
use crate::exec::family::{Extras, Reply};
use crate::exec::preflight;
use crate::families::list::Outcome;
use crate::sys::{limits, load, sched};

/// Can every thread have its policy, nice and CPUs, and can the workers serve the rate?
/// A rate whose CPU work alone needs more than the CPUs give is allowed (an overload is a
/// question too) but said.
pub fn preflight(spec: &ServerSpec) -> Result<()> {
    let cpus = sched::resolve_cpus(spec.cpus.as_deref())?.len();
    let threads = spec.message_threads * (spec.workers + 1);
    preflight::scheduling(spec.policy, spec.prio, None, threads as usize)?;
    limits::check_task_budget(
        u64::from(threads) + 1,
        &format!(
            "a server of {} message thread(s) × {} worker(s) (and its trial process)",
            spec.message_threads, spec.workers
        ),
    )?;
    if let Some(nice) = spec.nice {
        sched::probe_nice(nice)?;
    }
    match spec.rate {
        Rate::Rps(rps) => {
            let busy = rps as f64 * spec.work_ns as f64 / 1e9;
            if busy > cpus as f64 {
                eprintln!(
                    "schedlab: warning: --rps {rps} × --work {} asks for {:.0}% of {cpus} CPU(s): the server is \
                     overloaded, requests queue and are dropped past {} a message thread",
                    crate::model::format_ns(spec.work_ns),
                    busy / cpus as f64 * 100.0,
                    super::kernel::QUEUE_CAPACITY
                );
            }
        }
        Rate::TargetUtilPct(pct) => {
            // The search keeps the rate within 1 a second and the workers' capacity: both must
            // hold the rate the target starts from.
            let rps = spec.rps_for_util(f64::from(pct), cpus).max(1.0);
            check_worker_capacity(spec, rps, &format!("--target-util {pct}% of {cpus} CPU(s)"))?;
        }
    }
    Ok(())
}

impl FamilyTrial for ServerSpec {
    fn preflight(&self) -> Result<()> {
        preflight(self)
    }

    fn measure(&self, _repeat: u32, _extras: &Extras) -> Result<Reply> {
        let load_plan = preflight::load(&self.load)?;
        let (mut outcome, load) = load::beside(load_plan.as_ref(), || super::kernel::run(self))?;
        outcome.beside.load = load;
        Reply::ok(Outcome::Server(outcome))
    }

    fn measured_cpus(&self) -> Vec<usize> {
        self.cpus.clone().unwrap_or_default()
    }

    fn estimate_s(&self, _cpus: f64) -> f64 {
        self.longest().as_secs_f64()
    }
}
