//! The command line: clap definitions only. Each mode's behaviour lives in its own file.

use crate::input::InputArgs;
use crate::report;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "sm120-doctor",
    version,
    about = "Diagnose vLLM start-up failures on NVIDIA Blackwell SM120 GPUs",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// When text output is coloured: auto (a terminal, unless NO_COLOR, CLICOLOR=0 or
    /// TERM=dumb says otherwise; CLICOLOR_FORCE forces it), always or never.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: crate::report::ColorChoice,
    /// With no subcommand: the interactive TUI on the live host, the demo or a recorded host.
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// Options of the interactive TUI (the no-subcommand mode).
#[derive(Debug, Clone, Args, Default)]
pub struct TuiArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Walk the onboarding checklist for a new Blackwell workstation as well.
    #[arg(long)]
    pub onboard: bool,
    /// Do not run Python: this host's Python stack is not collected (the version checks say
    /// "not checked"). For a host or container whose own python3 is not vLLM's; live host only.
    #[arg(long = "no-python", conflicts_with_all = ["demo", "snapshot", "collect_env"])]
    pub no_python: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Diagnose a host: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input, 3 undetermined: a log shows no outcome, or with --strict a check was not run).
    Check(CheckArgs),
    /// Match log files against the known failure signatures only.
    Classify(ClassifyArgs),
    /// Write a diagnostic report (Markdown for a GitHub issue, JSON, or text), redacted by default.
    Report(ReportArgs),
    /// Apply remedies to a vLLM launch: a command, script, `docker run`, compose file, Kubernetes
    /// manifest, Helm values, systemd unit or env file.
    Fix(FixArgs),
    /// Write a bash script that applies a vLLM PR (#43923) safely: dry-run, backup, rollback.
    PatchScript(PatchScriptArgs),
    /// Knowledge-base tools.
    Kb {
        #[command(subcommand)]
        command: KbCommand,
    },
    /// Collect this host live and write the snapshot (YAML; JSON when FILE ends in .json).
    Snapshot(SnapshotArgs),
    /// Live probes that measure on this host.
    Probe {
        #[command(subcommand)]
        command: ProbeCommand,
    },
    /// Run a vLLM launch as a wrapper and diagnose it from its own output and environment:
    /// `run [OPTIONS] -- CMD ARGS…`. Exit status: the launch's (128+N when a signal N ended
    /// it); 125 the doctor failed, 126 CMD not executable, 127 CMD not found.
    Run(RunArgs),
    /// Print a shell completion script (bash, zsh or fish).
    Completions(crate::shell_integration::CompletionsArgs),
    /// Print the man page, or write every page into a directory with -o.
    Man(crate::shell_integration::ManArgs),
    /// The child side of `probe p2p` (internal).
    #[command(name = "__p2p-child", hide = true)]
    P2pChild(P2pChildArgs),
}

#[derive(Debug, Subcommand)]
pub enum KbCommand {
    /// Validate a knowledge-base directory (default: the embedded one).
    Lint { dir: Option<PathBuf> },
    /// List the facts that checks may use.
    Facts,
    /// List the remedies `fix --remedy ID` takes: id, confidence, cost and the findings that
    /// offer each (default: the embedded knowledge base).
    Remedies {
        #[arg(long = "kb", value_name = "DIR")]
        kb: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Write to FILE instead of stdout (never overwrites without --force).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub force: bool,
    /// The Python interpreter to inspect (default: active venv, conda env, else python3).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Time limit for the Python script, seconds.
    #[arg(long = "python-timeout", value_name = "SECS", default_value_t = 15.0)]
    pub python_timeout: f64,
    /// Do not run Python at all.
    #[arg(long = "no-python", conflicts_with = "python")]
    pub no_python: bool,
    /// Run the allocator/IPC probe too and record it in the snapshot.
    #[arg(long)]
    pub probe: bool,
    /// Print each source's collection time to stderr.
    #[arg(long)]
    pub timings: bool,
}

#[derive(Debug, Subcommand)]
pub enum ProbeCommand {
    /// Can memory from the engine's allocator config be exported through legacy CUDA IPC?
    /// Exit 0: probed, nothing refused; 1: the engine's config was refused; 2: bad input;
    /// 3: nothing could be probed (no driver, no GPU, no torch: the reason is printed).
    Ipc(ProbeIpcArgs),
    /// Does peer-to-peer really work between the GPUs? Writes a pattern both ways for every pair,
    /// reads every byte back, measures GB/s, in a child process under a hard time limit.
    /// Exit 0: every pair ok; 1: a pair hung, got wrong data or failed, or the probe could not
    /// run; 2: bad input; 3: nothing to test (fewer than two GPUs: the reason is printed).
    P2p(ProbeP2pArgs),
}

#[derive(Debug, Args)]
pub struct ProbeIpcArgs {
    /// The Python interpreter whose torch is probed (default: active venv, conda env, else python3).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// The vLLM launch command: its allocator variables are the engine's.
    #[arg(long, value_name = "CMD")]
    pub launch: Option<String>,
    /// A file holding the launch command.
    #[arg(long = "launch-file", value_name = "FILE", conflicts_with = "launch")]
    pub launch_file: Option<PathBuf>,
    /// Only the CUDA driver API path (no Python).
    #[arg(long = "native-only", conflicts_with = "python")]
    pub native_only: bool,
    /// Time limit for each torch child, seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub timeout: f64,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Walk the onboarding checklist for a new Blackwell workstation as well.
    #[arg(long)]
    pub onboard: bool,
    /// Run a live probe on this host first and diagnose with what it measures (live host only):
    /// `p2p`, the functional peer-to-peer test (`probe p2p`; the launch's TP group, else every GPU).
    #[arg(long = "probe", value_enum, value_name = "PROBE")]
    pub probe: Option<CheckProbe>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
    /// Write to FILE atomically instead of stdout (e.g. node_exporter's textfile directory).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE when it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
    /// The remedy you choose for the fix plan (repeatable); each finding at warning or above
    /// gets its cheapest otherwise.
    #[arg(long = "remedy", value_name = "ID", value_parser = crate::input::values::KbValues::Remedies, hide_possible_values = true)]
    pub remedies: Vec<String>,
    /// Hide secrets, user names, home paths and the hostname in the output (as `report` does).
    #[arg(long)]
    pub redact: bool,
    /// Text output: every finding's evidence, remedies, versions and sources, and why each
    /// question is asked (default: one line per check, the fix plan and the questions).
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Do not run Python: this host's Python stack is not collected (the version checks say
    /// "not checked"). For a host or container whose own python3 is not vLLM's; live host only.
    #[arg(long = "no-python", conflicts_with_all = ["demo", "snapshot", "collect_env"])]
    pub no_python: bool,
    /// Exit 3 (undetermined) instead of 0 when any check could not run for want of an input (the
    /// summary's "not checked"): for a script that gates a launch on `check`, 0 then means every
    /// check ran and passed or does not apply.
    #[arg(long)]
    pub strict: bool,
}

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    Json,
    /// Prometheus text exposition format, for node_exporter's textfile collector.
    Prometheus,
}

/// The probes `check --probe` can run.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckProbe {
    /// The functional peer-to-peer probe (`probe p2p`).
    P2p,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ReportFormatArg {
    /// Markdown for a GitHub issue.
    Md,
    /// The whole model (replayable with `--snapshot`).
    Json,
    /// Plain text.
    Text,
}

impl From<ReportFormatArg> for report::ReportFormat {
    fn from(f: ReportFormatArg) -> Self {
        match f {
            ReportFormatArg::Md => report::ReportFormat::Markdown,
            ReportFormatArg::Json => report::ReportFormat::Json,
            ReportFormatArg::Text => report::ReportFormat::Text,
        }
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Walk the onboarding checklist for a new Blackwell workstation as well.
    #[arg(long)]
    pub onboard: bool,
    #[arg(long, value_enum, default_value = "md")]
    pub format: ReportFormatArg,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE when it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
    /// The remedy you chose, by id (repeatable); each finding shows the cheapest otherwise.
    #[arg(long = "remedy", value_name = "ID", value_parser = crate::input::values::KbValues::Remedies, hide_possible_values = true)]
    pub remedies: Vec<String>,
    /// Keep secrets, user names, home paths and the hostname in the report.
    #[arg(long = "no-redact")]
    pub no_redact: bool,
    /// Hide GPU UUIDs as well.
    #[arg(long = "redact-gpu-uuids", conflicts_with = "no_redact")]
    pub redact_gpu_uuids: bool,
    /// Do not run Python: this host's Python stack is not collected (the version checks say
    /// "not checked"). For a host or container whose own python3 is not vLLM's; live host only.
    #[arg(long = "no-python", conflicts_with_all = ["demo", "snapshot", "collect_env"])]
    pub no_python: bool,
}

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// A log file (repeatable; - reads standard input).
    #[arg(long = "log", value_name = "FILE", required = true)]
    pub logs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[arg(long, value_name = "DIR")]
    pub kb: Option<PathBuf>,
    /// Hide secrets, user names, home paths and the hostname in the matched lines.
    #[arg(long)]
    pub redact: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum FixFormat {
    /// The rewritten launch, whole.
    Text,
    /// A unified diff against the launch as given.
    Diff,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["launch", "launch_file"])))]
pub struct FixArgs {
    // The launch to fix (--launch or --launch-file, --launch-with, --service, --container),
    // and, when no --remedy is given, the host, logs and answers the plan is made for (as
    // `check` makes it; no host option: this machine, collected live).
    #[command(flatten)]
    pub input: InputArgs,
    /// A remedy id from the knowledge base (repeatable; applied in order). Without it: the
    /// remedies of the fix plan `check` makes for this launch (`kb remedies` lists every id).
    #[arg(long = "remedy", value_name = "ID", value_parser = crate::input::values::KbValues::Remedies, hide_possible_values = true, conflicts_with_all = ["demo", "snapshot", "collect_env", "logs", "answers", "answers_file"])]
    pub remedies: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FixFormat,
    /// Write the rewritten launch to FILE (atomically); without it nothing is written.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE when it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct PatchScriptArgs {
    /// The vLLM pull request to apply.
    #[arg(long, value_name = "N")]
    pub pr: u32,
    /// The Python that runs vLLM, as the script's default (its --python overrides it).
    #[arg(long, value_name = "PATH")]
    pub python: Option<String>,
    /// A vLLM git checkout to patch, as the script's default (its --vllm-dir overrides it).
    #[arg(long = "vllm-dir", value_name = "DIR")]
    pub vllm_dir: Option<String>,
    /// Where to write the script.
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Overwrite FILE when it exists.
    #[arg(long)]
    pub force: bool,
    /// Use this knowledge-base directory instead of the embedded one.
    #[arg(long, value_name = "DIR")]
    pub kb: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ProbeP2pArgs {
    /// The GPUs to pair, as CUDA indices (e.g. 0,1); default: every GPU CUDA sees.
    #[arg(long, value_name = "LIST", conflicts_with = "tp")]
    pub gpus: Option<String>,
    /// The tensor-parallel size: GPUs 0 to N-1, the ones vLLM's TP group would take.
    #[arg(long, value_name = "N")]
    pub tp: Option<u32>,
    /// Hard time limit for the probe child, seconds; a pair still copying then is "hung".
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
    /// MiB per copy.
    #[arg(long = "size-mib", value_name = "MIB", default_value_t = 64)]
    pub size_mib: u64,
    /// Timed copies per direction and method.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub iterations: u32,
    /// Do not ask NVML for its P2P status.
    #[arg(long = "no-nvml")]
    pub no_nvml: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Run PATH as the probe child instead of this executable (for tests).
    #[arg(long = "child-program", value_name = "PATH", hide = true)]
    pub child_program: Option<PathBuf>,
    /// Print every line of the child with its arrival time to stderr.
    #[arg(long, hide = true)]
    pub trace: bool,
}

#[derive(Debug, Args)]
pub struct P2pChildArgs {
    #[arg(long, default_value = "all")]
    pub gpus: String,
    #[arg(long, default_value_t = 64 << 20)]
    pub bytes: u64,
    #[arg(long, default_value_t = 5)]
    pub iterations: u32,
}

/// `run`: wrap a launch (see `cli/run.rs`).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Keep the launch's stdout and stderr (as they arrived, interleaved) in FILE. It must not
    /// exist yet. Default: a new `sm120-doctor-run-<time>-<pid>.log` in
    /// $XDG_STATE_HOME/sm120-doctor when XDG_STATE_HOME is set, else in the current directory;
    /// its path is printed on stderr.
    #[arg(long = "log-to", value_name = "FILE")]
    pub log_to: Option<PathBuf>,
    /// Report a hang when the launch prints nothing for SECS seconds, or when its stall
    /// warnings repeat (e.g. "No available shared memory broadcast block found"). The
    /// diagnosis is printed and the launch keeps running: stop it yourself (Ctrl-C is
    /// forwarded) or let it recover. Off by default.
    #[arg(long = "hang-after", value_name = "SECS")]
    pub hang_after: Option<f64>,
    /// How the diagnosis is printed to stderr after the launch's output (or written with -o).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the diagnosis to FILE instead of stderr (never over an existing file without --force).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the -o FILE when it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
    /// The launch: the program and its arguments, after `--`.
    #[arg(value_name = "CMD", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<std::ffi::OsString>,
}
