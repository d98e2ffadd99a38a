//! schedlab: measure the Linux scheduler and keep the evidence.
//!
//! Layers, lowest first; a module uses only those before it (docs/architecture.md;
//! `tests/layers.rs` enforces it): `error`; `analysis` (statistics over numbers);
//! `model` (the domain: options, specs, outcomes, the figure registry; no I/O); `sys`
//! (OS wrappers); `bench` (measurement kernels); `store` (the results store, export and
//! import); `exec` (suites, preflight, the trial executor, adaptive repeats); `report`
//! (rendering); `cli` (flags); `commands` (one function per subcommand). `main.rs` only
//! maps errors to exit codes.

pub(crate) mod analysis;
pub(crate) mod bench;
pub(crate) mod cli;
pub(crate) mod commands;
pub(crate) mod decide;
pub mod error;
pub(crate) mod exec;
pub(crate) mod families;
pub(crate) mod model;
pub(crate) mod report;
pub(crate) mod store;
pub mod sys;

// The library surface: what the binary and the integration tests use. Everything else is
// crate-private, so rustc reports what nothing uses.
pub use cli::Cli;
pub use commands::dispatch;
pub use model::DeadlineParams;
