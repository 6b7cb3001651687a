//! Command-line interface: argument definitions and the non-TUI modes.

use crate::engine::classify::LogText;
use crate::engine::{self, Answer, Answers, Mode};
use crate::import::{self, InputError};
use crate::kb::{self, KnowledgeBase};
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Style};
use crate::snapshot::{HostSnapshot, Probed};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

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
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Diagnose a host: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input).
    Check(CheckArgs),
    /// Match log files against the known failure signatures only.
    Classify(ClassifyArgs),
    /// Write a diagnostic report (Markdown for a GitHub issue, JSON, or text), redacted by default.
    Report(ReportArgs),
    /// Apply remedies to a vLLM launch command, script, `docker run` or compose file.
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
    /// Print a shell completion script (bash, zsh or fish).
    Completions(crate::shell_integration::CompletionsArgs),
    /// Print the man page, or write every page into a directory with -o.
    Man(crate::shell_integration::ManArgs),
}

#[derive(Debug, Subcommand)]
pub enum KbCommand {
    /// Validate a knowledge-base directory (default: the embedded one).
    Lint { dir: Option<PathBuf> },
    /// List the facts that checks may use.
    Facts,
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
    /// Exit 0: probed (or skipped with the reason); 1: the engine's config was refused; 2: bad input.
    Ipc(ProbeIpcArgs),
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

/// Where the host facts come from, plus launch, logs and answers. Shared by every mode.
#[derive(Debug, Clone, Args, Default)]
pub struct InputArgs {
    /// Use the embedded demo scenario (the #47266 reporter's 2× RTX PRO 6000 host).
    #[arg(long)]
    pub demo: bool,
    /// A snapshot file (YAML or JSON) written by this tool, or a JSON report.
    #[arg(long, value_name = "FILE", conflicts_with = "demo")]
    pub snapshot: Option<PathBuf>,
    /// The output of `vllm collect-env` or `python -m torch.utils.collect_env`.
    #[arg(long = "collect-env", value_name = "FILE", conflicts_with_all = ["demo", "snapshot"])]
    pub collect_env: Option<PathBuf>,
    /// The vLLM launch command, as you run it.
    #[arg(long, value_name = "CMD")]
    pub launch: Option<String>,
    /// A file holding the launch command or script.
    #[arg(long = "launch-file", value_name = "FILE", conflicts_with = "launch")]
    pub launch_file: Option<PathBuf>,
    /// A log file from the failing run (repeatable).
    #[arg(long = "log", value_name = "FILE")]
    pub logs: Vec<PathBuf>,
    /// Answer a question the tool cannot decide: NODE=yes|no|unsure (repeatable).
    #[arg(long = "answer", value_name = "NODE=ANSWER")]
    pub answers: Vec<String>,
    /// A YAML file of answers (`node: yes`).
    #[arg(long = "answers", value_name = "FILE")]
    pub answers_file: Option<PathBuf>,
    /// Use this knowledge-base directory instead of the embedded one.
    #[arg(long, value_name = "DIR")]
    pub kb: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Walk the onboarding checklist for a new Blackwell workstation as well.
    #[arg(long)]
    pub onboard: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
    /// Write to FILE atomically instead of stdout (e.g. node_exporter's textfile directory).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE when it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
}

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    Json,
    /// Prometheus text exposition format, for node_exporter's textfile collector.
    Prometheus,
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
    #[arg(long = "remedy", value_name = "ID")]
    pub remedies: Vec<String>,
    /// Keep secrets, user names, home paths and the hostname in the report.
    #[arg(long = "no-redact")]
    pub no_redact: bool,
    /// Hide GPU UUIDs as well.
    #[arg(long = "redact-gpu-uuids", conflicts_with = "no_redact")]
    pub redact_gpu_uuids: bool,
}

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// A log file (repeatable).
    #[arg(long = "log", value_name = "FILE", required = true)]
    pub logs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[arg(long, value_name = "DIR")]
    pub kb: Option<PathBuf>,
}

/// Everything a mode needs, resolved from the arguments.
pub struct Inputs {
    pub kb: KnowledgeBase,
    pub snapshot: HostSnapshot,
    pub logs: Vec<LogText>,
    pub answers: Answers,
}

/// A user-facing failure: message for stderr, exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl From<InputError> for UsageError {
    fn from(e: InputError) -> Self {
        UsageError(e.to_string())
    }
}

impl From<kb::KbErrors> for UsageError {
    fn from(e: kb::KbErrors) -> Self {
        UsageError(format!("knowledge base errors:\n{e}"))
    }
}

pub fn parse_answer(s: &str) -> Result<(String, Answer), UsageError> {
    let (node, ans) = s
        .split_once('=')
        .ok_or_else(|| UsageError(format!("--answer {s:?}: expected NODE=yes|no|unsure")))?;
    let a = match ans.trim().to_ascii_lowercase().as_str() {
        "yes" | "y" | "true" => Answer::Yes,
        "no" | "n" | "false" => Answer::No,
        "unsure" | "?" | "dont-know" => Answer::Unsure,
        other => {
            return Err(UsageError(format!(
                "--answer {node}: {other:?} is not yes, no or unsure"
            )));
        }
    };
    Ok((node.trim().to_string(), a))
}

fn load_answers(input: &InputArgs, kb: &KnowledgeBase) -> Result<Answers, UsageError> {
    let mut answers = Answers::new();
    if let Some(path) = &input.answers_file {
        let text = import::read_text(path)?;
        let map: Answers = serde_saphyr::from_str(&text).map_err(|e| {
            let (l, c, msg) = crate::yaml::error_parts(&e);
            UsageError(format!("{}:{l}:{c}: {msg}", path.display()))
        })?;
        answers.extend(map);
    }
    for a in &input.answers {
        let (node, ans) = parse_answer(a)?;
        answers.insert(node, ans);
    }
    for node in answers.keys() {
        if kb.find_node(node).is_none() {
            return Err(UsageError(format!(
                "answer for {node:?}: no such question in the knowledge base"
            )));
        }
    }
    Ok(answers)
}

fn load_logs(paths: &[PathBuf]) -> Result<Vec<LogText>, UsageError> {
    paths
        .iter()
        .map(|p| {
            // Logs may hold stray bytes (progress bars, binary dumps): read lossily.
            let bytes = std::fs::read(p)
                .map_err(|e| UsageError(format!("{}: cannot read log: {e}", p.display())))?;
            Ok(LogText {
                name: p.display().to_string(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            })
        })
        .collect()
}

/// Resolve the host snapshot from the input arguments (no live collection here).
pub fn resolve_snapshot(input: &InputArgs) -> Result<HostSnapshot, UsageError> {
    let mut snap = if let Some(p) = &input.snapshot {
        import::load_snapshot(p)?
    } else if let Some(p) = &input.collect_env {
        let text = import::read_text(p)?;
        import::collect_env::parse(&p.display().to_string(), &text)?
    } else if input.demo {
        import::demo_snapshot()
    } else {
        // No host input: this host, live (Python metadata only; importing torch takes seconds).
        let opts = crate::collect::CollectOptions {
            python_mode: Some(crate::collect::python::PythonMode::Fast),
            ..Default::default()
        };
        crate::collect::collect_live(&opts).0
    };
    let launch_text = match (&input.launch, &input.launch_file) {
        (Some(cmd), _) => Some((cmd.clone(), "--launch".to_string())),
        (None, Some(p)) => Some((import::read_text(p)?, p.display().to_string())),
        (None, None) => None,
    };
    if let Some((text, name)) = launch_text {
        let launch = crate::launch::parse_launch(&text).map_err(|e| match e {
            crate::launch::LaunchError::Syntax { line, message } => {
                UsageError(format!("{name}:{line}: {message}"))
            }
            other => UsageError(format!("{name}: {other}")),
        })?;
        snap.launch = Probed::Value(launch);
    }
    Ok(snap)
}

pub fn resolve(input: &InputArgs) -> Result<Inputs, UsageError> {
    let kb = kb::load(input.kb.as_deref())?;
    let snapshot = resolve_snapshot(input)?;
    // A JSON report replays with its answers and matched log lines (given ones take precedence).
    let replay = match &input.snapshot {
        Some(p) => import::load_replay(p)?,
        None => None,
    };
    let mut logs = load_logs(&input.logs)?;
    if let Some(r) = &replay
        && input.logs.is_empty()
    {
        logs.extend(r.logs.iter().cloned());
    }
    if input.demo && input.logs.is_empty() {
        logs.push(LogText {
            name: import::demo::LOG_NAME.into(),
            text: import::demo::LOG.into(),
        });
    }
    let mut answers = load_answers(input, &kb)?;
    if let Some(r) = replay {
        for (node, a) in r.answers {
            if kb.find_node(&node).is_none() {
                return Err(UsageError(format!(
                    "answer for {node:?} in the replayed report: no such question in the knowledge base"
                )));
            }
            answers.entry(node).or_insert(a);
        }
    }
    Ok(Inputs {
        kb,
        snapshot,
        logs,
        answers,
    })
}

/// Write to stdout; a closed pipe (`| head`) is a normal end, not a panic.
pub fn emit(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("sm120-doctor: cannot write output: {e}");
            EXIT_USAGE
        }
    }
}

fn fail(e: UsageError) -> i32 {
    eprintln!("sm120-doctor: {}", e.0);
    EXIT_USAGE
}

/// A replayed JSON report made with `--onboard` replays with the checklist too.
fn replay_onboard(input: &InputArgs) -> bool {
    input
        .snapshot
        .as_deref()
        .and_then(|p| import::load_replay(p).ok().flatten())
        .is_some_and(|r| r.onboard)
}

/// Resolve the inputs and run the engine: the shared start of `check` and `report`.
fn resolve_and_diagnose(
    input: &InputArgs,
    onboard: bool,
) -> Result<(Inputs, Mode, engine::Diagnosis), UsageError> {
    let inputs = resolve(input)?;
    let mode = if onboard || replay_onboard(input) {
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
    Ok((inputs, mode, d))
}

pub fn run_check(args: &CheckArgs) -> i32 {
    let (inputs, _, d) = match resolve_and_diagnose(&args.input, args.onboard) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let text = match args.format {
        CheckFormat::Text => {
            report::check::check_text(&inputs.kb, &inputs.snapshot, &d, Style::detect())
        }
        CheckFormat::Json => {
            let mut s =
                serde_json::to_string_pretty(&report::check::check_json(&inputs.snapshot, &d))
                    .unwrap_or_default();
            s.push('\n');
            s
        }
        CheckFormat::Prometheus => {
            let run = report::prometheus::RunInfo {
                timestamp_seconds: report::textfile::now_unix_seconds(),
            };
            report::prometheus::render(&inputs.kb, &inputs.snapshot, &d, &run)
        }
    };
    let rc = match &args.output {
        None => emit(&text),
        Some(path) => match report::textfile::write_replace(path, text.as_bytes(), args.force) {
            Ok(()) => EXIT_OK,
            Err(e) => fail(UsageError(e)),
        },
    };
    if rc != EXIT_OK {
        return rc;
    }
    if d.worst() >= kb::schema::Severity::Warning {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// Build, redact and render the report for these arguments (the `report` mode without output).
pub fn report_text(args: &ReportArgs) -> Result<String, UsageError> {
    let (inputs, mode, d) = resolve_and_diagnose(&args.input, args.onboard)?;
    let input = report::ReportInput {
        kb: &inputs.kb,
        snapshot: &inputs.snapshot,
        answers: &inputs.answers,
        logs: &inputs.logs,
        mode,
        diagnosis: &d,
        remedy_choices: &args.remedies,
    };
    let redact = (!args.no_redact).then_some(report::RedactOptions {
        gpu_uuids: args.redact_gpu_uuids,
    });
    let model = report::prepare(&input, redact).map_err(UsageError)?;
    Ok(report::render(&model, args.format.into()))
}

/// `report`: exit 0 when written, 2 on bad input or when the file exists without --force.
pub fn run_report(args: &ReportArgs) -> i32 {
    let text = match report_text(args) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    match &args.output {
        None => emit(&text),
        Some(path) => match report::write_atomically(path, text.as_bytes(), args.force) {
            Ok(()) => {
                eprintln!(
                    "sm120-doctor: wrote {} ({} bytes)",
                    path.display(),
                    text.len()
                );
                EXIT_OK
            }
            Err(e) => fail(UsageError(e.to_string())),
        },
    }
}

pub fn run_classify(args: &ClassifyArgs) -> i32 {
    let kb = match kb::load(args.kb.as_deref()) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    // Stream each file: a 100 MB log is never held whole in memory.
    let scanner = engine::classify::Scanner::new(&kb);
    let mut matches = Vec::new();
    for p in &args.logs {
        let scanned = std::fs::File::open(p)
            .and_then(|f| scanner.scan_reader(&p.display().to_string(), f, &mut matches));
        if let Err(e) = scanned {
            return fail(UsageError(format!("{}: cannot read log: {e}", p.display())));
        }
    }
    let c = engine::classify::rank(matches);
    let text = match args.format {
        Format::Text => report::check::classify_text(&c, Style::detect()),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&report::check::classify_json(&c)).unwrap_or_default()
        ),
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    if c.classes.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}

pub fn run_kb(command: &KbCommand) -> i32 {
    match command {
        KbCommand::Lint { dir } => lint(dir.as_deref()),
        KbCommand::Facts => {
            let mut s = String::new();
            for (name, what) in crate::facts::CATALOGUE {
                s.push_str(&format!("{name:32} {what}\n"));
            }
            s.push_str(&format!(
                "{:32} {}\n",
                "env.NAME", "an environment variable of the engine (null when unset)"
            ));
            s.push_str(&format!(
                "{:32} {}\n",
                "launch.flag.NAME", "a vLLM flag's value as given (null when absent)"
            ));
            emit(&s)
        }
    }
}

fn lint(dir: Option<&Path>) -> i32 {
    match kb::load(dir) {
        Ok(kb) => {
            let lints = kb::lints(&kb);
            let mut s = String::new();
            for l in &lints {
                s.push_str(&format!("warning: {}: {}\n", l.file, l.message));
            }
            let nodes: usize = kb.classes.iter().map(|c| c.def.nodes.len()).sum();
            s.push_str(&format!(
                "ok: {} ({} classes, {} nodes, {} signatures, {} remedies; {} warning(s))\n",
                kb.origin,
                kb.classes.len(),
                nodes,
                kb.signatures.len(),
                kb.remedies.len(),
                lints.len()
            ));
            emit(&s)
        }
        Err(e) => {
            eprintln!("{e}");
            eprintln!("sm120-doctor: knowledge base has {} error(s)", e.0.len());
            EXIT_USAGE
        }
    }
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
    /// The vLLM launch command, as you run it.
    #[arg(long, value_name = "CMD")]
    pub launch: Option<String>,
    /// A file holding the launch command, a script, or a docker compose file.
    #[arg(long = "launch-file", value_name = "FILE")]
    pub launch_file: Option<PathBuf>,
    /// A remedy id from the knowledge base (repeatable; applied in order).
    #[arg(long = "remedy", value_name = "ID", required = true)]
    pub remedies: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FixFormat,
    /// Write the rewritten launch to FILE (atomically); without it nothing is written.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE when it exists.
    #[arg(long)]
    pub force: bool,
    /// Use this knowledge-base directory instead of the embedded one.
    #[arg(long, value_name = "DIR")]
    pub kb: Option<PathBuf>,
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

pub fn run_fix(args: &FixArgs) -> i32 {
    let (text, name) = match (&args.launch, &args.launch_file) {
        (Some(cmd), _) => (cmd.clone(), "launch".to_string()),
        (None, Some(p)) => match import::read_text(p) {
            Ok(t) => (t, p.display().to_string()),
            Err(e) => return fail(e.into()),
        },
        (None, None) => return fail(UsageError("give --launch CMD or --launch-file FILE".into())),
    };
    let kb = match kb::load(args.kb.as_deref()) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    let outcome = match crate::remedy::fix(&text, &kb, &args.remedies) {
        Ok(o) => o,
        Err(e) => return fail(UsageError(format!("{name}: {e}"))),
    };
    for n in &outcome.notes {
        eprintln!("note: {n}");
    }
    if !outcome.changed() {
        eprintln!("sm120-doctor: the launch needs no change for these remedies");
    }
    let diff_name = Path::new(&name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "launch".into());
    // A one-liner given with --launch is shown as a line (files are shown byte for byte).
    let nl = |t: &str| {
        if args.launch.is_some() && !t.ends_with('\n') {
            format!("{t}\n")
        } else {
            t.to_string()
        }
    };
    let shown = match args.format {
        FixFormat::Text => nl(&outcome.text),
        FixFormat::Diff => {
            crate::remedy::unified_diff(&nl(&outcome.original), &nl(&outcome.text), &diff_name)
        }
    };
    if let Some(out) = &args.output {
        // Keep the permissions of a file being replaced (a launch script stays executable).
        let mode = mode_of(out);
        if let Err(e) = crate::remedy::write_atomic(out, outcome.text.as_bytes(), args.force, mode)
        {
            return fail(UsageError(e.to_string()));
        }
        eprintln!("sm120-doctor: wrote {}", out.display());
        if args.format == FixFormat::Diff {
            return emit(&shown);
        }
        return EXIT_OK;
    }
    emit(&shown)
}

#[cfg(unix)]
fn mode_of(p: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_: &Path) -> Option<u32> {
    None
}

pub fn run_patch_script(args: &PatchScriptArgs) -> i32 {
    let kb = match kb::load(args.kb.as_deref()) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    let opts = crate::remedy::patch_script::ScriptOptions {
        pr: args.pr,
        python: args.python.clone(),
        vllm_dir: args.vllm_dir.clone(),
    };
    let script = match crate::remedy::patch_script::generate(&kb, &opts) {
        Ok(s) => s,
        Err(e) => return fail(UsageError(e.to_string())),
    };
    if let Err(e) =
        crate::remedy::write_atomic(&args.output, script.as_bytes(), args.force, Some(0o755))
    {
        return fail(UsageError(e.to_string()));
    }
    let shown = args.output.display().to_string();
    let shown = crate::remedy::rewrite::shell_quote(&shown).unwrap_or_else(|_| shown.clone());
    emit(&format!(
        "wrote {shown}\n  read it, then dry-run:  bash {shown}\n  apply:                 bash {shown} --apply\n"
    ))
}
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

/// The environment the engine would get and the launch's own allocator assignments.
fn probe_engine_conf(args: &ProbeIpcArgs) -> Result<(Option<String>, String), UsageError> {
    let fs = crate::collect::fs::RealFs;
    let procs = crate::collect::processes::scan(&fs);
    let own = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    let env = crate::collect::env::collect(&fs, &procs, own, std::process::id());
    let (vars, source) = match env.value() {
        Some(e) => (e.vars.clone(), e.source.clone()),
        None => (Default::default(), "no environment".to_string()),
    };
    let launch_text = match (&args.launch, &args.launch_file) {
        (Some(c), _) => Some((c.clone(), "--launch".to_string())),
        (None, Some(p)) => Some((import::read_text(p)?, p.display().to_string())),
        (None, None) => None,
    };
    let launch = match launch_text {
        Some((text, name)) => Some(
            crate::launch::parse_launch(&text).map_err(|e| UsageError(format!("{name}: {e}")))?,
        ),
        None => None,
    };
    Ok(crate::probe::engine_alloc_conf(
        &vars,
        &source,
        launch.as_ref().map(|l| &l.env),
    ))
}

pub fn run_probe(command: &ProbeCommand) -> i32 {
    let ProbeCommand::Ipc(args) = command;
    let timeout = match seconds(args.timeout, "--timeout") {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let (conf, source) = match probe_engine_conf(args) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let opts = crate::probe::ProbeOptions {
        python: (!args.native_only).then(|| python_for(args.python.as_deref())),
        native: true,
        torch_timeout: timeout,
        ..Default::default()
    };
    let result = crate::probe::run_ipc(&opts, conf, source);
    let text = match args.format {
        Format::Text => crate::probe::render_text(&result),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        ),
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    let refused = crate::probe::all_runs(&result).any(|r| {
        r.path == "torch" && r.role == "engine" && r.ipc_handle_ok == Probed::Value(false)
    });
    if refused { EXIT_FINDINGS } else { EXIT_OK }
}

/// Write `text` to `path`: a new file, or over an old one only with `force`.
fn write_new(path: &Path, text: &str, force: bool) -> Result<(), UsageError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if force {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    let mut f = opts.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            UsageError(format!(
                "{}: already exists (use --force to overwrite)",
                path.display()
            ))
        } else {
            UsageError(format!("{}: cannot write: {e}", path.display()))
        }
    })?;
    f.write_all(text.as_bytes())
        .map_err(|e| UsageError(format!("{}: cannot write: {e}", path.display())))
}

pub fn run_snapshot(args: &SnapshotArgs) -> i32 {
    let timeout = match seconds(args.python_timeout, "--python-timeout") {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    if let Some(p) = &args.output
        && p.exists()
        && !args.force
    {
        return fail(UsageError(format!(
            "{}: already exists (use --force to overwrite)",
            p.display()
        )));
    }
    let opts = crate::collect::CollectOptions {
        python: args.python.clone(),
        python_mode: (!args.no_python).then_some(crate::collect::python::PythonMode::Full),
        python_timeout: timeout,
        ..Default::default()
    };
    let (mut snap, t) = crate::collect::collect_live(&opts);
    let mut probe_ms = None;
    if args.probe {
        let start = std::time::Instant::now();
        let (conf, source) = match snap.env.value() {
            Some(e) => crate::probe::engine_alloc_conf(&e.vars, &e.source, None),
            None => (None, "no environment".to_string()),
        };
        let popts = crate::probe::ProbeOptions {
            python: (!args.no_python).then(|| python_for(args.python.as_deref())),
            ..Default::default()
        };
        snap.probe = Probed::Value(crate::probe::run_ipc(&popts, conf, source));
        probe_ms = Some(start.elapsed().as_secs_f64() * 1000.0);
    }
    if args.timings {
        eprintln!(
            "timings (ms): nvml {:.1}, proc scan {:.1}, env {:.1}, os {:.1}, processes {:.1}, python {:.1}, total {:.1}{}",
            t.nvml_ms,
            t.proc_scan_ms,
            t.env_ms,
            t.os_ms,
            t.processes_ms,
            t.python_ms,
            t.total_ms,
            probe_ms
                .map(|m| format!(", probe {m:.1}"))
                .unwrap_or_default()
        );
    }
    let json = args.output.as_ref().is_some_and(|p| {
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    });
    let text = if json {
        serde_json::to_string_pretty(&snap)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| e.to_string())
    } else {
        serde_saphyr::to_string(&snap).map_err(|e| e.to_string())
    };
    let text = match text {
        Ok(t) => t,
        Err(e) => return fail(UsageError(format!("cannot serialise the snapshot: {e}"))),
    };
    match &args.output {
        Some(p) => match write_new(p, &text, args.force) {
            Ok(()) => EXIT_OK,
            Err(e) => fail(e),
        },
        None => emit(&text),
    }
}
