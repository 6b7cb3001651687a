//! Parse a vLLM launch command as users paste it into the [`Launch`] model.
//!
//! Handles env-prefix assignments, `export` lines, backslash continuations, comment lines,
//! `vllm serve MODEL ...` and `python -m vllm.entrypoints.openai.api_server --model MODEL ...`,
//! `--flag value` / `--flag=value`, and the compilation config as JSON or in dotted form.

use crate::snapshot::Launch;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LaunchError {
    #[error("line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error("no vLLM command found (expected `vllm serve ...` or `python -m vllm.entrypoints...`)")]
    NoVllmCommand,
    #[error("--{flag}: {message}")]
    BadValue { flag: String, message: String },
}

/// Flags that never take a value, so the next word is not swallowed.
const BOOLEAN_FLAGS: &[&str] = &[
    "enforce-eager",
    "disable-custom-all-reduce",
    "trust-remote-code",
    "enable-prefix-caching",
    "no-enable-prefix-caching",
    "enable-chunked-prefill",
    "no-enable-chunked-prefill",
    "disable-log-requests",
    "disable-log-stats",
    "enable-expert-parallel",
    "enable-auto-tool-choice",
    "enable-reasoning",
    "async-scheduling",
    "headless",
    "disable-frontend-multiprocessing",
    "enable-lora",
];

/// One shell command after joining continuations: its words and the line it started on.
#[derive(Debug, Clone, PartialEq)]
pub struct LogicalCommand {
    pub line: usize,
    pub words: Vec<String>,
}

/// Split a script into logical commands: join `\`-continued lines, drop comments and blank lines.
pub fn logical_commands(text: &str) -> Result<Vec<LogicalCommand>, LaunchError> {
    let mut out = Vec::new();
    let mut pending = String::new();
    let mut start_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = raw.trim_end();
        if pending.is_empty() {
            let t = trimmed.trim_start();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            start_line = line_no;
        } else if trimmed.trim_start().starts_with('#') {
            return Err(LaunchError::Syntax {
                line: line_no,
                message: "a comment line breaks the backslash continuation above it; the rest of \
                          the command would not run in a shell"
                    .into(),
            });
        }
        if let Some(body) = trimmed.strip_suffix('\\') {
            pending.push_str(body);
            pending.push(' ');
            continue;
        }
        pending.push_str(trimmed);
        push_command(&mut out, &pending, start_line)?;
        pending.clear();
    }
    if !pending.is_empty() {
        push_command(&mut out, &pending, start_line)?;
    }
    Ok(out)
}

fn push_command(out: &mut Vec<LogicalCommand>, text: &str, line: usize) -> Result<(), LaunchError> {
    // `a && b` and `a; b` hold several commands; split on unquoted separators via shlex words.
    let words = shlex::split(text).ok_or_else(|| LaunchError::Syntax {
        line,
        message: "unbalanced quotes".into(),
    })?;
    let mut current = Vec::new();
    for w in words {
        if w == "&&" || w == ";" || w == "||" || w == "|" {
            if !current.is_empty() {
                out.push(LogicalCommand {
                    line,
                    words: std::mem::take(&mut current),
                });
            }
        } else if let Some(stripped) = w.strip_suffix(';') {
            current.push(stripped.to_string());
            out.push(LogicalCommand {
                line,
                words: std::mem::take(&mut current),
            });
        } else {
            current.push(w);
        }
    }
    if !current.is_empty() {
        out.push(LogicalCommand {
            line,
            words: current,
        });
    }
    Ok(())
}

fn is_assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then_some((name, value))
}

/// Where the vLLM arguments start in `words`, and the entrypoint's name.
fn find_entrypoint(words: &[String]) -> Option<(usize, String)> {
    for (i, w) in words.iter().enumerate() {
        let base = w.rsplit('/').next().unwrap_or(w);
        if base == "vllm" && words.get(i + 1).map(String::as_str) == Some("serve") {
            return Some((i + 2, "vllm serve".into()));
        }
        if base.starts_with("python")
            && words.get(i + 1).map(String::as_str) == Some("-m")
            && words
                .get(i + 2)
                .is_some_and(|m| m.starts_with("vllm.entrypoints"))
        {
            return Some((i + 3, format!("python -m {}", words[i + 2])));
        }
    }
    None
}

/// Parse a launch script or one-liner. Environment comes from `export` lines and prefixes.
pub fn parse_launch(text: &str) -> Result<Launch, LaunchError> {
    let commands = logical_commands(text)?;
    let mut env = BTreeMap::new();
    for cmd in &commands {
        let mut words = cmd.words.as_slice();
        if words.first().map(String::as_str) == Some("export") {
            for w in &words[1..] {
                if let Some((k, v)) = is_assignment(w) {
                    env.insert(k.to_string(), v.to_string());
                }
            }
            continue;
        }
        if words.first().map(String::as_str) == Some("env") {
            words = &words[1..];
        }
        if let Some((start, entrypoint)) = find_entrypoint(words) {
            for w in &words[..start] {
                if let Some((k, v)) = is_assignment(w) {
                    env.insert(k.to_string(), v.to_string());
                }
            }
            let mut launch = parse_args(&words[start..], &entrypoint)?;
            launch.raw = text.trim().to_string();
            launch.env = env;
            return Ok(launch);
        }
        // A bare `VAR=value` line sets a shell variable; only exported ones reach vLLM, but
        // users often paste `VAR=x` then `vllm serve`, so note it as given.
        if words.iter().all(|w| is_assignment(w).is_some()) {
            for w in words {
                if let Some((k, v)) = is_assignment(w) {
                    env.insert(k.to_string(), v.to_string());
                }
            }
        }
    }
    Err(LaunchError::NoVllmCommand)
}

/// Normalise `-tp` and friends to the long flag name (without dashes).
fn long_name(flag: &str) -> String {
    match flag {
        "tp" => "tensor-parallel-size".into(),
        "pp" => "pipeline-parallel-size".into(),
        "dp" => "data-parallel-size".into(),
        "q" => "quantization".into(),
        "O" | "cc" => "compilation-config".into(),
        other => other.replace('_', "-"),
    }
}

fn parse_args(args: &[String], entrypoint: &str) -> Result<Launch, LaunchError> {
    let mut launch = Launch {
        entrypoint: entrypoint.to_string(),
        ..Default::default()
    };
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        let Some(stripped) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else {
            // Positional: the model for `vllm serve`.
            if launch.model.is_none() {
                launch.model = Some(word.clone());
            }
            i += 1;
            continue;
        };
        let (name, inline_value) = match stripped.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (stripped.to_string(), None),
        };
        let name = match name.split_once('.') {
            // -cc.cudagraph_mode / --compilation-config.cudagraph_mode
            Some((head, tail)) => format!("{}.{}", long_name(head), tail),
            None => long_name(&name),
        };
        let is_bool = BOOLEAN_FLAGS.contains(&name.as_str());
        let value = match inline_value {
            Some(v) => v,
            None if is_bool => String::new(),
            None => match args.get(i + 1) {
                Some(next) if !looks_like_flag(next) => {
                    i += 1;
                    next.clone()
                }
                _ => String::new(),
            },
        };
        apply_flag(&mut launch, &name, &value)?;
        launch.flags.insert(name, value);
        i += 1;
    }
    Ok(launch)
}

/// `--x` and `-x` are flags; `-1` is a (negative) value.
fn looks_like_flag(word: &str) -> bool {
    word.starts_with("--")
        || (word.len() > 1
            && word.starts_with('-')
            && !word[1..].starts_with(|c: char| c.is_ascii_digit()))
}

fn parse_num<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, LaunchError> {
    value.parse().map_err(|_| LaunchError::BadValue {
        flag: flag.to_string(),
        message: format!("expected a number, got {value:?}"),
    })
}

fn apply_flag(launch: &mut Launch, name: &str, value: &str) -> Result<(), LaunchError> {
    match name {
        "model" => launch.model = Some(value.to_string()),
        "tensor-parallel-size" => launch.tensor_parallel_size = Some(parse_num(name, value)?),
        "pipeline-parallel-size" => launch.pipeline_parallel_size = Some(parse_num(name, value)?),
        "data-parallel-size" => launch.data_parallel_size = Some(parse_num(name, value)?),
        "enforce-eager" => {
            launch.enforce_eager = value.is_empty() || value == "true" || value == "True"
        }
        "disable-custom-all-reduce" => {
            launch.disable_custom_all_reduce =
                value.is_empty() || value == "true" || value == "True"
        }
        "quantization" => launch.quantization = Some(value.to_string()),
        "gpu-memory-utilization" => launch.gpu_memory_utilization = Some(parse_num(name, value)?),
        "max-model-len" => launch.max_model_len = Some(parse_num(name, value)?),
        "compilation-config" => {
            if let Some(mode) =
                cudagraph_mode_from_json(value).map_err(|e| LaunchError::BadValue {
                    flag: name.to_string(),
                    message: e,
                })?
            {
                launch.cudagraph_mode = Some(mode);
            }
        }
        "compilation-config.cudagraph-mode" | "compilation-config.cudagraph_mode" => {
            launch.cudagraph_mode = Some(value.to_string())
        }
        _ => {}
    }
    Ok(())
}

/// `--compilation-config` takes JSON (`{"cudagraph_mode": "PIECEWISE"}`) or, as `-O`, a level number.
fn cudagraph_mode_from_json(value: &str) -> Result<Option<String>, String> {
    let v = value.trim();
    if !v.starts_with('{') {
        return Ok(None);
    }
    let json: serde_json::Value =
        serde_json::from_str(v).map_err(|e| format!("not valid JSON: {e}"))?;
    Ok(json
        .get("cudagraph_mode")
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
}
