//! Thin entry point: parse the command line and dispatch to a mode.

use clap::Parser;
use sm120_doctor::cli::{self, Cli};

fn main() {
    std::process::exit(cli::dispatch(&Cli::parse()));
}
