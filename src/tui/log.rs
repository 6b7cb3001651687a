//! The log pane: every given log with its matching lines highlighted, or the editor for the
//! pasted log while editing.

use super::app::App;
use super::state::EditTarget;
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

/// Collects only the rows of a window: logical lines `skip..skip + take`.
struct Window<'a> {
    skip: usize,
    take: usize,
    row: usize,
    out: Vec<Line<'a>>,
}

impl<'a> Window<'a> {
    fn full(&self) -> bool {
        self.out.len() >= self.take
    }
    /// Is the next row visible? (If not, it is counted and need not be built.)
    fn wants(&mut self) -> bool {
        if self.row < self.skip {
            self.row += 1;
            return false;
        }
        !self.full()
    }
    fn push(&mut self, line: Line<'a>) {
        self.row += 1;
        self.out.push(line);
    }
}

/// The pane's lines from logical line `skip` on, at most `take` of them. Only those are built,
/// so a long log costs nothing per frame beyond the visible part.
pub fn lines<'a>(app: &'a App, theme: Theme, skip: usize, take: usize) -> Vec<Line<'a>> {
    let c = &app.diagnosis.classification;
    let mut w = Window {
        skip,
        take,
        row: 0,
        out: Vec::new(),
    };
    if w.wants() {
        let classes = if c.classes.is_empty() {
            "none".to_string()
        } else {
            crate::report::check::classes_with_confidence(c)
        };
        w.push(Line::from(vec![
            Span::styled("Matched classes: ", theme.dim()),
            Span::styled(classes, theme.accent()),
            Span::styled(
                format!("  ({} matching lines)", c.matches.len()),
                theme.dim(),
            ),
        ]));
    }
    for e in c.evidence.iter().filter(|e| !e.note.is_empty()) {
        if w.wants() {
            w.push(Line::from(Span::styled(
                format!("  {}: {}", e.class, e.note),
                theme.dim(),
            )));
        }
    }
    let logs = app.logs();
    if logs.is_empty() && w.wants() {
        w.push(Line::from(
            "No log yet: paste one (your terminal's paste), press i to type, or o to open a file.",
        ));
    }
    for log in &logs {
        if w.full() {
            break;
        }
        if w.wants() {
            w.push(Line::from(Span::styled(
                format!("── {} ──", log.name),
                theme.title(),
            )));
        }
        for (i, text) in log.text.lines().enumerate() {
            if w.full() {
                break;
            }
            if !w.wants() {
                continue;
            }
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
            w.push(line);
        }
    }
    w.out
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    if app.editing == Some(EditTarget::Log) {
        frame.render_widget(&app.pasted, area);
        return;
    }
    frame.render_widget(
        Paragraph::new(lines(
            app,
            theme,
            usize::from(app.scroll),
            usize::from(area.height),
        ))
        .wrap(Wrap { trim: false }),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_builds_only_the_visible_rows() {
        let app = App::demo();
        let theme = Theme::new(false);
        let all: Vec<String> = lines(&app, theme, 0, usize::MAX)
            .iter()
            .map(|l| l.to_string())
            .collect();
        // Header, file header, 7 log lines.
        assert_eq!(all.len(), 9, "{all:?}");
        let part: Vec<String> = lines(&app, theme, 3, 2)
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert_eq!(part, all[3..5].to_vec());
        assert!(all[6].starts_with("▶   5 "), "{all:?}");
    }
}
