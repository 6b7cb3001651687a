//! Parse a vLLM launch command as users paste it into the [`Launch`] model, keeping byte spans.
//!
//! Forms: env-prefix assignments, `export` lines, backslash continuations (broken ones are
//! reported, not guessed), `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server
//! --model MODEL ...`, `--flag value` / `--flag=value`, the compilation config as JSON or in
//! dotted form, `docker run ... -e VAR=... IMAGE ARGS`, a docker compose service (see
//! [`compose`]), and a script with several commands (the vLLM one is used).
//!
//! [`locate`] returns a [`Located`]: where every environment assignment and every vLLM argument
//! sits in the text, and where new ones go. `remedy::rewrite` edits through those spans only.

pub mod compose;
pub mod lex;

use crate::snapshot::Launch;
use crate::vllm::flags::{self, attached_level, is_boolean_flag, long_name};
use lex::{SimpleCommand, Word};
use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LaunchError {
    #[error("line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error(
        "no vLLM command found (expected `vllm serve ...`, `python -m vllm.entrypoints...`, \
         `docker run ... IMAGE ...` or a compose service)"
    )]
    NoVllmCommand,
    #[error("--{flag}: {message}")]
    BadValue { flag: String, message: String },
}

impl From<lex::LexError> for LaunchError {
    fn from(e: lex::LexError) -> Self {
        LaunchError::Syntax {
            line: e.line,
            message: e.message,
        }
    }
}

/// Which kind of text the launch came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Shell,
    Docker,
    Compose,
}

/// How an item's text is written, so a replacement is quoted the same way.
#[derive(Debug, Clone, PartialEq)]
pub enum Render {
    /// A shell assignment `NAME=value` (the name must stay unquoted).
    Assign,
    /// A shell word (an argument, or a docker `-e` word); `prefix` is kept before it (`--env=`).
    ShellWord { prefix: String },
    /// A YAML block-list item or flow-list item holding the whole `NAME=value` / argument.
    YamlItem,
    /// A YAML map value (compose `environment:` map).
    YamlMapValue,
}

/// One environment assignment the launch makes.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvSite {
    pub name: String,
    /// `None` for docker `-e NAME` (the value comes from the caller's environment).
    pub value: Option<String>,
    /// Bytes to replace with a new rendering.
    pub span: Range<usize>,
    pub render: Render,
    /// Bytes to delete to remove the assignment.
    pub removal: Range<usize>,
    /// The value holds an expansion (`$X`), so the tool cannot know what bash passes.
    pub dynamic: bool,
    pub line: usize,
}

/// One word of the vLLM argument list.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub value: String,
    pub span: Range<usize>,
    pub render: Render,
    /// Bytes to delete to remove this word (with its separator).
    pub removal: Range<usize>,
    pub dynamic: bool,
    pub line: usize,
}

/// Where and how new text is inserted.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    pub offset: usize,
    pub style: InsertStyle,
}

#[derive(Debug, Clone, PartialEq)]
pub enum InsertStyle {
    /// `NAME=value ` before the program word.
    ShellPrefix,
    /// A new `export NAME=value` line after `offset` (the end of the last export line).
    ExportLine { indent: String },
    /// `-e NAME=value ` before the image word.
    DockerEnv,
    /// ` WORD...` on the same line.
    ShellSameLine,
    /// ` \` + newline + indent + `WORD...`.
    ShellNewLine { indent: String },
    /// A YAML block-list item per word: newline + indent + `- WORD`.
    YamlBlockItem { indent: String },
    /// A YAML map entry: newline + indent + `NAME: "value"`.
    YamlMapEntry { indent: String },
    /// A flow-list item: `, "WORD"` (or `"WORD"` when the list is empty).
    YamlFlowItem { empty: bool },
    /// A new `environment:` block under the service: newline + indent + `environment:` + item.
    YamlNewEnvBlock { indent: String },
}

/// A launch with the positions of everything a remedy may edit.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub form: Form,
    pub entrypoint: String,
    /// Assignments in effect order (a later one wins over an earlier one of the same name).
    pub env: Vec<EnvSite>,
    pub args: Vec<Arg>,
    pub env_insert: Insert,
    pub arg_insert: Insert,
    /// Things the user should know (variables inherited from the caller, env files, ...).
    pub notes: Vec<String>,
    /// Why this launch cannot be rewritten (it can still be read), if it cannot.
    pub read_only: Option<String>,
}

impl Located {
    /// The assignment in effect for `name`, if the launch makes one.
    pub fn env_site(&self, name: &str) -> Option<&EnvSite> {
        self.env.iter().rev().find(|s| s.name == name)
    }

    /// Argument values, as the program receives them.
    pub fn arg_values(&self) -> Vec<String> {
        self.args.iter().map(|a| a.value.clone()).collect()
    }
}

/// `NAME=value` with a valid shell name.
pub fn is_assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then_some((name, value))
}

/// Where the vLLM arguments start in `words`, and the entrypoint's name.
fn find_entrypoint(words: &[Word]) -> Option<(usize, usize, String)> {
    for (i, w) in words.iter().enumerate() {
        let base = w.value.rsplit('/').next().unwrap_or(&w.value);
        let next = words.get(i + 1).map(|w| w.value.as_str());
        if flags::is_serve(&w.value, next) {
            return Some((i, i + 2, "vllm serve".into()));
        }
        if base.starts_with("python")
            && next == Some("-m")
            && words
                .get(i + 2)
                .is_some_and(|m| flags::is_entrypoint_module(&m.value))
        {
            return Some((i, i + 3, format!("python -m {}", words[i + 2].value)));
        }
    }
    None
}

fn find_docker(words: &[Word]) -> Option<usize> {
    words.iter().enumerate().find_map(|(i, w)| {
        let base = w.value.rsplit('/').next().unwrap_or(&w.value);
        let next = words.get(i + 1).map(|w| w.value.as_str());
        ((base == "docker" || base == "podman") && next == Some("run")).then_some(i + 2)
    })
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map(|p| p + 1).unwrap_or(0)
}

fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map(|p| offset + p)
        .unwrap_or(text.len())
}

fn indent_at(text: &str, offset: usize) -> String {
    let s = line_start(text, offset);
    text[s..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// Shell words as arguments: each removes itself with the blank (and continuation) before it.
fn shell_args(words: &[Word], prev_end: usize) -> Vec<Arg> {
    let mut prev = prev_end;
    words
        .iter()
        .map(|w| {
            let a = Arg {
                value: w.value.clone(),
                span: w.span.clone(),
                render: Render::ShellWord {
                    prefix: String::new(),
                },
                removal: prev..w.span.end,
                dynamic: w.dynamic,
                line: w.line,
            };
            prev = w.span.end;
            a
        })
        .collect()
}

/// Where a new argument goes after `last_end`, continuing the command's line style.
fn shell_arg_insert(text: &str, first_line: usize, last: Option<&Word>, after: usize) -> Insert {
    match last {
        Some(w) if w.line > first_line => Insert {
            offset: w.span.end,
            style: InsertStyle::ShellNewLine {
                indent: indent_at(text, w.span.start),
            },
        },
        _ => Insert {
            offset: last.map_or(after, |w| w.span.end),
            style: InsertStyle::ShellSameLine,
        },
    }
}

fn assign_site(text: &str, w: &Word, removal: Range<usize>) -> Option<EnvSite> {
    let _ = text;
    let (name, value) = is_assignment(&w.value)?;
    Some(EnvSite {
        name: name.to_string(),
        value: Some(value.to_string()),
        span: w.span.clone(),
        render: Render::Assign,
        removal,
        dynamic: w.dynamic,
        line: w.line,
    })
}

/// Locate the vLLM launch in a shell script, a one-liner or a compose file.
pub fn locate(text: &str) -> Result<Located, LaunchError> {
    if compose::looks_like_compose(text) {
        return compose::locate(text);
    }
    let commands = lex::commands(text)?;
    let mut env: Vec<EnvSite> = Vec::new();
    let mut last_export: Option<&SimpleCommand> = None;
    // Later vLLM commands in the same script are left alone; say so.
    let others = |after: usize| -> Vec<String> {
        commands[after + 1..]
            .iter()
            .filter(|c| find_entrypoint(&c.words).is_some() || find_docker(&c.words).is_some())
            .map(|c| {
                format!(
                    "line {}: another vLLM command; only the first one (line {}) is used",
                    c.line, commands[after].line
                )
            })
            .collect()
    };
    for (idx, cmd) in commands.iter().enumerate() {
        let words = &cmd.words;
        if words[0].value == "export" {
            let n_assign = words[1..]
                .iter()
                .filter(|w| is_assignment(&w.value).is_some())
                .count();
            for (k, w) in words.iter().enumerate().skip(1) {
                // Removing the only assignment removes the whole line.
                let removal = if n_assign == 1 && words.len() == 2 {
                    let s = line_start(text, cmd.span.start);
                    let e = line_end(text, cmd.span.end);
                    s..(e + 1).min(text.len())
                } else {
                    words[k - 1].span.end..w.span.end
                };
                if let Some(site) = assign_site(text, w, removal) {
                    env.push(site);
                }
            }
            last_export = Some(cmd);
            continue;
        }
        if let Some(start) = find_docker(words) {
            let mut loc = locate_docker(text, cmd, start, env)?;
            loc.notes.extend(others(idx));
            return Ok(loc);
        }
        if let Some((prog, args_start, entrypoint)) = find_entrypoint(words) {
            let mut loc = locate_shell(text, cmd, prog, args_start, entrypoint, env, last_export);
            loc.notes.extend(others(idx));
            return Ok(loc);
        }
        // A bare `VAR=value` line sets a shell variable; only exported ones reach vLLM, but
        // users often paste `VAR=x` then `vllm serve`, so note it as given.
        if words.iter().all(|w| is_assignment(&w.value).is_some()) {
            for (k, w) in words.iter().enumerate() {
                let removal = match k {
                    0 => w.span.start..words.get(1).map_or(w.span.end, |n| n.span.start),
                    _ => words[k - 1].span.end..w.span.end,
                };
                if let Some(site) = assign_site(text, w, removal) {
                    env.push(site);
                }
            }
        }
    }
    Err(LaunchError::NoVllmCommand)
}

fn locate_shell(
    text: &str,
    cmd: &SimpleCommand,
    prog: usize,
    args_start: usize,
    entrypoint: String,
    mut env: Vec<EnvSite>,
    last_export: Option<&SimpleCommand>,
) -> Located {
    let words = &cmd.words;
    let mut first_program = None;
    let mut had_prefix = false;
    let mut in_env_cmd = false;
    // After `env A=1`, a new assignment goes right after the last one of `env`'s.
    let mut after_env_assign = None;
    for (k, w) in words[..prog].iter().enumerate() {
        let removal = w.span.start..words[k + 1].span.start;
        if is_assignment(&w.value).is_some() && (first_program.is_none() || in_env_cmd) {
            if let Some(site) = assign_site(text, w, removal) {
                env.push(site);
                had_prefix = true;
                if in_env_cmd {
                    after_env_assign = Some(words[k + 1].span.start);
                }
            }
            continue;
        }
        if first_program.is_none() {
            first_program = Some(k);
        }
        in_env_cmd = w.value == "env" || (in_env_cmd && w.value.starts_with('-'));
    }
    let first_program = first_program.unwrap_or(prog);
    let mut notes = Vec::new();
    if words[first_program..prog]
        .iter()
        .any(|w| w.value.rsplit('/').next() == Some("sudo"))
    {
        notes.push(
            "the command runs under sudo, which resets the environment (env_reset) unless told              otherwise: variables set before sudo may not reach vLLM; put them after sudo or use              sudo --preserve-env=NAME"
                .to_string(),
        );
    }
    let env_insert = match last_export {
        Some(exp) if !had_prefix && lex::line_of(text, exp.span.end) < words[prog].line => Insert {
            offset: line_end(text, exp.span.end),
            style: InsertStyle::ExportLine {
                indent: indent_at(text, exp.span.start),
            },
        },
        _ => Insert {
            offset: after_env_assign.unwrap_or(words[first_program].span.start),
            style: InsertStyle::ShellPrefix,
        },
    };
    let entry_end = words[args_start - 1].span.end;
    let args = shell_args(&words[args_start..], entry_end);
    let arg_insert = shell_arg_insert(
        text,
        words[prog].line,
        words[args_start..].last(),
        entry_end,
    );
    Located {
        form: Form::Shell,
        entrypoint,
        env,
        args,
        env_insert,
        arg_insert,
        notes,
        read_only: None,
    }
}

/// `docker run` options that take a value (so the next word is not the image).
const DOCKER_VALUE_OPTS: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-v",
    "--volume",
    "-p",
    "--publish",
    "--name",
    "--gpus",
    "--ipc",
    "--shm-size",
    "--network",
    "--net",
    "--entrypoint",
    "-w",
    "--workdir",
    "--runtime",
    "-u",
    "--user",
    "--device",
    "--ulimit",
    "--mount",
    "-l",
    "--label",
    "--restart",
    "--cpus",
    "--memory",
    "-m",
    "--platform",
    "--pull",
    "--log-driver",
    "--log-opt",
    "-h",
    "--hostname",
    "--add-host",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--tmpfs",
    "--cidfile",
    "--cpuset-cpus",
    "--memory-swap",
    "--pid",
    "--uts",
    "--group-add",
    "--dns",
    "--expose",
    "--health-cmd",
    "--stop-signal",
    "--stop-timeout",
    "--volumes-from",
    "--link",
    "--label-file",
    "--cgroupns",
    "--userns",
    "--privileged-mode",
];

fn locate_docker(
    text: &str,
    cmd: &SimpleCommand,
    start: usize,
    mut env: Vec<EnvSite>,
) -> Result<Located, LaunchError> {
    let words = &cmd.words;
    let mut notes = Vec::new();
    if !env.is_empty() {
        notes.push(
            "variables exported in the shell do not reach the container unless passed with -e; \
             only the -e/--env options of `docker run` are used"
                .to_string(),
        );
        env.clear();
    }
    let mut i = start;
    let mut image = None;
    while i < words.len() {
        let w = &words[i];
        let v = w.value.as_str();
        if !v.starts_with('-') || v == "-" {
            image = Some(i);
            break;
        }
        let (opt, inline) = match v.split_once('=') {
            Some((o, val)) if o.starts_with("--") => (o, Some(val)),
            _ => (v, None),
        };
        // `-eNAME=value`
        let (opt, inline) =
            if inline.is_none() && v.starts_with("-e") && v.len() > 2 && !v.starts_with("--") {
                ("-e", Some(&v[2..]))
            } else {
                (opt, inline)
            };
        let takes_value = DOCKER_VALUE_OPTS.contains(&opt);
        let (value, value_word, next) = match (inline, takes_value) {
            (Some(val), _) => (Some(val.to_string()), i, i + 1),
            (None, true) => match words.get(i + 1) {
                Some(n) => (Some(n.value.clone()), i + 1, i + 2),
                None => (None, i, i + 1),
            },
            (None, false) => (None, i, i + 1),
        };
        if opt == "-e" || opt == "--env" {
            if let Some(val) = value {
                let vw = &words[value_word];
                let prefix = if value_word == i {
                    // Inline: the option text stays in front.
                    let raw = &text[vw.span.clone()];
                    let opt_len = v.len() - val.len();
                    raw.get(..opt_len).unwrap_or("").to_string()
                } else {
                    String::new()
                };
                let removal = words[i - 1].span.end..vw.span.end;
                let (name, value) = match is_assignment(&val) {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => {
                        notes.push(format!(
                            "-e {val}: the container takes {val} from the environment that runs \
                             docker; its value is not in the command"
                        ));
                        (val.clone(), None)
                    }
                };
                env.push(EnvSite {
                    name,
                    value,
                    span: vw.span.clone(),
                    render: Render::ShellWord { prefix },
                    removal,
                    dynamic: vw.dynamic,
                    line: vw.line,
                });
            }
        } else if opt == "--env-file" {
            notes.push(format!(
                "--env-file {}: variables in that file reach the container too; this tool does \
                 not read it, so check it for {}",
                value.unwrap_or_default(),
                crate::vllm::alloc_conf::VARS.join(" / ")
            ));
        }
        i = next;
    }
    let image = image.ok_or(LaunchError::NoVllmCommand)?;
    let rest = &words[image + 1..];
    let (args_start, entrypoint) = match find_entrypoint(rest) {
        Some((_, s, e)) => (image + 1 + s, e),
        None => (
            image + 1,
            format!("docker run {} (image entrypoint)", words[image].value),
        ),
    };
    let entry_end = words[args_start - 1].span.end;
    let args = shell_args(&words[args_start..], entry_end);
    let arg_insert = shell_arg_insert(text, cmd.line, words[args_start..].last(), entry_end);
    Ok(Located {
        form: Form::Docker,
        entrypoint,
        env,
        args,
        env_insert: Insert {
            offset: words[image].span.start,
            style: InsertStyle::DockerEnv,
        },
        arg_insert,
        notes,
        read_only: None,
    })
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
}

/// `--x` and `-x` are flags; `-1` is a (negative) value.
fn looks_like_flag(word: &str) -> bool {
    word.starts_with("--")
        || (word.len() > 1
            && word.starts_with('-')
            && !word[1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// The flags in a vLLM argument list, and the positional words (the model for `vllm serve`).
pub fn flag_uses(args: &[String]) -> (Vec<FlagUse>, Vec<usize>) {
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
        let (value, value_index, inline) = match inline_value {
            Some(v) => (v, None, true),
            None if is_bool => (String::new(), None, false),
            None => match args.get(i + 1) {
                Some(next) if !looks_like_flag(next) => (next.clone(), Some(i + 1), false),
                _ => (String::new(), None, false),
            },
        };
        flags.push(FlagUse {
            name,
            index: i,
            value_index,
            value,
            inline,
        });
        i = value_index.map_or(i + 1, |v| v + 1);
    }
    (flags, positional)
}

/// Parse a launch script, one-liner, `docker run` or compose file.
pub fn parse_launch(text: &str) -> Result<Launch, LaunchError> {
    let located = locate(text)?;
    launch_from(text, &located)
}

/// Build the [`Launch`] model from a located launch.
pub fn launch_from(text: &str, located: &Located) -> Result<Launch, LaunchError> {
    let args = located.arg_values();
    let mut launch = Launch {
        entrypoint: located.entrypoint.clone(),
        ..Default::default()
    };
    let (flags, positional) = flag_uses(&args);
    if let Some(&p) = positional.first() {
        launch.model = Some(args[p].clone());
    }
    for f in &flags {
        apply_flag(&mut launch, &f.name, &f.value)?;
        launch.flags.insert(f.name.clone(), f.value.clone());
    }
    let mut env = BTreeMap::new();
    for site in &located.env {
        if let Some(v) = &site.value {
            env.insert(site.name.clone(), v.clone());
        }
    }
    launch.env = env;
    launch.raw = text.trim().to_string();
    Ok(launch)
}

fn parse_num<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, LaunchError> {
    value.parse().map_err(|_| LaunchError::BadValue {
        flag: flag.to_string(),
        message: format!("expected a number, got {value:?}"),
    })
}

fn apply_flag(launch: &mut Launch, name: &str, value: &str) -> Result<(), LaunchError> {
    use flags::*;
    if flags::compilation_config_key(name).as_deref() == Some(CUDAGRAPH_MODE_KEY) {
        launch.cudagraph_mode = Some(value.to_string());
        return Ok(());
    }
    match name {
        MODEL => launch.model = Some(value.to_string()),
        TENSOR_PARALLEL_SIZE => launch.tensor_parallel_size = Some(parse_num(name, value)?),
        PIPELINE_PARALLEL_SIZE => launch.pipeline_parallel_size = Some(parse_num(name, value)?),
        DATA_PARALLEL_SIZE => launch.data_parallel_size = Some(parse_num(name, value)?),
        ENFORCE_EAGER => launch.enforce_eager = flags::is_on(value),
        DISABLE_CUSTOM_ALL_REDUCE => launch.disable_custom_all_reduce = flags::is_on(value),
        QUANTIZATION => launch.quantization = Some(value.to_string()),
        GPU_MEMORY_UTILIZATION => launch.gpu_memory_utilization = Some(parse_num(name, value)?),
        MAX_MODEL_LEN => launch.max_model_len = Some(parse_num(name, value)?),
        // `-O '{json}'` is vLLM 0.11's compilation config; a level stays in `flags`.
        OPTIMIZATION_LEVEL if value.trim_start().starts_with('{') => {
            if let Some(mode) =
                cudagraph_mode_from_json(value).map_err(|e| LaunchError::BadValue {
                    flag: name.to_string(),
                    message: e,
                })?
            {
                launch.cudagraph_mode = Some(mode);
            }
        }
        COMPILATION_CONFIG => {
            if let Some(mode) =
                cudagraph_mode_from_json(value).map_err(|e| LaunchError::BadValue {
                    flag: name.to_string(),
                    message: e,
                })?
            {
                launch.cudagraph_mode = Some(mode);
            }
        }
        _ => {}
    }
    Ok(())
}

/// `--compilation-config` takes JSON (`{"cudagraph_mode": "PIECEWISE"}`); vLLM 0.11's `-O` took
/// JSON or a level number.
fn cudagraph_mode_from_json(value: &str) -> Result<Option<String>, String> {
    let v = value.trim();
    if !v.starts_with('{') {
        return Ok(None);
    }
    let json: serde_json::Value =
        serde_json::from_str(v).map_err(|e| format!("not valid JSON: {e}"))?;
    Ok(json
        .get(flags::CUDAGRAPH_MODE_KEY)
        .and_then(|m| m.as_str())
        .map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn comment_inside_continuation_is_reported_not_guessed() {
        let text = "vllm serve m \\\n# --enforce-eager\n  --tensor-parallel-size 2";
        let err = parse_launch(text).expect_err("must fail");
        assert!(
            matches!(err, LaunchError::Syntax { line: 2, .. }),
            "{err:?}"
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
    fn second_vllm_command_and_sudo_are_noted() {
        let loc = locate("sudo vllm serve a\nvllm serve b\n").expect("locates");
        assert!(
            loc.notes.iter().any(|n| n.contains("sudo")),
            "{:?}",
            loc.notes
        );
        assert!(
            loc.notes
                .iter()
                .any(|n| n.contains("line 2: another vLLM command; only the first one (line 1)")),
            "{:?}",
            loc.notes
        );
    }

    #[test]
    fn redirections_are_not_arguments() {
        let l = parse_launch("nohup vllm serve m -tp 2 > vllm.log 2>&1 &").expect("parses");
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.flags.len(), 1);
    }
}
