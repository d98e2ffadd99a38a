//! Measurement kernels: small loops that measure and nothing else. Set-up happens before
//! the timed region, bookkeeping after it.

pub mod outliers;

use crate::analysis::trace::Recording;
use crate::sys::trace::TraceSession;

/// A private trace instance on `cpus`, or why there is none ("no attribution: needs
/// root"): the measurement goes on either way.
pub fn start_trace(cpus: &[usize], buffer_kb_per_cpu: usize) -> std::result::Result<TraceSession, String> {
    TraceSession::start(cpus, buffer_kb_per_cpu).map_err(|e| format!("no attribution: {}", e.reason()))
}

/// A traced trial's recording, read once its window is over, with the switches out of
/// idle the kernel did not trace put back (what every analysis of it reads); or why there
/// is none (the session's start failed, or its reading).
pub fn read_trace(session: std::result::Result<TraceSession, String>) -> std::result::Result<Recording, String> {
    let recording = session?.stop().map_err(|e| format!("reading the trace: {e}"))?;
    Ok(recording.with_idle_exits())
}
