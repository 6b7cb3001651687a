//! The source tree's import rules (imports run one way, top floor down): no import cycle between files, and the floors the
//! crate comment in src/lib.rs names for the front ends hold (nothing below `cli` imports it,
//! the TUI takes its inputs from `input`, the file writer and the snapshot import nothing above).
//!
//! Imports are read from the text: every `crate::a::b` / `super::…` path outside `#[cfg(test)]`
//! (and `use x::…` of a child module in a `mod.rs`), mapped to the file that defines the module.
//! The knowledge base's crate (crates/kb/src) is read with src/: src/lib.rs re-exports its
//! modules under the same names, so `crate::value` means one module in either crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The source roots: this crate's and the knowledge base's (crates/kb).
fn roots() -> [PathBuf; 2] {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    [dir.join("src"), dir.join("crates").join("kb").join("src")]
}

/// Every Rust file under both roots.
fn all_rust_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for root in roots() {
        rust_files(&root, &mut files);
    }
    files
}

/// `src/tui/app.rs` → `["tui", "app"]`; `src/tui/mod.rs` → `["tui"]`; lib.rs → `[]`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.last().map(String::as_str) {
        Some("mod") | Some("lib") => {
            parts.pop();
        }
        Some("main") => parts = vec!["<main>".into()],
        _ => {}
    }
    parts
}

/// Paths like `crate::a::b`, `super::x`, `sm120_doctor::a` and `sm120_doctor_kb::a` in `code`.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !is_ident(bytes[i - 1]);
        // Byte-wise: `i` may sit inside a multi-byte character; the paths are ASCII.
        let rest = &bytes[i..];
        let start = ["crate::", "super::", "sm120_doctor::", "sm120_doctor_kb::"]
            .iter()
            .find(|p| rest.starts_with(p.as_bytes()));
        if boundary && start.is_some() {
            let mut segs = Vec::new();
            let mut j = i;
            loop {
                let k = j + code[j..].bytes().take_while(|b| is_ident(*b)).count();
                if k == j {
                    break;
                }
                segs.push(code[j..k].to_string());
                if code[k..].starts_with("::") {
                    j = k + 2;
                } else {
                    j = k;
                    break;
                }
            }
            i = j.max(i + 1);
            out.push(segs);
        } else {
            i += 1;
        }
    }
    out
}

/// The longest known module a path names, from module `cur`.
fn resolve(cur: &Module, path: &[String], known: &BTreeSet<Module>) -> Option<Module> {
    let mut segs = path;
    let mut base: Module = match segs.first().map(String::as_str) {
        Some("crate") | Some("sm120_doctor") | Some("sm120_doctor_kb") => {
            segs = &segs[1..];
            Vec::new()
        }
        Some("super") => {
            let mut b = cur.clone();
            while segs.first().map(String::as_str) == Some("super") {
                b.pop();
                segs = &segs[1..];
            }
            b
        }
        _ => return None,
    };
    let mut best = None;
    for s in segs {
        base.push(s.clone());
        if known.contains(&base) {
            best = Some(base.clone());
        } else {
            break;
        }
    }
    best
}

fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    // A module may have a file in each crate (`kb`: src/kb.rs re-exports crates/kb/src/kb/):
    // its imports are those of both.
    let mut mods: Vec<(Module, PathBuf)> = Vec::new();
    for root in roots() {
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        mods.extend(files.iter().map(|f| (module_of(&root, f), f.clone())));
    }
    let known: BTreeSet<Module> = mods.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, file) in &mods {
        let text = std::fs::read_to_string(file).expect("read source");
        let code = super::sizes::non_test_text(&text);
        let code: String = code
            .lines()
            .map(|l| match l.find("//") {
                Some(i) => &l[..i],
                None => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut to = BTreeSet::new();
        for p in paths(&code) {
            if let Some(t) = resolve(m, &p, &known)
                && &t != m
                && !t.is_empty()
            {
                to.insert(t);
            }
        }
        // `use child::…` in a mod.rs names a child module relative to it.
        for line in code.lines() {
            let l = line.trim_start();
            if let Some(rest) = l.strip_prefix("use ") {
                let first: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let mut child = m.clone();
                child.push(first);
                if known.contains(&child) {
                    to.insert(child);
                }
            }
        }
        edges.entry(m.clone()).or_default().extend(to);
    }
    edges
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("::")
    }
}

#[test]
fn no_import_cycle_between_files() {
    let g = graph();
    assert!(g.len() > 50, "read the tree: {} files", g.len());
    // Depth-first search for a back edge; report the cycle it closes.
    fn visit(
        m: &Module,
        g: &BTreeMap<Module, BTreeSet<Module>>,
        state: &mut BTreeMap<Module, u8>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        state.insert(m.clone(), 1);
        stack.push(m.clone());
        for t in g.get(m).into_iter().flatten() {
            match state.get(t).copied().unwrap_or(0) {
                0 => {
                    if let Some(c) = visit(t, g, state, stack) {
                        return Some(c);
                    }
                }
                1 => {
                    let i = stack.iter().position(|x| x == t).unwrap_or(0);
                    let mut c = stack[i..].to_vec();
                    c.push(t.clone());
                    return Some(c);
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if state.get(m).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(m, &g, &mut state, &mut stack) {
                let shown: Vec<String> = c.iter().map(name).collect();
                panic!("import cycle: {}", shown.join(" → "));
            }
        }
    }
}

#[test]
fn the_front_end_floors_hold() {
    let g = graph();
    let top = |m: &Module| m.first().cloned().unwrap_or_default();
    let imports_of = |module: &str| -> BTreeSet<String> {
        g.iter()
            .filter(|(m, _)| top(m) == module)
            .flat_map(|(_, to)| to.iter().map(top))
            .filter(|t| t != module)
            .collect()
    };
    // Only main.rs reaches cli; nothing but cli reaches the TUI.
    for (m, to) in &g {
        let from = top(m);
        for t in to.iter().map(top) {
            if t == "cli" {
                assert_eq!(from, "<main>", "{} imports cli", name(m));
            }
            if t == "tui" {
                assert!(from == "cli" || from == "tui", "{} imports tui", name(m));
            }
        }
    }
    // input is read by the front ends and imports neither of them.
    let input = imports_of("input");
    assert!(
        !input.contains("cli") && !input.contains("tui"),
        "{input:?}"
    );
    // The ground floor: the writer, YAML helpers and the snapshot model import nothing above.
    for leaf in ["write", "yaml", "reason"] {
        assert!(
            imports_of(leaf).is_empty(),
            "{leaf} imports {:?}",
            imports_of(leaf)
        );
    }
    // The snapshot imports only the reason type (a leaf) its facts carry when they have none.
    let snapshot = imports_of("snapshot");
    assert!(
        snapshot.iter().all(|m| m == "reason"),
        "snapshot imports {snapshot:?}"
    );
    // Within the TUI's state floor: the field types import no other TUI file;
    // keymap → app → action → types.
    let tui_deps = |file: &str| -> BTreeSet<String> {
        g.get(&vec![
            "tui".to_string(),
            "state".to_string(),
            file.to_string(),
        ])
        .into_iter()
        .flatten()
        .filter(|t| top(t) == "tui" && t.len() > 2)
        .map(|t| t[1..].join("::"))
        .collect()
    };
    assert!(tui_deps("types").is_empty(), "{:?}", tui_deps("types"));
    assert!(
        !tui_deps("action").contains("state::app"),
        "{:?}",
        tui_deps("action")
    );
    assert!(
        !tui_deps("app").contains("state::keymap"),
        "{:?}",
        tui_deps("app")
    );
    assert!(
        tui_deps("keymap").contains("state::app"),
        "{:?}",
        tui_deps("keymap")
    );
}

/// build.rs loads the knowledge base with the kb crate (crates/kb), its one build-dependency:
/// it includes no source file by path (the kb crate cannot import this one: the compiler
/// enforces what this test used to check by reading build.rs's modules).
#[test]
fn build_rs_uses_the_kb_crate_and_includes_no_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = std::fs::read_to_string(dir.join("build.rs")).expect("read build.rs");
    let code: Vec<&str> = build
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default().trim())
        .collect();
    let included: Vec<&&str> = code
        .iter()
        .filter(|l| l.contains("#[path") || l.starts_with("mod ") || l.contains("include!("))
        .collect();
    assert!(included.is_empty(), "build.rs includes {included:?}");
    assert!(
        code.contains(&"use sm120_doctor_kb::kb;"),
        "build.rs uses the kb crate"
    );
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("read Cargo.toml");
    let build_deps: Vec<&str> = manifest
        .split("\n[build-dependencies]\n")
        .nth(1)
        .expect("a [build-dependencies] table")
        .lines()
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(build_deps, ["sm120-doctor-kb.workspace = true"]);
}

/// A snapshot's origin is a type: only src/snapshot.rs reads its recorded words. Any
/// `starts_with`/`strip_prefix`/`contains`... on an `origin`, or a comparison of one with a
/// string, elsewhere in src/ (outside tests) is a string interface coming back. (`kb.origin`
/// is the knowledge base's, a different field.)
#[test]
fn no_origin_is_read_by_its_words_outside_the_snapshot() {
    let files = all_rust_files();
    let methods = [
        ".contains(",
        ".starts_with(",
        ".strip_prefix(",
        ".ends_with(",
        ".strip_suffix(",
        ".rsplit_once(",
        ".split_once(",
        " == \"",
        " != \"",
    ];
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("snapshot.rs")) {
        let text = std::fs::read_to_string(f).expect("read");
        let code = super::sizes::non_test_text(&text);
        for (n, line) in code.lines().enumerate() {
            let Some(at) = line.find("origin") else {
                continue;
            };
            if line.contains("kb.origin") || line.trim_start().starts_with("//") {
                continue;
            }
            let after = &line[at..];
            if methods.iter().any(|m| after.contains(m)) {
                found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "origin read by its words:\n{}",
        found.join("\n")
    );
}

/// The TUI's own floors (src/tui/mod.rs): `io` (the event loop, effects, threads, terminal)
/// on top; `view` (drawing) reads the state and never imports `io`; `state` (App, update,
/// keymap) imports neither `io` nor the view's drawing: it measures the screen through
/// `view::measure` only, and no state file names a widget, a frame or a style.
fn tui_floor_violations(g: &BTreeMap<Module, BTreeSet<Module>>, src: &Path) -> Vec<String> {
    let floor = |m: &Module| -> Option<String> {
        (m.first().map(String::as_str) == Some("tui") && m.len() > 1).then(|| m[1].clone())
    };
    let mut found = Vec::new();
    for (m, to) in g {
        let Some(from) = floor(m) else { continue };
        for t in to {
            let Some(into) = floor(t) else { continue };
            let bad = match (from.as_str(), into.as_str()) {
                ("view", "io") | ("state", "io") => true,
                ("state", "view") => t.get(2).map(String::as_str) != Some("measure"),
                _ => false,
            };
            if bad {
                found.push(format!("{} imports {}", name(m), name(t)));
            }
        }
    }
    // Widgets by their names: the state keeps plain data (the editors' text is a TextArea,
    // whose frame and title the view draws).
    let mut files = Vec::new();
    rust_files(&src.join("tui").join("state"), &mut files);
    assert!(files.len() >= 10, "read the state floor: {files:?}");
    let words = [
        "ratatui::widgets",
        "ratatui::text",
        "ratatui::style",
        "ratatui::Frame",
        "Frame<",
        "render_widget",
        "Block::",
        "Paragraph::",
        "set_block",
    ];
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read source");
        let code = super::sizes::non_test_text(&text);
        for (n, line) in code.lines().enumerate() {
            let code_part = line.split("//").next().unwrap_or_default();
            if let Some(w) = words.iter().find(|w| code_part.contains(*w)) {
                found.push(format!("{}:{}: {w}", f.display(), n + 1));
            }
        }
    }
    found
}

#[test]
fn the_tui_floors_hold() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph();
    let floors: BTreeSet<&str> = g
        .keys()
        .filter(|m| m.first().map(String::as_str) == Some("tui") && m.len() > 1)
        .map(|m| m[1].as_str())
        .collect();
    assert_eq!(
        floors,
        ["io", "state", "view"].into_iter().collect(),
        "src/tui holds the three floors and nothing else"
    );
    // The rule sees imports: the state does measure the view, and io does import both.
    let edges = |from: &str, into: &str| {
        g.iter()
            .filter(|(m, _)| m.len() > 1 && m[0] == "tui" && m[1] == from)
            .flat_map(|(_, to)| to)
            .any(|t| t.len() > 1 && t[0] == "tui" && t[1] == into)
    };
    assert!(edges("state", "view") && edges("io", "state") && edges("io", "view"));
    let found = tui_floor_violations(&g, &src);
    assert!(found.is_empty(), "TUI floors broken:\n{}", found.join("\n"));
}

/// A planted violation of each kind is caught: the rule can fail.
#[test]
fn the_tui_floor_rule_catches_a_planted_violation() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut g = graph();
    let m = |s: &str| -> Module { s.split("::").map(String::from).collect() };
    for (from, into) in [
        ("tui::view::walk", "tui::io::effects"),
        ("tui::state::nav", "tui::io::live"),
        ("tui::state::nav", "tui::view::walk"),
    ] {
        assert!(g.contains_key(&m(from)) && g.contains_key(&m(into)));
        g.get_mut(&m(from)).expect("module").insert(m(into));
        let found = tui_floor_violations(&g, &src);
        assert_eq!(
            found,
            vec![format!("{from} imports {into}")],
            "the planted import"
        );
        g.get_mut(&m(from)).expect("module").remove(&m(into));
    }
}
