//! Helpers shared by the report tests.
#![allow(dead_code)]

use sm120_doctor::engine::{self, Diagnosis, Mode};
use sm120_doctor::input::{self, InputArgs};
use sm120_doctor::report::{self, RedactOptions, Report};
use std::path::PathBuf;

pub const H200_COLLECT_ENV: &str = "tests/fixtures/report/h200-torch-collect-env-expandable.txt";
pub const H200_LAUNCH: &str = "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2";

pub fn demo() -> InputArgs {
    InputArgs {
        demo: true,
        ..Default::default()
    }
}

pub fn h200() -> InputArgs {
    InputArgs {
        collect_env: Some(PathBuf::from(H200_COLLECT_ENV)),
        launch: Some(H200_LAUNCH.into()),
        ..Default::default()
    }
}

pub fn snapshot_file(path: &std::path::Path) -> InputArgs {
    InputArgs {
        snapshot: Some(path.to_path_buf()),
        ..Default::default()
    }
}

/// Diagnose and build the report the way `sm120-doctor report` does.
pub fn report(
    input: &InputArgs,
    onboard: bool,
    remedies: &[String],
    redact: Option<RedactOptions>,
) -> (Diagnosis, Report) {
    let inputs = input::resolve(input).unwrap_or_else(|e| panic!("inputs: {}", e.0));
    let mode = if onboard { Mode::All } else { Mode::Failures };
    let choices = engine::plan::Choices::preferred(remedies);
    let d = engine::diagnose(
        &inputs.kb,
        &inputs.snapshot,
        &inputs.answers,
        &inputs.logs,
        mode,
    );
    let model = report::prepare(
        &report::ReportInput {
            kb: &inputs.kb,
            snapshot: &inputs.snapshot,
            answers: &inputs.answers,
            logs: &inputs.logs,
            mode,
            diagnosis: &d,
            choices: &choices,
            launch_source: None,
        },
        redact,
    )
    .expect("report");
    (d, model)
}

/// What "the same findings" means: everything the engine concluded, per finding.
pub fn finding_keys(d: &Diagnosis) -> Vec<String> {
    let mut v: Vec<String> = d
        .findings
        .iter()
        .map(|f| {
            format!(
                "{} {} {:?} {:?} remedies={:?}",
                f.class,
                f.id,
                f.severity,
                f.confidence,
                f.remedies.iter().map(|r| r.id.as_str()).collect::<Vec<_>>()
            )
        })
        .collect();
    v.extend(d.pending().map(|w| format!("pending {}", w.class)));
    v
}

/// Validate a JSON report against schema/report.schema.json.
pub fn validate(json: &str) -> Result<(), String> {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("schema/report.schema.json").expect("schema file"),
    )
    .expect("schema is JSON");
    let instance: serde_json::Value = serde_json::from_str(json).expect("report is JSON");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("file:///report.schema.json", schema)
        .expect("add schema");
    let idx = compiler
        .compile("file:///report.schema.json", &mut schemas)
        .map_err(|e| format!("schema does not compile: {e}"))?;
    schemas
        .validate(&instance, idx)
        .map_err(|e| format!("{e:#}"))
}
