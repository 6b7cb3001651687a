//! Which environment the vLLM engine actually sees: a container's own, a file the launch reads
//! but that was not given, shell expansions, and the allocator variable a plan must edit.
//! Inputs are the adversarial review's cases, rebuilt here in a temporary folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SEED: &str = include_str!("../assets/demo/seed_host.yaml");
const SEED_LINE: &str = "      PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n";

/// A fresh folder for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("sm120-env-in-effect-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The seed host (torch 2.11, 2 GPUs with P2P) with its allocator line replaced by `line`
/// (`""`: no allocator variable on the host).
fn host(dir: &Path, line: &str) -> String {
    assert!(
        SEED.contains(SEED_LINE),
        "the seed host's allocator line moved"
    );
    let text = SEED.replace(SEED_LINE, line);
    let path = dir.join("host.yaml");
    std::fs::write(&path, text).expect("write host");
    path.display().to_string()
}

const HOST_EXPANDABLE: &str = SEED_LINE;
const HOST_CLEAN: &str = "";
const HOST_EMPTY_CUDA: &str = "      PYTORCH_CUDA_ALLOC_CONF: \"\"\n";
const HOST_FALSE: &str = "      PYTORCH_CUDA_ALLOC_CONF: expandable_segments:False\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write file");
    path.display().to_string()
}

fn check(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .current_dir(dir)
        .arg("check")
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The allocator_ipc verdict line of `check`'s text output.
fn verdict(o: &Output) -> String {
    let out = stdout(o);
    out.lines()
        .find(|l| l.starts_with('[') && l.contains("[allocator_ipc"))
        .unwrap_or_else(|| panic!("no allocator_ipc verdict in:\n{out}"))
        .to_string()
}

fn assert_crash(o: &Output, what: &str) {
    let v = verdict(o);
    assert!(v.starts_with("[✗]"), "{what}: expected the crash, got {v}");
    assert_eq!(o.status.code(), Some(1), "{what}: {v}");
}

/// Not an all-clear: the tool asks (or refuses), never says "safe".
fn assert_asks(o: &Output, what: &str) {
    let out = stdout(o);
    let v = verdict(o);
    assert!(
        !v.starts_with("[✓]") && !v.starts_with("[i]"),
        "{what}: expected a question, got {v}\n{out}"
    );
    assert!(
        v.starts_with("[?]"),
        "{what}: expected a question, got {v}\n{out}"
    );
}

fn plan_launch(o: &Output) -> String {
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json output");
    json["plan"]["launch"]
        .as_str()
        .unwrap_or_else(|| panic!("no plan.launch in {json}"))
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// D8: the plan edits the variable in effect.

#[test]
fn plan_sets_the_cuda_variable_when_the_host_one_wins_over_the_launch_generic_one() {
    let dir = scratch("d8");
    let h = host(&dir, HOST_EXPANDABLE);
    let launch = "PYTORCH_ALLOC_CONF=expandable_segments:True vllm serve m -tp 2";
    let o = check(&dir, &["--snapshot", &h, "--launch", launch]);
    assert_crash(&o, "host CUDA var wins over the launch's generic one");
    let o = check(
        &dir,
        &["--snapshot", &h, "--launch", launch, "--format", "json"],
    );
    let patched = plan_launch(&o);
    assert!(
        patched.contains("PYTORCH_CUDA_ALLOC_CONF="),
        "the plan must set the variable in effect: {patched}"
    );
    // Round trip: the plan's command, checked again on the same host, no longer crashes.
    let again = check(&dir, &["--snapshot", &h, "--launch", &patched]);
    let v = verdict(&again);
    // `[i] … masked by PYTORCH_CUDA_ALLOC_CONF` is right: the launch's own variable still says
    // True, but the one the plan set wins over it.
    assert!(
        v.starts_with("[✓]") || v.starts_with("[i]"),
        "re-check of {patched:?}: {v}"
    );
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}
