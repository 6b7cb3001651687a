//! Table tests per launch form (every form `fix` claims to edit): each form × each remedy (and the two edits no shipped
//! remedy uses yet), the exact bytes of every file that changes. Every case also checks that the
//! other files stay byte-identical, that the result reads again, and that a second run changes
//! nothing (idempotent).

use sm120_doctor::kb::schema::Edit;
use sm120_doctor::launch::{self, Select, SourceFile};
use sm120_doctor::remedy::{self, rewrite};

static KB: std::sync::LazyLock<sm120_doctor::kb::KnowledgeBase> = std::sync::LazyLock::new(|| {
    sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
});

enum Expect {
    /// The files that change, with their whole new text.
    Files(&'static [(&'static str, &'static str)]),
    /// Nothing to change.
    Unchanged,
    /// Refused, with this message.
    Err(&'static str),
}

struct Form {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    service: Option<&'static str>,
    container: Option<&'static str>,
    cases: &'static [(&'static str, Expect)],
}

/// Apply a remedy id, or `unset:NAME` / `remove:--flag` (edits with no shipped remedy).
fn apply(
    files: &[SourceFile],
    sel: &Select,
    what: &str,
) -> Result<(Vec<String>, Vec<String>), String> {
    let edit = if let Some(name) = what.strip_prefix("unset:") {
        Some(Edit::UnsetEnv { name: name.into() })
    } else {
        what.strip_prefix("remove:")
            .map(|flag| Edit::RemoveFlag { flag: flag.into() })
    };
    match edit {
        Some(edit) => rewrite::apply_edit_files(files, sel, "t", &edit, &KB)
            .map(|s| (s.texts, s.notes))
            .map_err(|e| e.to_string()),
        None => remedy::fix_files(files, sel, &KB, &[what.to_string()])
            .map(|o| (o.texts, o.notes))
            .map_err(|e| e.to_string()),
    }
}

fn sources(names: &[&str], texts: &[String]) -> Vec<SourceFile> {
    names
        .iter()
        .zip(texts)
        .map(|(n, t)| SourceFile::new(*n, t.clone()))
        .collect()
}

#[test]
fn every_form_and_remedy_gives_the_exact_bytes() {
    let mut failures = Vec::new();
    for form in FORMS {
        let names: Vec<&str> = form.files.iter().map(|f| f.0).collect();
        let originals: Vec<String> = form.files.iter().map(|f| f.1.to_string()).collect();
        let files = sources(&names, &originals);
        let sel = Select {
            service: form.service.map(String::from),
            container: form.container.map(String::from),
        };
        for (what, expect) in form.cases {
            let got = apply(&files, &sel, what);
            let label = format!("{} × {what}", form.name);
            let texts = match (got, expect) {
                (Err(e), Expect::Err(want)) => {
                    if !e.contains(want) {
                        failures.push(format!("{label}: error {e:?}, expected {want:?}"));
                    }
                    continue;
                }
                (Err(e), _) => {
                    failures.push(format!("{label}: unexpected error {e}"));
                    continue;
                }
                (Ok((texts, _)), Expect::Err(want)) => {
                    failures.push(format!("{label}: expected error {want:?}, got {texts:?}"));
                    continue;
                }
                (Ok((texts, _)), _) => texts,
            };
            let want: Vec<String> = originals
                .iter()
                .zip(&names)
                .map(|(orig, name)| match expect {
                    Expect::Files(changed) => changed
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(orig.clone(), |(_, t)| t.to_string()),
                    _ => orig.clone(),
                })
                .collect();
            if texts != want {
                failures.push(format!("{label}:\nexpected {want:#?}\ngot {texts:#?}"));
                continue;
            }
            let after = sources(&names, &texts);
            if let Err(e) = launch::locate_files(&after, &sel) {
                failures.push(format!("{label}: the result does not read: {e}"));
            }
            match apply(&after, &sel, what) {
                Ok((again, _)) if again == texts => {}
                Ok((again, _)) => failures.push(format!("{label}: not idempotent: {again:#?}")),
                Err(e) => failures.push(format!("{label}: second run failed: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Where a value exported on the host would still win, the fix says so.
#[test]
fn compose_defaults_say_that_the_host_wins() {
    let form = &FORMS[7];
    let files: Vec<SourceFile> = form
        .files
        .iter()
        .map(|(n, t)| SourceFile::new(*n, *t))
        .collect();
    let (_, notes) = apply(&files, &Select::default(), "drop_expandable_segments").expect("fix");
    assert!(
        notes.iter().any(|n| n.contains(
            "PYTORCH_CUDA_ALLOC_CONF is a compose default: a value of PYTORCH_CUDA_ALLOC_CONF \
             exported on the host (or set in .env) would still win over it"
        )),
        "{notes:?}"
    );
    let form = &FORMS[8];
    let files: Vec<SourceFile> = form
        .files
        .iter()
        .map(|(n, t)| SourceFile::new(*n, *t))
        .collect();
    let (_, notes) = apply(&files, &Select::default(), "drop_expandable_segments").expect("fix");
    assert!(
        notes.iter().any(|n| n.contains(
            "comes from PCAC in .env; a value of PCAC exported on the host would still win"
        )),
        "{notes:?}"
    );
}

/// Several vLLM launches in one file and none named: refused with the list.
#[test]
fn several_launches_are_refused_with_the_list() {
    for (i, want) in [
        (6, "--service bee"),
        (9, "a (line 2, --service a)"),
        (11, "--container Pod/p/b"),
    ] {
        let form = &FORMS[i];
        let files: Vec<SourceFile> = form
            .files
            .iter()
            .map(|(n, t)| SourceFile::new(*n, *t))
            .collect();
        let e = apply(&files, &Select::default(), "enforce_eager").expect_err("ambiguous");
        assert!(e.contains(want), "{}: {e}", form.name);
    }
}

const FORMS: &[Form] = &[
    Form {
        name: "env file (compose .env dialect)",
        files: &[(
            ".env",
            "# vLLM environment\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512   # allocator\nVLLM_USE_DEEP_GEMM=1\nHF_HOME='/data/hf'\n",
        )],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    ".env",
                    "# vLLM environment\nPYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512   # allocator\nVLLM_USE_DEEP_GEMM=1\nHF_HOME='/data/hf'\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    ".env",
                    "# vLLM environment\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512   # allocator\nVLLM_USE_DEEP_GEMM=0\nHF_HOME='/data/hf'\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    ".env",
                    "# vLLM environment\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512   # allocator\nVLLM_USE_DEEP_GEMM=1\nHF_HOME='/data/hf'\nVLLM_USE_FLASHINFER_SAMPLER=0\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Err(
                    "remedy enforce_eager: .env is an env file with no vLLM command, so there are no flags to change; give the script, compose file or unit that runs vLLM",
                ),
            ),
            (
                "cudagraph_piecewise",
                Expect::Err(
                    "remedy cudagraph_piecewise: .env is an env file with no vLLM command, so there are no flags to change; give the script, compose file or unit that runs vLLM",
                ),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    ".env",
                    "# vLLM environment\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512   # allocator\nHF_HOME='/data/hf'\n",
                )]),
            ),
            ("remove:--tensor-parallel-size", Expect::Unchanged),
        ],
    },
    Form {
        name: "docker --env-file given alongside",
        files: &[
            (
                "run.sh",
                "docker run --gpus all --env-file ./vllm.env \\\n  vllm/vllm-openai:v0.24.0 --model m --tensor-parallel-size 2\n",
            ),
            (
                "vllm.env",
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=1\n",
            ),
        ],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "vllm.env",
                    "PYTORCH_CUDA_ALLOC_CONF=\nVLLM_USE_DEEP_GEMM=1\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "vllm.env",
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=0\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "run.sh",
                    "docker run --gpus all --env-file ./vllm.env \\\n  -e VLLM_USE_FLASHINFER_SAMPLER=0 vllm/vllm-openai:v0.24.0 --model m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "run.sh",
                    "docker run --gpus all --env-file ./vllm.env \\\n  vllm/vllm-openai:v0.24.0 --model m --tensor-parallel-size 2 \\\n  --enforce-eager\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "run.sh",
                    "docker run --gpus all --env-file ./vllm.env \\\n  vllm/vllm-openai:v0.24.0 --model m --tensor-parallel-size 2 \\\n  --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "vllm.env",
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "run.sh",
                    "docker run --gpus all --env-file ./vllm.env \\\n  vllm/vllm-openai:v0.24.0 --model m\n",
                )]),
            ),
        ],
    },
    Form {
        name: "script sourcing set_env.sh",
        files: &[
            (
                "run.sh",
                "#!/bin/bash\nset -euo pipefail\nsource ./set_env.sh\nvllm serve m \\\n  --tensor-parallel-size 2\n",
            ),
            (
                "set_env.sh",
                "# env for vLLM\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport VLLM_USE_DEEP_GEMM=1\n",
            ),
        ],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "set_env.sh",
                    "# env for vLLM\nexport PYTORCH_CUDA_ALLOC_CONF=''\nexport VLLM_USE_DEEP_GEMM=1\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "set_env.sh",
                    "# env for vLLM\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport VLLM_USE_DEEP_GEMM=0\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "set_env.sh",
                    "# env for vLLM\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport VLLM_USE_DEEP_GEMM=1\nexport VLLM_USE_FLASHINFER_SAMPLER=0\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "run.sh",
                    "#!/bin/bash\nset -euo pipefail\nsource ./set_env.sh\nvllm serve m \\\n  --tensor-parallel-size 2 \\\n  --enforce-eager\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "run.sh",
                    "#!/bin/bash\nset -euo pipefail\nsource ./set_env.sh\nvllm serve m \\\n  --tensor-parallel-size 2 \\\n  --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "set_env.sh",
                    "# env for vLLM\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "run.sh",
                    "#!/bin/bash\nset -euo pipefail\nsource ./set_env.sh\nvllm serve m\n",
                )]),
            ),
        ],
    },
    Form {
        name: "script with set -a",
        files: &[(
            "run.sh",
            "set -a\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=1\nset +a\nvllm serve m --tensor-parallel-size 2\n",
        )],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "run.sh",
                    "set -a\nPYTORCH_CUDA_ALLOC_CONF=''\nVLLM_USE_DEEP_GEMM=1\nset +a\nvllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "run.sh",
                    "set -a\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=0\nset +a\nvllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "run.sh",
                    "set -a\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=1\nset +a\nVLLM_USE_FLASHINFER_SAMPLER=0 vllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "run.sh",
                    "set -a\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=1\nset +a\nvllm serve m --tensor-parallel-size 2 --enforce-eager\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "run.sh",
                    "set -a\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=1\nset +a\nvllm serve m --tensor-parallel-size 2 --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "run.sh",
                    "set -a\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nset +a\nvllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "run.sh",
                    "set -a\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nVLLM_USE_DEEP_GEMM=1\nset +a\nvllm serve m\n",
                )]),
            ),
        ],
    },
    Form {
        name: "sudo -E env -u",
        files: &[(
            "run.sh",
            "export VLLM_USE_DEEP_GEMM=1\nsudo -E env -u PYTORCH_ALLOC_CONF vllm serve m --tensor-parallel-size 2\n",
        )],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "run.sh",
                    "export VLLM_USE_DEEP_GEMM=1\nsudo -E env -u PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False vllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "run.sh",
                    "export VLLM_USE_DEEP_GEMM=0\nsudo -E env -u PYTORCH_ALLOC_CONF vllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "run.sh",
                    "export VLLM_USE_DEEP_GEMM=1\nsudo -E env -u PYTORCH_ALLOC_CONF VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "run.sh",
                    "export VLLM_USE_DEEP_GEMM=1\nsudo -E env -u PYTORCH_ALLOC_CONF vllm serve m --tensor-parallel-size 2 --enforce-eager\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "run.sh",
                    "export VLLM_USE_DEEP_GEMM=1\nsudo -E env -u PYTORCH_ALLOC_CONF vllm serve m --tensor-parallel-size 2 --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "run.sh",
                    "sudo -E env -u PYTORCH_ALLOC_CONF vllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "run.sh",
                    "export VLLM_USE_DEEP_GEMM=1\nsudo -E env -u PYTORCH_ALLOC_CONF vllm serve m\n",
                )]),
            ),
        ],
    },
    Form {
        name: "export chain ended by a comment",
        files: &[(
            "run.sh",
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\n  VLLM_USE_DEEP_GEMM=1 \\\n# the model\nvllm serve m --tensor-parallel-size 2\n",
        )],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "run.sh",
                    "export PYTORCH_CUDA_ALLOC_CONF='' \\\n  VLLM_USE_DEEP_GEMM=1 \\\n# the model\nvllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "run.sh",
                    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\n  VLLM_USE_DEEP_GEMM=0 \\\n# the model\nvllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "run.sh",
                    "export VLLM_USE_FLASHINFER_SAMPLER=0\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\n  VLLM_USE_DEEP_GEMM=1 \\\n# the model\nvllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "run.sh",
                    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\n  VLLM_USE_DEEP_GEMM=1 \\\n# the model\nvllm serve m --tensor-parallel-size 2 --enforce-eager\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "run.sh",
                    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\n  VLLM_USE_DEEP_GEMM=1 \\\n# the model\nvllm serve m --tensor-parallel-size 2 --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "run.sh",
                    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\n# the model\nvllm serve m --tensor-parallel-size 2\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "run.sh",
                    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\n  VLLM_USE_DEEP_GEMM=1 \\\n# the model\nvllm serve m\n",
                )]),
            ),
        ],
    },
    Form {
        name: "two commands, --service",
        files: &[(
            "run.sh",
            "vllm serve a --port 8000 &\nVLLM_USE_DEEP_GEMM=1 vllm serve b --port 8001 --served-model-name bee --tensor-parallel-size 2 &\nwait\n",
        )],
        service: Some("bee"),
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "run.sh",
                    "vllm serve a --port 8000 &\nVLLM_USE_DEEP_GEMM=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False vllm serve b --port 8001 --served-model-name bee --tensor-parallel-size 2 &\nwait\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "run.sh",
                    "vllm serve a --port 8000 &\nVLLM_USE_DEEP_GEMM=0 vllm serve b --port 8001 --served-model-name bee --tensor-parallel-size 2 &\nwait\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "run.sh",
                    "vllm serve a --port 8000 &\nVLLM_USE_DEEP_GEMM=1 VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve b --port 8001 --served-model-name bee --tensor-parallel-size 2 &\nwait\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "run.sh",
                    "vllm serve a --port 8000 &\nVLLM_USE_DEEP_GEMM=1 vllm serve b --port 8001 --served-model-name bee --tensor-parallel-size 2 --enforce-eager &\nwait\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "run.sh",
                    "vllm serve a --port 8000 &\nVLLM_USE_DEEP_GEMM=1 vllm serve b --port 8001 --served-model-name bee --tensor-parallel-size 2 --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}' &\nwait\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "run.sh",
                    "vllm serve a --port 8000 &\nvllm serve b --port 8001 --served-model-name bee --tensor-parallel-size 2 &\nwait\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "run.sh",
                    "vllm serve a --port 8000 &\nVLLM_USE_DEEP_GEMM=1 vllm serve b --port 8001 --served-model-name bee &\nwait\n",
                )]),
            ),
        ],
    },
    Form {
        name: "compose interpolation",
        files: &[(
            "compose.yaml",
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - VLLM_USE_DEEP_GEMM=${DG:-${VLLM_USE_DEEP_GEMM:-1}}\n      - HF_TOKEN\n    command: \"--model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\"\n  web:\n    image: nginx\n",
        )],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-}\n      - VLLM_USE_DEEP_GEMM=${DG:-${VLLM_USE_DEEP_GEMM:-1}}\n      - HF_TOKEN\n    command: \"--model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\"\n  web:\n    image: nginx\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - VLLM_USE_DEEP_GEMM=${DG:-${VLLM_USE_DEEP_GEMM:-0}}\n      - HF_TOKEN\n    command: \"--model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\"\n  web:\n    image: nginx\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - VLLM_USE_DEEP_GEMM=${DG:-${VLLM_USE_DEEP_GEMM:-1}}\n      - HF_TOKEN\n      - VLLM_USE_FLASHINFER_SAMPLER=0\n    command: \"--model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\"\n  web:\n    image: nginx\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - VLLM_USE_DEEP_GEMM=${DG:-${VLLM_USE_DEEP_GEMM:-1}}\n      - HF_TOKEN\n    command: \"--model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2 --enforce-eager\"\n  web:\n    image: nginx\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - VLLM_USE_DEEP_GEMM=${DG:-${VLLM_USE_DEEP_GEMM:-1}}\n      - HF_TOKEN\n    command: \"--model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2 --compilation-config '{\\\"cudagraph_mode\\\": \\\"PIECEWISE\\\"}'\"\n  web:\n    image: nginx\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - HF_TOKEN\n    command: \"--model Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\"\n  web:\n    image: nginx\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - VLLM_USE_DEEP_GEMM=${DG:-${VLLM_USE_DEEP_GEMM:-1}}\n      - HF_TOKEN\n    command: \"--model Qwen/Qwen3.6-27B-FP8\"\n  web:\n    image: nginx\n",
                )]),
            ),
        ],
    },
    Form {
        name: "compose flow map and .env",
        files: &[
            (
                "compose.yaml",
                "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {PYTORCH_CUDA_ALLOC_CONF: \"${PCAC}\", VLLM_USE_DEEP_GEMM: \"1\"}\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
            ),
            (".env", "PCAC=expandable_segments:True\n"),
        ],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(".env", "PCAC=\n")]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {PYTORCH_CUDA_ALLOC_CONF: \"${PCAC}\", VLLM_USE_DEEP_GEMM: \"0\"}\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {PYTORCH_CUDA_ALLOC_CONF: \"${PCAC}\", VLLM_USE_DEEP_GEMM: \"1\", VLLM_USE_FLASHINFER_SAMPLER: \"0\"}\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {PYTORCH_CUDA_ALLOC_CONF: \"${PCAC}\", VLLM_USE_DEEP_GEMM: \"1\"}\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\", \"--enforce-eager\"]\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {PYTORCH_CUDA_ALLOC_CONF: \"${PCAC}\", VLLM_USE_DEEP_GEMM: \"1\"}\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\", \"--compilation-config\", \"{\\\"cudagraph_mode\\\": \\\"PIECEWISE\\\"}\"]\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {PYTORCH_CUDA_ALLOC_CONF: \"${PCAC}\"}\n    command: [\"--model\", \"m\", \"--tensor-parallel-size\", \"2\"]\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {PYTORCH_CUDA_ALLOC_CONF: \"${PCAC}\", VLLM_USE_DEEP_GEMM: \"1\"}\n    command: [\"--model\", \"m\"]\n",
                )]),
            ),
        ],
    },
    Form {
        name: "compose, two services, --service",
        files: &[(
            "compose.yaml",
            "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      VLLM_USE_DEEP_GEMM: \"1\"\n      PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True'\n    command:\n      - --model\n      - b\n      - --tensor-parallel-size\n      - \"2\"\n",
        )],
        service: Some("b"),
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      VLLM_USE_DEEP_GEMM: \"1\"\n      PYTORCH_CUDA_ALLOC_CONF: \"\"\n    command:\n      - --model\n      - b\n      - --tensor-parallel-size\n      - \"2\"\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      VLLM_USE_DEEP_GEMM: \"0\"\n      PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True'\n    command:\n      - --model\n      - b\n      - --tensor-parallel-size\n      - \"2\"\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      VLLM_USE_DEEP_GEMM: \"1\"\n      PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True'\n      VLLM_USE_FLASHINFER_SAMPLER: \"0\"\n    command:\n      - --model\n      - b\n      - --tensor-parallel-size\n      - \"2\"\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      VLLM_USE_DEEP_GEMM: \"1\"\n      PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True'\n    command:\n      - --model\n      - b\n      - --tensor-parallel-size\n      - \"2\"\n      - --enforce-eager\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      VLLM_USE_DEEP_GEMM: \"1\"\n      PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True'\n    command:\n      - --model\n      - b\n      - --tensor-parallel-size\n      - \"2\"\n      - --compilation-config\n      - '{\"cudagraph_mode\": \"PIECEWISE\"}'\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True'\n    command:\n      - --model\n      - b\n      - --tensor-parallel-size\n      - \"2\"\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "compose.yaml",
                    "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    environment:\n      VLLM_USE_DEEP_GEMM: \"1\"\n      PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True'\n    command:\n      - --model\n      - b\n",
                )]),
            ),
        ],
    },
    Form {
        name: "kubernetes deployment",
        files: &[(
            "deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n            - --tensor-parallel-size\n            - \"2\"\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: expandable_segments:True\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n",
        )],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n            - --tensor-parallel-size\n            - \"2\"\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: \"\"\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n            - --tensor-parallel-size\n            - \"2\"\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: expandable_segments:True\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n            - name: VLLM_USE_DEEP_GEMM\n              value: \"0\"\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n            - --tensor-parallel-size\n            - \"2\"\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: expandable_segments:True\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n            - name: VLLM_USE_FLASHINFER_SAMPLER\n              value: \"0\"\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n            - --tensor-parallel-size\n            - \"2\"\n            - --enforce-eager\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: expandable_segments:True\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n            - --tensor-parallel-size\n            - \"2\"\n            - --compilation-config\n            - '{\"cudagraph_mode\": \"PIECEWISE\"}'\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: expandable_segments:True\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n",
                )]),
            ),
            ("unset:VLLM_USE_DEEP_GEMM", Expect::Unchanged),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: expandable_segments:True\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n",
                )]),
            ),
        ],
    },
    Form {
        name: "kubernetes pod, sh -c, --container",
        files: &[(
            "pod.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b --tensor-parallel-size 2\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"1\"\n",
        )],
        service: None,
        container: Some("b"),
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b --tensor-parallel-size 2\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"1\"\n        - name: PYTORCH_CUDA_ALLOC_CONF\n          value: \"expandable_segments:False\"\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b --tensor-parallel-size 2\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"0\"\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b --tensor-parallel-size 2\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"1\"\n        - name: VLLM_USE_FLASHINFER_SAMPLER\n          value: \"0\"\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b --tensor-parallel-size 2 --enforce-eager\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"1\"\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b --tensor-parallel-size 2 --compilation-config '{\\\"cudagraph_mode\\\": \\\"PIECEWISE\\\"}'\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"1\"\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b --tensor-parallel-size 2\"]\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b\"]\n      env:\n        - name: VLLM_USE_DEEP_GEMM\n          value: \"1\"\n",
                )]),
            ),
        ],
    },
    Form {
        name: "helm values",
        files: &[(
            "values.yaml",
            "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"1\"\n",
        )],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "values.yaml",
                    "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"\"\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"1\"\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[(
                    "values.yaml",
                    "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"0\"\n",
                )]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "values.yaml",
                    "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"1\"\n      - name: VLLM_USE_FLASHINFER_SAMPLER\n        value: \"0\"\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "values.yaml",
                    "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\", \"--enforce-eager\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"1\"\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "values.yaml",
                    "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\", \"--compilation-config\", \"{\\\"cudagraph_mode\\\": \\\"PIECEWISE\\\"}\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"1\"\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[(
                    "values.yaml",
                    "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n",
                )]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "values.yaml",
                    "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enablePrefixCaching: true\n      maxModelLen: 4096\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n      - name: VLLM_USE_DEEP_GEMM\n        value: \"1\"\n",
                )]),
            ),
        ],
    },
    Form {
        name: "systemd unit + EnvironmentFile",
        files: &[
            (
                "vllm.service",
                "[Unit]\nDescription=vLLM\n\n[Service]\nEnvironment=\"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\" HF_HOME=/data/hf\nEnvironmentFile=-/etc/vllm/vllm.env\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen3.6-27B-FP8 \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n",
            ),
            ("/etc/vllm/vllm.env", "# overrides\nVLLM_USE_DEEP_GEMM=1\n"),
        ],
        service: None,
        container: None,
        cases: &[
            (
                "drop_expandable_segments",
                Expect::Files(&[(
                    "vllm.service",
                    "[Unit]\nDescription=vLLM\n\n[Service]\nEnvironment=\"PYTORCH_CUDA_ALLOC_CONF=\" HF_HOME=/data/hf\nEnvironmentFile=-/etc/vllm/vllm.env\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen3.6-27B-FP8 \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n",
                )]),
            ),
            (
                "deep_gemm_off",
                Expect::Files(&[("/etc/vllm/vllm.env", "# overrides\nVLLM_USE_DEEP_GEMM=0\n")]),
            ),
            (
                "flashinfer_sampler_off",
                Expect::Files(&[(
                    "vllm.service",
                    "[Unit]\nDescription=vLLM\n\n[Service]\nEnvironment=\"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\" HF_HOME=/data/hf\nEnvironment=VLLM_USE_FLASHINFER_SAMPLER=0\nEnvironmentFile=-/etc/vllm/vllm.env\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen3.6-27B-FP8 \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n",
                )]),
            ),
            (
                "enforce_eager",
                Expect::Files(&[(
                    "vllm.service",
                    "[Unit]\nDescription=vLLM\n\n[Service]\nEnvironment=\"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\" HF_HOME=/data/hf\nEnvironmentFile=-/etc/vllm/vllm.env\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen3.6-27B-FP8 \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768 \\\n    --enforce-eager\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n",
                )]),
            ),
            (
                "cudagraph_piecewise",
                Expect::Files(&[(
                    "vllm.service",
                    "[Unit]\nDescription=vLLM\n\n[Service]\nEnvironment=\"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\" HF_HOME=/data/hf\nEnvironmentFile=-/etc/vllm/vllm.env\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen3.6-27B-FP8 \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768 \\\n    --compilation-config \"{\\\"cudagraph_mode\\\": \\\"PIECEWISE\\\"}\"\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n",
                )]),
            ),
            (
                "unset:VLLM_USE_DEEP_GEMM",
                Expect::Files(&[("/etc/vllm/vllm.env", "# overrides\n")]),
            ),
            (
                "remove:--tensor-parallel-size",
                Expect::Files(&[(
                    "vllm.service",
                    "[Unit]\nDescription=vLLM\n\n[Service]\nEnvironment=\"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\" HF_HOME=/data/hf\nEnvironmentFile=-/etc/vllm/vllm.env\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen3.6-27B-FP8 \\\n    --max-model-len 32768\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n",
                )]),
            ),
        ],
    },
];
