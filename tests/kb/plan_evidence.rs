//! Measured inputs beat typed answers, end to end (a snapshot, a launch, a log and the
//! probe each contradict an answer, and `check` and its JSON show the input winning and the
//! disagreement); the demo's fix plan drops expandable_segments and turns the DeepGEMM warmup
//! off in one command, run under stub `vllm` / `docker` programs in real bash; conflicting
//! remedies are refused with the reason; "all pairs" over one GPU is no evidence.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const CE_2GPU: &str = "tests/fixtures/tui/h200x2-device-collect-env-topo.txt";
const CE_1GPU: &str = "tests/fixtures/report/h200-torch-collect-env-expandable.txt";
const SNAP_SM120: &str = "tests/fixtures/kb/snapshots/sm120_ws2.yaml";
const SNAP_PROBE: &str = "tests/fixtures/h200-live-2026-11-30/snapshot-probe.yaml";
const TP2_EXPANDABLE: &str =
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve m --tensor-parallel-size 2";

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run sm120-doctor")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn check_text(args: &[&str]) -> (String, Option<i32>) {
    let mut a = vec!["check", "-v"];
    a.extend_from_slice(args);
    let o = run(&a);
    (stdout(&o), o.status.code())
}

fn check_json(args: &[&str]) -> Value {
    let mut a = vec!["check", "--format", "json"];
    a.extend_from_slice(args);
    let o = run(&a);
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)))
}

/// The step of `node` in the walks of a `check --format json`.
fn step<'a>(v: &'a Value, node: &str) -> &'a Value {
    v["walks"]
        .as_array()
        .expect("walks")
        .iter()
        .flat_map(|w| w["steps"].as_array().expect("steps"))
        .find(|s| s["node"] == node)
        .unwrap_or_else(|| panic!("no step {node}: {:#}", v["walks"]))
}

fn finding<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no finding {id}: {:#}", v["findings"]))
}

/// The input won: the step took the input's answer, set the typed one aside as contradicted,
/// and the note names what the input says.
fn input_wins(v: &Value, node: &str, answer: &str, says: &str) {
    let s = step(v, node);
    assert_eq!(s["answer"], answer, "{s:#}");
    assert_eq!(s["basis"], "measured", "{s:#}");
    assert_eq!(s["by"], "auto", "{s:#}");
    let t = &s["typed_answer"];
    assert_eq!(t["contradicted"], true, "{s:#}");
    let note = t["note"].as_str().expect("note");
    assert!(note.starts_with("you answered "), "{note}");
    assert!(note.contains(says), "{note}");
}

#[test]
fn a_snapshot_beats_a_typed_answer() {
    let args = [
        "--snapshot",
        SNAP_SM120,
        "--launch",
        "vllm serve Qwen/Qwen3.6-27B-FP8 -tp 2",
        "--answer",
        "dg_sm12x=no",
    ];
    let v = check_json(&args);
    input_wins(&v, "dg_sm12x", "yes", "GPUs says gpu.any_sm12x = yes");
    let f = finding(&v, "deepgemm_will_crash");
    assert_eq!(f["contradicted"].as_array().map(Vec::len), Some(1), "{f:#}");
    let (text, rc) = check_text(&args);
    assert_eq!(rc, Some(1), "{text}");
    assert!(
        text.contains("! answer set aside, the input wins: you answered no; snapshot ")
            && text.contains("GPUs says gpu.any_sm12x = yes"),
        "{text}"
    );
    assert!(!text.contains("No SM12x GPU"), "{text}");
}

#[test]
fn a_launch_beats_a_typed_answer() {
    // The issue's case: "TP > 1?" answered no, then a TP=2 launch.
    let args = [
        "--collect-env",
        CE_2GPU,
        "--launch",
        TP2_EXPANDABLE,
        "--answer",
        "aipc_tp=no",
    ];
    let v = check_json(&args);
    input_wins(
        &v,
        "aipc_tp",
        "yes",
        "launch command (--launch) says launch.tp = 2",
    );
    let f = finding(&v, "allocator_ipc_will_crash");
    assert_eq!(f["match"], "assumed", "the probe did not run: {f:#}");
    assert_eq!(f["answered"], Value::Array(vec![]), "{f:#}");
    let (text, rc) = check_text(&args);
    assert_eq!(rc, Some(1), "{text}");
    assert!(
        text.contains("you answered no; launch command (--launch) says launch.tp = 2"),
        "{text}"
    );
    assert!(!text.contains("No tensor parallelism"), "{text}");
    // The verdict waits for the probe: "would crash if", not "will crash".
    assert!(
        text.contains("This launch would crash at CUDA graph capture if")
            && text.contains("matched: assumed (the allocator/IPC probe did not run)"),
        "{text}"
    );
}

#[test]
fn a_log_beats_a_typed_answer() {
    // The issue's case: the demo's log shows the crash; typed answers say otherwise.
    let args = [
        "--demo",
        "--answer",
        "aipc_crash_seen=no",
        "--answer",
        "aipc_expandable=no",
    ];
    let v = check_json(&args);
    input_wins(
        &v,
        "aipc_crash_seen",
        "yes",
        "demo:seed_crash.log:5 says log(car_invalid_argument) = yes",
    );
    let f = finding(&v, "allocator_ipc");
    assert_eq!(f["match"], "measured", "{f:#}");
    let (text, rc) = check_text(&args);
    assert_eq!(rc, Some(1), "{text}");
    assert!(
        text.contains("Custom all-reduce crashed on expandable_segments memory"),
        "{text}"
    );
    assert!(!text.contains("no expandable_segments:True"), "{text}");
}

#[test]
fn the_probe_beats_a_typed_answer() {
    let args = [
        "--snapshot",
        SNAP_PROBE,
        "--launch",
        TP2_EXPANDABLE,
        "--answer",
        "aipc_probe_confirms=no",
    ];
    let v = check_json(&args);
    input_wins(
        &v,
        "aipc_probe_confirms",
        "yes",
        "allocator/IPC probe on this host says probe.ipc_expandable_ok = no",
    );
    let f = finding(&v, "allocator_ipc_confirmed_on_host");
    assert_eq!(f["match"], "measured", "{f:#}");
    let (text, _) = check_text(&args);
    assert!(
        text.contains("This launch will crash at CUDA graph capture; the IPC probe confirmed")
            && text.contains("CONFIRMED upstream · matched: measured"),
        "{text}"
    );
}

#[test]
fn an_answer_stays_where_no_input_decides() {
    // No launch: TP and the rest are the user's to answer, and the finding says it rests on
    // those answers. The paste's allocator config is the environment of the shell that ran
    // collect-env, not the engine's, so it decides nothing: the typed answer stands.
    let answers = [
        "aipc_tp=yes",
        "aipc_tp_size=yes",
        "aipc_car_flag=yes",
        "aipc_topology=yes",
        "aipc_p2p=yes",
        "aipc_graphs=yes",
    ];
    let args_with = |expandable: &str| {
        let mut a = vec!["--collect-env".to_string(), CE_1GPU.to_string()];
        for x in std::iter::once(format!("aipc_expandable={expandable}"))
            .chain(answers.iter().map(|s| s.to_string()))
        {
            a.push("--answer".into());
            a.push(x);
        }
        a
    };
    let no = args_with("no");
    let no: Vec<&str> = no.iter().map(String::as_str).collect();
    let v = check_json(&no);
    let s = step(&v, "aipc_expandable");
    assert_eq!(
        (s["answer"].as_str(), s["by"].as_str(), s["basis"].as_str()),
        (Some("no"), Some("user"), Some("answered")),
        "the paste's expandable_segments:True does not set the answer aside: {s:#}"
    );
    assert!(
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .all(|f| f["id"] != "allocator_ipc_will_crash"),
        "{:#}",
        v["findings"]
    );
    // Unanswered, the walk asks it, and says the paste is not the engine's environment.
    let v = check_json(&["--collect-env", CE_1GPU]);
    let pending = v["pending"].as_array().expect("pending");
    assert!(
        pending.iter().any(|p| p["node"] == "aipc_expandable"
            && p["reason"]
                .as_str()
                .is_some_and(|r| r.contains("not the engine's"))),
        "{pending:#?}"
    );
    let yes = args_with("yes");
    let yes: Vec<&str> = yes.iter().map(String::as_str).collect();
    let v = check_json(&yes);
    let s = step(&v, "aipc_tp");
    assert_eq!(
        (s["by"].as_str(), s["basis"].as_str()),
        (Some("user"), Some("answered"))
    );
    let f = finding(&v, "allocator_ipc_will_crash");
    assert_eq!(f["match"], "answered", "{f:#}");
    assert_eq!(
        f["answered"],
        serde_json::json!([
            "aipc_expandable",
            "aipc_tp",
            "aipc_tp_size",
            "aipc_car_flag",
            "aipc_topology",
            "aipc_p2p",
            "aipc_graphs"
        ])
    );
    let (text, _) = check_text(&yes);
    assert!(
        text.contains("CONFIRMED upstream · matched: answered by you (7); assumed: the allocator/IPC probe did not run"),
        "{text}"
    );
    assert!(text.contains("This launch would crash"), "{text}");
    assert!(!text.contains("This launch will crash"), "{text}");
}

/// Stub `vllm` and `docker` that write their argv and the variables the fix plan touches.
fn stubs(dir: &Path) -> std::path::PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let body = r#"#!/usr/bin/env bash
out="${STUB_OUT:?}"
{
  printf '%s' "$(basename "$0")"
  for a in "$@"; do printf ' [%s]' "$a"; done
  printf '\n'
  for v in PYTORCH_CUDA_ALLOC_CONF PYTORCH_ALLOC_CONF VLLM_DEEP_GEMM_WARMUP VLLM_USE_DEEP_GEMM; do
    if [[ -v $v ]]; then printf '%s=[%s]\n' "$v" "${!v}"; else printf '%s unset\n' "$v"; fi
  done
} >> "$out"
"#;
    for name in ["vllm", "docker"] {
        let p = bin.join(name);
        std::fs::write(&p, body).expect("stub");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    bin
}

/// Run a launch text in real bash with the stubs first on PATH; what the stubs received.
fn under_stubs(dir: &Path, name: &str, launch: &str) -> String {
    let bin = stubs(dir);
    let script = dir.join(format!("{name}.sh"));
    std::fs::write(&script, launch).expect("script");
    let out = dir.join(format!("{name}.out"));
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("bash")
        .arg(&script)
        .env("PATH", path)
        .env("STUB_OUT", &out)
        .env_remove("PYTORCH_CUDA_ALLOC_CONF")
        .env_remove("PYTORCH_ALLOC_CONF")
        .env_remove("VLLM_DEEP_GEMM_WARMUP")
        .env_remove("VLLM_USE_DEEP_GEMM")
        .status()
        .expect("bash runs");
    assert!(status.success(), "{name}: bash exited {status}");
    std::fs::read_to_string(&out).expect("the stub ran")
}

#[test]
fn the_demo_plan_fixes_both_crashes_in_one_command_under_stub_vllm() {
    let v = check_json(&["--demo"]);
    let plan = &v["plan"];
    let ids: Vec<&str> = plan["remedies"]
        .as_array()
        .expect("remedies")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        ids,
        // The FP8 tuning note is info (dense FP8 runs on DeepGEMM/CUTLASS by
        // default), so the default plan leaves it out. The DeepGEMM fix is the cheapest
        // CONFIRMED remedy, not the cheaper SUSPECTED warmup skip (a confirmed fix before a guess).
        ["drop_expandable_segments", "deep_gemm_off"],
        "{plan:#}"
    );
    let combined = plan["launch"].as_str().expect("a combined launch");
    let original = plan["original"].as_str().expect("the launch as given");
    let dir = tempfile::tempdir().expect("tempdir");
    let before = under_stubs(dir.path(), "before", original);
    let after = under_stubs(dir.path(), "after", combined);
    let argv = "vllm [serve] [Qwen/Qwen3.6-27B-FP8] [--tensor-parallel-size] [2] [--compilation-config] [{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}]";
    // The stub sees what the original launch gives the engine: the crash's setting.
    assert!(before.contains(argv), "{before}");
    assert!(
        before.contains("PYTORCH_CUDA_ALLOC_CONF=[expandable_segments:True]"),
        "{before}"
    );
    assert!(before.contains("VLLM_DEEP_GEMM_WARMUP unset"), "{before}");
    // One command: the same vLLM argv, expandable_segments gone, DeepGEMM off.
    assert!(after.contains(argv), "{after}");
    assert!(after.contains("PYTORCH_CUDA_ALLOC_CONF=[]"), "{after}");
    assert!(!after.contains("expandable_segments"), "{after}");
    assert!(after.contains("VLLM_USE_DEEP_GEMM=[0]"), "{after}");
    assert!(after.contains("VLLM_DEEP_GEMM_WARMUP unset"), "{after}");
    // `fix` with the same remedies composes the same command.
    let launch = dir.path().join("launch.sh");
    std::fs::write(&launch, original).expect("launch");
    let o = run(&[
        "fix",
        "--launch-file",
        launch.to_str().expect("utf-8"),
        "--remedy",
        "drop_expandable_segments",
        "--remedy",
        "deep_gemm_off",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), combined);
    // The Markdown report leads with it.
    let md = stdout(&run(&["report", "--demo"]));
    let run_this = md.find("### Run this").expect("a Run this block");
    let first_fence = md.find("```bash\n").expect("a bash block");
    assert!(run_this < first_fence, "{md}");
    assert!(
        md[first_fence..].starts_with(&format!("```bash\n{}", combined)),
        "{md}"
    );
    // After the verdict, the host and the versions (a maintainer's order).
    assert!(
        md.find("### Versions").expect("versions") < run_this,
        "{md}"
    );
}

#[test]
fn the_plan_rewrites_a_docker_run_under_stub_docker() {
    let docker = "docker run --gpus all -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm/vllm-openai:v0.24.0 --model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2";
    let v = check_json(&["--demo", "--launch", docker]);
    let combined = v["plan"]["launch"].as_str().expect("combined");
    let dir = tempfile::tempdir().expect("tempdir");
    let got = under_stubs(dir.path(), "docker", combined);
    assert!(got.starts_with("docker [run] [--gpus] [all]"), "{got}");
    assert!(got.contains("[-e] [VLLM_USE_DEEP_GEMM=0]"), "{got}");
    assert!(!got.contains("expandable_segments:True"), "{got}");
    assert!(
        got.contains("[vllm/vllm-openai:v0.24.0] [--model] [Qwen/Qwen3.6-27B-FP8] [--tensor-parallel-size] [2]"),
        "{got}"
    );
}

#[test]
fn conflicting_remedies_are_refused_with_the_reason() {
    // fix: a conflict is an error.
    let o = run(&[
        "fix",
        "--launch",
        "vllm serve m",
        "--remedy",
        "breakable_cudagraph_off",
        "--remedy",
        "breakable_cudagraph_on",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("remedy breakable_cudagraph_on cannot go with breakable_cudagraph_off")
            && err.contains("VLLM_USE_BREAKABLE_CUDAGRAPH=0"),
        "{err}"
    );
    // The plan of a diagnosis keeps the more severe finding's remedy and refuses the other.
    let v = check_json(&[
        "--demo",
        "--remedy",
        "apply_pr_43923",
        "--remedy",
        "downgrade_vllm_0_23",
    ]);
    let plan = &v["plan"];
    let left = &plan["left_out"][0];
    assert_eq!(left["remedy"], "downgrade_vllm_0_23", "{plan:#}");
    assert_eq!(left["kind"], "conflict");
    assert_eq!(left["because_of"], "apply_pr_43923");
    assert!(
        left["reason"]
            .as_str()
            .is_some_and(|r| r.contains("vLLM 0.24")),
        "{left:#}"
    );
    assert!(
        !plan["remedies"]
            .as_array()
            .expect("remedies")
            .iter()
            .any(|r| r == "downgrade_vllm_0_23")
    );
    assert_eq!(plan["scripts"][0]["file"], "apply-pr-43923.sh", "{plan:#}");
    // A moot remedy is left out with a note, not refused.
    let o = run(&[
        "fix",
        "--launch",
        "vllm serve m -tp 2",
        "--remedy",
        "cudagraph_piecewise",
        "--remedy",
        "enforce_eager",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "vllm serve m -tp 2 --enforce-eager\n");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("note: cudagraph_piecewise is left out: enforce_eager makes it unnecessary"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn pending_nodes(v: &Value) -> Vec<String> {
    v["pending"]
        .as_array()
        .expect("pending")
        .iter()
        .filter_map(|p| p["node"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn one_gpu_paste_with_tp2_or_tp4_is_asked_not_assumed() {
    for (tp, waits_at) in [("2", "aipc_p2p"), ("4", "aipc_topology")] {
        let launch = format!("vllm serve Qwen/Qwen3-8B --tensor-parallel-size {tp}");
        let v = check_json(&["--collect-env", CE_1GPU, "--launch", &launch]);
        let pending = pending_nodes(&v);
        assert!(
            pending.contains(&waits_at.to_string()) && pending.contains(&"lg_whole_host".into()),
            "TP={tp}: {pending:?}"
        );
        let whole = v["pending"]
            .as_array()
            .expect("pending")
            .iter()
            .find(|p| p["node"] == "lg_whole_host")
            .expect("asked");
        assert_eq!(
            whole["reason"],
            "the collect-env paste shows only GPU 0: is this the whole host?"
        );
        assert!(
            v["findings"]
                .as_array()
                .expect("findings")
                .iter()
                .all(|f| f["class"] != "allocator_ipc"),
            "TP={tp}: no allocator verdict from an empty pair list: {:#}",
            v["findings"]
        );
        let nvlink = step(&v, "aipc_tp")["answer"].clone();
        assert_eq!(nvlink, "yes");
        // Answered "that is the whole host": the launch cannot start there.
        let v = check_json(&[
            "--collect-env",
            CE_1GPU,
            "--launch",
            &launch,
            "--answer",
            "lg_whole_host=yes",
        ]);
        let f = finding(&v, "launch_gpus_too_few");
        assert_eq!(f["match"], "answered");
        assert_eq!(f["answered"][0], "lg_whole_host");
        assert!(
            f["evidence"][0]
                .as_str()
                .is_some_and(|e| e.starts_with(&format!(
                    "TP={tp} x PP=1 x DP=1 needs {tp} GPU(s); this host shows 1 (GPU 0)."
                ))),
            "{f:#}"
        );
        assert!(
            f["title"]
                .as_str()
                .is_some_and(|t| t.contains("would need more GPUs than the host has, if")),
            "{f:#}"
        );
    }
}

#[test]
fn a_live_one_gpu_host_with_tp4_is_a_measured_shortfall() {
    // Live NVML lists every GPU of the machine: a shortfall there is measured, not asked.
    let kb = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb");
    let mut snap = sm120_doctor::import::load_snapshot(Path::new(
        "tests/fixtures/h200-live-2026-11-30/snapshot.yaml",
    ))
    .expect("snapshot");
    if let sm120_doctor::snapshot::Probed::Value(g) = &mut snap.gpus {
        g.truncate(1);
    }
    snap.gpu_pairs = sm120_doctor::snapshot::Probed::Value(Vec::new());
    snap.launch = sm120_doctor::snapshot::Probed::Value(
        sm120_doctor::launch::parse_launch("vllm serve m -tp 4").expect("launch"),
    );
    let d = sm120_doctor::engine::diagnose(
        &kb,
        &snap,
        &Default::default(),
        &[],
        sm120_doctor::engine::Mode::Failures,
    );
    let f = d
        .findings
        .iter()
        .find(|f| f.id == "launch_gpus_too_few")
        .expect("too few GPUs");
    assert_eq!(f.matched, sm120_doctor::engine::Basis::Measured);
    assert_eq!(
        f.title.to_string(),
        "This launch needs more GPUs than the host has: vLLM will refuse to start"
    );
    assert!(
        f.evidence[0]
            .to_string()
            .starts_with("TP=4 x PP=1 x DP=1 needs 4 GPU(s); this host shows 1 (GPU 0)."),
        "{:?}",
        f.evidence
    );
    assert_eq!(
        d.facts.get("topology.all_nvlink").value.to_string(),
        "unknown (no GPU pair to check the NVLink status of (fewer than 2 GPUs seen))"
    );
}

/// `check`'s plan edits the launch's files as `fix` does: the setting sourced from an env file
/// given with `--launch-with` is dropped there (its other options kept), not overridden on the
/// command line with a note that the file "was not given"; in JSON the file is in `plan.files`.
#[test]
fn the_plan_edits_the_file_the_setting_lives_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = dir.path().join("set_env.sh");
    let start = dir.path().join("start.sh");
    std::fs::write(
        &env,
        "# ops\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512\n",
    )
    .expect("write");
    std::fs::write(
        &start,
        format!(
            "#!/bin/bash\nsource {}\nvllm serve m --tensor-parallel-size 2\n",
            env.display()
        ),
    )
    .expect("write");
    let (start, env) = (start.display().to_string(), env.display().to_string());
    let args = [
        "--collect-env",
        CE_2GPU,
        "--launch-file",
        &start,
        "--launch-with",
        &env,
    ];
    let (text, code) = check_text(&args);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("The launch command itself stays as it is."),
        "{text}"
    );
    assert!(text.contains(&format!("Change {env} to:")), "{text}");
    assert!(
        text.contains("      export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512"),
        "{text}"
    );
    assert!(!text.contains("was not given"), "{text}");
    assert!(!text.contains("expandable_segments:False"), "{text}");
    let v = check_json(&args);
    let files = v["plan"]["files"].as_array().expect("plan.files");
    assert_eq!(files.len(), 1, "{v}");
    assert_eq!(files[0]["name"], env.as_str());
    assert_eq!(
        files[0]["text"],
        "# ops\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512\n"
    );
}

/// `--service` picks the launch for the plan too: the compose service named is edited, where
/// the plan could not read a file with two vLLM services before.
#[test]
fn the_plan_edits_the_service_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let compose = dir.path().join("compose.yaml");
    std::fs::write(
        &compose,
        "services:\n  small:\n    image: vllm/vllm-openai:v0.24.0\n    command: [\"--model\", \"a\"]\n  big:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n    command: [\"--model\", \"b\", \"--tensor-parallel-size\", \"2\"]\n",
    )
    .expect("write");
    let compose = compose.display().to_string();
    let (text, code) = check_text(&[
        "--collect-env",
        CE_2GPU,
        "--launch-file",
        &compose,
        "--service",
        "big",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("Run this"), "{text}");
    assert!(
        text.contains("      PYTORCH_CUDA_ALLOC_CONF: \"\""),
        "{text}"
    );
    assert!(!text.contains("could not be read"), "{text}");
}

/// A log that shows a known failure is no all-clear while its walk waits for an answer: `check`
/// exits 1 and its summary names the class (here the P2P hang, with no GPU pair measured).
#[test]
fn a_failure_the_log_shows_exits_1_while_its_cause_waits_for_an_answer() {
    let (text, code) = check_text(&[
        "--collect-env",
        "tests/fixtures/h200x2/torch-collect-env.txt",
        "--log",
        "tests/fixtures/kb/logs/p2p_hang_init_shm.log",
    ]);
    assert_eq!(code, Some(1), "{text}");
    // The failure the log shows is a finding (SUSPECTED) while its cause waits.
    assert!(text.contains("1 error(s), 0 warning(s)"), "{text}");
    assert!(
        text.contains("[p2p_fabric · error · SUSPECTED upstream"),
        "{text}"
    );
    assert!(
        text.contains("The logs show p2p_fabric: answer the question(s) above to name the cause."),
        "{text}"
    );
    // The same host with a clean log: nothing shown, nothing open that the log points at.
    let (text, code) = check_text(&[
        "--collect-env",
        "tests/fixtures/h200x2/torch-collect-env.txt",
        "--log",
        "tests/fixtures/kb/logs/startup_ok.log",
    ]);
    assert!(!text.contains("The logs show"), "{text}");
    assert_eq!(code, Some(0), "{text}");
}

/// Write `text` as a log in a temp dir; the path.
fn log_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write log");
    p.display().to_string()
}

/// The findings of a `check --format json` at warning or above.
fn problems(v: &Value) -> Vec<&Value> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "error" || f["severity"] == "warning")
        .collect()
}

/// A log made with an old PyTorch, checked on a host whose torch carries sm_120: the log's
/// arch list decides that log's diagnosis, and the finding says the log's run differs.
#[test]
fn the_logs_own_torch_beats_the_hosts_and_the_finding_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = log_file(
        dir.path(),
        "old-torch.log",
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n\
         The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
    );
    let (text, code) = check_text(&["--snapshot", SNAP_SM120, "--log", &log]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(
            "≠ the log's run used torch's CUDA arch list sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"
        ),
        "{text}"
    );
    let v = check_json(&["--snapshot", SNAP_SM120, "--log", &log]);
    let f = finding(&v, "sm120_torch_without_sm120");
    assert_eq!(f["severity"], "error");
    let differs = f["run_differs"].as_array().expect("run_differs");
    let arch = differs
        .iter()
        .find(|d| d["what"] == "torch_arch_list")
        .unwrap_or_else(|| panic!("{differs:#?}"));
    assert_eq!(arch["in_log"], "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
    assert!(
        arch["on_host"]
            .as_str()
            .is_some_and(|h| h.contains("sm_120")),
        "{arch}"
    );
    assert_eq!(arch["line"], 2);
    assert!(
        differs
            .iter()
            .any(|d| d["what"] == "gpu" && d["in_log"] == "NVIDIA GeForce RTX 5090"),
        "{differs:#?}"
    );
    // The same host with a log from a run on its own torch: no difference, no finding.
    let same = log_file(dir.path(), "same.log", "PyTorch version: 2.11.0+cu130\n");
    let v = check_json(&["--snapshot", SNAP_SM120, "--log", &same]);
    assert!(
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .all(|f| f.get("run_differs").is_none()),
        "{:#}",
        v["findings"]
    );
}

/// Aborts and hangs that print almost nothing are findings with their line, not all-clears
/// (on one GPU, where no P2P fabric explains a hang).
#[test]
fn silent_aborts_and_given_up_hangs_are_findings_with_their_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text, title, quoted) in [
        (
            "abort.log",
            "INFO: loading extension kernels\n./run.sh: line 8:   775 Aborted                 ( \"$@\" )\n",
            "The log shows a failure this tool does not recognise",
            "Aborted",
        ),
        (
            "sigint.log",
            "INFO 05-12 10:00:01 [gpu_model_runner.py:2338] Starting to load model m...\n\
             WARNING waiting for the worker after 20 s\n\
             Traceback (most recent call last):\n  File \"/a/x.py\", line 1, in <module>\nKeyboardInterrupt\n",
            "The log shows a hang this tool does not recognise",
            "the run was interrupted at line 5",
        ),
    ] {
        let log = log_file(dir.path(), name, text);
        let (out, code) = check_text(&["--collect-env", CE_1GPU, "--log", &log]);
        assert_eq!(code, Some(1), "{name}: {out}");
        assert!(out.contains(title), "{name}: {out}");
        assert!(out.contains(quoted), "{name}: {out}");
    }
}

/// A log that ends inside NCCL's set-up on two GPUs without NVLink: the P2P class explains the
/// hang, so it is the one finding (not beside the unrecognized hang), and it quotes the line.
#[test]
fn a_hang_the_p2p_class_explains_is_one_finding_that_quotes_the_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = log_file(
        dir.path(),
        "nccl-init.log",
        "node2:18:18 [0] NCCL INFO Bootstrap : Using eno2:10.1.10.95<0>\n\
         node2:18:18 NCCL CALL ncclGetUniqueId(0x6394b9eeaad4d0af)\n",
    );
    for answers in [&[][..], &["--answer", "p2p_hang_fabric=no"][..]] {
        let mut args = vec!["--snapshot", SNAP_SM120, "--log", &log];
        args.extend_from_slice(answers);
        let v = check_json(&args);
        let p = problems(&v);
        assert_eq!(p.len(), 1, "{answers:?}: {p:#?}");
        assert_eq!(p[0]["class"], "p2p_fabric", "{answers:?}: {p:#?}");
        let lines = p[0]["log_lines"].as_array().expect("log lines");
        assert!(
            lines.iter().any(|l| l["text"]
                .as_str()
                .is_some_and(|t| t.contains("ncclGetUniqueId"))),
            "{answers:?}: {lines:#?}"
        );
        assert!(
            v["passed"]
                .as_array()
                .expect("passed")
                .iter()
                .any(|f| f["id"] == "unrecognized_none"),
            "{answers:?}: the unrecognized walk reads the hang as explained: {:#}",
            v["passed"]
        );
    }
}

/// A SUSPECTED remedy the user picks goes into "Run this" marked as a guess.
#[test]
fn a_picked_suspected_remedy_is_marked_likely_in_run_this() {
    let md = stdout(&run(&[
        "report",
        "--demo",
        "--remedy",
        "deep_gemm_warmup_skip",
    ]));
    let run_this = md.find("### Run this").expect("a Run this block");
    let mark = md
        .find("- Likely — not confirmed: Skip only the DeepGEMM warmup")
        .expect("the guess is marked");
    assert!(
        mark > run_this && mark < md.find("### Findings").expect("findings"),
        "{md}"
    );
    // The default plan has no guess in it, so no mark.
    let md = stdout(&run(&["report", "--demo"]));
    assert!(!md.contains("Likely — not confirmed"), "{md}");
}
