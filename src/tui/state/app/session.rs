//! Moving through the diagnosis: panes, classes, findings and remedies, answers and undo,
//! the onboarding checklist, the demo, help, details and quitting.

use super::*;

impl App {
    /// Quit, or ask first when quitting would lose work. An edit in progress is kept (as Esc
    /// would) and counts as work.
    pub(super) fn quit_or_ask(&mut self) {
        if matches!(self.overlay, Some(Overlay::ConfirmQuit { .. })) {
            self.quit = true;
            return;
        }
        if self.editing.is_some() {
            self.update(Action::Control(act::Control::Close));
        }
        if !self.unsaved.any() {
            self.quit = true;
            return;
        }
        self.overlay = Some(Overlay::ConfirmQuit {
            unsaved: self.unsaved.describe(),
        });
    }

    /// The next / previous pane (wrapping).
    pub(super) fn step_pane(&mut self, forward: bool) {
        let n = Pane::ALL.len();
        let i = self.pane.index();
        let j = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.pane = Pane::ALL[j];
    }

    /// The next / previous class (wrapping).
    pub(super) fn step_class(&mut self, forward: bool) {
        let n = self.diagnosis.walks.len();
        if n > 0 {
            self.set_walk(if forward {
                (self.walk_idx + 1) % n
            } else {
                (self.walk_idx + n - 1) % n
            });
        }
    }

    /// The next / previous remedy of the current finding (wrapping).
    pub(super) fn step_remedy(&mut self, forward: bool) {
        let n = self.current_remedies().len();
        if n > 0 {
            self.remedy_idx = if forward {
                (self.remedy_idx + 1) % n
            } else {
                (self.remedy_idx + n - 1) % n
            };
        }
    }

    /// The next / previous finding in the Summary (wrapping).
    pub(super) fn step_finding(&mut self, forward: bool) {
        let n = self.summary_findings().len();
        if n > 0 {
            self.summary_idx = if forward {
                (self.summary_idx + 1) % n
            } else {
                (self.summary_idx + n - 1) % n
            };
        }
    }

    pub(super) fn quit_now(&mut self) {
        self.quit = true
    }

    pub(super) fn toggle_help(&mut self) {
        self.help_scroll = 0;
        self.overlay = match self.overlay {
            Some(Overlay::Help) => None,
            _ => Some(Overlay::Help),
        }
    }

    pub(super) fn toggle_details(&mut self) {
        self.details = !self.details;
        self.status = if self.details {
            "details on: node, signature and remedy ids are shown (D hides them)".into()
        } else {
            "details off".into()
        };
    }

    pub(super) fn show_pane(&mut self, p: Pane) {
        self.pane = p
    }

    pub(super) fn show_class(&mut self, i: usize) {
        if i < self.diagnosis.walks.len() {
            self.set_walk(i);
        }
    }

    pub(super) fn open_walk(&mut self, i: usize) {
        if i < self.diagnosis.walks.len() {
            self.set_walk(i);
            self.pane = Pane::Walk;
            if let Some(k) = self.summary_findings().iter().position(|r| r.walk == i) {
                self.summary_idx = k;
            }
        }
    }

    pub(super) fn open_selected(&mut self) -> Vec<Effect> {
        if let Some(r) = self.summary_findings().get(self.summary_idx).copied() {
            return self.update(Action::Nav(act::Nav::OpenWalk(r.walk)));
        }
        Vec::new()
    }

    pub(super) fn answer(&mut self, a: Answer) -> Vec<Effect> {
        let (node, can_be_unsure) = match self.current_walk().map(|w| &w.outcome) {
            Some(Outcome::NeedsAnswer {
                node,
                can_be_unsure,
                ..
            }) => (node.clone(), *can_be_unsure),
            _ => return Vec::new(),
        };
        if a == Answer::Unsure && !can_be_unsure {
            self.status = "this question needs yes or no: “not sure” leads nowhere in this walk. If you cannot tell, leave it open (←/→: another class); the report lists open questions".into();
            return Vec::new();
        }
        self.answers.insert(node.clone(), a);
        self.answer_order.retain(|n| *n != node);
        self.answer_order.push(node.clone());
        self.unsaved.answers.insert(node.clone());
        self.rediagnose();
        let word = match a {
            Answer::Yes => "yes",
            Answer::No => "no",
            Answer::Unsure => "not sure",
        };
        self.status = format!("answered “{}”: {word}", words::question_of(&self.kb, &node)).into();
        Vec::new()
    }

    pub(super) fn start_onboarding(&mut self) -> Vec<Effect> {
        // `O`: add the checklist when it is not there yet, then go to the next open
        // item; offered always, so onboarding is one key from any screen.
        let added = !self.diagnosis.walks.iter().any(|w| self.is_checklist(w));
        if added {
            if self.mode == Mode::Failures {
                self.mode = Mode::All;
            }
            self.rediagnose();
        }
        let Some(i) = self.next_open_item() else {
            self.status = "no onboarding checklist in this knowledge base".into();
            return Vec::new();
        };
        self.set_walk(i);
        self.pane = Pane::Walk;
        let (done, failed, open) = self.checklist_counts();
        let item = self
            .current_walk()
            .map(|w| words::item_label(&self.kb, &self.diagnosis.walks, w))
            .unwrap_or_default();
        self.status = if added {
            format!(
                "onboarding checklist added: {} items · {item} (O: next open item)",
                done + failed + open
            )
        } else if open == 0 {
            format!("no open checklist item: {done} done, {failed} failed · {item}")
        } else {
            format!("{item} · {open} open (O: next open item)")
        }
        .into();
        Vec::new()
    }

    pub(super) fn undo(&mut self) {
        if let Some(node) = self.answer_order.pop() {
            self.answers.remove(&node);
            self.unsaved.answers.remove(&node);
            self.rediagnose();
            self.status = format!(
                "undid your answer to “{}”",
                words::question_of(&self.kb, &node)
            )
            .into();
        }
    }

    pub(super) fn pick_remedy_at(&mut self, i: usize) -> Vec<Effect> {
        if i < self.current_remedies().len() {
            self.remedy_idx = i;
            return self.update(Action::Choice(act::Choice::PickRemedy));
        }
        Vec::new()
    }

    pub(super) fn choose_remedy(&mut self) {
        if !self.current_remedies().is_empty() {
            self.pane = Pane::Remedy;
            self.scroll.set(Pane::Remedy, 0);
            self.status = "choose a remedy for this finding: ↑/↓, Enter uses it in the plan".into();
        }
    }

    pub(super) fn pick_remedy(&mut self) -> Vec<Effect> {
        let Some(f) = self.current_finding() else {
            return Vec::new();
        };
        if let Some(r) = f.remedies.get(self.remedy_idx) {
            let (finding, id, title) = (f.id.clone(), r.id.clone(), r.title.clone());
            let finding_title = crate::tui::state::words::prose(self.is_live(), &f.title.0);
            self.choices.per_finding.insert(finding, id.clone());
            self.picked = Some(id.clone());
            self.unsaved.picks = true;
            self.refresh_preview();
            self.pane = Pane::Remedy;
            // Show what the pick did: the plan, below the remedies.
            self.scroll_to_plan();
            let left_out = self
                .preview
                .as_ref()
                .and_then(|p| p.plan.left_out.iter().find(|l| l.remedy == id))
                .map(|l| format!(" — left out of the plan: {}", l.reason))
                .unwrap_or_default();
            let ids = if self.details {
                format!(" ({id})")
            } else {
                String::new()
            };
            self.status =
                format!("in the plan for “{finding_title}”: {title}{ids}{left_out}").into();
        }
        Vec::new()
    }

    pub(super) fn explain(&mut self, why: &'static str) {
        self.status = why.into()
    }

    pub(super) fn load_demo(&mut self) -> Vec<Effect> {
        let demo = App::demo();
        let keep = (self.color, self.size);
        *self = App {
            mode: self.mode,
            ..demo
        };
        (self.color, self.size) = keep;
        self.rediagnose();
        self.jump_to_matched_class();
        self.pane = self.first_pane();
        self.status = "opened the embedded demo (the vLLM #47266 reporter's host)".into();
        vec![Effect::StartRefresher]
    }
}
