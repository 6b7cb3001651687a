//! `fix` on YAML launch forms as people write them (found in real deployments): production-stack Helm values
//! with several models and `raySpec`, compose merge keys, anchors shared between containers,
//! duplicate keys, block-scalar and `sh -c` commands, LeaderWorkerSet templates.
//!
//! Results are judged by effect: the edited file is parsed as YAML (serde-saphyr, as compose and
//! kubectl read it) and compared with the original's data, so a test says exactly which value
//! changed and that nothing else did.

use serde_json::{Value, json};
use sm120_doctor::kb::{self, KnowledgeBase};
use sm120_doctor::launch::{Select, SourceFile};
use sm120_doctor::remedy::{self, FilesOutcome};

static KB: std::sync::LazyLock<KnowledgeBase> = std::sync::LazyLock::new(|| {
    kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
});

fn fix_sel(text: &str, select: &Select, ids: &[&str]) -> Result<FilesOutcome, String> {
    let files = [SourceFile::new("launch.yaml", text)];
    let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    remedy::fix_files(&files, select, &KB, &ids).map_err(|e| e.to_string())
}

fn fix(text: &str, ids: &[&str]) -> Result<FilesOutcome, String> {
    fix_sel(text, &Select::default(), ids)
}

/// The YAML's data, as a YAML reader (compose, kubectl, helm) sees it: merges applied.
fn data(text: &str) -> Value {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).expect("the YAML parses");
    Value::Array(docs)
}

/// `after` is `before` with `change` applied to its data.
fn assert_effect(before: &str, after: &str, change: impl FnOnce(&mut Value)) {
    let mut want = data(before);
    change(&mut want);
    assert_eq!(data(after), want, "after:\n{after}");
}

fn at<'a>(v: &'a mut Value, path: &str) -> &'a mut Value {
    v.pointer_mut(path).unwrap_or_else(|| panic!("no {path}"))
}

fn push_env(v: &mut Value, path: &str, name: &str, value: &str) {
    let entry = json!({"name": name, "value": value});
    match v.pointer_mut(path) {
        Some(Value::Array(list)) => list.push(entry),
        _ => {
            let (parent, key) = path.rsplit_once('/').expect("a path");
            at(v, parent)
                .as_object_mut()
                .expect("a map")
                .insert(key.to_string(), json!([entry]));
        }
    }
}

const HELM_TWO: &str = "servingEngineSpec:
  env:
  - name: VLLM_USE_DEEP_GEMM
    value: \"1\"
  modelSpec:
  - name: \"a\"
    repository: \"vllm/vllm-openai\"
    tag: \"latest\"
    modelURL: \"Qwen/Qwen3-8B\"
    requestGPU: 1
  - name: \"b\"
    repository: \"vllm/vllm-openai\"
    tag: \"latest\"
    modelURL: \"Qwen/Qwen3-4B\"
    requestGPU: 1
";

#[test]
fn helm_service_a_changes_only_model_a_overriding_the_global_value() {
    let o = fix_sel(HELM_TWO, &Select::service("a"), &["deep_gemm_off"]).expect("fixed");
    assert_effect(HELM_TWO, &o.texts[0], |v| {
        push_env(
            v,
            "/0/servingEngineSpec/modelSpec/0/env",
            "VLLM_USE_DEEP_GEMM",
            "0",
        )
    });
    assert!(
        o.notes
            .iter()
            .any(|n| n.contains("servingEngineSpec.env") && n.contains("only a changes")),
        "{:?}",
        o.notes
    );
    // Model b: the same file, fixed for b, leaves a alone.
    let o = fix_sel(
        HELM_TWO,
        &Select::service("b"),
        &["drop_expandable_segments"],
    )
    .expect("b");
    assert_effect(HELM_TWO, &o.texts[0], |v| {
        push_env(
            v,
            "/0/servingEngineSpec/modelSpec/1/env",
            "PYTORCH_CUDA_ALLOC_CONF",
            "expandable_segments:False",
        )
    });
}

#[test]
fn helm_two_models_without_env_get_valid_yaml_in_the_selected_model() {
    let text = HELM_TWO.replace(
        "  env:\n  - name: VLLM_USE_DEEP_GEMM\n    value: \"1\"\n",
        "",
    );
    for (svc, i) in [("a", 0), ("b", 1)] {
        let o = fix_sel(&text, &Select::service(svc), &["deep_gemm_off"]).expect("fixed");
        assert_effect(&text, &o.texts[0], |v| {
            push_env(
                v,
                &format!("/0/servingEngineSpec/modelSpec/{i}/env"),
                "VLLM_USE_DEEP_GEMM",
                "0",
            )
        });
    }
}

#[test]
fn helm_one_model_keeps_editing_the_global_value_in_place() {
    let text = HELM_TWO
        .split("  - name: \"b\"")
        .next()
        .expect("a")
        .to_string();
    let o = fix(&text, &["deep_gemm_off"]).expect("fixed");
    assert_effect(&text, &o.texts[0], |v| {
        *at(v, "/0/servingEngineSpec/env/0/value") = json!("0");
    });
}

#[test]
fn helm_a_shared_global_value_is_not_removed() {
    let text = HELM_TWO.replace(
        "VLLM_USE_DEEP_GEMM\n    value: \"1\"",
        "PYTORCH_CUDA_ALLOC_CONF\n    value: \"expandable_segments:True\"",
    );
    // Dropping the option overrides it in the selected model; the global entry stays for b.
    let o = fix_sel(&text, &Select::service("a"), &["drop_expandable_segments"]).expect("fixed");
    assert_effect(&text, &o.texts[0], |v| {
        push_env(
            v,
            "/0/servingEngineSpec/modelSpec/0/env",
            "PYTORCH_CUDA_ALLOC_CONF",
            "",
        )
    });
}

const HELM_RAY: &str = "servingEngineSpec:
  runtimeClassName: \"\"
  env:
  - name: HF_HOME
    value: /data
  modelSpec:
  - name: \"llama\"
    repository: \"vllm/vllm-openai\"
    tag: \"latest\"
    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"
    replicaCount: 1
    requestGPU: 1
    vllmConfig:
      tensorParallelSize: 2
    raySpec:
      headNode:
        requestCPU: 2
";

#[test]
fn helm_ray_model_env_goes_to_the_model_env_list_created_when_absent() {
    for remedy in ["deep_gemm_off", "drop_expandable_segments"] {
        let o = fix(HELM_RAY, &[remedy]).expect("fixed");
        let (name, value) = if remedy == "deep_gemm_off" {
            ("VLLM_USE_DEEP_GEMM", "0")
        } else {
            ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False")
        };
        assert_effect(HELM_RAY, &o.texts[0], |v| {
            push_env(v, "/0/servingEngineSpec/modelSpec/0/env", name, value)
        });
    }
    // The global list does not reach a raySpec model's engine, so it is not read as its env.
    let l = sm120_doctor::launch::locate_files(
        &[SourceFile::new("v.yaml", HELM_RAY)],
        &Select::default(),
    )
    .expect("read");
    assert!(l.env_site("HF_HOME").is_none());
    assert!(
        l.notes.iter().any(|n| n.contains("raySpec")),
        "{:?}",
        l.notes
    );
}

#[test]
fn a_duplicate_key_is_refused_with_its_line_and_column() {
    let compose = "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"--model\", \"m\", \"-tp\", \"2\"]\n    environment:\n      A: \"1\"\n      A: \"2\"\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    args: [\"--model\", \"m\"]\n    image: other\n";
    for (text, line_col) in [(compose, "line 7, column 7"), (pod, "line 10, column 5")] {
        let e = fix(text, &["deep_gemm_off"]).expect_err("refused");
        assert!(e.contains(line_col) && e.contains("duplicate key"), "{e}");
        let e = sm120_doctor::launch::locate_files(
            &[SourceFile::new("launch.yaml", text)],
            &Select::default(),
        )
        .expect_err("check refuses it too");
        assert!(e.to_string().contains("duplicate key"), "{e}");
    }
    // A merge key may repeat a key it merges: the map's own key wins, as in compose.
    let merged = "x: &x {A: \"1\"}\nservices:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"--model\", \"m\"]\n    environment:\n      <<: *x\n      A: \"2\"\n";
    fix(merged, &["deep_gemm_off"]).expect("a merge is not a duplicate");
}

const COMPOSE_MERGE: &str = "x-env: &env
  HF_HOME: /data
  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True
services:
  vllm:
    image: vllm/vllm-openai
    command: [\"--model\", \"m\", \"-tp\", \"2\"]
    environment:
      <<: *env
      FOO: bar
  other:
    image: busybox
    environment:
      <<: *env
";

#[test]
fn compose_environment_with_a_merge_key_is_read_and_overridden_in_the_service() {
    let l = sm120_doctor::launch::locate_files(
        &[SourceFile::new("c.yaml", COMPOSE_MERGE)],
        &Select::service("vllm"),
    )
    .expect("read");
    let site = l
        .env_site("PYTORCH_CUDA_ALLOC_CONF")
        .expect("merged value read");
    assert_eq!(site.value.as_deref(), Some("expandable_segments:True"));
    assert_eq!(
        l.env_site("FOO").and_then(|s| s.value.as_deref()),
        Some("bar")
    );

    let sel = Select::service("vllm");
    let o = fix_sel(COMPOSE_MERGE, &sel, &["drop_expandable_segments"]).expect("fixed");
    assert_effect(COMPOSE_MERGE, &o.texts[0], |v| {
        at(v, "/0/services/vllm/environment")
            .as_object_mut()
            .expect("map")
            .insert("PYTORCH_CUDA_ALLOC_CONF".into(), json!(""));
    });
    assert!(
        o.notes.iter().any(|n| n.contains("merged")),
        "{:?}",
        o.notes
    );
    let o = fix_sel(COMPOSE_MERGE, &sel, &["deep_gemm_off"]).expect("fixed");
    assert_effect(COMPOSE_MERGE, &o.texts[0], |v| {
        at(v, "/0/services/vllm/environment")
            .as_object_mut()
            .expect("map")
            .insert("VLLM_USE_DEEP_GEMM".into(), json!("0"));
    });
    // The service's own key wins over the merged one, in reading and in editing.
    let own = COMPOSE_MERGE.replace("      FOO: bar\n", "      PYTORCH_CUDA_ALLOC_CONF: \"\"\n");
    let l =
        sm120_doctor::launch::locate_files(&[SourceFile::new("c.yaml", &own)], &sel).expect("read");
    assert_eq!(
        l.env_site("PYTORCH_CUDA_ALLOC_CONF")
            .and_then(|s| s.value.as_deref()),
        Some("")
    );
}

const POD_SHARED_ENV: &str = "apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai
    args: [\"--model\", \"m\", \"-tp\", \"2\"]
    env: &env
    - name: HF_HOME
      value: /data
  - name: sidecar
    image: busybox
    env: *env
";

#[test]
fn a_k8s_env_list_shared_through_an_anchor_is_edited_with_a_note() {
    let o = fix(POD_SHARED_ENV, &["deep_gemm_off"]).expect("fixed");
    // Both containers read the anchored list, so both get the variable: the note says so.
    assert_effect(POD_SHARED_ENV, &o.texts[0], |v| {
        push_env(v, "/0/spec/containers/0/env", "VLLM_USE_DEEP_GEMM", "0");
        push_env(v, "/0/spec/containers/1/env", "VLLM_USE_DEEP_GEMM", "0");
    });
    assert!(
        o.notes
            .iter()
            .any(|n| n.contains("Pod/p/sidecar") && n.contains("changes that container too")),
        "{:?}",
        o.notes
    );
    // Without the alias, no note.
    let own = POD_SHARED_ENV
        .replace("env: *env", "env: []")
        .replace(" &env", "");
    let o = fix(&own, &["deep_gemm_off"]).expect("fixed");
    assert!(
        !o.notes.iter().any(|n| n.contains("anchor")),
        "{:?}",
        o.notes
    );
}

const POD_BLOCK_ARGS: &str = "apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai
    command: [\"/bin/sh\", \"-c\"]
    args:
    - |
      vllm serve m \\
        -tp 2

  - name: sidecar
    image: busybox
";

const COMPOSE_FOLDED: &str = "services:
  vllm:
    image: vllm/vllm-openai
    command: >
      --model m
      -tp 2
";

#[test]
fn block_scalar_commands_take_env_and_flag_remedies() {
    let o = fix(POD_BLOCK_ARGS, &["deep_gemm_off"]).expect("env-only remedy applies");
    // The new list is the vLLM container's, not the next container's (the block scalar's span
    // ends on the blank line before it).
    assert_effect(POD_BLOCK_ARGS, &o.texts[0], |v| {
        push_env(v, "/0/spec/containers/0/env", "VLLM_USE_DEEP_GEMM", "0")
    });
    assert!(
        !o.notes.iter().any(|n| n.contains("block scalar")),
        "{:?}",
        o.notes
    );
    let o = fix(COMPOSE_FOLDED, &["drop_expandable_segments"]).expect("env-only remedy applies");
    assert_effect(COMPOSE_FOLDED, &o.texts[0], |v| {
        at(v, "/0/services/vllm")
            .as_object_mut()
            .expect("map")
            .insert(
                "environment".into(),
                json!(["PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False"]),
            );
    });
    // A flag goes at the end of the vLLM command's last line inside the scalar: a literal
    // script keeps its continuation, a folded command its folding.
    let o = fix(POD_BLOCK_ARGS, &["disable_custom_all_reduce"]).expect("a flag goes in");
    assert_effect(POD_BLOCK_ARGS, &o.texts[0], |v| {
        *at(v, "/0/spec/containers/0/args/0") =
            json!("vllm serve m \\\n  -tp 2 --disable-custom-all-reduce\n");
    });
    let o = fix(COMPOSE_FOLDED, &["disable_custom_all_reduce"]).expect("a flag goes in");
    assert_effect(COMPOSE_FOLDED, &o.texts[0], |v| {
        *at(v, "/0/services/vllm/command") = json!("--model m -tp 2 --disable-custom-all-reduce\n");
    });
}

#[test]
fn compose_entrypoint_sh_c_puts_a_flag_inside_the_script_not_after_it() {
    let text = "services:\n  vllm:\n    image: vllm/vllm-openai\n    entrypoint: [\"sh\", \"-c\"]\n    command: [\"pip install x && vllm serve m -tp 2\"]\n";
    let o = fix(text, &["disable_custom_all_reduce"]).expect("fixed");
    // An item after the script would be sh's $0, never seen by vLLM.
    assert_effect(text, &o.texts[0], |v| {
        *at(v, "/0/services/vllm/command/0") =
            json!("pip install x && vllm serve m -tp 2 --disable-custom-all-reduce");
    });
}

#[test]
fn an_export_in_a_sh_c_script_wins_over_environment_so_the_fix_refuses() {
    for text in [
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"sh\", \"-c\", \"export VLLM_USE_DEEP_GEMM=1 && vllm serve m -tp 2\"]\n",
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    entrypoint: [\"sh\", \"-c\"]\n    command: [\"export VLLM_USE_DEEP_GEMM=1 && vllm serve m -tp 2\"]\n",
    ] {
        // Adding VLLM_USE_DEEP_GEMM=0 to environment: would be inert: the script sets it again.
        let e = fix(text, &["deep_gemm_off"]).expect_err("inert edit refused");
        assert!(e.contains("inside the sh -c script"), "{e}");
    }
}

#[test]
fn a_flag_in_a_sh_c_script_goes_to_the_vllm_command_not_the_one_after_it() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    command: [\"sh\", \"-c\"]\n    args: [\"vllm serve m -tp 2 2>&1 | tee /tmp/log; echo done\"]\n";
    let o = fix(pod, &["disable_custom_all_reduce"]).expect("fixed");
    assert_effect(pod, &o.texts[0], |v| {
        *at(v, "/0/spec/containers/0/args/0") =
            json!("vllm serve m -tp 2 --disable-custom-all-reduce 2>&1 | tee /tmp/log; echo done");
    });
    let compose = "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"bash\", \"-c\", \"pip install x && vllm serve m -tp 2 && echo done\"]\n";
    let o = fix(compose, &["disable_custom_all_reduce"]).expect("fixed");
    assert_effect(compose, &o.texts[0], |v| {
        *at(v, "/0/services/vllm/command/2") =
            json!("pip install x && vllm serve m -tp 2 --disable-custom-all-reduce && echo done");
    });
    // The words after vLLM's command are not its arguments.
    let l = sm120_doctor::launch::locate_files(
        &[SourceFile::new("c.yaml", compose)],
        &Select::default(),
    )
    .expect("read");
    assert_eq!(l.arg_values(), vec!["m", "-tp", "2"]);
}

/// After the vLLM docs' LeaderWorkerSet example (deployment/frameworks/lws.md).
const LWS: &str = "apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - name: vllm-leader
          image: vllm/vllm-openai
          command: [\"sh\", \"-c\", \"bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE); vllm serve m -tp 8 -pp 2\"]
          env:
          - name: HF_HOME
            value: /data
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: vllm/vllm-openai
          command: [\"sh\", \"-c\", \"bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)\"]
";

#[test]
fn leaderworkerset_env_edits_go_to_leader_and_worker_templates() {
    let leader = "/0/spec/leaderWorkerTemplate/leaderTemplate/spec/containers/0";
    let worker = "/0/spec/leaderWorkerTemplate/workerTemplate/spec/containers/0";
    // The leader is the launch without --container (the worker starts a Ray worker).
    for select in [Select::default(), Select::container("vllm-leader")] {
        let o = fix_sel(LWS, &select, &["deep_gemm_off"]).expect("fixed");
        assert_effect(LWS, &o.texts[0], |v| {
            push_env(v, &format!("{leader}/env"), "VLLM_USE_DEEP_GEMM", "0");
            push_env(v, &format!("{worker}/env"), "VLLM_USE_DEEP_GEMM", "0");
        });
        assert!(
            o.notes
                .iter()
                .any(|n| n.contains("LeaderWorkerSet/vllm/vllm-worker")),
            "{:?}",
            o.notes
        );
    }
    // A flag goes to the leader's vllm serve only.
    let o = fix(LWS, &["disable_custom_all_reduce"]).expect("fixed");
    assert_effect(LWS, &o.texts[0], |v| {
        let cmd = at(v, &format!("{leader}/command/2"));
        let s = cmd.as_str().expect("a string").to_string();
        *cmd = json!(format!("{s} --disable-custom-all-reduce"));
    });
}
