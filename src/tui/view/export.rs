//! Dialogs: the path prompt (export, write launch, open log) and the overwrite question.

use crate::tui::state::EXPORT_LABEL;
use crate::tui::state::app::App;
use crate::tui::state::{FileWhat, Overlay, PromptPurpose};
use crate::tui::view::theme::Theme;
use crate::write::Kind;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

/// A centred rectangle of at most `w`×`h`.
pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// What `w` will write, from the cached preview (or the editor's text without one).
fn what_w_writes(app: &App) -> &'static str {
    let what = match app.preview.as_ref().and_then(|p| p.writable()) {
        Some(w) => (true, w.what),
        None => (false, FileWhat::launch(&app.launch_text())),
    };
    match what {
        (_, FileWhat::PatchScript) => {
            "Writes the PR apply script shown in the Remedy pane (executable; nothing is run)."
        }
        (true, FileWhat::Launch(Kind::Script)) => {
            "Writes the plan's launch command shown in the Remedy pane (every picked remedy applied) as a bash script (nothing is run)."
        }
        (true, FileWhat::Launch(Kind::Data)) => {
            "Writes the plan's compose file shown in the Remedy pane (nothing is run)."
        }
        (false, FileWhat::Launch(Kind::Script)) => {
            "Writes the launch command as shown in the editor, as a bash script (nothing is run)."
        }
        (false, FileWhat::Launch(Kind::Data)) => {
            "Writes the launch text as shown in the editor (nothing is run)."
        }
    }
}

/// The write dialog's title: what `w` is about to write.
fn write_title(app: &App) -> &'static str {
    match app.preview.as_ref().and_then(|p| p.writable()) {
        Some(w) if w.what == FileWhat::PatchScript => " Write the PR apply script ",
        Some(_) => " Write the fixed launch command ",
        None => " Write your launch command ",
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, overlay: &Overlay, theme: Theme) {
    let (title, lines): (&str, Vec<Line>) = match overlay {
        Overlay::Prompt(p) => {
            let mut l = Vec::new();
            let title = match p.purpose {
                PromptPurpose::Export => {
                    l.push(Line::from(format!("Writes: {EXPORT_LABEL}")));
                    l.push(Line::from(vec![
                        Span::raw("Format: "),
                        Span::styled(format!(" {} ", p.format.label()), theme.selected()),
                        Span::styled("  (Tab: md/json/text)", theme.dim()),
                    ]));
                    " Export report "
                }
                PromptPurpose::WriteLaunch => {
                    l.push(Line::from(what_w_writes(app)));
                    write_title(app)
                }
                PromptPurpose::LoadLog => {
                    l.push(Line::from(
                        "Reads a log file into the log pane (the file is only read).",
                    ));
                    " Open log file "
                }
            };
            let input_style = if p.suggested {
                theme.selected()
            } else {
                theme.accent()
            };
            l.push(Line::from(vec![
                Span::raw("Path: "),
                Span::styled(p.input.clone(), input_style),
                Span::styled("▏", theme.accent()),
            ]));
            if p.suggested {
                l.push(Line::from(Span::styled(
                    "Typing or pasting replaces the suggested name; Enter keeps it.",
                    theme.dim(),
                )));
            }
            if p.purpose != PromptPurpose::LoadLog {
                l.push(Line::from(Span::styled(
                    "An existing file is never replaced without asking.",
                    theme.dim(),
                )));
            }
            (title, l)
        }
        Overlay::Confirm { question, .. } => (
            " Overwrite? ",
            vec![
                Line::from(Span::styled(question.clone(), theme.question())),
                Line::from("y: overwrite   n: keep the existing file"),
            ],
        ),
        Overlay::ConfirmQuit { unsaved } => (
            " Quit without saving? ",
            vec![
                Line::from(Span::styled(
                    format!("Not saved in a report yet: {unsaved}."),
                    theme.question(),
                )),
                Line::from("e: export a report first (answers and logs included)"),
                Line::from("q or Ctrl-C: quit anyway   Esc: stay"),
            ],
        ),
        Overlay::Help | Overlay::Search { .. } => return,
    };
    let h = lines.len() as u16 + 2;
    let rect = centered(area, 70, h + 1);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(crate::tui::view::text::safe_lines(lines))
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL).title(title)),
        rect,
    );
}
