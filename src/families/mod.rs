//! The benchmark families, one folder each. A family's folder holds every layer of it,
//! one file a layer: `model.rs` (options, spec, outcome, figures), `kernel.rs` (the
//! measurement), `report.rs` (its live text) and `command.rs` (its subcommand). Each
//! file sits in the layer its name says (docs/architecture.md).

pub mod command;
pub mod latency;
pub mod ring;
pub mod workload;
