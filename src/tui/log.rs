//! The log pane: every given log with its matching lines highlighted, or the editor for the
//! pasted log while editing.

use super::app::{App, EditTarget};
use super::theme::Theme;
use crate::engine::classify::LogMatch;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// Matches of one log by line number.
pub fn matches_of<'a>(matches: &'a [LogMatch], file: &str, line: usize) -> Option<&'a LogMatch> {
    matches.iter().find(|m| m.file == file && m.line == line)
}

pub fn lines<'a>(app: &'a App, theme: Theme) -> Vec<Line<'a>> {
    let c = &app.diagnosis.classification;
    let mut out = Vec::new();
    let classes = if c.classes.is_empty() {
        "none".to_string()
    } else {
        c.classes.join(", ")
    };
    out.push(Line::from(vec![
        Span::styled("Matched classes: ", theme.dim()),
        Span::styled(classes, theme.accent()),
        Span::styled(
            format!("  ({} matching lines)", c.matches.len()),
            theme.dim(),
        ),
    ]));
    let logs = app.logs();
    if logs.is_empty() {
        out.push(Line::from(
            "No log yet: paste one (your terminal's paste), press i to type, or o to open a file.",
        ));
    }
    for log in logs {
        out.push(Line::from(Span::styled(
            format!("── {} ──", log.name),
            theme.title(),
        )));
        for (i, text) in log.text.lines().enumerate() {
            let n = i + 1;
            let line = match matches_of(&c.matches, &log.name, n) {
                Some(m) => Line::from(vec![
                    Span::styled(format!("▶{n:>4} "), theme.used()),
                    Span::styled(text.to_string(), theme.used()),
                    Span::styled(format!("  [{}]", m.signature), theme.dim()),
                ]),
                None => Line::from(vec![
                    Span::styled(format!("{n:>5} "), theme.dim()),
                    Span::raw(text.to_string()),
                ]),
            };
            out.push(line);
        }
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    if app.editing == Some(EditTarget::Log) {
        frame.render_widget(&app.pasted, area);
        return;
    }
    frame.render_widget(
        Paragraph::new(lines(app, theme))
            .wrap(Wrap { trim: false })
            .scroll((app.scroll, 0)),
        area,
    );
}
