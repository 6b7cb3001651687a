//! The help screen (`?`): every key the TUI takes, on every screen, and the mouse.

use crate::tui::view::export::centered;
use crate::tui::view::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// (keys, what they do). `tests/tui_app.rs` checks that every key the keymap offers is here.
pub const KEYS: &[(&str, &str)] = &[
    (
        "q",
        "quit; with unsaved answers, a pasted log or an edited command it asks first",
    ),
    (
        "Ctrl-C",
        "the same, also while editing the log (the launch editor: cancels the edit); a second Ctrl-C quits",
    ),
    ("?", "this help; Esc closes it"),
    (
        "1 2 3 4, Tab",
        "Summary, Walk, Log and Remedy panes (Shift-Tab back)",
    ),
    ("↑/↓, Enter", "Summary: choose a finding, open its walk"),
    ("←/→", "Walk: previous/next class · Remedy: another finding"),
    (
        "y n u",
        "Walk: answer the open question (yes, no, not sure where it is offered)",
    ),
    ("b", "Walk: undo your last answer"),
    (
        "Enter",
        "Walk: choose a remedy for the plan (in the Remedy pane)",
    ),
    (
        "↑/↓, Enter",
        "Remedy: choose this finding's remedy, use it in the plan",
    ),
    ("↑/↓", "Walk and Log: scroll a line"),
    (
        "h j k l",
        "the same as ← ↓ ↑ → wherever no key of its own takes the letter",
    ),
    ("PgDn/PgUp", "scroll a page"),
    ("g/G, Home/End", "the top / the end"),
    (
        "/, n/N",
        "Log: search (Enter runs it), then the next/previous hit",
    ),
    ("]/[", "Log: the next/previous matched line"),
    (
        "paste",
        "anywhere: the pasted text becomes a log (also with no host); the walk jumps to the matched class · Remedy: a paste that reads as a launch opens the launch editor with it",
    ),
    (
        "i",
        "Log: type into the pasted log (Esc ends) · Remedy: edit the launch command at its end (Enter applies, Alt-Enter new line, Esc or Ctrl-C cancels)",
    ),
    ("o", "Log: open a log file"),
    ("x", "Log: clear the pasted log (u puts it back)"),
    (
        "c",
        "copy the fix (the plan's commands) to the clipboard (OSC 52)",
    ),
    (
        "w",
        "write the fix, the PR script or your launch command to a file (asks before overwriting)",
    ),
    (
        "e",
        "export the report (Markdown, JSON or text, redacted; asks before overwriting)",
    ),
    ("D", "details: node, signature and remedy ids"),
    (
        "O",
        "the onboarding checklist: adds it, then each press goes to its next open item",
    ),
    (
        "p",
        "live host: run the allocator/IPC probe in the background (on a recording it says why not)",
    ),
    (
        "P",
        "live host: run the P2P probe (write and verify every GPU pair) in the background",
    ),
    ("d", "no host: open the embedded demo"),
    (
        "mouse",
        "click a tab, a class mark, a remedy or a finding; the wheel scrolls the pane (Shift+drag still selects text in most terminals)",
    ),
];

fn lines<'a>(theme: Theme) -> Vec<Line<'a>> {
    let mut lines = vec![
        Line::from(Span::styled("sm120-doctor keys", theme.title())),
        Line::default(),
    ];
    for (k, what) in KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("{k:>13}  "), theme.accent()),
            Span::raw(*what),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "The footer lists the keys that work on the current screen. NO_COLOR is honoured.",
        theme.dim(),
    )));
    lines
}

/// Where the help goes in `area`, and its rows wrapped to that width.
fn layout<'a>(area: Rect, theme: Theme) -> (Rect, Vec<Line<'a>>) {
    let rect = centered(area, 110, u16::MAX);
    let inner_w = usize::from(rect.width.saturating_sub(2));
    let rows: Vec<Line> = lines(theme)
        .iter()
        // Key rows wrap under their description; the other lines from the edge.
        .flat_map(|l| {
            crate::tui::view::text::wrap_line(l, inner_w, if l.spans.len() == 2 { 15 } else { 0 })
        })
        .collect();
    let h = u16::try_from(rows.len() + 2).unwrap_or(u16::MAX);
    (centered(area, 110, h), rows)
}

/// The help's rows in all and the rows it shows, in `area` (the screen's body).
pub fn rows(area: Rect) -> (usize, usize) {
    let (rect, rows) = layout(area, Theme::new(false));
    (rows.len(), usize::from(rect.height.saturating_sub(2)))
}

/// Draw the help from row `scroll` (clamped); when it does not fit, the border says where.
pub fn render(frame: &mut Frame, area: Rect, theme: Theme, scroll: usize) {
    let (rect, rows) = layout(area, theme);
    let height = usize::from(rect.height.saturating_sub(2));
    let total = rows.len();
    let top = scroll.min(total.saturating_sub(height));
    let shown: Vec<Line> = rows.into_iter().skip(top).take(height).collect();
    let mut block = Block::default()
        .borders(Borders::ALL)
        .title(" Help · Esc closes ");
    if total > height {
        block = block.title_bottom(
            Line::from(Span::styled(
                format!(
                    " ↑/↓ scroll · rows {}–{} of {total} ",
                    top + 1,
                    (top + height).min(total)
                ),
                theme.dim(),
            ))
            .right_aligned(),
        );
    }
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(shown).block(block), rect);
}
