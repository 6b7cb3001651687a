//! Which environment the vLLM engine actually sees: a container's own, a file the launch reads
//! but that was not given, shell expansions, and the allocator variable a plan must edit.
//! Inputs are the adversarial review's cases, rebuilt here in a temporary folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SEED: &str = include_str!("../../assets/demo/seed_host.yaml");
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
        .args(["check", "-v"])
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

// ---------------------------------------------------------------------------------------------
// D1: a container does not inherit the host's environment.

#[test]
fn docker_run_does_not_see_the_host_allocator_variable() {
    let dir = scratch("d1-docker");
    // The host's empty PYTORCH_CUDA_ALLOC_CONF would mask the container's PYTORCH_ALLOC_CONF
    // if it reached the container; it does not.
    for line in [HOST_EMPTY_CUDA, HOST_FALSE] {
        let h = host(&dir, line);
        let o = check(
            &dir,
            &[
                "--snapshot",
                &h,
                "--launch",
                "docker run --gpus all -e PYTORCH_ALLOC_CONF=expandable_segments:True \
                 vllm/vllm-openai --model m -tp 2",
            ],
        );
        assert_crash(
            &o,
            "docker -e PYTORCH_ALLOC_CONF with a masking host variable",
        );
    }
    // The reverse: the host's expandable_segments:True does not reach a container without -e.
    let h = host(&dir, HOST_EXPANDABLE);
    let plain = "docker run --gpus all vllm/vllm-openai --model m -tp 2";
    let o = check(&dir, &["--snapshot", &h, "--launch", plain]);
    let v = verdict(&o);
    assert!(
        v.starts_with("[✓]"),
        "no -e: the container has no allocator variable: {v}"
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // The image assumption is stated where the fact comes from.
    let o = check(
        &dir,
        &["--snapshot", &h, "--launch", plain, "--format", "json"],
    );
    assert!(
        stdout(&o).contains("image is assumed to set no allocator variable"),
        "{}",
        stdout(&o)
    );
    // `-e NAME` without a value passes the host's value on.
    let o = check(
        &dir,
        &[
            "--snapshot",
            &h,
            "--launch",
            "docker run --gpus all -e PYTORCH_CUDA_ALLOC_CONF vllm/vllm-openai --model m -tp 2",
        ],
    );
    assert_crash(&o, "docker -e NAME passes the host's value");
}

#[test]
fn kubernetes_and_compose_containers_do_not_see_the_host_environment() {
    let dir = scratch("d1-k8s");
    let pod = write(
        &dir,
        "k8s5.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n      args: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n      env:\n        - {name: PYTORCH_ALLOC_CONF, value: \"expandable_segments:True\"}\n",
    );
    for line in [HOST_EMPTY_CUDA, HOST_FALSE] {
        let h = host(&dir, line);
        let o = check(&dir, &["--snapshot", &h, "--launch-file", &pod]);
        assert_crash(
            &o,
            "k8s env PYTORCH_ALLOC_CONF with a masking host variable",
        );
    }
    // compose `environment: [NAME]` takes the host's value.
    let compose = write(
        &dir,
        "compose3.yaml",
        "services:\n  vllm:\n    image: vllm/vllm-openai:latest\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
    );
    let h = host(&dir, HOST_EXPANDABLE);
    assert_crash(
        &check(&dir, &["--snapshot", &h, "--launch-file", &compose]),
        "compose environment: [NAME] passes the host's value",
    );
    let h = host(&dir, HOST_CLEAN);
    let v = verdict(&check(&dir, &["--snapshot", &h, "--launch-file", &compose]));
    assert!(v.starts_with("[✓]"), "host without the variable: {v}");
}

// ---------------------------------------------------------------------------------------------
// D2: a file the launch reads but that was not given leaves the allocator config unknown.

/// (main file, its text, the file it reads, that file's text)
fn unread_cases() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    let exp = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n";
    vec![
        (
            "run.sh",
            "#!/bin/bash\nsource ./set_env.sh\nvllm serve m --tensor-parallel-size 2\n",
            "set_env.sh",
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n",
        ),
        (
            "seta.sh",
            "set -a\nsource ./vars.env\nset +a\nvllm serve m -tp 2\n",
            "vars.env",
            exp,
        ),
        (
            "compose.yaml",
            "services:\n  vllm:\n    image: vllm/vllm-openai:latest\n    env_file: vllm.env\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
            "vllm.env",
            exp,
        ),
        (
            "compose2.yaml",
            "services:\n  vllm:\n    image: vllm/vllm-openai:latest\n    environment:\n      PYTORCH_CUDA_ALLOC_CONF: ${ALLOC}\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
            ".env",
            "ALLOC=expandable_segments:True\n",
        ),
        (
            "unit.service",
            "[Service]\nEnvironmentFile=/etc/default/vllm\nExecStart=/usr/bin/vllm serve m --tensor-parallel-size 2\n",
            "/etc/default/vllm",
            exp,
        ),
    ]
}

#[test]
fn an_unread_sourced_or_env_file_makes_the_tool_ask_not_clear() {
    let dir = scratch("d2");
    let h = host(&dir, HOST_CLEAN);
    for (main, text, read, read_text) in unread_cases() {
        let m = write(&dir, main, text);
        let o = check(&dir, &["--snapshot", &h, "--launch-file", &m]);
        assert_asks(&o, main);
        assert_eq!(o.status.code(), Some(0), "{main}: a question, not an error");
        let out = stdout(&o);
        assert!(
            out.contains(&format!("--launch-with {read}"))
                || out.contains(&format!("--launch-with ./{read}")),
            "{main}: the reason names the file and the flag:\n{out}"
        );
        // With the file given, it is read: the crash.
        let local = read.rsplit('/').next().unwrap_or(read);
        let r = write(&dir, local, read_text);
        let with = if read.starts_with('/') {
            // Given under its own name: write it where the unit says, relative to the folder.
            let p = dir.join(read.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, read_text).expect("write");
            p.display().to_string()
        } else {
            r
        };
        let o = check(
            &dir,
            &[
                "--snapshot",
                &h,
                "--launch-file",
                &m,
                "--launch-with",
                &with,
            ],
        );
        assert_crash(&o, &format!("{main} with {read} given"));
    }
}

#[test]
fn kubernetes_env_from_and_docker_env_file_make_the_tool_ask() {
    let dir = scratch("d2-k8s");
    let h = host(&dir, HOST_CLEAN);
    let m = write(
        &dir,
        "k8s.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:latest\n          args: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n          envFrom:\n            - configMapRef: {name: vllm-env}\n",
    );
    let o = check(&dir, &["--snapshot", &h, "--launch-file", &m]);
    assert_asks(&o, "k8s envFrom");
    assert!(
        stdout(&o).contains("envFrom configMapRef vllm-env"),
        "{}",
        stdout(&o)
    );
    let o = check(
        &dir,
        &[
            "--snapshot",
            &h,
            "--launch",
            "docker run --gpus all --env-file docker.env vllm/vllm-openai:latest --model m -tp 2",
        ],
    );
    assert_asks(&o, "docker --env-file");
    assert!(
        stdout(&o).contains("--launch-with docker.env"),
        "{}",
        stdout(&o)
    );
    // An explicit -e after the unread file settles the variable it sets.
    let o = check(
        &dir,
        &[
            "--snapshot",
            &h,
            "--launch",
            "docker run --gpus all --env-file docker.env -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
             vllm/vllm-openai:latest --model m -tp 2",
        ],
    );
    assert_crash(&o, "-e wins over --env-file");
    // A script that sets the variable after sourcing the unread file: known.
    let s = write(
        &dir,
        "after.sh",
        "source ./set_env.sh\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nvllm serve m -tp 2\n",
    );
    assert_crash(
        &check(&dir, &["--snapshot", &h, "--launch-file", &s]),
        "set after the unread file",
    );
}

// ---------------------------------------------------------------------------------------------
// D3: shell expansions are evaluated as bash would, or are unknown.

#[test]
fn expansions_are_evaluated_or_unknown_never_literal() {
    let dir = scratch("d3");
    let clean = host(&dir, HOST_CLEAN);
    // `$ARGS` may hold any flags: TP is unknown, so the tool asks.
    let a = write(
        &dir,
        "argsvar.sh",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nARGS=\"-tp 2\"\nvllm serve m $ARGS\n",
    );
    let o = check(&dir, &["--snapshot", &clean, "--launch-file", &a]);
    assert_asks(&o, "$ARGS");
    assert!(stdout(&o).contains("$ARGS"), "{}", stdout(&o));
    // `${VAR:-default}` with VAR unset on the host: bash gives the default.
    let d = write(
        &dir,
        "default.sh",
        "export PYTORCH_CUDA_ALLOC_CONF=\"${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\"\nvllm serve m -tp 2\n",
    );
    assert_crash(
        &check(&dir, &["--snapshot", &clean, "--launch-file", &d]),
        "${VAR:-default}, VAR unset",
    );
    // ... and the host's value when it is set and not empty.
    let f = host(&dir, HOST_FALSE);
    let v = verdict(&check(&dir, &["--snapshot", &f, "--launch-file", &d]));
    assert!(
        v.starts_with("[✓]"),
        "${{VAR:-default}}, VAR=False on the host: {v}"
    );
    let e = host(&dir, HOST_EMPTY_CUDA);
    assert_crash(
        &check(&dir, &["--snapshot", &e, "--launch-file", &d]),
        "${VAR:-default}, VAR empty on the host",
    );
    // `$(…)`: unknown.
    let c = write(
        &dir,
        "cmdsub.sh",
        "export PYTORCH_CUDA_ALLOC_CONF=$(echo expandable_segments:True)\nvllm serve m -tp 2\n",
    );
    let o = check(&dir, &["--snapshot", &clean, "--launch-file", &c]);
    assert_asks(&o, "$(…)");
    assert!(
        stdout(&o).contains("command substitution"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn kubernetes_value_from_is_unknown_and_a_sh_c_export_is_read() {
    let dir = scratch("d3-k8s");
    let clean = host(&dir, HOST_CLEAN);
    let vf = write(
        &dir,
        "k8s3.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n      args: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n      env:\n        - name: PYTORCH_CUDA_ALLOC_CONF\n          valueFrom: {configMapKeyRef: {name: x, key: y}}\n",
    );
    let o = check(&dir, &["--snapshot", &clean, "--launch-file", &vf]);
    assert_asks(&o, "valueFrom");
    assert!(stdout(&o).contains("valueFrom"), "{}", stdout(&o));
    let shc = write(
        &dir,
        "k8s2.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n      command: [\"/bin/sh\", \"-c\"]\n      args: [\"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True && vllm serve m -tp 2\"]\n",
    );
    assert_crash(
        &check(&dir, &["--snapshot", &clean, "--launch-file", &shc]),
        "export inside sh -c",
    );
}

#[test]
fn a_variable_the_launch_unsets_does_not_come_from_the_host() {
    let dir = scratch("unset");
    let h = host(&dir, HOST_EXPANDABLE);
    for launch in [
        "env -u PYTORCH_CUDA_ALLOC_CONF vllm serve m -tp 2",
        "unset PYTORCH_CUDA_ALLOC_CONF; vllm serve m -tp 2",
    ] {
        let o = check(&dir, &["--snapshot", &h, "--launch", launch]);
        let v = verdict(&o);
        assert!(v.starts_with("[✓]"), "{launch}: {v}");
        assert_eq!(o.status.code(), Some(0), "{launch}");
    }
}
