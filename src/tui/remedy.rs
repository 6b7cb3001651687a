//! The remedy preview: the picked remedy with cost, confidence, limits and edits, above the
//! launch command editor.

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
    let Some(r) = app.picked_remedy() else {
        out.push(Line::from(
            "No remedy picked yet: in the Walk pane choose one with ↑/↓ and press Enter.",
        ));
        return out;
    };
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
    match &app.preview {
        Some(p) if p.remedy == r.id => preview_lines(&mut out, p, theme),
        _ => out.push(Line::from(Span::styled(
            "(no preview computed for this remedy)",
            theme.dim(),
        ))),
    }
    if !r.sources.is_empty() {
        out.push(Line::from(Span::styled(
            format!("sources: {}", r.sources.join(", ")),
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

/// The cached preview: patched command and diff, or the script head, then the notes.
fn preview_lines<'a>(out: &mut Vec<Line<'a>>, p: &'a Preview, theme: Theme) {
    match &p.body {
        PreviewBody::Launch { patched, diff } if diff.is_empty() => {
            out.push(Line::from(Span::styled(
                "The launch command needs no change for this remedy:",
                theme.title(),
            )));
            for l in patched.lines() {
                out.push(Line::from(Span::styled(format!("  {l}"), theme.used())));
            }
        }
        PreviewBody::Launch { patched, diff } => {
            out.push(Line::from(Span::styled(
                "Patched command (w writes it; nothing is run):",
                theme.title(),
            )));
            for l in patched.lines() {
                out.push(Line::from(Span::styled(format!("  {l}"), theme.used())));
            }
            out.push(Line::from(Span::styled("Diff:", theme.title())));
            for l in diff.lines() {
                out.push(Line::from(Span::styled(l, diff_style(l, theme))));
            }
        }
        PreviewBody::Script {
            command, script, ..
        } => {
            out.push(Line::from(vec![
                Span::styled("What ", theme.title()),
                Span::styled(command.as_str(), theme.accent()),
                Span::styled(" would write (w writes it, mode 755):", theme.title()),
            ]));
            let total = script.lines().count();
            for l in script.lines().take(SCRIPT_HEAD) {
                out.push(Line::from(Span::styled(format!("  {l}"), theme.used())));
            }
            if total > SCRIPT_HEAD {
                out.push(Line::from(Span::styled(
                    format!("  … {} more lines", total - SCRIPT_HEAD),
                    theme.dim(),
                )));
            }
        }
        PreviewBody::Error(e) => out.push(Line::from(Span::styled(
            format!("Cannot apply it to this launch: {e}"),
            theme.severity(Severity::Error),
        ))),
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
