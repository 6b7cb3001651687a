//! Read a vLLM launch wherever people keep it into the [`Launch`] model, keeping byte spans.
//!
//! Forms (each in its own module, all yielding the same [`Located`]):
//! - [`shell`]: a one-liner or a script as bash runs it (a sequence of commands, `export`,
//!   `set -a`, `source`/`.` of a file given alongside, `env VAR=… cmd`, `sudo -E`), `vllm serve
//!   MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...`, `docker run ... IMAGE ARGS`
//!   (with `--env-file` read when the file is given);
//! - [`envfile`]: an env file with no command (a docker `--env-file`, compose's `.env`, a systemd
//!   `EnvironmentFile=`);
//! - [`compose`]: a docker compose service, with compose's `${VAR:-default}` interpolation;
//! - [`k8s`]: Kubernetes Pod / Deployment / StatefulSet / Job manifests;
//! - [`helm`]: the vLLM production-stack Helm values;
//! - [`systemd`]: a unit's `Environment=`, `EnvironmentFile=` and `ExecStart=`.
//!
//! [`locate_files`] returns a [`Located`]: where every environment assignment and every vLLM
//! argument sits (which file, which bytes), where new ones go, and what bash (or compose, or
//! systemd) would do differently from what the text seems to say ([`Problem`]s, reported as
//! findings). `remedy::rewrite` edits through those spans only, and each form writes its new
//! words beside its reader ([`render`] dispatches to them).

pub mod compose;
pub mod envfile;
pub mod helm;
pub mod interp;
pub mod k8s;
pub mod lex;
mod located;
mod model;
pub mod render;
mod select;
pub mod shell;
pub mod systemd;
pub mod yaml;

use crate::snapshot::{EngineEnv, Launch};
use crate::vllm::flags::{self, attached_level, is_boolean_flag, long_name};
use lex::Word;
pub use located::{Arg, EnvGaps, EnvSite, Located, Problem};
use model::launch_from;
pub use render::{Insert, InsertStyle, Render, YamlQuote};
pub use select::Select;
pub(crate) use select::{PickWords, pick_one};
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LaunchError {
    /// Text that cannot be read at all; `file` indexes the files given (0: the main one).
    #[error("line {line}, column {col}: {message}")]
    Syntax {
        file: usize,
        line: usize,
        col: usize,
        message: String,
    },
    #[error(
        "no vLLM command found (expected `vllm serve ...`, `python -m vllm.entrypoints...`, \
         `docker run ... IMAGE ...`, a compose service, a Kubernetes container, a systemd \
         ExecStart= or an env file)"
    )]
    NoVllmCommand,
    #[error(
        "line {line}: ExecStart= runs {script}, not vLLM itself; give that script as the launch \
         (--launch-file {script}) to read and edit the vLLM command in it"
    )]
    UnitRunsScript { line: usize, script: String },
    #[error(
        "line {line}: ExecStart= runs docker compose, not vLLM itself; give its compose file as \
         the launch (--launch-file {dir}/compose.yaml or docker-compose.yml, with --service NAME) \
         to read and edit the vLLM service"
    )]
    UnitRunsCompose { line: usize, dir: String },
    #[error("--{flag}: {message}")]
    BadValue { flag: String, message: String },
    /// Several launches match and none was named.
    #[error("{message}")]
    Ambiguous { message: String },
    /// A file was given that the launch never reads.
    #[error("{0}")]
    Unused(String),
}

impl LaunchError {
    pub(crate) fn syntax(file: usize, line: usize, col: usize, message: impl Into<String>) -> Self {
        LaunchError::Syntax {
            file,
            line,
            col,
            message: message.into(),
        }
    }

    fn from_lex(file: usize, e: lex::LexError) -> Self {
        LaunchError::syntax(file, e.line, e.col, e.message)
    }
}

/// A file the launch is read from: the main one (index 0) and the files it reads (a sourced
/// script, an `--env-file`, compose's `.env`, a systemd `EnvironmentFile=`).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    /// The name as given (a path); matched against the names the launch uses.
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
        }
    }
}

/// The launch as the user gave it: its files (the main one first) and which launch in them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchSource {
    pub files: Vec<SourceFile>,
    pub select: Select,
}

impl LaunchSource {
    /// One launch text (`--launch`, or a launch typed in the TUI).
    pub fn text(text: &str) -> Self {
        LaunchSource {
            files: vec![SourceFile::new("launch", text)],
            select: Select::default(),
        }
    }
}

/// Which kind of text the launch came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Shell,
    Docker,
    Compose,
    EnvFile,
    Kubernetes,
    HelmValues,
    Systemd,
}

impl Form {
    /// Whose environment the engine starts from in this form: the one place that says it, for
    /// `check` (the `env.*` facts) and `fix` alike.
    pub(crate) fn engine_env(self) -> EngineEnv {
        match self {
            Form::Shell | Form::EnvFile => EngineEnv::Inherited,
            Form::Docker | Form::Compose | Form::Kubernetes | Form::HelmValues => {
                EngineEnv::Container
            }
            Form::Systemd => EngineEnv::Unit,
        }
    }
}

/// `NAME=value` with a valid shell name.
pub(crate) fn is_assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    is_name(name).then_some((name, value))
}

/// A valid shell / environment variable name.
pub(crate) fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// A shell launch where a flag stands where a command belongs (`--max-num-seqs 8 vllm serve m`,
/// `VAR=x --max-num-seqs 8`): bash would try to run the flag as a program, whatever follows
/// it. The first such flag and its line; `None` for other forms (a compose file's `command:`
/// starts with flags by design) and for text that does not lex (its own error says why).
pub(crate) fn flag_as_command(text: &str) -> Option<(usize, String)> {
    if kind_of("launch", text) != Kind::Shell {
        return None;
    }
    let commands = lex::commands(text).ok()?;
    commands.iter().find_map(|c| {
        let word = c.words.iter().find(|w| is_assignment(&w.value).is_none())?;
        looks_like_flag(&word.value).then(|| (word.line, word.value.clone()))
    })
}

/// Where the vLLM arguments start in `words`, and the entrypoint's name.
pub(crate) fn find_entrypoint(words: &[Word]) -> Option<(usize, usize, String)> {
    for (i, w) in words.iter().enumerate() {
        let base = w.value.rsplit('/').next().unwrap_or(&w.value);
        let next = words.get(i + 1).map(|w| w.value.as_str());
        if flags::is_serve(&w.value, next) {
            return Some((i, i + 2, "vllm serve".into()));
        }
        // `"$PY" -m vllm.entrypoints…`: an interpreter named by a variable; interpreter options
        // (`python -u -m …`, `python3 -X dev -m …`) may come before `-m`.
        if base.starts_with("python") || w.dynamic {
            let values: Vec<&str> = words[i + 1..].iter().map(|w| w.value.as_str()).collect();
            if let Some(m) = python_m_at(&values) {
                let module = i + 1 + m + 1;
                if words
                    .get(module)
                    .is_some_and(|m| flags::is_entrypoint_module(&m.value))
                {
                    return Some((i, module + 1, format!("python -m {}", words[module].value)));
                }
            }
        }
    }
    None
}

/// Where `-m` is among a Python interpreter's arguments, past the options CPython takes before
/// it: flags without a value (`-u`, `-B`, `-OO`, clustered `-uB`) and `-W ARG` / `-X OPT` (or
/// `-Wignore`, `-Xdev`). `None` at anything else (`-c`, a script path, an unknown option).
fn python_m_at(args: &[&str]) -> Option<usize> {
    let mut k = 0;
    while let Some(a) = args.get(k) {
        if *a == "-m" {
            return Some(k);
        }
        let opts = a
            .strip_prefix('-')
            .filter(|o| !o.is_empty() && !o.starts_with('-'))?;
        if opts == "W" || opts == "X" {
            k += 2;
            continue;
        }
        if opts.starts_with('W') || opts.starts_with('X') {
            k += 1;
            continue;
        }
        if !opts.chars().all(|c| "bBdEiIOPqsSuvx".contains(c)) {
            return None;
        }
        k += 1;
    }
    None
}

/// The model a vLLM argument list serves (positional or `--model`), and its served name.
pub(crate) fn model_of(args: &[String]) -> (Option<String>, Option<String>) {
    let (uses, positional) = flag_uses(args);
    let model = positional.first().map(|&p| args[p].clone()).or_else(|| {
        uses.iter()
            .rev()
            .find(|f| f.name == flags::MODEL)
            .map(|f| f.value.clone())
    });
    let served = uses
        .iter()
        .rev()
        .find(|f| f.name == "served-model-name")
        .map(|f| f.value.clone());
    (model, served)
}

pub(crate) fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map(|p| p + 1).unwrap_or(0)
}

pub(crate) fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map(|p| offset + p)
        .unwrap_or(text.len())
}

/// The end of the line where a node's content ends: a block scalar's span takes in its final
/// newline (and blank lines), so `line_end` of its end is the *next* line's end, which may be
/// inside the next list item.
pub(crate) fn content_line_end(text: &str, end: usize) -> usize {
    line_end(text, text[..end].trim_end().len())
}

pub(crate) fn indent_at(text: &str, offset: usize) -> String {
    let s = line_start(text, offset);
    text[s..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The file's last path component.
pub(crate) fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The given file a launch names (`source ./env.sh`, `--env-file vllm.env`, `env_file: .env`):
/// the same path, else the same path relative to the main file, else the same file name.
pub(crate) fn find_file(files: &[SourceFile], named: &str) -> Option<usize> {
    let named = named.trim();
    let clean = |p: &str| p.trim_start_matches("./").to_string();
    if named.is_empty() {
        return None;
    }
    let exact = files
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, f)| clean(&f.name) == clean(named));
    if let Some((i, _)) = exact {
        return Some(i);
    }
    let suffix = files.iter().enumerate().skip(1).find(|(_, f)| {
        let n = clean(&f.name);
        let w = clean(named);
        n.ends_with(&format!("/{w}")) || w.ends_with(&format!("/{n}"))
    });
    if let Some((i, _)) = suffix {
        return Some(i);
    }
    let base = base_name(named);
    let mut same = files
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, f)| base_name(&f.name) == base);
    match (same.next(), same.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

/// What kind of text a file holds, from its content (and name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Shell,
    Compose,
    Kubernetes,
    HelmValues,
    Systemd,
    EnvFile,
}

/// Decide a file's kind by its content (the name only breaks ties).
pub(crate) fn kind_of(name: &str, text: &str) -> Kind {
    let lower = base_name(name).to_ascii_lowercase();
    if systemd::looks_like_unit(text) || lower.ends_with(".service") {
        return Kind::Systemd;
    }
    if compose::looks_like_compose(text) {
        return Kind::Compose;
    }
    if k8s::looks_like_helm_values(text) {
        return Kind::HelmValues;
    }
    if k8s::looks_like_manifest(text) {
        return Kind::Kubernetes;
    }
    let shell_name = lower.ends_with(".sh") || lower.ends_with(".bash");
    if !shell_name && !text.starts_with("#!") && envfile::looks_like_env_file(text) {
        return Kind::EnvFile;
    }
    Kind::Shell
}

/// Locate the vLLM launch in one text (a script, one-liner, compose file, manifest, unit or
/// env file).
pub fn locate(text: &str) -> Result<Located, LaunchError> {
    locate_files(&[SourceFile::new("launch", text)], &Select::default())
}

/// A UTF-8 byte-order mark (Windows editors write one); no reader expects it.
const BOM: char = '\u{feff}';

/// Locate the launch in `files[0]`, reading the other files where it names them.
pub fn locate_files(files: &[SourceFile], select: &Select) -> Result<Located, LaunchError> {
    if files.iter().any(|f| f.text.starts_with(BOM)) {
        // Read the text after the mark; every place found is then moved past it again.
        let stripped: Vec<SourceFile> = files
            .iter()
            .map(|f| SourceFile::new(f.name.clone(), f.text.trim_start_matches(BOM)))
            .collect();
        let mut loc = locate_files(&stripped, select)?;
        for (i, (f, s)) in files.iter().zip(&stripped).enumerate() {
            shift_file(&mut loc, i, f.text.len() - s.text.len());
        }
        return Ok(loc);
    }
    locate_plain(files, select)
}

/// Move every byte place in file `file` by `by` bytes.
fn shift_file(loc: &mut Located, file: usize, by: usize) {
    if by == 0 {
        return;
    }
    let r = |x: &mut Range<usize>| *x = x.start + by..x.end + by;
    let site = |s: &mut EnvSite| {
        if s.file == file {
            r(&mut s.span);
        }
        if s.removal_file == file {
            r(&mut s.removal);
        }
    };
    loc.env.iter_mut().for_each(site);
    loc.arg_vars.values_mut().for_each(site);
    for a in loc.args.iter_mut().filter(|a| a.file == file) {
        r(&mut a.span);
        r(&mut a.removal);
    }
    for i in [&mut loc.env_insert, &mut loc.arg_insert]
        .into_iter()
        .chain(loc.late_insert.as_mut())
    {
        if i.file == file {
            i.offset += by;
        }
    }
}

fn locate_plain(files: &[SourceFile], select: &Select) -> Result<Located, LaunchError> {
    let Some(main) = files.first() else {
        return Err(LaunchError::NoVllmCommand);
    };
    let kind = kind_of(&main.name, &main.text);
    let wrong = |flag: &str, right: &str| {
        Err(LaunchError::Ambiguous {
            message: format!("--{flag} does not apply to {right}"),
        })
    };
    let located = match kind {
        Kind::Compose => {
            if select.container.is_some() {
                return wrong(
                    "container",
                    "a compose file (it has services: pick one with --service NAME)",
                );
            }
            compose::locate(files, select)?
        }
        Kind::Kubernetes => {
            if select.service.is_some() {
                return wrong(
                    "service",
                    "a Kubernetes manifest (pick a container with --container NAME)",
                );
            }
            k8s::locate(files, select)?
        }
        Kind::HelmValues => {
            if select.container.is_some() {
                return wrong(
                    "container",
                    "Helm values (pick a modelSpec entry with --service NAME)",
                );
            }
            helm::locate(files, select)?
        }
        Kind::Systemd => {
            if !select.is_empty() {
                return wrong(
                    "service/--container",
                    "a systemd unit (it runs one command)",
                );
            }
            systemd::locate(files)?
        }
        Kind::EnvFile => {
            if !select.is_empty() {
                return wrong("service/--container", "an env file (it holds no command)");
            }
            envfile::locate(files, 0, envfile::Dialect::Compose)?
        }
        Kind::Shell => {
            if select.container.is_some() {
                return wrong(
                    "container",
                    "a script (pick a command with --service MODEL or --service line:N)",
                );
            }
            shell::locate(files, select)?
        }
    };
    // vLLM's `--config FILE` reads that file too.
    let config = config_file_named(&located.arg_values()).and_then(|n| find_file(files, &n));
    for (i, f) in files.iter().enumerate().skip(1) {
        if !located.used_files.contains(&i) && config != Some(i) {
            return Err(LaunchError::Unused(format!(
                "{} is given but {} never reads it (no `source`, --env-file, env_file:, \
                 EnvironmentFile=, .env or vLLM's --config names it)",
                f.name, main.name
            )));
        }
    }
    Ok(located)
}

/// A flag in the argument list: its long name and where its value is.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagUse {
    /// Long name without dashes, aliases resolved (`tp` → `tensor-parallel-size`), dotted
    /// sub-keys kept (`compilation-config.cudagraph_mode`).
    pub name: String,
    /// Index of the flag word in `args`.
    pub index: usize,
    /// Index of a separate value word (`--flag value`).
    pub value_index: Option<usize>,
    /// The value: inline (`--flag=value`), separate, or empty for a boolean flag.
    pub value: String,
    /// The value was written inline after `=`.
    pub inline: bool,
    /// Written as the `--no-` form (`--no-enforce-eager`): `name` is the flag it turns off
    /// and `value` is `false`.
    pub negated: bool,
}

/// `--x` and `-x` are flags; `-1` is a (negative) value.
fn looks_like_flag(word: &str) -> bool {
    word.starts_with("--")
        || (word.len() > 1
            && word.starts_with('-')
            && !word[1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// The flags in a vLLM argument list, and the positional words (the model for `vllm serve`).
pub(crate) fn flag_uses(args: &[String]) -> (Vec<FlagUse>, Vec<usize>) {
    let mut flags = Vec::new();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        if !looks_like_flag(word) {
            positional.push(i);
            i += 1;
            continue;
        }
        let (raw_name, inline_value) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            // `-O3`: the level written into the flag.
            None => match attached_level(word) {
                Some((flag, level)) => (flag, Some(level.to_string())),
                None => (word.as_str(), None),
            },
        };
        let name = long_name(raw_name);
        let is_bool = is_boolean_flag(&name);
        let negated = flags::negated(&name);
        let (value, value_index, inline) = match inline_value {
            // `--no-X` is false whatever follows it (argparse refuses `--no-X=...`).
            _ if negated.is_some() => ("false".to_string(), None, inline_value.is_some()),
            Some(v) => (v, None, true),
            None if is_bool => (String::new(), None, false),
            None => match args.get(i + 1) {
                Some(next) if !looks_like_flag(next) => (next.clone(), Some(i + 1), false),
                _ => (String::new(), None, false),
            },
        };
        flags.push(FlagUse {
            name: negated.map_or(name, str::to_string),
            index: i,
            value_index,
            value,
            inline,
            negated: negated.is_some(),
        });
        i = value_index.map_or(i + 1, |v| v + 1);
    }
    (flags, positional)
}

/// Parse a launch script, one-liner, `docker run`, compose file, manifest, unit or env file.
pub fn parse_launch(text: &str) -> Result<Launch, LaunchError> {
    let located = locate(text)?;
    launch_from(text, &located)
}

/// Parse a launch read from several files (`files[0]` the main one).
pub fn parse_launch_files(files: &[SourceFile], select: &Select) -> Result<Launch, LaunchError> {
    let located = locate_files(files, select)?;
    let mut launch = model::build_launch(&files[0].text, &located, files)?;
    launch.problems = model::problems_of(files, &located);
    Ok(launch)
}

/// The file a vLLM argument list names with `--config FILE` (the last one; vLLM takes one).
pub(crate) fn config_file_named(args: &[String]) -> Option<String> {
    let (uses, _) = flag_uses(args);
    uses.iter()
        .rev()
        .find(|f| f.name == flags::CONFIG)
        .map(|f| f.value.clone())
        .filter(|v| !v.is_empty())
}

/// Why the launch's settings the command line leaves out are unknown: `--config FILE` names
/// a file that was not given.
pub(crate) fn config_unread_reason(name: &str) -> String {
    format!("set by --config {name}, not read (give it with --launch-with {name})")
}

/// A `--config` file's arguments, the way vLLM's `load_config_file` spells them (see
/// [`flags::CONFIG`]): a YAML mapping of argument names to values.
pub(crate) fn config_args(file: usize, text: &str) -> Result<Vec<String>, LaunchError> {
    let docs = yaml::parse_allowing_duplicate_keys(text, file)?;
    let Some(doc) = docs.first() else {
        return Ok(Vec::new());
    };
    let root = doc.resolve(&doc.root);
    if root.is_null() {
        return Ok(Vec::new());
    }
    if !matches!(root.kind, yaml::NodeKind::Map { .. }) {
        return Err(LaunchError::syntax(
            file,
            root.line,
            1,
            "a vLLM --config file is a YAML mapping of argument names to values \
             (tensor_parallel_size: 2)",
        ));
    }
    let mut args = Vec::new();
    for (k, v) in root.entries() {
        let Some(key) = k.as_str() else {
            return Err(LaunchError::syntax(
                file,
                k.line,
                1,
                "a --config key must be an argument name",
            ));
        };
        let flag = format!("--{key}");
        let v = doc.resolve(v);
        match &v.kind {
            yaml::NodeKind::Seq { items, .. } => {
                if !items.is_empty() {
                    args.push(flag);
                    args.extend(items.iter().map(|i| python_str(&yaml_json(doc, i))));
                }
            }
            yaml::NodeKind::Map { .. } => {
                args.push(flag);
                args.push(yaml_json(doc, v).to_string());
            }
            _ => match yaml_json(doc, v) {
                serde_json::Value::Bool(true) => args.push(flag),
                // `--no-KEY` only where vLLM has it, spelled as the key is written.
                serde_json::Value::Bool(false) => {
                    let no = format!("no-{key}");
                    if flags::negated(&no).is_some() {
                        args.push(format!("--{no}"));
                    }
                }
                other => {
                    args.push(flag);
                    args.push(python_str(&other));
                }
            },
        }
    }
    Ok(args)
}

/// Python's `str()` of a YAML value, as vLLM passes it on (`None`, `True`, `2`, `0.9`, text).
fn python_str(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "None".into(),
        serde_json::Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A YAML node as the JSON value PyYAML's `safe_load` gives (YAML 1.1 booleans and nulls for
/// plain scalars, numbers where they parse).
fn yaml_json(doc: &yaml::Doc, n: &yaml::Node) -> serde_json::Value {
    use serde_json::Value as J;
    let n = doc.resolve(n);
    match &n.kind {
        yaml::NodeKind::Seq { items, .. } => {
            J::Array(items.iter().map(|i| yaml_json(doc, i)).collect())
        }
        yaml::NodeKind::Map { entries, .. } => J::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().unwrap_or_default().to_string(),
                        yaml_json(doc, v),
                    )
                })
                .collect(),
        ),
        _ if n.is_null() => J::Null,
        _ => {
            let text = n.as_str().unwrap_or_default();
            if n.quote() != Some(YamlQuote::Plain) {
                return J::String(text.to_string());
            }
            match text {
                "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => {
                    J::Bool(true)
                }
                "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => {
                    J::Bool(false)
                }
                _ => text
                    .parse::<i64>()
                    .map(J::from)
                    .ok()
                    .or_else(|| {
                        text.parse::<f64>()
                            .ok()
                            .and_then(|f| serde_json::Number::from_f64(f).map(J::Number))
                    })
                    .unwrap_or_else(|| J::String(text.to_string())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_options_before_m_are_the_interpreter_s() {
        assert_eq!(python_m_at(&["-m", "vllm"]), Some(0));
        assert_eq!(python_m_at(&["-u", "-m", "vllm"]), Some(1));
        assert_eq!(
            python_m_at(&["-uB", "-X", "dev", "-Wignore", "-m", "v"]),
            Some(4)
        );
        assert_eq!(python_m_at(&["-W", "ignore", "-OO", "-m", "v"]), Some(3));
        assert_eq!(python_m_at(&["-c", "import vllm", "-m", "v"]), None);
        assert_eq!(python_m_at(&["serve.py", "-m", "v"]), None);
        assert_eq!(
            python_m_at(&["--check-hash-based-pycs", "always", "-m", "v"]),
            None
        );
        let l = parse_launch(
            "python -u \
	-m vllm.entrypoints.openai.api_server \
	--tensor-parallel-size 8
",
        )
        .expect("read");
        assert_eq!(l.entrypoint, "python -m vllm.entrypoints.openai.api_server");
        assert_eq!(l.tensor_parallel_size, Some(8));
    }

    #[test]
    fn a_flag_where_a_command_belongs_is_named_with_its_line() {
        // The garbled edit of issue 27: new words typed at column 0 of the launch.
        let garbled = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False --max-num-seqs 8PYTORCH_CUDA_ALLOC_CONF=x vllm serve m\n";
        assert_eq!(
            flag_as_command(garbled),
            Some((1, "--max-num-seqs".to_string()))
        );
        assert_eq!(
            flag_as_command("export A=b\n-tp 2 vllm serve m\n"),
            Some((2, "-tp".to_string()))
        );
        assert_eq!(
            flag_as_command(" --max-num-seqs 8"),
            Some((1, "--max-num-seqs".into()))
        );
        for fine in [
            "vllm serve m --max-num-seqs 8",
            "A=1 B=2 vllm serve m -tp 2\n",
            "export A=b\nvllm serve m \\\n  --max-num-seqs 8\n",
            "docker run --gpus all vllm/vllm-openai --model m",
            "# --not-a-command\nvllm serve m",
            // A compose service's command is vLLM's arguments: flags first by design.
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: --model m\n",
        ] {
            assert_eq!(flag_as_command(fine), None, "{fine}");
        }
    }

    #[test]
    fn vllm_serve_with_prefix_env_and_continuations() {
        let text = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve Qwen/Qwen3.6-27B-FP8 \\\n  --tensor-parallel-size 2 \\\n  --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}'\n";
        let l = parse_launch(text).expect("parses");
        assert_eq!(l.model.as_deref(), Some("Qwen/Qwen3.6-27B-FP8"));
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.cudagraph_mode.as_deref(), Some("FULL_AND_PIECEWISE"));
        assert_eq!(
            l.env.get("PYTORCH_CUDA_ALLOC_CONF").map(String::as_str),
            Some("expandable_segments:True")
        );
        assert_eq!(l.entrypoint, "vllm serve");
    }

    #[test]
    fn python_module_form_with_export_and_short_flags() {
        let text = "export VLLM_USE_DEEP_GEMM=0\npython3 -m vllm.entrypoints.openai.api_server --model m -tp=4 --enforce-eager --disable-custom-all-reduce -cc.cudagraph_mode=PIECEWISE";
        let l = parse_launch(text).expect("parses");
        assert_eq!(l.model.as_deref(), Some("m"));
        assert_eq!(l.tensor_parallel_size, Some(4));
        assert!(l.enforce_eager);
        assert!(l.disable_custom_all_reduce);
        assert_eq!(l.cudagraph_mode.as_deref(), Some("PIECEWISE"));
        assert_eq!(
            l.env.get("VLLM_USE_DEEP_GEMM").map(String::as_str),
            Some("0")
        );
    }

    #[test]
    fn config_file_arguments_as_vllm_spells_them() {
        let text = "model: Qwen/Q\ntensor_parallel_size: 2\nenforce-eager: false\n\
                    disable_custom_all_reduce: false\ntrust-remote-code: yes\n\
                    compilation-config: {cudagraph_mode: NONE}\nallowed-origins: [a, b]\n\
                    gpu_memory_utilization: 0.85\nrevision: \"2\"\n";
        let args = config_args(1, text).expect("reads");
        assert_eq!(
            args,
            vec![
                "--model",
                "Qwen/Q",
                "--tensor_parallel_size",
                "2",
                "--no-enforce-eager",
                "--trust-remote-code",
                "--compilation-config",
                "{\"cudagraph_mode\":\"NONE\"}",
                "--allowed-origins",
                "a",
                "b",
                "--gpu_memory_utilization",
                "0.85",
                "--revision",
                "2",
            ]
        );
        let e = config_args(1, "- a\n").expect_err("not a mapping");
        assert!(
            matches!(
                e,
                LaunchError::Syntax {
                    file: 1,
                    line: 1,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(config_args(1, "").expect("empty"), Vec::<String>::new());
    }

    #[test]
    fn config_file_given_or_not() {
        let cli = "vllm serve m --config cfg.yaml --enforce-eager";
        let l = parse_launch(cli).expect("parses");
        assert_eq!(
            l.config_unread.as_deref(),
            Some("set by --config cfg.yaml, not read (give it with --launch-with cfg.yaml)")
        );
        let files = [
            SourceFile::new("launch", cli),
            SourceFile::new(
                "./cfg.yaml",
                "model: other\ntensor-parallel-size: 2\nenforce_eager: false\n",
            ),
        ];
        let l = parse_launch_files(&files, &Select::default()).expect("reads the file");
        assert_eq!(l.config_unread, None);
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(
            l.model.as_deref(),
            Some("m"),
            "the command line's model wins"
        );
        assert!(l.enforce_eager, "the command line wins");
        let files = [
            SourceFile::new("launch", "vllm serve --config cfg.yaml"),
            SourceFile::new("cfg.yaml", "model: other\n"),
        ];
        let l = parse_launch_files(&files, &Select::default()).expect("reads the file");
        assert_eq!(l.model.as_deref(), Some("other"), "the model from the file");
    }

    /// vLLM's boolean flags are argparse `BooleanOptionalAction`s: `--X` sets true, `--no-X`
    /// false, and the last one on the line wins (D5 of the review).
    #[test]
    fn negated_boolean_flags_last_one_wins() {
        let l = parse_launch(
            "vllm serve m -tp 2 --disable-custom-all-reduce --no-disable-custom-all-reduce",
        )
        .expect("parses");
        assert!(
            !l.disable_custom_all_reduce,
            "--no-X after --X turns it off"
        );
        assert_eq!(
            l.flags.get("disable-custom-all-reduce").map(String::as_str),
            Some("false")
        );
        let l =
            parse_launch("vllm serve m --enforce-eager --no-enforce-eager -tp 2").expect("parses");
        assert!(!l.enforce_eager);
        assert_eq!(
            l.tensor_parallel_size,
            Some(2),
            "--no-enforce-eager takes no value"
        );
        let l = parse_launch("vllm serve m --no-enforce-eager --enforce-eager").expect("parses");
        assert!(l.enforce_eager, "the later --X wins");
        let l =
            parse_launch("vllm serve m --enforce-eager=true --no-enforce-eager").expect("parses");
        assert!(!l.enforce_eager);
        let l =
            parse_launch("vllm serve m --no-disable-custom-all-reduce --disable_custom_all_reduce")
                .expect("parses");
        assert!(
            l.disable_custom_all_reduce,
            "underscores are read as dashes"
        );
        let (uses, _) = flag_uses(&["--no-enforce-eager".to_string(), "m".to_string()]);
        assert_eq!(uses.len(), 1);
        assert_eq!(uses[0].name, "enforce-eager");
        assert!(uses[0].negated);
        assert_eq!(uses[0].value, "false");
    }

    #[test]
    fn comment_inside_continuation_is_a_problem_with_its_line() {
        let text = "vllm serve m \\\n# --enforce-eager\n  --tensor-parallel-size 2";
        let l = parse_launch(text).expect("bash runs it");
        assert_eq!(l.tensor_parallel_size, None, "bash never passes it");
        assert_eq!(l.problems.len(), 1, "{:?}", l.problems);
        assert_eq!(l.problems[0].line, 3);
        assert!(
            l.problems[0].message.contains("--tensor-parallel-size 2"),
            "{:?}",
            l.problems
        );
    }

    #[test]
    fn non_numeric_tp_is_an_error_naming_the_flag() {
        let err = parse_launch("vllm serve m --tensor-parallel-size two").expect_err("must fail");
        assert!(err.to_string().contains("tensor-parallel-size"), "{err}");
    }

    #[test]
    fn finds_the_vllm_command_in_a_script() {
        let text = "#!/bin/bash\nset -e\ncd /srv && source venv/bin/activate\nvllm serve deepseek-ai/DeepSeek-V4-Flash -tp 2\necho done\n";
        let l = parse_launch(text).expect("parses");
        assert_eq!(l.tensor_parallel_size, Some(2));
    }

    #[test]
    fn no_vllm_command() {
        assert_eq!(parse_launch("echo hi"), Err(LaunchError::NoVllmCommand));
    }

    #[test]
    fn docker_run_env_and_image_args() {
        let text = "docker run --gpus all --ipc=host -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
                    --env=VLLM_USE_DEEP_GEMM=0 -e HF_TOKEN -p 8000:8000 vllm/vllm-openai:v0.24.0 \
                    --model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2";
        let loc = locate(text).expect("locates");
        assert_eq!(loc.form, Form::Docker);
        let l = parse_launch(text).expect("parses");
        assert_eq!(l.model.as_deref(), Some("Qwen/Qwen3.6-27B-FP8"));
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(
            l.env.get("VLLM_USE_DEEP_GEMM").map(String::as_str),
            Some("0")
        );
        assert!(!l.env.contains_key("HF_TOKEN"));
        assert!(loc.notes.iter().any(|n| n.contains("HF_TOKEN")));
        assert_eq!(&text[loc.env_insert.offset..][..16], "vllm/vllm-openai");
    }

    #[test]
    fn two_vllm_commands_are_refused_with_the_list() {
        let e = locate("vllm serve a\nvllm serve b --served-model-name bee\n").expect_err("two");
        let s = e.to_string();
        assert!(s.contains("line 1: vllm serve a"), "{s}");
        assert!(s.contains("--service bee"), "{s}");
        let files = [SourceFile::new(
            "run.sh",
            "vllm serve a\nvllm serve b --served-model-name bee\n",
        )];
        let l = locate_files(&files, &Select::service("bee")).expect("named");
        assert_eq!(l.arg_values()[0], "b");
        let l = locate_files(&files, &Select::service("line:1")).expect("by line");
        assert_eq!(l.arg_values(), vec!["a"]);
    }

    #[test]
    fn redirections_are_not_arguments() {
        let l = parse_launch("nohup vllm serve m -tp 2 > vllm.log 2>&1 &").expect("parses");
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.flags.len(), 1);
    }

    #[test]
    fn files_are_found_by_path_or_name() {
        let files = [
            SourceFile::new("/srv/run.sh", ""),
            SourceFile::new("/srv/conf/set_env.sh", ""),
            SourceFile::new("vllm.env", ""),
        ];
        assert_eq!(find_file(&files, "./conf/set_env.sh"), Some(1));
        assert_eq!(find_file(&files, "/etc/x/set_env.sh"), Some(1));
        assert_eq!(find_file(&files, "./vllm.env"), Some(2));
        assert_eq!(find_file(&files, "other.env"), None);
    }

    #[test]
    fn kinds_by_content() {
        assert_eq!(kind_of("x", "vllm serve m"), Kind::Shell);
        assert_eq!(kind_of("x", "A=1\n# c\nB=2\n"), Kind::EnvFile);
        assert_eq!(kind_of("set_env.sh", "A=1\n"), Kind::Shell);
        assert_eq!(
            kind_of("x", "services:\n  v:\n    image: vllm/vllm-openai\n"),
            Kind::Compose
        );
        assert_eq!(
            kind_of("x", "apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n"),
            Kind::Kubernetes
        );
        assert_eq!(
            kind_of("x", "[Service]\nExecStart=/usr/bin/vllm serve m\n"),
            Kind::Systemd
        );
    }
}
