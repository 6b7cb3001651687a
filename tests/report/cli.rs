//! The `report` subcommand end to end: round trip through `check --snapshot report.json`,
//! output to stdout or a file, no overwrite without --force, bad input exits 2.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const H200: &str = "tests/fixtures/report/h200-torch-collect-env-expandable.txt";
const H200_LAUNCH: &str = "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2";

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run sm120-doctor")
}

fn check_json(args: &[&str]) -> (Value, Option<i32>) {
    let mut a = vec!["check", "--format", "json"];
    a.extend_from_slice(args);
    let out = run(&a);
    let v = serde_json::from_slice(&out.stdout).expect("check --format json");
    (v, out.status.code())
}

/// Fact sources name the snapshot's origin, which a replay prefixes with `snapshot:FILE`.
fn without_sources(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "source")
                .map(|(k, x)| (k.clone(), without_sources(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_sources).collect()),
        other => other.clone(),
    }
}

/// `check`'s findings, passed checks, pending questions, walks and log matches.
fn same_diagnosis(a: &Value, b: &Value) {
    for key in [
        "findings",
        "passed",
        "not_checked",
        "not_applicable",
        "pending",
        "log_matches",
    ] {
        assert_eq!(a[key], b[key], "{key} differs after replay");
    }
    assert_eq!(
        without_sources(&a["walks"]),
        without_sources(&b["walks"]),
        "walks differ after replay"
    );
    assert!(
        !a["findings"].as_array().expect("findings").is_empty(),
        "the round trip should carry at least one finding"
    );
}

fn round_trip(host_args: &[&str], dir: &Path) {
    let report = dir.join("report.json");
    let report_s = report.to_str().expect("utf-8 path");
    let mut a = vec!["report", "--format", "json", "-o", report_s];
    a.extend_from_slice(host_args);
    let out = run(&a);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "with -o nothing goes to stdout");
    let (direct, rc1) = check_json(host_args);
    let (replayed, rc2) = check_json(&["--snapshot", report_s]);
    same_diagnosis(&direct, &replayed);
    assert_eq!(rc1, rc2);
}

#[test]
fn demo_round_trips_through_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    round_trip(&["--demo"], dir.path());
}

#[test]
fn h200_round_trips_through_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The paste lists one GPU for a TP=2 launch: the pairs and the whole-host question are
    // asked, so the round trip answers them.
    round_trip(
        &[
            "--collect-env",
            H200,
            "--launch",
            H200_LAUNCH,
            "--answer",
            "lg_whole_host=no",
            "--answer",
            "aipc_p2p=yes",
        ],
        dir.path(),
    );
}

#[test]
fn markdown_goes_to_stdout_by_default() {
    let out = run(&["report", "--demo"]);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8(out.stdout).expect("utf-8");
    assert!(s.starts_with("## sm120-doctor report\n"), "{s}");
    let t = run(&["report", "--demo", "--format", "text"]);
    assert!(String::from_utf8_lossy(&t.stdout).starts_with("sm120-doctor report\n"));
}

#[test]
fn never_overwrites_without_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("r.md");
    std::fs::write(&p, "mine").expect("write");
    let ps = p.to_str().expect("utf-8");
    let out = run(&["report", "--demo", "-o", ps]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("r.md") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&p).expect("read"), "mine");
    let out = run(&["report", "--demo", "-o", ps, "--force"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&p)
            .expect("read")
            .starts_with("## sm120-doctor report")
    );
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let out = run(&["report", "--demo", "--remedy", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--remedy nope"));
    let out = run(&["report", "--demo", "--force"]);
    assert_eq!(out.status.code(), Some(2), "--force needs -o");
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"snapshot": {"schema_version": 1, "origin": "x"}, "findings": [], "answers": {"no_such_node": "yes"}}"#)
        .expect("write");
    let out = run(&["report", "--snapshot", bad.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_node"));
}

#[test]
fn answers_travel_with_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let answered = [
        "--collect-env",
        H200,
        // The paste's allocator config is its shell's, not the engine's: asked too.
        "--answer",
        "aipc_expandable=yes",
        "--answer",
        "aipc_tp=yes",
        "--answer",
        "aipc_tp_size=yes",
        "--answer",
        "aipc_car_flag=yes",
        "--answer",
        "aipc_graphs=yes",
        // One GPU in the paste: no pair to check, so the topology and P2P are asked too.
        "--answer",
        "aipc_topology=yes",
        "--answer",
        "aipc_p2p=yes",
        "--answer",
        "ow_orphans=no",
    ];
    round_trip(&answered, dir.path());
    // Guard: without the answer the walk waits, so the replay really used the stored answer.
    let (unanswered, _) = check_json(&["--collect-env", H200]);
    let (replayed, _) = check_json(&[
        "--snapshot",
        dir.path().join("report.json").to_str().expect("utf-8"),
    ]);
    assert_ne!(unanswered["pending"], replayed["pending"]);
    assert_eq!(replayed["pending"].as_array().map(Vec::len), Some(0));
}

#[test]
fn an_onboarding_report_replays_with_the_checklist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("onboard.json");
    let rs = report.to_str().expect("utf-8");
    let out = run(&[
        "report",
        "--demo",
        "--onboard",
        "--format",
        "json",
        "-o",
        rs,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("read")).expect("json");
    assert_eq!(v["mode"], "all");
    let (direct, _) = check_json(&["--demo", "--onboard"]);
    let (replayed, _) = check_json(&["--snapshot", rs]);
    same_diagnosis(&direct, &replayed);
}
