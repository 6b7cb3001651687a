//! The one keymap layer: keys → [`Action`]. The footer is built from [`bindings`], the same
//! table [`map_key`] reads, so the hints shown are exactly the keys that work on this screen.

use super::action::Action;
use super::app::App;
use super::preview::PreviewBody;
use super::state::{EditTarget, Overlay, Pane, PromptPurpose, Screen};
use crate::engine::{Answer, Outcome};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// One key binding: the key, how the footer shows it (empty: hidden alias), what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub key: KeyCode,
    pub ctrl: bool,
    pub shown: &'static str,
    pub label: String,
    pub action: Action,
}

fn b(key: KeyCode, shown: &'static str, label: &str, action: Action) -> Binding {
    Binding {
        key,
        ctrl: false,
        shown,
        label: label.to_string(),
        action,
    }
}

fn ctrl(c: char, shown: &'static str, label: &str, action: Action) -> Binding {
    Binding {
        key: KeyCode::Char(c),
        ctrl: true,
        shown,
        label: label.to_string(),
        action,
    }
}

/// The keys valid right now, in footer order.
pub fn bindings(app: &App) -> Vec<Binding> {
    let mut v = Vec::new();
    match &app.overlay {
        Some(Overlay::Help) => {
            v.push(b(KeyCode::Esc, "Esc", "close help", Action::Close));
            v.push(b(KeyCode::Char('?'), "", "close help", Action::Close));
            v.push(b(KeyCode::Char('q'), "q", "quit", Action::Quit));
            return v;
        }
        Some(Overlay::Prompt(p)) => {
            v.push(b(KeyCode::Enter, "Enter", "ok", Action::PromptSubmit));
            v.push(b(KeyCode::Esc, "Esc", "cancel", Action::Close));
            if p.purpose == PromptPurpose::Export {
                v.push(b(KeyCode::Tab, "Tab", "format", Action::ToggleFormat));
            }
            v.push(ctrl('u', "^U", "clear path", Action::PromptClear));
            v.push(b(KeyCode::Backspace, "", "", Action::PromptBackspace));
            return v;
        }
        Some(Overlay::Confirm { .. }) => {
            v.push(b(KeyCode::Char('y'), "y", "overwrite", Action::ConfirmYes));
            v.push(b(
                KeyCode::Char('n'),
                "n",
                "keep the file",
                Action::ConfirmNo,
            ));
            v.push(b(KeyCode::Esc, "", "", Action::ConfirmNo));
            return v;
        }
        None => {}
    }
    if let Some(target) = app.editing {
        let what = match target {
            EditTarget::Log => "done editing the log",
            EditTarget::Launch => "done editing the command",
        };
        v.push(b(KeyCode::Esc, "Esc", what, Action::Close));
        return v;
    }
    if app.screen == Screen::Collecting {
        v.push(b(KeyCode::Char('q'), "q", "quit", Action::Quit));
        v.push(b(KeyCode::Char('?'), "?", "help", Action::ToggleHelp));
        return v;
    }
    if app.screen == Screen::NoHost {
        v.push(b(
            KeyCode::Char('d'),
            "d",
            "open the demo",
            Action::LoadDemo,
        ));
        if app.can_probe() {
            v.push(b(KeyCode::Char('p'), "p", "probe IPC", Action::RunProbe));
        }
        if app.can_probe_p2p() {
            v.push(b(KeyCode::Char('P'), "P", "probe P2P", Action::RunP2pProbe));
        }
        v.push(b(KeyCode::Char('?'), "?", "help", Action::ToggleHelp));
        v.push(b(KeyCode::Char('q'), "q", "quit", Action::Quit));
        return v;
    }
    v.push(b(KeyCode::Char('q'), "q", "quit", Action::Quit));
    v.push(b(KeyCode::Char('?'), "?", "help", Action::ToggleHelp));
    v.push(b(KeyCode::Tab, "Tab", "next pane", Action::NextPane));
    v.push(b(KeyCode::Char('1'), "", "", Action::ShowPane(Pane::Walk)));
    v.push(b(KeyCode::Char('2'), "", "", Action::ShowPane(Pane::Log)));
    v.push(b(
        KeyCode::Char('3'),
        "",
        "",
        Action::ShowPane(Pane::Remedy),
    ));
    match app.pane {
        Pane::Walk => {
            if app.diagnosis.walks.len() > 1 {
                v.push(b(KeyCode::Right, "←/→", "class", Action::NextClass));
                v.push(b(KeyCode::Left, "", "", Action::PrevClass));
            }
            if let Some(w) = app.current_walk()
                && let Outcome::NeedsAnswer {
                    yes_label,
                    no_label,
                    can_be_unsure,
                    ..
                } = &w.outcome
            {
                v.push(b(
                    KeyCode::Char('y'),
                    "y",
                    yes_label,
                    Action::Answer(Answer::Yes),
                ));
                v.push(b(
                    KeyCode::Char('n'),
                    "n",
                    no_label,
                    Action::Answer(Answer::No),
                ));
                if *can_be_unsure {
                    v.push(b(
                        KeyCode::Char('u'),
                        "u",
                        "not sure",
                        Action::Answer(Answer::Unsure),
                    ));
                }
            }
            if !app.answer_order.is_empty() {
                v.push(b(KeyCode::Char('b'), "b", "undo answer", Action::Undo));
            }
            if app.current_remedies().len() > 1 {
                v.push(b(KeyCode::Down, "↑/↓", "remedy", Action::SelectNext));
                v.push(b(KeyCode::Up, "", "", Action::SelectPrev));
            }
            if !app.current_remedies().is_empty() {
                v.push(b(
                    KeyCode::Enter,
                    "Enter",
                    "use in plan",
                    Action::PickRemedy,
                ));
            }
            v.push(b(
                KeyCode::PageDown,
                "PgDn/PgUp",
                "scroll",
                Action::ScrollDown,
            ));
            v.push(b(KeyCode::PageUp, "", "", Action::ScrollUp));
            if app.can_probe() {
                v.push(b(KeyCode::Char('p'), "p", "probe IPC", Action::RunProbe));
            }
            if app.can_probe_p2p() {
                v.push(b(KeyCode::Char('P'), "P", "probe P2P", Action::RunP2pProbe));
            }
            if app.offers_onboarding() {
                v.push(b(
                    KeyCode::Char('c'),
                    "c",
                    "checklist",
                    Action::StartOnboarding,
                ));
            }
        }
        Pane::Log => {
            v.push(b(KeyCode::Char('i'), "i", "type/paste", Action::StartEdit));
            v.push(b(KeyCode::Char('o'), "o", "open file", Action::OpenLoadLog));
            if !app.pasted_is_empty() {
                v.push(b(
                    KeyCode::Char('x'),
                    "x",
                    "clear pasted",
                    Action::ClearPasted,
                ));
            }
            v.push(b(
                KeyCode::PageDown,
                "PgDn/PgUp",
                "scroll",
                Action::ScrollDown,
            ));
            v.push(b(KeyCode::PageUp, "", "", Action::ScrollUp));
        }
        Pane::Remedy => {
            if app.current_remedies().len() > 1 {
                v.push(b(KeyCode::Down, "↑/↓", "remedy", Action::SelectNext));
                v.push(b(KeyCode::Up, "", "", Action::SelectPrev));
                v.push(b(
                    KeyCode::Enter,
                    "Enter",
                    "use in plan",
                    Action::PickRemedy,
                ));
            }
            v.push(b(
                KeyCode::Char('i'),
                "i",
                "edit command",
                Action::StartEdit,
            ));
            let what = match app.preview.as_ref() {
                Some(p) if p.script.is_some() => "write script",
                Some(p) if matches!(&p.body, PreviewBody::Launch { diff, .. } if !diff.is_empty()) => {
                    "write plan"
                }
                _ => "write command",
            };
            v.push(b(KeyCode::Char('w'), "w", what, Action::OpenWriteLaunch));
            if app.preview.is_some() {
                v.push(b(
                    KeyCode::PageDown,
                    "",
                    "scroll (see ? help)",
                    Action::ScrollDown,
                ));
                v.push(b(KeyCode::PageUp, "", "", Action::ScrollUp));
            }
        }
    }
    v.push(b(KeyCode::Char('e'), "e", "export", Action::OpenExport));
    v
}

/// Map a key press to an action on the current screen. Unknown keys map to nothing.
pub fn map_key(app: &App, key: KeyEvent) -> Option<Action> {
    if key.kind != KeyEventKind::Press {
        return None;
    }
    let is_ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if is_ctrl && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    for bind in bindings(app) {
        if bind.key == key.code && bind.ctrl == is_ctrl {
            return Some(bind.action);
        }
    }
    if app.editing.is_some() {
        return Some(Action::EditKey(key));
    }
    if let (Some(Overlay::Prompt(_)), KeyCode::Char(c)) = (&app.overlay, key.code)
        && !is_ctrl
    {
        return Some(Action::PromptChar(c));
    }
    None
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
            Some(Action::Quit)
        );
        // The demo walk concluded: no answer keys are offered or accepted.
        assert_eq!(map_key(&app, key(KeyCode::Char('y'))), None);
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
