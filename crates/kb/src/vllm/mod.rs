//! What the tool knows about vLLM and PyTorch as code: the allocator-variable rule
//! ([`alloc_conf`]), vLLM's command line ([`flags`]) and GPU/model names as vLLM sees them
//! ([`hardware`], whose tables come from knowledge/hardware.yaml) and PEP 440 versions with the
//! knowledge base's version ranges ([`version`]). Pure functions over strings
//! and plain data; this module imports nothing else of the crate, so every layer may use it.

pub mod alloc_conf;
pub mod flags;
pub mod hardware;
pub mod version;
