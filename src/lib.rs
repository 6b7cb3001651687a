//! sm120-doctor: diagnose vLLM start-up failures on NVIDIA Blackwell SM120 GPUs.
//!
//! Imports run one way: cli → report → engine → kb, and everything → snapshot/facts.
//! Collectors and importers write a [`snapshot::HostSnapshot`]; the [`engine`] is a pure
//! function of (snapshot, answers, logs); every front end renders the engine's model.

pub mod cli;
pub mod collect;
pub mod engine;
pub mod facts;
pub mod import;
pub mod kb;
pub mod launch;
pub mod probe;
pub mod remedy;
pub mod report;
pub mod shell_integration;
pub mod snapshot;
pub mod tui;
pub mod yaml;
