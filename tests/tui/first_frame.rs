//! The TUI draws before it reads the live host: the real start (`Action::Start`) and event loop
//! (`run_loop`) with a fake collector that holds each part back until the test releases it, on a
//! TestBackend that keeps every frame it was asked to show.

use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use sm120_doctor::engine::Mode;
use sm120_doctor::input::{InputArgs, prepare};
use sm120_doctor::snapshot::{Gpu, HostSnapshot, Probed};
use sm120_doctor::tui::io::effects::EffectCtx;
use sm120_doctor::tui::io::event::Event;
use sm120_doctor::tui::io::live::Collector;
use sm120_doctor::tui::state::Screen;
use sm120_doctor::tui::state::action::Action;
use sm120_doctor::tui::{Exit, build_app, dispatch, run_loop};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Frames = Arc<Mutex<Vec<String>>>;

/// A TestBackend that records the screen at every flush (one per drawn frame).
struct Recorder {
    inner: TestBackend,
    frames: Frames,
}

impl Backend for Recorder {
    type Error = <TestBackend as Backend>::Error;
    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(t)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()?;
        if let Ok(mut f) = self.frames.lock() {
            f.push(self.inner.to_string());
        }
        Ok(())
    }
}

fn frames(f: &Frames) -> Vec<String> {
    f.lock().map(|v| v.clone()).unwrap_or_default()
}

/// Wait (at most 10 s) until some recorded frame satisfies `pred`.
fn wait_for(f: &Frames, pred: impl Fn(&str) -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if frames(f).iter().any(|s| pred(s)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

const FAKE_GPU: &str = "FAKE RTX PRO 6000 (test)";

/// A collector whose host part waits for `host` and whose Python part waits for `python`.
fn gated_collector(host: Receiver<()>, python: Receiver<()>) -> Collector {
    let gates = Arc::new(Mutex::new(Some((host, python))));
    Arc::new(move |tx| {
        let Some((host, python)) = gates.lock().ok().and_then(|mut g| g.take()) else {
            return;
        };
        std::thread::spawn(move || {
            if host.recv_timeout(Duration::from_secs(10)).is_ok() {
                let mut s = HostSnapshot::empty("live", "fake source");
                s.gpus = Probed::Value(vec![Gpu::named(0, FAKE_GPU, "fake")]);
                let _ = tx.send(Event::Host(Box::new(s)));
            }
            if python.recv_timeout(Duration::from_secs(10)).is_ok() {
                let _ = tx.send(Event::Python(Box::new(Probed::skipped("fake: no Python"))));
            }
        });
    })
}

#[test]
fn the_first_frame_says_collecting_before_the_live_host_arrives() {
    let (host_gate, host_rx) = mpsc::channel();
    let (python_gate, python_rx) = mpsc::channel();
    let (tx, rx) = mpsc::channel();
    let ctx = EffectCtx {
        events: Some(tx.clone()),
        // The refresher (started once the fake host has a GPU) polls once, then sleeps.
        period: Duration::from_secs(3600),
        collector: gated_collector(host_rx, python_rx),
        ..EffectCtx::headless()
    };
    let mut app = build_app(
        prepare(&InputArgs {
            launch: Some("vllm serve m --tensor-parallel-size 2".into()),
            ..Default::default()
        })
        .expect("inputs"),
        Mode::Failures,
    );
    app.color = false;
    assert_eq!(app.screen, Screen::Collecting);

    let recorded: Frames = Arc::default();
    let mut terminal = Terminal::new(Recorder {
        inner: TestBackend::new(120, 40),
        frames: recorded.clone(),
    })
    .expect("terminal");

    // Start as `tui::run` does: it must not wait for the (held back) host.
    let t0 = Instant::now();
    dispatch(&mut app, Action::Start, &ctx);
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "Start waited for the collector"
    );

    // The test's side: release each part only after the screen shows the state before it.
    let watch = recorded.clone();
    let controller = std::thread::spawn(move || {
        let first = wait_for(&watch, |_| true);
        let _ = host_gate.send(());
        let host_shown = wait_for(&watch, |s| s.contains(FAKE_GPU));
        let _ = python_gate.send(());
        let done = wait_for(&watch, |s| {
            s.contains(FAKE_GPU) && !s.contains("collecting…")
        });
        let _ = tx.send(Event::Signal("test done"));
        (first, host_shown, done)
    });
    let exit = run_loop(&mut terminal, &mut app, &rx, &ctx, None).expect("loop");
    let (first, host_shown, done) = controller.join().expect("controller");
    let all = frames(&recorded);
    assert_eq!(exit, Exit::Signal("test done"), "{all:#?}");
    assert!(first && host_shown && done, "{all:#?}");

    // Frame 1: drawn with nothing collected.
    let f0 = &all[0];
    assert!(f0.contains("host: live (collecting…)"), "{f0}");
    assert!(f0.contains("collecting… reading this host"), "{f0}");
    assert!(f0.contains("GPUs: collecting…"), "{f0}");
    assert!(!f0.contains(FAKE_GPU) && !f0.contains("2 Walk"), "{f0}");
    assert!(f0.contains(" q  quit"), "{f0}");

    // The host arrived first: GPU panel and walk shown, the Python stack still awaited.
    let partial = all
        .iter()
        .find(|s| s.contains(FAKE_GPU))
        .expect("a frame with the host");
    assert!(partial.contains("2 Walk"), "{partial}");
    assert!(partial.contains("Python stack: collecting…"), "{partial}");

    // Then everything: no "collecting…" left, the walk re-run.
    let last = all.last().expect("frames");
    assert!(
        last.contains("2 Walk") && !last.contains("collecting…"),
        "{last}"
    );
    assert!(!app.collecting.any());
    assert_eq!(app.snapshot.python, Probed::skipped("fake: no Python"));
}
