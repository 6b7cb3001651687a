//! Thin entry point: parse the command line and dispatch to a mode.

use clap::{CommandFactory, Parser};
use sm120_doctor::cli::{self, Cli, Command};
use sm120_doctor::shell_integration;

fn main() {
    let args = Cli::parse();
    let code = match &args.command {
        Some(Command::Check(a)) => cli::run_check(a),
        Some(Command::Classify(a)) => cli::run_classify(a),
        Some(Command::Report(a)) => cli::run_report(a),
        Some(Command::Kb { command }) => cli::run_kb(command),
        Some(Command::Fix(a)) => cli::run_fix(a),
        Some(Command::PatchScript(a)) => cli::run_patch_script(a),
        Some(Command::Snapshot(a)) => cli::run_snapshot(a),
        Some(Command::Probe { command }) => cli::run_probe(command),
        Some(Command::Completions(a)) => shell_integration::run_completions(Cli::command(), a),
        Some(Command::Man(a)) => shell_integration::run_man(Cli::command(), a),
        None => sm120_doctor::tui::run(&args.tui),
    };
    std::process::exit(code);
}
