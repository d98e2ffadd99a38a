//! Turning results into text: terminal tables, JSON lines, exports. Reports read results;
//! they never run a benchmark.

pub mod export;
pub mod latency;
pub mod ring;
pub mod stored;
pub mod table;
pub mod workload;
