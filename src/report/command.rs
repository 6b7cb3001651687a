//! What to run for a chosen remedy, as shown in a report: shell lines (environment changes, then
//! the launch with its flags edited), manual steps, and the tool command that writes the exact
//! artefact (`sm120-doctor fix` for launch edits, `sm120-doctor patch-script` for PR scripts).
//!
//! This is the report's own plain rendering from the parsed launch; it re-quotes every word, so
//! it is exact as argv but not byte-for-byte the user's text. `sm120-doctor fix` keeps the user's bytes.

use crate::facts::Facts;
use crate::kb::expr::Value;
use crate::kb::schema::Edit;
use crate::snapshot::{HostSnapshot, Launch};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemedyAction {
    /// Shell lines to run in order: environment changes, then the edited launch. Empty when the
    /// remedy changes neither.
    pub shell: Vec<String>,
    /// Steps a person has to take (upgrades, file copies, a launch edit when no launch was given).
    pub steps: Vec<String>,
    /// The tool command that writes the exact artefact for this remedy, when there is one.
    pub tool_command: Option<String>,
    /// The script file the tool command writes, for script remedies.
    pub script: Option<String>,
}

/// Quote one word for a POSIX shell.
pub fn quote(word: &str) -> String {
    match shlex::try_quote(word) {
        Ok(q) => q.into_owned(),
        // Only a NUL byte fails; a shell argument cannot hold one.
        Err(_) => shlex::try_quote(&word.replace('\0', ""))
            .map(|q| q.into_owned())
            .unwrap_or_default(),
    }
}

/// Remove `option` (e.g. `expandable_segments`) from an allocator config string.
pub fn drop_alloc_option(conf: &str, option: &str) -> String {
    conf.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .filter(|part| part.split(':').next().map(str::trim) != Some(option))
        .collect::<Vec<_>>()
        .join(",")
}

fn env_line(name: &str, value: Option<&str>) -> String {
    match value {
        Some(v) => format!("export {name}={}", quote(v)),
        None => format!("unset {name}"),
    }
}

fn str_fact(facts: &Facts, name: &str) -> Option<String> {
    match facts.get(name).value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// `export` assignments as (name, value).
type Exports = Vec<(String, String)>;

/// The words of the vLLM command in a launch (env prefixes included), and the `export` lines
/// before it.
fn launch_words(launch: &Launch) -> Option<(Vec<String>, Exports)> {
    let commands = crate::launch::logical_commands(&launch.raw).ok()?;
    let mut exports = Vec::new();
    for c in commands {
        let is_vllm = c
            .words
            .iter()
            .any(|w| w == "vllm" || w.ends_with("/vllm") || w.starts_with("vllm.entrypoints"));
        if is_vllm {
            return Some((c.words, exports));
        }
        if c.words.first().map(String::as_str) == Some("export") {
            for w in &c.words[1..] {
                if let Some((n, v)) = w.split_once('=') {
                    exports.push((n.to_string(), v.to_string()));
                }
            }
        }
    }
    None
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(n, _)| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !n.starts_with(|c: char| c.is_ascii_digit())
    })
}

fn flag_index(words: &[String], flag: &str) -> Option<usize> {
    let long = format!("--{flag}");
    let with_eq = format!("--{flag}=");
    words
        .iter()
        .position(|w| *w == long || w.starts_with(&with_eq))
}

fn set_compilation_config(words: &mut Vec<String>, key: &str, value: &str) {
    let json_value: serde_json::Value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.into()));
    // Dotted forms: `-cc.key=v`, `--compilation-config.key=v`.
    for prefix in ["-cc.", "--compilation-config."] {
        let eq = format!("{prefix}{key}=");
        if let Some(i) = words.iter().position(|w| w.starts_with(&eq)) {
            words[i] = format!("{eq}{value}");
            return;
        }
    }
    let names = ["--compilation-config", "-cc", "-O"];
    for (i, w) in words.clone().iter().enumerate() {
        let (arg_index, text) = if names.contains(&w.as_str()) {
            (i + 1, words.get(i + 1).cloned())
        } else if let Some((n, v)) = w.split_once('=')
            && names.contains(&n)
        {
            (i, Some(v.to_string()))
        } else {
            continue;
        };
        if let Some(text) = text
            && let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(&text)
        {
            map.insert(key.to_string(), json_value);
            let json = serde_json::Value::Object(map).to_string();
            if arg_index == i {
                words[i] = format!("{}={json}", w.split_once('=').map_or("", |p| p.0));
            } else {
                words[arg_index] = json;
            }
            return;
        }
    }
    let mut map = serde_json::Map::new();
    map.insert(key.to_string(), json_value);
    words.push("--compilation-config".into());
    words.push(serde_json::Value::Object(map).to_string());
}

/// Render words as one command, breaking the line before each `--flag`.
fn render_command(words: &[String]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            if w.starts_with("--") {
                out.push_str(" \\\n  ");
            } else {
                out.push(' ');
            }
        }
        out.push_str(&quote(w));
    }
    out
}

/// What to run for remedy `id` with `edits` on this host and launch.
pub fn action(id: &str, edits: &[Edit], snap: &HostSnapshot, facts: &Facts) -> RemedyAction {
    let mut act = RemedyAction::default();
    // Environment changes, by variable: Some(value) to set, None to unset.
    let mut env: Vec<(String, Option<String>)> = Vec::new();
    let mut set_env = |name: &str, value: Option<String>| {
        env.retain(|(n, _)| n != name);
        env.push((name.to_string(), value));
    };
    let launch = snap.launch.value();
    let mut words = launch.and_then(launch_words);
    let mut launch_edited = false;
    for e in edits {
        match e {
            Edit::SetEnv { name, value } => set_env(name, Some(value.clone())),
            Edit::UnsetEnv { name } => set_env(name, None),
            Edit::DropAllocOption { option } => {
                let mut any = false;
                for var in ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"] {
                    if let Some(conf) = str_fact(facts, &format!("env.{var}")) {
                        let kept = drop_alloc_option(&conf, option);
                        let has = conf
                            .split(',')
                            .any(|p| p.split(':').next().map(str::trim) == Some(option));
                        if has || conf.trim().is_empty() {
                            any = true;
                            set_env(var, if kept.is_empty() { None } else { Some(kept) });
                        }
                    }
                }
                if !any {
                    act.steps.push(format!(
                        "Remove `{option}` from PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF wherever the engine gets it (the given host does not show it set)."
                    ));
                }
            }
            Edit::AddFlag { flag, value } => match &mut words {
                Some((w, _)) => {
                    if flag_index(w, flag).is_none() {
                        w.push(format!("--{flag}"));
                        if let Some(v) = value {
                            w.push(v.clone());
                        }
                    }
                    launch_edited = true;
                }
                None => act.steps.push(match value {
                    Some(v) => format!("Add `--{flag} {v}` to the vLLM launch."),
                    None => format!("Add `--{flag}` to the vLLM launch."),
                }),
            },
            Edit::RemoveFlag { flag } => match &mut words {
                Some((w, _)) => {
                    if let Some(i) = flag_index(w, flag) {
                        let takes_next = !w[i].contains('=')
                            && w.get(i + 1).is_some_and(|n| !n.starts_with('-'));
                        w.remove(i);
                        if takes_next {
                            w.remove(i);
                        }
                    }
                    launch_edited = true;
                }
                None => act
                    .steps
                    .push(format!("Remove `--{flag}` from the vLLM launch.")),
            },
            Edit::SetCompilationConfig { key, value } => match &mut words {
                Some((w, _)) => {
                    set_compilation_config(w, key, value);
                    launch_edited = true;
                }
                None => act.steps.push(format!(
                    "Set `{key}` to `{value}` in the launch's `--compilation-config`."
                )),
            },
            Edit::PatchScript { pr } => {
                let script = format!("apply-pr-{pr}.sh");
                act.tool_command = Some(format!("sm120-doctor patch-script --pr {pr} -o {script}"));
                act.steps.push(format!(
                    "Review {script}, run `bash {script}` (a dry run), then `bash {script} --apply`."
                ));
                act.script = Some(script);
            }
            Edit::Manual { text } => act.steps.push(text.clone()),
        }
    }
    if let Some((mut w, exports)) = words
        && (launch_edited || !env.is_empty())
    {
        // Env prefixes on the vLLM command that an edit changes go; the edit sets them above.
        w.retain(|word| {
            !(is_assignment(word)
                && word
                    .split_once('=')
                    .is_some_and(|(n, _)| env.iter().any(|(e, _)| e == n)))
        });
        for (n, v) in &exports {
            if !env.iter().any(|(e, _)| e == n) {
                act.shell.push(env_line(n, Some(v)));
            }
        }
        for (n, v) in &env {
            act.shell.push(env_line(n, v.as_deref()));
        }
        act.shell.push(render_command(&w));
    } else {
        for (n, v) in &env {
            act.shell.push(env_line(n, v.as_deref()));
        }
    }
    if act.tool_command.is_none() && (launch_edited || !env.is_empty()) {
        act.tool_command = Some(format!(
            "sm120-doctor fix --launch-file LAUNCH_FILE --remedy {id}"
        ));
    }
    act
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Probed;

    fn snap_with(launch: &str, env: &[(&str, &str)]) -> HostSnapshot {
        let mut s = HostSnapshot::empty("test", "test");
        s.launch = Probed::Value(crate::launch::parse_launch(launch).expect("launch"));
        s.env = Probed::Value(crate::snapshot::Environment {
            source: "test".into(),
            vars: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            covers: None,
        });
        s
    }

    fn run(launch: &str, env: &[(&str, &str)], edits: &[Edit]) -> RemedyAction {
        let s = snap_with(launch, env);
        let facts = crate::facts::derive(&s, false);
        action("r", edits, &s, &facts)
    }

    #[test]
    fn drop_alloc_option_keeps_the_others() {
        assert_eq!(
            drop_alloc_option(
                "expandable_segments:True,max_split_size_mb:512",
                "expandable_segments"
            ),
            "max_split_size_mb:512"
        );
        assert_eq!(
            drop_alloc_option("expandable_segments:True", "expandable_segments"),
            ""
        );
        assert_eq!(drop_alloc_option(" a:1 , b:2 ", "c"), "a:1,b:2");
    }

    #[test]
    fn drop_expandable_unsets_an_export_in_the_script() {
        let a = run(
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nvllm serve m --tensor-parallel-size 2",
            &[],
            &[Edit::DropAllocOption {
                option: "expandable_segments".into(),
            }],
        );
        assert_eq!(
            a.shell,
            vec![
                "unset PYTORCH_CUDA_ALLOC_CONF".to_string(),
                "vllm serve m \\\n  --tensor-parallel-size 2".to_string()
            ]
        );
        assert_eq!(
            a.tool_command.as_deref(),
            Some("sm120-doctor fix --launch-file LAUNCH_FILE --remedy r")
        );
    }

    #[test]
    fn drop_expandable_keeps_other_options_from_the_host_env() {
        let a = run(
            "vllm serve m",
            &[(
                "PYTORCH_CUDA_ALLOC_CONF",
                "expandable_segments:True,max_split_size_mb:512",
            )],
            &[Edit::DropAllocOption {
                option: "expandable_segments".into(),
            }],
        );
        assert_eq!(
            a.shell,
            vec![
                "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512".to_string(),
                "vllm serve m".to_string()
            ]
        );
    }

    #[test]
    fn add_flag_once_and_prefix_env_is_replaced() {
        let a = run(
            "FOO='a b' VLLM_USE_DEEP_GEMM=1 vllm serve m --enforce-eager",
            &[],
            &[
                Edit::AddFlag {
                    flag: "enforce-eager".into(),
                    value: None,
                },
                Edit::AddFlag {
                    flag: "disable-custom-all-reduce".into(),
                    value: None,
                },
                Edit::SetEnv {
                    name: "VLLM_USE_DEEP_GEMM".into(),
                    value: "0".into(),
                },
            ],
        );
        assert_eq!(
            a.shell,
            vec![
                "export VLLM_USE_DEEP_GEMM=0".to_string(),
                "'FOO=a b' vllm serve m \\\n  --enforce-eager \\\n  --disable-custom-all-reduce"
                    .to_string()
            ]
        );
    }

    #[test]
    fn compilation_config_is_merged_into_the_json() {
        let a = run(
            r#"vllm serve m --compilation-config '{"level": 3, "cudagraph_mode": "FULL"}'"#,
            &[],
            &[Edit::SetCompilationConfig {
                key: "cudagraph_mode".into(),
                value: "PIECEWISE".into(),
            }],
        );
        assert_eq!(
            a.shell,
            vec![
                r#"vllm serve m \
  --compilation-config '{"cudagraph_mode":"PIECEWISE","level":3}'"#
                    .to_string()
            ]
        );
        let b = run(
            "vllm serve m",
            &[],
            &[Edit::SetCompilationConfig {
                key: "cudagraph_mode".into(),
                value: "PIECEWISE".into(),
            }],
        );
        assert_eq!(
            b.shell.last().map(String::as_str),
            Some("vllm serve m \\\n  --compilation-config '{\"cudagraph_mode\":\"PIECEWISE\"}'")
        );
    }

    #[test]
    fn remove_flag_takes_its_value() {
        let a = run(
            "vllm serve m --kv-cache-dtype fp8 --enforce-eager",
            &[],
            &[Edit::RemoveFlag {
                flag: "kv-cache-dtype".into(),
            }],
        );
        assert_eq!(
            a.shell,
            vec!["vllm serve m \\\n  --enforce-eager".to_string()]
        );
    }

    #[test]
    fn patch_script_names_the_script_and_the_tool_command() {
        let s = HostSnapshot::empty("t", "t");
        let facts = crate::facts::derive(&s, false);
        let a = action(
            "apply_pr_43923",
            &[Edit::PatchScript { pr: 43923 }],
            &s,
            &facts,
        );
        assert_eq!(a.script.as_deref(), Some("apply-pr-43923.sh"));
        assert_eq!(
            a.tool_command.as_deref(),
            Some("sm120-doctor patch-script --pr 43923 -o apply-pr-43923.sh")
        );
        assert!(a.shell.is_empty());
    }

    #[test]
    fn without_a_launch_flag_edits_become_steps() {
        let s = HostSnapshot::empty("t", "t");
        let facts = crate::facts::derive(&s, false);
        let a = action(
            "x",
            &[Edit::AddFlag {
                flag: "enforce-eager".into(),
                value: None,
            }],
            &s,
            &facts,
        );
        assert!(a.shell.is_empty());
        assert_eq!(
            a.steps,
            vec!["Add `--enforce-eager` to the vLLM launch.".to_string()]
        );
    }
}
