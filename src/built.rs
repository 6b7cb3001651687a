//! What build.rs made when the binary was built: the embedded knowledge base, loaded and
//! validated from knowledge/ and stored in its compact binary form (see `kb::load_embedded`).

/// `kb::Built`, serialised with postcard.
pub static KB: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kb.postcard"));
