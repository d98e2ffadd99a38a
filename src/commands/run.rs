//! `schedlab run`: the main job. Until suites exist it runs the built-in quick ring
//! sweep: the NCAR process counts, all members on one CPU.

use crate::cli::{parse_procs, RunArgs, NCAR_COUNTS};
use crate::commands::ring::sweep;
use crate::error::Result;
use crate::model::{Ipc, Pin, Policy, RingLength, RingMode, RingSpec};

/// Laps per ring in the default sweep: enough for stable medians, about a second here.
const RUN_LAPS: u64 = 2_000;

pub fn run(args: &RunArgs) -> Result<()> {
    let counts = parse_procs(NCAR_COUNTS).expect("the built-in counts parse");
    let specs: Vec<RingSpec> = counts
        .0
        .into_iter()
        .map(|procs| RingSpec {
            procs,
            length: RingLength::Laps(RUN_LAPS),
            mode: RingMode::Process,
            ipc: Ipc::Pipe,
            pin: Pin::Same,
            cpus: None,
            policy: Policy::Other,
            prio: 0,
            work_kb: 0,
            timeout: None,
        })
        .collect();
    sweep(&specs, args.json).map(|_| ())
}
