//! The GPU context signatures of knowledge/log_context.yaml: which lines say "this log ran on an
//! SM12x GPU" (ctx_gpu_sm12x) or "on a GB10 / sm_121" (ctx_gpu_sm121), and which must not. A
//! missed context turns a known failure into nothing; a false one turns an unrelated toolchain
//! error into an SM12x gap, so both directions are listed.

use sm120_doctor::kb::{self, CompiledSignature, KnowledgeBase};

fn kb() -> KnowledgeBase {
    kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
}

fn sig<'k>(kb: &'k KnowledgeBase, id: &str) -> &'k CompiledSignature {
    kb.signatures
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no signature {id}"))
}

/// A line counts for a signature when its regex matches and none of its `unless` does.
fn counts(s: &CompiledSignature, line: &str) -> bool {
    s.regex.is_match(line) && !s.unless.iter().any(|u| u.is_match(line))
}

#[test]
fn sm12x_context_names_every_sku_and_capability_form() {
    let kb = kb();
    let ctx = sig(&kb, "ctx_gpu_sm12x");
    for line in [
        "GPU 0: NVIDIA RTX PRO 4500 Blackwell",
        "GPU 0: NVIDIA RTX PRO 4000 Blackwell SFF Edition",
        "GPU 1: NVIDIA RTX PRO 2000 Blackwell",
        "device: NVIDIA GeForce RTX 5070 Ti Laptop GPU",
        "NVIDIA GeForce RTX 5060 Laptop GPU, 8151 MiB",
        "GPU 0: NVIDIA GeForce RTX 5080",
        "device_name=NVIDIA_GeForce_RTX_5090,dtype=fp8_w8a8",
        "2x DGX Spark (GB10), TP=2",
        "running on 4x Sparks over ConnectX-7",
        "GPU models and configuration : GPU 0: NVIDIA GB10",
        "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
        "Feature '.tile::gather4' not supported on .target 'sm_120a'",
        "Compute Capability: (12, 1)",
        "torch.cuda.get_device_capability() -> (12, 0)",
        "name, compute_cap: NVIDIA GB10, compute_cap 12.1",
        "Compute Cap  : 12.0",
        "Found GPU0 with compute capability 12.0",
    ] {
        assert!(counts(ctx, line), "ctx_gpu_sm12x should count: {line}");
    }
}

#[test]
fn sm12x_context_ignores_build_targets_and_lookalikes() {
    let kb = kb();
    let ctx = sig(&kb, "ctx_gpu_sm12x");
    for line in [
        // Build targets say what was compiled, not which GPU ran the log.
        "export TORCH_CUDA_ARCH_LIST=\"9.0;12.0\"",
        "nvcc -gencode arch=compute_90,code=sm_90 -gencode arch=compute_120,code=sm_120 -c x.cu",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120.",
        "  CUDA Archs: 8.0;9.0;10.0;12.0; ROCm: Disabled",
        "-- CUDA supported target architectures: 8.0;9.0;12.0",
        // Other GPUs and other things called Spark.
        "GPU 0: NVIDIA RTX 5000 Ada Generation",
        "GPU 0: NVIDIA RTX 5880 Ada Generation",
        "GPU 0: NVIDIA B200",
        "pyspark 3.5.1: Spark context started",
        "sm120-doctor report --log vllm.log",
    ] {
        assert!(!counts(ctx, line), "ctx_gpu_sm12x should not count: {line}");
    }
}

#[test]
fn sm121_context_is_gb10_only() {
    let kb = kb();
    let ctx = sig(&kb, "ctx_gpu_sm121");
    for line in [
        "GPU 0: NVIDIA GB10",
        "2x DGX Spark (GB10), TP=2",
        "ASUS Ascent GX10 (GB10)",
        "Compute Capability: (12, 1)",
        "compute_cap 12.1",
        "Value 'sm_121a' is not defined for option 'gpu-name'",
    ] {
        assert!(counts(ctx, line), "ctx_gpu_sm121 should count: {line}");
    }
    for line in [
        "GPU 0: NVIDIA GeForce RTX 5090",
        "Compute Capability: (12, 0)",
        "compute_cap 12.0",
        "export TORCH_CUDA_ARCH_LIST=12.1a",
        "GPU 0: NVIDIA GB100",
    ] {
        assert!(!counts(ctx, line), "ctx_gpu_sm121 should not count: {line}");
    }
}

/// A refusal that names no GPU, filed under a class about SM12x, is confirmed by an SM12x GPU
/// in the log, stays SUSPECTED when the log names no GPU, and names no class when the log names
/// another GPU (a Hopper or Ada card refuses the same way). vLLM's MXFP4-indexer refusal is
/// left out: its text lists "sm_120 (consumer Blackwell)" among the unsupported targets, which
/// the SM12x context reads as the GPU, so with no GPU line it is CONFIRMED (not fixed here).
#[test]
fn gpu_less_refusals_follow_the_gpu_in_the_log() {
    use sm120_doctor::engine::classify::{LogText, MatchConfidence, classify};
    let kb = kb();
    let refusals = [
        (
            "sparse_mla_sm12x",
            "RuntimeError: FlashMLA Sparse is only supported on Hopper and Blackwell DC devices.",
        ),
        (
            "sparse_mla_sm12x",
            "ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=576, dtype=torch.bfloat16, kv_cache_dtype=auto, block_size=None, use_mla=True, has_sink=False, use_sparse=True). Reasons: {FLASHMLA_SPARSE: [compute capability not supported]}.",
        ),
        (
            "sm120_kernel_missing",
            "NotImplementedError: DeepGEMM MegaMoE requires SM100 GPUs.",
        ),
    ];
    let gpus = [
        ("", Some(MatchConfidence::Suspected)),
        (
            "INFO 12-04 10:00:00 [cuda.py:1] GPU 0: NVIDIA GeForce RTX 5090\n",
            Some(MatchConfidence::Confirmed),
        ),
        (
            "INFO 12-04 10:00:00 [cuda.py:1] GPU 0: NVIDIA GeForce RTX 4090\n",
            None,
        ),
        (
            "INFO 12-04 10:00:00 [cuda.py:1] GPU 0: NVIDIA H100 80GB HBM3\n",
            None,
        ),
    ];
    for (class, refusal) in refusals {
        for (gpu, want) in &gpus {
            let log = LogText {
                name: "x.log".into(),
                text: format!("{gpu}{refusal}\n"),
            };
            let c = classify(&kb, std::slice::from_ref(&log));
            let got = c.confidence.get(class).copied();
            assert_eq!(got, *want, "{gpu:?} then {refusal:?}: {:?}", c.classes);
        }
    }
}
