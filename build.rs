//! Load and validate the embedded knowledge base when the binary is built, not at every start.
//!
//! This script runs the knowledge-base crate's loader (crates/kb, `sm120-doctor-kb`: the same
//! loader and types the binary uses) over knowledge/ exactly as the old start-up did
//! (`kb::load_embedded_yaml`): YAML parsing, every reference, expression and `holds:` range,
//! every regex compiled once. An error stops the build with the file, line and column. The
//! loaded `KnowledgeBase` is then written to `$OUT_DIR/kb.postcard` in postcard's compact binary
//! form, which `kb::load_embedded` reads back at start-up with no parsing and no validation
//! (`src/built.rs` embeds it).
//!
//! Which fact names exist is decided by the crate's `facts` module, which the kb crate cannot
//! see: the loader's fact predicate records every name it is asked about and says yes; the list
//! goes into the built form, and `kb::load_embedded` checks it against the caller's predicate at
//! start (on a miss it runs the full loader for the exact errors). tests/kb_embed.rs proves
//! that `load_embedded` equals the full loader over knowledge/.
//!
//! For other code: everything a `KnowledgeBase` holds derives `Serialize` and `Deserialize` with
//! plain serde attributes (no `skip_serializing_if`, `flatten` or `untagged`: postcard is not
//! self-describing; the read-back check below fails the build otherwise).

use sm120_doctor_kb::kb;
use std::collections::BTreeSet;
use std::sync::Mutex;

static FACTS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// The fact predicate here: remember the name, accept it (the crate's facts decide at start).
fn record_fact(name: &str) -> bool {
    if let Ok(mut facts) = FACTS.lock() {
        facts.insert(name.to_string());
    }
    true
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}

fn main() {
    // The YAML the kb crate embeds; a change to the kb crate's code rebuilds this script.
    println!("cargo::rerun-if-changed=knowledge");
    let kb = match kb::load_embedded_yaml(record_fact) {
        Ok(kb) => kb,
        Err(errors) => {
            for e in &errors.0 {
                eprintln!("knowledge/{e}");
            }
            fail(&format!(
                "the knowledge base has {} error(s); the binary embeds knowledge/ and is not built with them",
                errors.0.len()
            ));
        }
    };
    let facts = match FACTS.lock() {
        Ok(f) => f.iter().cloned().collect(),
        Err(_) => fail("the fact list was poisoned"),
    };
    let built = kb::Built { facts, kb };
    let bytes = built
        .to_bytes()
        .unwrap_or_else(|e| fail(&format!("cannot serialise the knowledge base: {e}")));
    // The form must read back to itself, or start-up would get another knowledge base.
    let Some(back) = kb::Built::from_bytes(&bytes) else {
        fail(
            "the serialised knowledge base does not read back: a type in it needs a \
             self-describing format (skip_serializing_if, flatten, untagged, deserialize_any)",
        )
    };
    let again = back
        .to_bytes()
        .unwrap_or_else(|e| fail(&format!("cannot serialise the read-back form: {e}")));
    if again != bytes {
        fail("the knowledge base read back from its serialised form differs from the original");
    }
    let out = match std::env::var_os("OUT_DIR") {
        Some(d) => std::path::PathBuf::from(d).join("kb.postcard"),
        None => fail("OUT_DIR is not set"),
    };
    if let Err(e) = std::fs::write(&out, &bytes) {
        fail(&format!("cannot write {}: {e}", out.display()));
    }
}
