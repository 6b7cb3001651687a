//! `holds:` and `changes:` in the knowledge base: the loader rejects a range it cannot apply (with
//! file, line and column), and `kb lint` warns about a version claim without a range and a change
//! without a source.

use sm120_doctor::kb::{self, EMBEDDED};
use std::path::Path;

/// Write the embedded KB into `dir`, with `edit` applied to the file named `target`.
fn write_kb(dir: &Path, target: &str, edit: impl Fn(&str) -> String) {
    let mut edited = false;
    for (name, text) in EMBEDDED {
        let body = if *name == target {
            edited = true;
            let out = edit(text);
            assert_ne!(&out, text, "the edit of {target} changed nothing");
            out
        } else {
            text.to_string()
        };
        std::fs::write(dir.join(name), body).expect("write KB file");
    }
    assert!(edited, "{target} is not an embedded file");
}

fn load_err(target: &str, edit: impl Fn(&str) -> String) -> kb::KbErrors {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), target, edit);
    kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect_err("must be rejected")
}

fn load_ok(target: &str, edit: impl Fn(&str) -> String) -> kb::KnowledgeBase {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), target, edit);
    kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect("loads")
}

#[test]
fn a_range_that_is_not_half_open_is_rejected_at_its_place() {
    let err = load_err("cooperative_topk.yaml", |t| {
        t.replacen("range: \">=0.24.0,<0.25.0\"", "range: \"==0.24.0\"", 1)
    });
    let e = err
        .0
        .iter()
        .find(|e| e.message.contains(">=V and <V only"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        e.file.ends_with("cooperative_topk.yaml") && e.line > 1 && e.column > 0,
        "{e}"
    );
    assert!(e.message.contains("cooperative_topk_will_crash"), "{e}");
}

#[test]
fn an_edge_without_its_change_is_rejected() {
    // Move the upper edge to 0.26.0, where no change is listed.
    let err = load_err("cooperative_topk.yaml", |t| {
        t.replacen(
            "range: \">=0.24.0,<0.25.0\"",
            "range: \">=0.24.0,<0.26.0\"",
            1,
        )
    });
    let msg = err.to_string();
    assert!(
        msg.contains("has an edge at 0.26.0 but lists no change of vllm 0.26.0"),
        "{msg}"
    );
    assert!(
        msg.contains("is not at an edge of \">=0.24.0,<0.26.0\""),
        "the 0.25.0 change is now off the edges: {msg}"
    );
}

#[test]
fn unknown_changes_packages_and_versions_are_rejected() {
    let err = load_err("cooperative_topk.yaml", |t| {
        t.replacen(
            "changes: [vllm_cooperative_topk_path, vllm_47164_cooperative_topk_sm12x_gate]",
            "changes: [vllm_cooperative_topk_path, no_such_change]",
            1,
        )
    });
    assert!(
        err.to_string()
            .contains("names no change \"no_such_change\""),
        "{err}"
    );
    let err = load_err("cooperative_topk.yaml", |t| {
        t.replacen("    holds:\n      vllm:", "    holds:\n      vlm:", 1)
    });
    assert!(err.to_string().contains("unknown package \"vlm\""), "{err}");
    let err = load_err("cooperative_topk.yaml", |t| {
        t.replacen("    version: \"0.25.0\"", "    version: \"0.25.0rc1\"", 1)
    });
    assert!(err.to_string().contains("is not a final release"), "{err}");
}

#[test]
fn a_range_on_a_conclusion_that_reports_no_problem_is_rejected() {
    let err = load_err("cooperative_topk.yaml", |t| {
        t.replacen(
            "  - id: cooperative_topk_will_crash\n    severity: warning",
            "  - id: cooperative_topk_will_crash\n    severity: ok",
            1,
        )
    });
    assert!(
        err.to_string().contains("has holds: but severity ok"),
        "{err}"
    );
}

#[test]
fn lint_warns_about_a_version_claim_without_a_range_and_a_change_without_a_source() {
    // A claim that depends on the version, on a conclusion with no range.
    let kb = load_ok("orphan_workers.yaml", |t| {
        t.replacen(
            "      - \"Their API server is gone; `pkill -f \\\"vllm serve\\\"` does not stop workers.\"",
            "      - \"Their API server is gone; fixed in vLLM 0.31.0 by #55846.\"",
            1,
        )
    });
    let lints = kb::lints(&kb);
    assert!(
        lints.iter().any(|l| l.file.ends_with("orphan_workers.yaml")
            && l.message.contains("orphan_workers_found")
            && l.message.contains("depends on a version but has no holds")),
        "{lints:?}"
    );
    // A change ("fixed in") with no source.
    let kb = load_ok("cooperative_topk.yaml", |t| {
        let start = t
            .find("  - id: vllm_47164_cooperative_topk_sm12x_gate")
            .expect("change");
        let sources = start + t[start..].find("    sources:\n").expect("sources");
        t[..sources].to_string()
    });
    let lints = kb::lints(&kb);
    assert!(
        lints.iter().any(|l| l.message
            == "change \"vllm_47164_cooperative_topk_sm12x_gate\" (fixed in vLLM 0.25.0) has no source"),
        "{lints:?}"
    );
}

#[test]
fn every_shipped_change_is_sourced_and_every_edge_names_one() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    assert!(kb.changes.len() >= 12, "{} changes", kb.changes.len());
    for (id, c) in &kb.changes {
        assert!(!c.sources.is_empty(), "change {id}");
        // Upstream only: a URL, or a file of a published release (`vllm==0.30.0:path:line`).
        assert!(
            c.sources.iter().all(|s| s.starts_with("https://")
                || sm120_doctor::kb::sources::Source::parse(s).is_code_read()),
            "change {id}: upstream sources only: {:?}",
            c.sources
        );
    }
    let bounds = kb
        .classes
        .iter()
        .flat_map(|c| c.holds.values())
        .chain(kb.remedy_holds.values())
        .flatten();
    let mut n = 0;
    for b in bounds {
        n += 1;
        for edge in b.range.edges() {
            let id = b
                .change_at(&edge)
                .unwrap_or_else(|| panic!("{} edge {edge}", b.range));
            assert!(kb.changes.contains_key(id));
        }
    }
    assert!(n >= 15, "{n} ranges");
    // The version questions the engine may ask are answerable.
    assert!(kb.has_question("vllm_at_least_0.25.0"));
    assert!(kb.has_question("flashinfer_at_least_0.7.1"));
    // The FlashInfer sampler's default flips at vLLM 0.21.0 (envs.py), an edge of its range.
    assert!(kb.has_question("vllm_at_least_0.21.0"));
    assert!(!kb.has_question("vllm_at_least_0.26.0"));
}
