//! Screen snapshots of every TUI screen (TestBackend + insta), each at the advertised minimum
//! (80×24) and at 200×50, for the demo, the H200 hosts and the no-host screens. The 80×24
//! screens are also checked for what must always show there: the counts, the verdict and the
//! keys q ? e w.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use sm120_doctor::engine::Answer;
use sm120_doctor::engine::Mode;
use sm120_doctor::input::{InputArgs, prepare};
use sm120_doctor::snapshot::{HostSnapshot, IpcProbe, Probed};
use sm120_doctor::tui::state::action::{Action, Effect};
use sm120_doctor::tui::state::app::App;
use sm120_doctor::tui::state::{ExportFormat, Pane, Screen, ScrollBy};
use sm120_doctor::tui::{build_app, render};
use std::path::PathBuf;

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| render(f, app)).expect("draw");
    t.backend().to_string()
}

/// The screen at 80×24 and at 200×50, under `name_80x24` and `name_200x50`. The app is told
/// each size (as the loop would) so scrolling clamps as it would on that screen.
fn both(name: &str, app: &mut App) -> (String, String) {
    app.update(Action::Resize(80, 24));
    let small = draw(app, 80, 24);
    insta::assert_snapshot!(format!("{name}_80x24"), small);
    app.update(Action::Resize(200, 50));
    let big = draw(app, 200, 50);
    insta::assert_snapshot!(format!("{name}_200x50"), big);
    (small, big)
}

/// What the advertised minimum always shows on the main screen.
fn essentials_at_80x24(name: &str, s: &str, verdict: &str) {
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines[0].contains("✗ ") && lines[0].contains("! ") && lines[0].contains("? "),
        "{name}: counts in the header:\n{s}"
    );
    assert!(lines[1].contains(verdict), "{name}: the verdict:\n{s}");
    let keys = lines[lines.len() - 1];
    for k in [" q ", " ? ", " e ", " w "] {
        assert!(keys.contains(k), "{name}: key {k:?} in the footer:\n{s}");
    }
}

fn h200_fixture() -> PathBuf {
    // Relative: cargo runs integration tests in the package root, and the path shows on screen.
    PathBuf::from("tests/fixtures/tui/h200-torch-collect-env-expandable.txt")
}

fn h200() -> App {
    let mut app = build_app(
        prepare(&InputArgs {
            collect_env: Some(h200_fixture()),
            ..Default::default()
        })
        .expect("h200 fixture loads"),
        Mode::Failures,
    );
    app.color = false;
    app
}

fn demo() -> App {
    let mut app = App::demo();
    app.color = false;
    app
}

fn key(c: char) -> Action {
    Action::EditKey(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

const DEMO_VERDICT: &str = "✗ Custom all-reduce crashed on expandable_segments";

#[test]
fn demo_screens() {
    let mut app = demo();
    assert_eq!(
        app.pane,
        Pane::Summary,
        "a finding: the Summary comes first"
    );
    let (s, big) = both("demo_summary", &mut app);
    essentials_at_80x24("summary", &s, DEMO_VERDICT);
    assert!(s.contains("c  copy fix"), "{s}");
    assert!(big.contains("export PYTORCH_CUDA_ALLOC_CONF=''"), "{big}");

    app.update(Action::ShowPane(Pane::Walk));
    let (s, _) = both("demo_walk", &mut app);
    essentials_at_80x24("walk", &s, DEMO_VERDICT);
    assert!(
        !s.contains("aipc_crash_seen"),
        "ids only with details:\n{s}"
    );
    app.update(Action::Scroll(ScrollBy::Bottom));
    let (s, _) = both("demo_walk_end", &mut app);
    assert!(s.contains(" of "), "position on the border:\n{s}");
    app.update(Action::Scroll(ScrollBy::Top));
    app.update(Action::ToggleDetails);
    let (s, _) = both("demo_walk_details", &mut app);
    assert!(s.contains("✗ allocator_ipc"), "{s}");
    app.update(Action::ToggleDetails);
    app.update(Action::NextClass);
    both("demo_walk_other_class", &mut app);
    app.update(Action::PrevClass);

    app.update(Action::ShowPane(Pane::Log));
    let (s, _) = both("demo_log", &mut app);
    essentials_at_80x24("log", &s, DEMO_VERDICT);
    app.update(Action::OpenSearch);
    for c in "invalid".chars() {
        app.update(Action::SearchChar(c));
    }
    both("demo_log_search_typing", &mut app);
    app.update(Action::SearchSubmit);
    let (s, _) = both("demo_log_search", &mut app);
    assert!(s.contains("/invalid 1 of 1"), "{s}");
    app.update(Action::StartEdit);
    app.update(key('x'));
    both("demo_log_editing", &mut app);
    app.update(Action::Close);

    app.update(Action::ShowPane(Pane::Remedy));
    let (s, _) = both("demo_remedy", &mut app);
    essentials_at_80x24("remedy", &s, DEMO_VERDICT);
    assert!(
        s.contains("Your launch command, as given"),
        "the editor says it holds the command as given:\n{s}"
    );
    // Editing: the cursor at the end, typed words after the user's arguments, Enter / Esc.
    app.update(Action::StartEdit);
    for c in " --max-num-seqs 8".chars() {
        app.update(key(c));
    }
    let (s, big) = both("demo_remedy_editing", &mut app);
    assert!(
        s.contains("Enter  apply") && s.contains("Esc  cancel"),
        "{s}"
    );
    assert!(
        big.contains("FULL_AND_PIECEWISE\"}' --max-num-seqs 8"),
        "{big}"
    );
    app.update(Action::Close);
    assert!(app.status.contains("edit cancelled"), "{}", app.status);
    app.update(Action::PickRemedy);
    both("demo_remedy_picked", &mut app);
    app.update(Action::OpenWriteLaunch);
    let (s, _) = both("demo_write_launch_prompt", &mut app);
    assert!(s.contains("Write the fixed launch command"), "{s}");
    app.update(Action::Close);
    app.update(Action::ToggleHelp);
    let (s, big) = both("demo_help", &mut app);
    assert!(
        big.contains("mouse  click a tab"),
        "the whole help fits at 200×50:\n{big}"
    );
    assert!(
        s.contains("↑/↓ scroll · rows 1–"),
        "80×24 says the help scrolls:\n{s}"
    );
    // At 80×24 the end of the help is a scroll away.
    app.update(Action::Resize(80, 24));
    app.update(Action::HelpScroll(ScrollBy::Bottom));
    let s = draw(&app, 80, 24);
    assert!(s.contains("mouse  click a tab"), "{s}");
    insta::assert_snapshot!("demo_help_end_80x24", s);
    app.update(Action::Close);
    app.update(Action::OpenExport);
    both("demo_export", &mut app);
    app.update(Action::ToggleFormat);
    both("demo_export_json", &mut app);
    app.update(Action::Close);
    app.update(Action::AskOverwrite(Effect::Export {
        format: ExportFormat::Text,
        path: "report.txt".into(),
        overwrite: false,
    }));
    both("demo_confirm_overwrite", &mut app);
    app.update(Action::ConfirmNo);
    // A remedy was picked: quitting asks first.
    app.update(Action::Quit);
    let (s, _) = both("demo_confirm_quit", &mut app);
    assert!(s.contains("Quit without saving?"), "{s}");
    assert!(!app.quit);
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
    app.no_host_reason =
        sm120_doctor::tui::state::app::no_gpu_reason(&app.snapshot).expect("no gpu");
    app.color = false;
    let (s, big) = both("no_host", &mut app);
    for s in [&s, &big] {
        assert!(s.contains("No host to look at"), "{s}");
        assert!(s.contains(" d  open the demo"), "{s}");
        assert!(
            !s.lines().next().unwrap_or("").contains("? "),
            "no counts without a host: {s}"
        );
    }
    assert!(big.contains(reason), "{big}");
    assert!(big.contains(" p  probe IPC"), "{big}");
    // The probe's skip reasons show on the same screen.
    app.update(Action::RunProbe);
    app.update(Action::ProbeDone(Box::new(IpcProbe {
        engine_alloc_conf: None,
        engine_alloc_source: "allocator variables unset in this shell".into(),
        native: Probed::skipped("libcuda.so.1 not found"),
        torch: Probed::failed("torch.cuda.is_available() is False"),
    })));
    let (_, big) = both("no_host_probe_skipped", &mut app);
    assert!(
        big.contains("native: skipped: libcuda.so.1 not found"),
        "{big}"
    );
    // A paste is not lost: the log is read without a host.
    app.update(Action::Paste(sm120_doctor::import::demo::LOG.to_string()));
    assert_eq!(app.screen, Screen::Main);
    let (s, _) = both("no_host_pasted", &mut app);
    assert!(s.contains("read without a host"), "{s}");
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
    // The pick scrolled to the plan at the size it was made at; from the top both screens show
    // the choice and, at 200×50, the plan under it.
    app.update(Action::Scroll(ScrollBy::Top));
    let (_, big) = both("demo_remedy_pr_script", &mut app);
    assert!(
        big.contains("w writes its script: sm120-doctor patch-script --pr 43923 -o"),
        "{big}"
    );
    assert!(big.contains("Run this instead of your launch"), "{big}");
    assert!(big.contains("w  write script"), "{big}");
    app.update(Action::OpenWriteLaunch);
    let (s, _) = both("demo_write_script_prompt", &mut app);
    assert!(s.contains("Write the PR apply script"), "{s}");
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
    app.update(Action::ShowPane(Pane::Walk));
    let i = app
        .diagnosis
        .walks
        .iter()
        .position(|w| w.class == "onboarding")
        .expect("checklist walks");
    app.update(Action::ShowClass(i + 2));
    let (_, big) = both("demo_onboard", &mut app);
    assert!(big.contains("mode: onboarding + failures"), "{big}");
    assert!(big.contains("item 3 of 9: CUDA driver version"), "{big}");
}

#[test]
fn h200_screens() {
    let mut app = h200();
    assert_eq!(
        app.pane,
        Pane::Walk,
        "questions, no finding: the walk comes first"
    );
    // p2p_applies asks too now: a one-GPU paste does not decide that TP stays on one GPU.
    let (s, big) = both("h200_walk_question", &mut app);
    essentials_at_80x24("h200 walk", &s, "? no verdict yet: 3 questions need you");
    assert!(big.contains("NVIDIA H200"), "{big}");
    assert!(big.contains("(not SM120)"), "{big}");
    assert!(
        big.contains("GPUs · recorded, not live"),
        "a static file does not refresh:\n{big}"
    );
    assert!(
        big.contains("no launch command yet (4, then i: type or paste yours)"),
        "the question names the TUI's keys:\n{big}"
    );
    assert!(!big.contains("--launch-file"), "{big}");
    app.update(Action::Answer(Answer::Yes));
    both("h200_walk_after_yes", &mut app);
    app.update(Action::ShowPane(Pane::Summary));
    both("h200_summary", &mut app);
    app.update(Action::ShowPane(Pane::Log));
    both("h200_log_empty", &mut app);
    app.update(Action::ShowPane(Pane::Remedy));
    both("h200_remedy", &mut app);
    app.update(Action::ToggleHelp);
    both("h200_help", &mut app);
    app.update(Action::Close);
    app.update(Action::OpenExport);
    both("h200_export", &mut app);
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
    let (_, big) = both("h200x2_device_walk", &mut app);
    assert!(big.contains("GPU1 NVIDIA H200"), "{big}");
    assert!(big.contains("GPU0↔GPU1 NV18  P2P yes  NVLink yes"), "{big}");
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
    let (_, big) = both("collecting", &mut app);
    assert!(big.contains("host: live (collecting…)"), "{big}");
    assert!(big.contains("GPUs: collecting…"), "{big}");
}

/// The demo host without its launch: two questions are each shared by two walks (the FP8 one
/// by the DeepGEMM and FP8-tuning walks, the DeepSeek sparse-attention one by two more). The
/// Summary lists each open question once, with the walks one answer decides.
#[test]
fn shared_questions_listed_once_screen() {
    let kb = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb");
    let mut snap = sm120_doctor::import::demo_snapshot();
    snap.launch = Probed::missing(sm120_doctor::snapshot::Input::Launch);
    let mut app = App::new(
        kb,
        snap,
        Vec::new(),
        Default::default(),
        Mode::Failures,
        Screen::Main,
    );
    app.color = false;
    app.update(Action::ShowPane(Pane::Summary));
    let (_, big) = both("demo_no_launch_summary", &mut app);
    let fp8 = "? Is the model FP8 block-quantised";
    assert_eq!(big.matches(fp8).count(), 1, "{big}");
    assert!(big.contains("one answer decides 2 walks"), "{big}");
}

/// Untrusted text with terminal control sequences in it: an OSC 52 (sets the clipboard), a
/// CSI that clears the screen, a C1 CSI, a DEL and a bare CR.
const HOSTILE: &str = "x\u{1b}]52;c;cm0gLXJmIH4=\u{7} \u{1b}[2J \u{9b}31m \u{7f} \r end";

/// Every cell of a drawn screen, as the terminal would get it.
fn cells(app: &App, w: u16, h: u16) -> (String, Vec<String>) {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| render(f, app)).expect("draw");
    let symbols = t
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol().to_string())
        .collect();
    (t.backend().to_string(), symbols)
}

#[test]
fn control_characters_from_untrusted_text_reach_the_screen_escaped() {
    let mut app = demo();
    // A KB title, a GPU name, a host's file name, a log file's name and its lines, a paste.
    for c in &mut app.kb.classes {
        c.def.title = format!("class {HOSTILE}");
    }
    if let Probed::Value(gpus) = &mut app.snapshot.gpus {
        gpus[0].name = Probed::Value(format!("GPU {HOSTILE}"));
    }
    app.snapshot.origin = sm120_doctor::snapshot::Origin::CollectEnv(format!("env{HOSTILE}.txt"));
    app.update(Action::LogLoaded(sm120_doctor::engine::classify::LogText {
        name: format!("crash{HOSTILE}.log"),
        text: format!("INFO start\nERROR {HOSTILE}\n"),
    }));
    app.update(Action::Paste(format!("pasted {HOSTILE}\n")));
    for f in &mut app.diagnosis.findings {
        f.title = format!("finding {HOSTILE}").into();
    }
    app.update(Action::Resize(200, 50));
    let mut shown = String::new();
    for pane in Pane::ALL {
        app.update(Action::ShowPane(pane));
        let (screen, symbols) = cells(&app, 200, 50);
        let bad: Vec<&String> = symbols
            .iter()
            .filter(|s| s.chars().any(char::is_control))
            .collect();
        assert!(
            bad.is_empty(),
            "{pane:?}: control characters {bad:?} in\n{screen}"
        );
        shown.push_str(&screen);
    }
    // Shown for what they are, as the CLI shows them (ratatui alone would drop the bytes and
    // leave "]52;c;…" looking like text).
    for escaped in [
        "\\x1b]52;c;cm0gLXJmIH4=\\x07",
        "\\x1b[2J",
        "\\u009b31m",
        "\\u007f",
        "\\x0d",
    ] {
        assert!(shown.contains(escaped), "{escaped} not shown:\n{shown}");
    }
    for place in [
        "GPU x\\x1b",
        "envx\\x1b",
        "crashx\\x1b",
        "ERROR x\\x1b",
        "pasted x\\x1b",
    ] {
        assert!(shown.contains(place), "{place} not shown:\n{shown}");
    }
}
