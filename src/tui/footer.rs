//! Footer: the status message and the keys valid on this screen (from the keymap itself).

use super::app::App;
use super::keymap::bindings;
use super::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn hint_spans<'a>(app: &App, theme: Theme) -> Vec<Span<'a>> {
    let mut spans = Vec::new();
    for bind in bindings(app) {
        if bind.shown.is_empty() {
            continue;
        }
        spans.push(Span::styled(format!(" {} ", bind.shown), theme.selected()));
        spans.push(Span::raw(format!(" {}  ", bind.label)));
    }
    spans
}

pub fn render(frame: &mut Frame, status: Rect, keys: Rect, app: &App, theme: Theme) {
    let style = if app.status.starts_with("error") {
        theme.severity(crate::kb::schema::Severity::Error)
    } else {
        theme.dim()
    };
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(app.status.clone(), style))),
        status,
    );
    frame.render_widget(Paragraph::new(Line::from(hint_spans(app, theme))), keys);
}
