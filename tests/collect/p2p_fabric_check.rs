//! The peer-to-peer fabric class through the real binary: `check` on recorded hosts
//! with logs, `check --probe p2p` on this machine, and `classify` on the hang log and on a crash
//! log that merely contains the same shm_broadcast stall line.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn kb_fixture(dir: &str, name: &str) -> String {
    root()
        .join("tests/fixtures/kb")
        .join(dir)
        .join(name)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// `check --format json` on a scenario snapshot with a launch and an optional log.
fn check(snapshot: &str, launch: &str, log: Option<&str>) -> (Option<i32>, Value) {
    let snap = kb_fixture("snapshots", &format!("{snapshot}.yaml"));
    let mut args = vec![
        "check",
        "--snapshot",
        snap.as_str(),
        "--launch",
        launch,
        "--format",
        "json",
    ];
    let log_path;
    if let Some(l) = log {
        log_path = kb_fixture("logs", &format!("{l}.log"));
        args.extend(["--log", log_path.as_str()]);
    }
    let o = run(&args);
    (o.status.code(), json(&o))
}

/// The p2p_fabric entry among the findings (warning and above), if any.
fn p2p_finding(v: &Value) -> Option<&Value> {
    v["findings"]
        .as_array()?
        .iter()
        .find(|f| f["class"] == "p2p_fabric")
}

/// The p2p_fabric entry below a finding: passed, not checked or does not apply.
fn p2p_passed(v: &Value) -> Option<String> {
    ["passed", "not_checked", "not_applicable"]
        .iter()
        .filter_map(|k| v[*k].as_array())
        .flatten()
        .find(|f| f["class"] == "p2p_fabric")
        .and_then(|f| f["id"].as_str())
        .map(str::to_string)
}

fn remedy_ids(f: &Value) -> Vec<String> {
    f["remedies"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|x| x["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

const TP2: &str = "vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2";

#[test]
fn hang_log_with_translated_iommu_and_acs_redirect_offers_the_platform_fix_first() {
    let (code, v) = check(
        "sm120_ws2_fabric_translated",
        TP2,
        Some("p2p_hang_init_shm"),
    );
    assert_eq!(code, Some(1), "{v:#}");
    let f = p2p_finding(&v).unwrap_or_else(|| panic!("no p2p_fabric finding: {v:#}"));
    assert_eq!(f["id"], "p2p_hang_fabric_suspected");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["confidence"], "SUSPECTED");
    assert_eq!(
        remedy_ids(f),
        [
            "acs_redirect_off",
            "iommu_passthrough",
            "p2p_off_nccl_and_custom_ar"
        ]
    );
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains("[0000:00:01.1, 0000:00:03.1]"),
        "{evidence}"
    );
    assert!(evidence.contains("0000:01:00.0: DMA-FQ"), "{evidence}");
    // The log lines that led there are shown with the finding.
    let lines = f["log_lines"].to_string();
    assert!(lines.contains("p2p_shm_stall_after_init"), "{lines}");
    // The software workaround names both halves and why one alone moves the hang.
    let sw = &f["remedies"][2];
    let edits = sw["edits"].to_string();
    assert!(
        edits.contains("NCCL_P2P_DISABLE") && edits.contains("--disable-custom-all-reduce"),
        "{edits}"
    );
    assert!(
        sw["limits"]
            .to_string()
            .contains("one without the other only moves the hang"),
        "{sw:#}"
    );
    // No fork-only variable is ever set.
    assert!(!edits.contains("VLLM_ENABLE_PCIE_ALLREDUCE"), "{edits}");
}

#[test]
fn driver_says_ok_but_the_probe_hung_shows_the_false_all_clear() {
    let (code, v) = check("sm120_ws2_p2p_hung", TP2, None);
    assert_eq!(code, Some(1), "{v:#}");
    let f = p2p_finding(&v).unwrap_or_else(|| panic!("no p2p_fabric finding: {v:#}"));
    assert_eq!(f["id"], "p2p_fabric_acs");
    assert_eq!(f["confidence"], "CONFIRMED");
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains("GPU0↔GPU1: hung after 10000 ms"),
        "{evidence}"
    );
    assert!(
        evidence.contains(
            "The driver reports P2P as supported: yes. That is the false all-clear (yes)"
        ),
        "{evidence}"
    );
    assert_eq!(remedy_ids(f)[0], "acs_redirect_off");
    // The walk used the functional result before the fabric and the driver.
    let walk = v["walks"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["class"] == "p2p_fabric"))
        .expect("p2p_fabric walk");
    let nodes: Vec<&str> = walk["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["node"].as_str())
        .collect();
    assert_eq!(
        nodes,
        [
            "p2p_applies",
            "p2p_log_ranks",
            "p2p_log_mismatch",
            "p2p_probe_ran",
            "p2p_functional",
            "p2p_lost",
            "p2p_lost_redirect",
            "p2p_lost_redirect_iommu"
        ]
    );
}

#[test]
fn one_gpu_does_not_apply() {
    let (code, v) = check(
        "sm120_5090",
        "vllm serve Qwen/Qwen3.6-27B-FP8 --max-model-len 32768",
        None,
    );
    assert!(p2p_finding(&v).is_none(), "{v:#}");
    assert_eq!(p2p_passed(&v).as_deref(), Some("p2p_not_applicable"));
    let na = v["not_applicable"].as_array().expect("not_applicable");
    assert!(na.iter().any(|f| f["id"] == "p2p_not_applicable"), "{v:#}");
    assert_ne!(code, Some(2));
}

#[test]
fn the_h200_capture_is_ok_and_not_this_class() {
    let (code, v) = check("h200x2_p2p", TP2, Some("startup_ok"));
    assert!(p2p_finding(&v).is_none(), "{v:#}");
    assert_eq!(p2p_passed(&v).as_deref(), Some("p2p_works"));
    assert_eq!(code, Some(0), "{v:#}");
    let matched: Vec<&str> = v["log_matches"]
        .as_array()
        .expect("log_matches")
        .iter()
        .filter_map(|m| m["class"].as_str())
        .collect();
    assert!(!matched.contains(&"p2p_fabric"), "{matched:?}");
}

fn classes(log: &str) -> Vec<String> {
    let path = kb_fixture("logs", &format!("{log}.log"));
    let o = run(&["classify", "--log", &path, "--format", "json"]);
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    json(&o)["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_hang_log_classifies_and_a_crash_log_with_the_same_stall_line_does_not() {
    assert_eq!(classes("p2p_hang_init_shm"), ["p2p_fabric"]);
    // The same shm_broadcast line (and NCCL's Init COMPLETE) next to the allocator/IPC crash:
    // the stall is a symptom of the crash.
    assert_eq!(classes("car_with_shm_stall"), ["allocator_ipc"]);
    // A slow start whose stall lines end in "Application startup complete": nothing.
    assert!(classes("shm_slow_load_finishes").is_empty());
}

/// On this machine (no NVIDIA driver) the probe is skipped with the reason, and `check --probe
/// p2p` says so before the findings. On a host with GPUs it measures instead (the H200 run is in
/// tests/fixtures/h200-p2p-2026-11-30/).
#[test]
fn check_probe_p2p_runs_the_probe_or_says_why_not() {
    let o = run(&["check", "--probe", "p2p", "--format", "json"]);
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&o);
    let probe = &v["p2p_probe"];
    assert!(probe.is_object(), "{v:#}");
    let pairs = &probe["pairs"];
    if let Some(why) = pairs["skipped"].as_str() {
        assert!(!why.is_empty());
        let text = run(&["check", "--probe", "p2p"]);
        let out = String::from_utf8_lossy(&text.stdout);
        assert!(out.starts_with("P2P probe"), "{out}");
        assert!(out.contains(&format!("skipped: {why}")), "{out}");
    } else {
        assert!(
            pairs["value"].is_array() || pairs["failed"].is_string(),
            "{probe:#}"
        );
    }
    // Without --probe, check never runs it.
    let v = json(&run(&["check", "--format", "json"]));
    assert!(v.get("p2p_probe").is_none(), "{v:#}");
}

#[test]
fn check_probe_p2p_refuses_a_recorded_host() {
    let o = run(&["check", "--probe", "p2p", "--demo"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--probe p2p measures this machine"), "{err}");
}
