//! Byte fuzzers for every reader of user input, on stable Rust (cargo-fuzz needs nightly, which
//! this project's toolchain does not have): proptest mutates the committed seed corpora in
//! tests/fuzz/<reader>/ (byte flips, deletions, duplications, truncation and insertions of
//! tokens that matter to that format) and feeds the result to the reader.
//!
//! The property for each reader: it returns (a value or an error) without panicking, within a
//! time bound, and an error names the input. A stack overflow would abort the test binary, so
//! it fails too. 128 cases per reader keep CI short; `FUZZ_CASES=20000 cargo test --test
//! robustness fuzz_readers::` runs longer. proptest records a failing input in
//! tests/robustness/fuzz_readers.proptest-regressions (commit it).

use proptest::prelude::*;
use sm120_doctor::engine::classify::Scanner;
use sm120_doctor::kb::expr;
use std::path::Path;
use std::time::{Duration, Instant};

const FUZZ_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fuzz");

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // Inputs are built from seeds; shrinking long byte strings is slow and not needed to
        // read a failure (the failing input is printed whole).
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    }
}

/// The seed files of one reader, sorted by name (read once).
fn seeds(reader: &str) -> &'static [Vec<u8>] {
    static ALL: std::sync::LazyLock<std::collections::HashMap<&'static str, Vec<Vec<u8>>>> =
        std::sync::LazyLock::new(|| {
            [
                "snapshot",
                "collect_env",
                "launch",
                "compose",
                "log",
                "expr",
            ]
            .into_iter()
            .map(|r| (r, read_seeds(r)))
            .collect()
        });
    ALL.get(reader).map_or(&[], |v| v.as_slice())
}

/// The embedded knowledge base, loaded once.
fn kb() -> &'static sm120_doctor::kb::KnowledgeBase {
    static KB: std::sync::LazyLock<sm120_doctor::kb::KnowledgeBase> =
        std::sync::LazyLock::new(|| {
            sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb")
        });
    &KB
}

fn read_seeds(reader: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(FUZZ_DIR).join(reader);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    let out: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).expect("seed"))
        .collect();
    assert!(!out.is_empty(), "no seeds in {}", dir.display());
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, usize),
    InsertBytes(usize, Vec<u8>),
    Truncate(usize),
}

fn mutation(tokens: usize) -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        2 => (any::<usize>(), 1usize..64).prop_map(|(p, n)| Mutation::Delete(p, n)),
        1 => (any::<usize>(), 1usize..256).prop_map(|(p, n)| Mutation::Duplicate(p, n)),
        6 => (any::<usize>(), 0..tokens).prop_map(|(p, t)| Mutation::Insert(p, t)),
        2 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(p, b)| Mutation::InsertBytes(p, b)),
        1 => (any::<usize>()).prop_map(Mutation::Truncate),
    ]
}

fn apply(mut bytes: Vec<u8>, muts: &[Mutation], tokens: &[&str]) -> Vec<u8> {
    for m in muts {
        let len = bytes.len();
        let at = |p: usize| if len == 0 { 0 } else { p % (len + 1) };
        match m {
            Mutation::Flip(p, b) if len > 0 => bytes[p % len] ^= b | 1,
            Mutation::Flip(..) => {}
            Mutation::Delete(p, n) => {
                let s = at(*p);
                let e = (s + n).min(len);
                bytes.drain(s..e);
            }
            Mutation::Duplicate(p, n) => {
                let s = at(*p);
                let e = (s + n).min(len);
                let part = bytes[s..e].to_vec();
                bytes.splice(e..e, part);
            }
            Mutation::Insert(p, t) => {
                let s = at(*p);
                bytes.splice(s..s, tokens[*t].bytes());
            }
            Mutation::InsertBytes(p, b) => {
                let s = at(*p);
                bytes.splice(s..s, b.iter().copied());
            }
            Mutation::Truncate(p) => {
                let s = at(*p);
                bytes.truncate(s);
            }
        }
    }
    bytes
}

/// A mutated seed: which seed, and the mutations.
fn input(n_seeds: usize, tokens: usize) -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (
        0..n_seeds,
        proptest::collection::vec(mutation(tokens), 0..12),
    )
}

/// Run `f` and fail if it takes longer than `limit` (a linear reader on a few kilobytes takes
/// milliseconds; the bound is loose for a loaded CI machine).
fn timed<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    assert!(
        start.elapsed() < limit,
        "{what} took {:?} on one fuzz input",
        start.elapsed()
    );
    out
}

const YAML_JSON_TOKENS: &[&str] = &[
    ": ",
    "- ",
    "\n",
    "\n  ",
    "&a ",
    "*a",
    "<<: *a\n",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "---\n",
    "!!str ",
    "!!binary ",
    "? ",
    "|\n",
    ">-\n",
    "#",
    ",",
    "null",
    "~",
    "1e999",
    "-0",
    "\\u0000",
    "\u{feff}",
    "\t",
    "\"snapshot\": {}, ",
    "\"findings\": [], ",
    "value: ",
    "skipped: ",
    "failed: ",
    "schema_version: 1\n",
    "\"log_matches\": [{\"file\": \"a\", \"line\": 5000000, \"text\": \"x\"}], ",
];

const SHELL_TOKENS: &[&str] = &[
    "$(",
    ")",
    "`",
    "\"",
    "'",
    "\\",
    "\\\n",
    "\n",
    "|",
    "&&",
    "||",
    ";",
    "#",
    "<<EOF\n",
    "EOF\n",
    "${",
    "}",
    "$'",
    " -tp 2",
    " --tensor-parallel-size=",
    "vllm serve ",
    "docker run ",
    "python -m vllm.entrypoints.openai.api_server ",
    "PYTORCH_CUDA_ALLOC_CONF=",
    "export ",
    "env ",
    "=",
    " ",
    "\t",
    "\r",
    "&",
    "(",
    "{ ",
    "; }",
    "$((1+",
    "\"$(",
    "services:\n",
    "  command: [",
];

const COLLECT_ENV_TOKENS: &[&str] = &[
    "GPU 0: ",
    "GPU models and configuration:",
    "GPU Topology:\n",
    "\tGPU0\tGPU1\tCPU Affinity\n",
    "GPU0\t X \tNV18\t0-63\n",
    "GPU1\tNV18\t X \t0-63\n",
    "PyTorch version: ",
    "vLLM Version: ",
    "Environment Variables\n",
    "PYTORCH_CUDA_ALLOC_CONF=",
    "[pip3] torch==",
    "Caching allocator config: {'",
    "=====",
    "\x1b[4m",
    "\x1b[0m",
    ":",
    "\n",
    "\r\n",
    " (UUID: GPU-",
    "N/A",
];

const LOG_TOKENS: &[&str] = &[
    "Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'",
    "Worker proc VllmWorker-1 died unexpectedly",
    "CUDA out of memory",
    "\n",
    "\r",
    "\u{1b}[31m",
    "\u{fffd}",
    "\u{0}",
    "(VllmWorker rank=0 pid=1) host:1:1 [0] NCCL INFO ",
];

const EXPR_TOKENS: &[&str] = &[
    "!",
    "(",
    ")",
    "[",
    "]",
    "&&",
    "||",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "in ",
    ",",
    "'",
    "\"",
    "log('",
    "answer('",
    "defined(",
    "contains(",
    "starts_with(",
    "lower(",
    "len(",
    "any_of(",
    "launch.tp",
    "gpu.count",
    "python.vllm",
    "1",
    "0.24",
    "true",
    "null",
    " ",
    "=",
    "&",
    "|",
];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn snapshot_yaml_and_json((seed, muts) in input(seeds("snapshot").len(), YAML_JSON_TOKENS.len())) {
        let bytes = apply(seeds("snapshot")[seed].clone(), &muts, YAML_JSON_TOKENS);
        let text = String::from_utf8_lossy(&bytes);
        let name = "fuzz.snapshot";
        let snap = timed("parse_snapshot", Duration::from_secs(10), || {
            sm120_doctor::import::parse_snapshot(name, &text)
        });
        if let Err(e) = snap {
            prop_assert!(e.to_string().starts_with(name), "{e}");
        }
        let replay = timed("parse_replay", Duration::from_secs(10), || {
            sm120_doctor::import::parse_replay(name, &text)
        });
        if let Err(e) = replay {
            prop_assert!(e.to_string().starts_with(name), "{e}");
        }
    }

    #[test]
    fn collect_env((seed, muts) in input(seeds("collect_env").len(), COLLECT_ENV_TOKENS.len())) {
        let bytes = apply(seeds("collect_env")[seed].clone(), &muts, COLLECT_ENV_TOKENS);
        let text = String::from_utf8_lossy(&bytes);
        let r = timed("collect_env::parse", Duration::from_secs(10), || {
            sm120_doctor::import::collect_env::parse("fuzz.txt", &text)
        });
        if let Err(e) = r {
            prop_assert!(e.to_string().starts_with("fuzz.txt"), "{e}");
        }
    }

    #[test]
    fn launch_lexer_and_parser((seed, muts) in input(seeds("launch").len(), SHELL_TOKENS.len())) {
        let bytes = apply(seeds("launch")[seed].clone(), &muts, SHELL_TOKENS);
        let text = String::from_utf8_lossy(&bytes);
        timed("launch lexer", Duration::from_secs(10), || {
            let _ = sm120_doctor::launch::lex::tokenize(&text);
            let _ = sm120_doctor::launch::lex::commands(&text);
            let _ = sm120_doctor::launch::parse_launch(&text);
            // The line-based forms: an env file and a systemd unit.
            for name in ["vllm.env", "vllm.service"] {
                let files = [sm120_doctor::launch::SourceFile::new(name, text.to_string())];
                let _ = sm120_doctor::launch::parse_launch_files(
                    &files,
                    &sm120_doctor::launch::Select::default(),
                );
            }
        });
    }

    #[test]
    fn compose((seed, muts) in input(seeds("compose").len(), YAML_JSON_TOKENS.len() + SHELL_TOKENS.len())) {
        let tokens: Vec<&str> = YAML_JSON_TOKENS.iter().chain(SHELL_TOKENS).copied().collect();
        let bytes = apply(seeds("compose")[seed].clone(), &muts, &tokens);
        let text = String::from_utf8_lossy(&bytes);
        timed("compose", Duration::from_secs(10), || {
            let _ = sm120_doctor::launch::compose::looks_like_compose(&text);
            // The YAML forms (compose, Kubernetes, Helm values) by name and by content.
            for name in ["compose.yaml", "deploy.yaml", "values.yaml", "launch"] {
                let files = [sm120_doctor::launch::SourceFile::new(name, text.to_string())];
                let _ = sm120_doctor::launch::parse_launch_files(
                    &files,
                    &sm120_doctor::launch::Select::default(),
                );
            }
            let _ = sm120_doctor::launch::parse_launch(&text);
        });
    }

    #[test]
    fn log_classifier((seed, muts) in input(seeds("log").len(), LOG_TOKENS.len())) {
        let bytes = apply(seeds("log")[seed].clone(), &muts, LOG_TOKENS);
        let kb = kb();
        let scanner = Scanner::new(kb);
        timed("classifier", Duration::from_secs(10), || {
            // Through the same reader chain `classify` uses (line cap included, with a small cap
            // so the fuzzer crosses it), and in memory as `check` does.
            let capped = sm120_doctor::read::LineCapped::new(bytes.as_slice(), 256);
            let mut out = Vec::new();
            scanner.scan_reader("fuzz.log", capped, &mut out).expect("in-memory read");
            for m in &out {
                assert!(m.line >= 1 && m.file == "fuzz.log");
            }
            let _ = sm120_doctor::engine::classify::classify(
                kb,
                &[sm120_doctor::engine::classify::LogText {
                    name: "fuzz.log".into(),
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                }],
            );
        });
    }

    #[test]
    fn kb_expression((seed, muts) in input(expr_seeds().len(), EXPR_TOKENS.len())) {
        let bytes = apply(expr_seeds()[seed].clone().into_bytes(), &muts, EXPR_TOKENS);
        let text = String::from_utf8_lossy(&bytes);
        timed("expr", Duration::from_secs(10), || {
            if let Ok(e) = expr::parse(&text) {
                let _ = expr::references(&e);
                let _ = expr::eval(&e, &Facts);
            }
        });
    }

    /// Deep nesting of every kind, at and past the limit: an error or a value, never a crash.
    #[test]
    fn kb_expression_depth(open in prop::sample::select(vec!["!", "(", "[", "len(", "lower(", "a && ", "a || "]),
                           depth in 0usize..20_000) {
        let close = match open { "(" | "len(" | "lower(" => ")", "[" => "]", _ => "" };
        let src = format!("{}1{}", open.repeat(depth), close.repeat(depth));
        match expr::parse(&src) {
            Ok(e) => {
                let _ = expr::eval(&e, &Facts);
            }
            Err(e) => prop_assert!(e.offset <= src.len()),
        }
    }
}

/// One `check:` expression per line (tests/fuzz/expr/seeds.txt: every check of the embedded
/// knowledge base when the corpus was made, and a few more).
fn expr_seeds() -> Vec<String> {
    read_seeds("expr")
        .iter()
        .flat_map(|b| {
            String::from_utf8_lossy(b)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// A context where every fact is known, so evaluation walks the whole tree.
struct Facts;

impl expr::Context for Facts {
    fn fact(&self, path: &str) -> expr::Value {
        match path.len() % 4 {
            0 => expr::Value::Num(2.0),
            1 => expr::Value::Str("0.24.0".into()),
            2 => expr::Value::Bool(true),
            _ => expr::Value::List(vec![expr::Value::Str("a".into())]),
        }
    }
    fn log(&self, _signature: &str) -> expr::Value {
        expr::Value::Bool(false)
    }
    fn answer(&self, _node: &str) -> expr::Value {
        expr::Value::Unknown("not answered".into())
    }
}

/// The seed corpora are present and each reader accepts its own unmutated seeds without a
/// panic (a seed that is an error on purpose still returns an error, not a crash).
#[test]
fn seeds_are_committed_for_every_reader() {
    for r in [
        "snapshot",
        "collect_env",
        "launch",
        "compose",
        "log",
        "expr",
    ] {
        assert!(!seeds(r).is_empty(), "{r}");
    }
    assert!(expr_seeds().len() >= 20, "{}", expr_seeds().len());
    for s in expr_seeds() {
        // Every seed from the knowledge base parses (a few hand-written ones too).
        assert!(expr::parse(&s).is_ok(), "{s}");
    }
}
