//! Random text built from shell, docker and compose fragments never panics the parser or `fix`:
//! every input ends in a result or an error.

use proptest::prelude::*;
use sm120_doctor::{kb, launch, remedy};

const FRAGMENTS: &[&str] = &[
    "vllm",
    " serve",
    " m",
    "python3 -m vllm.entrypoints.openai.api_server",
    " --model",
    "docker run",
    " -e ",
    "--env=",
    " --env-file f",
    " img",
    "services:\n",
    "  vllm:\n",
    "    image: vllm/vllm-openai\n",
    "    command:",
    "    environment:",
    "      - ",
    "      A: ",
    "[",
    "]",
    ", ",
    "\n",
    " \\\n",
    " \\ \n",
    "\\",
    "'",
    "\"",
    "$",
    "$'",
    "${",
    "$(",
    "`",
    "#",
    " -tp",
    " 2",
    " --compilation-config",
    " -cc.cudagraph_mode=",
    "{",
    "}",
    ":",
    "=",
    "&&",
    ";",
    "|",
    ">",
    "2>&1",
    " &",
    "export ",
    "env ",
    "PYTORCH_CUDA_ALLOC_CONF=",
    "PYTORCH_ALLOC_CONF=",
    "expandable_segments:True",
    ",max_split_size_mb:512",
    "模",
    "é",
    " --enforce-eager",
    " --disable-custom-all-reduce",
    "\"cudagraph_mode\"",
    "FULL",
    "\t",
    "\r\n",
    "sudo ",
    "~",
    "*",
];

static KB: std::sync::LazyLock<kb::KnowledgeBase> =
    std::sync::LazyLock::new(|| kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb"));

/// Complete launches in each form, so random fragments around them reach the rewriter.
const HEADERS: &[&str] = &[
    "",
    "vllm serve m",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve m -tp 2",
    "docker run -e PYTORCH_ALLOC_CONF=expandable_segments:True img --model m",
    "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: --model m",
    "services:\n  vllm:\n    image: vllm/vllm-openai\n    environment:\n      - A=1\n    command:\n      - --model\n      - m\n",
];

fn fragments(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS.to_vec()), 0..max).prop_map(|v| v.concat())
}

fn text() -> impl Strategy<Value = String> {
    (
        fragments(6),
        prop::sample::select(HEADERS.to_vec()),
        fragments(20),
    )
        .prop_map(|(a, h, b)| format!("{a}{h}{b}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn parser_and_fix_never_panic(t in text()) {
        let _ = launch::parse_launch(&t);
        let ids: Vec<String> = [
            "drop_expandable_segments", "disable_custom_all_reduce", "enforce_eager",
            "cudagraph_piecewise", "deep_gemm_off", "deep_gemm_warmup_skip",
            "flashinfer_sampler_off", "apply_pr_43923",
        ].iter().map(|s| s.to_string()).collect();
        let result = remedy::fix(&t, &KB, &ids);
        if std::env::var_os("NO_PANIC_STATS").is_some() {
            eprintln!("stat {}", if result.is_ok() { "ok" } else { "err" });
        }
        if let Ok(out) = result {
            // Whatever was rewritten still parses.
            prop_assert!(launch::locate(&out.text).is_ok(), "{:?} -> {:?}", t, out.text);
        }
    }
}
