//! The one keymap layer: keys → [`Action`]. The footer is built from [`bindings`], the same
//! table [`map_key`] reads, so the hints shown are exactly the keys that work on this screen.
//! Each binding has a priority: when the footer is narrow, hints lose their labels (`e export`
//! → `e`) from the least important up, then the least important vanish; priority 0 (`q ? e w`
//! on the main screen) never does.

use crate::engine::{Answer, Outcome};
use crate::tui::state::action::{Action, Choice, Control, Edit, Nav, Probe, Prompt, Search};
use crate::tui::state::app::App;
use crate::tui::state::{EditTarget, Overlay, Pane, PromptPurpose, Screen, ScrollBy};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// One key binding: the key, how the footer shows it (empty: hidden alias), what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub key: KeyCode,
    pub ctrl: bool,
    pub shown: &'static str,
    pub label: String,
    pub action: Action,
    /// 0: always shown; higher: shortened and dropped first when the footer is narrow.
    pub prio: u8,
}

fn b(key: KeyCode, shown: &'static str, label: &str, action: impl Into<Action>) -> Binding {
    Binding {
        key,
        ctrl: false,
        shown,
        label: label.to_string(),
        action: action.into(),
        prio: 3,
    }
}

fn hidden(key: KeyCode, action: impl Into<Action>) -> Binding {
    b(key, "", "", action)
}

fn ctrl(c: char, shown: &'static str, label: &str, action: impl Into<Action>) -> Binding {
    Binding {
        key: KeyCode::Char(c),
        ctrl: true,
        shown,
        label: label.to_string(),
        action: action.into(),
        prio: 3,
    }
}

impl Binding {
    fn prio(mut self, p: u8) -> Binding {
        self.prio = p;
        self
    }
}

/// Line-wise, page-wise, top and bottom: the keys every scrolling pane takes, shown as one
/// hint. Where ↑/↓ choose (Summary, Remedy), only the page keys scroll.
fn scroll_keys(v: &mut Vec<Binding>, arrows: bool) {
    if arrows {
        v.push(
            b(
                KeyCode::Down,
                "↑/↓ PgDn g/G",
                "scroll",
                Nav::Scroll(ScrollBy::Lines(1)),
            )
            .prio(6),
        );
        v.push(hidden(KeyCode::Up, Nav::Scroll(ScrollBy::Lines(-1))));
        v.push(hidden(KeyCode::PageDown, Nav::Scroll(ScrollBy::Pages(1))));
    } else {
        v.push(
            b(
                KeyCode::PageDown,
                "PgDn g/G",
                "scroll",
                Nav::Scroll(ScrollBy::Pages(1)),
            )
            .prio(6),
        );
    }
    v.push(hidden(KeyCode::PageUp, Nav::Scroll(ScrollBy::Pages(-1))));
    v.push(hidden(KeyCode::Char('g'), Nav::Scroll(ScrollBy::Top)));
    v.push(hidden(KeyCode::Char('G'), Nav::Scroll(ScrollBy::Bottom)));
    v.push(hidden(KeyCode::Home, Nav::Scroll(ScrollBy::Top)));
    v.push(hidden(KeyCode::End, Nav::Scroll(ScrollBy::Bottom)));
}

/// The keys valid right now, in footer order.
pub fn bindings(app: &App) -> Vec<Binding> {
    let mut v = Vec::new();
    if overlay_keys(app, &mut v) || editing_keys(app, &mut v) || screen_keys(app, &mut v) {
        return v;
    }
    v.push(b(KeyCode::Char('q'), "q", "quit", Control::Quit).prio(0));
    v.push(b(KeyCode::Char('?'), "?", "help", Control::ToggleHelp).prio(0));
    for p in Pane::ALL {
        v.push(hidden(KeyCode::Char(p.key()), Nav::ShowPane(p)));
    }
    match app.pane {
        Pane::Summary => summary_keys(app, &mut v),
        Pane::Walk => walk_keys(app, &mut v),
        Pane::Log => log_keys(app, &mut v),
        Pane::Remedy => remedy_keys(app, &mut v),
    }
    main_keys(app, &mut v);
    v
}

/// The keys of an open overlay; `false` when none is open (the screen's keys apply).
fn overlay_keys(app: &App, v: &mut Vec<Binding>) -> bool {
    match &app.overlay {
        Some(Overlay::Help) => {
            v.push(b(KeyCode::Esc, "Esc", "close help", Control::Close));
            v.push(hidden(KeyCode::Char('?'), Control::Close));
            v.push(b(KeyCode::Char('q'), "q", "quit", Control::Quit));
            v.push(b(
                KeyCode::Down,
                "↑/↓ PgDn g/G",
                "scroll",
                Control::HelpScroll(ScrollBy::Lines(1)),
            ));
            v.push(hidden(
                KeyCode::Up,
                Control::HelpScroll(ScrollBy::Lines(-1)),
            ));
            v.push(hidden(
                KeyCode::PageDown,
                Control::HelpScroll(ScrollBy::Pages(1)),
            ));
            v.push(hidden(
                KeyCode::PageUp,
                Control::HelpScroll(ScrollBy::Pages(-1)),
            ));
            v.push(hidden(
                KeyCode::Char('g'),
                Control::HelpScroll(ScrollBy::Top),
            ));
            v.push(hidden(
                KeyCode::Char('G'),
                Control::HelpScroll(ScrollBy::Bottom),
            ));
            v.push(hidden(KeyCode::Home, Control::HelpScroll(ScrollBy::Top)));
            v.push(hidden(KeyCode::End, Control::HelpScroll(ScrollBy::Bottom)));
            true
        }
        Some(Overlay::Prompt(p)) => {
            v.push(b(KeyCode::Enter, "Enter", "ok", Prompt::Submit));
            v.push(b(KeyCode::Esc, "Esc", "cancel", Control::Close));
            if p.purpose == PromptPurpose::Export {
                v.push(b(KeyCode::Tab, "Tab", "format", Prompt::ToggleFormat));
            }
            v.push(ctrl('u', "^U", "clear path", Prompt::Clear));
            v.push(hidden(KeyCode::Backspace, Prompt::Backspace));
            true
        }
        Some(Overlay::Confirm { .. }) => {
            v.push(b(KeyCode::Char('y'), "y", "overwrite", Prompt::ConfirmYes));
            v.push(b(
                KeyCode::Char('n'),
                "n",
                "keep the file",
                Prompt::ConfirmNo,
            ));
            v.push(hidden(KeyCode::Esc, Prompt::ConfirmNo));
            true
        }
        Some(Overlay::ConfirmQuit { .. }) => {
            v.push(b(KeyCode::Char('q'), "q", "quit anyway", Control::QuitNow));
            v.push(b(
                KeyCode::Char('e'),
                "e",
                "export first",
                Prompt::OpenExport,
            ));
            v.push(b(KeyCode::Esc, "Esc", "stay", Control::Close));
            v.push(hidden(KeyCode::Char('n'), Control::Close));
            true
        }
        Some(Overlay::Search { .. }) => {
            v.push(b(KeyCode::Enter, "Enter", "search", Search::Submit));
            v.push(b(KeyCode::Esc, "Esc", "cancel", Control::Close));
            v.push(hidden(KeyCode::Backspace, Search::Backspace));
            true
        }
        None => false,
    }
}

/// The keys while an editor has them; `false` when nothing is being edited.
fn editing_keys(app: &App, v: &mut Vec<Binding>) -> bool {
    match app.editing {
        Some(EditTarget::Log) => {
            v.push(b(
                KeyCode::Esc,
                "Esc",
                "done editing the log",
                Control::Close,
            ));
            true
        }
        Some(EditTarget::Launch) => {
            v.push(b(KeyCode::Enter, "Enter", "apply", Edit::Apply));
            v.push(b(KeyCode::Esc, "Esc", "cancel", Control::Close));
            // Shown only (the Enter above comes first): map_key hands Alt-Enter to the
            // editor, which breaks the line.
            let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
            v.push(
                b(
                    KeyCode::Enter,
                    "Alt-Enter",
                    "new line",
                    Action::EditKey(alt_enter),
                )
                .prio(5),
            );
            true
        }
        None => false,
    }
}

/// The keys of the collecting and no-host screens; `false` on the main screen.
fn screen_keys(app: &App, v: &mut Vec<Binding>) -> bool {
    if app.screen == Screen::Collecting {
        v.push(b(KeyCode::Char('q'), "q", "quit", Control::Quit).prio(0));
        v.push(b(KeyCode::Char('?'), "?", "help", Control::ToggleHelp).prio(0));
        return true;
    }
    if app.screen == Screen::NoHost {
        v.push(b(KeyCode::Char('d'), "d", "open the demo", Control::LoadDemo).prio(0));
        if app.can_probe() {
            v.push(b(KeyCode::Char('p'), "p", "probe IPC", Probe::RunIpc));
        }
        if app.can_probe_p2p() {
            v.push(b(KeyCode::Char('P'), "P", "probe P2P", Probe::RunP2p));
        }
        v.push(b(KeyCode::Char('?'), "?", "help", Control::ToggleHelp).prio(0));
        v.push(b(KeyCode::Char('q'), "q", "quit", Control::Quit).prio(0));
        return true;
    }
    false
}

/// The Summary's keys: findings, and Enter opens one's walk.
fn summary_keys(app: &App, v: &mut Vec<Binding>) {
    if app.summary_findings().len() > 1 {
        v.push(b(KeyCode::Down, "↑/↓", "finding", Nav::NextFinding).prio(3));
        v.push(hidden(KeyCode::Up, Nav::PrevFinding));
    }
    if !app.summary_findings().is_empty() {
        v.push(b(KeyCode::Enter, "Enter", "its walk", Nav::OpenSelected).prio(3));
    }
    scroll_keys(v, false);
}

/// The Walk's keys: classes, the answers to the question asked, undo, choosing a remedy.
fn walk_keys(app: &App, v: &mut Vec<Binding>) {
    if app.diagnosis.walks.len() > 1 {
        v.push(b(KeyCode::Right, "←/→", "class", Nav::NextClass).prio(2));
        v.push(hidden(KeyCode::Left, Nav::PrevClass));
    }
    if let Some(w) = app.current_walk()
        && let Outcome::NeedsAnswer {
            yes_label,
            no_label,
            can_be_unsure,
            ..
        } = &w.outcome
    {
        v.push(
            b(
                KeyCode::Char('y'),
                "y",
                yes_label,
                Choice::Answer(Answer::Yes),
            )
            .prio(1),
        );
        v.push(
            b(
                KeyCode::Char('n'),
                "n",
                no_label,
                Choice::Answer(Answer::No),
            )
            .prio(1),
        );
        // Always taken: where "not sure" leads nowhere, `u` says so instead of
        // doing nothing.
        let u = b(
            KeyCode::Char('u'),
            "u",
            "not sure",
            Choice::Answer(Answer::Unsure),
        );
        v.push(if *can_be_unsure {
            u.prio(1)
        } else {
            Binding { shown: "", ..u }
        });
    }
    if !app.answer_order.is_empty() {
        v.push(b(KeyCode::Char('b'), "b", "undo answer", Choice::Undo).prio(2));
    }
    if !app.current_remedies().is_empty() {
        v.push(
            b(
                KeyCode::Enter,
                "Enter",
                "choose remedy",
                Choice::ChooseRemedy,
            )
            .prio(3),
        );
    }
    scroll_keys(v, true);
}

/// The Log's keys: search, matched lines, typing, opening and clearing logs.
fn log_keys(app: &App, v: &mut Vec<Binding>) {
    v.push(b(KeyCode::Char('/'), "/", "search", Search::Open).prio(2));
    if app.search.as_ref().is_some_and(|s| !s.hits.is_empty()) {
        v.push(b(KeyCode::Char('n'), "n/N", "next hit", Search::Next).prio(2));
        v.push(hidden(KeyCode::Char('N'), Search::Prev));
    }
    if !app.log_index.matched.is_empty() {
        v.push(b(KeyCode::Char(']'), "]/[", "matched line", Nav::NextMatch).prio(2));
        v.push(hidden(KeyCode::Char('['), Nav::PrevMatch));
    }
    v.push(b(KeyCode::Char('i'), "i", "type/paste", Edit::Start).prio(4));
    v.push(b(KeyCode::Char('o'), "o", "open file", Prompt::OpenLoadLog).prio(4));
    if !app.pasted_is_empty() {
        v.push(b(KeyCode::Char('x'), "x", "clear pasted", Edit::ClearPasted).prio(5));
    } else if app.cleared_paste.is_some() {
        v.push(b(KeyCode::Char('u'), "u", "undo clear", Edit::RestorePasted).prio(2));
    }
    scroll_keys(v, true);
}

/// The Remedy pane's keys: remedies, using one in the plan, editing the launch.
fn remedy_keys(app: &App, v: &mut Vec<Binding>) {
    if app.current_remedies().len() > 1 {
        v.push(b(KeyCode::Down, "↑/↓", "remedy", Nav::SelectNext).prio(2));
        v.push(hidden(KeyCode::Up, Nav::SelectPrev));
    }
    if !app.current_remedies().is_empty() {
        v.push(b(KeyCode::Enter, "Enter", "use in plan", Choice::PickRemedy).prio(2));
    }
    v.push(b(KeyCode::Char('i'), "i", "edit command", Edit::Start).prio(3));
    if app.diagnosis.walks.len() > 1 {
        v.push(b(KeyCode::Right, "←/→", "finding", Nav::NextClass).prio(5));
        v.push(hidden(KeyCode::Left, Nav::PrevClass));
    }
    scroll_keys(v, false);
}

/// The keys of the main screen on every pane: the probes, onboarding, copy, export, write,
/// panes and details.
fn main_keys(app: &App, v: &mut Vec<Binding>) {
    if app.can_probe() {
        v.push(b(KeyCode::Char('p'), "p", "probe IPC", Probe::RunIpc).prio(3));
    }
    if app.can_probe_p2p() {
        v.push(b(KeyCode::Char('P'), "P", "probe P2P", Probe::RunP2p).prio(3));
    }
    if !app.is_live() {
        // Not shown: the probes measure this machine, and a recording is another one; the key
        // says so instead of doing nothing.
        const WHY: &str = "p/P probe this machine's GPUs, not a recording or the demo: run `sm120-doctor probe ipc` / `probe p2p` on the host the recording came from";
        v.push(hidden(KeyCode::Char('p'), Action::Explain(WHY)));
        v.push(hidden(KeyCode::Char('P'), Action::Explain(WHY)));
    }
    // Always offered (issue 27): adds the checklist, or moves to its next open item.
    if app.screen == Screen::Main {
        let (label, prio) = if app.offers_onboarding() {
            ("checklist", 1)
        } else if app.mode == crate::engine::Mode::Failures {
            ("checklist", 4)
        } else {
            ("open item", 1)
        };
        v.push(b(KeyCode::Char('O'), "O", label, Choice::StartOnboarding).prio(prio));
    }
    if app.fix_text().is_some() {
        v.push(b(KeyCode::Char('c'), "c", "copy fix", Prompt::Copy).prio(1));
    }
    v.push(b(KeyCode::Char('e'), "e", "export", Prompt::OpenExport).prio(0));
    v.push(
        b(
            KeyCode::Char('w'),
            "w",
            app.write_label(),
            Prompt::OpenWriteLaunch,
        )
        .prio(0),
    );
    v.push(b(KeyCode::Tab, "Tab", "pane", Nav::NextPane).prio(4));
    v.push(hidden(KeyCode::BackTab, Nav::PrevPane));
    v.push(b(KeyCode::Char('D'), "D", "details", Control::ToggleDetails).prio(9));
}

/// Map a key press to an action on the current screen. Unknown keys map to nothing.
pub fn map_key(app: &App, key: KeyEvent) -> Option<Action> {
    if key.kind != KeyEventKind::Press {
        return None;
    }
    let is_ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let launch = app.editing == Some(EditTarget::Launch);
    if is_ctrl && key.code == KeyCode::Char('c') {
        // In the launch editor Ctrl-C cancels the edit: never a half-typed launch applied.
        return Some(Action::Control(if launch {
            Control::Close
        } else {
            Control::Interrupt
        }));
    }
    if launch && key.code == KeyCode::Enter && key.modifiers.contains(KeyModifiers::ALT) {
        return Some(Action::EditKey(key));
    }
    let binds = bindings(app);
    for bind in &binds {
        if bind.key == key.code && bind.ctrl == is_ctrl {
            return Some(bind.action.clone());
        }
    }
    if app.editing.is_some() {
        return Some(Action::EditKey(key));
    }
    // Vim's h/j/k/l are the arrows wherever no key of its own takes the letter (the walk's
    // `n` stays "no"); typed text in a prompt or search never gets here as a letter.
    if app.overlay.is_none() && !is_ctrl {
        let arrow = match key.code {
            KeyCode::Char('h') => Some(KeyCode::Left),
            KeyCode::Char('j') => Some(KeyCode::Down),
            KeyCode::Char('k') => Some(KeyCode::Up),
            KeyCode::Char('l') => Some(KeyCode::Right),
            _ => None,
        };
        if let Some(a) = arrow
            && let Some(bind) = binds.iter().find(|b| b.key == a && !b.ctrl)
        {
            return Some(bind.action.clone());
        }
    }
    match (&app.overlay, key.code) {
        (Some(Overlay::Prompt(_)), KeyCode::Char(c)) if !is_ctrl => Some(Prompt::Char(c).into()),
        (Some(Overlay::Search { .. }), KeyCode::Char(c)) if !is_ctrl => {
            Some(Search::Char(c).into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn every_shown_hint_maps_to_its_own_action() {
        let app = App::demo();
        for bind in bindings(&app) {
            let got = map_key(&app, key(bind.key));
            assert!(got.is_some(), "{:?} maps to nothing", bind.key);
        }
        assert_eq!(map_key(&app, key(KeyCode::Char('q'))), Some(Action::Quit));
        assert_eq!(
            map_key(
                &app,
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
            ),
            Some(Action::Interrupt)
        );
        // The demo walk concluded: no answer keys are offered or accepted.
        let mut app = app;
        app.update(Action::ShowPane(Pane::Walk));
        assert_eq!(map_key(&app, key(KeyCode::Char('y'))), None);
    }

    #[test]
    fn the_main_screen_always_offers_q_help_export_and_write() {
        let mut app = App::demo();
        for p in Pane::ALL {
            app.update(Action::ShowPane(p));
            let essential: Vec<&str> = bindings(&app)
                .iter()
                .filter(|b| b.prio == 0)
                .map(|b| b.shown)
                .collect();
            assert_eq!(essential, vec!["q", "?", "e", "w"], "{p:?}");
        }
    }

    #[test]
    fn prompt_takes_typed_characters() {
        let mut app = App::demo();
        app.update(Action::OpenExport);
        assert_eq!(
            map_key(&app, key(KeyCode::Char('q'))),
            Some(Action::PromptChar('q'))
        );
        assert_eq!(map_key(&app, key(KeyCode::Esc)), Some(Action::Close));
    }
}
