//! Planning and running trials: suites parsed into a plan (`suite`), the checks that refuse
//! a plan before anything runs (`preflight`), the executor that runs every trial in a
//! child of its own (`runner`), the one pipeline every command's trials go through
//! (`pipeline`: the executor, then the command's sinks, one rule for a failed trial), and
//! the adaptive repeats that decide how many trials a cell gets (`adaptive`).

pub mod adaptive;
pub mod family;
pub mod noise;
pub mod pipeline;
pub mod preflight;
pub mod runner;
pub mod suite;
