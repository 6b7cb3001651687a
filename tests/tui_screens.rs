//! Screen snapshots of every TUI screen (TestBackend + insta), for the demo and the H200 host.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sm120_doctor::engine::Answer;
use sm120_doctor::engine::Mode;
use sm120_doctor::input::{InputArgs, prepare};
use sm120_doctor::snapshot::{HostSnapshot, IpcProbe, Probed};
use sm120_doctor::tui::action::Action;
use sm120_doctor::tui::app::App;
use sm120_doctor::tui::state::{Pane, Screen};
use sm120_doctor::tui::{build_app, render};
use std::path::PathBuf;

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| render(f, app)).expect("draw");
    t.backend().to_string()
}

fn h200_fixture() -> PathBuf {
    // Relative: cargo runs integration tests in the package root, and the path shows on screen.
    PathBuf::from("tests/fixtures/tui/h200-torch-collect-env-expandable.txt")
}

fn h200() -> App {
    build_app(
        prepare(&InputArgs {
            collect_env: Some(h200_fixture()),
            ..Default::default()
        })
        .expect("h200 fixture loads"),
        Mode::Failures,
    )
}

fn demo() -> App {
    let mut app = App::demo();
    app.color = false;
    app
}

fn key(c: char) -> Action {
    Action::EditKey(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

#[test]
fn demo_screens() {
    let mut app = demo();
    insta::assert_snapshot!("demo_walk", draw(&app, 120, 40));
    app.update(Action::SelectNext);
    insta::assert_snapshot!("demo_walk_second_remedy", draw(&app, 120, 40));
    app.update(Action::SelectPrev);
    app.update(Action::NextClass);
    insta::assert_snapshot!("demo_walk_other_class", draw(&app, 120, 40));
    app.update(Action::PrevClass);
    app.update(Action::ShowPane(Pane::Log));
    insta::assert_snapshot!("demo_log", draw(&app, 120, 40));
    app.update(Action::StartEdit);
    app.update(key('x'));
    insta::assert_snapshot!("demo_log_editing", draw(&app, 120, 40));
    app.update(Action::Close);
    app.update(Action::ShowPane(Pane::Remedy));
    insta::assert_snapshot!("demo_remedy_none_picked", draw(&app, 120, 40));
    app.update(Action::ShowPane(Pane::Walk));
    app.update(Action::PickRemedy);
    insta::assert_snapshot!("demo_remedy", draw(&app, 120, 40));
    app.update(Action::OpenWriteLaunch);
    insta::assert_snapshot!("demo_write_launch_prompt", draw(&app, 120, 40));
    app.update(Action::Close);
    app.update(Action::ToggleHelp);
    insta::assert_snapshot!("demo_help", draw(&app, 120, 40));
    app.update(Action::Close);
    app.update(Action::OpenExport);
    insta::assert_snapshot!("demo_export", draw(&app, 120, 40));
    app.update(Action::ToggleFormat);
    insta::assert_snapshot!("demo_export_json", draw(&app, 120, 40));
    app.update(Action::Close);
    app.update(Action::AskOverwrite(
        sm120_doctor::tui::action::Effect::Export {
            format: sm120_doctor::tui::state::ExportFormat::Text,
            path: "report.txt".into(),
            overwrite: false,
        },
    ));
    insta::assert_snapshot!("demo_confirm_overwrite", draw(&app, 120, 40));
}

#[test]
fn demo_at_minimum_and_wide_sizes() {
    let app = demo();
    insta::assert_snapshot!("demo_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("demo_200x50", draw(&app, 200, 50));
}

#[test]
fn too_small_says_so() {
    let app = demo();
    let s = draw(&app, 79, 24);
    assert!(s.contains("needs at least 80×24"), "{s}");
    assert!(!s.contains("GPU0"), "{s}");
    insta::assert_snapshot!("too_small_79x24", s);
    let s = draw(&app, 100, 23);
    assert!(s.contains("Terminal is 100×23"), "{s}");
}

#[test]
fn no_host_screen_offers_the_demo() {
    // A live host whose collector found no driver (fixed, so the screen does not depend on the
    // machine running the test).
    let kb = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb");
    let reason = "NVML library (libnvidia-ml.so.1) not found";
    let snap = HostSnapshot::empty("live", reason);
    let mut app = App::new(
        kb,
        snap,
        Vec::new(),
        Default::default(),
        Mode::Failures,
        Screen::NoHost,
    );
    app.no_host_reason = sm120_doctor::tui::live::no_gpu_reason(&app.snapshot).expect("no gpu");
    app.color = false;
    let s = draw(&app, 100, 30);
    assert!(s.contains("No host to look at"), "{s}");
    assert!(s.contains(" d  open the demo"), "{s}");
    assert!(s.contains(reason), "{s}");
    assert!(s.contains(" p  probe IPC"), "{s}");
    insta::assert_snapshot!("no_host", s);
    // The probe's skip reasons show on the same screen.
    app.update(Action::RunProbe);
    app.update(Action::ProbeDone(Box::new(IpcProbe {
        engine_alloc_conf: None,
        engine_alloc_source: "allocator variables unset in this shell".into(),
        native: Probed::skipped("libcuda.so.1 not found"),
        torch: Probed::failed("torch.cuda.is_available() is False"),
    })));
    let s = draw(&app, 100, 30);
    assert!(s.contains("native: skipped: libcuda.so.1 not found"), "{s}");
    insta::assert_snapshot!("no_host_probe_skipped", s);
}

#[test]
fn pr_script_preview_screen() {
    let mut app = demo();
    let idx = app
        .current_remedies()
        .iter()
        .position(|r| r.id == "apply_pr_43923")
        .expect("offered");
    for _ in 0..idx {
        app.update(Action::SelectNext);
    }
    app.update(Action::PickRemedy);
    let s = draw(&app, 120, 40);
    // The script's command (wrapped in the pane) and, still, the plan's combined command.
    assert!(
        s.contains("w writes its script: sm120-doctor patch-script --pr 43923 -o"),
        "{s}"
    );
    assert!(s.contains("Run this (w writes it; nothing is run)"), "{s}");
    assert!(s.contains("w  write script"), "{s}");
    insta::assert_snapshot!("demo_remedy_pr_script", s);
}

#[test]
fn onboard_screen() {
    let mut app = build_app(
        prepare(&InputArgs {
            demo: true,
            ..Default::default()
        })
        .expect("onboard app"),
        Mode::All,
    );
    app.color = false;
    let s = draw(&app, 120, 40);
    assert!(s.contains("mode: onboarding + failures"), "{s}");
    insta::assert_snapshot!("demo_onboard", s);
}

#[test]
fn h200_screens() {
    let mut app = h200();
    app.color = false;
    let s = draw(&app, 120, 40);
    assert!(s.contains("NVIDIA H200"), "{s}");
    assert!(s.contains("(not SM120)"), "{s}");
    insta::assert_snapshot!("h200_walk_question", s);
    app.update(Action::Answer(Answer::Yes));
    insta::assert_snapshot!("h200_walk_after_yes", draw(&app, 120, 40));
    app.update(Action::ShowPane(Pane::Log));
    insta::assert_snapshot!("h200_log_empty", draw(&app, 120, 40));
    app.update(Action::ShowPane(Pane::Remedy));
    insta::assert_snapshot!("h200_remedy", draw(&app, 120, 40));
    app.update(Action::ToggleHelp);
    insta::assert_snapshot!("h200_help", draw(&app, 120, 40));
    app.update(Action::Close);
    app.update(Action::OpenExport);
    insta::assert_snapshot!("h200_export", draw(&app, 120, 40));
    app.update(Action::Close);
    insta::assert_snapshot!("h200_80x24", draw(&app, 80, 24));
}

#[test]
fn no_color_draws_without_colours() {
    let app = demo();
    let mut t = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    t.draw(|f| render(f, &app)).expect("draw");
    let buf = t.backend().buffer();
    for cell in buf.content() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset, "{cell:?}");
        assert_eq!(cell.bg, ratatui::style::Color::Reset, "{cell:?}");
    }
    let mut coloured = App::demo();
    coloured.color = true;
    t.draw(|f| render(f, &coloured)).expect("draw");
    assert!(
        t.backend()
            .buffer()
            .content()
            .iter()
            .any(|c| c.fg != ratatui::style::Color::Reset),
        "colour mode uses colours"
    );
}

#[test]
fn h200x2_device_capture() {
    // collect_env + `nvidia-smi topo -m`, captured on the 2× H200 device machine (see README).
    let mut app = build_app(
        prepare(&InputArgs {
            collect_env: Some(PathBuf::from(
                "tests/fixtures/tui/h200x2-device-collect-env-topo.txt",
            )),
            ..Default::default()
        })
        .expect("device capture loads"),
        Mode::Failures,
    );
    app.color = false;
    let s = draw(&app, 120, 40);
    assert!(s.contains("GPU1 NVIDIA H200"), "{s}");
    assert!(s.contains("GPU0↔GPU1 NV18  P2P yes  NVLink yes"), "{s}");
    insta::assert_snapshot!("h200x2_device_walk", s);
}

/// The live host before it is read: drawn at once, every panel saying what it waits for.
#[test]
fn collecting_screen() {
    let mut app = build_app(
        prepare(&InputArgs::default()).expect("no input is valid input"),
        Mode::Failures,
    );
    app.color = false;
    assert_eq!(app.screen, Screen::Collecting);
    let s = draw(&app, 120, 40);
    assert!(s.contains("host: live (collecting…)"), "{s}");
    assert!(s.contains("GPUs: collecting…"), "{s}");
    insta::assert_snapshot!("collecting", s);
}
