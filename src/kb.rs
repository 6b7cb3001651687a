//! The knowledge base (crates/kb: schema, expressions, loader and validator), and the one
//! build.rs embedded in this binary.
//!
//! Everything but the three functions below is the kb crate's `kb` module, under the same
//! names. These three read [`crate::built::KB`], which only this crate has.

use std::path::Path;

pub use sm120_doctor_kb::kb::*;

/// The embedded knowledge base's built form, read back (`None`: the bytes do not read as one,
/// which only a broken build gives).
pub fn built() -> Option<Built> {
    Built::from_bytes(crate::built::KB)
}

/// Load the embedded knowledge base: the form build.rs validated and stored, when every fact
/// it names is one `known_fact` knows. Otherwise the full loader runs over the embedded YAML,
/// for its errors with file, line and column (a stale embed never loads in silence).
pub fn load_embedded(known_fact: KnownFact) -> Result<KnowledgeBase, KbErrors> {
    load_built(crate::built::KB, known_fact)
}

/// Load with the `--kb DIR` override when given.
pub fn load(dir: Option<&Path>, known_fact: KnownFact) -> Result<KnowledgeBase, KbErrors> {
    match dir {
        Some(d) => load_dir(d, known_fact),
        None => load_embedded(known_fact),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_decides_which_facts_exist() {
        let errs = load_embedded(|_| false).expect_err("no fact is known");
        assert!(
            errs.0.iter().any(|e| e.message.contains("unknown fact")
                && e.file == "allocator_ipc.yaml"
                && e.line > 0),
            "{errs}"
        );
        assert!(load_embedded(|_| true).is_ok());
    }
}
