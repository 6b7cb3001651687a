//! The Summary: the first screen when there is a finding. Every finding ranked (most severe
//! first) with its claim and its match on this host, how many questions are answered, the
//! combined fix from the plan with the key that copies it, and the host in one line. The open
//! questions are listed each once: a question two walks share (the same check) is one entry
//! with the walks its answer decides.

use crate::kb::schema::Severity;
use crate::tui::state::app::App;
use crate::tui::state::preview::PreviewBody;
use crate::tui::state::{Pane, Target};
use crate::tui::view::text::Para;
use crate::tui::view::theme::{Theme, finding_mark};
use ratatui::text::{Line, Span};

/// "✗ 1 error · ! 1 warning · i 2 info · ✓ 5 passed · ○ 2 not checked · – 1 does not apply".
pub fn counts(app: &App) -> String {
    use crate::engine::CheckState;
    let d = &app.diagnosis;
    let n = |s: Severity| {
        d.findings
            .iter()
            .filter(|f| f.severity == s && f.state == CheckState::Problem)
            .count()
    };
    let na = d.count(CheckState::NotApplicable);
    let plural = |k: usize, one: &str, many: &str| {
        if k == 1 {
            format!("{k} {one}")
        } else {
            format!("{k} {many}")
        }
    };
    format!(
        "✗ {} · ! {} · i {} info · ✓ {} passed · ○ {} not checked · – {na} {}",
        plural(n(Severity::Error), "error", "errors"),
        plural(n(Severity::Warning), "warning", "warnings"),
        n(Severity::Info),
        d.count(CheckState::Passed),
        d.count(CheckState::NotChecked),
        if na == 1 {
            "does not apply"
        } else {
            "do not apply"
        }
    )
}

/// "4 of 9 answered · 5 open (2: the walk asks them)", or that none needs an answer.
pub fn questions(app: &App) -> String {
    let (answered, open) = app.question_counts();
    let total = answered + open;
    if total == 0 {
        return "no question needs an answer from you".into();
    }
    let mut s = format!("{answered} of {total} answered");
    if open > 0 {
        s.push_str(&format!(
            " · {open} open ({}: the walk asks {})",
            Pane::Walk.key(),
            if open == 1 { "it" } else { "them" }
        ));
    }
    s
}

pub fn paras<'a>(app: &'a App, theme: Theme) -> Vec<Para<'a>> {
    let mut out: Vec<Para> = Vec::new();
    out.push(Para::new(Line::from(Span::styled(
        counts(app),
        theme.title(),
    ))));
    out.push(Para::new(Line::from(vec![
        Span::styled("Questions: ", theme.dim()),
        Span::styled(questions(app), theme.question()),
    ])));
    open_questions(&mut out, app, theme);
    checklist(&mut out, app, theme);
    let ranked = app.summary_findings();
    let severity = |k: usize| app.diagnosis.findings[ranked[k].finding].severity;
    let problems: Vec<usize> = (0..ranked.len())
        .filter(|&k| severity(k) >= Severity::Warning)
        .collect();
    if ranked.is_empty() {
        out.push(Para::new("No finding yet."));
    } else if problems.is_empty() {
        let unchecked = app.diagnosis.count(crate::engine::CheckState::NotChecked);
        let head = if app.diagnosis.undetermined() {
            // The log shows neither a failure nor the run coming up: no verdict to give.
            format!(
                "Cannot tell whether the run worked: the log shows neither a failure nor the run coming up; {unchecked} not checked (Enter or a click opens a walk):"
            )
        } else if unchecked == 0 {
            "No problem found (Enter or a click opens a walk):".to_string()
        } else {
            format!(
                "No problem found in what was checked; {unchecked} not checked (Enter or a click opens a walk):"
            )
        };
        out.push(Para::new(Line::from(Span::styled(head, theme.title()))));
    } else {
        out.push(Para::new(Line::from(Span::styled(
            "Findings, most severe first (Enter or a click opens the walk):",
            theme.title(),
        ))));
    }
    for &k in &problems {
        finding(&mut out, app, k, theme);
    }
    fix_section(&mut out, app, theme);
    let rest: Vec<usize> = (0..ranked.len())
        .filter(|k| !problems.contains(k))
        .collect();
    if !rest.is_empty() {
        out.push(Para::new(""));
        out.push(Para::new(Line::from(Span::styled(
            "Also checked (info, passed, not checked, does not apply):",
            theme.dim(),
        ))));
    }
    for k in rest {
        finding(&mut out, app, k, theme);
    }
    out.push(Para::new(""));
    out.push(Para::new(Line::from(vec![
        Span::styled("Host: ", theme.dim()),
        Span::raw(crate::report::check::host_line(&app.snapshot)),
    ])));
    out
}

/// What one open question decides: the walks that wait at it (its own first), each once.
pub struct OpenQuestion<'a> {
    pub question: &'a str,
    /// The first walk that asks it (a click opens it).
    pub walk: usize,
    /// Every walk one answer decides: (class, node), the asking walk first.
    pub decides: Vec<(&'a str, &'a str)>,
}

/// The open questions, each once (see [`crate::engine::Diagnosis::open_questions`]).
pub(crate) fn open_question_list(app: &App) -> Vec<OpenQuestion<'_>> {
    let d = &app.diagnosis;
    d.open_questions()
        .filter_map(|w| {
            let crate::engine::Outcome::NeedsAnswer { node, question, .. } = &w.outcome else {
                return None;
            };
            let walk = d.walks.iter().position(|x| std::ptr::eq(x, w))?;
            let mut decides = vec![(w.class.as_str(), node.as_str())];
            for (n, other) in crate::report::check::shared_with(d, w) {
                if !decides.contains(&(other.class.as_str(), n)) {
                    decides.push((other.class.as_str(), n));
                }
            }
            Some(OpenQuestion {
                question,
                walk,
                decides,
            })
        })
        .collect()
}

/// The open questions under the count line, each once with the walks its answer decides.
fn open_questions<'a>(out: &mut Vec<Para<'a>>, app: &'a App, theme: Theme) {
    for q in open_question_list(app) {
        let title = |class: &str| {
            app.kb
                .class(class)
                .map_or(class.to_string(), |c| c.def.title.clone())
        };
        let decides = if app.details {
            let ids: Vec<String> = q.decides.iter().map(|(c, n)| format!("{c}:{n}")).collect();
            format!("  [{}]", ids.join(", "))
        } else if q.decides.len() > 1 {
            let titles: Vec<String> = q.decides.iter().map(|(c, _)| title(c)).collect();
            format!(
                "  (one answer decides {} walks: {})",
                q.decides.len(),
                titles.join("; ")
            )
        } else {
            String::new()
        };
        out.push(
            Para::new(Line::from(vec![
                Span::styled(format!("  ? {}", q.question), theme.question()),
                Span::styled(decides, theme.dim()),
            ]))
            .indent(4)
            .target(Target::Finding(q.walk)),
        );
    }
}

/// The onboarding checklist in one block: the counts, then each open item by number and title
/// (a click opens it), with the key that walks to the next one.
fn checklist<'a>(out: &mut Vec<Para<'a>>, app: &'a App, theme: Theme) {
    let (done, failed, open) = app.checklist_counts();
    if done + failed + open == 0 {
        return;
    }
    out.push(Para::new(Line::from(vec![
        Span::styled("Onboarding checklist: ", theme.dim()),
        Span::styled(
            format!("{done} done · {failed} failed · {open} open"),
            theme.question(),
        ),
        Span::styled(
            if open > 0 {
                " (O: the next open item)"
            } else {
                ""
            },
            theme.dim(),
        ),
    ])));
    let walks = &app.diagnosis.walks;
    for (i, w) in walks.iter().enumerate() {
        if !app.is_checklist(w) || app.item_state(w) != crate::tui::state::app::ItemState::Open {
            continue;
        }
        let label = crate::tui::state::words::item_label(&app.kb, walks, w);
        out.push(
            Para::new(Line::from(Span::styled(
                format!("  ○ {label}"),
                theme.question(),
            )))
            .indent(4)
            .target(Target::Finding(i)),
        );
    }
}

/// One ranked finding: its mark and title (a click opens its walk); for a problem, the claim
/// and the match on this host below.
fn finding<'a>(out: &mut Vec<Para<'a>>, app: &'a App, k: usize, theme: Theme) {
    let r = app.summary_findings()[k];
    let f = &app.diagnosis.findings[r.finding];
    let sel = k == app.summary_idx;
    let problem = f.severity >= Severity::Warning;
    let head_style = if sel {
        theme.selected()
    } else if f.severity > Severity::Ok {
        theme.severity(f.severity)
    } else {
        theme.dim()
    };
    let id = if app.details {
        format!("  [{} · {}]", f.class, f.id)
    } else {
        String::new()
    };
    out.push(
        Para::new(Line::from(vec![
            Span::styled(
                format!(
                    "{} {:>2} {} ",
                    if sel { "▶" } else { " " },
                    k + 1,
                    finding_mark(f)
                ),
                head_style,
            ),
            Span::styled(
                crate::tui::state::words::prose(app.is_live(), &f.title.0),
                if problem { theme.title() } else { theme.dim() },
            ),
            Span::styled(id, theme.dim()),
        ]))
        .indent(7)
        .target(Target::Finding(r.walk)),
    );
    if problem {
        out.push(
            Para::new(Line::from(Span::styled(
                format!("       {}", crate::tui::state::words::claim(f, app.details)),
                theme.accent(),
            )))
            .indent(7)
            .target(Target::Finding(r.walk)),
        );
    }
}

/// The combined fix: what to run, and the keys that copy or write it.
fn fix_section<'a>(out: &mut Vec<Para<'a>>, app: &'a App, theme: Theme) {
    let Some(p) = &app.preview else {
        return;
    };
    out.push(Para::new(""));
    if p.plan.chosen.is_empty() {
        // A problem with no remedy (a failure the tool does not know) is not "nothing to do".
        let unremedied = app
            .diagnosis
            .findings
            .iter()
            .any(|f| f.severity >= Severity::Warning);
        let said = if unremedied {
            "The fix: none known for the findings above; see each finding's next step."
        } else {
            "The fix: nothing to change (no finding at warning or above)."
        };
        out.push(Para::new(Line::from(Span::styled(said, theme.title()))));
        return;
    }
    out.push(Para::new(Line::from(vec![
        Span::styled("The fix", theme.title()),
        Span::styled(
            format!(
                " (one remedy per finding; c copies, w writes, {} explains):",
                Pane::Remedy.key()
            ),
            theme.dim(),
        ),
    ])));
    for s in &p.plan.scripts {
        out.push(Para::new(Line::from(Span::styled(
            format!("  {}", s.command),
            theme.used(),
        ))));
    }
    match &p.body {
        PreviewBody::Launch { patched, diff } if !diff.is_empty() => {
            for l in patched.lines() {
                out.push(
                    Para::new(Line::from(Span::styled(format!("  {l}"), theme.used()))).indent(6),
                );
            }
        }
        PreviewBody::Launch { .. } => out.push(Para::new(Line::from(Span::styled(
            "  your launch command needs no change",
            theme.dim(),
        )))),
        PreviewBody::Error(e) => out.push(Para::new(Line::from(Span::styled(
            format!("  {e}"),
            theme.dim(),
        )))),
    }
    for s in &p.plan.steps {
        out.push(Para::new(format!("  step: {s}")));
    }
    // A SUSPECTED remedy in the fix is a guess; mark it where the fix is read and copied.
    for c in &p.plan.chosen {
        let suspected = app
            .diagnosis
            .findings
            .iter()
            .flat_map(|f| f.remedies.iter())
            .any(|r| r.id == c.remedy && r.confidence == crate::kb::schema::Confidence::Suspected);
        if suspected {
            out.push(
                Para::new(Line::from(Span::styled(
                    format!(
                        "  likely — not confirmed: {} (SUSPECTED; {} lists the confirmed ones)",
                        c.title,
                        Pane::Remedy.key()
                    ),
                    theme.accent(),
                )))
                .indent(4),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::view::text::wrap;

    fn text(app: &App) -> String {
        wrap(paras(app, Theme::new(false)), 100)
            .iter()
            .map(|r| r.line.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_demo_summary_ranks_findings_and_shows_the_fix() {
        let app = App::demo();
        assert_eq!(app.pane, Pane::Summary, "the first screen with a finding");
        let t = text(&app);
        assert!(
            // The P2P probe did not run: not checked, not a pass.
            t.starts_with(
                "✗ 1 error · ! 1 warning · i 2 info · ✓ 13 passed · ○ 1 not checked · – 2 do not apply"
            ),
            "{t}"
        );
        assert!(
            t.contains("Questions: no question needs an answer from you"),
            "{t}"
        );
        assert!(t.contains("▶  1 ✗ Custom all-reduce crashed"), "{t}");
        assert!(t.contains("known cause · from your log"), "{t}");
        assert!(t.contains("  export PYTORCH_CUDA_ALLOC_CONF=''"), "{t}");
        assert!(!t.contains("allocator_ipc"), "ids only with details: {t}");
    }

    #[test]
    fn the_demo_fix_is_the_confirmed_remedy_and_a_picked_guess_is_marked() {
        let mut app = App::demo();
        let t = text(&app);
        assert!(t.contains("export VLLM_USE_DEEP_GEMM=0"), "{t}");
        assert!(!t.contains("VLLM_DEEP_GEMM_WARMUP=skip"), "{t}");
        assert!(!t.contains("likely — not confirmed"), "{t}");
        let dg = app
            .diagnosis
            .findings
            .iter()
            .find(|f| f.class == "deepgemm_warmup")
            .expect("the demo's DeepGEMM finding")
            .id
            .clone();
        app.choices
            .per_finding
            .insert(dg, "deep_gemm_warmup_skip".into());
        app.refresh_preview();
        let t = text(&app);
        assert!(t.contains("VLLM_DEEP_GEMM_WARMUP=skip"), "{t}");
        assert!(
            t.contains("likely — not confirmed: Skip only the DeepGEMM warmup"),
            "{t}"
        );
    }

    #[test]
    fn questions_count_answered_of_all_and_shared_questions_once() {
        let mut app = demo_app_without_launch();
        let (answered, open) = app.question_counts();
        assert_eq!(answered, 0);
        // TP, FP8 (asked by two walks), DSA (two walks), and the rest once each.
        assert_eq!(open, app.diagnosis.pending().count() - 2);
        assert_eq!(
            questions(&app),
            format!("0 of {open} answered · {open} open (2: the walk asks them)")
        );
        app.update(crate::tui::state::action::Action::ShowPane(Pane::Walk));
        let first = app
            .diagnosis
            .walks
            .iter()
            .position(|w| matches!(w.outcome, crate::engine::Outcome::NeedsAnswer { .. }))
            .expect("a question");
        app.update(crate::tui::state::action::Action::ShowClass(first));
        app.update(crate::tui::state::action::Action::Answer(
            crate::engine::Answer::Yes,
        ));
        let (answered, _) = app.question_counts();
        assert_eq!(answered, 1);
        assert!(questions(&app).starts_with("1 of "), "{}", questions(&app));
    }

    /// The demo host with no launch given: its walks wait at several questions.
    #[test]
    fn a_log_that_shows_no_outcome_is_not_called_no_problem() {
        // A host with nothing wrong on it: the log alone decides the headline.
        let host = crate::input::resolve(&crate::input::InputArgs {
            snapshot: Some(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/kb/snapshots/sm120_ws2.yaml"),
            ),
            ..Default::default()
        })
        .expect("fixture host");
        let log = |text: &str| crate::engine::classify::LogText {
            name: "pasted".into(),
            text: text.into(),
        };
        let app = |text: &str| {
            App::new(
                host.kb.clone(),
                host.snapshot.clone(),
                vec![log(text)],
                Default::default(),
                crate::engine::Mode::Failures,
                crate::tui::state::Screen::Main,
            )
        };
        let cut = text(&app("starting the engine next\n"));
        assert!(
            cut.contains("Cannot tell whether the run worked: the log shows neither a failure nor the run coming up"),
            "{cut}"
        );
        assert!(!cut.contains("No problem found"), "{cut}");
        // The same host with a log that shows the server up: no problem found.
        let up = text(&app("INFO:     Application startup complete.\n"));
        assert!(up.contains("No problem found"), "{up}");
        assert!(!up.contains("Cannot tell"), "{up}");
    }

    fn demo_app_without_launch() -> App {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let mut snap = crate::import::demo_snapshot();
        snap.launch = crate::snapshot::Probed::missing(crate::snapshot::Input::Launch);
        App::new(
            kb,
            snap,
            Vec::new(),
            Default::default(),
            crate::engine::Mode::Failures,
            crate::tui::state::Screen::Main,
        )
    }

    #[test]
    fn a_shared_question_is_listed_once_with_the_walks_it_decides() {
        let app = demo_app_without_launch();
        let list = open_question_list(&app);
        let (_, open) = app.question_counts();
        assert_eq!(list.len(), open);
        let mut questions: Vec<&str> = list.iter().map(|q| q.question).collect();
        questions.sort_unstable();
        questions.dedup();
        assert_eq!(questions.len(), list.len(), "each question once");
        let fp8 = list
            .iter()
            .find(|q| q.decides.iter().any(|(_, n)| *n == "fp8_model"))
            .expect("the FP8 question is open");
        assert_eq!(
            fp8.decides,
            [
                ("deepgemm_warmup", "dg_fp8_model"),
                ("fp8_tuning", "fp8_model")
            ]
        );
        let t = text(&app);
        assert_eq!(t.matches(fp8.question).count(), 1, "{t}");
        assert!(t.contains("one answer decides 2 walks"), "{t}");
    }
}
