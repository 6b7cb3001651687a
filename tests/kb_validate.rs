//! The shipped knowledge base is complete (no stubs), and the validator rejects a knowledge base
//! whose findings or remedies lack a source.

use sm120_doctor::kb::{self, EMBEDDED};
use std::path::Path;

/// Write the embedded KB into `dir`, with `edit` applied to the file named `target`.
fn write_kb(dir: &Path, target: &str, edit: impl Fn(&str) -> String) {
    let mut edited = false;
    for (name, text) in EMBEDDED {
        let body = if *name == target {
            edited = true;
            edit(text)
        } else {
            text.to_string()
        };
        std::fs::write(dir.join(name), body).expect("write KB file");
    }
    assert!(edited, "{target} is not an embedded file");
}

#[test]
fn shipped_kb_lints_clean_with_every_class_written() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    let lints = kb::lints(&kb);
    assert!(lints.is_empty(), "lint warnings: {lints:?}");
    for id in [
        "allocator_ipc",
        "deepgemm_warmup",
        "fp8_tuning",
        "cooperative_topk",
        "flashinfer_sampler",
        "breakable_cudagraph",
        "sm120_kernel_missing",
        "cuda_oom",
        "orphan_workers",
        "onboarding",
    ] {
        let c = kb.class(id).unwrap_or_else(|| panic!("class {id} missing"));
        assert!(!c.def.stub, "{id} is a stub");
        assert!(!c.def.nodes.is_empty(), "{id} has no nodes");
    }
    let onboarding = kb.class("onboarding").expect("onboarding");
    assert_eq!(onboarding.def.kind, kb::schema::ClassKind::Checklist);
    assert!(
        onboarding.def.start.len() >= 9,
        "one start per checklist item"
    );
}

#[test]
fn every_conclusion_and_remedy_carries_sources_and_a_confidence() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    for c in &kb.classes {
        for k in &c.def.conclusions {
            assert!(!k.sources.is_empty(), "{}: {}", c.id(), k.id.value);
        }
    }
    for (id, r) in &kb.remedies {
        assert!(!r.sources.is_empty(), "remedy {id}");
        assert!(
            !r.verified.is_empty(),
            "remedy {id} says what it was verified on"
        );
    }
    // The remedies other helpers rely on keep their ids.
    for id in [
        "deep_gemm_off",
        "deep_gemm_warmup_skip",
        "flashinfer_sampler_off",
        "cudagraph_piecewise",
        "drop_expandable_segments",
        "apply_pr_43923",
        "disable_custom_all_reduce",
        "enforce_eager",
    ] {
        assert!(kb.remedy(id).is_some(), "remedy {id} missing");
    }
}

#[test]
fn a_conclusion_without_sources_is_rejected_with_its_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Drop the sources of the first conclusion of fp8_tuning.yaml.
    write_kb(dir.path(), "fp8_tuning.yaml", |text| {
        let start = text
            .find("  - id: fp8_tuning_default_config_logged")
            .expect("conclusion present");
        let sources = start + text[start..].find("    sources:\n").expect("has sources");
        let remedies = sources + text[sources..].find("    remedies:").expect("has remedies");
        format!("{}{}", &text[..sources], &text[remedies..])
    });
    let err =
        kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect_err("must be rejected");
    let msg = err.to_string();
    assert!(
        msg.contains("fp8_tuning.yaml:")
            && msg.contains("conclusion \"fp8_tuning_default_config_logged\" has no source"),
        "{msg}"
    );
    let e = err.0.first().expect("one error");
    assert!(e.line > 1 && e.column > 0, "{e}");
}

#[test]
fn a_remedy_without_sources_is_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), "remedies.yaml", |text| {
        let start = text.find("  - id: kill_orphans").expect("remedy present");
        let sources = start + text[start..].find("    sources:\n").expect("has sources");
        let edits = sources + text[sources..].find("    edits:").expect("has edits");
        format!("{}{}", &text[..sources], &text[edits..])
    });
    let err =
        kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect_err("must be rejected");
    assert!(
        err.to_string()
            .contains("remedy \"kill_orphans\" has no source"),
        "{err}"
    );
}

#[test]
fn a_placeholder_in_a_title_is_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), "cuda_oom.yaml", |text| {
        text.replacen(
            "title: \"CUDA out of memory\"",
            "title: \"CUDA out of memory on {gpu.first_name}\"",
            1,
        )
    });
    let err =
        kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect_err("must be rejected");
    assert!(
        err.to_string()
            .contains("put {fact} placeholders in evidence"),
        "{err}"
    );
}

#[test]
fn the_unmodified_kb_loads_from_a_directory_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), "remedies.yaml", str::to_string);
    let kb = kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect("loads");
    assert_eq!(kb.classes.len(), EMBEDDED.len() - kb::TABLE_FILES.len());
}

#[test]
fn every_signature_has_a_source() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    for s in &kb.signatures {
        assert!(!s.sources.is_empty(), "signature {} ({})", s.id, s.class);
    }
}

/// The contradictions of sm120-facts section 11 are shown to the user, not hidden.
#[test]
fn contradictions_between_sources_are_kept() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    let all: Vec<(String, String)> = kb
        .classes
        .iter()
        .flat_map(|c| {
            c.def.conclusions.iter().flat_map(move |k| {
                k.contradictions
                    .iter()
                    .map(move |t| (format!("{}/{}", c.id(), k.id.value), t.clone()))
            })
        })
        .collect();
    let has = |class: &str, needles: &[&str]| {
        all.iter().any(|(at, text)| {
            at.starts_with(&format!("{class}/")) && needles.iter().all(|n| text.contains(n))
        })
    };
    // 1. SM120 arch vs expandable_segments; 2. #42609's DP>1 matrix.
    assert!(has("allocator_ipc", &["#47751", "#43923"]));
    assert!(has("allocator_ipc", &["#42609"]));
    // 3. "CUDA Archs: Not Set".
    assert!(has(
        "sm120_kernel_missing",
        &["CUDA Archs: Not Set", "#51181"]
    ));
    // 4. CutlassFp8BlockScaledMMKernel "SM90-only" vs ue8m0 scales.
    assert!(has("sm120_kernel_missing", &["SM90-only", "#47818"]));
    // 5. Three explanations of "Unknown recipe"; 6. VLLM_USE_DEEP_GEMM=0 is not a warmup skip.
    assert!(has("deepgemm_warmup", &["#47169", "#47130", "#46006"]));
    assert!(has(
        "deepgemm_warmup",
        &["VLLM_USE_DEEP_GEMM=0", "VLLM_DEEP_GEMM_WARMUP=skip"]
    ));
    // 7. Breakable cudagraph trade-offs.
    assert!(has("breakable_cudagraph", &["#54677", "#41834", "#49370"]));
}
