//! sm120-doctor's knowledge base and the leaf modules it reads with, as one crate.
//!
//! sm120-doctor depends on it twice: its build.rs loads and validates knowledge/ with
//! [`kb::load_embedded_yaml`] and stores the result ([`kb::Built`]) in the binary; at run time
//! the binary reads that form back ([`kb::load_built`]) or loads a `--kb DIR`. sm120-doctor's
//! src/lib.rs re-exports these modules under the same names, so its code says `crate::kb::…`.
//!
//! ```text
//! kb      the knowledge base: schema, expressions, loader + validator; the caller passes
//!         the known-fact predicate, so kb never sees sm120-doctor's facts
//! value   Value and the evaluation Context: what facts produce and kb's checks read
//! vllm    what we know about vLLM and PyTorch as code: the allocator-variable rule
//!         (alloc_conf), CLI flags, device names and the types of knowledge/hardware.yaml,
//!         PEP 440 versions and the knowledge base's version ranges (version)
//! reason  Reason: why a fact is not known (a code, a missing input, the producer's words)
//! read, yaml  leaf helpers: the one file reader (caps); YAML error positions
//! ```
//!
//! This crate cannot import sm120-doctor (the compiler enforces the floor that tests/layering.rs
//! used to check by reading build.rs).

pub mod kb;
pub mod read;
pub mod reason;
pub mod value;
pub mod vllm;
pub mod yaml;
