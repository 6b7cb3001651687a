//! sm120-doctor: diagnose vLLM start-up failures on NVIDIA Blackwell SM120 GPUs.
//!
//! Collectors and importers write a [`snapshot::HostSnapshot`]; the [`engine`] is a pure
//! function of (snapshot, answers, logs); every front end renders the engine's model.
//!
//! Imports run one way, top floor down (no module imports one above it):
//!
//! ```text
//! main → cli, tui                 front ends (tui still reads its inputs through cli: #11 item 2)
//!   → report → remedy             renderers and the launch rewriter
//!   → engine                      walks + findings
//!   → kb                          schema, expressions, loader/validator (given the fact predicate)
//!   → value                       Value and the evaluation Context
//! engine → facts → snapshot, value, vllm
//! kb → vllm (table types), yaml
//! collect, import, launch, probe → snapshot, vllm   readers of the world: never facts
//!                                                   (import still names engine's answer/log types)
//! vllm, value, snapshot           import nothing else of the crate
//! ```
//!
//! [`vllm`] is what the tool knows about vLLM and PyTorch as code (the allocator-variable rule,
//! the command line, device names); every table of names and every sentence that explains a
//! finding lives in knowledge/*.yaml.

pub mod cli;
pub mod collect;
pub mod engine;
pub mod facts;
pub mod import;
pub mod kb;
pub mod launch;
pub mod probe;
pub mod remedy;
pub mod report;
pub mod snapshot;
pub mod tui;
pub mod value;
pub mod vllm;
pub mod yaml;
