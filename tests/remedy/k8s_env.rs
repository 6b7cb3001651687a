//! `fix` on a Kubernetes container adds the variable to the container's `env:` list, creating
//! the list when the container has none, in the container's own style (block or flow), at the
//! container's key indentation, keeping every other byte (review D9).

use sm120_doctor::kb::{self, KnowledgeBase};
use sm120_doctor::remedy;

static KB: std::sync::LazyLock<KnowledgeBase> = std::sync::LazyLock::new(|| {
    kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
});

/// (name, input, remedy, expected output)
const TABLE: &[(&str, &str, &str, &str)] = &[
    (
        "container with env: a new item after the last",
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n      args: [\"--model\", \"m\", \"-tp\", \"2\"]\n      env:\n        - name: HF_HOME\n          value: /data\n",
        "deep_gemm_off",
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n      args: [\"--model\", \"m\", \"-tp\", \"2\"]\n      env:\n        - name: HF_HOME\n          value: /data\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"0\"\n",
    ),
    (
        "container without env (envFrom only): a new env list at the keys' column",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:latest\n          args: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n          envFrom:\n            - configMapRef: {name: vllm-env}\n",
        "drop_expandable_segments",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:latest\n          args: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n          envFrom:\n            - configMapRef: {name: vllm-env}\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: \"expandable_segments:False\"\n",
    ),
    (
        "container without env, sh -c command, no trailing newline",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n      command: [\"/bin/sh\", \"-c\"]\n      args: [\"vllm serve m -tp 2\"]",
        "deep_gemm_off",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n      command: [\"/bin/sh\", \"-c\"]\n      args: [\"vllm serve m -tp 2\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"0\"",
    ),
    (
        "flow-style container: a flow env entry before the closing brace",
        "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: vllm, image: vllm/vllm-openai, args: [\"--model\", \"m\", \"-tp\", \"2\"]}]\n",
        "deep_gemm_off",
        "apiVersion: v1\nkind: Pod\nspec:\n  containers: [{name: vllm, image: vllm/vllm-openai, args: [\"--model\", \"m\", \"-tp\", \"2\"], env: [{name: VLLM_USE_DEEP_GEMM, value: \"0\"}]}]\n",
    ),
    (
        "multi-document file: the container in the second document gets the list",
        "apiVersion: v1\nkind: Service\nmetadata: {name: vllm}\nspec:\n  ports: [{port: 8000}]\n---\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai:latest\n    args:\n    - --model\n    - m\n    - -tp\n    - \"2\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        "deep_gemm_off",
        "apiVersion: v1\nkind: Service\nmetadata: {name: vllm}\nspec:\n  ports: [{port: 8000}]\n---\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai:latest\n    args:\n    - --model\n    - m\n    - -tp\n    - \"2\"\n    env:\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"0\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    ),
];

#[test]
fn k8s_env_edits_table() {
    let mut failures = Vec::new();
    for (name, input, id, expected) in TABLE {
        match remedy::fix(input, &KB, &[id.to_string()]) {
            Ok(o) if o.text == *expected => {
                // The result parses as YAML and reads back with the variable set.
                let back = sm120_doctor::launch::parse_launch(&o.text)
                    .unwrap_or_else(|e| panic!("{name}: result does not parse: {e}"));
                assert!(
                    back.env.contains_key("VLLM_USE_DEEP_GEMM")
                        || back.env.contains_key("PYTORCH_CUDA_ALLOC_CONF"),
                    "{name}: {:?}",
                    back.env
                );
            }
            Ok(o) => failures.push(format!(
                "{name}:\n--- got\n{}\n--- want\n{expected}",
                o.text
            )),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Pod templates are found by shape in any kind: LeaderWorkerSet's leader and worker templates,
/// a KServe ServingRuntime's containers, a RayCluster's head and worker groups.
#[test]
fn pod_templates_of_any_kind_are_found() {
    use sm120_doctor::launch::{self, Select, SourceFile};
    let lws = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: vllm\nspec:\n  leaderWorkerTemplate:\n    size: 2\n    leaderTemplate:\n      spec:\n        containers:\n          - name: vllm-leader\n            image: vllm/vllm-openai:latest\n            args: [\"--model\", \"m\", \"-tp\", \"8\"]\n    workerTemplate:\n      spec:\n        containers:\n          - name: vllm-worker\n            image: vllm/vllm-openai:latest\n            command: [\"sh\", \"-c\", \"ray start --block\"]\n";
    // The worker starts a Ray worker, not the server: the leader is the launch, and the
    // worker is its peer for environment edits.
    let l = launch::locate(lws).expect("the leader");
    assert!(
        l.entrypoint
            .as_deref()
            .is_some_and(|e| e.contains("LeaderWorkerSet/vllm/vllm-leader")),
        "{:?}",
        l.entrypoint
    );
    assert_eq!(l.peers.len(), 1);
    let files = [SourceFile::new("lws.yaml", lws)];
    let select = Select {
        service: None,
        container: Some("vllm-leader".into()),
    };
    let o = remedy::fix_files(&files, &select, &KB, &["deep_gemm_off".to_string()]).expect("fix");
    assert!(
        o.texts[0].contains(
            "            args: [\"--model\", \"m\", \"-tp\", \"8\"]\n            env:\n              - name: VLLM_USE_DEEP_GEMM\n                value: \"0\"\n    workerTemplate:"
        ),
        "{}",
        o.texts[0]
    );
    assert!(
        o.texts[0].ends_with(
            "            command: [\"sh\", \"-c\", \"ray start --block\"]\n            env:\n              - name: VLLM_USE_DEEP_GEMM\n                value: \"0\"\n"
        ),
        "{}",
        o.texts[0]
    );
    let runtime = "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata:\n  name: vllm-runtime\nspec:\n  supportedModelFormats: [{name: vllm}]\n  containers:\n    - name: kserve-container\n      image: vllm/vllm-openai:latest\n      args: [\"--model\", \"/mnt/models\", \"--tensor-parallel-size\", \"2\"]\n";
    let l = launch::parse_launch(runtime).expect("a ServingRuntime's container");
    assert_eq!(l.tensor_parallel_size, Some(2));
    let ray = "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: r\nspec:\n  headGroupSpec:\n    template:\n      spec:\n        containers:\n          - name: head\n            image: vllm/vllm-openai:latest\n            args: [\"--model\", \"m\", \"-tp\", \"4\"]\n  workerGroupSpecs:\n    - groupName: g\n      template:\n        spec:\n          containers:\n            - name: worker\n              image: busybox\n";
    let l = launch::parse_launch(ray).expect("the head group's container");
    assert_eq!(l.tensor_parallel_size, Some(4));
}
