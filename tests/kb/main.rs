//! The knowledge base and the engine over it: loading, embedding and validation, signatures and
//! log context, version ranges, scenarios, verdicts, and the evidence a plan rests on.

mod alloc_conf_verdicts;
mod alloc_ipc_scenarios;
mod embed;
mod log_context_gpu;
mod log_cut_lines;
mod onboarding;
mod plan_evidence;
mod scenarios;
mod signatures;
mod validate;
mod version_boundaries;
mod versions;
