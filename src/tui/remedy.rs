//! The remedy preview: the picked remedy with cost, confidence, limits and edits, above the
//! launch command editor.

use super::app::{App, EditTarget};
use super::effects;
use super::theme::Theme;
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
    for l in &r.limits {
        out.push(Line::from(format!("limit: {l}")));
    }
    out.push(Line::from(Span::styled(
        effects::PREVIEW_LABEL,
        theme.dim(),
    )));
    for e in effects::remedy_preview(r) {
        out.push(Line::from(Span::styled(format!("  • {e}"), theme.used())));
    }
    if !r.sources.is_empty() {
        out.push(Line::from(Span::styled(
            format!("sources: {}", r.sources.join(", ")),
            theme.dim(),
        )));
    }
    out
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
