//! TUI state changes, driven by actions and fake collector updates, with no terminal.

use sm120_doctor::cli::{InputArgs, TuiArgs};
use sm120_doctor::collect::refresh::GpuUpdate;
use sm120_doctor::engine::{Answer, Outcome};
use sm120_doctor::import::demo;
use sm120_doctor::snapshot::Probed;
use sm120_doctor::tui::action::{Action, Effect, ExportFormat};
use sm120_doctor::tui::app::{App, Overlay, Pane, Screen};
use sm120_doctor::tui::effects::{EffectCtx, perform};
use sm120_doctor::tui::{build_app, dispatch};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

fn ctx() -> EffectCtx {
    EffectCtx {
        events: None,
        period: Duration::from_secs(1),
    }
}

fn h200() -> App {
    build_app(&TuiArgs {
        input: InputArgs {
            collect_env: Some(PathBuf::from(
                "tests/fixtures/tui/h200-torch-collect-env-expandable.txt",
            )),
            ..Default::default()
        },
        onboard: false,
    })
    .expect("h200 fixture")
}

fn waiting_node(app: &App) -> Option<String> {
    match &app.current_walk()?.outcome {
        Outcome::NeedsAnswer { node, .. } => Some(node.clone()),
        Outcome::Concluded { .. } => None,
    }
}

#[test]
fn answering_advances_the_walk_and_undo_goes_back() {
    let mut app = h200();
    assert_eq!(waiting_node(&app).as_deref(), Some("aipc_tp"));
    let steps_before = app.current_walk().expect("walk").steps.len();
    app.update(Action::Answer(Answer::Yes));
    assert_eq!(app.answers.get("aipc_tp"), Some(&Answer::Yes));
    let after = app.current_walk().expect("walk");
    assert!(after.steps.len() > steps_before, "the walk moved on");
    assert_ne!(waiting_node(&app).as_deref(), Some("aipc_tp"));
    app.update(Action::Undo);
    assert!(app.answers.is_empty());
    assert_eq!(waiting_node(&app).as_deref(), Some("aipc_tp"));
    // Nothing left to undo: a second undo changes nothing.
    app.update(Action::Undo);
    assert_eq!(waiting_node(&app).as_deref(), Some("aipc_tp"));
}

#[test]
fn answering_no_ends_the_allocator_walk_differently_from_yes() {
    let mut yes = h200();
    yes.update(Action::Answer(Answer::Yes));
    let mut no = h200();
    no.update(Action::Answer(Answer::No));
    let path = |a: &App| {
        a.current_walk()
            .map(|w| (w.steps.len(), format!("{:?}", w.outcome)))
            .expect("walk")
    };
    assert_ne!(path(&yes), path(&no));
}

#[test]
fn pasting_a_log_classifies_it_and_the_walk_jumps_to_the_class() {
    let mut app = h200();
    app.update(Action::NextClass);
    assert_ne!(
        app.current_walk().map(|w| w.class.as_str()),
        Some("allocator_ipc")
    );
    app.update(Action::ShowPane(Pane::Log));
    app.update(Action::Paste(demo::LOG.replace('\n', "\r\n")));
    assert_eq!(app.pane, Pane::Walk);
    assert_eq!(
        app.current_walk().map(|w| w.class.as_str()),
        Some("allocator_ipc")
    );
    assert!(
        app.diagnosis
            .classification
            .matches
            .iter()
            .any(|m| m.file == "pasted" && m.text.contains("custom_all_reduce.cuh")),
        "{:?}",
        app.diagnosis.classification.matches
    );
    assert!(
        app.status.contains("jumped to allocator_ipc"),
        "{}",
        app.status
    );
    // The log answered the first question; clearing it brings the unknown back.
    app.update(Action::ShowPane(Pane::Log));
    app.update(Action::ClearPasted);
    assert!(app.pasted_is_empty());
    assert!(app.diagnosis.classification.matches.is_empty());
}

#[test]
fn fake_collector_updates_change_the_live_panel() {
    let mut app = App::demo();
    let mut gpus = app.snapshot.gpus.value().cloned().expect("gpus");
    gpus[0].memory_used_mib = Probed::Value(40_000);
    gpus[0].temperature_c = Probed::Value(71);
    app.update(Action::Gpu(GpuUpdate {
        at: SystemTime::now(),
        gpus: Probed::Value(gpus),
    }));
    assert_eq!(app.live.updates, 1);
    let g = &app.snapshot.gpus.value().expect("gpus")[0];
    assert_eq!(g.temperature_c.value(), Some(&71));
    app.update(Action::Gpu(GpuUpdate {
        at: SystemTime::now(),
        gpus: Probed::failed("NVML: GPU is lost"),
    }));
    assert_eq!(app.live.last_error.as_deref(), Some("NVML: GPU is lost"));
    // A failed poll keeps the last good values on screen.
    assert!(app.snapshot.gpus.value().is_some());
}

#[test]
fn export_writes_once_and_asks_before_overwriting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("report.json");
    let mut app = App::demo();
    app.update(Action::OpenExport);
    app.update(Action::ToggleFormat);
    app.update(Action::PromptClear);
    for c in path.display().to_string().chars() {
        app.update(Action::PromptChar(c));
    }
    let effects = app.update(Action::PromptSubmit);
    assert_eq!(
        effects,
        vec![Effect::Export {
            format: ExportFormat::Json,
            path: path.clone(),
            overwrite: false
        }]
    );
    for a in perform(effects[0].clone(), &app, &ctx()) {
        app.update(a);
    }
    let text = std::fs::read_to_string(&path).expect("written");
    let json: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert!(text.contains("drop_expandable_segments"), "{json}");
    assert!(
        app.status.starts_with("wrote the json check report"),
        "{}",
        app.status
    );

    // Second time: the file exists, so the app asks; "n" leaves it untouched.
    std::fs::write(&path, "keep me").expect("write");
    let asked = perform(effects[0].clone(), &app, &ctx());
    assert_eq!(asked, vec![Action::AskOverwrite(effects[0].clone())]);
    dispatch(&mut app, asked[0].clone(), &ctx());
    assert!(matches!(app.overlay, Some(Overlay::Confirm { .. })));
    dispatch(&mut app, Action::ConfirmNo, &ctx());
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "keep me");
    // "y" overwrites.
    dispatch(&mut app, asked[0].clone(), &ctx());
    dispatch(&mut app, Action::ConfirmYes, &ctx());
    assert!(
        std::fs::read_to_string(&path)
            .expect("read")
            .contains("drop_expandable_segments")
    );
}

#[test]
fn write_launch_goes_through_the_editor_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("launch.sh");
    let mut app = App::demo();
    app.update(Action::ShowPane(Pane::Remedy));
    app.update(Action::OpenWriteLaunch);
    app.update(Action::PromptClear);
    app.update(Action::Paste(path.display().to_string()));
    let effects = app.update(Action::PromptSubmit);
    assert_eq!(effects.len(), 1);
    for a in perform(effects[0].clone(), &app, &ctx()) {
        app.update(a);
    }
    let text = std::fs::read_to_string(&path).expect("written");
    assert!(text.contains("vllm serve Qwen/Qwen3.6-27B-FP8"), "{text}");
}

#[test]
fn editing_the_launch_reruns_the_walk() {
    let mut app = h200();
    assert_eq!(waiting_node(&app).as_deref(), Some("aipc_tp"));
    app.update(Action::ShowPane(Pane::Remedy));
    app.update(Action::StartEdit);
    app.update(Action::Paste(
        "vllm serve m --tensor-parallel-size 2".to_string(),
    ));
    app.update(Action::Close);
    assert!(app.status.contains("re-run"), "{}", app.status);
    assert_ne!(waiting_node(&app).as_deref(), Some("aipc_tp"));
}

#[test]
fn no_host_offers_the_demo_and_starts_the_refresher() {
    let mut app = build_app(&TuiArgs::default()).expect("app");
    assert_eq!(app.screen, Screen::NoHost);
    let effects = app.update(Action::LoadDemo);
    assert_eq!(effects, vec![Effect::StartRefresher]);
    assert_eq!(app.screen, Screen::Main);
    assert_eq!(app.snapshot.gpus.value().map(Vec::len), Some(2));
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let err = build_app(&TuiArgs {
        input: InputArgs {
            snapshot: Some(PathBuf::from("tests/fixtures/tui/does-not-exist.yaml")),
            ..Default::default()
        },
        onboard: false,
    })
    .err()
    .expect("missing file is an error");
    assert!(err.contains("does-not-exist.yaml"), "{err}");
}

#[test]
fn help_and_escape() {
    let mut app = App::demo();
    app.update(Action::ToggleHelp);
    assert_eq!(app.overlay, Some(Overlay::Help));
    app.update(Action::Close);
    assert_eq!(app.overlay, None);
    app.update(Action::Quit);
    assert!(app.quit);
}
