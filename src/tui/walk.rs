//! The guided walk: class tabs, breadcrumb, each step with its automatic answer and evidence,
//! the open question (with the keys to answer it) or the finding with its remedies.

use super::app::App;
use super::theme::{Theme, mark};
use crate::engine::{Answer, AnsweredBy, Basis, Outcome, Walk};
use crate::kb::schema::{ProbeKind, Severity};
use crate::report::check::confidences;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

fn answer_word(a: Answer) -> &'static str {
    match a {
        Answer::Yes => "yes",
        Answer::No => "no",
        Answer::Unsure => "not sure",
    }
}

/// The mark a walk gets in the class tabs.
pub fn walk_mark(app: &App, w: &Walk) -> &'static str {
    match app.finding_of(w) {
        Some(f) => mark(f.severity),
        None => "?",
    }
}

/// `node → node → ✗ conclusion` (or `→ ? node` when waiting).
pub fn breadcrumb(app: &App, w: &Walk) -> String {
    let mut parts: Vec<String> = w.steps.iter().map(|s| s.node.clone()).collect();
    match &w.outcome {
        Outcome::Concluded { conclusion } => {
            parts.push(format!("{} {conclusion}", walk_mark(app, w)));
        }
        Outcome::NeedsAnswer { node, .. } => parts.push(format!("? {node}")),
    }
    parts.join(" → ")
}

pub fn lines<'a>(app: &'a App, theme: Theme) -> Vec<Line<'a>> {
    let mut out: Vec<Line> = Vec::new();
    let mut tabs = vec![Span::styled("Classes: ", theme.dim())];
    for (i, w) in app.diagnosis.walks.iter().enumerate() {
        let label = format!(" {} {} ", walk_mark(app, w), w.class);
        let style = if i == app.walk_idx {
            theme.selected()
        } else {
            ratatui::style::Style::new()
        };
        tabs.push(Span::styled(label, style));
    }
    if app.diagnosis.walks.is_empty() {
        tabs.push(Span::raw("none in this mode"));
    }
    out.push(Line::from(tabs));
    let Some(w) = app.current_walk() else {
        return out;
    };
    out.push(Line::from(vec![
        Span::styled("Path: ", theme.dim()),
        Span::raw(breadcrumb(app, w)),
    ]));
    out.push(Line::default());
    for s in &w.steps {
        let by = match (&s.by, s.basis) {
            (AnsweredBy::User, _) => "you",
            (AnsweredBy::Auto { .. }, Basis::Measured) => "measured",
            (AnsweredBy::Auto { .. }, Basis::Answered) => "from your answers",
            (AnsweredBy::Auto { .. }, Basis::Assumed) => "assumed",
        };
        out.push(Line::from(vec![
            Span::styled("✓ ", theme.dim()),
            Span::raw(s.question.as_str()),
            Span::styled(
                format!("  {} ({by})", answer_word(s.answer)),
                theme.accent(),
            ),
        ]));
        if let AnsweredBy::Auto { facts } = &s.by {
            for f in facts {
                let source = match (f.source.is_empty(), f.assumed) {
                    (true, _) => String::new(),
                    (false, false) => format!("  ← {}", f.source),
                    (false, true) => format!("  ← {} (assumed)", f.source),
                };
                out.push(Line::from(vec![
                    Span::raw(format!("    {} = {}", f.name, f.value)),
                    Span::styled(source, theme.dim()),
                ]));
            }
        }
        if let Some(c) = s.contradiction() {
            out.push(Line::from(Span::styled(
                format!("    ! your answer is set aside, the input wins: {c}"),
                theme.severity(Severity::Warning),
            )));
        }
        for (_, note) in app.dropped.iter().filter(|(n, _)| *n == s.node) {
            out.push(Line::from(Span::styled(
                format!("    ! your answer was dropped, the input now decides: {note}"),
                theme.severity(Severity::Warning),
            )));
        }
    }
    match &w.outcome {
        Outcome::NeedsAnswer {
            question,
            hint,
            reason,
            yes_label,
            no_label,
            can_be_unsure,
            ..
        } => {
            out.push(Line::default());
            out.push(Line::from(Span::styled(
                format!("? {question}"),
                theme.question(),
            )));
            if !hint.is_empty() {
                out.push(Line::from(format!("  {hint}")));
            }
            if !reason.is_empty() {
                out.push(Line::from(Span::styled(
                    format!("  not automatic: {reason}"),
                    theme.dim(),
                )));
            }
            let mut keys = format!("  [y] {yes_label}   [n] {no_label}");
            if *can_be_unsure {
                keys.push_str("   [u] not sure");
            }
            out.push(Line::from(Span::styled(keys, theme.accent())));
        }
        Outcome::Concluded { conclusion } => {
            out.push(Line::default());
            match app.finding_of(w) {
                Some(f) => {
                    out.push(Line::from(vec![
                        Span::styled(
                            format!(
                                "{} {} ",
                                mark(f.severity),
                                f.severity.as_str().to_uppercase()
                            ),
                            theme.severity(f.severity),
                        ),
                        Span::styled(f.title.as_str(), theme.title()),
                    ]));
                    // The claim (upstream) and the match (this host), apart.
                    out.push(Line::from(Span::styled(
                        format!("  {}", confidences(f)),
                        theme.accent(),
                    )));
                    if !f.answered.is_empty() {
                        out.push(Line::from(Span::styled(
                            format!("  rests on your answer to: {}", f.answered.join(", ")),
                            theme.question(),
                        )));
                    }
                    if !f.remedies.is_empty() {
                        out.push(Line::default());
                        out.push(Line::from(Span::styled(
                            "Remedies, cheapest first (↑/↓, Enter to use in the plan):",
                            theme.title(),
                        )));
                    }
                    let in_plan = app.plan_choice(f);
                    for (i, r) in f.remedies.iter().enumerate() {
                        let sel = i == app.remedy_idx;
                        let head = format!(
                            "{} {}. {} ({}) — {}{}",
                            if sel { "▶" } else { " " },
                            i + 1,
                            r.title,
                            r.id,
                            r.confidence.as_str(),
                            if in_plan.as_deref() == Some(r.id.as_str()) {
                                "  [in plan]"
                            } else {
                                ""
                            }
                        );
                        out.push(Line::from(Span::styled(
                            head,
                            if sel { theme.selected() } else { theme.title() },
                        )));
                        out.push(Line::from(format!("     cost: {}", r.cost)));
                    }
                    if !f.evidence.is_empty() {
                        out.push(Line::from(Span::styled("Evidence:", theme.title())));
                    }
                    for e in &f.evidence {
                        out.push(Line::from(format!("  • {e}")));
                    }
                    for m in f.log_lines.iter().take(3) {
                        out.push(Line::from(Span::styled(
                            format!("  log {}:{}: {}", m.file, m.line, m.text),
                            theme.used(),
                        )));
                    }
                    for d in &f.does_not_fix {
                        out.push(Line::from(Span::styled(
                            format!("  does not fix: {d}"),
                            theme.severity(Severity::Warning),
                        )));
                    }
                    for c in &f.contradictions {
                        out.push(Line::from(Span::styled(
                            format!("  sources disagree: {c}"),
                            theme.dim(),
                        )));
                    }
                    if !f.sources.is_empty() {
                        out.push(Line::from(Span::styled(
                            format!("  sources: {}", f.sources.join(", ")),
                            theme.dim(),
                        )));
                    }
                }
                None => out.push(Line::from(format!("concluded: {conclusion}"))),
            }
        }
    }
    // The class whose cause a probe measures (`probe:` in its KB file) shows that probe.
    match app.kb.class(&w.class).and_then(|c| c.def.probe) {
        Some(ProbeKind::Ipc) => probe_section(&mut out, app, theme),
        Some(ProbeKind::P2p) => p2p_section(&mut out, app, theme),
        None => {}
    }
    out
}

/// The P2P probe's result (cached lines), or how to run it.
pub fn p2p_section<'a>(out: &mut Vec<Line<'a>>, app: &'a App, theme: Theme) {
    out.push(Line::default());
    let how = if app.can_probe_p2p() {
        " (P: run it on this host)"
    } else if app.snapshot.origin != "live" {
        " (P works on the live host only)"
    } else {
        ""
    };
    out.push(Line::from(vec![
        Span::styled("P2P probe", theme.title()),
        Span::styled(how, theme.dim()),
    ]));
    if app.p2p_lines.is_empty() {
        out.push(Line::from(
            "  not run: write, read back and compare every GPU pair (about a second)",
        ));
    }
    for l in &app.p2p_lines {
        out.push(Line::from(format!("  {l}")));
    }
}

/// The probe's result (cached lines), or how to run it.
pub fn probe_section<'a>(out: &mut Vec<Line<'a>>, app: &'a App, theme: Theme) {
    out.push(Line::default());
    let how = if app.can_probe() {
        " (p: run it on this host)"
    } else if app.snapshot.origin != "live" {
        " (p works on the live host only)"
    } else {
        ""
    };
    out.push(Line::from(vec![
        Span::styled("Allocator/IPC probe", theme.title()),
        Span::styled(how, theme.dim()),
    ]));
    for l in &app.probe_lines {
        out.push(Line::from(format!("  {l}")));
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    frame.render_widget(
        // Scrolling is by logical line; lines past the bottom are not wrapped at all.
        Paragraph::new(
            lines(app, theme)
                .into_iter()
                .skip(usize::from(app.scroll))
                .take(usize::from(area.height))
                .collect::<Vec<_>>(),
        )
        .wrap(Wrap { trim: false }),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breadcrumb_ends_in_the_conclusion() {
        let app = App::demo();
        let w = app.current_walk().expect("walk");
        let b = breadcrumb(&app, w);
        assert!(b.contains(" → ✗ "), "{b}");
        assert!(b.starts_with(&w.steps[0].node), "{b}");
    }

    /// The probe section follows the class whose KB file says `probe: ipc`, and no other.
    #[test]
    fn the_probe_section_follows_the_class_that_names_the_probe() {
        let mut app = App::demo();
        let probe_class = app
            .kb
            .class_for_probe(ProbeKind::Ipc)
            .map(|c| c.id().to_string())
            .expect("a class names the IPC probe");
        let mut seen = 0;
        for i in 0..app.diagnosis.walks.len() {
            app.walk_idx = i;
            let Some(w) = app.current_walk() else {
                continue;
            };
            let class = w.class.clone();
            let text: Vec<String> = lines(&app, Theme::new(false))
                .iter()
                .map(|l| l.to_string())
                .collect();
            let has = text.iter().any(|l| l.starts_with("Allocator/IPC probe"));
            assert_eq!(has, class == probe_class, "{class}");
            seen += usize::from(has);
        }
        assert_eq!(seen, 1, "shown for exactly one walk");
    }
}
