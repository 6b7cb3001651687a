//! The Remedy pane: the remedy in focus (cost, confidence, sources), then the fix plan — the
//! combined command of every finding's remedy and its diff against the launch — above the launch
//! command editor.

use super::app::App;
use super::preview::{Preview, PreviewBody, SCRIPT_HEAD};
use super::state::EditTarget;
use super::theme::Theme;
use crate::kb::schema::Severity;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn lines<'a>(app: &'a App, theme: Theme) -> Vec<Line<'a>> {
    let mut out = Vec::new();
    match app.picked_remedy() {
        Some(r) => {
            out.push(Line::from(vec![
                Span::styled(format!("{} ", r.title), theme.title()),
                Span::styled(
                    format!("({}) {}", r.id, r.confidence.as_str()),
                    theme.accent(),
                ),
            ]));
            out.push(Line::from(format!("cost: {}", r.cost)));
            if !r.verified.is_empty() {
                out.push(Line::from(Span::styled(
                    format!("verified: {}", r.verified),
                    theme.dim(),
                )));
            }
            if let Some(sc) = app.preview.as_ref().and_then(|p| p.script.as_ref()) {
                out.push(Line::from(vec![
                    Span::styled("w writes its script: ", theme.title()),
                    Span::styled(sc.command.as_str(), theme.accent()),
                    Span::styled(" (its head is below the plan)", theme.dim()),
                ]));
            }
        }
        None => out.push(Line::from(
            "The plan takes the cheapest remedy of each finding at warning or above; pick another in the Walk pane (↑/↓, Enter).",
        )),
    }
    match &app.preview {
        Some(p) => preview_lines(&mut out, p, theme),
        None => out.push(Line::from(Span::styled(
            "(no plan computed yet)",
            theme.dim(),
        ))),
    }
    if let Some(r) = app.picked_remedy()
        && !r.sources.is_empty()
    {
        out.push(Line::from(Span::styled(
            format!("sources of {}: {}", r.id, r.sources.join(", ")),
            theme.dim(),
        )));
    }
    out
}

fn diff_style(line: &str, theme: Theme) -> ratatui::style::Style {
    if line.starts_with("+++") || line.starts_with("---") || line.starts_with("@@") {
        theme.dim()
    } else if line.starts_with('+') {
        theme.severity(Severity::Ok)
    } else if line.starts_with('-') {
        theme.severity(Severity::Error)
    } else {
        ratatui::style::Style::new()
    }
}

/// The cached plan: its remedies, the combined command and its diff, the script in focus,
/// then steps and notes.
fn preview_lines<'a>(out: &mut Vec<Line<'a>>, p: &'a Preview, theme: Theme) {
    let plan = &p.plan;
    out.push(Line::default());
    if plan.chosen.is_empty() {
        out.push(Line::from(Span::styled(
            "Fix plan: no remedy (no finding at warning or above, nothing picked)",
            theme.title(),
        )));
    } else {
        out.push(Line::from(Span::styled(
            "Fix plan (one remedy per finding, applied in order):",
            theme.title(),
        )));
    }
    for c in &plan.chosen {
        out.push(Line::from(format!(
            "  {} → {} ({})",
            c.finding.as_deref().unwrap_or("-"),
            c.remedy,
            c.chosen_by.as_str()
        )));
    }
    for l in &plan.left_out {
        out.push(Line::from(Span::styled(
            format!("  left out: {} — {}", l.remedy, l.reason),
            theme.severity(Severity::Warning),
        )));
    }
    match &p.body {
        PreviewBody::Launch { patched, diff } if diff.is_empty() => {
            out.push(Line::from(Span::styled(
                "The launch command needs no change for this plan:",
                theme.title(),
            )));
            for l in patched.lines() {
                out.push(Line::from(Span::styled(format!("  {l}"), theme.used())));
            }
        }
        PreviewBody::Launch { patched, diff } => {
            out.push(Line::from(Span::styled(
                "Run this (w writes it; nothing is run):",
                theme.title(),
            )));
            for l in patched.lines() {
                out.push(Line::from(Span::styled(format!("  {l}"), theme.used())));
            }
            out.push(Line::from(Span::styled(
                "Diff against your launch:",
                theme.title(),
            )));
            for l in diff.lines() {
                out.push(Line::from(Span::styled(l, diff_style(l, theme))));
            }
        }
        PreviewBody::Error(e) => out.push(Line::from(Span::styled(
            format!("No combined command: {e}"),
            theme.severity(Severity::Error),
        ))),
    }
    if let Some(s) = &p.script {
        out.push(Line::from(vec![
            Span::styled("What ", theme.title()),
            Span::styled(s.command.as_str(), theme.accent()),
            Span::styled(" would write (w writes it, mode 755):", theme.title()),
        ]));
        let total = s.script.lines().count();
        for l in s.script.lines().take(SCRIPT_HEAD) {
            out.push(Line::from(Span::styled(format!("  {l}"), theme.used())));
        }
        if total > SCRIPT_HEAD {
            out.push(Line::from(Span::styled(
                format!("  … {} more lines", total - SCRIPT_HEAD),
                theme.dim(),
            )));
        }
    }
    for s in &plan.steps {
        out.push(Line::from(format!("step: {s}")));
    }
    for n in &p.notes {
        out.push(Line::from(Span::styled(format!("note: {n}"), theme.dim())));
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let editor_h = (app.launch_editor.lines().len() as u16 + 2).clamp(4, area.height / 2);
    let [top, bottom] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(editor_h)]).areas(area);
    frame.render_widget(
        Paragraph::new(lines(app, theme))
            .wrap(Wrap { trim: false })
            .scroll((app.scroll, 0)),
        top,
    );
    let mut editor = app.launch_editor.clone();
    if app.editing != Some(EditTarget::Launch) {
        editor.set_cursor_style(ratatui::style::Style::new());
        editor.set_cursor_line_style(ratatui::style::Style::new());
    }
    frame.render_widget(&editor, bottom);
}
