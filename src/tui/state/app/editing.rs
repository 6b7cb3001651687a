//! Editing: the pasted log and the launch editor, and where a paste goes.

use super::*;
use ratatui::crossterm::event::KeyEvent;

impl App {
    pub(super) fn close(&mut self) {
        if let Some(target) = self.editing.take() {
            match target {
                EditTarget::Log => {
                    self.unsaved.pasted = !self.pasted_is_empty();
                    self.after_log_change("log edited", Some(PASTED));
                }
                EditTarget::Launch => self.cancel_launch_edit(),
            }
        } else {
            self.overlay = None;
        }
    }

    pub(super) fn apply_edit(&mut self) -> Vec<Effect> {
        match self.editing {
            Some(EditTarget::Launch) => self.apply_launch_edit(),
            Some(EditTarget::Log) => return self.update(Action::Control(act::Control::Close)),
            None => {}
        }
        Vec::new()
    }

    pub(super) fn start_edit(&mut self) {
        self.editing = match self.pane {
            Pane::Log => Some(EditTarget::Log),
            Pane::Remedy => {
                self.launch_before_edit = Some(self.launch_editor.lines().to_vec());
                // At the end of the text: what is typed is added after the user's
                // arguments, never before the command.
                self.launch_editor.move_cursor(CursorMove::Bottom);
                self.launch_editor.move_cursor(CursorMove::End);
                Some(EditTarget::Launch)
            }
            Pane::Walk | Pane::Summary => None,
        }
    }

    pub(super) fn edit_key(&mut self, key: KeyEvent) {
        match self.editing {
            Some(EditTarget::Log) => {
                self.pasted.input(key);
            }
            Some(EditTarget::Launch) => {
                self.launch_editor.input(key);
            }
            None => {}
        }
    }

    pub(super) fn clear_pasted(&mut self) {
        // Kept for `u`: one key must not lose a long paste for good.
        self.cleared_paste = Some(self.pasted_text());
        self.pasted.select_all();
        self.pasted.cut();
        self.unsaved.pasted = false;
        self.after_log_change("pasted log cleared", None);
        // Stay where `u` works, and say so.
        self.pane = Pane::Log;
        self.status = "pasted log cleared; the walk was re-run — u puts it back".into();
    }

    pub(super) fn restore_pasted(&mut self) {
        if let Some(text) = self.cleared_paste.take() {
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            self.pasted.select_all();
            self.pasted.cut();
            self.pasted.insert_str(lines.join("\n"));
            self.unsaved.pasted = !self.pasted_is_empty();
            self.after_log_change("pasted log put back", Some(PASTED));
        }
    }

    /// A paste (bracketed, or a burst the input thread read as one): into the editor being edited, into an open prompt (as one line of
    /// text), else a log — on the main screen, and on the no-host screen too, which then opens
    /// the main screen with the log read on no host.
    pub(super) fn paste(&mut self, text: String) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        match (&self.editing, &mut self.overlay) {
            (Some(EditTarget::Launch), _) => {
                self.launch_editor.insert_str(&text);
            }
            (Some(EditTarget::Log), _) => {
                self.pasted.insert_str(&text);
            }
            (None, Some(Overlay::Prompt(p))) => {
                let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
                if lines > 1 {
                    // A path is one line: several are most likely a log pasted too early.
                    self.status = format!(
                        "not a path: the paste has {lines} lines; the name is unchanged (Esc closes this, then paste the log)"
                    ).into();
                    return;
                }
                let line = text.trim().to_string();
                if p.suggested {
                    p.input.clear();
                    p.suggested = false;
                }
                p.input.push_str(&line);
            }
            (None, Some(Overlay::Search { input })) => {
                input.push_str(&text.trim().replace('\n', " "));
            }
            (None, Some(_)) => {
                self.status = "close this dialog first (Esc), then paste".into();
            }
            (None, None) if self.screen == Screen::Collecting => {
                self.status =
                    "still reading this host: paste the log again once the walk is shown".into();
            }
            (None, None) if self.pane == Pane::Remedy && reads_as_launch(&text) => {
                // On the launch's own pane a paste that parses as a launch is the launch the
                // user means, not a log: open the editor with it, so Enter takes it and Esc
                // keeps the old one.
                self.launch_before_edit = Some(self.launch_editor.lines().to_vec());
                let lines: Vec<String> = text.trim_end().lines().map(str::to_string).collect();
                self.launch_editor = editor_of(lines, LAUNCH_PLACEHOLDER);
                self.launch_editor.move_cursor(CursorMove::Bottom);
                self.launch_editor.move_cursor(CursorMove::End);
                self.editing = Some(EditTarget::Launch);
                self.status = "the paste reads as a launch: Enter uses it, Esc keeps yours (paste on 3 for a log)".into();
            }
            (None, None) => {
                let no_host = self.screen == Screen::NoHost;
                if no_host {
                    self.screen = Screen::Main;
                }
                self.pasted.move_cursor(CursorMove::Bottom);
                self.pasted.move_cursor(CursorMove::End);
                if !self.pasted_is_empty() {
                    self.pasted.insert_newline();
                }
                self.pasted.insert_str(text.trim_end_matches('\n'));
                self.unsaved.pasted = true;
                let lines = text.lines().count();
                let what = if no_host {
                    format!(
                        "pasted {} line(s), read without a host (no NVIDIA driver here)",
                        crate::tui::state::words::thousands(lines)
                    )
                } else {
                    format!(
                        "pasted {} line(s)",
                        crate::tui::state::words::thousands(lines)
                    )
                };
                self.after_log_change(&what, Some(PASTED));
            }
        }
    }

    /// Enter in the launch editor: read the text as the launch, unless a flag stands where a
    /// command belongs (then the editor stays open and the status says why).
    pub(super) fn apply_launch_edit(&mut self) {
        let text = self.launch_text();
        if let Some((line, flag)) = crate::launch::flag_as_command(&text) {
            self.status = Status::error(format_args!(
                "not applied: line {line} starts with the flag {flag}, where a command belongs (bash would try to run it); flags go after `vllm serve MODEL` — fix it, or Esc to cancel"
            ));
            return;
        }
        self.editing = None;
        self.launch_before_edit = None;
        self.launch_editor.move_cursor(CursorMove::Top);
        self.launch_editor.move_cursor(CursorMove::Head);
        self.launch_edited();
    }

    /// Esc or Ctrl-C in the launch editor: the text as it was before `i`; nothing re-run.
    pub(super) fn cancel_launch_edit(&mut self) {
        self.editing = None;
        if let Some(lines) = self.launch_before_edit.take() {
            self.launch_editor = editor_of(lines, LAUNCH_PLACEHOLDER);
        }
        self.status = "edit cancelled: the launch command is unchanged".into();
    }

    pub(super) fn launch_edited(&mut self) {
        let text = self.launch_text();
        let before = self
            .snapshot
            .launch
            .value()
            .map_or("", |l| l.raw.trim_end());
        if before != text.trim_end() {
            self.unsaved.launch = true;
        }
        if text.trim().is_empty() {
            self.snapshot.launch = Probed::missing(crate::snapshot::Input::Launch);
            self.launch_error = None;
            let dropped = self.input_changed();
            self.status = format!("launch command cleared{dropped}").into();
            return;
        }
        match crate::launch::parse_launch(&text) {
            Ok(mut l) => {
                l.source = TYPED_LAUNCH.into();
                self.snapshot.launch = Probed::Value(l);
                self.launch_error = None;
                let dropped = self.input_changed();
                self.status = format!("launch command parsed; the walk was re-run{dropped}").into();
            }
            Err(e) => {
                self.launch_error = Some(e.to_string());
                self.refresh_preview();
                self.status = Status::error(format_args!("launch command: {e}"));
            }
        }
    }
}
