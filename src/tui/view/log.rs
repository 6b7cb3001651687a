//! The log pane: every given log with its matching lines marked, as a viewer for long logs.
//! The logs are indexed once when they change ([`LogIndex`]: each line's place, the display
//! rows, the matched rows), so a frame builds and wraps only the rows it shows, whatever the
//! log's length. Scrolling is by logical line (the pane's scroll offset is the top row);
//! wrapped lines keep a hanging indent under the line number.

use crate::tui::state::app::App;
use crate::tui::state::logindex::{RowRef, find_ci};
use crate::tui::state::words;
use crate::tui::state::{EditTarget, Search};
use crate::tui::view::text::{self, Para};
use crate::tui::view::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

/// The logical line of one display row, before wrapping.
fn para<'a>(app: &'a App, theme: Theme, row: usize) -> Para<'a> {
    let idx = &app.log_index;
    let digits = idx.digits;
    match idx.rows.get(row) {
        Some(RowRef::Header(i)) => {
            let name = app.logs().get(*i).map_or(String::new(), |l| l.name.clone());
            Para::new(Line::from(Span::styled(
                format!(
                    "── {} · {} lines ──",
                    words::log_name(&name),
                    crate::tui::state::words::thousands(idx.line_count(*i))
                ),
                theme.title(),
            )))
        }
        Some(RowRef::Line(_, n)) => {
            let body = idx.text(app.logs(), row);
            let matched = idx.match_of.get(&row);
            let focus = app.log_focus == Some(row);
            let gutter = format!(
                "{}{:>digits$} ",
                if matched.is_some() { "▶" } else { " " },
                n + 1
            );
            let gutter_style = if focus {
                theme.selected()
            } else if matched.is_some() {
                theme.used()
            } else {
                theme.dim()
            };
            let body_style = if matched.is_some() {
                theme.used()
            } else {
                Style::new()
            };
            let mut spans = vec![Span::styled(gutter, gutter_style)];
            let hit = app.search.as_ref().and_then(|s| find_ci(body, &s.query));
            match hit {
                Some((a, b)) => {
                    spans.push(Span::styled(&body[..a], body_style));
                    spans.push(Span::styled(&body[a..b], theme.selected()));
                    spans.push(Span::styled(&body[b..], body_style));
                }
                None => spans.push(Span::styled(body, body_style)),
            }
            if app.details
                && let Some(m) = matched.and_then(|k| app.diagnosis.classification.matches.get(*k))
            {
                spans.push(Span::styled(format!("  [{}]", m.signature), theme.dim()));
            }
            Para::new(Line::from(spans)).indent(digits + 2)
        }
        None => Para::new(Line::default()),
    }
}

/// The rows a display row takes at `width`.
fn wrapped<'a>(app: &'a App, theme: Theme, row: usize, width: usize) -> Vec<Line<'a>> {
    let p = para(app, theme, row);
    text::wrap_line(&p.line, width, p.indent)
}

/// How many display rows fit from `top` in `height` screen rows (at least one).
pub(crate) fn fit(app: &App, top: usize, width: usize, height: usize) -> usize {
    let theme = Theme::new(false);
    let mut used = 0;
    let mut n = 0;
    for row in top..app.log_index.rows.len() {
        let h = wrapped(app, theme, row, width).len();
        if used + h > height && n > 0 {
            break;
        }
        used += h;
        n += 1;
        if used >= height {
            break;
        }
    }
    n.max(1)
}

/// The first top row of the page that ends just above row `end`: rows `top..end` fill at
/// most `height` screen rows.
pub(crate) fn top_ending_at(app: &App, end: usize, width: usize, height: usize) -> usize {
    let theme = Theme::new(false);
    let mut used = 0;
    let mut top = end.min(app.log_index.rows.len());
    while top > 0 {
        let h = wrapped(app, theme, top - 1, width).len();
        if used + h > height {
            break;
        }
        used += h;
        top -= 1;
    }
    top
}

/// The last top row: the one that shows the end of the logs at the bottom.
pub(crate) fn last_top(app: &App, width: usize, height: usize) -> usize {
    let rows = app.log_index.rows.len();
    top_ending_at(app, rows, width, height).min(rows.saturating_sub(1))
}

/// The fixed line above the rows: what matched, and the keys that find it.
pub fn header<'a>(app: &'a App, theme: Theme) -> Line<'a> {
    let c = &app.diagnosis.classification;
    if app.logs().is_empty() {
        return Line::from(Span::styled(
            "No log yet: paste one (your terminal's paste), i to type, o to open a file.",
            theme.dim(),
        ));
    }
    let classes: Vec<String> = c
        .classes
        .iter()
        .map(|id| {
            let name = if app.details {
                id.clone()
            } else {
                app.kb.class(id).map_or(id.clone(), |k| k.def.title.clone())
            };
            match c.confidence.get(id) {
                Some(level) => format!("{name} ({})", level.as_str()),
                None => name,
            }
        })
        .collect();
    if classes.is_empty() {
        return Line::from(vec![
            Span::styled("No known failure signature matched", theme.dim()),
            Span::styled(" · / searches", theme.dim()),
        ]);
    }
    Line::from(vec![
        Span::styled(
            format!(
                "{} matched line(s) ▶ (]/[ jumps): ",
                app.log_index.matched.len()
            ),
            theme.dim(),
        ),
        Span::styled(classes.join(" · "), theme.accent()),
    ])
}

/// "pasted log line 29,994–30,000 of 30,000 · /invalid 2 of 3" for the pane's border.
pub fn position(app: &App, top: usize, shown: usize) -> String {
    let idx = &app.log_index;
    let last = (top + shown).min(idx.rows.len()).saturating_sub(1);
    let line_of = |r: usize| match idx.rows.get(r) {
        Some(RowRef::Line(i, n)) => Some((*i, *n + 1)),
        Some(RowRef::Header(i)) => Some((*i, 1)),
        None => None,
    };
    let name =
        |i: usize| words::log_name(&app.logs().get(i).map_or(String::new(), |l| l.name.clone()));
    let mut out = match (line_of(top), line_of(last)) {
        (Some((i, a)), Some((j, b))) if i == j => format!(
            "{} line {}–{} of {}",
            name(i),
            crate::tui::state::words::thousands(a),
            crate::tui::state::words::thousands(b),
            crate::tui::state::words::thousands(idx.line_count(i))
        ),
        (Some((i, a)), Some((j, b))) => format!(
            "{} line {} – {} line {} of {}",
            name(i),
            crate::tui::state::words::thousands(a),
            name(j),
            crate::tui::state::words::thousands(b),
            crate::tui::state::words::thousands(idx.line_count(j))
        ),
        _ => String::new(),
    };
    if let Some(Search {
        query,
        hits,
        current,
    }) = &app.search
    {
        if hits.is_empty() {
            out.push_str(&format!(" · /{query}: none"));
        } else {
            out.push_str(&format!(" · /{query} {} of {}", current + 1, hits.len()));
        }
    }
    out
}

/// The pasted-log editor's title (drawn only while it is being edited).
pub const PASTED_TITLE: &str = " Pasted log · Esc when done ";

/// Draw the rows from the top row on; returns how many display rows were shown.
pub fn render(frame: &mut Frame, fixed: Rect, area: Rect, app: &App, theme: Theme) -> usize {
    if app.editing == Some(EditTarget::Log) {
        let whole = Rect {
            y: fixed.y,
            height: fixed.height + area.height,
            ..area
        };
        let block = Block::default().borders(Borders::ALL).title(PASTED_TITLE);
        let inner = block.inner(whole);
        frame.render_widget(block, whole);
        frame.render_widget(&app.pasted, inner);
        return 0;
    }
    let width = usize::from(area.width);
    frame.render_widget(
        Paragraph::new(text::cut_line(header(app, theme), width)),
        fixed,
    );
    let top = app.log_top(width, usize::from(area.height));
    let mut lines = Vec::new();
    let mut shown = 0;
    for row in top..app.log_index.rows.len() {
        if lines.len() >= usize::from(area.height) {
            break;
        }
        lines.extend(wrapped(app, theme, row, width));
        shown += 1;
    }
    lines.truncate(usize::from(area.height));
    frame.render_widget(Paragraph::new(lines), area);
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_log_costs_only_its_visible_rows() {
        let mut app = App::demo();
        let big: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
        app.update(crate::tui::state::action::Action::Paste(big));
        assert_eq!(app.log_index.rows.len(), 2 + 7 + 30_000);
        // Row 9 is the pasted log's first line (after the demo log's header and 7 lines and
        // the pasted log's header): short lines, one row each.
        assert_eq!(app.log_index.rows[9], RowRef::Line(1, 0));
        assert_eq!(fit(&app, 9, 80, 10), 10);
        let top = last_top(&app, 80, 10);
        assert_eq!(top, app.log_index.rows.len() - 10);
    }
}
