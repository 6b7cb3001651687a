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

/// The allocator_ipc walk's pending question, if it stopped on one: (node, reason).
fn pending(v: &serde_json::Value) -> Option<(String, String)> {
    v["pending"].as_array()?.iter().find_map(|p| {
        (p["class"] == "allocator_ipc").then(|| {
            (
                p["node"].as_str().unwrap_or("").to_string(),
                p["reason"].as_str().unwrap_or("").to_string(),
            )
        })
    })
}

#[test]
fn an_unread_config_file_leaves_the_launch_settings_unknown() {
    // cfg.yaml is not given: TP may be set there, so the tool asks instead of "no TP".
    let launch = format!("{CRASH_ENV} vllm serve m --config cfg.yaml");
    let (_, id, v) = allocator_verdict(&["--launch", &launch]);
    assert_eq!(id, "", "no verdict without the config: {v}");
    let (node, reason) = pending(&v).unwrap_or_else(|| panic!("a question: {v}"));
    assert_eq!(node, "aipc_tp");
    assert!(
        reason.contains("set by --config cfg.yaml, not read (give it with --launch-with cfg.yaml)"),
        "{reason}"
    );
    // A setting the command line states itself is known: it wins over the file.
    let launch = format!("{CRASH_ENV} vllm serve m --config cfg.yaml -tp 2");
    let (_, _, v) = allocator_verdict(&["--launch", &launch]);
    let node = pending(&v).map(|p| p.0).unwrap_or_default();
    assert_ne!(node, "aipc_tp", "-tp 2 is on the command line: {v}");
}

#[test]
fn a_config_file_given_is_read_and_the_command_line_wins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("cfg.yaml");
    let cfg_s = cfg.to_str().expect("utf-8 path");
    std::fs::write(
        &cfg,
        "model: Qwen/Qwen3-8B\ntensor_parallel_size: 2\nenforce-eager: false\n",
    )
    .expect("write");
    let launch = format!("{CRASH_ENV} vllm serve --config {cfg_s}");
    let (code, id, _) = allocator_verdict(&["--launch", &launch, "--launch-with", cfg_s]);
    assert_eq!((code, id.as_str()), (Some(1), "allocator_ipc_will_crash"));
    // The command line's -tp 1 comes after the file's arguments, so it wins.
    let launch = format!("{CRASH_ENV} vllm serve m --config {cfg_s} -tp 1");
    let (code, id, _) = allocator_verdict(&["--launch", &launch, "--launch-with", cfg_s]);
    assert_eq!(
        (code, id.as_str()),
        (Some(0), ""),
        "TP=1 from the command line"
    );
    // A file's enforce_eager: true turns graphs off; the command line's --no-enforce-eager wins.
    std::fs::write(&cfg, "tensor-parallel-size: 2\nenforce_eager: true\n").expect("write");
    let launch = format!("{CRASH_ENV} vllm serve m --config {cfg_s}");
    let (_, id, _) = allocator_verdict(&["--launch", &launch, "--launch-with", cfg_s]);
    assert_eq!(id, "allocator_ipc_eager");
    let launch = format!("{CRASH_ENV} vllm serve m --config {cfg_s} --no-enforce-eager");
    let (code, id, _) = allocator_verdict(&["--launch", &launch, "--launch-with", cfg_s]);
    assert_eq!((code, id.as_str()), (Some(1), "allocator_ipc_will_crash"));
}

#[test]
fn a_config_file_that_is_not_a_mapping_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("cfg.yaml");
    let cfg_s = cfg.to_str().expect("utf-8 path");
    std::fs::write(&cfg, "- tensor_parallel_size\n- 2\n").expect("write");
    let launch = format!("vllm serve m --config {cfg_s}");
    let out = doctor(&[
        "check",
        "--snapshot",
        H200,
        "--launch",
        &launch,
        "--launch-with",
        cfg_s,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("cfg.yaml:1:1"), "{err}");
}

/// The demo's seed host: its shell sets `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
const SEED_HOST: &str = "assets/demo/seed_host.yaml";

fn allocator_line(args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["check", "--snapshot", SEED_HOST];
    all.extend_from_slice(args);
    let out = doctor(&all);
    let stdout = text(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("[allocator_ipc"))
        .unwrap_or_else(|| panic!("no allocator_ipc line:\n{stdout}\n{}", text(&out.stderr)))
        .to_string();
    (out.status.code(), line)
}

/// A systemd service starts from the manager's environment plus `Environment=` /
/// `EnvironmentFile=`, never the reporter's login shell: the shell's allocator variable does not
/// make a unit crash, the unit's own does.
#[test]
fn a_systemd_unit_is_not_diagnosed_with_the_login_shells_environment() {
    let dir = tempfile::tempdir().expect("temp dir");
    let unit = dir.path().join("vllm.service");
    std::fs::write(&unit, "[Service]\nExecStart=/usr/bin/vllm serve m -tp 2\n").expect("write");
    let unit = unit.display().to_string();
    let (code, line) = allocator_line(&["--launch-file", &unit]);
    assert!(!line.starts_with("[✗]"), "{line}");
    assert_eq!(code, Some(0), "{line}");
    // The same command from the shell inherits the variable and crashes.
    let (code, line) = allocator_line(&["--launch", "vllm serve m -tp 2"]);
    assert!(line.starts_with("[✗]"), "{line}");
    assert_eq!(code, Some(1));
    // The unit's own Environment= counts.
    let unit2 = dir.path().join("vllm2.service");
    std::fs::write(
        &unit2,
        "[Service]\nEnvironment=PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n\
         ExecStart=/usr/bin/vllm serve m -tp 2\n",
    )
    .expect("write");
    let (code, line) = allocator_line(&["--launch-file", &unit2.display().to_string()]);
    assert!(line.starts_with("[✗]"), "{line}");
    assert_eq!(code, Some(1));
    // `env.source` names whose environment it is.
    let out = doctor(&[
        "check",
        "--snapshot",
        SEED_HOST,
        "--launch-file",
        &unit,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let s = v.to_string();
    assert!(s.contains("the unit's environment"), "{s}");
}

/// `--tensor-parallel-size $TP`: the script's `TP=2` is followed; a TP from outside makes the
/// flag unknown and asked, never an input error (exit 2).
#[test]
fn a_flag_given_by_a_variable_is_followed_or_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let set = dir.path().join("set.sh");
    std::fs::write(
        &set,
        "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nTP=2\n\
         vllm serve m --tensor-parallel-size $TP\n",
    )
    .expect("write");
    let (code, line) = allocator_line(&["--launch-file", &set.display().to_string()]);
    assert!(line.starts_with("[✗]"), "TP=2 is followed: {line}");
    assert_eq!(code, Some(1));
    let outside = dir.path().join("outside.sh");
    std::fs::write(
        &outside,
        "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n\
         vllm serve m --tensor-parallel-size $TP\n",
    )
    .expect("write");
    let (code, line) = allocator_line(&["--launch-file", &outside.display().to_string()]);
    assert!(line.starts_with("[?]"), "asked: {line}");
    assert_ne!(code, Some(2), "{line}");
}

/// Bash's brace expansion makes several words of one (`m{,}` is `m m`): the tool does not model
/// it, so a vLLM command holding one is refused at its line and column instead of misread; a
/// `fi` / `done` that closes nothing makes bash stop with a syntax error, and is one too.
#[test]
fn brace_expansion_and_a_stray_closer_are_input_errors_with_their_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (script, place, what) in [
        ("vllm serve m{,} -tp 2\n", ":1:13:", "brace expansion"),
        (
            "export A=1\nvllm serve m --x {\"a\":1,\"b\":2}\n",
            ":2:18:",
            "brace expansion",
        ),
        (
            "vllm serve m -tp 2\nfi\n",
            ":2:1:",
            "`fi` ends or continues",
        ),
        (
            "vllm serve m -tp 2; done\n",
            ":1:21:",
            "`done` ends or continues",
        ),
    ] {
        let p = dir.path().join("serve.sh");
        std::fs::write(&p, script).expect("write");
        let file = p.to_str().expect("utf-8 path");
        for args in [
            vec!["check", "--snapshot", H200, "--launch-file", file],
            vec!["fix", "--launch-file", file, "--remedy", "deep_gemm_off"],
        ] {
            let out = doctor(&args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{script:?} {args:?}: {err}");
            assert!(
                out.stdout.is_empty(),
                "{script:?}: nothing printed on refusal"
            );
            assert!(
                err.contains(&format!("serve.sh{place}")) && err.contains(what),
                "{script:?} {args:?}: {err}"
            );
        }
    }
    // Not over-eager: quoted braces, `${A:-a,b}`, `{}` and compound commands that close.
    for fine in [
        "vllm serve m --x '{\"a\":1,\"b\":2}' -tp {}\n",
        "echo {a,b}\nif true; then vllm serve ${M:-a,b}; fi\n",
    ] {
        let p = dir.path().join("fine.sh");
        std::fs::write(&p, fine).expect("write");
        let out = doctor(&[
            "fix",
            "--launch-file",
            p.to_str().expect("utf-8 path"),
            "--remedy",
            "deep_gemm_off",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{fine:?}: {}",
            text(&out.stderr)
        );
    }
}
