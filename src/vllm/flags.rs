//! vLLM's command line as code: the entrypoints, the flag names the tool reads, the short
//! aliases, and which flags take no value. `launch/` parses words with this; `remedy/` edits
//! flags by these names. Source: vllm/engine/arg_utils.py (`EngineArgs.add_cli_args`) and
//! vllm/entrypoints/cli/serve.py.

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
/// The compilation-config key that picks the CUDA graph mode.
pub const CUDAGRAPH_MODE_KEY: &str = "cudagraph_mode";

/// Short spellings and their long names (both without dashes).
pub const ALIASES: &[(&str, &str)] = &[
    ("tp", TENSOR_PARALLEL_SIZE),
    ("pp", PIPELINE_PARALLEL_SIZE),
    ("dp", DATA_PARALLEL_SIZE),
    ("q", QUANTIZATION),
    ("O", COMPILATION_CONFIG),
    ("cc", COMPILATION_CONFIG),
];

/// Flags that never take a value, so the next word is not swallowed.
pub const BOOLEAN_FLAGS: &[&str] = &[
    ENFORCE_EAGER,
    DISABLE_CUSTOM_ALL_REDUCE,
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

/// Whether a vLLM flag (long name, no dashes) takes no value.
pub fn is_boolean_flag(name: &str) -> bool {
    BOOLEAN_FLAGS.contains(&name)
}

/// A boolean flag's value as written (`--enforce-eager`, `--enforce-eager=true`): is it on?
pub fn is_on(value: &str) -> bool {
    value.is_empty() || value == "true" || value == "True"
}

/// Normalise `-tp` and friends to the long flag name (without dashes); dotted sub-keys
/// (`-cc.cudagraph_mode`) keep their tail.
pub fn long_name(flag: &str) -> String {
    let flag = flag.trim_start_matches('-');
    let (head, tail) = match flag.split_once('.') {
        Some((h, t)) => (h, Some(t)),
        None => (flag, None),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(attached_level("-O3"), Some(("-O", "3")));
        assert_eq!(attached_level("-O"), None);
        assert_eq!(attached_level("-Ox"), None);
    }

    #[test]
    fn entrypoints() {
        assert!(is_serve("/usr/bin/vllm", Some("serve")));
        assert!(!is_serve("vllm", Some("bench")));
        assert!(is_entrypoint_module("vllm.entrypoints.openai.api_server"));
        assert!(!is_entrypoint_module("vllm_other"));
    }
}
