//! Measurement kernels: small loops that measure and nothing else. Set-up happens before
//! the timed region, bookkeeping after it.

pub mod latency;
pub mod outliers;
pub mod ring;
pub mod workload;
