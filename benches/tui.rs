//! TUI benchmarks.
//! 1. Idle cost with the live refresher at 1 Hz on a fake (simulated) source: the real event
//!    loop (`tui::run_loop`) drawing through the crossterm backend into a sink, for 30 s
//!    (`SM120_BENCH_IDLE_SECS` to change). Prints CPU % of one core and RSS. Goal ≤ 1 %, ≤ 30 MB.
//! 2. Full-frame render at 200×50 (criterion), also with a 30,000-line log loaded. Goal ≤ 2 ms.
//!
//! Measured 2026-11-30 on the shared 2-core dev machine (load average about 4, so contended):
//! idle 0.10 % and 0.17 % of one core over 30 s (30 updates drawn), RSS 9.9–10.1 MB;
//! render 200×50 walk 1.47 / 1.94 / 2.07 ms (three runs), log 0.87–1.18 ms, remedy 0.91–1.84 ms;
//! walk + log through crossterm into a sink 2.55–2.81 ms for the two frames.
//! After the real remedy preview/export/probe were plugged in (preview cached in state), same
//! machine: render 200×50 walk 1.20 ms, log 0.86 ms, remedy (patched command + diff + notes)
//! 1.03 / 0.91 ms, remedy_pr_script (script head) 1.10 ms; crossterm two frames 1.93 ms;
//! idle 0.20 % of one core over 30 s (30 updates), RSS 12.2 MB.
//! Issue 15 (Summary pane, wrapped rows with a hanging indent, the indexed log viewer), same
//! shared machine, `SM120_BENCH_IDLE_SECS=5 cargo bench --bench tui`: render 200×50 summary
//! 0.63 ms, walk 0.63 ms, log 0.53 ms, remedy 0.84 ms, remedy_pr_script 0.52 ms; with a
//! 30,000-line log pasted: the log pane at the crash (its first matched line) 0.61 ms, at the top
//! 0.32 ms, the walk 0.50 ms; crossterm two frames 0.70 ms; idle 0.00 % over 5 s, RSS 18.1 MB.

use criterion::Criterion;
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use sm120_doctor::tui::io::effects::{self, EffectCtx};
use sm120_doctor::tui::io::event::Event;
use sm120_doctor::tui::state::Pane;
use sm120_doctor::tui::state::action::{Action, Effect};
use sm120_doctor::tui::state::app::App;
use sm120_doctor::tui::{Exit, dispatch, render, run_loop};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// utime + stime of this process in seconds (Linux /proc).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let hz = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(100.0);
    Some(ticks / hz)
}

fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn fixed_terminal<W: std::io::Write>(w: W) -> Terminal<CrosstermBackend<W>> {
    Terminal::with_options(
        CrosstermBackend::new(w),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 200, 50)),
        },
    )
    .expect("fixed terminal")
}

fn idle() {
    let secs: u64 = std::env::var("SM120_BENCH_IDLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let (tx, rx) = mpsc::channel();
    let ctx = EffectCtx {
        events: Some(tx.clone()),
        ..EffectCtx::headless()
    };
    let mut app = App::demo();
    for a in effects::perform(Effect::StartRefresher, &app, &ctx) {
        dispatch(&mut app, a, &ctx);
    }
    let stopper = tx.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(secs));
        let _ = stopper.send(Event::Signal("bench done"));
    });
    let cpu0 = cpu_seconds().unwrap_or(f64::NAN);
    let t0 = Instant::now();
    let mut terminal = fixed_terminal(std::io::sink());
    let exit = run_loop(&mut terminal, &mut app, &rx, &ctx, None).expect("loop");
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds().unwrap_or(f64::NAN) - cpu0;
    assert_eq!(exit, Exit::Signal("bench done"));
    println!(
        "tui idle: {secs} s with the 1 Hz simulated refresher, {} GPU updates drawn; CPU {:.3} s = {:.2} % of one core; RSS {} kB (peak {} kB)",
        app.live.updates,
        cpu,
        100.0 * cpu / wall,
        status_kb("VmRSS:").unwrap_or(0),
        status_kb("VmHWM:").unwrap_or(0),
    );
}

fn render_benches(c: &mut Criterion) {
    let mut walk = App::demo();
    walk.update(Action::ShowPane(Pane::Walk));
    let mut log = App::demo();
    log.update(Action::ShowPane(Pane::Log));
    let mut remedy = App::demo();
    remedy.update(Action::PickRemedy);
    // The PR remedy: the pane shows the head of the generated apply script (cached in state).
    let mut script = App::demo();
    let pr = script
        .current_remedies()
        .iter()
        .position(|r| r.id == "apply_pr_43923")
        .unwrap_or(0);
    for _ in 0..pr {
        script.update(Action::SelectNext);
    }
    script.update(Action::PickRemedy);
    // A 30,000-line log pasted (the crash at its end): the log pane at the first matched line,
    // at the top, and the walk and summary with the long log loaded.
    let big: String = (0..29_993)
        .map(|i| {
            format!(
                "(EngineCore pid=1234) INFO [loader.py:{}] loading weights shard {i}\n",
                i % 400
            )
        })
        .chain(std::iter::once(sm120_doctor::import::demo::LOG.to_string()))
        .collect();
    let mut long_log = App::demo();
    long_log.update(Action::Resize(200, 50));
    long_log.update(Action::Paste(big));
    long_log.update(Action::ShowPane(Pane::Log));
    let mut long_log_top = App::demo();
    long_log_top.update(Action::Resize(200, 50));
    long_log_top.update(Action::Paste(
        (0..30_000)
            .map(|i| format!("line {i} of a long log\n"))
            .collect(),
    ));
    long_log_top.update(Action::ShowPane(Pane::Log));
    long_log_top.update(Action::Scroll(sm120_doctor::tui::state::ScrollBy::Top));
    let mut long_walk = App::demo();
    long_walk.update(Action::Resize(200, 50));
    long_walk.update(Action::Paste(sm120_doctor::import::demo::LOG.repeat(4_300)));
    long_walk.update(Action::ShowPane(Pane::Walk));
    let mut summary = App::demo();
    summary.update(Action::ShowPane(Pane::Summary));
    for (name, app) in [
        ("summary", &summary),
        ("walk", &walk),
        ("log", &log),
        ("remedy", &remedy),
        ("remedy_pr_script", &script),
        ("log_30000_lines_at_the_crash", &long_log),
        ("log_30000_lines_top", &long_log_top),
        ("walk_with_30000_line_log", &long_walk),
    ] {
        let mut t = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
        c.bench_function(&format!("render_200x50_{name}_testbackend"), |b| {
            b.iter(|| {
                // A cleared buffer forces every cell to be drawn and diffed again.
                t.clear().expect("clear");
                t.draw(|f| render(f, app)).expect("draw");
            })
        });
    }
    // Through the real crossterm backend (ANSI encoding into a sink). Its `clear()` needs a
    // tty, so each iteration draws two different screens: two near-full redraws.
    let mut t = fixed_terminal(std::io::sink());
    c.bench_function("render_200x50_walk_then_log_crossterm_two_frames", |b| {
        b.iter(|| {
            t.draw(|f| render(f, &walk)).expect("draw");
            t.draw(|f| render(f, &log)).expect("draw");
        })
    });
}

fn main() {
    idle();
    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(3));
    render_benches(&mut c);
    c.final_summary();
}
