//! The real binary on this (GPU-less) machine: `snapshot`, `check` with no input and
//! `probe ipc` run, say why NVML/CUDA are skipped, and exit with the documented codes.

use crate::support;

use std::process::Command;

fn doctor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
}

fn has_nvidia_driver() -> bool {
    std::path::Path::new("/proc/driver/nvidia/version").exists()
}

#[test]
fn snapshot_writes_a_loadable_file_and_never_overwrites() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("snap.yaml");
    let out = doctor()
        .args(["snapshot", "--no-python", "-o"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap = sm120_doctor::import::load_snapshot(&path).expect("loads");
    assert!(snap.env.value().is_some());
    if !has_nvidia_driver() {
        let r = snap.gpus.missing_reason().expect("no GPUs here");
        assert_eq!(r.code, sm120_doctor::snapshot::ReasonCode::NoDriver, "{r}");
    }
    // Again without --force: exit 2, file untouched.
    let before = std::fs::read(&path).expect("read");
    let out = doctor()
        .args(["snapshot", "--no-python", "-o"])
        .arg(&path)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(std::fs::read(&path).expect("read"), before);
    // With --force, JSON by extension.
    let json = dir.path().join("snap.json");
    std::fs::write(&json, "old").expect("write");
    let out = doctor()
        .args(["snapshot", "--no-python", "--force", "-o"])
        .arg(&json)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("read")).expect("json");
    assert_eq!(v["origin"], "live");
}

#[test]
fn bad_timeout_is_a_usage_error() {
    let out = doctor()
        .args(["snapshot", "--python-timeout", "-3"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_without_input_uses_this_host() {
    let out = doctor()
        .args(["check", "--format", "json"])
        .output()
        .expect("run");
    let code = out.status.code();
    assert!(code == Some(0) || code == Some(1), "{code:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let text = v.to_string();
    assert!(text.contains("live"), "{text}");
    if !has_nvidia_driver() {
        assert!(text.contains("NVML"), "NVML reason shown: {text}");
    }
}

#[test]
fn probe_without_gpu_is_skipped_with_reason() {
    if has_nvidia_driver() {
        support::skip_on_this_host("this machine has an NVIDIA driver, so the probe runs");
        return;
    }
    let out = doctor()
        .args(["probe", "ipc", "--native-only", "--format", "json"])
        .output()
        .expect("run");
    // 3: nothing was tested (not the 0 of a probe that ran and found nothing wrong).
    assert_eq!(out.status.code(), Some(3));
    let p: sm120_doctor::snapshot::IpcProbe =
        serde_json::from_slice(&out.stdout).expect("probe json");
    assert!(
        p.native
            .missing_reason()
            .is_some_and(|r| r.to_string().contains("libcuda"))
    );
    assert!(
        p.torch
            .missing_reason()
            .is_some_and(|r| r.to_string().contains("--native-only"))
    );
}

/// A `python3` (and `python`) first on PATH that only appends its arguments to `marker`.
fn fake_python_path(dir: &std::path::Path, marker: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).expect("mkdir bin");
    for name in ["python3", "python"] {
        let p = bin.join(name);
        let script = format!(
            "#!/bin/sh\necho \"$0 $*\" >> '{}'\nexit 1\n",
            marker.display()
        );
        std::fs::write(&p, script).expect("write fake python");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `check --no-python` (and `report --no-python`) run no interpreter and say the Python stack was
/// not collected ("not requested"), never that it is not installed. The same run without the flag
/// does run the fake python3, so the marker's absence is the flag's doing.
#[test]
fn check_and_report_no_python_run_no_python_and_say_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("python-ran");
    let path = fake_python_path(dir.path(), &marker);
    let live = |args: &[&str]| {
        doctor()
            .args(args)
            .env("PATH", &path)
            .env_remove("VIRTUAL_ENV")
            .env_remove("CONDA_PREFIX")
            .env("NO_COLOR", "1")
            .output()
            .expect("run")
    };
    let stdout = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();

    let control = live(&["check"]);
    assert!(
        matches!(control.status.code(), Some(0 | 1)),
        "{:?} {}",
        control.status.code(),
        String::from_utf8_lossy(&control.stderr)
    );
    assert!(
        marker.exists(),
        "without --no-python the fake python3 on PATH is run (else this test proves nothing)"
    );
    std::fs::remove_file(&marker).expect("remove marker");

    let text = live(&["check", "--no-python"]);
    assert!(
        matches!(text.status.code(), Some(0 | 1)),
        "{:?} {}",
        text.status.code(),
        String::from_utf8_lossy(&text.stderr)
    );
    let out = stdout(&text);
    assert!(
        out.contains("Python stack not collected (--no-python)"),
        "{out}"
    );
    assert!(!out.contains("not installed"), "{out}");
    // The JSON says it too, as a code a script can branch on.
    let json = live(&["check", "--no-python", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("check json");
    assert_eq!(
        v.pointer("/host/python/state"),
        Some(&"skipped".into()),
        "{v}"
    );
    assert_eq!(
        v.pointer("/host/python/code"),
        Some(&"not_requested".into()),
        "{v}"
    );
    let control_json = live(&["check", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&control_json.stdout).expect("check json");
    assert_ne!(
        v.pointer("/host/python/code"),
        Some(&"not_requested".into()),
        "{v}"
    );
    std::fs::remove_file(&marker).expect("the control run ran python");

    let report = live(&["report", "--no-python", "--format", "json"]);
    assert!(
        matches!(report.status.code(), Some(0)),
        "{:?} {}",
        report.status.code(),
        String::from_utf8_lossy(&report.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&report.stdout).expect("report json");
    let python = v.pointer("/snapshot/python").cloned().unwrap_or_default();
    assert!(
        python.to_string().contains("--no-python"),
        "the snapshot's Python stack says why it is missing: {python}"
    );
    assert!(
        !marker.exists(),
        "--no-python ran python: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );

    // It is a live-host option: with a recorded host it is refused, not ignored.
    let demo = live(&["check", "--demo", "--no-python"]);
    assert_eq!(demo.status.code(), Some(2), "{}", stdout(&demo));
    // The TUI takes it too, with the same refusal (clap's, before any terminal is touched).
    let tui = live(&["--demo", "--no-python"]);
    assert_eq!(tui.status.code(), Some(2), "{}", stdout(&tui));
    assert!(String::from_utf8_lossy(&tui.stderr).contains("cannot be used with '--no-python'"));
}
