//! The real binary: exit codes, output contracts, and clear errors on bad input.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"));
    c.env_remove("NO_COLOR");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

fn fixture(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn check_demo_finds_allocator_ipc_and_exits_1() {
    let o = run(&["check", "--demo"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("[✗]") && out.contains("allocator_ipc"),
        "{out}"
    );
    assert!(out.contains("SM120 family"), "{out}");
    assert!(
        !out.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
}

/// The doctor's brief: one line per check, the plan, the questions, on one 50-line screen;
/// `-v` adds each finding's evidence, remedies and sources. Both exit alike.
#[test]
fn check_text_is_brief_by_default_and_verbose_with_v() {
    let brief = run(&["check", "--demo"]);
    let verbose = run(&["check", "--demo", "-v"]);
    assert_eq!(brief.status.code(), Some(1), "{}", stderr(&brief));
    assert_eq!(verbose.status.code(), brief.status.code());
    let (b, v) = (stdout(&brief), stdout(&verbose));
    assert!(b.lines().count() <= 50, "{} lines:\n{b}", b.lines().count());
    assert!(v.lines().count() > b.lines().count() + 40, "{v}");
    // The evidence, remedy list and sources are -v's; the plan is in both.
    for only_v in ["Remedies, cheapest first:", "Sources: ", "    • log demo:"] {
        assert!(!b.contains(only_v), "{only_v:?} in the brief:\n{b}");
        assert!(v.contains(only_v), "{only_v:?} not in -v:\n{v}");
    }
    assert!(b.contains("Fix plan (drop_expandable_segments"), "{b}");
    assert!(b.contains("export PYTORCH_CUDA_ALLOC_CONF=''"), "{b}");
    assert!(b.contains("run again with -v"), "{b}");
    // One line per check: every check line of -v is in the brief too, once.
    let marked = |l: &&str| {
        ["[✗]", "[!]", "[i]", "[✓]", "[ ]", "[-]"]
            .iter()
            .any(|m| l.starts_with(m))
    };
    let checks: Vec<&str> = v.lines().filter(marked).collect();
    assert!(checks.len() > 15, "{v}");
    for c in &checks {
        assert_eq!(b.lines().filter(|l| l == c).count(), 1, "{c:?} in:\n{b}");
    }
    // What was not checked comes after every tick, with the input that would check it.
    let lines: Vec<&str> = b.lines().collect();
    let last_tick = lines
        .iter()
        .rposition(|l| l.starts_with("[✓]"))
        .expect("ticks");
    let unchecked = lines
        .iter()
        .position(|l| l.starts_with("[ ]"))
        .expect("not checked");
    assert!(unchecked > last_tick, "{b}");
    assert!(
        b.contains("not checked: the P2P probe did not run (give `sm120-doctor probe p2p`)"),
        "{b}"
    );
}

/// In the brief, the plan comes before the questions, and each question says how to answer.
#[test]
fn check_brief_puts_questions_after_the_plan() {
    let dir = tempfile::tempdir().expect("tmp");
    let env = dir.path().join("env.txt");
    std::fs::write(
        &env,
        "PyTorch version: 2.11.0+cu130\nGPU models and configuration:\nGPU 0: NVIDIA GeForce RTX 5090\nGPU 1: NVIDIA GeForce RTX 5090\nCaching allocator config: N/A\n",
    )
    .expect("write");
    let env = env.to_str().expect("utf8");
    let launch = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve m -tp 2";
    let args = [
        "check",
        "--collect-env",
        env,
        "--launch",
        launch,
        "--answer",
        "aipc_p2p=yes",
    ];
    let o = run(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let plan = out
        .find("Fix plan (drop_expandable_segments)")
        .expect("a plan");
    let q = out.find("[?] ").expect("a question");
    assert!(plan < q, "{out}");
    assert!(out[q..].contains("• answer with: --answer "), "{out}");
    assert!(!out.contains("cannot decide automatically"), "{out}");
    // The crash rests on the typed answer: the brief says so on the finding's line.
    assert!(out.contains("? rests on your answer to: aipc_p2p"), "{out}");
    let mut verbose = args.to_vec();
    verbose.insert(1, "--verbose");
    let v = stdout(&run(&verbose));
    assert!(v.contains("cannot decide automatically"), "{v}");
}

#[test]
fn check_with_nothing_wrong_exits_0() {
    let o = run(&[
        "check",
        "--demo",
        "--launch",
        "vllm serve Qwen/Qwen3-8B",
        "--log",
        &fixture("kb/logs/startup_ok.log"),
    ]);
    // A BF16 model at TP=1: the allocator config is harmless, no FP8/DeepGEMM path; the log
    // shows the server come up.
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(!out.contains("[✗]"), "{out}");
    assert!(out.contains("[✓]"), "{out}");
}

#[test]
fn strict_check_exits_3_when_a_check_was_not_run_and_keeps_0_and_1_otherwise() {
    // A host snapshot with nothing else given: nothing needs attention, but most checks lack
    // their input. Plain `check` exits 0 and counts them; `--strict` refuses that as an all-clear.
    let snap = fixture("kb/snapshots/sm120_ws2.yaml");
    let plain = run(&["check", "--snapshot", &snap]);
    let out = stdout(&plain);
    assert_eq!(plain.status.code(), Some(0), "{out}");
    assert!(out.contains("0 error(s), 0 warning(s)"), "{out}");
    assert!(
        out.contains(" not checked") && !out.contains("· 0 not checked"),
        "{out}"
    );
    let strict = run(&["check", "--strict", "--snapshot", &snap]);
    assert_eq!(strict.status.code(), Some(3), "{}", stdout(&strict));
    assert_eq!(stdout(&strict), out, "--strict changes the exit code only");
    // Every check given its input and passed: 0 even under --strict.
    let ok_log = fixture("kb/logs/startup_ok.log");
    let all = [
        "check",
        "--strict",
        "--demo",
        "--launch",
        "vllm serve Qwen/Qwen3-8B",
        "--log",
        &ok_log,
    ];
    let o = run(&all);
    assert!(stdout(&o).contains("· 0 not checked"), "{}", stdout(&o));
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // Findings still win over "not checked".
    assert_eq!(run(&["check", "--strict", "--demo"]).status.code(), Some(1));
}

#[test]
fn check_on_a_log_that_shows_no_outcome_exits_3_not_0() {
    let o = run(&[
        "check",
        "--demo",
        "--launch",
        "vllm serve Qwen/Qwen3-8B",
        "--log",
        &fixture("h200x2/README.md"),
    ]);
    // A README is no failing log, but it does not show a run coming up either: the tool
    // cannot tell whether the run worked, and says so instead of an all-clear.
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(!out.contains("[✗]"), "{out}");
    assert!(
        out.contains("[ ] Not checked: the log shows neither a failure nor that the run came up"),
        "{out}"
    );
    assert!(
        out.contains("the given log does not show how the run ended"),
        "{out}"
    );
}

#[test]
fn check_json_contract() {
    let o = run(&["check", "--demo", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["schema_version"], 1);
    let f = &v["findings"][0];
    for key in [
        "id",
        "class",
        "severity",
        "confidence",
        "title",
        "evidence",
        "sources",
        "remedies",
    ] {
        assert!(f.get(key).is_some(), "finding lacks {key}: {f}");
    }
    assert_eq!(f["class"], "allocator_ipc");
    assert_eq!(f["confidence"], "CONFIRMED");
    let remedy = &f["remedies"][0];
    for key in ["id", "title", "cost"] {
        assert!(remedy.get(key).is_some(), "remedy lacks {key}");
    }
    assert_eq!(remedy["id"], "drop_expandable_segments");
}

#[test]
fn classify_json_contract_and_exit_codes() {
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("crash.log");
    std::fs::write(&log, "INFO start\nFailed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid argument'\n").expect("write");
    let o = run(&[
        "classify",
        "--log",
        log.to_str().expect("utf8"),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["classes"][0], "allocator_ipc");
    assert_eq!(v["matches"][0]["line"], 2);
    assert_eq!(v["matches"][0]["signature"], "car_invalid_argument");
    assert_eq!(v["matches"][0]["kind"], "error");
    // No sign of expandable segments in this log: the class is named, not confirmed.
    assert_eq!(v["confidence"]["allocator_ipc"], "SUSPECTED");
    assert_eq!(v["evidence"][0]["class"], "allocator_ipc");
    assert!(
        v["evidence"][0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("PYTORCH_CUDA_ALLOC_CONF")),
        "{v}"
    );

    std::fs::write(&log, "all good\n").expect("write");
    let o = run(&["classify", "--log", log.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["check", "--frobnicate"]).status.code(), Some(2));
    assert_eq!(
        run(&["check", "--demo", "--snapshot", "x"]).status.code(),
        Some(2)
    );
    let o = run(&["check", "--demo", "--answer", "no_such_node=yes"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no_such_node"));
    let o = run(&["check", "--snapshot", "/nonexistent/snap.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/snap.yaml"));
}

#[test]
fn no_color_is_honoured_even_on_a_terminal_request() {
    let o = bin()
        .args(["check", "--demo"])
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    assert!(!stdout(&o).contains('\x1b'));
}

#[test]
fn color_flag_and_clicolor_conventions() {
    let out = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = bin();
        c.args(args)
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CLICOLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        stdout(&c.output().expect("runs"))
    };
    // Into a pipe (this test's stdout capture), auto means no colour unless forced.
    assert!(!out(&["check", "--demo"], &[]).contains('\x1b'));
    assert!(out(&["check", "--demo"], &[("CLICOLOR_FORCE", "1")]).contains('\x1b'));
    assert!(out(&["check", "--demo", "--color", "always"], &[]).contains('\x1b'));
    assert!(
        !out(
            &["check", "--demo", "--color", "never"],
            &[("CLICOLOR_FORCE", "1")]
        )
        .contains('\x1b')
    );
    assert!(
        !out(
            &["check", "--demo"],
            &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
        )
        .contains('\x1b')
    );
    let bad = run(&["check", "--demo", "--color", "bogus"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--color"), "{}", stderr(&bad));
}

#[test]
fn closed_stdout_pipe_is_not_a_panic() {
    let mut child = bin()
        .args(["check", "--demo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[test]
fn embedded_kb_lints_clean() {
    let o = run(&["kb", "lint"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("ok: embedded") || stdout(&o).contains("\nok: embedded"),
        "{}",
        stdout(&o)
    );
    let dir = format!("{}/knowledge", env!("CARGO_MANIFEST_DIR"));
    assert_eq!(run(&["kb", "lint", &dir]).status.code(), Some(0));
}

/// Every malformed KB directory gives `file:line:col: message`, exit 2, no panic.
#[test]
fn malformed_kb_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/malformed/kb");
    let mut n = 0;
    for entry in std::fs::read_dir(&root).expect("corpus") {
        let dir = entry.expect("entry").path();
        let expect = std::fs::read_to_string(dir.join("EXPECT")).expect("EXPECT file");
        let expect = expect.trim();
        let o = run(&["kb", "lint", dir.to_str().expect("utf8")]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", dir.display());
        assert!(!err.contains("panicked"), "{err}");
        let want = format!("{}/{expect}", dir.display());
        assert!(
            err.contains(&want),
            "{}: expected {want:?} in {err:?}",
            dir.display()
        );
        // The same KB given to `check --kb` fails the same way.
        let o = run(&["check", "--demo", "--kb", dir.to_str().expect("utf8")]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(&want));
        n += 1;
    }
    assert!(n >= 10, "corpus has {n} cases");
}

/// Every malformed host input names the file and line:column or the field, exit 2, no panic.
#[test]
fn malformed_host_inputs() {
    let cases: &[(&str, &str, &str)] = &[
        ("01_snapshot_wrong_type.yaml", "--snapshot", ":4:10: "),
        (
            "02_snapshot_bad_json.json",
            "--snapshot",
            ":1:57: invalid JSON",
        ),
        (
            "03_snapshot_future_version.yaml",
            "--snapshot",
            ": field schema_version",
        ),
        (
            "04_snapshot_unknown_field.yaml",
            "--snapshot",
            ":3:1: unknown field `gpu_count`",
        ),
        ("05_snapshot_bad_cc.yaml", "--snapshot", ":7:45: "),
        (
            "06_collect_env_not_collect_env.txt",
            "--collect-env",
            ":1:1: not collect-env output",
        ),
        (
            "07_collect_env_binary.txt",
            "--collect-env",
            ":3:1: not UTF-8",
        ),
        (
            "08_collect_env_bad_gpu_index.txt",
            "--collect-env",
            ":4:5: GPU index \"one\"",
        ),
        (
            "09_collect_env_truncated_topology.txt",
            "--collect-env",
            ":5:1: topology matrix ends early",
        ),
    ];
    for (file, flag, want) in cases {
        let path = fixture(&format!("malformed/host/{file}"));
        let mut args = vec!["check", *flag, path.as_str()];
        if *flag == "--launch-file" {
            args.push("--demo");
        }
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{file}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains(&format!("{path}{want}")),
            "{file}: expected {want:?} in {err:?}"
        );
    }
}

/// A continuation bash breaks is no input error: `check` reads the launch as bash runs it and
/// reports what is lost as a finding, with the file and line.
#[test]
fn broken_continuation_is_a_finding_with_its_line() {
    let path = fixture("launch/comment_breaks_continuation.sh");
    let o = run(&["check", "-v", "--demo", "--launch-file", path.as_str()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        out.contains("Part of the launch never reaches vLLM")
            && out.contains(&format!(
                "{path}:3: `--tensor-parallel-size 2` runs as a command of its own"
            )),
        "{out}"
    );
}

#[test]
fn collect_env_input_with_launch_and_answer() {
    let dir = tempfile::tempdir().expect("tmp");
    let env = dir.path().join("env.txt");
    std::fs::write(
        &env,
        "PyTorch version: 2.11.0+cu130\nGPU models and configuration:\nGPU 0: NVIDIA GeForce RTX 5090\nGPU 1: NVIDIA GeForce RTX 5090\nCaching allocator config: N/A\n",
    )
    .expect("write");
    let env = env.to_str().expect("utf8");
    let launch = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve m -tp 2";
    // No topology in the file: the tool asks instead of guessing.
    let o = run(&["check", "--collect-env", env, "--launch", launch]);
    assert!(
        stdout(&o).contains("--answer aipc_topology=yes|no")
            || stdout(&o).contains("--answer aipc_p2p=yes|no"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "check",
        "--collect-env",
        env,
        "--launch",
        launch,
        "--answer",
        "aipc_p2p=yes",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // The crash rests on the typed P2P answer and on no log / no probe: "would crash if".
    assert!(
        stdout(&o).contains("This launch would crash at CUDA graph capture if")
            && stdout(&o).contains("CONFIRMED upstream · matched: answered by you (1)")
            && stdout(&o).contains("rests on your answer to: aipc_p2p"),
        "{}",
        stdout(&o)
    );
}
