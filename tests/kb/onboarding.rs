//! The onboarding checklist on real and scenario hosts, and the demo's "what next" findings.

use sm120_doctor::engine::classify::LogText;
use sm120_doctor::engine::{self, Answers, Diagnosis, Mode};
use sm120_doctor::import;
use sm120_doctor::kb::{self, schema::Confidence, schema::Severity};
use sm120_doctor::snapshot::Probed;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn onboard(snapshot: &str, launch: Option<&str>) -> Diagnosis {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("KB");
    let mut snap = import::load_snapshot(
        &root()
            .join("tests/fixtures/kb/snapshots")
            .join(format!("{snapshot}.yaml")),
    )
    .expect("snapshot");
    if let Some(l) = launch {
        let text = std::fs::read_to_string(
            root()
                .join("tests/fixtures/kb/launches")
                .join(format!("{l}.sh")),
        )
        .expect("launch");
        snap.launch = Probed::Value(sm120_doctor::launch::parse_launch(&text).expect("parses"));
    }
    engine::diagnose(&kb, &snap, &Answers::new(), &[], Mode::Onboarding)
}

fn ids(d: &Diagnosis) -> Vec<String> {
    let mut v: Vec<String> = d.findings.iter().map(|f| f.id.clone()).collect();
    v.sort();
    v
}

fn sorted(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn h200_onboarding_passes_or_does_not_apply() {
    let d = onboard("h200x2", None);
    assert_eq!(d.pending().count(), 0, "{:?}", d.walks);
    assert_eq!(
        ids(&d),
        sorted(&[
            "onboard_not_sm120",
            "onboard_driver_na",
            "onboard_cuda_driver_na",
            "onboard_torch_na",
            "onboard_toolkit_na",
            "onboard_p2p_untested",
            "onboard_persistence_ok",
            "onboard_no_leftovers",
            "onboard_starter_na",
        ])
    );
    // The driver's P2P report is no proof (it reported P2P on hosts where copies hung): without the functional probe the P2P item
    // says "not tested" (info), everything else passes.
    for f in &d.findings {
        let want = if f.id == "onboard_p2p_untested" {
            Severity::Info
        } else {
            Severity::Ok
        };
        assert_eq!(f.severity, want, "{}", f.id);
    }
}

/// With the probe captured on the same 2× H200 host, the P2P item passes on the measurement.
#[test]
fn h200_onboarding_with_the_p2p_capture_passes_on_the_probe() {
    let d = onboard("h200x2_p2p", None);
    let p2p = d
        .findings
        .iter()
        .find(|f| f.id.starts_with("onboard_p2p"))
        .expect("P2P item");
    assert_eq!(
        (p2p.id.as_str(), p2p.severity),
        ("onboard_p2p_ok", Severity::Ok)
    );
    assert!(
        p2p.evidence[0].to_string().contains("GPU0↔GPU1: ok"),
        "{:?}",
        p2p.evidence
    );
    assert!(
        p2p.evidence[0].to_string().contains("364.9 GB/s"),
        "{:?}",
        p2p.evidence
    );
}

/// The driver says P2P is fine, the probe's copies hung: the item is the false all-clear.
#[test]
fn a_hung_probe_under_a_driver_all_clear_fails_the_p2p_item() {
    let d = onboard("sm120_ws2_p2p_hung", None);
    let p2p = d
        .findings
        .iter()
        .find(|f| f.id.starts_with("onboard_p2p"))
        .expect("P2P item");
    assert_eq!(
        (p2p.id.as_str(), p2p.severity),
        ("onboard_p2p_false_all_clear", Severity::Error)
    );
    assert_eq!(p2p.remedies[0].id, "acs_redirect_off");
    // The driver refusing P2P is believed: no P2P, custom all-reduce off.
    let refused = onboard("sm120_ws2_p2p_refused", None);
    assert!(
        ids(&refused).contains(&"onboard_p2p_none".to_string()),
        "{:?}",
        ids(&refused)
    );
}

#[test]
fn check_onboard_on_the_h200_snapshot_names_what_does_not_apply() {
    let out = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(["check", "--onboard", "--snapshot"])
        .arg(root().join("tests/fixtures/kb/snapshots/h200x2.yaml"))
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("not SM120"), "{text}");
    assert_eq!(
        text.matches("Does not apply (not SM120)").count(),
        5,
        "{text}"
    );
    assert!(
        text.contains("Persistence mode is on for every GPU"),
        "{text}"
    );
    assert!(text.contains("P2P not tested yet"), "{text}");
    assert!(!text.contains("P2P works between the GPUs"), "{text}");
    assert!(text.contains("No GPU processes left over"), "{text}");
}

#[test]
fn sm120_workstation_gets_a_starter_launch_that_avoids_the_traps() {
    let d = onboard("sm120_ws2", Some("qwen36_fp8_tp2"));
    assert_eq!(d.pending().count(), 0, "{:?}", d.walks);
    assert_eq!(
        ids(&d),
        sorted(&[
            "onboard_sm120_detected",
            "onboard_driver_ok",
            "onboard_cuda_driver_ok",
            "onboard_torch_ok",
            "onboard_toolkit_ok",
            "onboard_p2p_untested",
            "onboard_persistence_ok",
            "onboard_no_leftovers",
            "onboard_starter_fp8",
        ])
    );
    let starter = d
        .findings
        .iter()
        .find(|f| f.id == "onboard_starter_fp8")
        .expect("starter");
    assert_eq!(
        starter.evidence[0].to_string(),
        "env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF VLLM_USE_DEEP_GEMM=0 vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2 --gpu-memory-utilization 0.90 --max-model-len 32768"
    );
    // Every flag is explained, and no fork-only variable is recommended.
    assert!(starter.evidence.len() >= 6);
    assert!(
        !starter.evidence[0]
            .to_string()
            .contains("VLLM_ENABLE_PCIE_ALLREDUCE")
            && !starter.evidence[0]
                .to_string()
                .contains("expandable_segments")
    );
}

#[test]
fn old_proprietary_host_fails_the_driver_torch_and_persistence_items() {
    let d = onboard("sm120_proprietary", None);
    let got = ids(&d);
    for id in [
        "onboard_driver_old",
        "onboard_cuda_driver_old",
        "onboard_torch_no_sm120",
        "onboard_toolkit_old",
        "onboard_p2p_none",
        "onboard_persistence_off",
        "onboard_starter_generic",
    ] {
        assert!(got.contains(&id.to_string()), "{id} missing from {got:?}");
    }
    assert!(d.worst() == Severity::Error);
}

#[test]
fn other_hosts_reach_their_items() {
    let single = ids(&onboard("sm120_5090", None));
    assert!(
        single.contains(&"onboard_p2p_single".to_string()),
        "{single:?}"
    );
    assert!(
        single.contains(&"onboard_toolkit_old".to_string()),
        "{single:?}"
    );
    let four = ids(&onboard("sm120_maxq4", None));
    assert!(
        four.contains(&"onboard_p2p_untested".to_string()),
        "{four:?}"
    );
    // Once every pair of the four passed the probe, the item says custom all-reduce stays off.
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("KB");
    let mut snap =
        import::load_snapshot(&root().join("tests/fixtures/kb/snapshots/sm120_maxq4.yaml"))
            .expect("snapshot");
    snap.p2p_probe = Probed::Value(all_ok_probe(4));
    let four = ids(&engine::diagnose(
        &kb,
        &snap,
        &Answers::new(),
        &[],
        Mode::Onboarding,
    ));
    assert!(
        four.contains(&"onboard_p2p_pcie_many".to_string()),
        "{four:?}"
    );
    let orphans = ids(&onboard("sm120_ws2_orphans", None));
    assert!(
        orphans.contains(&"onboard_orphans".to_string()),
        "{orphans:?}"
    );
    let busy = ids(&onboard("sm120_ws2_busy", None));
    assert!(
        busy.contains(&"onboard_other_processes".to_string()),
        "{busy:?}"
    );
}

#[test]
fn demo_lists_what_the_seed_host_hits_next() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("KB");
    let snap = import::demo_snapshot();
    let logs = vec![LogText {
        name: import::demo::LOG_NAME.into(),
        text: import::demo::LOG.into(),
    }];
    let d = engine::diagnose(&kb, &snap, &Answers::new(), &logs, Mode::Failures);
    assert_eq!(d.pending().count(), 0);
    let first = &d.findings[0];
    assert_eq!(first.id, "allocator_ipc");
    let order: Vec<&str> = first.remedies.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        order,
        [
            "drop_expandable_segments",
            "apply_pr_43923",
            "disable_custom_all_reduce",
            "enforce_eager"
        ]
    );
    let find = |class: &str| {
        d.findings
            .iter()
            .find(|f| f.class == class)
            .unwrap_or_else(|| panic!("no {class} finding"))
    };
    let dg = find("deepgemm_warmup");
    assert_eq!(
        (dg.id.as_str(), dg.severity, dg.confidence),
        (
            "deepgemm_will_crash",
            Severity::Warning,
            Confidence::Confirmed
        )
    );
    // Dense FP8 layers of this qwen3_5 model run on CUTLASS (DeepGEMM auto-disabled), which
    // reads no Triton tile config: a speed note, not a warning.
    let fp8 = find("fp8_tuning");
    assert_eq!(
        (fp8.id.as_str(), fp8.severity, fp8.confidence),
        (
            "fp8_tuning_dense_not_triton",
            Severity::Info,
            Confidence::Confirmed
        )
    );
    assert!(
        fp8.evidence[0].to_string().contains(
            "qwen3_5 types are auto-disabled for it and go to CutlassFp8BlockScaledMMKernel"
        ),
        "{:?}",
        fp8.evidence
    );
    let ct = find("cooperative_topk");
    assert_eq!(
        (ct.id.as_str(), ct.severity, ct.confidence),
        (
            "cooperative_topk_latent",
            Severity::Info,
            Confidence::Confirmed
        )
    );
}

#[test]
fn check_demo_text_shows_the_next_findings_with_confidence() {
    let out = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(["check", "--demo"])
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // The claim (upstream) and the match (this host) are shown apart.
    for needle in [
        "[allocator_ipc · error · CONFIRMED upstream · matched: measured]",
        "[deepgemm_warmup · warning · CONFIRMED upstream · matched: measured]",
        "[fp8_tuning · info · CONFIRMED upstream · matched: measured]",
        "[cooperative_topk · info · CONFIRMED upstream · matched: measured]",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let a = text.find("[allocator_ipc").expect("allocator_ipc shown");
    let b = text.find("[deepgemm_warmup").expect("deepgemm shown");
    assert!(a < b, "allocator_ipc comes first");
    assert!(!text.contains("signatures only"), "no stub classes left");
}

#[test]
fn demo_host_onboarding_infers_torch_from_its_cuda_build_and_asks_the_rest() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("KB");
    let d = engine::diagnose(
        &kb,
        &import::demo_snapshot(),
        &Answers::new(),
        &[],
        Mode::Onboarding,
    );
    let torch = d
        .findings
        .iter()
        .find(|f| f.id == "onboard_torch_probably_ok")
        .expect("torch item concluded from torch_cuda");
    assert_eq!(torch.confidence, Confidence::Suspected);
    // Persistence mode is not in the seed report: the walk asks instead of guessing.
    let pending: Vec<&str> = d
        .pending()
        .filter_map(|w| match &w.outcome {
            engine::Outcome::NeedsAnswer { node, .. } => Some(node.as_str()),
            engine::Outcome::Concluded { .. } => None,
        })
        .collect();
    assert_eq!(pending, ["ob_persistence"]);
}

/// A P2P probe in which every pair of `n` GPUs passed.
fn all_ok_probe(n: u32) -> sm120_doctor::snapshot::P2pProbe {
    use sm120_doctor::snapshot::{P2pOutcome, P2pPair, P2pProbe};
    let mut pairs = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            pairs.push(P2pPair {
                a,
                b,
                cuda_can_access_peer_ab: Probed::Value(true),
                cuda_can_access_peer_ba: Probed::Value(true),
                nvml_p2p_read: Probed::Value(true),
                nvml_p2p_write: Probed::Value(true),
                functional: P2pOutcome::Ok,
                directions: Vec::new(),
                wall_ms: 50.0,
            });
        }
    }
    P2pProbe {
        selection: format!("--tp {n}"),
        pairs: Probed::Value(pairs),
        ..Default::default()
    }
}
