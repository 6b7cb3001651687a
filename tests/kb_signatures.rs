//! The `signatures:` schema: kinds, weights, frames by file/function, context relations
//! (`requires`, `excluded_by`, `confirm_with`, `when`). The loader rejects a broken signature
//! with the file, line and column of the field; the older `strength:` form still loads.

use sm120_doctor::kb::schema::SignatureKind;
use sm120_doctor::kb::{self, EMBEDDED, KbErrors, KnowledgeBase};

/// Load the embedded KB with one file edited.
fn load_edited(target: &str, edit: impl Fn(&str) -> String) -> Result<KnowledgeBase, KbErrors> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut edited = false;
    for (name, text) in EMBEDDED {
        let body = if *name == target {
            edited = true;
            edit(text)
        } else {
            text.to_string()
        };
        std::fs::write(dir.path().join(name), body).expect("write KB file");
    }
    assert!(edited, "{target} is not an embedded file");
    kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact)
}

/// The error text, with a check that the first error has a place in the file.
fn rejected(target: &str, edit: impl Fn(&str) -> String) -> String {
    let err = load_edited(target, edit).expect_err("must be rejected");
    let first = err.0.first().expect("one error");
    assert!(
        first.file.ends_with(target) && first.line > 0 && first.column > 0,
        "{first}"
    );
    err.to_string()
}

fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not in the file");
    text.replacen(from, to, 1)
}

#[test]
fn kinds_weights_and_relations_load() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("KB");
    let sig = |id: &str| {
        kb.signatures
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let car = sig("car_invalid_argument");
    assert_eq!((car.kind, car.weight), (SignatureKind::Error, 10));
    assert_eq!(car.confirm_with.len(), 1);
    assert_eq!(
        kb.signatures[car.confirm_with[0]].id, "aipc_ctx_expandable",
        "confirm_with resolves to the context signature"
    );
    assert!(!car.unconfirmed.is_empty());
    let km = sig("km_no_kernel_image");
    assert_eq!((km.kind, km.weight), (SignatureKind::Error, 6));
    assert_eq!(kb.signatures[km.excluded_by[0]].id, "ctx_gpu_other");
    assert_eq!(sig("fp8_default_dense").kind, SignatureKind::Warning);
    assert_eq!(sig("car_worker_died").weight, 1);
    assert!(sig("ctx_gpu_sm12x").when.is_some());
    // A frame by file: searched by its file part, checked by the frame regex.
    let frame = sig("dg_warmup_frame");
    assert_eq!(frame.kind, SignatureKind::Frame);
    assert_eq!(frame.search, "deep_gemm_warmup\\.py");
    assert!(frame.regex.is_match(
        "  File \"/usr/lib/vllm/model_executor/warmup/deep_gemm_warmup.py\", line 406, in deep_gemm_warmup"
    ));
    assert!(!frame.regex.is_match("see deep_gemm_warmup.py for details"));
    // The context class and the fallback class.
    assert_eq!(
        kb.class("log_context").map(|c| c.def.kind),
        Some(kb::schema::ClassKind::Context)
    );
    assert!(
        kb.class("sm12x_unknown_gap")
            .is_some_and(|c| c.def.fallback)
    );
}

#[test]
fn the_older_strength_field_still_reads() {
    let kb = load_edited("allocator_ipc.yaml", |t| {
        replace_once(
            t,
            "  - id: car_worker_died\n    kind: supporting\n",
            "  - id: car_worker_died\n    strength: supporting\n",
        )
    })
    .expect("loads");
    let s = kb
        .signatures
        .iter()
        .find(|s| s.id == "car_worker_died")
        .expect("sig");
    assert_eq!((s.kind, s.weight), (SignatureKind::Supporting, 1));
}

#[test]
fn a_reference_to_no_signature_is_rejected() {
    let err = rejected("allocator_ipc.yaml", |t| {
        replace_once(
            t,
            "confirm_with: [aipc_ctx_expandable]",
            "confirm_with: [no_such_signature]",
        )
    });
    assert!(
        err.contains("confirm_with: \"no_such_signature\" names no signature"),
        "{err}"
    );
}

#[test]
fn a_requires_cycle_is_rejected() {
    let err = rejected("sm12x_unknown_gap.yaml", |t| {
        replace_once(t, "requires: [ctx_gpu_sm12x]", "requires: [gap_in_triton]")
    });
    assert!(err.contains("leads back to itself"), "{err}");
}

#[test]
fn frame_parts_and_patterns_do_not_mix() {
    let err = rejected("deepgemm_warmup.yaml", |t| {
        replace_once(
            t,
            "    file: \"deep_gemm_warmup\\\\.py\"\n",
            "    file: \"deep_gemm_warmup\\\\.py\"\n    pattern: \"x\"\n",
        )
    });
    assert!(err.contains("not both"), "{err}");
    let err = rejected("cuda_oom.yaml", |t| {
        replace_once(
            t,
            "  - id: cuda_oom_cuda_error\n    kind: error\n",
            "  - id: cuda_oom_cuda_error\n    kind: error\n    file: \"x\\\\.py\"\n",
        )
    });
    assert!(err.contains("are for `kind: frame` signatures"), "{err}");
}

#[test]
fn a_signature_without_a_pattern_is_rejected() {
    let err = rejected("cuda_oom.yaml", |t| {
        replace_once(t, "    pattern: \"CUDA error: out of memory\"\n", "")
    });
    assert!(err.contains("has no `pattern`"), "{err}");
}

#[test]
fn kind_and_strength_together_are_rejected() {
    let err = rejected("cuda_oom.yaml", |t| {
        replace_once(
            t,
            "  - id: cuda_oom_cuda_error\n    kind: error\n",
            "  - id: cuda_oom_cuda_error\n    kind: error\n    strength: strong\n",
        )
    });
    assert!(err.contains("not both"), "{err}");
}

#[test]
fn when_reads_known_facts_only() {
    let err = rejected("log_context.yaml", |t| {
        replace_once(
            t,
            "when: \"gpu.any_sm12x\"",
            "when: \"log('car_worker_died')\"",
        )
    });
    assert!(err.contains("reads facts only"), "{err}");
    let err = rejected("log_context.yaml", |t| {
        replace_once(t, "when: \"gpu.any_sm12x\"", "when: \"gpu.no_such_fact\"")
    });
    assert!(err.contains("unknown fact"), "{err}");
}

#[test]
fn a_context_class_holds_context_signatures_only() {
    let err = rejected("log_context.yaml", |t| {
        replace_once(
            t,
            "  - id: ctx_torch_sm120_build\n    kind: context\n",
            "  - id: ctx_torch_sm120_build\n    kind: error\n",
        )
    });
    assert!(
        err.contains("a context class holds only `kind: context` signatures"),
        "{err}"
    );
}
