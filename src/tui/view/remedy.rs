//! The Remedy pane: the current finding's remedies to choose from (↑/↓, Enter or a click),
//! the one in focus with where it was verified, then the fix plan — every finding's remedy
//! combined — as the command to run and what it changes in the launch, above the launch
//! command as given (the editor).

use crate::kb::schema::Severity;
use crate::tui::state::app::App;
use crate::tui::state::preview::{Preview, PreviewBody, SCRIPT_HEAD};
use crate::tui::view::text::Para;
use crate::tui::view::theme::{Theme, mark};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

pub fn paras<'a>(app: &'a App, theme: Theme) -> Vec<Para<'a>> {
    let mut out = choice_paras(app, theme);
    out.extend(plan_paras(app, theme));
    out
}

/// Rows above the fix plan at `width`: where the pane scrolls to once a remedy is picked.
pub(crate) fn plan_row(app: &App, width: usize) -> usize {
    crate::tui::view::text::wrap(choice_paras(app, Theme::new(false)), width).len()
}

/// The current finding's remedies to choose from.
fn choice_paras<'a>(app: &'a App, theme: Theme) -> Vec<Para<'a>> {
    let mut out = Vec::new();
    match app.current_finding() {
        Some(f) if !f.remedies.is_empty() => {
            out.push(Para::new(Line::from(vec![
                Span::styled("Remedies for ", theme.dim()),
                Span::styled(format!("{} {}", mark(f.severity), f.title), theme.title()),
            ])));
            let in_plan = app.plan_choice(f);
            for (i, r) in f.remedies.iter().enumerate() {
                crate::tui::view::walk::remedy_line(&mut out, app, i, r, in_plan.as_deref(), theme);
            }
            out.push(Para::new(Line::from(Span::styled(
                "↑/↓ choose · Enter or a click: use it in the plan · ←/→ another finding",
                theme.dim(),
            ))));
            if let Some(r) = f.remedies.get(app.remedy_idx)
                && !r.verified.is_empty()
            {
                out.push(Para::new(Line::from(Span::styled(
                    format!("verified: {}", r.verified),
                    theme.dim(),
                ))));
            }
        }
        Some(f) => out.push(Para::new(format!(
            "{} {} — no remedy to choose.",
            mark(f.severity),
            f.title
        ))),
        None => out.push(Para::new(format!(
            "This class has no finding yet ({}: answer its question in the walk). The plan takes the cheapest confirmed remedy of each finding at warning or above (the cheapest, when none is confirmed).",
            crate::tui::state::Pane::Walk.key()
        ))),
    }
    out
}

/// The fix plan: the picked script, the combined command and its diff, sources.
fn plan_paras<'a>(app: &'a App, theme: Theme) -> Vec<Para<'a>> {
    let mut out = Vec::new();
    if let Some(sc) = app.preview.as_ref().and_then(|p| p.script.as_ref()) {
        out.push(Para::new(Line::from(vec![
            Span::styled("w writes its script: ", theme.title()),
            Span::styled(sc.command.as_str(), theme.accent()),
            Span::styled(" (its head is below the plan)", theme.dim()),
        ])));
    }
    match &app.preview {
        Some(p) => preview_lines(&mut out, app, p, theme),
        None => out.push(Para::new(Line::from(Span::styled(
            "(no plan computed yet)",
            theme.dim(),
        )))),
    }
    if let Some(r) = app.picked_remedy()
        && !r.sources.is_empty()
    {
        out.push(Para::new(Line::from(Span::styled(
            format!("sources of “{}”: {}", r.title, r.sources.join(", ")),
            theme.dim(),
        ))));
    }
    out
}

fn diff_style(line: &str, theme: Theme) -> ratatui::style::Style {
    if line.starts_with("+++") || line.starts_with("---") || line.starts_with("@@") {
        theme.dim()
    } else if line.starts_with('+') {
        theme.severity(Severity::Ok)
    } else if line.starts_with('-') {
        theme.severity(Severity::Error)
    } else {
        ratatui::style::Style::new()
    }
}

/// The finding's title for a plan line (its id with details on).
fn finding_name(app: &App, id: Option<&str>) -> String {
    let Some(id) = id else {
        return "-".into();
    };
    if app.details {
        return id.to_string();
    }
    app.diagnosis
        .findings
        .iter()
        .find(|f| f.id == id)
        .map_or(id.to_string(), |f| {
            format!("{} {}", mark(f.severity), f.title)
        })
}

/// The cached plan: its remedies, the combined command and its diff, the script in focus,
/// then steps and notes.
fn preview_lines<'a>(out: &mut Vec<Para<'a>>, app: &'a App, p: &'a Preview, theme: Theme) {
    let plan = &p.plan;
    out.push(Para::new(""));
    if plan.chosen.is_empty() {
        out.push(Para::new(Line::from(Span::styled(
            "The fix: no remedy (no finding at warning or above, nothing picked)",
            theme.title(),
        ))));
    } else {
        out.push(Para::new(Line::from(vec![
            Span::styled("The fix", theme.title()),
            Span::styled(
                " — one remedy per finding, applied in order (c copies it, w writes it):",
                theme.dim(),
            ),
        ])));
    }
    for c in &plan.chosen {
        let remedy = if app.details {
            c.remedy.clone()
        } else {
            c.title.clone()
        };
        let by = match c.chosen_by {
            crate::engine::plan::ChosenBy::User => "your pick",
            crate::engine::plan::ChosenBy::Cheapest => {
                let claim = app
                    .diagnosis
                    .findings
                    .iter()
                    .flat_map(|f| f.remedies.iter())
                    .find(|r| r.id == c.remedy)
                    .map_or(crate::kb::schema::Confidence::Suspected, |r| r.confidence);
                crate::engine::plan::default_words(claim)
            }
        };
        out.push(
            Para::new(format!(
                "  {} → {remedy} ({by})",
                finding_name(app, c.finding.as_deref())
            ))
            .indent(6),
        );
    }
    for l in &plan.left_out {
        out.push(Para::new(Line::from(Span::styled(
            format!("  left out: {} — {}", l.remedy, l.reason),
            theme.severity(Severity::Warning),
        ))));
    }
    match &p.body {
        PreviewBody::Launch { patched, diff } if diff.is_empty() => {
            out.push(Para::new(Line::from(Span::styled(
                "Your launch command needs no change for this plan:",
                theme.title(),
            ))));
            for l in patched.lines() {
                out.push(
                    Para::new(Line::from(Span::styled(format!("  {l}"), theme.used()))).indent(6),
                );
            }
        }
        PreviewBody::Launch { patched, diff } => {
            out.push(Para::new(Line::from(Span::styled(
                "Run this instead of your launch (w writes it; nothing is run for you):",
                theme.title(),
            ))));
            for l in patched.lines() {
                out.push(
                    Para::new(Line::from(Span::styled(format!("  {l}"), theme.used()))).indent(6),
                );
            }
            out.push(Para::new(Line::from(Span::styled(
                "What it changes in your launch (- yours, + the fix):",
                theme.title(),
            ))));
            for l in diff.lines() {
                out.push(Para::new(Line::from(Span::styled(l, diff_style(l, theme)))).indent(1));
            }
        }
        PreviewBody::Error(e) => out.push(Para::new(Line::from(Span::styled(
            format!("No combined command: {e}"),
            theme.severity(Severity::Error),
        )))),
    }
    if let Some(s) = &p.script {
        out.push(Para::new(Line::from(vec![
            Span::styled("What ", theme.title()),
            Span::styled(s.command.as_str(), theme.accent()),
            Span::styled(" would write (w writes it, mode 755):", theme.title()),
        ])));
        let total = s.script.lines().count();
        for l in s.script.lines().take(SCRIPT_HEAD) {
            out.push(Para::new(Line::from(Span::styled(format!("  {l}"), theme.used()))).indent(4));
        }
        if total > SCRIPT_HEAD {
            out.push(Para::new(Line::from(Span::styled(
                format!("  … {} more lines", total - SCRIPT_HEAD),
                theme.dim(),
            ))));
        }
    }
    for s in &plan.steps {
        out.push(Para::new(format!("step: {s}")));
    }
    for n in &p.notes {
        out.push(Para::new(Line::from(Span::styled(
            format!("note: {n}"),
            theme.dim(),
        ))));
    }
}

/// The launch editor's title when it is not being edited, and while it is.
pub const LAUNCH_TITLE: &str = " Your launch command, as given · i edits it ";
pub const LAUNCH_TITLE_EDITING: &str =
    " Editing your launch command · Enter applies · Esc cancels ";

/// Draw the pane's rows in `area` and the launch editor in `editor`; returns (first row
/// shown, rows in all). Not being edited, the editor shows the start of the command.
pub fn render(
    frame: &mut Frame,
    area: Rect,
    editor: Option<Rect>,
    app: &App,
    theme: Theme,
) -> (usize, usize) {
    let shown = crate::tui::view::text::render_rows(
        frame,
        area,
        paras(app, theme),
        app.scroll.get(crate::tui::state::Pane::Remedy),
    );
    if let Some(rect) = editor {
        let editing = app.editing == Some(crate::tui::state::EditTarget::Launch);
        let title = if editing {
            LAUNCH_TITLE_EDITING
        } else {
            LAUNCH_TITLE
        };
        let block = Block::default().borders(Borders::ALL).title(title);
        let rect_inner = block.inner(rect);
        frame.render_widget(block, rect);
        let rect = rect_inner;
        if editing {
            frame.render_widget(&app.launch_editor, rect);
        } else {
            let mut e = app.launch_editor.clone();
            e.set_cursor_style(ratatui::style::Style::new());
            e.set_cursor_line_style(ratatui::style::Style::new());
            e.move_cursor(ratatui_textarea::CursorMove::Top);
            e.move_cursor(ratatui_textarea::CursorMove::Head);
            frame.render_widget(&e, rect);
        }
    }
    shown
}
