//! Secrets planted in every field a snapshot has (env, launch args, paths, log lines and the
//! log's name, hostname, user, GPU UUIDs) appear in no report format, and the redacted JSON
//! report still replays to the same findings.

use crate::report_support;

use report_support::*;
use sm120_doctor::engine::{self, Mode};
use sm120_doctor::input::{self, InputArgs};
use sm120_doctor::report::{self, RedactOptions, Report, ReportFormat};
use std::path::PathBuf;

const PLANTED: &[&str] = &[
    "hf_PlantedHfTokenAbCdEfGhIjKlMn0123",
    "hf_SecondPlantedTokenXyZ9876543210",
    "sk-planted-openai-key-0123456789abcdef",
    "PlantedAwsSecretValue",
    "correct-horse-battery-staple-7",
    "Zk9PlantedRandomLookingValue0123456789abcXYZ",
    "pipPlantedPass99",
    "sk-planted-vllm-api-key-4455667788",
    "PlantedBearerToken0123456789",
    "PlantedLogToken0123456789",
    "gpu-box-7",
    "alice",
    "0123abcd-4567",
    "fedcba98-7654",
];

fn planted_input() -> InputArgs {
    InputArgs {
        snapshot: Some(PathBuf::from("tests/fixtures/report/planted_host.yaml")),
        launch_file: Some(PathBuf::from("tests/fixtures/report/planted_launch.sh")),
        logs: vec![PathBuf::from("tests/fixtures/report/planted_crash.log")],
        ..Default::default()
    }
}

/// Diagnose the planted host (its log named under alice's home) and build the report.
fn planted_report(redact: Option<RedactOptions>) -> (Vec<String>, Report) {
    let mut inputs = input::resolve(&planted_input()).expect("inputs");
    inputs.logs[0].name = "/home/alice/logs/gpu-box-7-crash.log".into();
    let d = engine::diagnose(
        &inputs.kb,
        &inputs.snapshot,
        &inputs.answers,
        &inputs.logs,
        Mode::Failures,
    );
    let model = report::prepare(
        &report::ReportInput {
            kb: &inputs.kb,
            snapshot: &inputs.snapshot,
            answers: &inputs.answers,
            logs: &inputs.logs,
            mode: Mode::Failures,
            diagnosis: &d,
            choices: &sm120_doctor::engine::plan::Choices::default(),
            launch_source: None,
        },
        redact,
    )
    .expect("report");
    (finding_keys(&d), model)
}

fn leaks(text: &str) -> Vec<&'static str> {
    PLANTED
        .iter()
        .copied()
        .filter(|s| text.contains(s))
        .collect()
}

#[test]
fn the_planted_values_are_really_in_the_unredacted_report() {
    // Guards the test itself: without redaction every planted value shows up.
    let (_, model) = planted_report(None);
    let json = report::render(&model, ReportFormat::Json);
    assert_eq!(leaks(&json), PLANTED.to_vec());
}

#[test]
fn no_planted_secret_appears_in_any_format() {
    let (keys, model) = planted_report(Some(RedactOptions { gpu_uuids: true }));
    assert!(
        keys.iter()
            .any(|k| k.starts_with("allocator_ipc allocator_ipc ")),
        "the planted host should still show the crash: {keys:?}"
    );
    for f in [
        ReportFormat::Markdown,
        ReportFormat::Json,
        ReportFormat::Text,
    ] {
        let out = report::render(&model, f);
        assert!(
            leaks(&out).is_empty(),
            "{f:?} leaks {:?}:\n{out}",
            leaks(&out)
        );
    }
    let kinds: Vec<&str> = model.redactions.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "secret",
            "credentials_in_url",
            "hostname",
            "user",
            "home_path",
            "gpu_uuid"
        ]
    );
    let md = report::render(&model, ReportFormat::Markdown);
    assert!(
        md.contains("Redacted before writing (values not shown): "),
        "{md}"
    );
    // Names stay so the report is still useful.
    assert!(md.contains("HF_TOKEN"), "{md}");
    assert!(md.contains("[redacted:secret]"), "{md}");
    assert!(md.contains("/home/[redacted:user]/models/Qwen3-8B"), "{md}");
    validate(&report::render(&model, ReportFormat::Json)).expect("schema");
}

#[test]
fn gpu_uuids_stay_unless_asked() {
    let (_, model) = planted_report(Some(RedactOptions::default()));
    let json = report::render(&model, ReportFormat::Json);
    assert!(json.contains("GPU-0123abcd-4567-89ab-cdef-0123456789ab"));
    assert!(!json.contains("alice") && !json.contains("hf_Planted"));
}

#[test]
fn redacted_json_replays_to_the_same_findings() {
    let (keys, model) = planted_report(Some(RedactOptions { gpu_uuids: true }));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("report.json");
    std::fs::write(&path, report::render(&model, ReportFormat::Json)).expect("write");
    let (d2, replayed) = report(
        &snapshot_file(&path),
        false,
        &[],
        Some(RedactOptions { gpu_uuids: true }),
    );
    assert_eq!(finding_keys(&d2), keys);
    // Evidence, log lines and walks read the same once both are redacted.
    for (a, b) in model.findings.iter().zip(&replayed.findings) {
        assert_eq!(a.evidence, b.evidence);
        assert_eq!(a.log_lines, b.log_lines);
    }
    assert_eq!(model.walks, replayed.walks);
    assert_eq!(model.log_matches, replayed.log_matches);
    assert_eq!(model.logs, replayed.logs);
    // Replaying the replay changes nothing more.
    assert!(leaks(&report::render(&replayed, ReportFormat::Markdown)).is_empty());
}

/// A redacted report lists only the variables vLLM's collect-env would, the search paths and
/// those a knowledge-base check reads (taken from the loaded KB); the rest is counted, in the
/// model and in every text format. `--no-redact` lists them all.
#[test]
fn the_redacted_report_lists_only_allowed_variables_and_counts_the_rest() {
    let mut inputs = input::resolve(&planted_input()).expect("inputs");
    let kb_vars = report::host::kb_env_vars(&inputs.kb);
    // A variable a check reads outside every collect-env prefix: listed because the KB reads it.
    assert!(
        kb_vars.contains("FLASHINFER_DISABLE_VERSION_CHECK"),
        "{kb_vars:?}"
    );
    assert!(kb_vars.contains("PYTORCH_CUDA_ALLOC_CONF"), "{kb_vars:?}");
    let sm120_doctor::snapshot::Probed::Value(env) = &mut inputs.snapshot.env else {
        panic!("the planted host has an environment")
    };
    for (k, v) in [
        ("FLASHINFER_DISABLE_VERSION_CHECK", "1"),
        ("NCCL_P2P_DISABLE", "1"),
        ("CUDA_VISIBLE_DEVICES", "0,1"),
        ("GOOGLE_CLOUD_PROJECT", "planted-project"),
        ("REQUESTS_CA_BUNDLE", "/etc/ssl/planted.pem"),
    ] {
        env.vars.insert(k.into(), v.into());
    }
    let all: Vec<String> = env.vars.keys().cloned().collect();
    let d = engine::diagnose(
        &inputs.kb,
        &inputs.snapshot,
        &inputs.answers,
        &inputs.logs,
        Mode::Failures,
    );
    let build = |redact| {
        report::prepare(
            &report::ReportInput {
                kb: &inputs.kb,
                snapshot: &inputs.snapshot,
                answers: &inputs.answers,
                logs: &inputs.logs,
                mode: Mode::Failures,
                diagnosis: &d,
                choices: &sm120_doctor::engine::plan::Choices::default(),
                launch_source: None,
            },
            redact,
        )
        .expect("report")
    };
    let model = build(Some(RedactOptions::default()));
    let listed: Vec<&String> = model
        .snapshot
        .env
        .value()
        .expect("env")
        .vars
        .keys()
        .collect();
    let mut want = vec![
        "CUDA_VISIBLE_DEVICES",
        "FLASHINFER_DISABLE_VERSION_CHECK",
        "LD_LIBRARY_PATH",
        "NCCL_P2P_DISABLE",
        "PYTORCH_CUDA_ALLOC_CONF",
        "VLLM_SOMETHING",
    ];
    want.sort_unstable();
    assert_eq!(listed, want);
    let left_out = all.len() - want.len();
    assert_eq!(model.env_not_listed, left_out);
    assert!(left_out >= 10, "{all:?}");
    for format in [ReportFormat::Markdown, ReportFormat::Text] {
        let text = report::render(&model, format);
        assert!(
            text.lines().any(|l| l.starts_with("Not listed")
                && l.contains(&format!(": {left_out} other variable(s)"))),
            "{format:?}: {text}"
        );
        for gone in [
            "GOOGLE_CLOUD_PROJECT",
            "REQUESTS_CA_BUNDLE",
            "HF_HOME",
            "PIP_INDEX_URL",
        ] {
            assert!(!text.contains(gone), "{format:?} lists {gone}");
        }
    }
    let json = report::render(&model, ReportFormat::Json);
    assert!(!json.contains("GOOGLE_CLOUD_PROJECT"), "{json}");
    assert!(
        json.contains(&format!("\"env_not_listed\": {left_out}")),
        "{json}"
    );
    // Unredacted: every variable, and no count.
    let full = build(None);
    assert_eq!(
        full.snapshot.env.value().expect("env").vars.len(),
        all.len()
    );
    assert_eq!(full.env_not_listed, 0);
    assert!(!report::render(&full, ReportFormat::Markdown).contains("Not listed"));
    assert!(!report::render(&full, ReportFormat::Json).contains("env_not_listed"));
}

mod property {
    use proptest::prelude::*;
    use sm120_doctor::engine::{self, Mode, classify::LogText};
    use sm120_doctor::report::{self, RedactOptions, ReportFormat};
    use sm120_doctor::snapshot::Probed;

    const NAMES: &[&str] = &[
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "OPENAI_API_KEY",
        "WANDB_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "MY_SERVICE_PASSWORD",
        "GITHUB_TOKEN",
        "DB_CREDENTIALS",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn any_secret_value_under_a_secret_name_is_hidden_everywhere(
            name_i in 0..NAMES.len(),
            value in "[A-Za-z0-9_+/=.-]{10,40}",
            user in "[a-z][a-z0-9]{3,10}",
        ) {
            prop_assume!(!["vllm", "root", "user", "users", "ubuntu", "admin", "nvidia", "cuda",
                "docker", "home", "runner", "shared", "none", "null", "info", "error", "warning"]
                .contains(&user.as_str()));
            let name = NAMES[name_i];
            let kb = sm120_doctor::kb::load(None, sm120_doctor::facts::is_known_fact).expect("kb");
            let mut snap = sm120_doctor::import::demo_snapshot();
            if let Probed::Value(env) = &mut snap.env {
                env.vars.insert(name.to_string(), value.clone());
                env.vars.insert("HF_HOME".into(), format!("/home/{user}/.cache/hf"));
            }
            let launch = format!(
                "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n{name}={value} vllm serve /home/{user}/m --tensor-parallel-size 2"
            );
            snap.launch = Probed::Value(sm120_doctor::launch::parse_launch(&launch).expect("launch"));
            let logs = vec![LogText {
                name: format!("/home/{user}/vllm.log"),
                text: format!(
                    "(Worker_TP1 pid=1) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument' {name}={value}\n"
                ),
            }];
            let answers = Default::default();
            let d = engine::diagnose(&kb, &snap, &answers, &logs, Mode::Failures);
            let model = report::prepare(
                &report::ReportInput {
                    kb: &kb,
                    snapshot: &snap,
                    answers: &answers,
                    logs: &logs,
                    mode: Mode::Failures,
                    diagnosis: &d,
                    choices: &sm120_doctor::engine::plan::Choices::default(),
                    launch_source: None,
                },
                Some(RedactOptions::default()),
            )
            .expect("report");
            for f in [ReportFormat::Markdown, ReportFormat::Json, ReportFormat::Text] {
                let out = report::render(&model, f);
                prop_assert!(!out.contains(&value), "{:?} leaks {}", f, value);
                prop_assert!(!out.contains(&format!("/home/{user}")), "{:?} leaks the user", f);
            }
        }
    }
}
