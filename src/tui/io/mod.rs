//! The io floor: everything that touches the terminal, a thread, the clipboard or the file
//! system. The event loop ([`run_loop`]) turns each [`Event`] into an [`Action`], hands it to
//! the state's `App::update` and performs the [`crate::tui::state::action::Effect`]s it returns
//! ([`effects::perform`]); then it draws ([`crate::tui::view::render`]).

pub mod clipboard;
pub mod effects;
pub mod event;
pub mod live;
pub mod terminal;

use crate::engine::Mode;
use crate::input::{Host, Prepared};
use crate::report::{EXIT_OK, EXIT_USAGE};
use crate::tui::state::action::{self as act, Action};
use crate::tui::state::app::App;
use crate::tui::state::{Screen, keymap, status};
use crate::tui::view::render;
use effects::EffectCtx;
use event::Event;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event as ct;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

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
pub(crate) fn action_for(app: &App, ev: Event) -> Result<Option<Action>, &'static str> {
    Ok(match ev {
        Event::Term(ct::Event::Key(k)) => keymap::map_key(app, k),
        Event::Term(ct::Event::Paste(s)) => Some(Action::Edit(act::Edit::Paste(s))),
        Event::Term(ct::Event::Resize(w, h)) => Some(Action::Control(act::Control::Resize(w, h))),
        Event::Term(ct::Event::Mouse(m)) => Some(Action::Control(act::Control::Mouse(m))),
        Event::Term(_) => None,
        Event::Gpu(u) => Some(Action::Arrival(act::Arrival::Gpu(u))),
        Event::Host(s) => Some(Action::Arrival(act::Arrival::Host(s))),
        Event::Python(p) => Some(Action::Arrival(act::Arrival::Python(p))),
        Event::Probe(p) => Some(Action::Probe(act::Probe::IpcDone(p))),
        Event::P2pProbe(p) => Some(Action::Probe(act::Probe::P2pDone(p))),
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
/// the app starts in [`Screen::Collecting`] and [`act::Arrival::Start`] reads it off the UI thread.
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
pub fn run(prepared: Prepared, mode: Mode, python: crate::input::LivePython) -> i32 {
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
        app.status = status::Status::error(format_args!("cannot watch for SIGTERM/SIGINT: {e}"));
    }
    let ctx = EffectCtx {
        events: Some(tx),
        period: Duration::from_secs(1),
        collector: live::collector(python),
        clipboard: effects::Clipboard::Terminal,
    };
    if let Ok(size) = guard.terminal.size() {
        app.size = (size.width, size.height);
    }
    // The first frame is on the screen before the live host's collection (or the refresher)
    // starts on other threads, so their start-up never competes with it for a busy CPU; Start
    // returns at once and the loop draws what arrives.
    let result = match guard.terminal.draw(|f| render(f, &app)) {
        Ok(_) => {
            dispatch(&mut app, Action::Arrival(act::Arrival::Start), &ctx);
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
