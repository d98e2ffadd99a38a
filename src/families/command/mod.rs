//! The command family: any program, measured as a family.

pub mod command;
pub mod kernel;
pub mod model;
