//! The analyses behind schedlab's findings: pure functions over numbers, unit-tested on
//! real data (the 1992 report's published tables among them).

pub mod answers;
pub mod attribution;
pub mod changepoint;
pub mod knee;
pub mod misses;
pub mod offcpu;
pub mod period;
pub mod random;
pub mod replay;
pub mod sequential;
#[cfg(test)]
pub mod simulate;
pub mod stats;
pub mod trace;
pub mod verdict;
