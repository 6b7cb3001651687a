//! `launch.*`: the vLLM launch command, as parsed by `launch/`.

use super::{Fact, FactDef, Facts, Input, OpenFamily, probed, str_or_null};
use crate::snapshot::{HostSnapshot, Launch, Probed};
use crate::value::Value;
use crate::vllm::flags;

/// How a launch is named when it does not say where it came from.
const SOURCE: &str = "launch command";

/// Where the launch came from, as sources name it (`--launch`, `typed in the TUI`, ...).
pub(super) fn source(snap: &HostSnapshot) -> String {
    match snap.launch.value() {
        Some(l) if !l.source.is_empty() => format!("launch command ({})", l.source),
        _ => SOURCE.into(),
    }
}

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "launch.given",
        about: "a launch command was given",
        derive: |i| match &i.snap.launch {
            Probed::Value(_) => Fact::new(Value::Bool(true), source(i.snap)),
            _ => Fact::assumed(Value::Bool(false), "no launch command given"),
        },
    },
    FactDef {
        name: "launch.entrypoint",
        about: "vllm serve or python -m ...",
        derive: |i| launch(i, |l| Value::Str(l.entrypoint.clone())),
    },
    FactDef {
        name: "launch.model",
        about: "model name or path",
        derive: |i| setting(i, |l| l.model.is_some(), |l| str_or_null(&l.model)),
    },
    FactDef {
        name: "launch.model_lower",
        about: "model name in lower case",
        derive: |i| {
            setting(
                i,
                |l| l.model.is_some(),
                |l| str_or_null(&l.model.as_ref().map(|m| m.to_lowercase())),
            )
        },
    },
    FactDef {
        name: "launch.tp",
        about: "tensor-parallel size (1 when not given)",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::TENSOR_PARALLEL_SIZE]),
                |l| size(l.tensor_parallel_size),
            )
        },
    },
    FactDef {
        name: "launch.pp",
        about: "pipeline-parallel size (1 when not given)",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::PIPELINE_PARALLEL_SIZE]),
                |l| size(l.pipeline_parallel_size),
            )
        },
    },
    FactDef {
        name: "launch.dp",
        about: "data-parallel size (1 when not given)",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::DATA_PARALLEL_SIZE]),
                |l| size(l.data_parallel_size),
            )
        },
    },
    FactDef {
        name: "launch.gpus_needed",
        about: "GPUs the launch needs on this host: TP × PP × local data-parallel ranks (unknown when it spans nodes)",
        derive: |i| {
            let sizes = [
                flags::TENSOR_PARALLEL_SIZE,
                flags::PIPELINE_PARALLEL_SIZE,
                flags::DATA_PARALLEL_SIZE,
            ];
            setting(
                i,
                |l| stated(l, &sizes),
                |l| match flags::gpus_needed_on_this_host(
                    l.tensor_parallel_size,
                    l.pipeline_parallel_size,
                    l.data_parallel_size,
                    &l.flags,
                ) {
                    Ok(n) => Value::Num(n as f64),
                    Err(why) => Value::unknown(why),
                },
            )
        },
    },
    FactDef {
        name: "launch.enforce_eager",
        about: "--enforce-eager given",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::ENFORCE_EAGER]),
                |l| Value::Bool(l.enforce_eager),
            )
        },
    },
    FactDef {
        name: "launch.disable_custom_all_reduce",
        about: "--disable-custom-all-reduce given",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::DISABLE_CUSTOM_ALL_REDUCE]),
                |l| Value::Bool(l.disable_custom_all_reduce),
            )
        },
    },
    FactDef {
        name: "launch.cudagraph_mode",
        about: "cudagraph_mode given in the compilation config (null: vLLM's default)",
        derive: |i| {
            setting(
                i,
                |l| l.cudagraph_mode.is_some(),
                |l| str_or_null(&l.cudagraph_mode),
            )
        },
    },
    FactDef {
        name: "launch.optimization_level",
        about: "-O / --optimization-level as given (null: vLLM's default, O2)",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::OPTIMIZATION_LEVEL]),
                |l| str_or_null(&l.flags.get(flags::OPTIMIZATION_LEVEL).cloned()),
            )
        },
    },
    FactDef {
        name: "launch.cuda_graphs",
        about: "CUDA graphs will be captured (no --enforce-eager, cudagraph_mode not NONE, and no -O0 on vLLM 0.12 or later)",
        derive: |i| {
            let vllm = i
                .snap
                .python
                .value()
                .and_then(|p| p.vllm.value())
                .map(String::as_str);
            // Known with a --config file unread only when the command line itself turns
            // graphs off (it wins over the file).
            let off = |l: &Launch| {
                l.enforce_eager
                    || l.cudagraph_mode
                        .as_deref()
                        .is_some_and(|m| m.eq_ignore_ascii_case("NONE"))
            };
            setting(i, off, |l| {
                if l.enforce_eager {
                    return Value::Bool(false);
                }
                let o = l.flags.get(flags::OPTIMIZATION_LEVEL);
                match l.cudagraph_mode.as_deref() {
                    Some(m) => Value::Bool(!m.eq_ignore_ascii_case("NONE")),
                    // No explicit mode: -O0 makes NONE the default on vLLM 0.12+.
                    None => match o.map(|o| flags::o_disables_cuda_graphs(o, vllm)) {
                        None | Some(Some(false)) => Value::Bool(true),
                        Some(Some(true)) => Value::Bool(false),
                        Some(None) => Value::unknown(format!(
                            "-O {} on vLLM {}: a pre-release or development build of {} may read \
                             it as the optimization level (CUDA graphs off) or as the older \
                             compilation level (graphs on)",
                            o.map_or("", String::as_str),
                            vllm.unwrap_or("?"),
                            flags::O_IS_OPTIMIZATION_LEVEL_SINCE
                        )),
                    },
                }
            })
        },
    },
    FactDef {
        name: "launch.quantization",
        about: "--quantization",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::QUANTIZATION]),
                |l| str_or_null(&l.quantization),
            )
        },
    },
    FactDef {
        name: "launch.gpu_memory_utilization",
        about: "--gpu-memory-utilization",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::GPU_MEMORY_UTILIZATION]),
                |l| {
                    l.gpu_memory_utilization
                        .map(Value::Num)
                        .unwrap_or(Value::Null)
                },
            )
        },
    },
    FactDef {
        name: "launch.max_model_len",
        about: "--max-model-len",
        derive: |i| {
            setting(
                i,
                |l| stated(l, &[flags::MAX_MODEL_LEN]),
                |l| {
                    l.max_model_len
                        .map(|v| Value::Num(v as f64))
                        .unwrap_or(Value::Null)
                },
            )
        },
    },
];

/// Facts about the launch text itself (they hold for an env-only launch too).
pub(super) const TEXT_FACTS: &[FactDef] = &[
    FactDef {
        name: "launch.problem_count",
        about: "places where the launch text does not do what it seems to (a broken continuation, a variable never exported)",
        derive: |i| text(i, |l| Value::Num(l.problems.len() as f64)),
    },
    FactDef {
        name: "launch.problems",
        about: "those places, as FILE:LINE: what happens",
        derive: |i| {
            text(i, |l| {
                Value::Str(
                    l.problems
                        .iter()
                        .map(|p| {
                            if p.file.is_empty() {
                                format!("line {}: {}", p.line, p.message)
                            } else {
                                format!("{}:{}: {}", p.file, p.line, p.message)
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("; "),
                )
            })
        },
    },
    FactDef {
        name: "launch.env_only",
        about: "the launch text only sets the environment (an env file): no vLLM command, so its flags are unknown",
        derive: |i| text(i, |l| Value::Bool(l.env_only)),
    },
];

pub(super) const OPEN: OpenFamily = OpenFamily {
    prefix: "launch.flag.",
    shown: "launch.flag.NAME",
    about: "a vLLM flag's value as given (null when absent)",
    lookup: |f: &Facts, flag: &str| match &f.flags {
        Some(_) if f.args_unknown.is_some() => {
            Fact::unknown(f.args_unknown.clone().unwrap_or_default())
        }
        Some(flags) => Fact::new(
            flags
                .get(flag)
                .map(|v| Value::Str(v.clone()))
                .unwrap_or(Value::Null),
            f.launch_source.clone(),
        ),
        None => Fact::unknown(crate::value::Reason::missing(crate::value::Input::Launch)),
    },
};

/// A fact about the vLLM command: unknown when the launch only sets the environment.
fn launch(i: &Input<'_>, f: impl FnOnce(&Launch) -> Value) -> Fact {
    if i.snap.launch.value().is_some_and(|l| l.env_only) {
        return Fact::unknown("the launch given sets only the environment (no vLLM command)");
    }
    if let Some(why) = i.snap.launch.value().and_then(|l| l.args_unknown.as_ref()) {
        return Fact::unknown(why.clone());
    }
    probed(&i.snap.launch, source(i.snap), f)
}

/// A launch setting vLLM's `--config FILE` may set: unknown when that file was not read and
/// the command line does not state the setting itself (`stated`); the command line wins over
/// the file.
fn setting(
    i: &Input<'_>,
    stated: impl FnOnce(&Launch) -> bool,
    f: impl FnOnce(&Launch) -> Value,
) -> Fact {
    match i.snap.launch.value() {
        Some(l) if !l.env_only && l.config_unread.is_some() && !stated(l) => {
            Fact::unknown(l.config_unread.clone().unwrap_or_default())
        }
        _ => launch(i, f),
    }
}

/// Does the command line give every one of these flags?
fn stated(l: &Launch, names: &[&str]) -> bool {
    names.iter().all(|n| l.flags.contains_key(*n))
}

/// A fact about the launch text, whatever it holds.
fn text(i: &Input<'_>, f: impl FnOnce(&Launch) -> Value) -> Fact {
    probed(&i.snap.launch, source(i.snap), f)
}

fn size(v: Option<u32>) -> Value {
    Value::Num(v.unwrap_or(1) as f64)
}
