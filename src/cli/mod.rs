//! The command-line modes: [`args`] holds the clap definitions, each mode has its own file, and
//! [`dispatch`] runs the one the arguments name (no subcommand: the TUI).
//!
//! Every mode turns its inputs into the engine's through [`crate::input`], so the CLI and the
//! TUI read the same host, launch, logs and answers the same way.

pub mod args;
pub mod check;
pub mod classify;
pub mod fix;
pub mod kb;
pub mod man;
pub mod patch_script;
pub mod probe;
pub mod report;
pub mod run;
pub mod snapshot;
pub mod tui;

pub use args::{
    CheckArgs, CheckFormat, CheckProbe, ClassifyArgs, Cli, Command, FixArgs, FixFormat, Format,
    KbCommand, P2pChildArgs, PatchScriptArgs, ProbeCommand, ProbeIpcArgs, ProbeP2pArgs, ReportArgs,
    ReportFormatArg, RunArgs, SnapshotArgs, TuiArgs,
};

use crate::engine::{self, Mode};
use crate::input::{self, InputArgs, Inputs, UsageError};
use crate::report::{EXIT_OK, EXIT_USAGE};
use clap::CommandFactory;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Run the mode the arguments name; returns the exit code.
pub fn dispatch(cli: &Cli) -> i32 {
    crate::report::set_color_choice(cli.color);
    match &cli.command {
        Some(Command::Check(a)) => check::run(a),
        Some(Command::Classify(a)) => classify::run(a),
        Some(Command::Report(a)) => report::run(a),
        Some(Command::Kb { command }) => kb::run(command),
        Some(Command::Fix(a)) => fix::run(a),
        Some(Command::PatchScript(a)) => patch_script::run(a),
        Some(Command::Snapshot(a)) => snapshot::run(a),
        Some(Command::Probe { command }) => probe::run(command),
        Some(Command::P2pChild(a)) => probe::run_p2p_child(a),
        Some(Command::Run(a)) => run::run(a),
        Some(Command::Completions(a)) => {
            crate::shell_integration::run_completions(Cli::command(), a)
        }
        Some(Command::Man(a)) => {
            crate::shell_integration::run_man(Cli::command(), &man::sections(), a)
        }
        None => tui::run(&cli.tui),
    }
}

/// Write to stdout; a closed pipe (`| head`) is a normal end, not a panic.
pub fn emit(text: &str) -> i32 {
    let text = crate::report::sanitize::terminal_safe(text, crate::report::Style::detect().color);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            esay!("sm120-doctor: cannot write output: {e}");
            EXIT_USAGE
        }
    }
}

/// Is standard output a terminal or a regular file (not a pipe to another program)?
fn stdout_is_terminal_or_file() -> bool {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        return true;
    }
    // SAFETY: fstat(2) on descriptor 1 into a zeroed struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(1, &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFREG
    }
}

/// Say on stderr that JSON about to be written to a terminal or a file is not redacted
/// (`to_file`: it goes to a file named with `-o`).
pub fn note_unredacted_json(to_file: bool, how: &str) {
    if to_file || stdout_is_terminal_or_file() {
        esay!(
            "sm120-doctor: note: this JSON is not redacted: it may hold secrets, user names, home \
             paths and the hostname ({how} before sharing it)"
        );
    }
}

/// Print a usage error; exit code 2.
pub fn fail(e: UsageError) -> i32 {
    esay!("sm120-doctor: {}", e.0);
    EXIT_USAGE
}

/// Resolve the inputs and run the engine: the shared start of `check` and `report`.
fn resolve_and_diagnose(
    input: &InputArgs,
    onboard: bool,
    python: input::LivePython,
) -> Result<(Inputs, Mode, engine::Diagnosis), UsageError> {
    let inputs = input::resolve_with(input, python)?;
    let (mode, d) = diagnose_inputs(&inputs, onboard);
    Ok((inputs, mode, d))
}

/// Run the engine over resolved inputs.
fn diagnose_inputs(inputs: &Inputs, onboard: bool) -> (Mode, engine::Diagnosis) {
    // A replayed JSON report made with `--onboard` replays with the checklist too.
    let mode = if onboard || inputs.replay_onboard {
        Mode::All
    } else {
        Mode::Failures
    };
    let d = engine::diagnose(
        &inputs.kb,
        &inputs.snapshot,
        &inputs.answers,
        &inputs.logs,
        mode,
    );
    (mode, d)
}

/// A `--…-timeout` value in seconds, checked.
fn seconds(v: f64, flag: &str) -> Result<std::time::Duration, UsageError> {
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(std::time::Duration::from_secs_f64(v))
    } else {
        Err(UsageError(format!(
            "{flag} {v}: expected a number of seconds between 0 and 86400"
        )))
    }
}

/// The interpreter `--python` names, else the active venv / conda env, else python3.
fn python_for(explicit: Option<&Path>) -> PathBuf {
    crate::collect::python::find_interpreter(explicit, &|n| std::env::var(n).ok(), &|p| p.exists())
        .0
}
