//! The guided walk. A fixed class bar on top (a mark per class, the current one's title;
//! with details on, each mark with its class id, never split from it), then the walk itself,
//! which scrolls and stops at its end: each step with its answer and the facts that decided it
//! in words, the open question with the keys that answer it, or the finding with its remedies.

use crate::engine::{Answer, AnsweredBy, Basis, Outcome, Walk};
use crate::kb::schema::{ProbeKind, Severity};
use crate::tui::state::Target;
use crate::tui::state::app::App;
use crate::tui::state::words;
use crate::tui::view::text::{self, Para};
use crate::tui::view::theme::{Theme, finding_mark};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

fn answer_word(a: Answer) -> &'static str {
    match a {
        Answer::Yes => "yes",
        Answer::No => "no",
        Answer::Unsure => "not sure",
    }
}

/// The mark a walk gets in the class bar.
pub(crate) fn walk_mark(app: &App, w: &Walk) -> &'static str {
    match app.finding_of(w) {
        Some(f) => finding_mark(f),
        None => "?",
    }
}

/// What a conclusion says: its severity for a problem, else its state, in words.
pub(crate) fn state_word(f: &crate::engine::Finding) -> &'static str {
    use crate::engine::CheckState;
    match f.state {
        CheckState::Problem => f.severity.as_str(),
        CheckState::Passed => "passed",
        CheckState::NotChecked => "not checked",
        CheckState::NotApplicable => "does not apply",
    }
}

/// `node → node → ✗ conclusion` (or `→ ? node` when waiting): shown with details on.
pub(crate) fn breadcrumb(app: &App, w: &Walk) -> String {
    let mut parts: Vec<String> = w.steps.iter().map(|s| s.node.clone()).collect();
    match &w.outcome {
        Outcome::Concluded { conclusion } => {
            parts.push(format!("{} {conclusion}", walk_mark(app, w)));
        }
        Outcome::NeedsAnswer { node, .. } => parts.push(format!("? {node}")),
    }
    parts.join(" → ")
}

/// One clickable entry of the class bar: a walk's mark (and its class id with details on).
#[derive(Debug, Clone, PartialEq)]
pub struct Chip {
    pub walk: usize,
    pub label: String,
    pub line: usize,
    pub x: u16,
    pub width: u16,
}

/// The class bar's entries laid out in lines of `width` cells; an entry is never split
/// across lines. The first line ends with "class 3 of 12" when there is room.
pub fn chips(app: &App, width: u16) -> Vec<Chip> {
    let mut out = Vec::new();
    let (mut line, mut x) = (0usize, 0u16);
    for (i, w) in app.diagnosis.walks.iter().enumerate() {
        let label = if app.details {
            format!("{} {}", walk_mark(app, w), w.class)
        } else {
            walk_mark(app, w).to_string()
        };
        let cells = text::width(&label) as u16 + 2;
        if x > 0 && x + cells > width {
            line += 1;
            x = 0;
        }
        out.push(Chip {
            walk: i,
            label,
            line,
            x,
            width: cells,
        });
        x += cells;
    }
    out
}

fn position_label(app: &App) -> String {
    let n = app.diagnosis.walks.len();
    match app.current_walk() {
        Some(w) if app.is_checklist(w) => words::item_label(&app.kb, &app.diagnosis.walks, w)
            .split(':')
            .next()
            .unwrap_or_default()
            .to_string(),
        Some(_) => format!("class {} of {n}", app.walk_idx + 1),
        None => String::new(),
    }
}

/// The class bar's height at `width` (chip lines and the title line).
pub(crate) fn bar_height(app: &App, width: u16) -> u16 {
    let lines = chips(app, chip_width(app, width))
        .last()
        .map_or(1, |c| c.line + 1);
    lines as u16 + 1
}

/// The width the chips are laid out in: the bar's, less the room the position label needs on
/// the first line, so that more classes wrap the chips instead of hiding "class 2 of 20"
/// (unless that would leave the chips almost no room).
fn chip_width(app: &App, width: u16) -> u16 {
    let pos = position_label(app);
    let label = if pos.is_empty() {
        0
    } else {
        2 + text::width(&pos) as u16
    };
    let left = width.saturating_sub(label);
    if left >= 12 { left } else { width }
}

/// The fixed class bar: chip lines, then the current walk's title.
pub fn bar<'a>(app: &'a App, theme: Theme, width: u16) -> Vec<Line<'a>> {
    let chips = chips(app, chip_width(app, width));
    let n_lines = chips.last().map_or(1, |c| c.line + 1);
    let mut lines: Vec<Vec<Span>> = vec![Vec::new(); n_lines];
    let mut used = vec![0u16; n_lines];
    for c in &chips {
        let style = if c.walk == app.walk_idx {
            theme.selected()
        } else {
            let sev = app
                .diagnosis
                .walks
                .get(c.walk)
                .and_then(|w| app.finding_of(w))
                .map(|f| f.severity);
            match sev {
                Some(s) if s > Severity::Ok => theme.severity(s),
                Some(_) => Style::new(),
                None => theme.question(),
            }
        };
        lines[c.line].push(Span::styled(format!(" {} ", c.label), style));
        used[c.line] = c.x + c.width;
    }
    if app.diagnosis.walks.is_empty() {
        lines[0].push(Span::styled("no class in this mode", theme.dim()));
    }
    let pos = position_label(app);
    if !pos.is_empty() && used[0] + 2 + text::width(&pos) as u16 <= width {
        lines[0].push(Span::styled(format!("  {pos}"), theme.dim()));
    }
    let mut out: Vec<Line> = lines.into_iter().map(Line::from).collect();
    if let Some(w) = app.current_walk() {
        let title = Line::from(vec![
            Span::styled(format!("{} ", walk_mark(app, w)), theme.title()),
            Span::styled(
                words::walk_title(&app.kb, &app.diagnosis.walks, w),
                theme.title(),
            ),
        ]);
        out.push(text::cut_line(title, usize::from(width)));
    }
    out
}

/// The walk below the class bar, as logical lines (wrapped by the caller).
pub fn paras<'a>(app: &'a App, theme: Theme) -> Vec<Para<'a>> {
    let mut out: Vec<Para> = Vec::new();
    let Some(w) = app.current_walk() else {
        return out;
    };
    if app.details {
        out.push(Para::new(Line::from(vec![
            Span::styled("Path: ", theme.dim()),
            Span::raw(breadcrumb(app, w)),
        ])));
    }
    for s in &w.steps {
        let by = match (&s.by, s.basis) {
            (AnsweredBy::User, _) => "you",
            (AnsweredBy::Auto { .. }, Basis::Measured) => "measured",
            (AnsweredBy::Auto { .. }, Basis::Answered) => "from your answers",
            (AnsweredBy::Auto { .. }, Basis::Assumed) => "assumed",
        };
        // The answer leads, not a tick: a step answered "no" is not a check that passed.
        out.push(Para::new(Line::from(vec![
            Span::styled(format!("{:<4}", answer_word(s.answer)), theme.accent()),
            Span::raw(s.question.as_str()),
            Span::styled(format!("  ({by})"), theme.dim()),
        ])));
        if let AnsweredBy::Auto { facts } = &s.by {
            for f in facts {
                out.push(Para::new(Line::from(Span::styled(
                    format!(
                        "    {}",
                        words::fact_line(
                            &app.diagnosis.classification,
                            f,
                            app.is_live(),
                            app.details
                        )
                    ),
                    theme.dim(),
                ))));
            }
        }
        if let Some(c) = s.contradiction() {
            out.push(Para::new(Line::from(Span::styled(
                format!("    ! your answer is set aside, the input wins: {c}"),
                theme.severity(Severity::Warning),
            ))));
        }
        for (_, note) in app.dropped.iter().filter(|(n, _)| *n == s.node) {
            out.push(Para::new(Line::from(Span::styled(
                format!("    ! your answer was dropped, the input now decides: {note}"),
                theme.severity(Severity::Warning),
            ))));
        }
    }
    match &w.outcome {
        Outcome::NeedsAnswer {
            node,
            question,
            hint,
            reason,
            yes_label,
            no_label,
            can_be_unsure,
        } => {
            out.push(Para::new(""));
            let id = if app.details {
                format!("  [{node}]")
            } else {
                String::new()
            };
            out.push(Para::new(Line::from(vec![
                Span::styled(format!("? {question}"), theme.question()),
                Span::styled(id, theme.dim()),
            ])));
            if !hint.is_empty() {
                out.push(Para::new(format!(
                    "  {}",
                    words::prose(app.is_live(), &hint.0)
                )));
            }
            if !reason.to_string().is_empty() {
                out.push(Para::new(Line::from(Span::styled(
                    format!("  not automatic: {}", words::reason(app.is_live(), reason)),
                    theme.dim(),
                ))));
            }
            if let Some((class, _)) = app.diagnosis.asked_before(w) {
                let title = app
                    .kb
                    .class(class)
                    .map_or(class.to_string(), |c| c.def.title.clone());
                out.push(Para::new(Line::from(Span::styled(
                    format!("  The same question is open in “{title}”: one answer decides both."),
                    theme.dim(),
                ))));
            }
            let mut keys = format!("  y {yes_label}   n {no_label}");
            if *can_be_unsure {
                keys.push_str("   u not sure");
            }
            out.push(Para::new(Line::from(Span::styled(keys, theme.accent()))));
        }
        Outcome::Concluded { conclusion } => {
            out.push(Para::new(""));
            match app.finding_of(w) {
                Some(f) => finding(&mut out, app, f, theme),
                None => out.push(Para::new(format!("concluded: {conclusion}"))),
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

fn finding<'a>(out: &mut Vec<Para<'a>>, app: &'a App, f: &'a crate::engine::Finding, theme: Theme) {
    let id = if app.details {
        format!("  [{}]", f.id)
    } else {
        String::new()
    };
    out.push(Para::new(Line::from(vec![
        Span::styled(
            format!("{} {} ", finding_mark(f), state_word(f).to_uppercase()),
            theme.severity(f.severity),
        ),
        Span::styled(words::prose(app.is_live(), &f.title.0), theme.title()),
        Span::styled(id, theme.dim()),
    ])));
    // The claim (upstream) and the match (this host), apart.
    out.push(Para::new(Line::from(Span::styled(
        format!("  {}", words::claim(f, app.details)),
        theme.accent(),
    ))));
    for node in &f.answered {
        out.push(Para::new(Line::from(Span::styled(
            format!(
                "  rests on your answer to “{}”",
                words::question_of(&app.kb, node)
            ),
            theme.question(),
        ))));
    }
    if !f.remedies.is_empty() {
        out.push(Para::new(""));
        out.push(Para::new(Line::from(Span::styled(
            "Remedies, cheapest first (Enter or a click: choose one for the plan):",
            theme.title(),
        ))));
    }
    let in_plan = app.plan_choice(f);
    for (i, r) in f.remedies.iter().enumerate() {
        remedy_line(out, app, i, r, in_plan.as_deref(), theme);
    }
    if !f.evidence.is_empty() {
        out.push(Para::new(Line::from(Span::styled(
            "Evidence:",
            theme.title(),
        ))));
    }
    for e in &f.evidence {
        out.push(Para::new(format!(
            "  • {}",
            crate::report::plain_unset(&words::prose(app.is_live(), &e.0))
        )));
    }
    for d in &f.run_differs {
        out.push(Para::new(Line::from(Span::styled(
            format!(
                "  ≠ the log's run used {} {}; this host has {} ({} line {}): the log was made elsewhere or before an upgrade",
                crate::engine::log_env::what_words(d.what),
                d.in_log,
                d.on_host,
                words::log_name(&d.file),
                d.line
            ),
            theme.severity(Severity::Warning),
        ))));
    }
    for m in f.log_lines.iter().take(3) {
        out.push(Para::new(Line::from(Span::styled(
            format!(
                "  log {} line {}: {}",
                words::log_name(&m.file),
                m.line,
                m.text.trim()
            ),
            theme.used(),
        ))));
    }
    for d in &f.does_not_fix {
        out.push(Para::new(Line::from(Span::styled(
            format!("  does not fix: {d}"),
            theme.severity(Severity::Warning),
        ))));
    }
    for c in &f.contradictions {
        out.push(Para::new(Line::from(Span::styled(
            format!("  sources disagree: {c}"),
            theme.dim(),
        ))));
    }
    if !f.sources.is_empty() {
        out.push(Para::new(Line::from(Span::styled(
            format!("  sources: {}", f.sources.join(", ")),
            theme.dim(),
        ))));
    }
}

/// One remedy of the current finding: "▶ 1. title — CONFIRMED  [in plan]" and its cost; a
/// click picks it.
pub(crate) fn remedy_line<'a>(
    out: &mut Vec<Para<'a>>,
    app: &App,
    i: usize,
    r: &'a crate::engine::RemedyView,
    in_plan: Option<&str>,
    theme: Theme,
) {
    let sel = i == app.remedy_idx;
    let id = if app.details {
        format!(" ({})", r.id)
    } else {
        String::new()
    };
    let head = format!(
        "{} {}. {}{id} — {}{}",
        if sel { "▶" } else { " " },
        i + 1,
        r.title,
        r.confidence.as_str(),
        if in_plan == Some(r.id.as_str()) {
            "  [in plan]"
        } else {
            ""
        }
    );
    out.push(
        Para::new(Line::from(Span::styled(
            head,
            if sel { theme.selected() } else { theme.title() },
        )))
        .indent(5)
        .target(Target::Remedy(i)),
    );
    out.push(
        Para::new(format!("     cost: {}", r.cost))
            .indent(11)
            .target(Target::Remedy(i)),
    );
}

/// The P2P probe's result (cached lines), or how to run it.
pub(crate) fn p2p_section<'a>(out: &mut Vec<Para<'a>>, app: &'a App, theme: Theme) {
    out.push(Para::new(""));
    let how = if app.can_probe_p2p() {
        " (P: run it on this host)"
    } else if !app.snapshot.origin.is_live() {
        " (P works on the live host only)"
    } else {
        ""
    };
    out.push(Para::new(Line::from(vec![
        Span::styled("P2P probe", theme.title()),
        Span::styled(how, theme.dim()),
    ])));
    if app.p2p_lines.is_empty() {
        out.push(Para::new(
            "  not run: write, read back and compare every GPU pair (about a second)",
        ));
    }
    for l in &app.p2p_lines {
        out.push(Para::new(format!("  {l}")));
    }
}

/// The probe's result (cached lines), or how to run it.
pub(crate) fn probe_section<'a>(out: &mut Vec<Para<'a>>, app: &'a App, theme: Theme) {
    out.push(Para::new(""));
    let how = if app.can_probe() {
        " (p: run it on this host)"
    } else if !app.snapshot.origin.is_live() {
        " (p works on the live host only)"
    } else {
        ""
    };
    out.push(Para::new(Line::from(vec![
        Span::styled("Allocator/IPC probe", theme.title()),
        Span::styled(how, theme.dim()),
    ])));
    for l in &app.probe_lines {
        out.push(Para::new(format!("  {l}")));
    }
}

/// Draw the class bar in `fixed` and the walk from its scroll offset in `area`; returns
/// (first row shown, rows in all).
pub fn render(
    frame: &mut Frame,
    fixed: Rect,
    area: Rect,
    app: &App,
    theme: Theme,
) -> (usize, usize) {
    frame.render_widget(
        Paragraph::new(crate::tui::view::text::safe_lines(bar(
            app,
            theme,
            fixed.width,
        ))),
        fixed,
    );
    crate::tui::view::text::render_rows(
        frame,
        area,
        paras(app, theme),
        app.scroll.get(crate::tui::state::Pane::Walk),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::state::Pane;
    use crate::tui::state::action::Action;

    fn walk_text(app: &App) -> Vec<String> {
        text::wrap(paras(app, Theme::new(false)), 200)
            .iter()
            .map(|r| r.line.to_string())
            .collect()
    }

    #[test]
    fn breadcrumb_ends_in_the_conclusion() {
        let app = App::demo();
        let w = app.current_walk().expect("walk");
        let b = breadcrumb(&app, w);
        assert!(b.contains(" → ✗ "), "{b}");
        assert!(b.starts_with(&w.steps[0].node), "{b}");
    }

    #[test]
    fn ids_show_only_with_details() {
        let mut app = App::demo();
        let plain = walk_text(&app).join("\n");
        assert!(!plain.contains("aipc_crash_seen"), "{plain}");
        assert!(!plain.contains("car_invalid_argument"), "{plain}");
        assert!(!plain.contains("(drop_expandable_segments)"), "{plain}");
        app.update(Action::ToggleDetails);
        let detailed = walk_text(&app).join("\n");
        assert!(detailed.contains("Path: aipc_crash_seen → "), "{detailed}");
        assert!(
            detailed.contains("log(car_invalid_argument) = yes"),
            "{detailed}"
        );
    }

    #[test]
    fn the_class_bar_never_splits_a_mark_from_its_name() {
        let mut app = App::demo();
        app.update(Action::ToggleDetails);
        for width in [30u16, 42, 57, 78] {
            let chips = chips(&app, width);
            assert!(
                chips.iter().all(|c| c.x + c.width <= width || c.x == 0),
                "{width}"
            );
            let lines: Vec<String> = bar(&app, Theme::new(false), width)
                .iter()
                .map(|l| l.to_string())
                .collect();
            for w in &app.diagnosis.walks {
                let unit = format!("{} {}", walk_mark(&app, w), w.class);
                assert!(
                    lines.iter().any(|l| l.contains(&unit)),
                    "{width}: {unit} in {lines:?}"
                );
            }
        }
    }

    #[test]
    fn the_walk_scrolls_to_its_end_and_no_further() {
        let mut app = App::demo();
        app.update(Action::Resize(80, 24));
        app.update(Action::ShowPane(Pane::Walk));
        for _ in 0..50 {
            app.update(Action::Scroll(crate::tui::state::ScrollBy::Pages(1)));
        }
        let r = app.regions();
        let total = app.pane_rows(usize::from(r.rows.width)).len();
        assert_eq!(
            app.scroll.get(Pane::Walk),
            total - usize::from(r.rows.height),
            "the last page ends at the last row"
        );
        app.update(Action::Scroll(crate::tui::state::ScrollBy::Top));
        assert_eq!(app.scroll.get(Pane::Walk), 0);
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
            let has = walk_text(&app)
                .iter()
                .any(|l| l.starts_with("Allocator/IPC probe"));
            assert_eq!(has, class == probe_class, "{class}");
            seen += usize::from(has);
        }
        assert_eq!(seen, 1, "shown for exactly one walk");
    }
}
