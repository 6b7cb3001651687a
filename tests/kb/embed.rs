//! The embedded knowledge base is built when the binary is built (build.rs) and read back at
//! start-up: it must be exactly what the full loader makes of knowledge/.

use sm120_doctor::facts::is_known_fact;
use sm120_doctor::kb::{self, EMBEDDED, KnowledgeBase};
use std::path::Path;

fn knowledge_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge")
}

/// A stable serialisation with every field, line and column (postcard, as build.rs writes it).
fn bytes(kb: &KnowledgeBase) -> Vec<u8> {
    postcard::to_allocvec(kb).expect("serialises")
}

/// The same, readable (values without their places), for a diff when they differ.
fn json(kb: &KnowledgeBase) -> String {
    serde_json::to_string_pretty(kb).expect("serialises")
}

fn assert_same(a: &KnowledgeBase, b: &KnowledgeBase) {
    let (ja, jb) = (json(a), json(b));
    if let Some(i) = ja.lines().zip(jb.lines()).position(|(x, y)| x != y) {
        let around = |j: &str| {
            j.lines()
                .skip(i.saturating_sub(8))
                .take(12)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "first difference at JSON line {}:\n--- left\n{}\n--- right\n{}",
            i + 1,
            around(&ja),
            around(&jb)
        );
    }
    assert_eq!(ja.len(), jb.len(), "one JSON is a prefix of the other");
    assert!(bytes(a) == bytes(b), "same values, other lines or columns");
}

#[test]
fn the_built_form_reads_back_and_names_only_known_facts() {
    let built = kb::built().expect("the embedded built form reads back");
    assert!(built.facts.len() > 20, "{:?}", built.facts);
    let unknown: Vec<&String> = built.facts.iter().filter(|f| !is_known_fact(f)).collect();
    assert!(
        unknown.is_empty(),
        "unknown facts in knowledge/: {unknown:?}"
    );
}

#[test]
fn load_embedded_equals_the_full_loader_over_the_embedded_yaml() {
    let fast = kb::load_embedded(is_known_fact).expect("embedded KB loads");
    let full = kb::load_embedded_yaml(is_known_fact).expect("the YAML loads");
    assert_same(&fast, &full);
    assert!(fast.signatures.len() > 20 && fast.classes.len() > 5);
    // Loaded without compiling a regex; each compiles on first use.
    assert!(fast.signatures.iter().all(|s| !s.regex.is_compiled()));
}

#[test]
fn the_embedded_yaml_is_knowledge_dir() {
    let mut on_disk: Vec<String> = std::fs::read_dir(knowledge_dir())
        .expect("knowledge/")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
        .collect();
    on_disk.sort();
    let mut embedded: Vec<String> = EMBEDDED.iter().map(|(n, _)| n.to_string()).collect();
    embedded.sort();
    assert_eq!(
        embedded, on_disk,
        "kb::EMBEDDED lists every file of knowledge/"
    );
    for (name, text) in EMBEDDED {
        let disk = std::fs::read_to_string(knowledge_dir().join(name)).expect("read");
        assert!(
            disk == *text,
            "{name}: the embedded text is not knowledge/{name}"
        );
    }
}

/// `load_dir(knowledge/)` gives the same knowledge base up to what the directory loader does
/// differently by design: files named by path, the origin, and classes in file-name order.
#[test]
fn load_embedded_equals_load_dir_of_knowledge() {
    let embedded = kb::load_embedded(is_known_fact).expect("embedded KB loads");
    let mut dir = kb::load_dir(&knowledge_dir(), is_known_fact).expect("knowledge/ loads");
    let base = |f: &str| {
        Path::new(f)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    dir.origin = embedded.origin.clone();
    for c in &mut dir.classes {
        c.file = base(&c.file);
    }
    for f in dir.change_files.values_mut() {
        *f = base(f);
    }
    // Classes (and their signatures, which follow class order) in the embedded order.
    let rank = |file: &str| EMBEDDED.iter().position(|(n, _)| *n == file);
    dir.classes.sort_by_key(|c| rank(&c.file));
    let class_rank = |class: &str| dir.classes.iter().position(|c| c.id() == class);
    let mut order: Vec<usize> = (0..dir.signatures.len()).collect();
    order.sort_by_key(|&i| class_rank(&dir.signatures[i].class));
    // Signatures refer to others by index (requires, excluded_by, confirm_with): renumber.
    let mut new_index = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut sigs: Vec<_> = order.iter().map(|&i| dir.signatures[i].clone()).collect();
    for s in &mut sigs {
        for list in [&mut s.requires, &mut s.excluded_by, &mut s.confirm_with] {
            for i in list.iter_mut() {
                *i = new_index[*i];
            }
        }
    }
    dir.signatures = sigs;
    assert_same(&embedded, &dir);
}

#[test]
fn an_unknown_fact_gets_the_full_loaders_errors() {
    let errs = kb::load_embedded(|f| f != "gpu.count").expect_err("gpu.count is unknown");
    let direct = kb::load_embedded_yaml(|f| f != "gpu.count").expect_err("same");
    assert_eq!(errs.to_string(), direct.to_string());
    assert!(
        errs.0
            .iter()
            .all(|e| e.message.contains("gpu.count") && e.line > 0 && e.column > 0),
        "{errs}"
    );
}
