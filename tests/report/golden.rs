//! Golden files of every report format for the demo, the H200 host (torch collect-env + a TP=2
//! launch) and an onboarding run; each JSON also validates against the schema.

use crate::report_support;

use report_support::*;
use sm120_doctor::report::{self, RedactOptions, ReportFormat};

fn all_formats(name: &str, input: &sm120_doctor::input::InputArgs, onboard: bool) {
    let (_, model) = report(input, onboard, &[], Some(RedactOptions::default()));
    let md = report::render(&model, ReportFormat::Markdown);
    let json = report::render(&model, ReportFormat::Json);
    let text = report::render(&model, ReportFormat::Text);
    insta::assert_snapshot!(format!("{name}_md"), md);
    insta::assert_snapshot!(format!("{name}_json"), json);
    insta::assert_snapshot!(format!("{name}_text"), text);
    validate(&json)
        .unwrap_or_else(|e| panic!("{name}: JSON report does not match the schema:\n{e}"));
}

#[test]
fn demo_every_format() {
    all_formats("demo", &demo(), false);
}

/// Lines a reader sees in the rendered Markdown: `<details>` bodies are folded (their
/// `<details>` line stands for the one-line summary shown).
fn visible_lines(md: &str) -> usize {
    let mut depth = 0usize;
    let mut n = 0;
    for l in md.lines() {
        match l.trim() {
            "<details>" => {
                if depth == 0 {
                    n += 1;
                }
                depth += 1;
            }
            "</details>" => depth = depth.saturating_sub(1),
            _ if depth == 0 => n += 1,
            _ => {}
        }
    }
    n
}

/// The demo report is paste-ready: the matched lines quoted in their context, the detail
/// folded, about 140 lines visible (the versions and the failing log lines are
/// visible on purpose: a maintainer's first questions).
#[test]
fn demo_markdown_quotes_context_and_folds_detail() {
    let (_, model) = report(&demo(), false, &[], Some(RedactOptions::default()));
    let md = report::render(&model, ReportFormat::Markdown);
    let visible = visible_lines(&md);
    assert!(visible <= 140, "{visible} visible lines:\n{md}");
    assert!(
        md.contains("`demo:seed_crash.log`, lines 1–7:"),
        "the excerpt's range:\n{md}"
    );
    assert!(
        md.contains("> 5  (Worker_TP1 pid=2951) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'"),
        "{md}"
    );
    assert!(
        md.contains(
            "  3  (EngineCore pid=2817) INFO [monitor.py:34] torch.compile takes 38.27 s in total"
        ),
        "a line before the match:\n{md}"
    );
    assert!(md.contains("<summary>Each class's walk"), "{md}");
    assert!(
        !md.contains("sm120-facts") && !md.contains("shared/"),
        "{md}"
    );
}

#[test]
fn h200_every_format() {
    all_formats("h200", &h200(), false);
}

#[test]
fn onboarding_every_format() {
    // The onboarding checklist walks with the failure classes (`--onboard`, mode `all`).
    all_formats("onboard_demo", &demo(), true);
}

#[test]
fn h200_one_gpu_paste_with_tp2_asks_instead_of_a_vacuous_all_pairs() {
    // The paste lists GPU 0 only and the launch is TP=2: "all pairs NVLink/P2P" over no pair is
    // no evidence, so the tool asks (it used to answer yes and predict the crash).
    let (d, model) = report(&h200(), false, &[], Some(RedactOptions::default()));
    let md = report::render(&model, ReportFormat::Markdown);
    assert!(md.contains("NVIDIA H200 (CC 9.0)"), "{md}");
    assert!(
        md.contains("the collect-env paste shows only GPU 0: is this the whole host?"),
        "{md}"
    );
    assert!(
        md.contains("no GPU pair to check the P2P status of (fewer than 2 GPUs seen)"),
        "{md}"
    );
    assert!(!md.contains("topology.all_p2p` = yes"), "{md}");
    assert!(
        d.findings
            .iter()
            .all(|f| f.id != "allocator_ipc_will_crash"),
        "no crash verdict from an empty pair list"
    );
}

#[test]
fn h200_markdown_names_the_host_the_finding_and_the_plan() {
    // Answered: the paste is not the whole host, and the GPUs do P2P.
    let mut input = h200();
    input.answers = vec!["lg_whole_host=no".into(), "aipc_p2p=yes".into()];
    let (_, model) = report(&input, false, &[], Some(RedactOptions::default()));
    let md = report::render(&model, ReportFormat::Markdown);
    assert!(
        md.contains("`allocator_ipc` · error · CONFIRMED upstream · matched: answered by you (1)"),
        "{md}"
    );
    assert!(md.contains("would crash at CUDA graph capture if"), "{md}");
    // In a maintainer's order: verdict, host, versions, then what to run. The
    // cheapest remedy keeps max_split_size_mb and drops only expandable_segments, set for this
    // launch because the host's environment has it.
    let at = |h: &str| md.find(h).unwrap_or_else(|| panic!("{h}:\n{md}"));
    assert!(at("### Verdict") < at("### Host"), "{md}");
    assert!(at("### Host") < at("### Versions"), "{md}");
    assert!(at("### Versions") < at("### Run this"), "{md}");
    assert!(at("### Run this") < at("### Findings"), "{md}");
    assert!(md.contains("\n#### ❌ "), "findings one level below:\n{md}");
    for internal in ["LAUNCH_FILE", "--answer ", "conclusion `"] {
        assert!(!md.contains(internal), "{internal}:\n{md}");
    }
    assert!(
        md.contains(
            "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2"
        ),
        "{md}"
    );
    assert!(
        md.contains("### Your current environment\n\n<details>"),
        "{md}"
    );
}

#[test]
fn remedy_choice_changes_the_command() {
    let (_, model) = report(
        &demo(),
        false,
        &["enforce_eager".to_string()],
        Some(RedactOptions::default()),
    );
    let f = &model.findings[0];
    let chosen = f.chosen_remedy.as_ref().expect("chosen");
    assert_eq!(chosen.id, "enforce_eager");
    assert_eq!(chosen.chosen_by, sm120_doctor::engine::plan::ChosenBy::User);
    let last = chosen.action.shell.last().expect("a command");
    assert!(last.ends_with("--enforce-eager"), "{last}");
    let md = report::render(&model, ReportFormat::Markdown);
    assert!(
        md.contains("(`enforce_eager`, CONFIRMED, chosen by the user)"),
        "{md}"
    );

    let (_, script) = report(
        &demo(),
        false,
        &["apply_pr_43923".to_string()],
        Some(RedactOptions::default()),
    );
    let a = &script.findings[0]
        .chosen_remedy
        .as_ref()
        .expect("chosen")
        .action;
    assert_eq!(a.script.as_deref(), Some("apply-pr-43923.sh"));
}

#[test]
fn unknown_remedy_is_a_user_error() {
    let inputs = sm120_doctor::input::resolve(&demo()).expect("inputs");
    let d = sm120_doctor::engine::diagnose(
        &inputs.kb,
        &inputs.snapshot,
        &inputs.answers,
        &inputs.logs,
        sm120_doctor::engine::Mode::Failures,
    );
    let e = report::prepare(
        &report::ReportInput {
            kb: &inputs.kb,
            snapshot: &inputs.snapshot,
            answers: &inputs.answers,
            logs: &inputs.logs,
            mode: sm120_doctor::engine::Mode::Failures,
            diagnosis: &d,
            choices: &sm120_doctor::engine::plan::Choices::preferred(&[
                "no_such_remedy".to_string()
            ]),
            launch_source: None,
        },
        None,
    )
    .expect_err("unknown remedy");
    assert!(
        e.contains("no_such_remedy") && e.contains("drop_expandable_segments"),
        "{e}"
    );
}

#[test]
fn no_redact_is_marked_in_every_format() {
    let (_, model) = report(&demo(), false, &[], None);
    assert!(!model.redacted);
    for f in [ReportFormat::Markdown, ReportFormat::Text] {
        assert!(report::render(&model, f).contains("NOT redacted"));
    }
    assert!(report::render(&model, ReportFormat::Json).contains("\"redacted\": false"));
}

#[test]
fn the_schema_rejects_a_broken_report() {
    let (_, model) = report(&demo(), false, &[], Some(RedactOptions::default()));
    let json = report::render(&model, ReportFormat::Json);
    let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
    v["findings"][0]["severity"] = "fatal".into();
    let e = validate(&v.to_string()).expect_err("severity is an enum");
    assert!(e.contains("severity") || e.contains("fatal"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&json).expect("json");
    v.as_object_mut().expect("object").remove("schema_version");
    assert!(validate(&v.to_string()).is_err());
}
