//! Turning what the user gave (flags, files, the demo, or nothing: this host) into the engine's
//! inputs: the knowledge base, the host snapshot with the launch, the logs and the answers.
//!
//! Used by every CLI mode and by the TUI alike. [`prepare`] reads and checks everything the user
//! named and leaves only the live host to collect; [`resolve`] collects it at once (the CLI
//! modes), the TUI collects it off its UI thread after drawing its first frame
//! ([`collect_live_without_python`] and [`collect_live_python`], each under its own limit).
//! Nothing here judges: the engine does.
//!
//! [`InputArgs`] carries a clap derive so `cli/args.rs` can flatten it; this module imports
//! nothing from `cli` or `tui`.

pub mod values;

use crate::collect::python::PythonMode;
use crate::collect::{self, CollectOptions};
use crate::engine::classify::LogText;
use crate::engine::{Answer, Answers};
use crate::import::{self, InputError};
use crate::kb::{self, KnowledgeBase};
use crate::launch::{LaunchError, LaunchSource, Select, SourceFile};
use crate::snapshot::{HostSnapshot, Launch, Probed, PythonStack};
use clap::Args;
use std::path::{Path, PathBuf};

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
    /// A file holding the launch: a command or script, a docker compose file, a Kubernetes
    /// manifest, vLLM production-stack Helm values, a systemd unit, or an env file.
    #[arg(long = "launch-file", value_name = "FILE", conflicts_with = "launch")]
    pub launch_file: Option<PathBuf>,
    /// A file the launch reads (repeatable): a script it sources, docker's --env-file, compose's
    /// .env or env_file:, a unit's EnvironmentFile=, vLLM's --config YAML. Read, and edited by
    /// `fix`, where it is used (a --config file is only read: the command line wins over it).
    #[arg(long = "launch-with", value_name = "FILE")]
    pub launch_with: Vec<PathBuf>,
    /// The compose service, Helm modelSpec name or script command (a model, a served model
    /// name, a container name or line:N) that is the vLLM launch, when there are several.
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,
    /// The Kubernetes container (NAME or Kind/name/NAME) that is the vLLM launch.
    #[arg(long, value_name = "NAME", conflicts_with = "service")]
    pub container: Option<String>,
    /// A log file from the failing run (repeatable).
    #[arg(long = "log", value_name = "FILE")]
    pub logs: Vec<PathBuf>,
    /// Answer a question the tool cannot decide: NODE=yes|no|unsure (repeatable).
    #[arg(long = "answer", value_name = "NODE=ANSWER", value_parser = values::KbValues::Answers, hide_possible_values = true)]
    pub answers: Vec<String>,
    /// A YAML file of answers (`node: yes`).
    #[arg(long = "answers", value_name = "FILE")]
    pub answers_file: Option<PathBuf>,
    /// Use this knowledge-base directory instead of the embedded one.
    #[arg(long, value_name = "DIR")]
    pub kb: Option<PathBuf>,
}

impl InputArgs {
    /// No host option was given: the host is this machine, collected live.
    pub fn is_live(&self) -> bool {
        !self.demo && self.snapshot.is_none() && self.collect_env.is_none()
    }
}

/// Input that cannot be used: a message naming the file (with line and column where known),
/// the flag or the field. The CLI prints it and exits 2; the TUI does the same before starting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

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

/// Everything a mode needs, resolved from the arguments.
pub struct Inputs {
    pub kb: KnowledgeBase,
    pub snapshot: HostSnapshot,
    pub logs: Vec<LogText>,
    pub answers: Answers,
    /// The replayed JSON report was made with `--onboard`.
    pub replay_onboard: bool,
    /// The launch's files as given (`--launch-file` and every `--launch-with`) and the launch
    /// picked in them, so a fix is made in the file where each setting lives.
    pub launch_source: Option<LaunchSource>,
}

/// Where the host snapshot comes from once the user's files are read.
pub enum Host {
    /// A snapshot file, a `collect-env` output or the demo (launch not yet applied).
    Recorded(Box<HostSnapshot>),
    /// This machine: to be collected live.
    Live,
}

/// The inputs with every file read and checked; only a live host is still to be collected.
pub struct Prepared {
    pub kb: KnowledgeBase,
    pub host: Host,
    /// The launch given with `--launch` / `--launch-file`, parsed.
    pub launch: Option<Launch>,
    /// The files it was read from and the launch picked in them.
    pub launch_source: Option<LaunchSource>,
    pub logs: Vec<LogText>,
    pub answers: Answers,
    pub replay_onboard: bool,
}

impl Prepared {
    /// The inputs over `snapshot` (a host collected elsewhere), with the launch applied.
    pub(crate) fn with_snapshot(self, mut snapshot: HostSnapshot) -> Inputs {
        apply_launch(&mut snapshot, self.launch);
        Inputs {
            kb: self.kb,
            snapshot,
            logs: self.logs,
            answers: self.answers,
            replay_onboard: self.replay_onboard,
            launch_source: self.launch_source,
        }
    }

    /// The inputs, collecting a live host now (blocking: NVML and Python under their limits).
    pub fn collect(self) -> Inputs {
        self.collect_with(LivePython::Collect)
    }

    /// The inputs, collecting a live host now with or without its Python stack.
    pub fn collect_with(mut self, python: LivePython) -> Inputs {
        let host = std::mem::replace(&mut self.host, Host::Live);
        let snapshot = match (host, python) {
            (Host::Recorded(s), _) => *s,
            (Host::Live, LivePython::Collect) => collect_live_host(),
            (Host::Live, LivePython::Skip) => collect_live_without_python(),
        };
        self.with_snapshot(snapshot)
    }
}

/// Put the user's launch into a snapshot (it replaces a recorded one).
pub(crate) fn apply_launch(snapshot: &mut HostSnapshot, launch: Option<Launch>) {
    if let Some(l) = launch {
        snapshot.launch = Probed::Value(l);
    }
}

/// Parse `NODE=yes|no|unsure`.
pub(crate) fn parse_answer(s: &str) -> Result<(String, Answer), UsageError> {
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

/// `--answers FILE` then each `--answer`, every node checked against the knowledge base.
pub(crate) fn load_answers(input: &InputArgs, kb: &KnowledgeBase) -> Result<Answers, UsageError> {
    let mut answers = Answers::new();
    if let Some(path) = &input.answers_file {
        let text = import::read_text(path, crate::read::ANSWERS)?;
        let name = crate::read::shown(path);
        let map: Answers = serde_saphyr::from_str(&text).map_err(|e| {
            let (l, c, msg) = crate::yaml::error_parts(&e);
            UsageError(format!("{name}:{l}:{c}: {msg}"))
        })?;
        for node in map.keys() {
            if !kb.has_question(node) {
                let line = yaml_key_line(&text, node);
                return Err(UsageError(format!(
                    "{name}{}: answer for {node:?}: no such question in the knowledge base",
                    line.map(|l| format!(":{l}")).unwrap_or_default()
                )));
            }
        }
        answers.extend(map);
    }
    for a in &input.answers {
        let (node, ans) = parse_answer(a)?;
        if !kb.has_question(&node) {
            return Err(UsageError(format!(
                "--answer {node}: no such question in the knowledge base"
            )));
        }
        answers.insert(node, ans);
    }
    Ok(answers)
}

/// The 1-based line where `key:` starts a top-level YAML mapping entry, if it does.
fn yaml_key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_end();
            [key.to_string(), format!("{key:?}"), format!("'{key}'")]
                .iter()
                .any(|k| {
                    l.strip_prefix(k.as_str())
                        .is_some_and(|r| r.trim_start().starts_with(':'))
                })
        })
        .map(|i| i + 1)
}

/// Read log files (lossily: logs may hold stray bytes such as progress bars), each under
/// [`crate::read::LOG`], lines cut at [`crate::read::MAX_LINE`], streamed and kept to their
/// ends ([`crate::read::read_log`]: memory stays bounded); `-` is standard input.
pub(crate) fn load_logs(paths: &[PathBuf]) -> Result<Vec<LogText>, UsageError> {
    paths
        .iter()
        .map(|p| {
            let text = crate::read::read_log(p, crate::read::LOG, crate::read::Stdin::Allowed)
                .map_err(|e| UsageError(e.to_string()))?;
            Ok(LogText {
                name: crate::read::shown(p),
                text,
            })
        })
        .collect()
}

/// Standard input (`-`) can stand for one input only.
pub(crate) fn check_stdin_once(input: &InputArgs) -> Result<(), UsageError> {
    let dash = |p: &Option<PathBuf>| p.as_deref().is_some_and(crate::read::is_stdin);
    let mut named: Vec<&str> = Vec::new();
    if dash(&input.snapshot) {
        named.push("--snapshot");
    }
    if dash(&input.collect_env) {
        named.push("--collect-env");
    }
    if dash(&input.launch_file) {
        named.push("--launch-file");
    }
    if dash(&input.answers_file) {
        named.push("--answers");
    }
    for l in &input.logs {
        if crate::read::is_stdin(l) {
            named.push("--log");
        }
    }
    if named.len() > 1 {
        return Err(UsageError(format!(
            "standard input (-) can be read by one option only, not by {}",
            named.join(" and ")
        )));
    }
    Ok(())
}

/// The launch text from `--launch CMD` or `--launch-file FILE`, with the name errors use.
pub fn launch_source(
    launch: Option<&str>,
    launch_file: Option<&Path>,
) -> Result<Option<(String, String)>, UsageError> {
    Ok(match (launch, launch_file) {
        (Some(cmd), _) => Some((cmd.to_string(), "--launch".to_string())),
        (None, Some(p)) => Some((
            import::read_text(p, crate::read::LAUNCH)?,
            crate::read::shown(p),
        )),
        (None, None) => None,
    })
}

/// The launch's files: the main one (`--launch` / `--launch-file`) then each `--launch-with`.
pub(crate) fn launch_files(
    launch: Option<&str>,
    launch_file: Option<&Path>,
    with: &[PathBuf],
) -> Result<Option<Vec<SourceFile>>, UsageError> {
    let Some((text, name)) = launch_source(launch, launch_file)? else {
        if let Some(p) = with.first() {
            return Err(UsageError(format!(
                "--launch-with {}: give the launch itself with --launch-file (or --launch)",
                p.display()
            )));
        }
        return Ok(None);
    };
    let mut files = vec![SourceFile::new(name, text)];
    for p in with {
        files.push(SourceFile::new(
            crate::read::shown(p),
            import::read_text(p, crate::read::LAUNCH)?,
        ));
    }
    Ok(Some(files))
}

/// `--service` / `--container` as a selection.
pub fn select(service: Option<&str>, container: Option<&str>) -> Select {
    Select {
        service: service.map(str::to_string),
        container: container.map(str::to_string),
    }
}

/// Parse a launch; a syntax error names `name:line:column`.
pub fn parse_launch(text: &str, name: &str) -> Result<Launch, UsageError> {
    parse_launch_files(&[SourceFile::new(name, text)], &Select::default())
}

/// Parse a launch read from several files (`files[0]` the main one); errors name the file.
pub fn parse_launch_files(files: &[SourceFile], select: &Select) -> Result<Launch, UsageError> {
    crate::launch::parse_launch_files(files, select).map_err(|e| launch_error(files, e))
}

/// A launch error as the user sees it: `FILE:LINE:COL: message`.
pub(crate) fn launch_error(files: &[SourceFile], e: LaunchError) -> UsageError {
    let name = |i: usize| files.get(i).map_or("launch", |f| f.name.as_str());
    match e {
        LaunchError::Syntax {
            file,
            line,
            col,
            message,
        } => UsageError(format!("{}:{line}:{col}: {message}", name(file))),
        other => UsageError(format!("{}: {other}", name(0))),
    }
}

/// Read every input the user named; leave a live host uncollected.
pub fn prepare(input: &InputArgs) -> Result<Prepared, UsageError> {
    check_stdin_once(input)?;
    let kb = kb::load(input.kb.as_deref(), crate::facts::is_known_fact)?;
    // A snapshot file is read once: the snapshot, and (a JSON report) what replays with it.
    let mut replay = None;
    let host = if let Some(p) = &input.snapshot {
        let (snap, r) = import::load_snapshot_and_replay(p)?;
        replay = r;
        Host::Recorded(Box::new(snap))
    } else if let Some(p) = &input.collect_env {
        let text = import::read_text(p, crate::read::COLLECT_ENV)?;
        Host::Recorded(Box::new(import::collect_env::parse(
            &crate::read::shown(p),
            &text,
        )?))
    } else if input.demo {
        Host::Recorded(Box::new(import::demo_snapshot()))
    } else {
        Host::Live
    };
    let mut launch_source = None;
    let launch = match launch_files(
        input.launch.as_deref(),
        input.launch_file.as_deref(),
        &input.launch_with,
    )? {
        Some(files) => {
            let select = select(input.service.as_deref(), input.container.as_deref());
            let mut l = parse_launch_files(&files, &select)?;
            l.source = if input.launch.is_some() {
                "--launch".into()
            } else {
                format!("--launch-file {}", files[0].name)
            };
            launch_source = Some(LaunchSource { files, select });
            Some(l)
        }
        None => {
            if input.service.is_some() || input.container.is_some() {
                return Err(UsageError(
                    "--service / --container pick a launch in --launch-file; give that too".into(),
                ));
            }
            None
        }
    };
    // A JSON report replays with its answers and matched log lines (given ones take precedence).
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
    let replay_onboard = replay.as_ref().is_some_and(|r| r.onboard);
    if let Some(r) = replay {
        for (node, a) in r.answers {
            if !kb.has_question(&node) {
                return Err(UsageError(format!(
                    "answer for {node:?} in the replayed report: no such question in the knowledge base"
                )));
            }
            answers.entry(node).or_insert(a);
        }
    }
    Ok(Prepared {
        kb,
        host,
        launch,
        launch_source,
        logs,
        answers,
        replay_onboard,
    })
}

/// Every input, a live host collected now.
pub fn resolve(input: &InputArgs) -> Result<Inputs, UsageError> {
    resolve_with(input, LivePython::Collect)
}

/// Whether a live host's Python stack is read. `Skip` (`--no-python`) runs no interpreter and
/// records the stack as not requested, so the version checks say "not checked", never "not
/// installed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LivePython {
    #[default]
    Collect,
    Skip,
}

impl LivePython {
    /// `Skip` when `--no-python` was given.
    pub fn unless(no_python: bool) -> Self {
        if no_python {
            LivePython::Skip
        } else {
            LivePython::Collect
        }
    }
}

/// Every input, a live host collected now with or without its Python stack.
pub fn resolve_with(input: &InputArgs, python: LivePython) -> Result<Inputs, UsageError> {
    Ok(prepare(input)?.collect_with(python))
}

/// How a live host is collected for a diagnosis: Python package metadata only (importing torch
/// takes seconds), under the collector's default limits.
pub(crate) fn live_options() -> CollectOptions {
    CollectOptions {
        python_mode: Some(PythonMode::Fast),
        ..Default::default()
    }
}

/// This host, live (blocking).
pub(crate) fn collect_live_host() -> HostSnapshot {
    collect::collect_live(&live_options()).0
}

/// This host without its Python stack (NVML under its limit, environment, OS, processes): the
/// fast part, for a front end that shows it before the Python stack arrives.
pub(crate) fn collect_live_without_python() -> HostSnapshot {
    let opts = CollectOptions {
        python_mode: None,
        ..live_options()
    };
    collect::collect_live(&opts).0
}

/// This host's Python stack as [`collect_live_host`] reads it (the same interpreter choice,
/// mode and time limit).
pub(crate) fn collect_live_python() -> Probed<PythonStack> {
    let opts = live_options();
    let (interp, _why) = collect::python::find_interpreter(
        opts.python.as_deref(),
        &|n| std::env::var(n).ok(),
        &|p| p.exists(),
    );
    match opts.python_mode {
        Some(mode) => collect::python::collect(&interp, mode, opts.python_timeout),
        None => Probed::skipped(crate::snapshot::Reason::new(
            crate::snapshot::ReasonCode::NotRequested,
            "Python stack not collected",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_and_bad_ones_name_the_flag() {
        assert_eq!(
            parse_answer("aipc_tp=Yes").expect("ok"),
            ("aipc_tp".to_string(), Answer::Yes)
        );
        assert_eq!(parse_answer(" x = n ").expect("ok").1, Answer::No);
        let e = parse_answer("x=maybe").expect_err("bad");
        assert!(e.0.contains("--answer x") && e.0.contains("maybe"), "{e}");
        assert!(parse_answer("novalue").is_err());
    }

    #[test]
    fn prepare_reads_files_but_leaves_the_live_host_uncollected() {
        let live = prepare(&InputArgs {
            launch: Some("vllm serve m -tp 2".into()),
            ..Default::default()
        })
        .expect("prepared");
        assert!(matches!(live.host, Host::Live));
        assert_eq!(
            live.launch.as_ref().and_then(|l| l.tensor_parallel_size),
            Some(2)
        );
        // The launch goes into whatever host arrives later.
        let inputs = live.with_snapshot(HostSnapshot::empty("live", "fake"));
        assert!(inputs.snapshot.launch.value().is_some());

        let demo = prepare(&InputArgs {
            demo: true,
            ..Default::default()
        })
        .expect("demo");
        assert!(matches!(demo.host, Host::Recorded(_)));
        assert_eq!(demo.logs.len(), 1, "the demo brings its crash log");
    }

    #[test]
    fn a_bad_launch_names_its_source_and_line() {
        let e = prepare(&InputArgs {
            demo: true,
            launch: Some("vllm serve 'unclosed".into()),
            ..Default::default()
        })
        .err()
        .expect("bad launch");
        assert!(e.0.starts_with("--launch:"), "{e}");
    }
}
