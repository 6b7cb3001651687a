//! The real binary's command line: exit codes and output contracts, the one file writer, and
//! the generated shell completions and man pages.

#[path = "../support/mod.rs"]
mod support;

mod completions;
mod contracts;
mod write;
