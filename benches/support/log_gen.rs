//! A deterministic, realistic vLLM server log for benchmarks: mostly INFO/DEBUG lines from the
//! engine, workers and API server, with a failure line every few thousand lines.

/// Lines that look like a vLLM start-up and serving log (no failure signature among them).
const NOISE: &[&str] = &[
    "(APIServer pid=2817) INFO 11-30 00:12:01 [api_server.py:1851] vLLM API server version 0.24.0",
    "(EngineCore pid=2817) INFO 11-30 00:12:03 [core.py:94] Initializing a V1 LLM engine (v0.24.0) with config: model='Qwen/Qwen3.6-27B-FP8', tensor_parallel_size=2, enforce_eager=False",
    "(Worker_TP0 pid=2950) INFO 11-30 00:12:09 [parallel_state.py:1203] rank 0 in world size 2 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0",
    "(Worker_TP1 pid=2951) INFO 11-30 00:12:10 [gpu_model_runner.py:2338] Starting to load model Qwen/Qwen3.6-27B-FP8...",
    "(Worker_TP0 pid=2950) INFO 11-30 00:12:51 [default_loader.py:267] Loading weights took 38.11 seconds",
    "(EngineCore pid=2817) INFO 11-30 00:13:30 [kv_cache_utils.py:1087] GPU KV cache size: 412,608 tokens",
    "(APIServer pid=2817) INFO:     127.0.0.1:51544 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "(APIServer pid=2817) INFO 11-30 00:20:01 [loggers.py:123] Engine 000: Avg prompt throughput: 1843.2 tokens/s, Avg generation throughput: 96.4 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.3%, Prefix cache hit rate: 41.0%",
    "(Worker_TP1 pid=2951) DEBUG 11-30 00:20:02 [custom_all_reduce.py:203] Registering 4902 cuda graph addresses",
    "(EngineCore pid=2817) WARNING 11-30 00:12:05 [cuda.py:211] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs.",
    "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|##########| 67/67 [00:04<00:00, 14.02it/s]",
];

/// Failure lines, one of which is inserted every `every` lines.
const FAILURES: &[&str] = &[
    "(Worker_TP1 pid=2951) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'",
    "RuntimeError: Assertion error (/workspace/deepgemm-src/csrc/apis/../jit_kernels/impls/../heuristics/../../utils/layout.hpp:76): Unknown recipe",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total capacity of 94.97 GiB",
    "RuntimeError: launch_cooperative_cluster, cooperative_topk launch failed: invalid argument",
];

/// Build a log of about `size` bytes with a failure line every `every` lines.
pub fn generate(size: usize, every: usize) -> String {
    let mut out = String::with_capacity(size + 512);
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut n = 0usize;
    while out.len() < size {
        n += 1;
        if n.is_multiple_of(every) {
            out.push_str(FAILURES[(n / every) % FAILURES.len()]);
        } else {
            // xorshift: deterministic and cheap.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.push_str(NOISE[(state % NOISE.len() as u64) as usize]);
        }
        out.push('\n');
    }
    out
}

/// A Rust regex written for POSIX ERE (`grep -E`): `\d` and `\w` become bracket classes and
/// non-capturing groups `(?:` plain groups (GNU grep reads `\b`, `\s`, `\S` itself).
pub fn to_ere(pattern: &str) -> String {
    pattern
        .replace("(?:", "(")
        .replace("\\d", "[0-9]")
        .replace("\\w", "[[:alnum:]_]")
        .replace("\\s", "[[:space:]]")
}
