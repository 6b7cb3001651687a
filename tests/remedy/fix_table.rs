//! Table tests: realistic launch commands in every supported form, each remedy, exact output.

use sm120_doctor::kb::{self, KnowledgeBase};
use sm120_doctor::remedy::{self, FixOutcome};

static KB: std::sync::LazyLock<KnowledgeBase> = std::sync::LazyLock::new(|| {
    kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
});

fn kb() -> &'static KnowledgeBase {
    &KB
}

fn fix(text: &str, ids: &[&str]) -> FixOutcome {
    let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    remedy::fix(text, kb(), &ids).unwrap_or_else(|e| panic!("fix {ids:?} failed: {e}\n{text}"))
}

fn fix_err(text: &str, ids: &[&str]) -> String {
    let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    match remedy::fix(text, kb(), &ids) {
        Ok(o) => panic!("expected an error, got:\n{}", o.text),
        Err(e) => e.to_string(),
    }
}

fn has_note(o: &FixOutcome, needle: &str) -> bool {
    o.notes.iter().any(|n| n.contains(needle))
}

/// (name, input, remedies, expected output)
const TABLE: &[(&str, &str, &[&str], &str)] = &[
    (
        "env prefix, other options kept, user's double quotes kept",
        "PYTORCH_CUDA_ALLOC_CONF=\"expandable_segments:True,max_split_size_mb:512\" vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\n",
        &["drop_expandable_segments"],
        "PYTORCH_CUDA_ALLOC_CONF=\"max_split_size_mb:512\" vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\n",
    ),
    (
        "export line (the #47266 seed launch)",
        "# seed\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nvllm serve Qwen/Qwen3.6-27B-FP8 \\\n  --tensor-parallel-size 2 \\\n  --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}'\n",
        &["drop_expandable_segments"],
        "# seed\nexport PYTORCH_CUDA_ALLOC_CONF=''\nvllm serve Qwen/Qwen3.6-27B-FP8 \\\n  --tensor-parallel-size 2 \\\n  --compilation-config '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}'\n",
    ),
    (
        "PYTORCH_ALLOC_CONF in effect when PYTORCH_CUDA_ALLOC_CONF is not set",
        "PYTORCH_ALLOC_CONF=max_split_size_mb:256,expandable_segments:True vllm serve m -tp 2",
        &["drop_expandable_segments"],
        "PYTORCH_ALLOC_CONF=max_split_size_mb:256 vllm serve m -tp 2",
    ),
    (
        "an empty PYTORCH_CUDA_ALLOC_CONF masks PYTORCH_ALLOC_CONF: nothing to change",
        "export PYTORCH_CUDA_ALLOC_CONF=\nexport PYTORCH_ALLOC_CONF=expandable_segments:True\nvllm serve m -tp 2\n",
        &["drop_expandable_segments"],
        "export PYTORCH_CUDA_ALLOC_CONF=\nexport PYTORCH_ALLOC_CONF=expandable_segments:True\nvllm serve m -tp 2\n",
    ),
    (
        "both set: only the one in effect is edited",
        "export PYTORCH_ALLOC_CONF=expandable_segments:True\nPYTORCH_CUDA_ALLOC_CONF='expandable_segments:True,garbage_collection_threshold:0.6' vllm serve m -tp 2\n",
        &["drop_expandable_segments"],
        "export PYTORCH_ALLOC_CONF=expandable_segments:True\nPYTORCH_CUDA_ALLOC_CONF='garbage_collection_threshold:0.6' vllm serve m -tp 2\n",
    ),
    (
        "neither set in the command: explicit False for this command only",
        "vllm serve m --tensor-parallel-size 2\n",
        &["drop_expandable_segments"],
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False vllm serve m --tensor-parallel-size 2\n",
    ),
    (
        "continuation lines: a new flag continues the style",
        "vllm serve deepseek-ai/DeepSeek-V4-Flash \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768\n",
        &["enforce_eager"],
        "vllm serve deepseek-ai/DeepSeek-V4-Flash \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768 \\\n    --enforce-eager\n",
    ),
    (
        "python -m form; flag already given",
        "python3 -m vllm.entrypoints.openai.api_server --model m --tensor-parallel-size=2 --disable-custom-all-reduce\n",
        &["disable_custom_all_reduce"],
        "python3 -m vllm.entrypoints.openai.api_server --model m --tensor-parallel-size=2 --disable-custom-all-reduce\n",
    ),
    (
        "python -m form; flag added at the end of the vLLM arguments",
        "python -m vllm.entrypoints.openai.api_server --model m -tp=2 # serve\n",
        &["disable_custom_all_reduce"],
        "python -m vllm.entrypoints.openai.api_server --model m -tp=2 --disable-custom-all-reduce # serve\n",
    ),
    (
        "--flag=value JSON merged in place",
        "vllm serve m --compilation-config='{\"level\": 3, \"cudagraph_mode\": \"FULL\"}' -tp 2\n",
        &["cudagraph_piecewise"],
        "vllm serve m --compilation-config='{\"level\": 3, \"cudagraph_mode\": \"PIECEWISE\"}' -tp 2\n",
    ),
    (
        "-cc JSON without the key: key added, rest kept",
        "vllm serve m -cc '{\"max_capture_size\": 256}'\n",
        &["cudagraph_piecewise"],
        "vllm serve m -cc '{\"cudagraph_mode\": \"PIECEWISE\", \"max_capture_size\": 256}'\n",
    ),
    (
        "dotted -cc. form",
        "vllm serve m -cc.cudagraph_mode=FULL_AND_PIECEWISE -tp 2\n",
        &["cudagraph_piecewise"],
        "vllm serve m -cc.cudagraph_mode=PIECEWISE -tp 2\n",
    ),
    (
        "dotted --compilation-config.cudagraph_mode with a separate value",
        "vllm serve m --compilation-config.cudagraph_mode FULL\n",
        &["cudagraph_piecewise"],
        "vllm serve m --compilation-config.cudagraph_mode PIECEWISE\n",
    ),
    (
        "no compilation config: one is added",
        "vllm serve m -tp 2\n",
        &["cudagraph_piecewise"],
        "vllm serve m -tp 2 --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
    ),
    (
        "env vars: set, replace in an export line, env command",
        "export VLLM_DEEP_GEMM_WARMUP=relax\nenv VLLM_USE_DEEP_GEMM=1 vllm serve m\n",
        &[
            "deep_gemm_warmup_skip",
            "deep_gemm_off",
            "flashinfer_sampler_off",
        ],
        "export VLLM_DEEP_GEMM_WARMUP=skip\nenv VLLM_USE_DEEP_GEMM=0 VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve m\n",
    ),
    (
        "export lines and no prefix: a new variable becomes an export line",
        "#!/bin/bash\nset -euo pipefail\n  export HF_HOME=/data/hf\nvllm serve m\n",
        &["flashinfer_sampler_off"],
        "#!/bin/bash\nset -euo pipefail\n  export HF_HOME=/data/hf\n  export VLLM_USE_FLASHINFER_SAMPLER=0\nvllm serve m\n",
    ),
    (
        "a script with several commands: only the vLLM one changes",
        "#!/usr/bin/env bash\ncd /srv/llm && source .venv/bin/activate\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True nohup vllm serve m -tp 2 > vllm.log 2>&1 &\necho \"started $!\"\n",
        &["drop_expandable_segments", "enforce_eager"],
        "#!/usr/bin/env bash\ncd /srv/llm && source .venv/bin/activate\nPYTORCH_CUDA_ALLOC_CONF='' nohup vllm serve m -tp 2 --enforce-eager > vllm.log 2>&1 &\necho \"started $!\"\n",
    ),
    (
        "docker run: -e edited, new -e before the image, flags after the image's arguments",
        "docker run --gpus all --ipc=host \\\n  -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512 \\\n  -p 8000:8000 vllm/vllm-openai:v0.24.0 \\\n  --model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\n",
        &[
            "drop_expandable_segments",
            "deep_gemm_off",
            "cudagraph_piecewise",
        ],
        "docker run --gpus all --ipc=host \\\n  -e PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 \\\n  -p 8000:8000 -e VLLM_USE_DEEP_GEMM=0 vllm/vllm-openai:v0.24.0 \\\n  --model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2 \\\n  --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
    ),
    (
        "docker run --env=NAME=value and vllm serve after the image",
        "docker run --rm --env=PYTORCH_ALLOC_CONF=expandable_segments:True img:1 vllm serve m\n",
        &["drop_expandable_segments"],
        "docker run --rm --env=PYTORCH_ALLOC_CONF='' img:1 vllm serve m\n",
    ),
    (
        "docker -e NAME takes the caller's value: made explicit",
        "docker run -e PYTORCH_CUDA_ALLOC_CONF -e HF_TOKEN vllm/vllm-openai --model m\n",
        &["drop_expandable_segments"],
        "docker run -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False -e HF_TOKEN vllm/vllm-openai --model m\n",
    ),
    (
        "compose: environment list, string command",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512\n      - HF_TOKEN=${HF_TOKEN}\n    command: --model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\n  web:\n    image: nginx\n",
        &[
            "drop_expandable_segments",
            "disable_custom_all_reduce",
            "deep_gemm_off",
        ],
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512\n      - HF_TOKEN=${HF_TOKEN}\n      - VLLM_USE_DEEP_GEMM=0\n    command: --model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2 --disable-custom-all-reduce\n  web:\n    image: nginx\n",
    ),
    (
        "compose: environment map, block-list command",
        "services:\n  llm:\n    image: vllm/vllm-openai:latest\n    environment:\n      PYTORCH_CUDA_ALLOC_CONF: \"expandable_segments:True\"\n      VLLM_USE_DEEP_GEMM: \"1\"\n    command:\n      - --model\n      - Qwen/Qwen3.6-27B-FP8\n      - --compilation-config\n      - '{\"cudagraph_mode\": \"FULL_AND_PIECEWISE\"}'\n",
        &[
            "drop_expandable_segments",
            "deep_gemm_off",
            "flashinfer_sampler_off",
            "cudagraph_piecewise",
            "enforce_eager",
        ],
        "services:\n  llm:\n    image: vllm/vllm-openai:latest\n    environment:\n      PYTORCH_CUDA_ALLOC_CONF: \"\"\n      VLLM_USE_DEEP_GEMM: \"0\"\n      VLLM_USE_FLASHINFER_SAMPLER: \"0\"\n    command:\n      - --model\n      - Qwen/Qwen3.6-27B-FP8\n      - --compilation-config\n      - '{\"cudagraph_mode\": \"PIECEWISE\"}'\n      - --enforce-eager\n",
    ),
    (
        "compose: flow-list command and no environment block",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
        &["deep_gemm_warmup_skip", "cudagraph_piecewise"],
        "services:\n  vllm:\n    environment:\n      - VLLM_DEEP_GEMM_WARMUP=skip\n    image: vllm/vllm-openai:v0.24.0\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\", \"--compilation-config\", \"{\\\"cudagraph_mode\\\": \\\"PIECEWISE\\\"}\"]\n",
    ),
    (
        "a remedy that patches vLLM leaves the launch alone",
        "vllm serve m -tp 2\n",
        &["apply_pr_43923"],
        "vllm serve m -tp 2\n",
    ),
    (
        "unicode and quoting survive untouched around the edit",
        "MODEL_NAME='模型 α' vllm serve \"/models/Qwen 3\" --served-model-name \"$MODEL_NAME\" --chat-template $'a\\tb'\n",
        &["enforce_eager"],
        "MODEL_NAME='模型 α' vllm serve \"/models/Qwen 3\" --served-model-name \"$MODEL_NAME\" --chat-template $'a\\tb' --enforce-eager\n",
    ),
];

#[test]
fn every_form_gives_the_exact_output() {
    let mut failures = Vec::new();
    for (name, input, ids, expected) in TABLE {
        let out = fix(input, ids);
        if out.text != *expected {
            failures.push(format!(
                "--- {name}\nexpected:\n{expected}\ngot:\n{}\n",
                out.text
            ));
        }
        // The result parses again, and a second run of the same remedies is a no-op.
        let again = fix(&out.text, ids);
        if again.text != out.text {
            failures.push(format!("--- {name}: not idempotent:\n{}", again.text));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn notes_explain_which_variable_is_in_effect() {
    let o = fix(TABLE[2].1, &["drop_expandable_segments"]);
    assert!(has_note(
        &o,
        "PYTORCH_ALLOC_CONF is in effect because this command does not set PYTORCH_CUDA_ALLOC_CONF"
    ));
    let o = fix(TABLE[3].1, &["drop_expandable_segments"]);
    assert!(
        has_note(
            &o,
            "PYTORCH_CUDA_ALLOC_CONF= does not turn expandable_segments on"
        ),
        "{:?}",
        o.notes
    );
    let o = fix(TABLE[4].1, &["drop_expandable_segments"]);
    assert!(
        has_note(
            &o,
            "PYTORCH_ALLOC_CONF also turns expandable_segments on but is ignored"
        ),
        "{:?}",
        o.notes
    );
    assert!(has_note(
        &o,
        "kept the other options: garbage_collection_threshold:0.6"
    ));
    let o = fix(TABLE[5].1, &["drop_expandable_segments"]);
    assert!(
        has_note(&o, "would come from the environment that runs it"),
        "{:?}",
        o.notes
    );
    let o = fix(TABLE[1].1, &["drop_expandable_segments"]);
    assert!(has_note(
        &o,
        "an empty PYTORCH_CUDA_ALLOC_CONF still masks PYTORCH_ALLOC_CONF"
    ));
    let o = fix("vllm serve m", &["apply_pr_43923"]);
    assert!(has_note(&o, "sm120-doctor patch-script --pr 43923"));
    assert!(!o.changed());
}

#[test]
fn docker_and_compose_notes() {
    let o = fix(
        "export A=1\ndocker run --env-file ./vllm.env -e HF_TOKEN vllm/vllm-openai --model m\n",
        &["enforce_eager"],
    );
    assert!(has_note(&o, "--env-file ./vllm.env"), "{:?}", o.notes);
    assert!(
        has_note(&o, "-e HF_TOKEN: the container takes HF_TOKEN"),
        "{:?}",
        o.notes
    );
    assert!(has_note(
        &o,
        "variables exported in the shell do not reach the container"
    ));
}

#[test]
fn broken_continuations_are_reported_with_their_line() {
    // Bash runs these; what it loses is a warning with the line, and the fix still applies.
    let cases = [
        (
            "vllm serve m \\\n# --enforce-eager\n  -tp 2\n",
            "launch:3:",
            "on line 2, a comment line follows a backslash continuation",
        ),
        (
            "vllm serve m -tp 2\\\n--enforce-eager\n",
            "launch:1:",
            "bash joins them into the one word `2--enforce-eager`",
        ),
        (
            "vllm serve m \\ \n  -tp 2\n",
            "launch:1:",
            "a space follows the backslash",
        ),
        (
            "vllm serve m \\\n\n  -tp 2\n",
            "launch:3:",
            "an empty line follows a backslash continuation",
        ),
        (
            "export VLLM_USE_DEEP_GEMM=0 \\\n# c\n  VLLM_DEEP_GEMM_WARMUP=skip\nvllm serve m\n",
            "launch:3:",
            "VLLM_DEEP_GEMM_WARMUP=skip sets a shell variable that is never exported",
        ),
    ];
    for (text, line, what) in cases {
        let o = fix(text, &["disable_custom_all_reduce"]);
        assert!(
            o.warnings
                .iter()
                .any(|w| w.contains(line) && w.contains(what)),
            "{text:?}: {:?}",
            o.warnings
        );
    }
    // What bash cannot run at all is still an input error, with its line and column.
    let e = fix_err("vllm serve 'm -tp 2\n", &["enforce_eager"]);
    assert!(
        e.contains("line 1, column 12: unterminated single quote"),
        "{e}"
    );
    let e = fix_err("vllm serve \"$(\" -tp 2\n", &["enforce_eager"]);
    assert!(e.contains("line 1, column 13: `$(` is never closed"), "{e}");
}

#[test]
fn what_the_tool_cannot_do_safely_is_an_error() {
    let e = fix_err(
        "vllm serve m --compilation-config 3\n",
        &["cudagraph_piecewise"],
    );
    assert!(e.contains("\"3\" is not a JSON object"), "{e}");
    // `-O3` is --optimization-level since vLLM 0.12 (PR #26847), not a compilation config: the
    // mode goes into a compilation config of its own, which the level does not override.
    let o = fix("vllm serve m -O3\n", &["cudagraph_piecewise"]);
    assert_eq!(
        o.text,
        "vllm serve m -O3 --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n"
    );
    let e = fix_err(
        "PYTORCH_CUDA_ALLOC_CONF=$CONF vllm serve m\n",
        &["drop_expandable_segments"],
    );
    assert!(e.contains("shell expansion"), "{e}");
    let e = fix_err("echo hello\n", &["enforce_eager"]);
    assert!(e.contains("no vLLM command found"), "{e}");
    let e = fix_err("vllm serve m\n", &["enforce_eager", "no_such_remedy"]);
    assert!(
        e.contains("unknown remedy \"no_such_remedy\"") && e.contains("drop_expandable_segments"),
        "{e}"
    );
    // A folded command takes the flag at the end of its last line.
    let o = fix(
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: >\n      --model m\n      -tp 2\n",
        &["enforce_eager"],
    );
    assert_eq!(
        o.text,
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: >\n      --model m\n      -tp 2 --enforce-eager\n"
    );
}

/// Edits no shipped remedy uses yet (remove_flag, unset_env), straight from the `Edit` enum.
#[test]
fn remove_flag_and_unset_env_in_every_form() {
    use sm120_doctor::kb::schema::Edit;
    use sm120_doctor::remedy::rewrite::apply_edit;
    let rm = |f: &str| Edit::RemoveFlag { flag: f.into() };
    let unset = |n: &str| Edit::UnsetEnv { name: n.into() };
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "vllm serve m --enforce-eager -tp 2\n",
            rm("--enforce-eager"),
            "vllm serve m -tp 2\n",
        ),
        (
            "vllm serve m \\\n  -tp 2 \\\n  --compilation-config '{\"cudagraph_mode\": \"FULL\"}'\n",
            rm("-cc"),
            "vllm serve m \\\n  -tp 2\n",
        ),
        (
            "A=1 VLLM_USE_DEEP_GEMM=0 vllm serve m\n",
            unset("VLLM_USE_DEEP_GEMM"),
            "A=1 vllm serve m\n",
        ),
        (
            "export A=1 VLLM_USE_DEEP_GEMM=0\nexport VLLM_USE_DEEP_GEMM=0\nvllm serve m\n",
            unset("VLLM_USE_DEEP_GEMM"),
            "export A=1\nvllm serve m\n",
        ),
        (
            "docker run -e VLLM_USE_DEEP_GEMM=0 --rm img --model m --enforce-eager\n",
            unset("VLLM_USE_DEEP_GEMM"),
            "docker run --rm img --model m --enforce-eager\n",
        ),
        (
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    environment:\n      A: \"1\"\n      VLLM_USE_DEEP_GEMM: \"0\"\n    command:\n      - --enforce-eager\n      - --model\n      - m\n",
            rm("--enforce-eager"),
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    environment:\n      A: \"1\"\n      VLLM_USE_DEEP_GEMM: \"0\"\n    command:\n      - --model\n      - m\n",
        ),
        (
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    environment:\n      A: \"1\"\n      VLLM_USE_DEEP_GEMM: \"0\"\n    command:\n      - --model\n      - m\n",
            unset("VLLM_USE_DEEP_GEMM"),
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    environment:\n      A: \"1\"\n    command:\n      - --model\n      - m\n",
        ),
        (
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"--enforce-eager\", \"--model\", \"m\"]\n",
            rm("--enforce-eager"),
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"--model\", \"m\"]\n",
        ),
        (
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"--model\", \"m\", \"--enforce-eager\"]\n",
            rm("--enforce-eager"),
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"--model\", \"m\"]\n",
        ),
        (
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: --model m -tp 2 --enforce-eager\n",
            rm("--enforce-eager"),
            "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: --model m -tp 2\n",
        ),
    ];
    let mut failures = Vec::new();
    for (input, edit, expected) in cases {
        match apply_edit(input, "t", &edit, kb()) {
            Ok(step) if step.text == expected => {}
            Ok(step) => failures.push(format!("{edit:?} on\n{input}\ngot\n{}", step.text)),
            Err(e) => failures.push(format!("{edit:?} on\n{input}\nerror {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}
