//! One verdict for each spelling of expandable_segments, everywhere: `check`, `fix`, the facts,
//! and the IPC probe's plan (the TUI's panel is tested in src/tui/env.rs). PyTorch accepts only
//! `True` and `False`; `1`, `true`, `TRUE` stop the engine at start-up. The rule itself is checked
//! against the torch 2.11 measurement in tests/fixtures/h200x2/.

use sm120_doctor::facts;
use sm120_doctor::probe::torch::{engine_expandable, plan};
use sm120_doctor::snapshot::{Environment, HostSnapshot, Probed};
use sm120_doctor::value::Value;
use sm120_doctor::vllm::alloc_conf::{
    self, CUDA_VAR, EXPANDABLE_SEGMENTS, GENERIC_VAR, Precedence, Switch,
};
use sm120_doctor::vllm::hardware::Hardware;
use std::collections::BTreeMap;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");
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

fn launch(value: &str) -> String {
    format!(
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:{value},max_split_size_mb:512 vllm serve m --tensor-parallel-size 2\n"
    )
}

/// `check` on the H200 capture with a TP=2 launch: the allocator_ipc finding, its evidence.
fn check(value: &str) -> (String, Vec<String>) {
    let out = doctor(&[
        "check",
        "--snapshot",
        H200,
        "--launch",
        &launch(value),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{value}: {e}\n{}", text(&out.stderr)));
    let f = v["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["class"] == "allocator_ipc"))
        .cloned()
        .unwrap_or_default();
    let evidence = f["evidence"]
        .as_array()
        .map(|e| {
            e.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (f["id"].as_str().unwrap_or("").to_string(), evidence)
}

/// `fix` with `remedy` on the launch file: (stdout, stderr).
fn fix(value: &str, remedy: &str) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("serve.sh");
    std::fs::write(&f, launch(value)).expect("write");
    let out = doctor(&[
        "fix",
        "--launch-file",
        f.to_str().expect("utf-8 path"),
        "--remedy",
        remedy,
    ]);
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{value}: {}",
        text(&out.stderr)
    );
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn check_gives_one_verdict_per_spelling() {
    let (id, _) = check("True");
    assert_eq!(
        id, "allocator_ipc_will_crash",
        "True turns expandable segments on"
    );
    for bad in ["1", "true", "TRUE"] {
        let (id, evidence) = check(bad);
        assert_eq!(id, "allocator_conf_invalid", "{bad}");
        let all = evidence.join("\n");
        assert!(
            all.contains(&format!("expandable_segments is {bad},"))
                && all.contains(&format!("but got '{bad}'")),
            "{bad}: {all}"
        );
    }
    let (id, _) = check("False");
    assert_eq!(id, "", "False is off: no allocator_ipc problem");
}

#[test]
fn fix_drops_what_check_flags() {
    let kept =
        "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 vllm serve m --tensor-parallel-size 2\n";
    let (out, err) = fix("True", "drop_expandable_segments");
    assert_eq!(out, kept);
    assert!(
        err.contains("removed expandable_segments from PYTORCH_CUDA_ALLOC_CONF"),
        "{err}"
    );
    for bad in ["1", "true", "TRUE"] {
        for remedy in [
            "drop_invalid_expandable_segments",
            "drop_expandable_segments",
        ] {
            let (out, err) = fix(bad, remedy);
            assert_eq!(out, kept, "{bad} {remedy}");
            assert!(
                err.contains(&format!(
                    "removed expandable_segments:{bad} from PYTORCH_CUDA_ALLOC_CONF: PyTorch accepts only True or False"
                )),
                "{bad} {remedy}: {err}"
            );
        }
    }
    let (out, err) = fix("False", "drop_expandable_segments");
    assert_eq!(out, launch("False"), "False is kept as written");
    assert!(
        err.contains("does not turn expandable_segments on; nothing to change"),
        "{err}"
    );
}

fn snapshot_with(vars: &[(&str, &str)]) -> HostSnapshot {
    let mut s = HostSnapshot::empty("test", "test");
    s.env = Probed::Value(Environment {
        whose: None,
        source: "test shell".into(),
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        covers: None,
    });
    s
}

#[test]
fn facts_and_probe_plan_agree() {
    for (value, on, invalid, probe_role) in [
        ("True", true, false, "remedy"),
        ("False", false, false, "comparison"),
        ("1", false, true, "remedy"),
        ("true", false, true, "remedy"),
        ("TRUE", false, true, "remedy"),
    ] {
        let conf = format!("expandable_segments:{value}");
        let f = facts::derive(
            &snapshot_with(&[(CUDA_VAR, &conf)]),
            false,
            &Hardware::default(),
        );
        assert_eq!(
            f.get("alloc.expandable_segments").value,
            Value::Bool(on),
            "{value}"
        );
        assert_eq!(
            f.get("alloc.expandable_segments_invalid").value,
            Value::Bool(invalid),
            "{value}"
        );
        assert_eq!(
            f.get("alloc.expandable_segments_value").value,
            Value::Str(value.into())
        );
        assert_eq!(engine_expandable(Some(&conf)).is_on(), on, "{value}");
        let p = plan(Some(&conf));
        assert_eq!(p[1].0, probe_role, "{value}");
        let expected = if probe_role == "remedy" {
            "expandable_segments:False"
        } else {
            "expandable_segments:True"
        };
        assert_eq!(p[1].1.as_deref(), Some(expected), "{value}");
    }
    // Masked: PYTORCH_ALLOC_CONF only counts when it says exactly True.
    for (generic, masked) in [
        ("expandable_segments:True", true),
        ("expandable_segments:true", false),
    ] {
        let f = facts::derive(
            &snapshot_with(&[(CUDA_VAR, "max_split_size_mb:512"), (GENERIC_VAR, generic)]),
            false,
            &Hardware::default(),
        );
        assert_eq!(
            f.get("alloc.masked_alloc_conf").value,
            Value::Bool(masked),
            "{generic}"
        );
        assert_eq!(f.get("alloc.var").value, Value::Str(CUDA_VAR.into()));
    }
}

/// Every row of the torch 2.11 measurement (the script's environment, the observed outcome) is
/// what `alloc_conf` predicts.
#[test]
fn the_rule_matches_the_torch_2_11_measurement() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200x2");
    let script = std::fs::read_to_string(format!("{dir}/allocator_precedence.sh")).expect("script");
    let result = std::fs::read_to_string(format!("{dir}/allocator-precedence-torch2.11.txt"))
        .expect("measurement");
    // `run "LABEL" "VAR=VALUE VAR=VALUE"` → label → environment.
    let mut envs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for line in script.lines().filter(|l| l.starts_with("run \"")) {
        let parts: Vec<&str> = line.split('"').collect();
        let (label, assigns) = (parts[1], parts[3]);
        let env = assigns
            .split_whitespace()
            .filter_map(|a| a.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        envs.insert(label.to_string(), env);
    }
    let mut rows = 0;
    for line in result.lines().filter(|l| l.starts_with("== ")) {
        let rest = &line[3..];
        let (label, outcome) = rest
            .split_once("  ")
            .map(|(l, o)| (l.trim(), o.trim()))
            .expect("label and outcome");
        let env = envs
            .get(label)
            .unwrap_or_else(|| panic!("{label:?} not in the script"));
        let verdict = Precedence::default()
            .in_effect(|v| env.get(v).map(String::as_str))
            .map(|(_, conf)| alloc_conf::switch(conf, EXPANDABLE_SEGMENTS))
            .unwrap_or(Switch::Absent);
        if outcome.contains("refused (expandable on)") {
            assert_eq!(verdict, Switch::On, "{line}");
        } else if outcome.contains("legacy IPC ok (expandable off)") {
            assert!(
                matches!(verdict, Switch::Off | Switch::Absent),
                "{line}: {verdict:?}"
            );
        } else if let Some(got) = outcome
            .strip_prefix("ALLOC-ERROR ValueError Expected 'True' or 'False'")
            .and_then(|r| r.rsplit_once("but got '"))
        {
            let value = got.1.trim_end_matches('\'');
            assert_eq!(verdict, Switch::Invalid(value.into()), "{line}");
        } else {
            panic!("outcome not understood: {line}");
        }
        rows += 1;
    }
    assert_eq!(rows, 9, "every measured row checked");
}
