//! The allocator/IPC probe as run on a real H200 host (tests/fixtures/h200-live-2026-11-30/)
//! agrees with the measurements in shared/fixtures/h200x2/README.md:
//!   default allocator          → cudaIpcGetMemHandle succeeds, legacy IPC capable = 1
//!   expandable_segments:True   → "invalid argument",            legacy IPC capable = 0
//!   expandable segments off    → succeeds again (new allocations)
//! and the probe's facts are what the engine reads.

use sm120_doctor::facts;
use sm120_doctor::import::{demo_snapshot, load_snapshot};
use sm120_doctor::kb::expr::Value;
use sm120_doctor::snapshot::{IpcProbe, IpcProbeRun, Probed};
use std::path::Path;

const DIR: &str = "tests/fixtures/h200-live-2026-11-30";

fn probe(name: &str) -> IpcProbe {
    let text = std::fs::read_to_string(Path::new(DIR).join(name)).expect("fixture");
    serde_json::from_str(&text).expect("probe JSON")
}

fn run<'a>(runs: &'a Probed<Vec<IpcProbeRun>>, role: &str) -> &'a IpcProbeRun {
    runs.value()
        .expect("path ran")
        .iter()
        .find(|r| r.role == role)
        .expect("role present")
}

fn exported(r: &IpcProbeRun) -> (Probed<bool>, Probed<bool>) {
    (r.ipc_handle_ok.clone(), r.legacy_ipc_capable.clone())
}

const YES: (Probed<bool>, Probed<bool>) = (Probed::Value(true), Probed::Value(true));
const NO: (Probed<bool>, Probed<bool>) = (Probed::Value(false), Probed::Value(false));

#[test]
fn default_config_agrees_with_the_readme_table() {
    let p = probe("probe-default.json");
    assert_eq!(p.engine_alloc_conf, None);
    let engine = run(&p.torch, "engine");
    assert_eq!(engine.alloc_conf, None);
    assert_eq!(exported(engine), YES);
    let cmp = run(&p.torch, "comparison");
    assert_eq!(cmp.alloc_conf.as_deref(), Some("expandable_segments:True"));
    assert_eq!(exported(cmp), NO);
    assert!(
        cmp.ipc_error
            .as_deref()
            .is_some_and(|e| e.contains("invalid argument"))
    );
    assert!(
        engine
            .device
            .as_deref()
            .is_some_and(|d| d.starts_with("NVIDIA H200"))
    );
}

#[test]
fn expandable_config_agrees_with_the_readme_table() {
    let p = probe("probe-expandable.json");
    assert_eq!(
        p.engine_alloc_conf.as_deref(),
        Some("expandable_segments:True")
    );
    let engine = run(&p.torch, "engine");
    assert_eq!(exported(engine), NO);
    assert!(
        engine
            .ipc_error
            .as_deref()
            .is_some_and(|e| e.contains("invalid argument"))
    );
    let remedy = run(&p.torch, "remedy");
    assert_eq!(
        remedy.alloc_conf.as_deref(),
        Some("expandable_segments:False")
    );
    assert_eq!(exported(remedy), YES);
}

#[test]
fn native_path_agrees() {
    for name in [
        "probe-native.json",
        "probe-default.json",
        "probe-expandable.json",
    ] {
        let p = probe(name);
        assert_eq!(exported(run(&p.native, "plain")), YES, "{name}");
        let vmm = run(&p.native, "vmm");
        assert_eq!(exported(vmm), NO, "{name}");
        assert!(
            vmm.ipc_error
                .as_deref()
                .is_some_and(|e| e.contains("CUDA_ERROR_INVALID_VALUE"))
        );
    }
    assert!(
        matches!(probe("probe-native.json").torch, Probed::Skipped(ref r) if r.to_string().contains("--native-only"))
    );
}

#[test]
fn snapshot_with_probe_gives_facts() {
    let s = load_snapshot(&Path::new(DIR).join("snapshot-probe.yaml")).expect("snapshot");
    let f = facts::derive(
        &s,
        false,
        &sm120_doctor::vllm::hardware::Hardware::default(),
    );
    assert_eq!(f.get("probe.ran").value, Value::Bool(true));
    assert_eq!(f.get("probe.ipc_default_ok").value, Value::Bool(true));
    assert_eq!(f.get("probe.ipc_expandable_ok").value, Value::Bool(false));
    // That snapshot ran the native path only: no torch run under the engine's config.
    assert!(matches!(
        f.get("probe.ipc_engine_config_ok").value,
        Value::Unknown(_)
    ));
}

#[test]
fn facts_from_a_torch_probe() {
    let mut s = demo_snapshot();
    s.probe = Probed::Value(probe("probe-expandable.json"));
    let f = facts::derive(
        &s,
        false,
        &sm120_doctor::vllm::hardware::Hardware::default(),
    );
    assert_eq!(
        f.get("probe.ipc_engine_config_ok").value,
        Value::Bool(false)
    );
    assert_eq!(f.get("probe.remedy_ok").value, Value::Bool(true));
    assert_eq!(
        f.get("probe.engine_alloc_conf").value,
        Value::Str("expandable_segments:True".into())
    );
    for name in [
        "probe.ran",
        "probe.engine_alloc_conf",
        "probe.ipc_engine_config_ok",
        "probe.ipc_default_ok",
        "probe.ipc_expandable_ok",
        "probe.remedy_ok",
    ] {
        assert!(facts::is_known_fact(name), "{name} in CATALOGUE");
    }
}

#[test]
fn old_snapshots_without_probe_still_load() {
    // The demo snapshot predates the probe section.
    let s = demo_snapshot();
    assert!(matches!(s.probe, Probed::Skipped(_)));
    let f = facts::derive(
        &s,
        false,
        &sm120_doctor::vllm::hardware::Hardware::default(),
    );
    assert_eq!(f.get("probe.ran").value, Value::Bool(false));
    assert!(matches!(
        f.get("probe.ipc_expandable_ok").value,
        Value::Unknown(_)
    ));
}
