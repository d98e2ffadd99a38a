//! Turning results into text: terminal tables and JSON lines. Reports read results;
//! they never run a benchmark.

pub mod latency;
pub mod ring;
pub mod table;
pub mod workload;
