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
    /// Knowledge-base tools.
    Kb {
        #[command(subcommand)]
        command: KbCommand,
    },
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
    pub format: Format,
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
            let (l, c) = e
                .location()
                .map(|l| (l.line(), l.column()))
                .unwrap_or((0, 0));
            let msg = e
                .to_string()
                .lines()
                .next()
                .unwrap_or("invalid YAML")
                .trim()
                .to_string();
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
        HostSnapshot::empty(
            "no host given",
            "no host source given (--demo, --snapshot or --collect-env)",
        )
    };
    let launch_text = match (&input.launch, &input.launch_file) {
        (Some(cmd), _) => Some((cmd.clone(), "--launch".to_string())),
        (None, Some(p)) => Some((import::read_text(p)?, p.display().to_string())),
        (None, None) => None,
    };
    if let Some((text, name)) = launch_text {
        let launch =
            crate::launch::parse_launch(&text).map_err(|e| UsageError(format!("{name}: {e}")))?;
        snap.launch = Probed::Value(launch);
    }
    Ok(snap)
}

pub fn resolve(input: &InputArgs) -> Result<Inputs, UsageError> {
    let kb = kb::load(input.kb.as_deref())?;
    let snapshot = resolve_snapshot(input)?;
    let mut logs = load_logs(&input.logs)?;
    if input.demo && input.logs.is_empty() {
        logs.push(LogText {
            name: import::demo::LOG_NAME.into(),
            text: import::demo::LOG.into(),
        });
    }
    let answers = load_answers(input, &kb)?;
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

pub fn run_check(args: &CheckArgs) -> i32 {
    let inputs = match resolve(&args.input) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    let mode = if args.onboard {
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
    let text = match args.format {
        Format::Text => {
            report::check::check_text(&inputs.kb, &inputs.snapshot, &d, Style::detect())
        }
        Format::Json => {
            let mut s =
                serde_json::to_string_pretty(&report::check::check_json(&inputs.snapshot, &d))
                    .unwrap_or_default();
            s.push('\n');
            s
        }
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    if d.worst() >= kb::schema::Severity::Warning {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

pub fn run_classify(args: &ClassifyArgs) -> i32 {
    let kb = match kb::load(args.kb.as_deref()) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    let logs = match load_logs(&args.logs) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let c = engine::classify::classify(&kb, &logs);
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
