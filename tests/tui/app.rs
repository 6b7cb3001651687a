//! TUI state changes, driven by actions and fake collector updates, with no terminal.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sm120_doctor::collect::refresh::GpuUpdate;
use sm120_doctor::engine::{Answer, Mode, Outcome};
use sm120_doctor::import::demo;
use sm120_doctor::input::{InputArgs, prepare};
use sm120_doctor::kb::expr::Value;
use sm120_doctor::snapshot::Probed;
use sm120_doctor::snapshot::{IpcProbe, IpcProbeRun};
use sm120_doctor::tui::io::effects::{EffectCtx, export_text, perform};
use sm120_doctor::tui::state::action::{Action, Effect};
use sm120_doctor::tui::state::app::App;
use sm120_doctor::tui::state::keymap::map_key;
use sm120_doctor::tui::state::preview::{PreviewBody, ScriptPreview};
use sm120_doctor::tui::state::{ExportFormat, FileWhat, Overlay, Pane, Screen};
use sm120_doctor::tui::{build_app, dispatch};
use sm120_doctor::write::Kind;
use std::path::PathBuf;
use std::time::SystemTime;

fn ctx() -> EffectCtx {
    EffectCtx::headless()
}

/// The H200 collect-env paste alone (no launch).
fn h200_paste() -> App {
    build_app(
        prepare(&InputArgs {
            collect_env: Some(PathBuf::from(
                "tests/fixtures/tui/h200-torch-collect-env-expandable.txt",
            )),
            ..Default::default()
        })
        .expect("h200 fixture"),
        Mode::Failures,
    )
}

/// The H200 collect-env paste. The shell that ran collect-env is not the engine's, so the
/// engine's allocator setting is given as an environment-only launch: the walk then waits at
/// "TP > 1?", which these tests answer.
fn h200() -> App {
    build_app(
        prepare(&InputArgs {
            collect_env: Some(PathBuf::from(
                "tests/fixtures/tui/h200-torch-collect-env-expandable.txt",
            )),
            launch: Some("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into()),
            ..Default::default()
        })
        .expect("h200 fixture"),
        Mode::Failures,
    )
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
        app.status
            .contains("the walk jumped to Custom all-reduce crash from expandable_segments"),
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
        json.get("schema_version").is_some(),
        "the report's JSON: {json}"
    );
    assert!(
        app.status.starts_with("wrote the JSON report"),
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
fn export_dialog_cycles_md_json_text_and_the_report_takes_the_picked_remedy() {
    let mut app = App::demo();
    app.update(Action::SelectNext);
    app.update(Action::PickRemedy);
    let picked = app.picked.clone().expect("picked");
    assert_ne!(picked, "drop_expandable_segments");
    app.update(Action::OpenExport);
    let format = |a: &App| match &a.overlay {
        Some(Overlay::Prompt(p)) => (p.format, p.input.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        format(&app),
        (ExportFormat::Markdown, "sm120-doctor-report.md".into())
    );
    app.update(Action::ToggleFormat);
    assert_eq!(format(&app).0, ExportFormat::Json);
    app.update(Action::ToggleFormat);
    assert_eq!(
        format(&app),
        (ExportFormat::Text, "sm120-doctor-report.txt".into())
    );
    app.update(Action::ToggleFormat);
    assert_eq!(format(&app).0, ExportFormat::Markdown);
    let json = export_text(&app, ExportFormat::Json).expect("report");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let chosen: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f.get("chosen_remedy"))
        .filter(|c| !c.is_null())
        .collect();
    assert!(
        chosen
            .iter()
            .any(|c| c["id"] == picked.as_str() && c["chosen_by"] == "user"),
        "{chosen:?}"
    );
}

#[test]
fn picking_a_remedy_previews_the_patched_command_and_w_writes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("patched.sh");
    let mut app = App::demo();
    app.update(Action::PickRemedy);
    assert_eq!(app.picked.as_deref(), Some("drop_expandable_segments"));
    let p = app.preview.clone().expect("preview");
    let PreviewBody::Launch { patched, diff } = &p.body else {
        panic!("{p:?}");
    };
    assert!(
        patched.contains("export PYTORCH_CUDA_ALLOC_CONF=''"),
        "{patched}"
    );
    assert!(
        diff.contains("+export PYTORCH_CUDA_ALLOC_CONF=''"),
        "{diff}"
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("removed expandable_segments"))
    );
    // The preview is longer than the pane: PgDn scrolls it.
    let pgdn = KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE);
    assert_eq!(
        map_key(&app, pgdn),
        Some(Action::Scroll(sm120_doctor::tui::state::ScrollBy::Pages(1)))
    );
    app.update(Action::OpenWriteLaunch);
    app.update(Action::PromptClear);
    app.update(Action::Paste(path.display().to_string()));
    let effects = app.update(Action::PromptSubmit);
    assert!(
        matches!(&effects[..], [Effect::WriteLaunch { what: FileWhat::Launch(Kind::Script), text, .. }] if text == patched),
        "{effects:?}"
    );
    for a in perform(effects[0].clone(), &app, &ctx()) {
        app.update(a);
    }
    // Written as a launch script: a shebang before the patched command, executable.
    assert_eq!(
        std::fs::read_to_string(&path).expect("written"),
        format!("#!/usr/bin/env bash\n{patched}")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "executable: {mode:o}");
    }
    assert!(
        app.status.starts_with("wrote the launch command"),
        "{}",
        app.status
    );
}

#[test]
fn editing_the_launch_recomputes_the_preview() {
    let mut app = App::demo();
    app.update(Action::PickRemedy);
    app.update(Action::ShowPane(Pane::Remedy));
    app.update(Action::StartEdit);
    // Replace the demo launch with one that has no allocator config: nothing to drop.
    app.launch_editor.select_all();
    app.launch_editor.cut();
    app.update(Action::Paste(
        "vllm serve m --tensor-parallel-size 2".into(),
    ));
    app.update(Action::ApplyEdit);
    let p = app.preview.clone().expect("preview");
    let PreviewBody::Launch { patched, diff } = &p.body else {
        panic!("{p:?}");
    };
    // No allocator variable in the new command, but the host's environment sets one: the plan
    // sets it for this command only, without expandable_segments.
    assert_eq!(
        patched.trim_end(),
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False vllm serve m --tensor-parallel-size 2"
    );
    assert!(
        diff.contains("-vllm serve m --tensor-parallel-size 2"),
        "{diff}"
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("PYTORCH_CUDA_ALLOC_CONF comes from the reporter's environment")),
        "{:?}",
        p.notes
    );
}

#[test]
fn pr_remedy_writes_the_patch_script_executable_and_asks_before_overwriting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = App::demo();
    let idx = app
        .current_remedies()
        .iter()
        .position(|r| r.id == "apply_pr_43923")
        .expect("the demo finding offers the PR");
    for _ in 0..idx {
        app.update(Action::SelectNext);
    }
    app.update(Action::PickRemedy);
    let p = app.preview.clone().expect("preview");
    let Some(ScriptPreview {
        command, script, ..
    }) = &p.script
    else {
        panic!("{p:?}");
    };
    assert_eq!(
        command,
        "sm120-doctor patch-script --pr 43923 -o apply-pr-43923.sh"
    );
    app.update(Action::OpenWriteLaunch);
    match &app.overlay {
        Some(Overlay::Prompt(pr)) => assert_eq!(pr.input, "apply-pr-43923.sh"),
        other => panic!("{other:?}"),
    }
    let path = dir.path().join("apply-pr-43923.sh");
    app.update(Action::PromptClear);
    app.update(Action::Paste(path.display().to_string()));
    let effects = app.update(Action::PromptSubmit);
    for a in perform(effects[0].clone(), &app, &ctx()) {
        app.update(a);
    }
    assert_eq!(&std::fs::read_to_string(&path).expect("written"), script);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    std::fs::write(&path, "mine").expect("write");
    let asked = perform(effects[0].clone(), &app, &ctx());
    assert_eq!(asked, vec![Action::AskOverwrite(effects[0].clone())]);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "mine");
}

fn fake_probe(engine_ok: bool) -> IpcProbe {
    let run = |role: &str, conf: Option<&str>, expandable: bool, ok: bool| IpcProbeRun {
        path: "torch".into(),
        role: role.into(),
        allocator: "torch caching allocator".into(),
        alloc_conf: conf.map(str::to_string),
        expandable,
        ipc_handle_ok: Probed::Value(ok),
        ipc_error: (!ok).then(|| "invalid argument".to_string()),
        legacy_ipc_capable: Probed::Value(ok),
        device: Some("fake GPU".into()),
        wall_ms: 5.0,
    };
    IpcProbe {
        engine_alloc_conf: Some("expandable_segments:True".into()),
        engine_alloc_source: "PYTORCH_CUDA_ALLOC_CONF from launch command".into(),
        native: Probed::skipped("libcuda.so.1 not found"),
        torch: Probed::Value(vec![
            run("engine", Some("expandable_segments:True"), true, engine_ok),
            run("remedy", Some("expandable_segments:False"), false, true),
        ]),
    }
}

#[test]
fn probe_runs_only_on_the_live_host_and_its_result_reaches_the_engine() {
    let mut app = App::demo();
    assert!(!app.can_probe(), "the demo is not this machine");
    assert!(app.update(Action::RunProbe).is_empty());
    assert!(
        !sm120_doctor::tui::state::keymap::bindings(&app)
            .iter()
            .any(|b| b.action == Action::RunProbe)
    );

    app.snapshot.origin = sm120_doctor::snapshot::Origin::Live;
    assert!(
        sm120_doctor::tui::state::keymap::bindings(&app)
            .iter()
            .any(|b| b.action == Action::RunProbe && b.shown == "p")
    );
    let effects = app.update(Action::RunProbe);
    assert_eq!(
        effects,
        vec![Effect::RunProbe {
            conf: Some("expandable_segments:True".into()),
            source: "PYTORCH_CUDA_ALLOC_CONF from launch command".into(),
        }]
    );
    assert!(app.probe_running);
    // While it runs, a second p does nothing and the key is not offered.
    assert!(app.update(Action::RunProbe).is_empty());
    assert!(
        !sm120_doctor::tui::state::keymap::bindings(&app)
            .iter()
            .any(|b| b.action == Action::RunProbe)
    );
    assert_eq!(
        app.diagnosis.facts.get("probe.ran").value,
        Value::Bool(false)
    );

    app.update(Action::ProbeDone(Box::new(fake_probe(false))));
    assert!(!app.probe_running);
    assert!(app.snapshot.probe.value().is_some());
    assert_eq!(
        app.diagnosis.facts.get("probe.ran").value,
        Value::Bool(true)
    );
    assert_eq!(
        app.diagnosis.facts.get("probe.ipc_engine_config_ok").value,
        Value::Bool(false)
    );
    assert_eq!(
        app.diagnosis.facts.get("probe.remedy_ok").value,
        Value::Bool(true)
    );
    assert!(
        app.probe_lines
            .iter()
            .any(|l| l.contains("torch engine")
                && l.contains("IPC handle refused (invalid argument)")),
        "{:?}",
        app.probe_lines
    );
    assert!(
        app.probe_lines
            .iter()
            .any(|l| l == "native: skipped: libcuda.so.1 not found")
    );
    assert!(app.status.contains("refused in 1"), "{}", app.status);
    assert!(app.can_probe(), "it can run again");
}

#[test]
fn a_probe_finishing_after_the_switch_to_the_demo_is_not_applied_to_it() {
    let mut app = App::demo();
    app.snapshot.origin = sm120_doctor::snapshot::Origin::Live;
    assert_eq!(app.update(Action::RunProbe).len(), 1);
    let effects = app.update(Action::LoadDemo);
    assert_eq!(effects, vec![Effect::StartRefresher]);
    app.update(Action::ProbeDone(Box::new(fake_probe(false))));
    assert!(
        app.snapshot.probe.value().is_none(),
        "the demo host was not probed"
    );
    assert_eq!(
        app.diagnosis.facts.get("probe.ran").value,
        Value::Bool(false)
    );
    assert!(app.status.contains("not applied"), "{}", app.status);
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

/// Keys as a person presses them, each through the keymap.
fn press(app: &mut App, keys: &[KeyEvent]) {
    for k in keys {
        if let Some(a) = map_key(app, *k) {
            dispatch(app, a, &ctx());
        }
    }
}

fn typed(text: &str) -> Vec<KeyEvent> {
    text.chars()
        .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
        .collect()
}

fn plain(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// The launch editor: `4`, `i`, type, Enter: the words land after the user's arguments (the cursor opens
/// at the end) and the fix carries them; Esc and Ctrl-C cancel (the launch unchanged); a flag
/// where a command belongs is refused with the reason, the editor left open.
#[test]
fn the_launch_editor_appends_applies_on_enter_and_cancels_on_esc_or_ctrl_c() {
    let mut app = App::demo();
    let original = app.launch_text();
    press(
        &mut app,
        &[plain(KeyCode::Char('4')), plain(KeyCode::Char('i'))],
    );
    assert_eq!(app.pane, Pane::Remedy);
    assert!(app.editing.is_some());
    let last = app.launch_editor.lines().len() - 1;
    assert_eq!(
        app.launch_editor.cursor(),
        (last, app.launch_editor.lines()[last].chars().count()),
        "the cursor opens at the end of the text"
    );
    press(&mut app, &typed(" --max-num-seqs 8"));
    press(&mut app, &[plain(KeyCode::Enter)]);
    assert!(app.editing.is_none(), "Enter applies: {}", app.status);
    assert!(
        app.status.contains("launch command parsed"),
        "{}",
        app.status
    );
    assert_eq!(
        app.launch_text(),
        format!("{} --max-num-seqs 8\n", original.trim_end())
    );
    let fix = app.fix_text().expect("a fix");
    assert!(
        fix.trim_end()
            .ends_with("FULL_AND_PIECEWISE\"}' --max-num-seqs 8"),
        "the flag after the user's arguments:\n{fix}"
    );
    assert!(fix.contains("vllm serve Qwen/Qwen3.6-27B-FP8"), "{fix}");
    let applied = (app.launch_text(), app.snapshot.launch.clone(), fix);

    // Esc cancels, and so does Ctrl-C: the launch and the fix stay as applied.
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for cancel in [plain(KeyCode::Esc), ctrl_c] {
        press(&mut app, &[plain(KeyCode::Char('i'))]);
        press(&mut app, &typed(" --enforce-eager"));
        press(&mut app, &[cancel]);
        assert!(app.editing.is_none() && !app.quit && app.overlay.is_none());
        assert!(app.status.contains("edit cancelled"), "{}", app.status);
        let now = (
            app.launch_text(),
            app.snapshot.launch.clone(),
            app.fix_text().expect("a fix"),
        );
        assert_eq!(now, applied, "{cancel:?} changed the launch");
    }

    // Alt-Enter breaks the line; a flag at the start of a command is refused, with the reason.
    press(&mut app, &[plain(KeyCode::Char('i'))]);
    press(
        &mut app,
        &[KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)],
    );
    press(&mut app, &typed("--max-model-len 4096"));
    press(&mut app, &[plain(KeyCode::Enter)]);
    assert!(app.editing.is_some(), "refused: the editor stays open");
    assert!(
        app.status
            .contains("line 6 starts with the flag --max-model-len, where a command belongs"),
        "{}",
        app.status
    );
    assert_eq!(app.snapshot.launch, applied.1, "nothing applied");
    press(&mut app, &[plain(KeyCode::Esc)]);
    assert_eq!(app.launch_text(), applied.0);
}

#[test]
fn editing_the_launch_reruns_the_walk() {
    let mut app = h200();
    assert_eq!(waiting_node(&app).as_deref(), Some("aipc_tp"));
    app.update(Action::ShowPane(Pane::Remedy));
    app.update(Action::StartEdit);
    // The editor opens at the end of the environment-only launch: the command on a new line.
    app.update(Action::Paste(
        "\nvllm serve m --tensor-parallel-size 2\n".to_string(),
    ));
    app.update(Action::ApplyEdit);
    assert!(app.status.contains("re-run"), "{}", app.status);
    assert_ne!(waiting_node(&app).as_deref(), Some("aipc_tp"));
}

use crate::support;

#[test]
fn no_host_offers_the_demo_and_starts_the_refresher() {
    let mut app = build_app(
        prepare(&InputArgs::default()).expect("no input is valid input"),
        Mode::Failures,
    );
    // The live host is read after the first frame; without an event loop `Start` reads it here.
    assert_eq!(app.screen, Screen::Collecting);
    dispatch(&mut app, Action::Start, &ctx());
    if app.screen == Screen::Main {
        support::skip_on_this_host("this machine has an NVIDIA GPU, so the live host opened");
        return;
    }
    assert_eq!(app.screen, Screen::NoHost);
    // The collector's own reason, not a canned one.
    assert!(
        app.no_host_reason
            .contains(&app.snapshot.gpus.why_or("NVML answered but lists no GPU")),
        "{}",
        app.no_host_reason
    );
    assert_eq!(app.snapshot.origin, sm120_doctor::snapshot::Origin::Live);
    assert!(
        app.can_probe(),
        "the probe is offered to say why it cannot run"
    );
    let effects = app.update(Action::LoadDemo);
    assert_eq!(effects, vec![Effect::StartRefresher]);
    assert_eq!(app.screen, Screen::Main);
    assert_eq!(app.snapshot.gpus.value().map(Vec::len), Some(2));
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    // The inputs are read before the TUI starts: a missing file is a usage error naming it.
    let err = prepare(&InputArgs {
        snapshot: Some(PathBuf::from("tests/fixtures/tui/does-not-exist.yaml")),
        ..Default::default()
    })
    .err()
    .expect("missing file is an error");
    assert!(err.0.contains("does-not-exist.yaml"), "{err}");
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

/// With no failure found the walk offers the onboarding checklist (a healthy host's next steps); `O`
/// works on any main screen all the same (onboarding is never buried).
#[test]
fn onboarding_is_offered_when_no_failure_is_found() {
    // The demo with its crash log: a failure, so no status offer, but the key still works.
    let demo_app = App::demo();
    assert!(!demo_app.offers_onboarding());
    assert!(map_key_offers(&demo_app, 'O'));

    // The H200 snapshot with a safe single-GPU BF16 launch and no log: nothing to fix.
    let mut app = build_app(
        prepare(&InputArgs {
            snapshot: Some(PathBuf::from(
                "tests/fixtures/h200-live-2026-11-30/snapshot.yaml",
            )),
            launch: Some("vllm serve Qwen/Qwen3-8B".into()),
            ..Default::default()
        })
        .expect("fixture"),
        Mode::Failures,
    );
    assert!(app.offers_onboarding(), "{:?}", app.diagnosis.findings);
    assert!(app.status.contains("onboarding"), "{}", app.status);
    assert!(map_key_offers(&app, 'O'));
    let before = app.diagnosis.walks.len();
    app.update(Action::StartOnboarding);
    assert!(app.diagnosis.walks.len() > before);
    let current = app.current_walk().expect("a walk");
    assert_eq!(current.class, "onboarding");
    assert!(!app.offers_onboarding(), "offered once");
    assert!(
        app.status.starts_with("onboarding checklist added:"),
        "{}",
        app.status
    );
}

fn map_key_offers(app: &App, c: char) -> bool {
    map_key(app, KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
        == Some(Action::StartOnboarding)
}

// ---- the P2P probe key ----

fn hung_p2p_probe() -> sm120_doctor::snapshot::P2pProbe {
    use sm120_doctor::snapshot::{P2pOutcome, P2pPair, P2pProbe};
    P2pProbe {
        selection: "--tp 2".into(),
        pairs: Probed::Value(vec![P2pPair {
            a: 0,
            b: 1,
            cuda_can_access_peer_ab: Probed::Value(true),
            cuda_can_access_peer_ba: Probed::Value(true),
            nvml_p2p_read: Probed::Value(true),
            nvml_p2p_write: Probed::Value(true),
            functional: P2pOutcome::Hung {
                after_ms: 10000.0,
                step: "push 0→1".into(),
            },
            directions: Vec::new(),
            wall_ms: 10000.0,
        }]),
        child_ending: "killed at the time limit".into(),
        wall_ms: 10010.0,
        ..Default::default()
    }
}

#[test]
fn p2p_probe_key_runs_in_the_background_and_the_walk_reruns_with_its_result() {
    let mut app = App::demo();
    let offered = |app: &App| {
        sm120_doctor::tui::state::keymap::bindings(app)
            .iter()
            .any(|b| b.action == Action::RunP2pProbe && b.shown == "P")
    };
    assert!(!app.can_probe_p2p(), "the demo is not this machine");
    assert!(!offered(&app));
    assert!(app.update(Action::RunP2pProbe).is_empty());

    // The live host, with the PCI fabric of the passthrough fixture (ACS redirect on).
    app.snapshot.origin = sm120_doctor::snapshot::Origin::Live;
    app.snapshot.pci_fabric = sm120_doctor::collect::pci::collect(
        std::path::Path::new("tests/fixtures/sysfs/passthrough"),
        &sm120_doctor::collect::pci::NoLspci,
    );
    assert!(offered(&app));
    let key = KeyEvent::new(KeyCode::Char('P'), KeyModifiers::SHIFT);
    assert_eq!(map_key(&app, key), Some(Action::RunP2pProbe));
    // The demo's launch is TP=2: the probe takes that group.
    assert_eq!(
        app.update(Action::RunP2pProbe),
        vec![Effect::RunP2pProbe { tp: Some(2) }]
    );
    assert!(app.p2p_running);
    assert!(
        app.p2p_lines[0].starts_with("running"),
        "{:?}",
        app.p2p_lines
    );
    // One run at a time: the key is gone and a second press does nothing.
    assert!(!offered(&app));
    assert!(app.update(Action::RunP2pProbe).is_empty());
    // The allocator/IPC probe is still there to run meanwhile.
    assert!(app.can_probe());

    app.update(Action::P2pProbeDone(Box::new(hung_p2p_probe())));
    assert!(!app.p2p_running);
    assert!(offered(&app), "it can run again");
    assert_eq!(app.diagnosis.facts.get("p2p.hung").value, Value::Bool(true));
    assert_eq!(
        app.diagnosis.facts.get("p2p.driver_contradicted").value,
        Value::Bool(true)
    );
    // The walk re-ran: measured loss with ACS redirect on the root ports.
    let f = app
        .diagnosis
        .findings
        .iter()
        .find(|f| f.class == "p2p_fabric")
        .expect("a p2p_fabric finding");
    assert_eq!(f.id, "p2p_fabric_acs");
    assert!(
        app.p2p_lines
            .iter()
            .any(|l| l.starts_with("GPU0↔GPU1: hung after 10000 ms")),
        "{:?}",
        app.p2p_lines
    );
    assert!(app.status.contains("1 not ok"), "{}", app.status);

    // The p2p_fabric walk shows the probe's section; no other walk does.
    let theme = sm120_doctor::tui::view::theme::Theme::new(false);
    for i in 0..app.diagnosis.walks.len() {
        app.walk_idx = i;
        let class = app
            .current_walk()
            .map(|w| w.class.clone())
            .unwrap_or_default();
        let text: Vec<String> = sm120_doctor::tui::view::text::wrap(
            sm120_doctor::tui::view::walk::paras(&app, theme),
            200,
        )
        .iter()
        .map(|r| r.line.to_string())
        .collect();
        let has = text.iter().any(|l| l.starts_with("P2P probe"));
        assert_eq!(has, class == "p2p_fabric", "{class}");
    }
}

#[test]
fn a_p2p_probe_finishing_after_the_switch_to_the_demo_is_not_applied_to_it() {
    let mut app = App::demo();
    app.snapshot.origin = sm120_doctor::snapshot::Origin::Live;
    assert_eq!(app.update(Action::RunP2pProbe).len(), 1);
    app.update(Action::LoadDemo);
    app.update(Action::P2pProbeDone(Box::new(hung_p2p_probe())));
    assert!(app.snapshot.p2p_probe.value().is_none());
    assert!(app.status.contains("not applied"), "{}", app.status);
}

#[test]
fn the_p2p_probe_effect_needs_the_event_loop() {
    let app = App::demo();
    let got = perform(Effect::RunP2pProbe { tp: Some(2) }, &app, &ctx());
    assert!(
        matches!(&got[..], [Action::Failed(m)] if m.contains("interactive")),
        "{got:?}"
    );
}

/// The walk pane's text for the current walk.
fn walk_text(app: &App) -> String {
    let theme = sm120_doctor::tui::view::theme::Theme::new(false);
    sm120_doctor::tui::view::text::wrap(sm120_doctor::tui::view::walk::paras(app, theme), 200)
        .iter()
        .map(|r| r.line.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_typed_launch_drops_the_answer_it_now_decides_and_says_so() {
    // The case: a collect-env, "TP > 1?" answered no, then a TP=2 launch typed in.
    // On the 1-GPU expandable paste: TP is asked, answer no, then type a TP=2 launch.
    let mut app = h200();
    assert_eq!(waiting_node(&app).as_deref(), Some("aipc_tp"));
    app.update(Action::Answer(Answer::No));
    let f = app.current_finding().expect("concluded");
    assert_eq!(f.id, "allocator_ipc_tp1");
    assert_eq!(f.answered, vec!["aipc_tp".to_string()]);
    assert!(
        walk_text(&app).contains("known cause · from your answers (1)"),
        "{}",
        walk_text(&app)
    );
    app.update(Action::ShowPane(Pane::Remedy));
    app.update(Action::StartEdit);
    // The editor opens at the end of the environment-only launch: the command on a new line.
    app.update(Action::Paste(
        "\nvllm serve m --tensor-parallel-size 2\n".to_string(),
    ));
    app.update(Action::ApplyEdit);
    assert!(
        app.status.contains(
            "dropped your answer to “Does the launch use tensor parallelism (TP > 1)?” (you answered no; launch command (typed in the TUI) says launch.tp = 2)"
        ),
        "{}",
        app.status
    );
    assert!(!app.answers.contains_key("aipc_tp"));
    assert!(app.answer_order.is_empty());
    let text = walk_text(&app);
    assert!(
        text.contains("! your answer was dropped, the input now decides: you answered no;"),
        "{text}"
    );
    assert!(!text.contains("No tensor parallelism"), "{text}");
}

#[test]
fn a_pasted_log_is_named_as_pasted_in_the_tui() {
    let mut app = h200();
    app.update(Action::ShowPane(Pane::Log));
    app.update(Action::Paste(demo::LOG.to_string()));
    let w = app.current_walk().expect("walk");
    let given = w
        .steps
        .iter()
        .find_map(|s| match &s.by {
            sm120_doctor::engine::AnsweredBy::Auto { facts } => {
                facts.iter().find(|f| f.name == "logs.given").cloned()
            }
            _ => None,
        })
        .expect("logs.given used");
    assert_eq!(
        (given.value.to_string().as_str(), given.source.as_str()),
        ("yes", "log pasted in the TUI")
    );
    assert!(
        walk_text(&app).contains("at least one log was given: yes  ← log pasted in the TUI"),
        "{}",
        walk_text(&app)
    );
}

#[test]
fn one_remedy_per_finding_and_the_plan_combines_them() {
    let mut app = App::demo();
    // allocator_ipc: the cheapest (drop expandable_segments) is in the plan by default.
    assert_eq!(
        app.current_walk().map(|w| w.class.as_str()),
        Some("allocator_ipc")
    );
    app.update(Action::PickRemedy);
    // deepgemm_warmup: pick the second remedy (DeepGEMM off everywhere).
    let dg = app
        .diagnosis
        .walks
        .iter()
        .position(|w| w.class == "deepgemm_warmup")
        .expect("deepgemm walk");
    while app.walk_idx != dg {
        app.update(Action::NextClass);
    }
    app.update(Action::SelectNext);
    app.update(Action::PickRemedy);
    assert_eq!(app.picked.as_deref(), Some("deep_gemm_off"));
    assert_eq!(
        app.choices
            .per_finding
            .get("allocator_ipc")
            .map(String::as_str),
        Some("drop_expandable_segments")
    );
    assert_eq!(
        app.choices
            .per_finding
            .get("deepgemm_will_crash")
            .map(String::as_str),
        Some("deep_gemm_off")
    );
    let p = app.preview.clone().expect("preview");
    let PreviewBody::Launch { patched, diff } = &p.body else {
        panic!("{p:?}");
    };
    // Both edits in one command, expandable_segments gone.
    assert!(
        patched.contains("export PYTORCH_CUDA_ALLOC_CONF=''"),
        "{patched}"
    );
    assert!(patched.contains("export VLLM_USE_DEEP_GEMM=0"), "{patched}");
    assert!(!patched.contains("expandable_segments:True"), "{patched}");
    assert!(diff.contains("+export VLLM_USE_DEEP_GEMM=0"), "{diff}");
    assert_eq!(
        p.plan.remedies,
        // The FP8 note is info (dense FP8 runs on DeepGEMM/CUTLASS by default): not in the default plan.
        ["drop_expandable_segments", "deep_gemm_off"]
    );
    // The report exported from here takes both picks.
    let json = export_text(&app, ExportFormat::Json).expect("report");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(
        v["plan"]["remedies"],
        serde_json::json!(["drop_expandable_segments", "deep_gemm_off"])
    );
}

/// Every key the keymap offers on any screen is in the help (`?`), by the text the footer
/// shows for it.
#[test]
fn help_lists_every_key_the_footer_can_show() {
    use sm120_doctor::tui::view::help::KEYS;
    let help: String = KEYS
        .iter()
        .map(|(k, _)| format!("{k} "))
        .collect::<String>();
    let mut states: Vec<App> = Vec::new();
    for p in Pane::ALL {
        let mut a = App::demo();
        a.update(Action::ShowPane(p));
        a.snapshot.origin = sm120_doctor::snapshot::Origin::Live;
        states.push(a);
    }
    let mut q = h200();
    q.update(Action::ShowPane(Pane::Log));
    q.update(Action::Paste("x\ny".into()));
    q.update(Action::ShowPane(Pane::Log));
    q.update(Action::OpenSearch);
    q.update(Action::SearchChar('x'));
    q.update(Action::SearchSubmit);
    states.push(q);
    let mut walk = h200();
    walk.update(Action::Answer(Answer::Yes));
    states.push(walk);
    let kb = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb");
    let mut no_host = App::new(
        kb,
        sm120_doctor::snapshot::HostSnapshot::empty("live", "no driver"),
        Vec::new(),
        Default::default(),
        Mode::Failures,
        Screen::NoHost,
    );
    no_host.no_host_reason = "no driver".into();
    states.push(no_host);
    let mut seen = 0;
    for app in &states {
        for b in sm120_doctor::tui::state::keymap::bindings(app) {
            if b.shown.is_empty() {
                continue;
            }
            seen += 1;
            // "↑↓ PgDn g G" is listed as its parts.
            for part in b.shown.split(' ') {
                let part = part.trim_matches('/');
                assert!(
                    help.contains(part) || part.split('/').all(|p| help.contains(p)),
                    "{part:?} ({}) missing from help",
                    b.label
                );
            }
        }
    }
    assert!(seen > 30, "{seen}");
    for k in [
        "d", "c", "p", "P", "O", "D", "Ctrl-C", "mouse", "/", "n/N", "]/[", "g/G",
    ] {
        assert!(
            KEYS.iter().any(|(keys, _)| keys
                .split(", ")
                .any(|x| x == k || x.starts_with(&format!("{k} ")))),
            "{k} in help"
        );
    }
}

#[test]
fn u_on_a_yes_no_question_says_why_instead_of_doing_nothing() {
    let mut app = h200();
    let before = waiting_node(&app);
    let u = KeyEvent::new(KeyCode::Char('u'), KeyModifiers::NONE);
    assert_eq!(map_key(&app, u), Some(Action::Answer(Answer::Unsure)));
    app.update(Action::Answer(Answer::Unsure));
    assert!(app.answers.is_empty(), "no answer recorded");
    assert_eq!(waiting_node(&app), before);
    assert!(app.status.contains("needs yes or no"), "{}", app.status);
}

#[test]
fn ctrl_c_with_unsaved_answers_asks_first_and_a_second_one_quits() {
    let mut app = h200();
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    app.update(Action::Answer(Answer::Yes));
    let a = map_key(&app, ctrl_c).expect("mapped");
    app.update(a);
    assert!(!app.quit);
    match &app.overlay {
        Some(Overlay::ConfirmQuit { unsaved }) => assert_eq!(unsaved, "1 answer"),
        other => panic!("{other:?}"),
    }
    app.update(Action::Close);
    assert!(app.overlay.is_none() && !app.quit, "Esc stays");
    // Editing the launch: Ctrl-C cancels the edit (nothing typed is applied) and stays.
    app.update(Action::ShowPane(Pane::Remedy));
    let before = (app.launch_text(), app.snapshot.launch.clone());
    app.update(Action::StartEdit);
    app.update(Action::Paste("\nvllm serve m".into()));
    let a = map_key(&app, ctrl_c).expect("mapped while editing");
    app.update(a);
    assert!(
        !app.quit && app.overlay.is_none(),
        "cancelled, not quitting"
    );
    assert!(app.editing.is_none(), "the edit was ended");
    assert_eq!((app.launch_text(), app.snapshot.launch.clone()), before);
    assert!(app.status.contains("edit cancelled"), "{}", app.status);
    // Applied (Enter), the edit is work that quitting would lose: Ctrl-C asks, then quits.
    app.update(Action::StartEdit);
    app.update(Action::Paste("\nvllm serve m".into()));
    app.update(Action::ApplyEdit);
    assert_eq!(
        app.snapshot.launch.value().map(|l| l.entrypoint.as_str()),
        Some("vllm serve"),
        "the typed launch was read"
    );
    let a = map_key(&app, ctrl_c).expect("mapped");
    app.update(a);
    match &app.overlay {
        Some(Overlay::ConfirmQuit { unsaved }) => {
            assert!(unsaved.contains("an edited launch command"), "{unsaved}")
        }
        other => panic!("{other:?}"),
    }
    let a = map_key(&app, ctrl_c).expect("mapped");
    app.update(a);
    assert!(app.quit, "the second Ctrl-C quits");

    // After an export nothing is unsaved: q quits at once.
    let mut app = h200();
    app.update(Action::Answer(Answer::Yes));
    app.update(Action::Exported("wrote the Markdown report to r.md".into()));
    app.update(Action::Quit);
    assert!(app.quit);
}

#[test]
fn w_with_nothing_to_write_writes_nothing_and_says_so() {
    let mut app = h200_paste();
    assert!(app.launch_editor.lines().iter().all(|l| l.is_empty()));
    let effects = app.update(Action::OpenWriteLaunch);
    assert!(effects.is_empty());
    assert!(app.overlay.is_none(), "no prompt for nothing");
    assert!(app.status.starts_with("nothing to write"), "{}", app.status);
}

#[test]
fn a_paste_into_the_path_prompt_is_the_path_without_newlines() {
    let mut app = App::demo();
    app.update(Action::OpenExport);
    // The suggested name is replaced, not appended to; the newline goes.
    app.update(Action::Paste("/tmp/my report.md\n".into()));
    match &app.overlay {
        Some(Overlay::Prompt(p)) => assert_eq!(p.input, "/tmp/my report.md"),
        other => panic!("{other:?}"),
    }
    assert!(app.pasted_is_empty(), "not taken as a log");
    // Typed after a paste: appended.
    app.update(Action::PromptChar('x'));
    match &app.overlay {
        Some(Overlay::Prompt(p)) => assert_eq!(p.input, "/tmp/my report.mdx"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_paste_of_several_lines_into_the_path_prompt_leaves_the_name_and_says_why() {
    let mut app = App::demo();
    app.update(Action::OpenExport);
    let before = match &app.overlay {
        Some(Overlay::Prompt(p)) => p.input.clone(),
        other => panic!("{other:?}"),
    };
    app.update(Action::Paste(
        "(Worker_TP1 pid=2951) Failed: Cuda error\nEngineCore failed to start.\n".into(),
    ));
    match &app.overlay {
        Some(Overlay::Prompt(p)) => assert_eq!(p.input, before),
        other => panic!("{other:?}"),
    }
    assert!(
        app.status.starts_with("not a path: the paste has 2 lines"),
        "{}",
        app.status
    );
    assert!(app.pasted_is_empty(), "not taken as a log either");
}

#[test]
fn copy_sends_the_fix_as_osc52_and_says_copied() {
    let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let ctx = EffectCtx {
        clipboard: sm120_doctor::tui::io::effects::Clipboard::Memory(buf.clone()),
        ..EffectCtx::headless()
    };
    let mut app = App::demo();
    dispatch(&mut app, Action::Copy, &ctx);
    assert!(app.status.starts_with("copied the fix ("), "{}", app.status);
    let sent = String::from_utf8(buf.lock().expect("lock").clone()).expect("utf8");
    let fix = app.fix_text().expect("a fix");
    assert_eq!(sent, sm120_doctor::tui::io::clipboard::osc52(&fix));
    assert!(fix.contains("export PYTORCH_CUDA_ALLOC_CONF=''"), "{fix}");
    // Nothing to copy: a notice, no sequence.
    let mut none = h200();
    buf.lock().expect("lock").clear();
    dispatch(&mut none, Action::Copy, &ctx);
    assert!(
        none.status.starts_with("nothing to copy"),
        "{}",
        none.status
    );
    assert!(buf.lock().expect("lock").is_empty());
}

#[test]
fn mouse_clicks_tabs_classes_remedies_and_the_wheel_scrolls() {
    use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let click = |x: u16, y: u16| {
        Action::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        })
    };
    let mut app = App::demo();
    app.update(Action::Resize(80, 24));
    let r = app.regions();
    // The Log tab.
    let (tab, p) = r.tabs[2];
    app.update(click(tab.x + 1, tab.y));
    assert_eq!((app.pane, p), (Pane::Log, Pane::Log));
    // The wheel over the pane scrolls it; the log fits, so it stays; the walk does not.
    app.update(Action::ShowPane(Pane::Walk));
    let wheel = Action::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: r.pane.x + 5,
        row: r.pane.y + 5,
        modifiers: KeyModifiers::NONE,
    });
    app.update(wheel);
    assert_eq!(app.scroll.get(Pane::Walk), 3);
    // The third class mark in the bar.
    let r = app.regions();
    let chips = sm120_doctor::tui::view::walk::chips(&app, r.fixed.width);
    let c = &chips[2];
    app.update(click(r.fixed.x + c.x + 1, r.fixed.y + c.line as u16));
    assert_eq!(app.walk_idx, 2);
    // A remedy in the Remedy pane: picked for the plan.
    app.update(Action::ShowClass(0));
    app.update(Action::ShowPane(Pane::Remedy));
    let r = app.regions();
    let rows = app.pane_rows(usize::from(r.rows.width));
    let k = rows
        .iter()
        .position(|row| row.target == Some(sm120_doctor::tui::state::Target::Remedy(1)))
        .expect("remedy 2 on screen");
    app.update(click(r.rows.x + 3, r.rows.y + k as u16));
    assert_eq!(app.picked.as_deref(), Some("apply_pr_43923"));
    // A finding in the Summary opens its walk.
    app.update(Action::ShowPane(Pane::Summary));
    let r = app.regions();
    let rows = app.pane_rows(usize::from(r.rows.width));
    let (k, w) = rows
        .iter()
        .enumerate()
        .find_map(|(i, row)| match row.target {
            Some(sm120_doctor::tui::state::Target::Finding(w)) if w != 0 => Some((i, w)),
            _ => None,
        })
        .expect("a second finding");
    app.update(click(r.rows.x + 3, r.rows.y + k as u16));
    assert_eq!((app.pane, app.walk_idx), (Pane::Walk, w));
}

#[test]
fn a_recorded_host_does_not_pretend_to_refresh() {
    let mut app = h200();
    assert!(
        app.update(Action::Start).is_empty(),
        "no refresher for a file"
    );
    let mut demo_app = App::demo();
    assert_eq!(demo_app.update(Action::Start), vec![Effect::StartRefresher]);
}

#[test]
fn the_log_pane_opens_at_the_first_matched_line_of_a_long_paste() {
    let mut app = h200();
    app.update(Action::Resize(120, 40));
    let mut big: String = (0..30_000)
        .map(|i| format!("INFO loading shard {i}\n"))
        .collect();
    big.push_str(demo::LOG);
    app.update(Action::Paste(big));
    app.update(Action::ShowPane(Pane::Log));
    let first = app.log_index.matched[0];
    assert_eq!(app.log_focus, Some(first));
    assert!(first > 30_000, "{first}");
    assert!(app.scroll.get(Pane::Log) + 2 >= first.min(app.scroll.get(Pane::Log) + 2));
    use sm120_doctor::tui::state::ScrollBy;
    app.update(Action::Scroll(ScrollBy::Top));
    assert_eq!(app.scroll.get(Pane::Log), 0);
    app.update(Action::Scroll(ScrollBy::Lines(1)));
    assert_eq!(app.scroll.get(Pane::Log), 1);
    app.update(Action::Scroll(ScrollBy::Pages(1)));
    let paged = app.scroll.get(Pane::Log);
    assert!(paged > 10, "a page is more than a line: {paged}");
    app.update(Action::Scroll(ScrollBy::Pages(-1)));
    assert_eq!(app.scroll.get(Pane::Log), 1, "PgUp comes back");
    app.update(Action::Scroll(ScrollBy::Bottom));
    let bottom = app.scroll.get(Pane::Log);
    app.update(Action::Scroll(ScrollBy::Lines(5)));
    assert_eq!(
        app.scroll.get(Pane::Log),
        bottom,
        "no scrolling past the end"
    );
    // Opened at the first matched line: ] goes to the second, [ back, [ again wraps to the last.
    app.update(Action::NextMatch);
    assert_eq!(app.log_focus, Some(app.log_index.matched[1]));
    app.update(Action::PrevMatch);
    assert_eq!(app.log_focus, Some(app.log_index.matched[0]));
    app.update(Action::PrevMatch);
    assert_eq!(
        app.log_focus,
        app.log_index.matched.last().copied(),
        "[ wraps"
    );
    app.update(Action::OpenSearch);
    for c in "shard 12345".chars() {
        app.update(Action::SearchChar(c));
    }
    app.update(Action::SearchSubmit);
    let s = app.search.clone().expect("searched");
    assert_eq!(s.hits.len(), 1, "{:?}", s.hits);
    assert_eq!(app.log_focus, Some(s.hits[0]));
    assert!(app.status.contains("1 line(s)"), "{}", app.status);
}

/// Picking a remedy is one key to make again, and its fix is on screen to copy: `q` quits
/// without a "quit anyway?" (review D12). With other work unsaved, the pick is named too.
#[test]
fn a_remedy_pick_alone_does_not_hold_up_quit() {
    let mut app = App::demo();
    app.update(Action::PickRemedy);
    assert!(app.picked.is_some(), "a remedy was picked");
    app.update(Action::Quit);
    assert!(app.quit, "{:?}", app.overlay);

    let mut app = h200();
    app.update(Action::Answer(Answer::Yes));
    app.update(Action::ShowPane(Pane::Remedy));
    app.update(Action::PickRemedy);
    app.update(Action::Quit);
    assert!(!app.quit);
    match &app.overlay {
        Some(Overlay::ConfirmQuit { unsaved }) => assert_eq!(unsaved, "1 answer"),
        other => panic!("{other:?}"),
    }
}

/// The RTX PRO 6000 workstation with the CUDA toolkit not read (nvcc not found), the failure
/// classes and the onboarding checklist both walked (`--onboard`).
fn ws2_toolkit_unknown() -> App {
    let mut prepared = prepare(&InputArgs {
        snapshot: Some(PathBuf::from("tests/fixtures/kb/snapshots/sm120_ws2.yaml")),
        ..Default::default()
    })
    .expect("ws2 fixture");
    let sm120_doctor::input::Host::Recorded(snapshot) = &mut prepared.host else {
        panic!("a recorded host");
    };
    let Probed::Value(python) = &mut snapshot.python else {
        panic!("the fixture has a Python stack");
    };
    python.cuda_toolkit = Probed::skipped("nvcc not found (test)");
    build_app(prepared, Mode::All)
}

const TOOLKIT_NODES: [&str; 3] = ["fs_crash_toolkit", "fs_toolkit_old", "ob_toolkit_old"];

fn toolkit_waits(app: &App) -> Vec<String> {
    app.diagnosis
        .pending()
        .filter_map(|w| match &w.outcome {
            Outcome::NeedsAnswer { node, .. } if TOOLKIT_NODES.contains(&node.as_str()) => {
                Some(node.clone())
            }
            _ => None,
        })
        .collect()
}

/// "is the CUDA toolkit older than 12.9?" is one question in the failure walk
/// and the onboarding checklist: listed once, answered with labelled keys, and one answer
/// decides both, so the Summary cannot say "too old" and "new enough" at once.
#[test]
fn the_toolkit_question_is_asked_once_in_failure_walk_and_onboarding() {
    let app = ws2_toolkit_unknown();
    let waits = toolkit_waits(&app);
    assert!(
        waits.contains(&"fs_toolkit_old".to_string())
            && waits.contains(&"ob_toolkit_old".to_string()),
        "both walks reach the question: {waits:?}"
    );
    let open: Vec<&str> = app
        .diagnosis
        .open_questions()
        .filter_map(|w| match &w.outcome {
            Outcome::NeedsAnswer { node, .. } if TOOLKIT_NODES.contains(&node.as_str()) => {
                Some(node.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(open.len(), 1, "asked once: {open:?}");

    for (answer, old) in [(Answer::No, false), (Answer::Yes, true)] {
        let mut app = ws2_toolkit_unknown();
        let i = app
            .diagnosis
            .walks
            .iter()
            .position(|w| {
                matches!(&w.outcome, Outcome::NeedsAnswer { node, .. } if node == "fs_toolkit_old")
            })
            .expect("the failure walk asks it");
        app.update(Action::ShowClass(i));
        app.update(Action::ShowPane(Pane::Walk));
        let labels: Vec<(String, String)> = sm120_doctor::tui::state::keymap::bindings(&app)
            .into_iter()
            .filter(|b| b.shown == "y" || b.shown == "n")
            .map(|b| (b.shown.to_string(), b.label))
            .collect();
        assert_eq!(
            labels,
            vec![
                ("y".to_string(), "older than 12.9".to_string()),
                ("n".to_string(), "12.9 or newer".to_string())
            ]
        );
        app.update(Action::Answer(answer));
        assert!(toolkit_waits(&app).is_empty(), "one answer decides both");
        let ids: Vec<&str> = app
            .diagnosis
            .findings
            .iter()
            .map(|f| f.id.as_str())
            .collect();
        if old {
            assert!(ids.contains(&"onboard_toolkit_old"), "{ids:?}");
            assert!(!ids.contains(&"onboard_toolkit_ok"), "{ids:?}");
            assert!(!ids.contains(&"flashinfer_sampler_ok"), "{ids:?}");
        } else {
            assert!(ids.contains(&"onboard_toolkit_ok"), "{ids:?}");
            assert!(ids.contains(&"flashinfer_sampler_ok"), "{ids:?}");
            assert!(!ids.contains(&"onboard_toolkit_old"), "{ids:?}");
        }
    }
}

// ---- small things that slow a first day ----

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

#[test]
fn hjkl_are_the_arrows_where_no_key_takes_the_letter() {
    let mut app = App::demo();
    app.update(Action::ShowPane(Pane::Walk));
    assert_eq!(map_key(&app, key('l')), Some(Action::NextClass));
    assert_eq!(map_key(&app, key('h')), Some(Action::PrevClass));
    app.update(Action::ShowPane(Pane::Summary));
    assert_eq!(map_key(&app, key('j')), Some(Action::NextFinding));
    assert_eq!(map_key(&app, key('k')), Some(Action::PrevFinding));
    // In the launch editor they are letters.
    app.update(Action::ShowPane(Pane::Remedy));
    app.update(Action::StartEdit);
    assert!(matches!(map_key(&app, key('j')), Some(Action::EditKey(_))));
}

#[test]
fn p_on_a_recording_says_why_it_does_nothing() {
    let mut app = App::demo();
    assert!(!app.is_live());
    for c in ['p', 'P'] {
        let a = map_key(&app, key(c)).expect("bound");
        assert!(matches!(a, Action::Explain(_)), "{a:?}");
        app.update(a);
        assert!(
            app.status.contains("not a recording or the demo"),
            "{}",
            app.status
        );
    }
}

#[test]
fn x_clears_the_pasted_log_and_u_puts_it_back() {
    let mut app = App::demo();
    app.update(Action::ShowPane(Pane::Log));
    app.update(Action::Paste(demo::LOG.into()));
    let pasted = app.pasted_text();
    assert!(!pasted.is_empty());
    app.update(Action::ShowPane(Pane::Log));
    app.update(map_key(&app, key('x')).expect("x"));
    assert!(app.pasted_is_empty());
    assert!(app.status.contains("u puts it back"), "{}", app.status);
    app.update(map_key(&app, key('u')).expect("u after x"));
    assert_eq!(app.pasted_text(), pasted);
    assert!(!app.logs().is_empty());
}
