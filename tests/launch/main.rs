//! Launch files as vLLM sees them: the launch corpus judged by effect, how vLLM and docker read
//! a launch's words, and the environment the engine actually gets.

#[path = "../support/mod.rs"]
mod support;

mod corpus;
mod env_in_effect;
mod semantics;
