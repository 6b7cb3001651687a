//! The allocator/IPC scenarios of the engine issue (S1–S7), through the library API.

use sm120_doctor::engine::classify::LogText;
use sm120_doctor::engine::{self, Answers, Diagnosis, Mode};
use sm120_doctor::import::{self, collect_env};
use sm120_doctor::kb::{self, schema::Severity};
use sm120_doctor::launch::parse_launch;
use sm120_doctor::snapshot::{GpuPair, HostSnapshot, Probed};

fn kb() -> kb::KnowledgeBase {
    kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB is valid")
}

fn run(snap: &HostSnapshot, logs: &[LogText]) -> Diagnosis {
    engine::diagnose(&kb(), snap, &Answers::new(), logs, Mode::Failures)
}

fn with_launch(mut snap: HostSnapshot, cmd: &str) -> HostSnapshot {
    snap.launch = Probed::Value(parse_launch(cmd).expect("launch parses"));
    snap
}

/// The demo host with its environment replaced.
fn demo_with_env(vars: &[(&str, &str)]) -> HostSnapshot {
    let mut s = import::demo_snapshot();
    if let Some(env) = s.env.value_mut() {
        env.vars = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    }
    s
}

fn finding<'a>(d: &'a Diagnosis, class: &str) -> &'a engine::Finding {
    d.findings
        .iter()
        .find(|f| f.class == class)
        .unwrap_or_else(|| panic!("no {class} finding in {:#?}", d.findings))
}

fn allocator_ipc_error(d: &Diagnosis) -> bool {
    d.findings
        .iter()
        .any(|f| f.class == "allocator_ipc" && f.severity == Severity::Error)
}

fn h200_host() -> HostSnapshot {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200x2/");
    let text = std::fs::read_to_string(format!("{dir}torch-collect-env.txt")).expect("fixture")
        + &std::fs::read_to_string(format!("{dir}nvidia-smi-topo.txt")).expect("fixture");
    collect_env::parse("h200x2/torch-collect-env.txt", &text).expect("H200 capture parses")
}

#[test]
fn s1_demo_is_allocator_ipc_with_remedies_in_cost_order() {
    let snap = import::demo_snapshot();
    let log = LogText {
        name: "seed.log".into(),
        text: import::demo::LOG.into(),
    };
    let d = run(&snap, &[log]);
    let f = finding(&d, "allocator_ipc");
    assert_eq!(f.id, "allocator_ipc");
    assert_eq!(f.severity, Severity::Error);
    let ids: Vec<&str> = f.remedies.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "drop_expandable_segments",
            "apply_pr_43923",
            "disable_custom_all_reduce",
            "enforce_eager"
        ]
    );
    assert!(
        f.log_lines
            .iter()
            .any(|m| m.text.contains("custom_all_reduce.cuh:455"))
    );
    assert!(
        f.does_not_fix.iter().any(|t| t.contains("independent")),
        "must say what it does not fix"
    );
    assert_eq!(
        d.findings[0].class, "allocator_ipc",
        "the crash is listed first"
    );
}

#[test]
fn s1_demo_without_a_log_predicts_the_crash_from_configuration() {
    let d = run(&import::demo_snapshot(), &[]);
    let f = finding(&d, "allocator_ipc");
    assert_eq!(f.id, "allocator_ipc_will_crash");
    assert!(
        f.evidence.iter().any(|e| e
            .to_string()
            .contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn s2_same_host_default_allocator_is_not_allocator_ipc() {
    let snap = with_launch(
        demo_with_env(&[]),
        "vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2",
    );
    let d = run(&snap, &[]);
    assert!(!allocator_ipc_error(&d));
    assert_eq!(
        finding(&d, "allocator_ipc").id,
        "allocator_ipc_default_allocator"
    );
}

#[test]
fn s3_h200_capture_with_expandable_and_tp2_is_allocator_ipc_and_not_sm120() {
    let snap = with_launch(
        h200_host(),
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2",
    );
    let gpus = snap.gpus.value().expect("gpus");
    assert_eq!(gpus.len(), 2);
    assert!(
        gpus.iter()
            .all(|g| g.compute_capability.value().is_some_and(|c| c.major == 9)),
        "H200 is SM90"
    );
    let d = run(&snap, &[]);
    assert!(allocator_ipc_error(&d), "{:#?}", d.walks);
    assert_eq!(
        d.facts.get("gpu.any_sm12x").value,
        sm120_doctor::kb::expr::Value::Bool(false)
    );
    let plan = sm120_doctor::engine::plan::for_findings(
        &kb(),
        &d,
        &snap,
        &sm120_doctor::engine::plan::Choices::default(),
    );
    let text = sm120_doctor::report::check::check_text(
        &kb(),
        &snap,
        &d,
        &plan,
        sm120_doctor::report::Style::plain(),
    );
    assert!(text.contains("not SM120"), "{text}");
}

#[test]
fn s3_h200_expandable_capture_reads_the_allocator_line() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200x2/");
    let text =
        std::fs::read_to_string(format!("{dir}torch-collect-env-expandable.txt")).expect("fixture");
    let snap = collect_env::parse("expandable.txt", &text).expect("parses");
    let snap = with_launch(snap, "vllm serve Qwen/Qwen3-32B -tp 2");
    let d = run(&snap, &[]);
    assert_eq!(
        d.facts.get("alloc.conf").value,
        sm120_doctor::kb::expr::Value::Str("expandable_segments:True,max_split_size_mb:512".into())
    );
    assert_eq!(
        d.facts.get("alloc.expandable_segments").value,
        sm120_doctor::kb::expr::Value::Bool(true)
    );
    assert_eq!(
        d.facts.get("alloc.var").value,
        sm120_doctor::kb::expr::Value::Str("PYTORCH_CUDA_ALLOC_CONF".into())
    );
}

#[test]
fn s4_tp1_with_expandable_is_not_allocator_ipc() {
    let snap = with_launch(import::demo_snapshot(), "vllm serve Qwen/Qwen3.6-27B-FP8");
    let d = run(&snap, &[]);
    assert!(!allocator_ipc_error(&d));
    assert_eq!(finding(&d, "allocator_ipc").id, "allocator_ipc_tp1");
}

#[test]
fn s5_four_pcie_only_gpus_tp4_is_not_allocator_ipc() {
    let mut snap = import::demo_snapshot();
    if let Some(gpus) = snap.gpus.value_mut() {
        let g = gpus[0].clone();
        for i in 2..4 {
            let mut extra = g.clone();
            extra.index = i;
            gpus.push(extra);
        }
    }
    let mut pairs = Vec::new();
    for a in 0..4 {
        for b in a + 1..4 {
            pairs.push(GpuPair {
                a,
                b,
                topology: Probed::Value("PHB".into()),
                p2p: Probed::Value(true),
                nvlink: Probed::Value(false),
            });
        }
    }
    snap.gpu_pairs = Probed::Value(pairs);
    let snap = with_launch(
        snap,
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve deepseek-ai/DeepSeek-V4-Flash -tp 4",
    );
    let d = run(&snap, &[]);
    assert!(!allocator_ipc_error(&d));
    assert_eq!(finding(&d, "allocator_ipc").id, "allocator_ipc_pcie_many");
}

const OOM_LOG: &str = "(EngineCore pid=311) ERROR [core.py:708] EngineCore failed to start.\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total capacity of 94.97 GiB \
of which 1.13 GiB is free. Including non-PyTorch memory, this process has 93.82 GiB memory in use. Of the allocated \
memory 90.21 GiB is allocated by PyTorch, and 2.11 GiB is reserved by PyTorch but unallocated. If reserved but \
unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  \
See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n";

#[test]
fn s6_oom_log_recommending_expandable_is_cuda_oom_never_allocator_ipc() {
    let log = LogText {
        name: "oom.log".into(),
        text: OOM_LOG.into(),
    };
    let c = engine::classify::classify(&kb(), std::slice::from_ref(&log));
    assert_eq!(c.classes, ["cuda_oom"]);
    let snap = with_launch(
        demo_with_env(&[]),
        "vllm serve Qwen/Qwen3.6-27B-FP8 -tp 2 --gpu-memory-utilization 0.95 --max-model-len 262144",
    );
    let d = run(&snap, &[log]);
    assert!(!allocator_ipc_error(&d));
    let f = finding(&d, "cuda_oom");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        f.id, "cuda_oom_hint_collides",
        "TP=2 with graphs: warn against the hint"
    );
}

#[test]
fn s7_empty_cuda_alloc_conf_masks_pytorch_alloc_conf() {
    let snap = with_launch(
        demo_with_env(&[
            ("PYTORCH_CUDA_ALLOC_CONF", ""),
            ("PYTORCH_ALLOC_CONF", "expandable_segments:True"),
        ]),
        "vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2",
    );
    let d = run(&snap, &[]);
    assert!(!allocator_ipc_error(&d));
    let f = finding(&d, "allocator_ipc");
    assert_eq!(f.id, "allocator_ipc_masked");
    assert_eq!(f.severity, Severity::Info);
}

#[test]
fn pytorch_alloc_conf_alone_does_trigger() {
    let snap = with_launch(
        demo_with_env(&[(
            "PYTORCH_ALLOC_CONF",
            "max_split_size_mb:512,expandable_segments:True",
        )]),
        "vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2",
    );
    assert!(allocator_ipc_error(&run(&snap, &[])));
}

#[test]
fn unknown_facts_make_the_engine_ask_instead_of_guessing() {
    // collect-env of a 2-GPU PCIe host: P2P is not in the file, so the walk stops at the P2P question.
    let text = "PyTorch version: 2.11.0+cu130\nGPU models and configuration:\nGPU 0: NVIDIA GeForce RTX 5090\nGPU 1: NVIDIA GeForce RTX 5090\nNvidia driver version: 595.71.05\nCaching allocator config: {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'}\n\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-15\nGPU1\tPHB\t X \t0-15\n";
    let snap = collect_env::parse("5090.txt", text).expect("parses");
    let snap = with_launch(snap, "vllm serve m -tp 2");
    let k = kb();
    let d = engine::diagnose(&k, &snap, &Answers::new(), &[], Mode::Failures);
    let pending: Vec<&str> = d
        .pending()
        .filter_map(|w| match &w.outcome {
            engine::Outcome::NeedsAnswer { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    assert!(pending.contains(&"aipc_p2p"), "{pending:?}");
    // Answering it finishes the walk.
    let answers: Answers = [("aipc_p2p".to_string(), engine::Answer::Yes)]
        .into_iter()
        .collect();
    let d = engine::diagnose(&k, &snap, &answers, &[], Mode::Failures);
    assert!(allocator_ipc_error(&d));
    let walk = d
        .walks
        .iter()
        .find(|w| w.class == "allocator_ipc")
        .expect("walk");
    let p2p = walk
        .steps
        .iter()
        .find(|s| s.node == "aipc_p2p")
        .expect("step");
    assert_eq!(p2p.by, engine::AnsweredBy::User);
    // "Unsure" follows the tree's unsure branch (vLLM trusts torch's peer check by default).
    let answers: Answers = [("aipc_p2p".to_string(), engine::Answer::Unsure)]
        .into_iter()
        .collect();
    assert!(allocator_ipc_error(&engine::diagnose(
        &k,
        &snap,
        &answers,
        &[],
        Mode::Failures
    )));
}

#[test]
fn automatic_steps_record_facts_with_their_source() {
    let d = run(&import::demo_snapshot(), &[]);
    let walk = d
        .walks
        .iter()
        .find(|w| w.class == "allocator_ipc")
        .expect("walk");
    let step = walk
        .steps
        .iter()
        .find(|s| s.node == "aipc_expandable")
        .expect("step");
    match &step.by {
        engine::AnsweredBy::Auto { facts } => {
            let f = facts
                .iter()
                .find(|f| f.name == "alloc.expandable_segments")
                .expect("fact");
            assert_eq!(f.value, sm120_doctor::value::Value::Bool(true));
            assert_eq!(
                f.source, "launch command (the demo's seed_launch.sh)",
                "the demo's export line sets it, and the source names that launch"
            );
        }
        other => panic!("expected an automatic answer, got {other:?}"),
    }
}

#[test]
fn near_miss_signatures_are_not_allocator_ipc() {
    let k = kb();
    for line in [
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'an illegal memory access was encountered'",
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid resource handle'",
        "NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:77, invalid argument (run with NCCL_DEBUG=WARN for details)",
    ] {
        let c = engine::classify::classify(
            &k,
            &[LogText {
                name: "l".into(),
                text: line.into(),
            }],
        );
        assert!(
            !c.classes.contains(&"allocator_ipc".to_string()),
            "{line} → {:?}",
            c.classes
        );
    }
    for line in [
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid argument'",
        "(Worker_TP0 pid=1) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'",
    ] {
        let c = engine::classify::classify(
            &k,
            &[LogText {
                name: "l".into(),
                text: line.into(),
            }],
        );
        assert_eq!(
            c.classes.first().map(String::as_str),
            Some("allocator_ipc"),
            "{line}"
        );
    }
}

fn live_h200(file: &str) -> HostSnapshot {
    let path = format!(
        "{}/tests/fixtures/h200-live-2026-11-30/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    import::load_snapshot(std::path::Path::new(&path)).expect("live H200 fixture loads")
}

#[test]
fn the_ipc_probe_on_the_host_confirms_the_root_cause() {
    let launch = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm serve Qwen/Qwen3-32B -tp 2";
    // The probe ran on the H200 (2026-11-30): VMM memory refused, plain memory exported.
    let d = run(&with_launch(live_h200("snapshot-probe.yaml"), launch), &[]);
    let f = finding(&d, "allocator_ipc");
    assert_eq!(f.id, "allocator_ipc_confirmed_on_host");
    assert!(
        f.evidence.iter().any(|e| e
            .to_string()
            .contains("expandable-segments memory exported: no")),
        "{:?}",
        f.evidence
    );
    // Same host without the probe: predicted from configuration only.
    let d = run(&with_launch(live_h200("snapshot.yaml"), launch), &[]);
    assert_eq!(finding(&d, "allocator_ipc").id, "allocator_ipc_will_crash");
    // Probe result present but the launch is safe: the probe does not invent a finding.
    let d = run(
        &with_launch(
            live_h200("snapshot-probe.yaml"),
            "vllm serve Qwen/Qwen3-32B -tp 2",
        ),
        &[],
    );
    assert!(!allocator_ipc_error(&d));
}
