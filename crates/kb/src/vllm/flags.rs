//! vLLM's command line as code: the entrypoints, the flag names the tool reads, the short
//! aliases, and which flags take no value. `launch/` parses words with this; `remedy/` edits
//! flags by these names. Source: vllm/engine/arg_utils.py (`EngineArgs.add_cli_args`) and
//! vllm/entrypoints/cli/serve.py.

use super::version;

/// `vllm serve`: the program and its subcommand.
pub const SERVE_PROGRAM: &str = "vllm";
pub const SERVE_SUBCOMMAND: &str = "serve";
/// `python -m vllm.entrypoints...` (the OpenAI server module and its siblings).
pub const ENTRYPOINT_MODULE_PREFIX: &str = "vllm.entrypoints";

/// Long flag names (without dashes) the launch model reads.
pub const MODEL: &str = "model";
pub const TENSOR_PARALLEL_SIZE: &str = "tensor-parallel-size";
pub const PIPELINE_PARALLEL_SIZE: &str = "pipeline-parallel-size";
pub const DATA_PARALLEL_SIZE: &str = "data-parallel-size";
pub const ENFORCE_EAGER: &str = "enforce-eager";
pub const DISABLE_CUSTOM_ALL_REDUCE: &str = "disable-custom-all-reduce";
pub const QUANTIZATION: &str = "quantization";
pub const GPU_MEMORY_UTILIZATION: &str = "gpu-memory-utilization";
pub const MAX_MODEL_LEN: &str = "max-model-len";
pub const COMPILATION_CONFIG: &str = "compilation-config";
/// `--optimization-level` (`-O`), vLLM 0.12.0 and later.
pub const OPTIMIZATION_LEVEL: &str = "optimization-level";
/// The first vLLM where `-O` is `--optimization-level` (PR #26847); up to 0.11 it was the short
/// form of `--compilation-config`, whose short form became `-cc`.
pub const O_IS_OPTIMIZATION_LEVEL_SINCE: &str = "0.12.0";
/// `--config FILE`: a YAML mapping of argument names (`-` or `_`) to values. vLLM turns it into
/// arguments placed before the command line's own (after the subcommand and model), so a flag
/// given on the command line wins over the file ("maintaining this order will enforce the
/// precedence of cli > config > defaults"): `FlexibleArgumentParser._pull_args_from_config` and
/// `load_config_file` in vllm/utils/argparse_utils.py, read at commit 00da11e37d1f. A `true` is
/// `--key`, a `false` is `--no-key` where that flag exists (else nothing), a list is `--key`
/// and its items, a mapping is `--key` and its JSON, anything else `--key str(value)`; the
/// model may be given as `model:`.
pub const CONFIG: &str = "config";
/// The compilation-config key that picks the CUDA graph mode.
pub const CUDAGRAPH_MODE_KEY: &str = "cudagraph_mode";

/// Short spellings and their long names (both without dashes).
pub const ALIASES: &[(&str, &str)] = &[
    ("tp", TENSOR_PARALLEL_SIZE),
    ("pp", PIPELINE_PARALLEL_SIZE),
    ("dp", DATA_PARALLEL_SIZE),
    ("q", QUANTIZATION),
    ("O", OPTIMIZATION_LEVEL),
    ("cc", COMPILATION_CONFIG),
];

/// Flags that never take a value, so the next word is not swallowed.
pub const BOOLEAN_FLAGS: &[&str] = &[
    ENFORCE_EAGER,
    DISABLE_CUSTOM_ALL_REDUCE,
    "trust-remote-code",
    "enable-prefix-caching",
    "enable-chunked-prefill",
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

/// Boolean flags that also have a `--no-` form. vLLM builds the flag of every `bool` config
/// field with `argparse.BooleanOptionalAction` ("Creates --no-<name> and --<name> flags",
/// `_compute_kwargs` in vllm/engine/arg_utils.py, read at commit 99d7eb5d6a51), so `--X` sets
/// true, `--no-X` sets false, and argparse keeps the last one given. `--enforce-eager`
/// (ModelConfig) and `--disable-custom-all-reduce` (ParallelConfig) are such fields.
/// `--disable-log-stats` and `--headless` are plain `store_true` flags with no `--no-` form.
pub const NEGATABLE_FLAGS: &[&str] = &[
    ENFORCE_EAGER,
    DISABLE_CUSTOM_ALL_REDUCE,
    "trust-remote-code",
    "enable-prefix-caching",
    "enable-chunked-prefill",
    "enable-expert-parallel",
    "async-scheduling",
];

/// `no-enforce-eager` → `enforce-eager`: the flag a `--no-` form turns off.
pub fn negated(name: &str) -> Option<&'static str> {
    let rest = name.strip_prefix("no-")?;
    NEGATABLE_FLAGS.iter().copied().find(|f| *f == rest)
}

/// Whether a vLLM flag (long name, no dashes) takes no value (its `--no-` form included).
pub fn is_boolean_flag(name: &str) -> bool {
    BOOLEAN_FLAGS.contains(&name) || negated(name).is_some()
}

/// A boolean flag's value as written (`--enforce-eager`, `--enforce-eager=true`): is it on?
pub fn is_on(value: &str) -> bool {
    value.is_empty() || value == "true" || value == "True"
}

/// Normalise `-tp` and friends to the long flag name (without dashes); dotted sub-keys
/// (`-cc.cudagraph_mode`) keep their tail. `-O.key=…` is the old dotted compilation-config
/// syntax (up to vLLM 0.12, deprecated there, rejected from 0.13), so it names a
/// compilation-config key; a bare `-O` is `--optimization-level` (see [`o_meaning`]).
pub fn long_name(flag: &str) -> String {
    let flag = flag.trim_start_matches('-');
    let (head, tail) = match flag.split_once('.') {
        Some((h, t)) => (h, Some(t)),
        None => (flag, None),
    };
    if head == "O" && tail.is_some() {
        return format!("{COMPILATION_CONFIG}.{}", tail.unwrap_or_default());
    }
    let head = ALIASES
        .iter()
        .find(|(short, _)| *short == head)
        .map(|(_, long)| long.to_string())
        .unwrap_or_else(|| head.replace('_', "-"));
    match tail {
        Some(t) => format!("{head}.{t}"),
        None => head,
    }
}

/// What `-O VALUE` (`--optimization-level VALUE`) means to the vLLM that reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OMeaning {
    /// vLLM 0.12 and later: an optimization level. `-O0` turns compilation and CUDA graphs
    /// off by default (cudagraph_mode NONE); `-O1` captures piecewise graphs; `-O2` (the
    /// default) and `-O3` capture FULL_AND_PIECEWISE. An explicit cudagraph_mode still wins
    /// (vllm/config/vllm.py `OPTIMIZATION_LEVEL_0x`, `_apply_optimization_level_defaults`).
    OptimizationLevel(u8),
    /// vLLM 0.11 and earlier: `-O<n>` is a compilation level (0.11.0) or mode (0.11.2); it
    /// says nothing about CUDA graphs by itself.
    CompilationLevel(u8),
    /// A JSON compilation config (`-O '{...}'`, vLLM 0.11 and earlier), or a value no vLLM
    /// reads as a level.
    CompilationConfig,
    /// A level on a build whose version cannot tell which meaning it has: a pre-release or a
    /// development build of 0.12.0 (or a nightly numbered before it) may be cut before or after
    /// the change (see src/vllm/version.rs on pre-releases and dev builds).
    Undecided(u8),
}

/// The meaning of an `-O` value: by the vLLM version when it is known, otherwise by the value's
/// shape (a digit is a level; vLLM 0.12 and later is assumed, since `-O '{json}'` is not
/// accepted there and every vLLM that runs SM120 models is newer).
pub(crate) fn o_meaning(value: &str, vllm: Option<&str>) -> OMeaning {
    let v = value.trim();
    let level = (v.len() == 1)
        .then(|| v.parse::<u8>().ok())
        .flatten()
        .filter(|n| *n <= 3);
    let era = vllm.and_then(optimization_level_era);
    match (level, era) {
        (Some(n), Some(version::Decision::Outside { .. })) => OMeaning::CompilationLevel(n),
        (Some(n), Some(version::Decision::Ask { .. })) => OMeaning::Undecided(n),
        (Some(n), _) => OMeaning::OptimizationLevel(n),
        (None, _) => OMeaning::CompilationConfig,
    }
}

/// Where a vLLM version lies against the release that made `-O` the optimization level;
/// `None` when the text is no version (then the value's shape decides).
fn optimization_level_era(vllm: &str) -> Option<version::Decision> {
    let since = version::Range::parse(&format!(">={O_IS_OPTIMIZATION_LEVEL_SINCE}")).ok()?;
    let placed = version::Placement::of(version::Package::Vllm, vllm).ok()?;
    Some(version::decide(&since, &placed, |_| None))
}

/// Does `-O VALUE` on this vLLM turn CUDA graphs off when no cudagraph_mode is given?
/// `None`: the version cannot tell (`-O 0` on a 0.12.0 pre-release).
pub fn o_disables_cuda_graphs(value: &str, vllm: Option<&str>) -> Option<bool> {
    match o_meaning(value, vllm) {
        OMeaning::OptimizationLevel(0) => Some(true),
        OMeaning::Undecided(0) => None,
        _ => Some(false),
    }
}

/// `-O3`: the level written into the flag word, as (flag, value).
pub fn attached_level(word: &str) -> Option<(&str, &str)> {
    let digits = word.strip_prefix("-O")?;
    (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())).then_some(("-O", digits))
}

/// A dotted compilation-config flag (`compilation-config.cudagraph_mode`): the key, with `-`
/// read as `_` the way vLLM does.
pub fn compilation_config_key(long: &str) -> Option<String> {
    long.strip_prefix(COMPILATION_CONFIG)
        .and_then(|t| t.strip_prefix('.'))
        .map(|t| t.replace('-', "_"))
}

/// Does `program next` start `vllm serve` (`program` may be a path)?
pub fn is_serve(program: &str, next: Option<&str>) -> bool {
    program.rsplit('/').next() == Some(SERVE_PROGRAM) && next == Some(SERVE_SUBCOMMAND)
}

/// Is `module` (after `python -m`) a vLLM server entrypoint?
pub fn is_entrypoint_module(module: &str) -> bool {
    module.starts_with(ENTRYPOINT_MODULE_PREFIX)
}

/// Flags that say how many GPUs one host gives a launch (long names without dashes; `dpl` is
/// vLLM's short `-dpl`). Source: vllm/engine/arg_utils.py, vllm/config/parallel.py.
pub const DATA_PARALLEL_SIZE_LOCAL: &[&str] = &["data-parallel-size-local", "dpl"];
pub const NNODES: &str = "nnodes";
pub const DISTRIBUTED_EXECUTOR_BACKEND: &str = "distributed-executor-backend";

/// GPUs the launch needs on the host it starts on: TP × PP × the data-parallel ranks that run
/// there (`--data-parallel-size-local`, else `--data-parallel-size`). vLLM refuses a world size
/// larger than the GPUs it sees ("World size (N) is larger than the number of available GPUs
/// (M) in this node", vllm/config/parallel.py). `Err` says why it cannot be told from the
/// launch: the launch spans several nodes (`--nnodes` > 1, the Ray backend).
pub fn gpus_needed_on_this_host(
    tp: Option<u32>,
    pp: Option<u32>,
    dp: Option<u32>,
    flags: &std::collections::BTreeMap<String, String>,
) -> Result<u64, String> {
    if let Some(n) = flags.get(NNODES)
        && n.parse::<u32>().map_or(true, |n| n > 1)
    {
        return Err(format!("the launch spans several nodes (--nnodes {n})"));
    }
    if flags
        .get(DISTRIBUTED_EXECUTOR_BACKEND)
        .is_some_and(|b| b == "ray")
    {
        return Err("the Ray backend may place workers on other nodes".into());
    }
    let local = DATA_PARALLEL_SIZE_LOCAL
        .iter()
        .find_map(|f| flags.get(*f))
        .map(|v| {
            v.parse::<u32>()
                .map_err(|_| format!("--data-parallel-size-local {v:?} is not a number"))
        })
        .transpose()?;
    let dp = local.or(dp).unwrap_or(1);
    Ok(u64::from(tp.unwrap_or(1)) * u64::from(pp.unwrap_or(1)) * u64::from(dp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_needed_is_tp_pp_and_local_dp() {
        let none = std::collections::BTreeMap::new();
        assert_eq!(gpus_needed_on_this_host(None, None, None, &none), Ok(1));
        assert_eq!(gpus_needed_on_this_host(Some(4), None, None, &none), Ok(4));
        assert_eq!(
            gpus_needed_on_this_host(Some(2), Some(2), Some(2), &none),
            Ok(8)
        );
        let flags = |k: &str, v: &str| {
            let mut m = std::collections::BTreeMap::new();
            m.insert(k.to_string(), v.to_string());
            m
        };
        assert_eq!(
            gpus_needed_on_this_host(Some(2), None, Some(4), &flags("dpl", "1")),
            Ok(2)
        );
        assert!(gpus_needed_on_this_host(Some(2), None, None, &flags("nnodes", "2")).is_err());
        assert_eq!(
            gpus_needed_on_this_host(Some(2), None, None, &flags("nnodes", "1")),
            Ok(2)
        );
        assert!(
            gpus_needed_on_this_host(
                Some(8),
                None,
                None,
                &flags("distributed-executor-backend", "ray")
            )
            .is_err()
        );
    }

    #[test]
    fn aliases_and_dotted_names() {
        assert_eq!(long_name("-tp"), "tensor-parallel-size");
        assert_eq!(long_name("--tensor_parallel_size"), "tensor-parallel-size");
        assert_eq!(long_name("-q"), "quantization");
        assert_eq!(
            long_name("-cc.cudagraph_mode"),
            "compilation-config.cudagraph_mode"
        );
        assert_eq!(long_name("--max-num-seqs"), "max-num-seqs");
        assert_eq!(
            compilation_config_key("compilation-config.cudagraph-mode").as_deref(),
            Some("cudagraph_mode")
        );
        assert_eq!(compilation_config_key("compilation-config"), None);
        assert_eq!(compilation_config_key("compilation-configx.a"), None);
    }

    #[test]
    fn boolean_flags_and_levels() {
        assert!(is_boolean_flag("enforce-eager"));
        assert!(!is_boolean_flag("tensor-parallel-size"));
        assert!(is_on("") && is_on("true") && is_on("True") && !is_on("false"));
        assert_eq!(negated("no-enforce-eager"), Some(ENFORCE_EAGER));
        assert_eq!(
            negated("no-disable-custom-all-reduce"),
            Some(DISABLE_CUSTOM_ALL_REDUCE)
        );
        assert_eq!(
            negated("no-disable-log-stats"),
            None,
            "store_true: no --no- form"
        );
        assert_eq!(negated("enforce-eager"), None);
        assert!(is_boolean_flag("no-enable-prefix-caching"));
        assert_eq!(attached_level("-O3"), Some(("-O", "3")));
        assert_eq!(attached_level("-O"), None);
        assert_eq!(attached_level("-Ox"), None);
    }

    /// `-O` is `--optimization-level` since vLLM 0.12 (PR #26847); before, a compilation config.
    #[test]
    fn o_means_the_optimization_level_since_0_12() {
        assert_eq!(long_name("-O"), OPTIMIZATION_LEVEL);
        assert_eq!(
            long_name("-O.cudagraph_mode"),
            "compilation-config.cudagraph_mode"
        );
        assert_eq!(
            o_meaning("0", Some("0.24.0")),
            OMeaning::OptimizationLevel(0)
        );
        assert_eq!(
            o_meaning("0", Some("0.12.0")),
            OMeaning::OptimizationLevel(0)
        );
        assert_eq!(
            o_meaning("3", Some("0.11.2")),
            OMeaning::CompilationLevel(3)
        );
        assert_eq!(
            o_meaning("0", Some("0.11.0+cu128")),
            OMeaning::CompilationLevel(0)
        );
        // Unknown version: by the value's shape.
        assert_eq!(o_meaning("0", None), OMeaning::OptimizationLevel(0));
        assert_eq!(
            o_meaning("{\"level\": 3}", None),
            OMeaning::CompilationConfig
        );
        assert_eq!(o_meaning("7", None), OMeaning::CompilationConfig);
        assert_eq!(
            o_disables_cuda_graphs("0", Some("0.24.0+cu130")),
            Some(true)
        );
        assert_eq!(o_disables_cuda_graphs("0", None), Some(true));
        assert_eq!(o_disables_cuda_graphs("0", Some("0.11.0")), Some(false));
        assert_eq!(o_disables_cuda_graphs("1", Some("0.24.0")), Some(false));
        assert_eq!(o_disables_cuda_graphs("3", None), Some(false));
    }

    /// A pre-release or dev build of 0.12.0 may be cut before or after `-O` changed meaning:
    /// undecided (the tool asks), not read as the final release; an rc of a later release is
    /// past the change.
    #[test]
    fn o_on_a_pre_release_of_0_12_is_undecided() {
        assert_eq!(o_meaning("0", Some("0.12.0rc1")), OMeaning::Undecided(0));
        assert_eq!(
            o_meaning("0", Some("0.12.0rc1.dev3+g1234abc")),
            OMeaning::Undecided(0)
        );
        assert_eq!(o_meaning("0", Some("0.11.2.dev40")), OMeaning::Undecided(0));
        assert_eq!(o_disables_cuda_graphs("0", Some("0.12.0rc1")), None);
        assert_eq!(o_disables_cuda_graphs("2", Some("0.12.0rc1")), Some(false));
        assert_eq!(
            o_meaning("0", Some("0.13.0rc1")),
            OMeaning::OptimizationLevel(0)
        );
        assert_eq!(
            o_meaning("0", Some("0.11.1rc2")),
            OMeaning::CompilationLevel(0)
        );
    }

    #[test]
    fn entrypoints() {
        assert!(is_serve("/usr/bin/vllm", Some("serve")));
        assert!(!is_serve("vllm", Some("bench")));
        assert!(is_entrypoint_module("vllm.entrypoints.openai.api_server"));
        assert!(!is_entrypoint_module("vllm_other"));
    }
}
