//! schedlab: measure the Linux scheduler and keep the evidence.
//!
//! Data flows one way: command-line arguments are validated into specs (`cli`, `model`),
//! a measurement kernel runs each spec in children of its own (`bench`, over the OS
//! wrappers in `sys`), and the results are printed (`report`). `commands` glues one
//! subcommand to those pieces; `main.rs` only maps errors to exit codes.

pub mod analysis;
pub mod bench;
pub mod cli;
pub mod commands;
pub mod error;
pub mod exec;
pub mod model;
pub mod report;
pub mod store;
pub mod sys;
