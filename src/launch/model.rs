//! From a located launch to the snapshot's [`Launch`] model: the environment the engine gets
//! (with what the text leaves unknown), the vLLM settings its arguments give, and the problems
//! found, named by file.

use super::{
    Arg, Form, LaunchError, Located, Render, SourceFile, config_args, config_file_named,
    config_unread_reason, find_file, flag_uses, is_name,
};
use crate::snapshot::{EngineEnv, EnvExpr, Launch, LaunchProblem};
use crate::vllm::flags;
use std::collections::BTreeMap;

pub(super) fn problems_of(files: &[SourceFile], located: &Located) -> Vec<LaunchProblem> {
    located
        .problems
        .iter()
        .map(|p| LaunchProblem {
            file: files
                .get(p.file)
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            line: p.line,
            message: p.message.clone(),
        })
        .collect()
}

/// Build the [`Launch`] model from a located launch.
pub(crate) fn launch_from(text: &str, located: &Located) -> Result<Launch, LaunchError> {
    build_launch(text, located, &[])
}

/// Build the [`Launch`] model; `files` are the files given, where a `--config FILE` is looked
/// for. Its arguments come first and the command line's after them, so the command line wins
/// (argparse keeps the last value). When it is not given, [`Launch::config_unread`] says so.
pub(super) fn build_launch(
    text: &str,
    located: &Located,
    files: &[SourceFile],
) -> Result<Launch, LaunchError> {
    let args = located.arg_values();
    let mut launch = Launch {
        entrypoint: located.entrypoint.clone().unwrap_or_default(),
        env_only: located.entrypoint.is_none(),
        ..Default::default()
    };
    let (flags, positional) = flag_uses(&args);
    let config = match config_file_named(&args) {
        Some(name) => match find_file(files, &name) {
            Some(i) => flag_uses(&config_args(i, &files[i].text)?).0,
            None => {
                launch.config_unread = Some(config_unread_reason(&name));
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    for f in &config {
        apply_flag(&mut launch, &f.name, &f.value)?;
        launch.flags.insert(f.name.clone(), f.value.clone());
    }
    // The model on the command line wins over the file's `model:`.
    if let Some(&p) = positional.first() {
        launch.model = Some(args[p].clone());
    }
    for f in &flags {
        let word = &located.args[f.value_index.unwrap_or(f.index)];
        if word.dynamic && f.name != flags::MODEL && flag_matters(&f.name, &f.value) {
            // `--tensor-parallel-size $TP` with TP from the caller: unknown, never a guess.
            launch.args_unknown.get_or_insert_with(|| {
                format!(
                    "--{} is given as {:?} (line {}), an expansion of a variable the launch does \
                     not set, so its value is not known here",
                    f.name, f.value, word.line
                )
            });
            continue;
        }
        apply_flag(&mut launch, &f.name, &f.value)?;
        launch.flags.insert(f.name.clone(), f.value.clone());
    }
    let mut env = BTreeMap::new();
    let mut exprs = BTreeMap::new();
    let mut from_host = std::collections::BTreeSet::new();
    let shell_text = matches!(located.form, Form::Shell | Form::Docker);
    for site in &located.env {
        exprs.remove(&site.name);
        from_host.remove(&site.name);
        match (&site.value, site.unset) {
            (_, true) => {
                env.remove(&site.name);
            }
            (Some(v), false) if site.dynamic => {
                env.remove(&site.name);
                exprs.insert(site.name.clone(), dynamic_value(&site.name, v, shell_text));
            }
            (Some(v), false) => {
                env.insert(site.name.clone(), v.clone());
            }
            (None, false) if site.dynamic => {
                env.remove(&site.name);
                if let Render::Fixed { why } = &site.render {
                    exprs.insert(
                        site.name.clone(),
                        EnvExpr::Unknown {
                            reason: format!("{why}: its value is not in the launch text"),
                        },
                    );
                    continue;
                }
                let dotenv = if located.form == Form::Compose {
                    " (or compose's .env beside the file: give it with --launch-with .env)"
                } else {
                    ""
                };
                exprs.insert(
                    site.name.clone(),
                    EnvExpr::Unknown {
                        reason: format!(
                            "{} (line {}) takes its value from a variable the launch does not \
                             set: it comes from the environment that runs the launch{dotenv}, \
                             which is not known here",
                            site.name, site.line
                        ),
                    },
                );
            }
            (None, false) => {
                env.remove(&site.name);
                from_host.insert(site.name.clone());
            }
        }
    }
    for (name, why) in &located.gaps.unknown {
        env.remove(name);
        from_host.remove(name);
        exprs.insert(
            name.clone(),
            EnvExpr::Unknown {
                reason: why.clone(),
            },
        );
    }
    launch.env = env;
    launch.env_expr = exprs;
    launch.engine_env = located.form.engine_env();
    launch.container = launch.engine_env == EngineEnv::Container;
    launch.from_host = from_host.into_iter().collect();
    launch.env_unread = located.gaps.unread.clone();
    if let Some(why) = args_unknown(&located.args) {
        launch.args_unknown = Some(why);
    }
    launch.unset = located.unset_names();
    launch.problems = located
        .problems
        .iter()
        .map(|p| LaunchProblem {
            file: String::new(),
            line: p.line,
            message: p.message.clone(),
        })
        .collect();
    launch.raw = text.trim().to_string();
    Ok(launch)
}

/// What a value holding an expansion gives. In a shell text, `${VAR:-default}` /
/// `${VAR-default}` with a literal default is the host's `VAR` or the default (the shell that
/// runs the launch evaluates it); anything else (`$(…)`, `$X`, a default that expands again) is
/// not known here.
fn dynamic_value(name: &str, value: &str, shell_text: bool) -> EnvExpr {
    if shell_text && let Some(e) = shell_default(value) {
        return e;
    }
    let what = if value.contains("$(") || value.contains('`') {
        "a command substitution"
    } else {
        "an expansion"
    };
    EnvExpr::Unknown {
        reason: format!(
            "{name} is set to {value:?}, {what} the tool does not evaluate, so its value is not \
             known here"
        ),
    }
}

/// `${VAR:-default}` or `${VAR-default}` as the whole value, the default plain text.
fn shell_default(value: &str) -> Option<EnvExpr> {
    let inner = value.strip_prefix("${")?.strip_suffix('}')?;
    let (var, default, empty_counts) = match inner.split_once(":-") {
        Some((v, d)) => (v, d, true),
        None => {
            let (v, d) = inner.split_once('-')?;
            (v, d, false)
        }
    };
    let plain = |t: &str| !t.contains(['$', '`', '{', '}', '\\']);
    (is_name(var) && plain(default)).then(|| EnvExpr::HostOr {
        var: var.to_string(),
        default: default.to_string(),
        empty_counts,
    })
}

/// Why the vLLM arguments are not known: a word built from an expansion that is not the
/// value of a flag and not the model (the first positional word) may expand to any number of
/// flags (`vllm serve m $ARGS`).
fn args_unknown(args: &[Arg]) -> Option<String> {
    let values: Vec<String> = args.iter().map(|a| a.value.clone()).collect();
    let (uses, positional) = flag_uses(&values);
    let flag_words: std::collections::BTreeSet<usize> = uses.iter().map(|u| u.index).collect();
    positional
        .iter()
        .skip(1)
        .chain(flag_words.iter())
        .map(|&i| &args[i])
        .find(|a| a.dynamic)
        .map(|a| {
            format!(
                "the vLLM arguments hold {:?} (line {}), an expansion that may add any flags \
                 (the tensor-parallel size among them), so the flags are not known here",
                a.value, a.line
            )
        })
}

fn parse_num<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, LaunchError> {
    value.parse().map_err(|_| LaunchError::BadValue {
        flag: flag.to_string(),
        message: format!("expected a number, got {value:?}"),
    })
}

/// Whether a flag's value feeds the launch model (the tensor-parallel size, eager mode, ...),
/// so an unknown value makes the model unknown; `--port $PORT` does not.
fn flag_matters(name: &str, value: &str) -> bool {
    let mut probe = Launch::default();
    apply_flag(&mut probe, name, value).is_err() || probe != Launch::default()
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
mod env_expr_tests {
    use super::*;
    use crate::launch::parse_launch;

    #[test]
    fn shell_defaults_are_read_and_other_expansions_are_unknown() {
        assert_eq!(
            shell_default("${A:-expandable_segments:True}"),
            Some(EnvExpr::HostOr {
                var: "A".into(),
                default: "expandable_segments:True".into(),
                empty_counts: true,
            })
        );
        assert_eq!(
            shell_default("${A-x}"),
            Some(EnvExpr::HostOr {
                var: "A".into(),
                default: "x".into(),
                empty_counts: false,
            })
        );
        // A default that expands again, a prefix, or a substitution: not a plain default.
        assert_eq!(shell_default("${A:-$B}"), None);
        assert_eq!(shell_default("x${A:-y}"), None);
        assert_eq!(shell_default("$(echo x)"), None);
        match dynamic_value("P", "$(echo x)", true) {
            EnvExpr::Unknown { reason } => assert!(reason.contains("command substitution")),
            other => panic!("{other:?}"),
        }
        // Outside a shell text the bash rule does not apply.
        assert!(matches!(
            dynamic_value("P", "${A:-x}", false),
            EnvExpr::Unknown { .. }
        ));
    }

    #[test]
    fn an_expansion_among_the_arguments_makes_them_unknown_but_not_as_the_model() {
        let l = parse_launch("ARGS='-tp 2'; vllm serve m $ARGS").expect("parse");
        assert!(
            l.args_unknown
                .as_deref()
                .is_some_and(|w| w.contains("$ARGS"))
        );
        let l = parse_launch("vllm serve \"$MODEL\" -tp 2").expect("parse");
        assert_eq!(l.args_unknown, None);
        assert_eq!(l.tensor_parallel_size, Some(2));
    }

    #[test]
    fn containers_and_passed_through_names() {
        let l = parse_launch("docker run -e A -e B=1 img --model m").expect("parse");
        assert!(l.container);
        assert_eq!(l.from_host, vec!["A".to_string()]);
        let l = parse_launch("export A=1\ndocker run -e A img --model m").expect("parse");
        assert!(l.from_host.is_empty());
        assert_eq!(l.env.get("A").map(String::as_str), Some("1"));
        assert!(!parse_launch("vllm serve m").expect("parse").container);
        // Whose environment the engine starts from, per form.
        let of = |t: &str| parse_launch(t).expect("parse").engine_env;
        assert_eq!(of("vllm serve m"), EngineEnv::Inherited);
        assert_eq!(of("docker run img --model m"), EngineEnv::Container);
        assert_eq!(
            of("[Service]\nExecStart=/usr/bin/vllm serve m\n"),
            EngineEnv::Unit
        );
        assert_eq!(
            of("services:\n  v:\n    image: vllm/vllm-openai\n    command: [\"--model\", \"m\"]\n"),
            EngineEnv::Container
        );
    }
}
