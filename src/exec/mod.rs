//! Planning and running trials: suites parsed into a plan (`suite`), the checks that refuse
//! a plan before anything runs (`preflight`), the executor that runs every trial in a
//! child of its own (`runner`), and the adaptive repeats that decide how many trials a
//! cell gets (`adaptive`).

pub mod adaptive;
pub mod noise;
pub mod preflight;
pub mod runner;
pub mod suite;
