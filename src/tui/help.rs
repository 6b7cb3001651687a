//! The help screen (`?`).

use super::export::centered;
use super::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

const KEYS: &[(&str, &str)] = &[
    ("q, Ctrl-C", "quit (the terminal is restored)"),
    ("?", "this help; Esc closes it"),
    ("Tab, 1 2 3", "Walk, Log and Remedy panes"),
    ("←/→", "Walk: previous/next failure class"),
    (
        "y n u",
        "Walk: answer the open question (yes, no, not sure)",
    ),
    ("b", "Walk: undo your last answer"),
    (
        "↑/↓, Enter",
        "Walk/Remedy: pick this finding's remedy for the fix plan (default: the cheapest)",
    ),
    ("PgDn/PgUp", "scroll the pane"),
    (
        "paste",
        "anywhere: the pasted text becomes a log; the walk jumps to the matched class",
    ),
    (
        "i",
        "Log: type into the pasted log · Remedy: edit the launch command; Esc ends",
    ),
    ("o", "Log: open a log file"),
    ("x", "Log: clear the pasted log"),
    (
        "w",
        "Remedy: write the plan's command or the PR script (asks before overwriting)",
    ),
    (
        "p",
        "Walk (live host): run the allocator/IPC probe in the background",
    ),
    (
        "P",
        "Walk (live host): run the P2P probe (write and verify every GPU pair) in the background",
    ),
    (
        "e",
        "export the report (Markdown, JSON or text, redacted; asks before overwriting)",
    ),
];

pub fn render(frame: &mut Frame, area: Rect, theme: Theme) {
    let mut lines = vec![
        Line::from(Span::styled("sm120-doctor keys", theme.title())),
        Line::default(),
    ];
    for (k, what) in KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("{k:>12}  "), theme.accent()),
            Span::raw(*what),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "The footer always lists the keys that work on the current screen. NO_COLOR is honoured.",
        theme.dim(),
    )));
    let rect = centered(area, 96, lines.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL).title(" Help ")),
        rect,
    );
}
