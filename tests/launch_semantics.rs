//! How vLLM and docker read a launch's words, end to end through `check` and `fix`: argparse's
//! last-one-wins for `--X` / `--no-X`, pflag's short forms of docker's `-e`, and vLLM's
//! `--config FILE` (found by the adversarial review: D4, D5, D6).

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");
/// Two H200s with P2P, torch 2.11: TP=2 with expandable_segments:True crashes there.
const H200: &str = "tests/fixtures/h200-live-2026-11-30/snapshot.yaml";

fn doctor(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `check --format json` on the H200 capture: (exit code, allocator_ipc finding id or "").
fn allocator_verdict(extra: &[&str]) -> (Option<i32>, String, serde_json::Value) {
    let mut args = vec!["check", "--snapshot", H200, "--format", "json"];
    args.extend_from_slice(extra);
    let out = doctor(&args);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{extra:?}: {e}\n{}", text(&out.stderr)));
    let id = v["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["class"] == "allocator_ipc"))
        .and_then(|f| f["id"].as_str())
        .unwrap_or("")
        .to_string();
    (out.status.code(), id, v)
}

const CRASH_ENV: &str = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";

#[test]
fn a_later_no_flag_undoes_the_flag() {
    for tail in [
        "-tp 2 --disable-custom-all-reduce --no-disable-custom-all-reduce",
        "-tp 2 --enforce-eager --no-enforce-eager",
        "-tp 2 --enforce-eager=true --no-enforce-eager",
    ] {
        let launch = format!("{CRASH_ENV} vllm serve m {tail}");
        let (code, id, _) = allocator_verdict(&["--launch", &launch]);
        assert_eq!(id, "allocator_ipc_will_crash", "{tail}");
        assert_eq!(code, Some(1), "{tail}");
    }
    // And the other way round: the later positive form wins.
    let launch = format!("{CRASH_ENV} vllm serve m -tp 2 --no-enforce-eager --enforce-eager");
    let (code, id, _) = allocator_verdict(&["--launch", &launch]);
    assert_eq!((code, id.as_str()), (Some(0), "allocator_ipc_eager"));
}

#[test]
fn fix_turns_the_winning_no_flag_around() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("serve.sh");
    std::fs::write(
        &f,
        format!("{CRASH_ENV} vllm serve m -tp 2 --disable-custom-all-reduce --no-disable-custom-all-reduce\n"),
    )
    .expect("write");
    let out = doctor(&[
        "fix",
        "--launch-file",
        f.to_str().expect("utf-8 path"),
        "--remedy",
        "disable_custom_all_reduce",
    ]);
    let fixed = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        fixed
            .trim_end()
            .ends_with("--disable-custom-all-reduce --disable-custom-all-reduce"),
        "{fixed}"
    );
    let (code, id, _) = allocator_verdict(&["--launch", fixed.trim()]);
    assert_eq!((code, id.as_str()), (Some(0), ""), "{fixed}");
}

#[test]
fn docker_e_with_equals_reaches_the_container() {
    for form in ["-e=", "-e", "-de="] {
        let launch = format!(
            "docker run --gpus all {form}{CRASH_ENV} vllm/vllm-openai:latest --model m -tp 2"
        );
        let (code, id, _) = allocator_verdict(&["--launch", &launch]);
        assert_eq!(
            (code, id.as_str()),
            (Some(1), "allocator_ipc_will_crash"),
            "{launch}"
        );
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("run.sh");
    std::fs::write(
        &f,
        format!("docker run --gpus all -e={CRASH_ENV} vllm/vllm-openai:latest --model m -tp 2\n"),
    )
    .expect("write");
    let out = doctor(&[
        "fix",
        "--launch-file",
        f.to_str().expect("utf-8 path"),
        "--remedy",
        "drop_expandable_segments",
    ]);
    let fixed = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        fixed.contains("-e=PYTORCH_CUDA_ALLOC_CONF='' vllm/vllm-openai"),
        "{fixed}"
    );
}
