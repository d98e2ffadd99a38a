//! The workload family.

pub mod command;
pub mod kernel;
pub mod report;
