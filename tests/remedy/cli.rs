//! End-to-end runs of `sm120-doctor fix` and `sm120-doctor patch-script`: output, exit codes,
//! and the rules about user files (never written without -o, never overwritten without --force).

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

fn doctor(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("binary runs")
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SEED: &str = "# seed\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512\nvllm serve Qwen/Qwen3.6-27B-FP8 \\\n  --tensor-parallel-size 2\n";

#[test]
fn fix_prints_the_rewritten_launch_and_notes() {
    let out = doctor(&[
        "fix",
        "--launch",
        "vllm serve m -tp 2",
        "--remedy",
        "enforce_eager",
        "--remedy",
        "deep_gemm_off",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert_eq!(
        s(&out.stdout),
        "VLLM_USE_DEEP_GEMM=0 vllm serve m -tp 2 --enforce-eager\n"
    );
    assert!(
        s(&out.stderr).contains("note: deep_gemm_off (limit): This turns DeepGEMM off everywhere"),
        "{}",
        s(&out.stderr)
    );
}

#[test]
fn fix_diff_format_and_the_users_file_stays_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("serve.sh");
    std::fs::write(&f, SEED).expect("write");
    let out = doctor(&[
        "fix",
        "--launch-file",
        f.to_str().expect("utf-8 path"),
        "--remedy",
        "drop_expandable_segments",
        "--format",
        "diff",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert_eq!(
        s(&out.stdout),
        "--- a/serve.sh\n+++ b/serve.sh\n@@ -1,4 +1,4 @@\n # seed\n-export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512\n+export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512\n vllm serve Qwen/Qwen3.6-27B-FP8 \\\n   --tensor-parallel-size 2\n"
    );
    assert_eq!(std::fs::read_to_string(&f).expect("read"), SEED);
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).expect("stat").permissions().mode() & 0o777
}

#[test]
fn output_file_needs_force_to_overwrite_and_is_written_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("serve.sh");
    std::fs::write(&f, SEED).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o750)).expect("chmod");
    }
    let fs = f.to_str().expect("utf-8 path");
    let new = dir.path().join("fixed.sh");
    let ns = new.to_str().expect("utf-8 path");

    let out = doctor(&[
        "fix",
        "--launch-file",
        fs,
        "--remedy",
        "enforce_eager",
        "-o",
        ns,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert_eq!(s(&out.stdout), "");
    let fixed = std::fs::read_to_string(&new).expect("read");
    assert_eq!(
        fixed,
        SEED.replace("size 2\n", "size 2 \\\n  --enforce-eager\n")
    );

    // In place, without --force: refused, file untouched.
    let out = doctor(&[
        "fix",
        "--launch-file",
        fs,
        "--remedy",
        "enforce_eager",
        "-o",
        fs,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("already exists; pass --force"),
        "{}",
        s(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&f).expect("read"), SEED);

    // With --force: replaced atomically, permissions kept, no temporary file left.
    let out = doctor(&[
        "fix",
        "--launch-file",
        fs,
        "--remedy",
        "enforce_eager",
        "-o",
        fs,
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert_eq!(std::fs::read_to_string(&f).expect("read"), fixed);
    #[cfg(unix)]
    assert_eq!(mode(&f), 0o750);
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 2);
}

#[test]
fn bad_input_is_exit_2_with_a_clear_message() {
    let out = doctor(&["fix", "--launch", "vllm serve m", "--remedy", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let e = s(&out.stderr);
    assert!(
        e.contains("unknown remedy \"nope\"") && e.contains("cudagraph_piecewise"),
        "{e}"
    );

    // Bash runs a continuation broken by a comment; the fix says what is lost, with the line.
    let out = doctor(&[
        "fix",
        "--launch",
        "vllm serve m \\\n# --enforce-eager\n -tp 2",
        "--remedy",
        "enforce_eager",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert!(
        s(&out.stderr).contains("warning: launch:3: `-tp 2` runs as a command of its own")
            && s(&out.stderr).contains("on line 2, a comment line follows a backslash"),
        "{}",
        s(&out.stderr)
    );
    let out = doctor(&[
        "fix",
        "--launch",
        "vllm serve \"$(\"",
        "--remedy",
        "enforce_eager",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("launch:1:13: `$(` is never closed"),
        "{}",
        s(&out.stderr)
    );

    let out = doctor(&[
        "fix",
        "--launch-file",
        "/nonexistent/serve.sh",
        "--remedy",
        "enforce_eager",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("/nonexistent/serve.sh"),
        "{}",
        s(&out.stderr)
    );

    let out = doctor(&["fix", "--remedy", "enforce_eager"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap requires --launch or --launch-file"
    );
}

#[test]
fn patch_script_writes_once_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("apply.sh");
    let ps = p.to_str().expect("utf-8 path");
    let out = doctor(&[
        "patch-script",
        "--pr",
        "43923",
        "--python",
        "/opt/venv/bin/python",
        "-o",
        ps,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    let text = std::fs::read_to_string(&p).expect("read");
    assert!(text.contains("PYTHON=/opt/venv/bin/python\n"), "{text}");
    #[cfg(unix)]
    assert_eq!(mode(&p), 0o755);

    std::fs::write(&p, "mine\n").expect("write");
    let out = doctor(&["patch-script", "--pr", "43923", "-o", ps]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&p).expect("read"), "mine\n");
    let out = doctor(&["patch-script", "--pr", "43923", "-o", ps, "--force"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        std::fs::read_to_string(&p)
            .expect("read")
            .starts_with("#!/usr/bin/env bash")
    );

    let out = doctor(&["patch-script", "--pr", "1", "-o", ps, "--force"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("no remedy in the knowledge base applies PR #1"),
        "{}",
        s(&out.stderr)
    );
}

/// Remedies are data: a remedy added to a knowledge-base directory works without code changes.
#[test]
fn a_new_remedy_in_a_kb_dir_is_applied_generically() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kb = dir.path().join("kb");
    std::fs::create_dir_all(&kb).expect("mkdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge");
    for e in std::fs::read_dir(&src).expect("knowledge/") {
        let p = e.expect("entry").path();
        std::fs::copy(&p, kb.join(p.file_name().expect("name"))).expect("copy");
    }
    let remedies = kb.join("remedies.yaml");
    let mut text = std::fs::read_to_string(&remedies).expect("read");
    text.push_str(
        "\n  - id: test_back_to_graphs\n    title: Test remedy\n    cost:\n      rank: 99\n      text: test\n    confidence: SUSPECTED\n    verified: test only\n    sources:\n      - https://example.invalid/test\n    edits:\n      - remove_flag:\n          flag: --enforce-eager\n      - unset_env:\n          name: VLLM_USE_DEEP_GEMM\n",
    );
    std::fs::write(&remedies, text).expect("write");
    let out = doctor(&[
        "fix",
        "--kb",
        kb.to_str().expect("utf-8 path"),
        "--launch",
        "export VLLM_USE_DEEP_GEMM=0\nvllm serve m \\\n  --enforce-eager \\\n  -tp 2",
        "--remedy",
        "test_back_to_graphs",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert_eq!(s(&out.stdout), "vllm serve m \\\n  -tp 2\n");
}

/// `fix` without `--remedy` applies the remedies of the fix plan `check` makes for the same
/// launch and host, says which, and leaves the launch file as it was.
#[test]
fn fix_without_remedy_applies_checks_plan() {
    let dir = tempfile::tempdir().expect("tmp");
    let f = dir.path().join("serve.sh");
    std::fs::write(&f, SEED).expect("write");
    let f = f.to_str().expect("utf8");
    let check = doctor(&["check", "--demo", "--launch-file", f, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&check.stdout).expect("check json");
    let planned: Vec<&str> = v["plan"]["remedies"]
        .as_array()
        .expect("plan remedies")
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    assert_eq!(
        planned,
        ["drop_expandable_segments", "deep_gemm_off"],
        "{v}"
    );

    let out = doctor(&["fix", "--demo", "--launch-file", f]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert!(
        s(&out.stderr).contains(
            "applying the fix plan's remedies for this launch (host: demo (the vLLM #47266 reporter's host)): drop_expandable_segments, deep_gemm_off"
        ),
        "{}",
        s(&out.stderr)
    );
    // The same output as naming the plan's remedies by hand.
    let mut by_hand = vec!["fix", "--launch-file", f];
    for id in &planned {
        by_hand.extend(["--remedy", id]);
    }
    let by_hand = doctor(&by_hand);
    assert_eq!(by_hand.status.code(), Some(0), "{}", s(&by_hand.stderr));
    assert_eq!(s(&out.stdout), s(&by_hand.stdout));
    assert!(
        s(&out.stdout).contains("export VLLM_USE_DEEP_GEMM=0"),
        "{}",
        s(&out.stdout)
    );
    assert!(
        !s(&out.stdout).contains("expandable_segments:True"),
        "{}",
        s(&out.stdout)
    );
    assert_eq!(std::fs::read_to_string(f).expect("read"), SEED);
}

/// With no remedy in the plan there is nothing to apply: a usage error (exit 2) that says so
/// and how to pick one, and nothing on stdout. Host options only choose the plan, so they
/// cannot be combined with --remedy.
#[test]
fn fix_without_remedy_and_nothing_planned_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let env = dir.path().join("env.txt");
    std::fs::write(
        &env,
        "PyTorch version: 2.11.0+cu130\nGPU models and configuration:\nGPU 0: NVIDIA GeForce RTX 5090\nCaching allocator config: N/A\n",
    )
    .expect("write");
    let env = env.to_str().expect("utf8");
    let out = doctor(&["fix", "--collect-env", env, "--launch", "vllm serve m"]);
    assert_eq!(out.status.code(), Some(2), "{}", s(&out.stdout));
    assert!(out.stdout.is_empty(), "{}", s(&out.stdout));
    let err = s(&out.stderr);
    assert!(
        err.contains("has no remedy")
            && err.contains("nothing to apply")
            && err.contains("give --remedy ID"),
        "{err}"
    );
    let out = doctor(&[
        "fix",
        "--demo",
        "--launch",
        "vllm serve m",
        "--remedy",
        "enforce_eager",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", s(&out.stderr));
    assert!(
        s(&out.stderr).contains("cannot be used with"),
        "{}",
        s(&out.stderr)
    );
}
