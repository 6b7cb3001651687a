//! The dialogs: the log search, the path prompts (export, write, load), the overwrite
//! question, and copying the fix.

use super::*;

impl App {
    pub(super) fn open_search(&mut self) {
        let input = self
            .search
            .as_ref()
            .map(|s| s.query.clone())
            .unwrap_or_default();
        self.overlay = Some(Overlay::Search { input });
    }

    pub(super) fn search_char(&mut self, c: char) {
        if let Some(Overlay::Search { input }) = &mut self.overlay {
            input.push(c);
        }
    }

    pub(super) fn search_backspace(&mut self) {
        if let Some(Overlay::Search { input }) = &mut self.overlay {
            input.pop();
        }
    }

    pub(super) fn search_submit(&mut self) {
        if let Some(Overlay::Search { input }) = self.overlay.take() {
            self.run_search(input);
        }
    }

    pub(super) fn copy_fix(&mut self) -> Vec<Effect> {
        match self.fix_text() {
            Some(text) => {
                let lines = text.lines().count();
                return vec![Effect::Copy {
                    text,
                    what: format!(
                        "the fix ({lines} line{})",
                        if lines == 1 { "" } else { "s" }
                    ),
                }];
            }
            None => {
                self.status = "nothing to copy: the plan has no fix for this host yet".into();
            }
        }
        Vec::new()
    }

    pub(super) fn open_export(&mut self) {
        self.overlay = Some(Overlay::Prompt(Prompt {
            purpose: PromptPurpose::Export,
            input: self.export_format.default_path().into(),
            format: self.export_format,
            suggested: true,
        }))
    }

    pub(super) fn open_write_launch(&mut self) -> Vec<Effect> {
        let path = match self.preview.as_ref().and_then(|p| p.writable()) {
            Some(w) => w.path,
            None if !self.launch_is_empty() => "sm120-doctor-launch.sh",
            None => {
                self.status = format!(
                    "nothing to write: no launch command yet ({}, then i: type or paste yours) and no fix that needs a file",
                    Pane::Remedy.key()
                ).into();
                return Vec::new();
            }
        };
        self.overlay = Some(Overlay::Prompt(Prompt {
            purpose: PromptPurpose::WriteLaunch,
            input: path.into(),
            format: self.export_format,
            suggested: true,
        }));
        Vec::new()
    }

    pub(super) fn open_load_log(&mut self) {
        self.overlay = Some(Overlay::Prompt(Prompt {
            purpose: PromptPurpose::LoadLog,
            input: String::new(),
            format: self.export_format,
            suggested: false,
        }))
    }

    pub(super) fn toggle_format(&mut self) {
        if let Some(Overlay::Prompt(p)) = &mut self.overlay {
            let next = p.format.next();
            if p.input == p.format.default_path() {
                p.input = next.default_path().into();
                p.suggested = true;
            }
            p.format = next;
            self.export_format = next;
        }
    }

    pub(super) fn prompt_char(&mut self, c: char) {
        if let Some(Overlay::Prompt(p)) = &mut self.overlay {
            if p.suggested {
                p.input.clear();
                p.suggested = false;
            }
            p.input.push(c);
        }
    }

    pub(super) fn prompt_backspace(&mut self) {
        if let Some(Overlay::Prompt(p)) = &mut self.overlay {
            if p.suggested {
                p.input.clear();
                p.suggested = false;
            } else {
                p.input.pop();
            }
        }
    }

    pub(super) fn prompt_clear(&mut self) {
        if let Some(Overlay::Prompt(p)) = &mut self.overlay {
            p.input.clear();
            p.suggested = false;
        }
    }

    pub(super) fn confirm_yes(&mut self) -> Vec<Effect> {
        if let Some(Overlay::Confirm { pending, .. }) = self.overlay.take() {
            return vec![Effect::overwrite(pending)];
        }
        Vec::new()
    }

    pub(super) fn confirm_no(&mut self) {
        if let Some(Overlay::Confirm { .. }) = self.overlay.take() {
            self.status = "kept the existing file; nothing was written".into();
        }
    }

    pub(super) fn submit_prompt(&mut self) -> Vec<Effect> {
        let Some(Overlay::Prompt(p)) = &self.overlay else {
            return Vec::new();
        };
        let input = p.input.trim().to_string();
        if input.is_empty() {
            self.status = "give a path first".into();
            return Vec::new();
        }
        let path = PathBuf::from(input);
        let effect = match p.purpose {
            PromptPurpose::Export => Effect::Export {
                format: p.format,
                path,
                overwrite: false,
            },
            PromptPurpose::WriteLaunch => {
                let (text, what) = match self.preview.as_ref().and_then(|p| p.writable()) {
                    Some(w) => (w.text.to_string(), w.what),
                    None if !self.launch_is_empty() => {
                        let text = self.launch_text();
                        let what = FileWhat::launch(&text);
                        (text, what)
                    }
                    None => {
                        self.overlay = None;
                        self.status = "nothing to write: the launch command is empty".into();
                        return Vec::new();
                    }
                };
                Effect::WriteLaunch {
                    path,
                    text,
                    what,
                    overwrite: false,
                }
            }
            PromptPurpose::LoadLog => Effect::LoadLog { path },
        };
        self.overlay = None;
        vec![effect]
    }
}
