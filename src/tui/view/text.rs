//! Text shaping for the panes: display width, wrapping with a hanging indent, cutting with an
//! ellipsis, and rows that remember what a mouse click on them means. Pure functions; every
//! pane builds its lines and passes them through [`wrap`] so that scrolling, clamping and
//! clicks count the same rows the screen shows.
//!
//! Untrusted text (a log line, a GPU name, a file name, a KB title) is shown with its control
//! characters escaped the way the CLI shows them ([`safe_line`], through
//! [`crate::report::sanitize::terminal_safe`]): the wrapping and cutting helpers here do it on
//! the way in, and the panels that build a `Paragraph` themselves pass their lines through it.

use crate::report::sanitize::terminal_safe;
use crate::tui::state::Target;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::borrow::Cow;

/// `s` with its control characters shown escaped (`\x1b`, `\u009b`), as the CLI shows them;
/// borrowed when there is none. ratatui would drop the bare bytes, which hides that a line
/// carried an escape sequence; escaped, what is left of one is visible for what it is.
pub(crate) fn safe(s: &str) -> Cow<'_, str> {
    terminal_safe(s, false)
}

/// A line made [`safe`], span by span (styles kept).
pub(crate) fn safe_line(line: Line<'_>) -> Line<'_> {
    let clean = |s: &Span| matches!(safe(&s.content), Cow::Borrowed(_));
    if line.spans.iter().all(clean) {
        return line;
    }
    let Line {
        style,
        alignment,
        spans,
    } = line;
    let spans = spans
        .into_iter()
        .map(|s| match safe(&s.content) {
            Cow::Borrowed(_) => s,
            Cow::Owned(o) => Span::styled(o, s.style),
        })
        .collect();
    Line {
        style,
        alignment,
        spans,
    }
}

/// Lines made [`safe`].
pub(crate) fn safe_lines(lines: Vec<Line<'_>>) -> Vec<Line<'_>> {
    lines.into_iter().map(safe_line).collect()
}

/// Display width of `s` in terminal cells (ASCII fast path).
pub fn width(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        Span::raw(s).width()
    }
}

fn char_width(c: char) -> usize {
    if c.is_ascii() {
        usize::from(!c.is_ascii_control())
    } else {
        let mut buf = [0u8; 4];
        Span::raw(&*c.encode_utf8(&mut buf)).width()
    }
}

/// `s` cut to at most `max` cells; a cut ends in "…".
pub(crate) fn ellipsize(s: &str, max: usize) -> String {
    let s = &*safe(s);
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw > max - 1 {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// A line cut to `max` cells, styles kept; a cut ends in "…".
pub(crate) fn cut_line<'a>(line: Line<'a>, max: usize) -> Line<'a> {
    let line = safe_line(line);
    if line.width() <= max {
        return line;
    }
    let mut spans = Vec::new();
    let mut left = max.saturating_sub(1);
    let mut last_style = Style::new();
    for s in line.spans {
        if left == 0 {
            break;
        }
        let w = width(&s.content);
        last_style = s.style;
        if w <= left {
            left -= w;
            spans.push(s);
        } else {
            let mut part = String::new();
            for c in s.content.chars() {
                let cw = char_width(c);
                if cw > left {
                    break;
                }
                left -= cw;
                part.push(c);
            }
            spans.push(Span::styled(part, s.style));
            left = 0;
        }
    }
    if max > 0 {
        spans.push(Span::styled("…", last_style));
    }
    Line::from(spans).style(line.style)
}

/// One screen row of a pane, and what a click on it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    pub line: Line<'a>,
    pub target: Option<Target>,
}

impl<'a> Row<'a> {
    pub fn plain(line: Line<'a>) -> Row<'a> {
        Row { line, target: None }
    }
}

/// A logical line before wrapping: continuation rows are indented by `indent` cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Para<'a> {
    pub line: Line<'a>,
    pub indent: usize,
    pub target: Option<Target>,
}

impl<'a> Para<'a> {
    /// The hanging indent is the line's leading spaces plus two.
    pub fn new(line: impl Into<Line<'a>>) -> Para<'a> {
        let line = line.into();
        let lead = line
            .spans
            .first()
            .map(|s| s.content.chars().take_while(|c| *c == ' ').count())
            .unwrap_or(0);
        Para {
            line,
            indent: lead + 2,
            target: None,
        }
    }
    pub fn indent(mut self, indent: usize) -> Para<'a> {
        self.indent = indent;
        self
    }
    pub fn target(mut self, target: Target) -> Para<'a> {
        self.target = Some(target);
        self
    }
}

impl<'a, T: Into<Line<'a>>> From<T> for Para<'a> {
    fn from(line: T) -> Para<'a> {
        Para::new(line)
    }
}

/// Wrap one logical line into rows of at most `width` cells, breaking at spaces where it can;
/// continuation rows start with `indent` spaces (the hanging indent). Styles are kept.
pub(crate) fn wrap_line<'a>(line: &Line<'a>, width: usize, indent: usize) -> Vec<Line<'a>> {
    let line = &safe_line(line.clone());
    if width == 0 || line.width() <= width {
        return vec![line.clone()];
    }
    let indent = if indent * 2 > width { 0 } else { indent };
    let cells: Vec<(char, Style, usize)> = line
        .spans
        .iter()
        .flat_map(|s| {
            let style = line.style.patch(s.style);
            s.content.chars().map(move |c| (c, style, char_width(c)))
        })
        .collect();
    let mut rows = Vec::new();
    let mut start = 0;
    let n = cells.len();
    while start < n {
        let room = if rows.is_empty() {
            width
        } else {
            width - indent
        };
        let mut i = start;
        let mut used = 0;
        let mut last_space = None;
        while i < n && used + cells[i].2 <= room {
            if cells[i].0 == ' ' {
                last_space = Some(i);
            }
            used += cells[i].2;
            i += 1;
        }
        let end = if i >= n {
            n
        } else if cells[i].0 == ' ' {
            i
        } else {
            match last_space {
                Some(sp) if sp > start => sp,
                _ => i.max(start + 1),
            }
        };
        let mut spans: Vec<Span<'a>> = Vec::new();
        if !rows.is_empty() && indent > 0 {
            spans.push(Span::raw(" ".repeat(indent)));
        }
        let mut run = String::new();
        let mut run_style = cells[start].1;
        for &(c, style, _) in &cells[start..end] {
            if style != run_style && !run.is_empty() {
                spans.push(Span::styled(std::mem::take(&mut run), run_style));
            }
            run_style = style;
            run.push(c);
        }
        if !run.is_empty() {
            spans.push(Span::styled(run, run_style));
        }
        rows.push(Line::from(spans));
        start = end;
        while start < n && cells[start].0 == ' ' {
            start += 1;
        }
    }
    if rows.is_empty() {
        rows.push(Line::default());
    }
    rows
}

/// Wrap every paragraph into rows; each row keeps its paragraph's click target.
pub fn wrap<'a>(paras: Vec<Para<'a>>, width: usize) -> Vec<Row<'a>> {
    let mut out = Vec::with_capacity(paras.len());
    for p in paras {
        for line in wrap_line(&p.line, width, p.indent) {
            out.push(Row {
                line,
                target: p.target,
            });
        }
    }
    out
}

/// Wrap `paras` to the area's width and draw them from row `scroll` (clamped so the last page
/// ends at the last row); returns (first row shown, rows in all).
pub(crate) fn render_rows(
    frame: &mut Frame,
    area: Rect,
    paras: Vec<Para>,
    scroll: usize,
) -> (usize, usize) {
    let rows = wrap(paras, usize::from(area.width));
    let total = rows.len();
    let height = usize::from(area.height);
    let top = scroll.min(total.saturating_sub(height));
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(top)
        .take(height)
        .map(|r| r.line)
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
    (top, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wrapping_breaks_at_spaces_with_a_hanging_indent() {
        let line = Line::from("  • one two three four five six");
        let rows = wrap_line(&line, 14, 4);
        assert_eq!(
            texts(&rows),
            vec!["  • one two", "    three four", "    five six"]
        );
        assert!(rows.iter().all(|r| r.width() <= 14));
        // A word longer than the row is broken inside.
        let rows = wrap_line(&Line::from("abcdefghij"), 4, 0);
        assert_eq!(texts(&rows), vec!["abcd", "efgh", "ij"]);
        // Short lines stay as they are.
        assert_eq!(texts(&wrap_line(&Line::from("ok"), 10, 2)), vec!["ok"]);
    }

    #[test]
    fn wrapping_keeps_styles() {
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let line = Line::from(vec![Span::raw("aa "), Span::styled("bb cc", bold)]);
        let rows = wrap_line(&line, 5, 1);
        assert_eq!(texts(&rows), vec!["aa bb", " cc"]);
        assert_eq!(rows[1].spans.last().map(|s| s.style), Some(bold));
    }

    #[test]
    fn cuts_end_in_an_ellipsis() {
        assert_eq!(
            ellipsize("Environment · the reporter's", 15),
            "Environment · …"
        );
        assert_eq!(ellipsize("short", 10), "short");
        assert_eq!(width(&ellipsize("✓✓✓✓✓✓", 3)), 3);
        let l = cut_line(Line::from(vec![Span::raw("abc"), Span::raw("defgh")]), 6);
        assert_eq!(l.to_string(), "abcde…");
        assert_eq!(cut_line(Line::from("abc"), 3).to_string(), "abc");
    }

    #[test]
    fn control_characters_are_shown_escaped_and_styles_kept() {
        let red = Style::new().fg(ratatui::style::Color::Red);
        let line = Line::from(vec![
            Span::raw("ok "),
            Span::styled("a\u{1b}]52;c;eA==\u{7}b", red),
        ]);
        let shown = safe_line(line);
        assert_eq!(shown.spans[0].content, "ok ");
        assert_eq!(shown.spans[1].content, "a\\x1b]52;c;eA==\\x07b");
        assert_eq!(shown.spans[1].style, red);
        assert_eq!(ellipsize("x\u{9b}2J", 20), "x\\u009b2J");
        // Wrapping counts the escaped text, so rows and the screen agree.
        let rows = wrap_line(&Line::from("\u{1b}[2J\u{1b}[2J"), 6, 0);
        let joined: String = rows.iter().map(|r| r.to_string()).collect();
        assert_eq!(joined, "\\x1b[2J\\x1b[2J");
        assert!(rows.iter().all(|r| r.width() <= 6), "{rows:?}");
        assert!(matches!(safe("plain — text"), Cow::Borrowed(_)));
    }
}
