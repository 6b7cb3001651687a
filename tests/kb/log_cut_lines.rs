//! A log line longer than the reader's cap is cut with a note; the note is not log text and
//! matches no signature (review D11: every cut line matched the SM12x GPU context, because the
//! note names the tool, "sm120-doctor").

use std::process::Command;

#[test]
fn a_cut_line_of_filler_matches_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("x.log");
    std::fs::write(&log, format!("{}\n", "x".repeat(70_000))).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(["classify", "--format", "json", "--log"])
        .arg(&log)
        .output()
        .expect("binary runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let matches = v["matches"].as_array().expect("matches");
    assert!(
        matches.is_empty(),
        "{}",
        serde_json::to_string_pretty(&matches).unwrap_or_default()
    );
}

#[test]
fn a_cut_line_still_matches_on_its_kept_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("gpu.log");
    // The GPU is named in the first 64 KiB; the rest of the line is cut.
    let line = format!(
        "GPU 0: NVIDIA RTX PRO 6000 Blackwell Workstation Edition {}\n",
        "x".repeat(70_000)
    );
    std::fs::write(&log, line).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(["classify", "--format", "json", "--log"])
        .arg(&log)
        .output()
        .expect("binary runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        v["matches"]
            .as_array()
            .expect("matches")
            .iter()
            .any(|m| m["signature"] == "ctx_gpu_sm12x"),
        "{v}"
    );
}
