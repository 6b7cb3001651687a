//! The terminal UI: state changes without a terminal, screen snapshots, the first frame before
//! the live host, the entry point without a terminal, the real binary in tmux, and the H200 capture.

#[path = "../support/mod.rs"]
mod support;

mod app;
mod cli;
mod first_frame;
mod fixture_h200;
mod no_survivor;
mod screens;
mod tmux;
