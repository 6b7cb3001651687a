//! Hostile and random input: one case per known defect class (hostile), byte fuzzers of every
//! reader (property tests), and `run -- CMD` wrapping launches that crash, hang or are signalled.

#[path = "../support/mod.rs"]
mod support;

mod fuzz_readers;
mod hostile;
mod no_survivor;
mod run_watch;
