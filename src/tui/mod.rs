//! The interactive TUI: live GPU/env state beside a guided walk through the knowledge base.
//!
//! Input, GPU updates and signals arrive as one [`event::Event`] stream; keys become
//! [`action::Action`]s through the one keymap ([`keymap`]); [`app::App::update`] changes plain
//! state (its types in [`state`]) and returns [`action::Effect`]s, which [`effects::perform`]
//! carries out. Drawing is a pure
//! function of the state ([`render`]), one file per region:
//!
//! ```text
//! ┌ header (here): sm120-doctor · host · mode · ✗/!/? counts ───────────────────────────────┐
//! ├─ gpu.rs ───────────────────┬─ [1 Walk │ 2 Log │ 3 Remedy] ─────────────────────────────┤
//! │ GPU0 name                  │ walk.rs   class tabs, path, steps with evidence,          │
//! │  CC 12.0 SM120  PCIe       │           open question + keys, finding, remedies         │
//! │  util temp power           │ log.rs    logs with matching lines highlighted            │
//! │  mem ██████░░░░            │ remedy.rs picked remedy, the fix plan, launch editor      │
//! │ GPU0↔GPU1 PHB P2P NVLink   │                                                           │
//! │ driver · CUDA              │                                                           │
//! ├─ env.rs ───────────────────┤                                                           │
//! │ versions, ◆ used variables │                                                           │
//! ├────────────────────────────┴───────────────────────────────────────────────────────────┤
//! │ footer.rs: status message                                                              │
//! │ footer.rs: keys valid on this screen (from keymap::bindings)                           │
//! └────────────────────────────────────────────────────────────────────────────────────────┘
//!   overlays: help.rs (?), export.rs (path prompt, overwrite question)
//! ```
//! Below 80×24 only a "too small" message is drawn. With no host option the first frame comes
//! before the live host is read: [`Action::Start`] hands the reading to [`live::collector`]'s
//! threads and the screen says "collecting…" ([`state::Screen::Collecting`]) until the host
//! arrives as an event; the walk runs then, and again when the Python stack arrives.

pub mod action;
pub mod app;
pub mod effects;
pub mod env;
pub mod event;
pub mod export;
pub mod footer;
pub mod gpu;
pub mod help;
pub mod keymap;
pub mod live;
pub mod log;
pub mod preview;
pub mod probe;
pub mod remedy;
pub mod state;
pub mod terminal;
pub mod theme;
pub mod walk;

use crate::engine::Mode;
use crate::input::{Host, Prepared};
use crate::kb::schema::Severity;
use crate::report::{EXIT_OK, EXIT_USAGE};
use action::Action;
use app::App;
use effects::EffectCtx;
use event::Event;
use ratatui::backend::Backend;
use ratatui::crossterm::event as ct;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::{Frame, Terminal};
use state::{Overlay, Pane, Screen};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};
use theme::Theme;

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// Test-only switch: panic this many milliseconds after start (checks terminal restore). Read
/// only in builds with the `test-panic` feature, which `cargo test` turns on (the package's
/// dev-dependency on itself) and a release build does not have.
#[cfg(feature = "test-panic")]
pub const TEST_PANIC_ENV: &str = "SM120_DOCTOR_TEST_PANIC_AFTER_MS";

/// When the test-only switch asks for a panic.
#[cfg(feature = "test-panic")]
fn test_panic_at() -> Option<Instant> {
    std::env::var(TEST_PANIC_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(|ms| Instant::now() + Duration::from_millis(ms))
}

/// Without the `test-panic` feature the switch does not exist.
#[cfg(not(feature = "test-panic"))]
fn test_panic_at() -> Option<Instant> {
    None
}

#[cfg(feature = "test-panic")]
fn forced_test_panic() -> ! {
    panic!("forced test panic (the test-panic feature)")
}

/// Never called without the feature (`test_panic_at` is `None`), and carries no message.
#[cfg(not(feature = "test-panic"))]
fn forced_test_panic() -> ! {
    std::process::abort()
}

/// Draw the whole screen from the state.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let theme = Theme::new(app.color);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area);
        return;
    }
    let [header, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    render_header(frame, header, app, theme);
    match app.screen {
        Screen::Collecting => render_collecting(frame, body, app, theme),
        Screen::NoHost => render_no_host(frame, body, app, theme),
        Screen::Main => render_main(frame, body, app, theme),
    }
    footer::render(frame, status, keys, app, theme);
    match &app.overlay {
        Some(Overlay::Help) => help::render(frame, body, theme),
        Some(o) => export::render(frame, body, app, o, theme),
        None => {}
    }
}

fn too_small(frame: &mut Frame, area: Rect) {
    let msg = format!(
        "Terminal is {}×{}; sm120-doctor needs at least {MIN_WIDTH}×{MIN_HEIGHT}. Enlarge the window, or press q to quit.",
        area.width, area.height
    );
    frame.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
}

fn render_header(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let d = &app.diagnosis;
    let count = |s: Severity| d.findings.iter().filter(|f| f.severity == s).count();
    let mode = match app.mode {
        Mode::Failures => "failures",
        Mode::Onboarding => "onboarding",
        Mode::All => "onboarding + failures",
    };
    let host = match app.screen {
        Screen::Collecting => format!("{} ({})", app.snapshot.origin, app::COLLECTING),
        Screen::NoHost => "none".to_string(),
        Screen::Main => app.snapshot.origin.clone(),
    };
    if app.collecting.host {
        // No counts before there is a host to count findings on.
        let line = Line::from(vec![
            Span::styled(" sm120-doctor ", theme.selected()),
            Span::raw(format!(" host: {host} · mode: {mode}")),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let line = Line::from(vec![
        Span::styled(" sm120-doctor ", theme.selected()),
        Span::raw(format!(" host: {host} · mode: {mode} · ")),
        Span::styled(
            format!("✗ {} ", count(Severity::Error)),
            theme.severity(Severity::Error),
        ),
        Span::styled(
            format!("! {} ", count(Severity::Warning)),
            theme.severity(Severity::Warning),
        ),
        Span::styled(format!("? {}", d.pending().count()), theme.question()),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

/// Before the live host has been read: the panels, each saying what it waits for, and what is
/// being read on the right. Keys: quit and help.
fn render_collecting(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let left_w = (area.width * 2 / 5).clamp(36, 70);
    let [left, right] =
        Layout::horizontal([Constraint::Length(left_w), Constraint::Min(0)]).areas(area);
    let gpu_h = gpu::height(app).min(left.height.saturating_sub(6));
    let [gpu_area, env_area] =
        Layout::vertical([Constraint::Length(gpu_h), Constraint::Min(0)]).areas(left);
    gpu::render(frame, gpu_area, app, theme);
    env::render(frame, env_area, app, theme);
    let limits = crate::input::live_options();
    let lines = vec![
        Line::default(),
        Line::from(Span::styled(
            format!("{} reading this host", app::COLLECTING),
            theme.title(),
        )),
        Line::default(),
        Line::from(format!(
            "  · NVML: GPUs, links, driver (a hung driver is given up after {:.0} s)",
            limits.nvml_timeout.as_secs_f64()
        )),
        Line::from("  · the environment vLLM would get, the OS, processes on the GPUs"),
        Line::from(format!(
            "  · the Python stack: vLLM, torch, FlashInfer versions (up to {:.0} s)",
            limits.python_timeout.as_secs_f64()
        )),
        Line::default(),
        Line::from(
            "The walk runs as soon as the host is read and again when the Python stack arrives.",
        ),
    ];
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" {} ", app::COLLECTING)),
        ),
        right,
    );
}

fn render_no_host(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let mut lines = vec![
        Line::default(),
        Line::from(Span::styled("No host to look at", theme.title())),
        Line::default(),
        Line::from(format!("{}.", app.no_host_reason)),
        Line::default(),
        Line::from(vec![
            Span::raw("Press "),
            Span::styled(" d ", theme.selected()),
            Span::raw(
                " to open the embedded demo (the vLLM #47266 reporter's 2× RTX PRO 6000 host).",
            ),
        ]),
        Line::from(
            "Or run with --snapshot FILE or --collect-env FILE (the output of `vllm collect-env`).",
        ),
    ];
    if app.probe_running || app.snapshot.probe.value().is_some() {
        walk::probe_section(&mut lines, app, theme);
    } else if app.can_probe() {
        lines.push(Line::from(
            "Press p to run the allocator/IPC probe here anyway (it says why it cannot run).",
        ));
    }
    if app.p2p_running || app.snapshot.p2p_probe.value().is_some() {
        walk::p2p_section(&mut lines, app, theme);
    } else if app.can_probe_p2p() {
        lines.push(Line::from(
            "Press P to run the P2P probe here anyway (it says why it cannot run).",
        ));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL)),
        area,
    );
}

fn render_main(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let left_w = (area.width * 2 / 5).clamp(36, 70);
    let [left, right] =
        Layout::horizontal([Constraint::Length(left_w), Constraint::Min(0)]).areas(area);
    let gpu_h = gpu::height(app).min(left.height.saturating_sub(6));
    let [gpu_area, env_area] =
        Layout::vertical([Constraint::Length(gpu_h), Constraint::Min(0)]).areas(left);
    gpu::render(frame, gpu_area, app, theme);
    env::render(frame, env_area, app, theme);

    let mut tabs = vec![Span::raw(" ")];
    for p in Pane::ALL {
        let style = if p == app.pane {
            theme.selected()
        } else {
            theme.dim()
        };
        tabs.push(Span::styled(format!(" {} ", p.title()), style));
        tabs.push(Span::raw(" "));
    }
    if app.collecting.python {
        tabs.push(Span::styled(
            format!("· Python stack: {} ", app::COLLECTING),
            theme.question(),
        ));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Line::from(tabs));
    let inner = block.inner(right);
    frame.render_widget(block, right);
    match app.pane {
        Pane::Walk => walk::render(frame, inner, app, theme),
        Pane::Log => log::render(frame, inner, app, theme),
        Pane::Remedy => remedy::render(frame, inner, app, theme),
    }
}

/// Apply an action and perform every effect it leads to.
pub fn dispatch(app: &mut App, action: Action, ctx: &EffectCtx) {
    let mut queue = vec![action];
    while let Some(a) = queue.pop() {
        for effect in app.update(a) {
            queue.extend(effects::perform(effect, app, ctx));
        }
    }
}

/// Turn one event into an action (keys through the keymap).
pub fn action_for(app: &App, ev: Event) -> Result<Option<Action>, &'static str> {
    Ok(match ev {
        Event::Term(ct::Event::Key(k)) => keymap::map_key(app, k),
        Event::Term(ct::Event::Paste(s)) => Some(Action::Paste(s)),
        Event::Term(ct::Event::Resize(..)) => Some(Action::Resize),
        Event::Term(_) => None,
        Event::Gpu(u) => Some(Action::Gpu(u)),
        Event::Host(s) => Some(Action::HostCollected(s)),
        Event::Python(p) => Some(Action::PythonCollected(p)),
        Event::Probe(p) => Some(Action::ProbeDone(p)),
        Event::P2pProbe(p) => Some(Action::P2pProbeDone(p)),
        Event::Signal(name) => return Err(name),
    })
}

/// How the loop ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    Quit,
    Signal(&'static str),
}

/// The event loop: draw once at once, then wait for events (no polling) and redraw after each.
pub fn run_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    rx: &Receiver<Event>,
    ctx: &EffectCtx,
    panic_at: Option<Instant>,
) -> Result<Exit, B::Error> {
    terminal.draw(|f| render(f, app))?;
    loop {
        let ev = match panic_at {
            Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(ev) => ev,
                Err(RecvTimeoutError::Timeout) => forced_test_panic(),
                Err(RecvTimeoutError::Disconnected) => return Ok(Exit::Quit),
            },
            None => match rx.recv() {
                Ok(ev) => ev,
                Err(_) => return Ok(Exit::Quit),
            },
        };
        match action_for(app, ev) {
            Ok(Some(a)) => dispatch(app, a, ctx),
            Ok(None) => continue,
            Err(signal) => return Ok(Exit::Signal(signal)),
        }
        if app.quit {
            return Ok(Exit::Quit);
        }
        terminal.draw(|f| render(f, app))?;
    }
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Build the app from prepared inputs (no terminal involved). A live host is not read here:
/// the app starts in [`Screen::Collecting`] and [`Action::Start`] reads it off the UI thread.
pub fn build_app(prepared: Prepared, mode: Mode) -> App {
    let mut app = match prepared.host {
        Host::Live => App::collecting(
            prepared.kb,
            prepared.launch,
            prepared.logs,
            prepared.answers,
            mode,
        ),
        Host::Recorded(mut snapshot) => {
            crate::input::apply_launch(&mut snapshot, prepared.launch);
            App::new(
                prepared.kb,
                *snapshot,
                prepared.logs,
                prepared.answers,
                mode,
                Screen::Main,
            )
        }
    };
    app.color = !no_color();
    app
}

/// `sm120-doctor` with no subcommand. Returns the exit code.
pub fn run(prepared: Prepared, mode: Mode) -> i32 {
    let mut app = build_app(prepared, mode);
    let panic_at = test_panic_at();
    let mut guard = match terminal::Guard::enter() {
        Ok(g) => g,
        Err(e) => {
            eprintln!(
                "sm120-doctor: cannot open the terminal for the TUI: {e} (try `sm120-doctor check`)"
            );
            return EXIT_USAGE;
        }
    };
    let (tx, rx) = mpsc::channel();
    event::spawn_input(tx.clone());
    if let Err(e) = event::spawn_signals(tx.clone()) {
        app.status = format!("error: cannot watch for SIGTERM/SIGINT: {e}");
    }
    let ctx = EffectCtx {
        events: Some(tx),
        period: Duration::from_secs(1),
        collector: live::collector(),
    };
    // The first frame is on the screen before the live host's collection (or the refresher)
    // starts on other threads, so their start-up never competes with it for a busy CPU; Start
    // returns at once and the loop draws what arrives.
    let result = match guard.terminal.draw(|f| render(f, &app)) {
        Ok(_) => {
            dispatch(&mut app, Action::Start, &ctx);
            run_loop(&mut guard.terminal, &mut app, &rx, &ctx, panic_at)
        }
        Err(e) => Err(e),
    };
    drop(guard);
    match result {
        Ok(Exit::Quit) => EXIT_OK,
        Ok(Exit::Signal(name)) => {
            eprintln!("sm120-doctor: {name} received; terminal restored");
            match name {
                "SIGINT" => 130,
                "SIGHUP" => 129,
                _ => 143,
            }
        }
        Err(e) => {
            eprintln!("sm120-doctor: terminal error: {e}");
            1
        }
    }
}
