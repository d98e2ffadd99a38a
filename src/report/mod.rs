//! Turning results into text: terminal tables, JSON lines, exports. Reports read results;
//! they never run a benchmark.

pub mod compare;
pub mod export;
pub mod exporter;
pub mod figures;
pub mod findings;
pub mod html;
pub mod latency;
pub mod ncar;
pub mod overlay;
pub mod plots;
pub mod ring;
pub mod stored;
pub mod table;
pub mod trend;
pub mod workload;
