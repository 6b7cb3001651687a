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
        "p2p_fabric",
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

/// Load the embedded KB with one file edited; the errors as text.
fn load_edited(target: &str, edit: impl Fn(&str) -> String) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), target, edit);
    match kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn table_files_are_required() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), "hardware.yaml", str::to_string);
    std::fs::remove_file(dir.path().join("hardware.yaml")).expect("rm");
    std::fs::remove_file(dir.path().join("allocator.yaml")).expect("rm");
    let err = kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact)
        .expect_err("must be rejected")
        .to_string();
    assert!(
        err.contains("no hardware.yaml") && err.contains("no allocator.yaml"),
        "{err}"
    );
}

#[test]
fn a_type_hint_that_is_no_model_family_is_rejected() {
    let err = load_edited("deepgemm_warmup.yaml", |t| {
        t.replacen(
            "model.type_hint == 'qwen3_5'",
            "model.type_hint == 'qwen35'",
            1,
        )
    });
    assert!(
        err.contains("deepgemm_warmup.yaml:")
            && err.contains("\"qwen35\" is not a model family of hardware.yaml"),
        "{err}"
    );
    // And a family renamed in hardware.yaml leaves the check pointing at nothing.
    let err = load_edited("hardware.yaml", |t| {
        t.replacen("id: qwen3_5", "id: qwen3_6", 1)
    });
    assert!(err.contains("\"qwen3_5\" is not a model family"), "{err}");
}

#[test]
fn hardware_tables_are_checked_with_their_place() {
    let err = load_edited("hardware.yaml", |t| {
        t.replacen("names: [deepseek-v4]", "names: [DeepSeek_V4]", 1)
    });
    assert!(
        err.contains("hardware.yaml:") && err.contains("write \"deepseek-v4\""),
        "{err}"
    );
    let err = load_edited("hardware.yaml", |t| {
        t.replacen(
            "      - NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition",
            "      - NVIDIA RTX PRO 6000 Blackwell Server Edition",
            1,
        )
    });
    assert!(err.contains("is not a vLLM device name"), "{err}");
    let err = load_edited("hardware.yaml", |t| {
        t.replacen("same_chip:", "same_chips:", 1)
    });
    assert!(err.contains("hardware.yaml:"), "{err}");
}

#[test]
fn every_pr_a_remedy_applies_needs_its_base() {
    let err = load_edited("remedies.yaml", |t| {
        t.replacen("  - pr: 43923", "  - pr: 43924", 1)
    });
    assert!(
        err.contains("remedy \"apply_pr_43923\" applies PR #43923, which has no entry under prs:"),
        "{err}"
    );
    let err = load_edited("remedies.yaml", |t| {
        t.replacen(
            "expected_version: \"0.24\"",
            "expected_version: \"v0.24\"",
            1,
        )
    });
    assert!(
        err.contains("remedies.yaml:") && err.contains("is not a version prefix"),
        "{err}"
    );
}

#[test]
fn allocator_texts_may_use_only_their_placeholders() {
    let err = load_edited("allocator.yaml", |t| {
        t.replacen(
            "kept the other options: {kept}",
            "kept {kept} on line {line}",
            1,
        )
    });
    assert!(
        err.contains("allocator.yaml:")
            && err.contains("kept: unknown placeholder {line} (this text may use: kept)"),
        "{err}"
    );
    let err = load_edited("allocator.yaml", |t| {
        t.replacen("precedence: cuda_var_wins", "precedence: alloc_var_wins", 1)
    });
    assert!(
        err.contains("unknown precedence rule \"alloc_var_wins\""),
        "{err}"
    );
}

#[test]
fn one_class_per_probe() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    assert_eq!(
        kb.class_for_probe(kb::schema::ProbeKind::Ipc)
            .map(|c| c.id()),
        Some("allocator_ipc")
    );
    assert_eq!(
        kb.class_for_probe(kb::schema::ProbeKind::P2p)
            .map(|c| c.id()),
        Some("p2p_fabric")
    );
    let err = load_edited("cuda_oom.yaml", |t| {
        t.replacen("\nsignatures:", "\nprobe: ipc\nsignatures:", 1)
    });
    assert!(
        err.contains("names probe Ipc, which class \"allocator_ipc\" names already"),
        "{err}"
    );
}

#[test]
fn a_pr_base_no_remedy_applies_is_a_lint() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), "remedies.yaml", |t| {
        t.replacen(
            "prs:\n",
            "prs:\n  - pr: 1\n    expected_version: \"0.1\"\n    why: \"test\"\n    sources: [x]\n",
            1,
        )
    });
    let kb = kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect("loads");
    let lints = kb::lints(&kb);
    assert!(
        lints
            .iter()
            .any(|l| l.message == "PR #1 is listed under prs: but no remedy applies it"),
        "{lints:?}"
    );
}

/// A signature's `after:` must name signatures, and not itself; a bad `unless_log`
/// pattern is reported with its place.
#[test]
fn log_context_fields_are_checked_with_their_place() {
    let err = load_edited("p2p_fabric.yaml", |t| {
        t.replacen(
            "after: [p2p_nccl_init_complete, p2p_nccl_p2p_channel]",
            "after: [p2p_nccl_init_complete, no_such_signature]",
            1,
        )
    });
    assert!(
        err.contains("p2p_fabric.yaml:")
            && err.contains("\"no_such_signature\" names no signature"),
        "{err}"
    );
    let err = load_edited("p2p_fabric.yaml", |t| {
        t.replacen(
            "after: [p2p_nccl_init_complete, p2p_nccl_p2p_channel]",
            "after: [p2p_first_batch_stall]",
            1,
        )
    });
    assert!(err.contains("cannot follow itself"), "{err}");
    let err = load_edited("p2p_fabric.yaml", |t| {
        t.replacen("      - 'Init COMPLETE'\n", "      - 'Init (COMPLETE'\n", 1)
    });
    assert!(
        err.contains("p2p_fabric.yaml:") && err.contains("regex"),
        "{err}"
    );
}

#[test]
fn run_signs_are_checked_against_their_examples_and_fields() {
    // An example the pattern does not find is refused with its place.
    let err = load_edited("run_signs.yaml", |t| {
        t.replacen(
            "      - \"Graph capturing finished in 22 secs, took 0.92 GiB\"",
            "      - \"Graph capture finished in 22 secs\"",
            1,
        )
    });
    assert!(
        err.contains("run_signs.yaml:")
            && err.contains("the pattern of \"graph_capture_done\" does not match this example"),
        "{err}"
    );
    // A progress line needs its phase; a pattern with no literal needs needles.
    let err = load_edited("run_signs.yaml", |t| {
        t.replacen(
            "    phase: graph_capture\n    milestone: graph_capture_done\n",
            "    milestone: graph_capture_done\n",
            1,
        )
    });
    assert!(
        err.contains("`phase` is required for `sign: progress`"),
        "{err}"
    );
    let err = load_edited("run_signs.yaml", |t| {
        t.replacen(
            "    pattern: \"Graph capturing finished in \"",
            "    pattern: \"\\\\w+ capturing finished in \\\\w+\"",
            1,
        )
    });
    assert!(err.contains("give `needles:` for the prefilter"), "{err}");
    // A signature's run condition must be one the reader knows.
    let err = load_edited("allocator_ipc.yaml", |t| {
        t.replacen(
            "      - failure_kind: abort",
            "      - failure_kind: exploded",
            1,
        )
    });
    assert!(err.contains("allocator_ipc.yaml:"), "{err}");
}

/// `kb lint` lists a claim that names a release without the line where the release was read,
/// and a PR state without that PR's URL; the shipped KB has neither.
#[test]
fn a_release_claim_without_its_read_is_listed() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), "breakable_cudagraph.yaml", |t| {
        // Drop the node's sources: its why still names 0.30.0 and 0.29.0.
        let start = t.find("  - id: bc_guard_release").expect("node");
        let from = start + t[start..].find("    sources:\n").expect("sources");
        let to = from + t[from..].find("\n\n").expect("end of node");
        format!("{}{}", &t[..from], &t[to + 1..])
    });
    let kb = kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect("loads");
    let lints = kb::lints(&kb);
    assert!(
        lints
            .iter()
            .any(|l| l.file.ends_with("breakable_cudagraph.yaml")
                && l.message
                    .starts_with("node \"bc_guard_release\" names release")),
        "{lints:?}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    write_kb(dir.path(), "allocator_ipc.yaml", |t| {
        t.replace(
            "      - https://github.com/vllm-project/vllm/pull/47751\n",
            "",
        )
    });
    let kb = kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact).expect("loads");
    let lints = kb::lints(&kb);
    assert!(
        lints
            .iter()
            .any(|l| l.message.contains("names the state of #47751")),
        "{lints:?}"
    );
}
