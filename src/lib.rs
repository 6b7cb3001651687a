//! sm120-doctor: diagnose vLLM start-up failures on NVIDIA Blackwell SM120 GPUs.
//!
//! Imports run one way, top floor down: a module imports only modules on the floors below it
//! (tests/layering.rs checks that no file imports another in a cycle, and the front-end floors).
//!
//! ```text
//! main.rs     thin: parse the arguments, cli::dispatch
//! cli/        args.rs (clap) + one file per mode; tui.rs hands prepared inputs to the TUI
//! tui/        state/ (keymap → action → App::update), io/ (event loop, effects, live), view/
//! input       user inputs → (kb, snapshot + launch, logs, answers); the live host in parts
//! import      snapshot files, `collect-env` output, the embedded demo
//! report      renderers over the engine's model (check; report as Markdown/JSON/text)
//! engine      pure (snapshot, answers, logs) → walks + findings; the log classifier; the fix
//!             plan (engine::plan), which composes remedies through remedy's rewrite engine
//! remedy      launch rewriting (the edit engine `fix` and the plan use) and the PR apply
//!             script; reads only kb, launch, vllm and the writer
//! facts       the flat, named facts that checks read; each declared once, one file per family
//! kb          the knowledge base: schema, expressions, loader + validator; the caller passes
//!             the known-fact predicate, so kb and facts never import each other. It is the
//!             crate crates/kb (sm120-doctor-kb), with value, vllm, reason, read and yaml: build.rs
//!             and this crate both depend on it; they are re-exported here under their names
//! probe       the allocator/IPC and P2P probes  ┐
//! collect     live collectors, the refresher    │ readers of the world, never judges
//! launch      the vLLM launch parser            ┘
//! value       Value and the evaluation Context: what facts produce and kb's checks read
//! vllm        what we know about vLLM and PyTorch as code: the allocator-variable rule
//!             (alloc_conf), CLI flags, device names and the types of knowledge/hardware.yaml,
//!             PEP 440 versions and the knowledge base's version ranges (version)
//! snapshot    HostSnapshot: the ground floor everyone reads
//! reason      Reason: why a fact is not known (a code, a missing input, the producer's words)
//! secret_name the one rule for which variable, flag or key names hold a secret (collect, report)
//! read, write, yaml  leaf helpers: the one file reader (caps), the one file writer; YAML error positions
//! built      what build.rs made: the embedded knowledge base, validated and serialised
//! ```
//!
//! Collectors and importers write a [`snapshot::HostSnapshot`]; the [`engine`] is a pure
//! function of (snapshot, answers, logs); every front end renders the engine's model.
//!
//! Every table of names and every sentence that explains a finding lives in knowledge/*.yaml.

/// `eprintln!` for the CLI: control characters from untrusted text (file names, KB strings,
/// YAML and log content quoted in a message) are shown escaped, as on stdout
/// ([`report::sanitize::say`]). tests/hostile.rs holds src/cli/ to it.
macro_rules! esay {
    ($($t:tt)*) => {
        $crate::report::sanitize::say(&format!($($t)*))
    };
}

pub mod built;
pub mod cli;
pub mod collect;
pub mod engine;
pub mod facts;
pub mod import;
pub mod input;
pub mod kb;
pub mod launch;
pub mod probe;
pub mod remedy;
pub mod report;
pub mod secret_name;
pub mod shell_integration;
pub mod snapshot;
pub mod tui;
pub mod write;

// The knowledge base's crate (crates/kb) holds these leaf modules; `kb` (src/kb.rs) re-exports
// its `kb` with the embedded knowledge base added.
pub use sm120_doctor_kb::{read, reason, value, vllm, yaml};
