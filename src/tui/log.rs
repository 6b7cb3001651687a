//! The log pane: every given log with its matching lines marked, as a viewer for long logs.
//! The logs are indexed once when they change ([`LogIndex`]: each line's place, the display
//! rows, the matched rows), so a frame builds and wraps only the rows it shows, whatever the
//! log's length. Scrolling is by logical line (the pane's scroll offset is the top row);
//! wrapped lines keep a hanging indent under the line number.

use super::app::App;
use super::state::{EditTarget, Search};
use super::text::{self, Para};
use super::theme::Theme;
use super::words;
use crate::engine::classify::{Classification, LogText};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::HashMap;

/// One display row: a log's header, or one of its lines (log index, 0-based line index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowRef {
    Header(usize),
    Line(usize, usize),
}

/// Where every line of the given logs is, and which ones matched a signature.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogIndex {
    /// Per log, each line's byte range in its text.
    lines: Vec<Vec<(usize, usize)>>,
    pub rows: Vec<RowRef>,
    /// Rows of matched lines, in order.
    pub matched: Vec<usize>,
    /// Row → index of its match in the classification.
    match_of: HashMap<usize, usize>,
    /// Digits of the longest line number (for the gutter).
    digits: usize,
}

impl LogIndex {
    pub fn build(logs: &[LogText], c: &Classification) -> LogIndex {
        let mut idx = LogIndex::default();
        let mut first_row: HashMap<&str, usize> = HashMap::new();
        let mut most = 0;
        for (i, log) in logs.iter().enumerate() {
            let mut ranges = Vec::new();
            let mut start = 0;
            let bytes = log.text.as_bytes();
            while start < bytes.len() {
                let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
                let line_end = if end > start && bytes[end - 1] == b'\r' {
                    end - 1
                } else {
                    end
                };
                ranges.push((start, line_end));
                start = end + 1;
            }
            first_row.entry(log.name.as_str()).or_insert(idx.rows.len());
            idx.rows.push(RowRef::Header(i));
            idx.rows
                .extend((0..ranges.len()).map(|n| RowRef::Line(i, n)));
            most = most.max(ranges.len());
            idx.lines.push(ranges);
        }
        for (k, m) in c.matches.iter().enumerate() {
            let Some(&head) = first_row.get(m.file.as_str()) else {
                continue;
            };
            let row = head + m.line;
            if m.line >= 1 && row < idx.rows.len() && !idx.match_of.contains_key(&row) {
                idx.match_of.insert(row, k);
                idx.matched.push(row);
            }
        }
        idx.matched.sort_unstable();
        idx.digits = most.to_string().len().max(4);
        idx
    }

    /// The text of a line row ("" for a header).
    pub fn text<'a>(&self, logs: &'a [LogText], row: usize) -> &'a str {
        match self.rows.get(row) {
            Some(RowRef::Line(i, n)) => match (logs.get(*i), self.lines.get(*i)) {
                (Some(log), Some(r)) => {
                    let (a, b) = r[*n];
                    log.text.get(a..b).unwrap_or("")
                }
                _ => "",
            },
            _ => "",
        }
    }

    /// Lines in log `i`.
    pub fn line_count(&self, i: usize) -> usize {
        self.lines.get(i).map_or(0, Vec::len)
    }

    /// The rows whose text contains `query` (ASCII case ignored).
    pub fn search(&self, logs: &[LogText], query: &str) -> Vec<usize> {
        if query.is_empty() {
            return Vec::new();
        }
        let lower = query.to_lowercase();
        (0..self.rows.len())
            .filter(|&r| contains_ci(self.text(logs, r), query, &lower))
            .collect()
    }
}

/// Does `hay` contain `needle`, case ignored (ASCII without allocating)?
fn contains_ci(hay: &str, needle: &str, needle_lower: &str) -> bool {
    if needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    } else {
        hay.to_lowercase().contains(needle_lower)
    }
}

/// Where a hit occurs in `hay` (byte range), case ignored, for highlighting.
fn find_ci(hay: &str, needle: &str) -> Option<(usize, usize)> {
    if needle.is_empty() || !needle.is_ascii() {
        return None;
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..=h.len().checked_sub(n.len())?)
        .find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n) && hay.is_char_boundary(i))
        .filter(|&i| hay.is_char_boundary(i + n.len()))
        .map(|i| (i, i + n.len()))
}

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
                    text::thousands(idx.line_count(*i))
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
pub fn fit(app: &App, top: usize, width: usize, height: usize) -> usize {
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
pub fn top_ending_at(app: &App, end: usize, width: usize, height: usize) -> usize {
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
pub fn last_top(app: &App, width: usize, height: usize) -> usize {
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
            if app.details {
                id.clone()
            } else {
                app.kb.class(id).map_or(id.clone(), |k| k.def.title.clone())
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
            text::thousands(a),
            text::thousands(b),
            text::thousands(idx.line_count(i))
        ),
        (Some((i, a)), Some((j, b))) => format!(
            "{} line {} – {} line {} of {}",
            name(i),
            text::thousands(a),
            name(j),
            text::thousands(b),
            text::thousands(idx.line_count(j))
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

/// Draw the rows from the top row on; returns how many display rows were shown.
pub fn render(frame: &mut Frame, fixed: Rect, area: Rect, app: &App, theme: Theme) -> usize {
    if app.editing == Some(EditTarget::Log) {
        let whole = Rect {
            y: fixed.y,
            height: fixed.height + area.height,
            ..area
        };
        frame.render_widget(&app.pasted, whole);
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
    use crate::engine::classify::LogMatch;

    fn logs() -> Vec<LogText> {
        vec![
            LogText {
                name: "a.log".into(),
                text: "one\r\ntwo ERROR here\nthree\n".into(),
            },
            LogText {
                name: "pasted".into(),
                text: "x\ny error".into(),
            },
        ]
    }

    #[test]
    fn the_index_places_every_line_and_match() {
        let c = Classification {
            classes: vec!["k".into()],
            matches: vec![LogMatch {
                class: "k".into(),
                signature: "s".into(),
                file: "pasted".into(),
                line: 2,
                text: "y error".into(),
                strong: true,
            }],
        };
        let l = logs();
        let idx = LogIndex::build(&l, &c);
        assert_eq!(
            idx.rows,
            vec![
                RowRef::Header(0),
                RowRef::Line(0, 0),
                RowRef::Line(0, 1),
                RowRef::Line(0, 2),
                RowRef::Header(1),
                RowRef::Line(1, 0),
                RowRef::Line(1, 1),
            ]
        );
        assert_eq!(idx.text(&l, 2), "two ERROR here");
        assert_eq!(idx.text(&l, 6), "y error");
        assert_eq!(idx.matched, vec![6]);
        assert_eq!(idx.search(&l, "error"), vec![2, 6]);
        assert_eq!(find_ci("two ERROR here", "error"), Some((4, 9)));
        assert!(idx.search(&l, "").is_empty());
    }

    #[test]
    fn a_long_log_costs_only_its_visible_rows() {
        let mut app = App::demo();
        let big: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
        app.update(super::super::action::Action::Paste(big));
        assert_eq!(app.log_index.rows.len(), 2 + 7 + 30_000);
        // Row 9 is the pasted log's first line (after the demo log's header and 7 lines and
        // the pasted log's header): short lines, one row each.
        assert_eq!(app.log_index.rows[9], RowRef::Line(1, 0));
        assert_eq!(fit(&app, 9, 80, 10), 10);
        let top = last_top(&app, 80, 10);
        assert_eq!(top, app.log_index.rows.len() - 10);
    }
}
