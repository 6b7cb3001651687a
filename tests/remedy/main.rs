//! `fix` and `patch-script`: every launch form × every remedy with exact bytes, YAML and
//! Kubernetes forms, edits that reach vLLM or are refused, the generated apply script run by
//! bash, and property tests against the parser and real bash.

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod fix_forms;
mod fix_table;
mod inert;
mod k8s_env;
mod no_panic;
mod patch_script;
mod roundtrip_bash;
mod yaml_forms;
