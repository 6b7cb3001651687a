//! No sentence made by one module is matched by another: a front end that tests another layer's
//! message text (`.contains("no log given")`) silently changes what it shows when the message is
//! reworded. Types cross layers, not sentences.
//!
//! Read from the text: every string literal of a `contains` / `starts_with` / `ends_with` /
//! `strip_prefix` / `strip_suffix` / `find` / `replace` call or of an `==` comparison in non-test
//! code under src/ (and crates/*/src), that looks like a sentence (two words or more), is looked
//! up in the string literals of every other top-level module and in the knowledge base's YAML.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.map(|e| e.expect("dir entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The non-test code, without `//` comment lines.
fn non_test_code(text: &str) -> String {
    let code = super::sizes::non_test_text(text);
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The string literals of `code` (plain `"…"` ones, escapes kept as written), each with the
/// text just before it.
fn literals(code: &str) -> Vec<(String, String)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                // A char literal ('"' or '\"') is not a string start; a lifetime is skipped too.
                if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                } else if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') {
                    i += 4;
                } else {
                    i += 1;
                }
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                let mut from = i.saturating_sub(40);
                while !code.is_char_boundary(from) {
                    from += 1;
                }
                let before = &code[from..i];
                out.push((
                    String::from_utf8_lossy(&b[start..end]).into_owned(),
                    before.to_string(),
                ));
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Is the literal the argument of a text-matching call or comparison?
fn is_matched_text(before: &str) -> bool {
    let t = before.trim_end();
    [
        ".contains(",
        ".starts_with(",
        ".ends_with(",
        ".strip_prefix(",
        ".strip_suffix(",
        ".find(",
        ".replace(",
        "==",
        "!=",
    ]
    .iter()
    .any(|c| t.ends_with(c))
}

/// A sentence fragment: two words or more, eight characters or more, not a format string.
fn is_sentence(s: &str) -> bool {
    s.len() >= 8
        && s.trim().contains(' ')
        && !s.contains('{')
        && s.chars().any(|c| c.is_alphabetic())
}

fn top_module(root: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(root).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    first
        .unwrap_or_default()
        .trim_end_matches(".rs")
        .to_string()
}

fn crossing_matches() -> Vec<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![manifest.join("src")];
    if let Ok(crates) = std::fs::read_dir(manifest.join("crates")) {
        for c in crates.flatten() {
            roots.push(c.path().join("src"));
        }
    }
    // Per module: its literals; and the matched ones with where they are.
    let mut made: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut matched: Vec<(String, String, String)> = Vec::new();
    for root in &roots {
        let mut files = Vec::new();
        rust_files(root, &mut files);
        for f in files {
            let text =
                std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let module = format!("{}:{}", root.display(), top_module(root, &f));
            for (lit, before) in literals(&non_test_code(&text)) {
                if is_matched_text(&before) && is_sentence(&lit) {
                    let rel = f.strip_prefix(manifest).unwrap_or(&f).display().to_string();
                    matched.push((module.clone(), rel, lit.clone()));
                }
                made.entry(module.clone()).or_default().push(lit);
            }
        }
    }
    let mut kb = String::new();
    if let Ok(dir) = std::fs::read_dir(manifest.join("knowledge")) {
        for e in dir.flatten() {
            kb.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    let mut out = Vec::new();
    for (module, file, lit) in matched {
        let elsewhere = made
            .iter()
            .filter(|(m, _)| **m != module)
            .find(|(_, lits)| lits.iter().any(|l| l.contains(lit.as_str())))
            .map(|(m, _)| m.rsplit(':').next().unwrap_or(m).to_string());
        let in_kb = kb.contains(lit.as_str());
        if let Some(m) = elsewhere {
            out.push(format!(
                "{file}: matches {lit:?}, a text made in module `{m}`"
            ));
        } else if in_kb {
            out.push(format!(
                "{file}: matches {lit:?}, a text of the knowledge base"
            ));
        }
    }
    out
}

/// Matches that read text made outside this program (a log, collect-env's output, an OS
/// message, a launch file), which only looks like another module's sentence because that module
/// quotes the same upstream words, or a reader of files older than a typed field. Each with why.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "src/snapshot.rs",
        "this shell",
        "snapshot files written before `whose` existed say whose environment it is only in `source`",
    ),
    (
        "src/snapshot.rs",
        "vllm collect-env",
        "snapshot files written before `whose` existed",
    ),
    (
        "src/engine/classify/normalise.rs",
        "Traceback (most recent call last)",
        "Python's traceback header in a log",
    ),
    (
        "src/engine/classify/normalise.rs",
        "During handling",
        "Python's chained-exception line in a log",
    ),
    (
        "src/engine/classify/normalise.rs",
        "The above exception",
        "Python's chained-exception line in a log",
    ),
    (
        "src/report/excerpt.rs",
        "Traceback (most recent call last):",
        "Python's traceback header in a log",
    ),
    (
        "src/collect/os.rs",
        "Open Kernel Module",
        "the NVIDIA driver's /proc version text",
    ),
    (
        "src/collect/python.rs",
        "No such file",
        "the OS error text of a missing interpreter",
    ),
    (
        "src/collect/python.rs",
        "not found",
        "a shell's 'command not found'",
    ),
    (
        "src/import/collect_env.rs",
        "RTX 5090",
        "GPU names in collect-env's output",
    ),
    (
        "src/import/collect_env.rs",
        "RTX 4090",
        "GPU names in collect-env's output",
    ),
    (
        "src/import/collect_env.rs",
        "RTX 3090",
        "GPU names in collect-env's output",
    ),
    (
        "src/launch/k8s.rs",
        "vllm serve",
        "the vLLM command in a user's manifest",
    ),
    (
        "src/import/collect_env.rs",
        "Environment Variables",
        "collect-env's own section title in its output",
    ),
    (
        "src/report/host.rs",
        "Environment Variables",
        "the report's own section title, made in the same file (collect-env's output uses the same words)",
    ),
    (
        "src/snapshot.rs",
        "torch collect_env",
        "snapshot files written before `whose` existed",
    ),
];

#[test]
fn no_sentence_of_one_module_is_matched_by_another() {
    let found: Vec<String> = crossing_matches()
        .into_iter()
        .filter(|f| {
            !ALLOWED
                .iter()
                .any(|(file, lit, _)| f.starts_with(&format!("{file}: matches {lit:?},")))
        })
        .collect();
    assert!(
        found.is_empty(),
        "text matched across a layer (pass a type instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_allowed_match_is_still_there() {
    let found = crossing_matches();
    let stale: Vec<String> = ALLOWED
        .iter()
        .filter(|(file, lit, _)| {
            !found
                .iter()
                .any(|f| f.starts_with(&format!("{file}: matches {lit:?},")))
        })
        .map(|(file, lit, _)| format!("{file}: {lit:?}"))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed matches no longer found (take them off ALLOWED):\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_sentence_rule_reads_calls_and_literals() {
    let code = "let a = x.contains(\"no log given\"); let b = \"no log given (--log FILE)\"; if s == \"two words\" {}";
    let lits = literals(code);
    let matched: Vec<&str> = lits
        .iter()
        .filter(|(l, before)| is_matched_text(before) && is_sentence(l))
        .map(|(l, _)| l.as_str())
        .collect();
    assert_eq!(matched, ["no log given", "two words"]);
    assert!(!is_sentence("pid="));
    assert!(!is_sentence("{a} {b}"));
    assert_eq!(literals("let c = '\"'; let d = \"x y z w v\";").len(), 1);
}
