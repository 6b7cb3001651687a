//! The view floor: drawing is a pure function of the state ([`render`]), laid out by
//! [`layout::regions`] (which the scroll keys and mouse clicks use too, through [`measure`]),
//! one file per screen region. It reads the state floor and never the io floor.

pub mod env;
pub mod export;
pub mod footer;
pub mod gpu;
pub mod help;
pub mod layout;
pub mod log;
pub mod measure;
pub mod remedy;
pub mod summary;
pub mod text;
pub mod theme;
pub mod walk;

use crate::engine::Mode;
use crate::kb::schema::Severity;
use crate::tui::state::app::{self, App};
use crate::tui::state::{Overlay, Pane, Screen};
use layout::Regions;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use text::Para;
use theme::{Theme, mark};

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// Draw the whole screen from the state.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let theme = Theme::new(app.color);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area);
        return;
    }
    let r = layout::regions(area, app);
    render_header(frame, r.header, app, theme);
    frame.render_widget(
        Paragraph::new(text::cut_line(
            verdict(app, theme),
            usize::from(r.verdict.width),
        )),
        r.verdict,
    );
    match app.screen {
        Screen::Collecting => render_collecting(frame, &r, app, theme),
        Screen::NoHost => render_no_host(frame, r.body, app, theme),
        Screen::Main => render_main(frame, &r, app, theme),
    }
    footer::render(frame, r.status, r.keys, app, theme);
    match &app.overlay {
        Some(Overlay::Help) => help::render(frame, r.body, theme, app.help_scroll),
        Some(Overlay::Search { .. }) | None => {}
        Some(o) => export::render(frame, r.body, app, o, theme),
    }
}

fn too_small(frame: &mut Frame, area: Rect) {
    let msg = format!(
        "Terminal is {}×{}; sm120-doctor needs at least {MIN_WIDTH}×{MIN_HEIGHT}. Enlarge the window, or press q to quit.",
        area.width, area.height
    );
    frame.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
}

/// The header: the counts first, then the host and the mode (cut first when narrow).
fn render_header(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let d = &app.diagnosis;
    let count = |s: Severity| d.findings.iter().filter(|f| f.severity == s).count();
    let mode = match app.mode {
        Mode::Failures => "failures",
        Mode::Onboarding => "onboarding",
        Mode::All => "onboarding + failures",
    };
    // Below 110 columns the GPU and environment panels are gone: the header carries what they
    // said first (GPUs, vLLM, torch, driver) instead of where the host came from.
    let narrow = area.width < layout::SIDE_MIN_WIDTH;
    let host = match app.screen {
        Screen::Collecting => format!("{} ({})", app.snapshot.origin, app::COLLECTING),
        Screen::NoHost => "none (no NVIDIA driver here)".to_string(),
        Screen::Main if narrow => compact_host(&app.snapshot),
        Screen::Main => app.snapshot.origin.to_string(),
    };
    let mut spans = vec![Span::styled(" sm120-doctor ", theme.selected())];
    // No counts before there is a host (or a log) to count findings on.
    if app.screen == Screen::Main {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            format!("✗ {} ", count(Severity::Error)),
            theme.severity(Severity::Error),
        ));
        spans.push(Span::styled(
            format!("! {} ", count(Severity::Warning)),
            theme.severity(Severity::Warning),
        ));
        spans.push(Span::styled(
            format!("? {}", d.open_questions().count()),
            theme.question(),
        ));
    }
    let used: usize = spans.iter().map(|s| text::width(&s.content)).sum();
    let sep = if app.screen == Screen::Main {
        " · "
    } else {
        " "
    };
    let rest = if narrow && app.screen == Screen::Main {
        // "failures" is the default: only the checklist modes are worth the room.
        match app.mode {
            Mode::Failures => format!("{sep}{host}"),
            _ => format!("{sep}{host} · {mode}"),
        }
    } else {
        format!("{sep}host: {host} · mode: {mode}")
    };
    let room = usize::from(area.width).saturating_sub(used);
    spans.push(Span::raw(text::ellipsize(&rest, room)));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The host in a few words for a narrow header: "2× RTX PRO 6000 · vLLM 0.24.0 · torch
/// 2.11.0+cu130 · driver 580.95.05"; parts not known are left out.
fn compact_host(snap: &crate::snapshot::HostSnapshot) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(g) = snap.gpus.value() {
        let mut names: Vec<String> = g
            .iter()
            .filter_map(|x| x.name.value())
            .map(|n| {
                // "RTX PRO 6000", "H200", "RTX 5090": the model, without the maker and the
                // edition words a narrow header cannot spare.
                let n = n
                    .trim_start_matches("NVIDIA ")
                    .trim_start_matches("GeForce ");
                n.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
            })
            .collect();
        names.dedup();
        parts.push(match names.as_slice() {
            [] => format!("{} GPU(s)", g.len()),
            [one] => format!("{}× {one}", g.len()),
            _ => format!("{} GPUs", g.len()),
        });
    }
    if let Some(p) = snap.python.value() {
        if let Some(v) = p.vllm.value() {
            parts.push(format!("vLLM {v}"));
        }
        if let Some(t) = p.torch.value() {
            parts.push(format!("torch {t}"));
        }
    }
    if let Some(v) = snap.driver.value().and_then(|d| d.version.value()) {
        parts.push(format!("driver {v}"));
    }
    if parts.is_empty() {
        snap.origin.to_string()
    } else {
        parts.join(" · ")
    }
}

/// The verdict line: the worst finding (and how many more), what the walk waits for, or
/// that nothing was found.
pub fn verdict<'a>(app: &App, theme: Theme) -> Line<'a> {
    match app.screen {
        Screen::Collecting => {
            return Line::from(Span::styled(
                format!(
                    "{} the verdict comes once the host is read",
                    app::COLLECTING
                ),
                theme.dim(),
            ));
        }
        Screen::NoHost => {
            return Line::from(Span::styled(
                "No host to diagnose: d opens the demo; paste a log to read it without a host",
                theme.question(),
            ));
        }
        Screen::Main => {}
    }
    let d = &app.diagnosis;
    let problems: Vec<_> = d
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Ok)
        .collect();
    let open = d.open_questions().count();
    match problems.first() {
        Some(f) => {
            let more = match (problems.len() - 1, open) {
                (0, 0) => String::new(),
                (m, 0) => format!("  (+{m} more)"),
                (0, q) => format!("  (+{q} open question{})", if q == 1 { "" } else { "s" }),
                (m, q) => format!(
                    "  (+{m} more, {q} open question{})",
                    if q == 1 { "" } else { "s" }
                ),
            };
            Line::from(vec![
                Span::styled(format!("{} ", mark(f.severity)), theme.severity(f.severity)),
                Span::styled(
                    crate::tui::state::words::prose(app.is_live(), &f.title.0),
                    theme.title(),
                ),
                Span::styled(more, theme.dim()),
            ])
        }
        None if open > 0 => Line::from(Span::styled(
            format!(
                "? no verdict yet: {open} question{} need{} you ({}: the walk asks {})",
                if open == 1 { "" } else { "s" },
                if open == 1 { "s" } else { "" },
                Pane::Walk.key(),
                if open == 1 { "it" } else { "them" }
            ),
            theme.question(),
        )),
        None => {
            use crate::engine::CheckState;
            let unchecked = d.count(CheckState::NotChecked);
            let passed = d.count(CheckState::Passed);
            let text = if unchecked == 0 {
                format!("✓ no problem found ({passed} passed)")
            } else {
                format!(
                    "○ no problem found in what was checked ({passed} passed, {unchecked} not checked)"
                )
            };
            Line::from(Span::styled(text, theme.severity(Severity::Ok)))
        }
    }
}

/// Before the live host has been read: the panels, each saying what it waits for, and what is
/// being read on the right. Keys: quit and help.
fn render_collecting(frame: &mut Frame, r: &Regions, app: &App, theme: Theme) {
    if let Some((gpu_area, env_area)) = r.side {
        gpu::render(frame, gpu_area, app, theme);
        env::render(frame, env_area, app, theme);
    }
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
        r.pane,
    );
}

fn render_no_host(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let mut lines: Vec<Para> = vec![
        Para::new(""),
        Para::new(Line::from(Span::styled(
            "No host to look at",
            theme.title(),
        ))),
        Para::new(""),
        Para::new(format!("{}.", app.no_host_reason)),
        Para::new(""),
        Para::new(Line::from(vec![
            Span::raw("Press "),
            Span::styled(" d ", theme.selected()),
            Span::raw(
                " to open the embedded demo (the vLLM #47266 reporter's 2× RTX PRO 6000 host).",
            ),
        ])),
        Para::new("Paste a crash log (your terminal's paste) to read it here without a host."),
        Para::new(
            "Or run with --snapshot FILE or --collect-env FILE (the output of `vllm collect-env`).",
        ),
    ];
    if app.probe_running || app.snapshot.probe.value().is_some() {
        walk::probe_section(&mut lines, app, theme);
    } else if app.can_probe() {
        lines.push(Para::new(
            "Press p to run the allocator/IPC probe here anyway (it says why it cannot run).",
        ));
    }
    if app.p2p_running || app.snapshot.p2p_probe.value().is_some() {
        walk::p2p_section(&mut lines, app, theme);
    } else if app.can_probe_p2p() {
        lines.push(Para::new(
            "Press P to run the P2P probe here anyway (it says why it cannot run).",
        ));
    }
    let block = Block::default().borders(Borders::ALL);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    text::render_rows(frame, inner, lines, 0);
}

/// "12–31 of 45" for a scrolled pane's border ("" when everything fits).
fn rows_position(top: usize, total: usize, height: usize) -> String {
    if total <= height {
        return String::new();
    }
    let last = (top + height).min(total);
    let more = if last < total { " ↓" } else { "" };
    format!(" rows {}–{last} of {total}{more} ", top + 1)
}

fn render_main(frame: &mut Frame, r: &Regions, app: &App, theme: Theme) {
    if let Some((gpu_area, env_area)) = r.side {
        gpu::render(frame, gpu_area, app, theme);
        env::render(frame, env_area, app, theme);
    }
    let mut tabs = vec![Span::raw(" ")];
    for (_, p) in &r.tabs {
        let style = if *p == app.pane {
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
    let height = usize::from(r.rows.height);
    let position = match app.pane {
        Pane::Log if app.editing.is_none() => {
            let shown = log::render(frame, r.fixed, r.rows, app, theme);
            let top = app.log_top(usize::from(r.rows.width), height);
            let at = log::position(app, top, shown);
            if at.is_empty() { at } else { format!(" {at} ") }
        }
        Pane::Log => {
            log::render(frame, r.fixed, r.rows, app, theme);
            String::new()
        }
        Pane::Walk => {
            let (top, total) = walk::render(frame, r.fixed, r.rows, app, theme);
            rows_position(top, total, height)
        }
        Pane::Summary => {
            let (top, total) = text::render_rows(
                frame,
                r.rows,
                summary::paras(app, theme),
                app.scroll.get(Pane::Summary),
            );
            rows_position(top, total, height)
        }
        Pane::Remedy => {
            let (top, total) = remedy::render(frame, r.rows, r.editor, app, theme);
            rows_position(top, total, height)
        }
    };
    let width = usize::from(r.pane.width.saturating_sub(4));
    let block = Block::default()
        .borders(Borders::ALL)
        .title(text::cut_line(Line::from(tabs), width))
        .title_bottom(
            Line::from(Span::styled(text::ellipsize(&position, width), theme.dim()))
                .right_aligned(),
        );
    frame.render_widget(block, r.pane);
}
