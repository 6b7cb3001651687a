//! Read-only questions about the state, for the view, the keymap and the handlers.

use super::*;

impl App {
    /// How one checklist item stands: done (passed, info, does not apply), failed (a finding
    /// at warning or above), or open (a question waits, or an input is missing).
    pub(crate) fn item_state(&self, walk: &Walk) -> ItemState {
        match self.finding_of(walk) {
            None => ItemState::Open,
            Some(f) if f.severity >= Severity::Warning => ItemState::Failed,
            Some(f) if f.state == crate::engine::CheckState::NotChecked => ItemState::Open,
            Some(_) => ItemState::Done,
        }
    }

    /// (done, failed, open) over the checklist's items; all zero without the checklist.
    pub(crate) fn checklist_counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for w in self.diagnosis.walks.iter().filter(|w| self.is_checklist(w)) {
            match self.item_state(w) {
                ItemState::Done => c.0 += 1,
                ItemState::Failed => c.1 += 1,
                ItemState::Open => c.2 += 1,
            }
        }
        c
    }

    /// The next open checklist item after the current walk (wrapping), else the first item
    /// when none is open; `None` without the checklist.
    pub(crate) fn next_open_item(&self) -> Option<usize> {
        let walks = &self.diagnosis.walks;
        let items: Vec<usize> = (0..walks.len())
            .filter(|&i| self.is_checklist(&walks[i]))
            .collect();
        let first = *items.first()?;
        let open: Vec<usize> = items
            .iter()
            .copied()
            .filter(|&i| self.item_state(&walks[i]) == ItemState::Open)
            .collect();
        let on_item = items.contains(&self.walk_idx) && self.pane == Pane::Walk;
        Some(
            open.iter()
                .copied()
                .find(|&i| !on_item || i > self.walk_idx)
                .or_else(|| open.first().copied())
                .unwrap_or(first),
        )
    }

    /// The Summary when there is a finding to rank, else the Walk (where the questions are).
    pub(super) fn first_pane(&self) -> Pane {
        if self
            .diagnosis
            .findings
            .iter()
            .any(|f| f.severity > Severity::Ok)
        {
            Pane::Summary
        } else {
            Pane::Walk
        }
    }

    /// With no failure found (nothing at warning or above, no question open, no log), the
    /// onboarding checklist is the useful next step, so the walk offers it.
    pub fn offers_onboarding(&self) -> bool {
        self.mode == Mode::Failures
            && self.screen == Screen::Main
            && !self.collecting.any()
            && self.logs().is_empty()
            && self.diagnosis.pending().next().is_none()
            && self.diagnosis.worst() < Severity::Warning
    }

    /// The walk belongs to a checklist class (the onboarding checklist), by the class's kind in
    /// the knowledge base, not its name.
    pub(crate) fn is_checklist(&self, walk: &Walk) -> bool {
        words::is_checklist(&self.kb, walk)
    }

    /// The host is this machine (read live), not a recording or the demo.
    pub fn is_live(&self) -> bool {
        self.snapshot.origin.is_live()
    }

    /// The probe measures this machine, so it is offered only for the live host.
    pub fn can_probe(&self) -> bool {
        self.snapshot.origin.is_live() && !self.probe_running && !self.collecting.host
    }

    /// The P2P probe likewise: the live host, once it is read, one run at a time.
    pub fn can_probe_p2p(&self) -> bool {
        self.snapshot.origin.is_live() && !self.p2p_running && !self.collecting.host
    }

    /// The fix plan for the current diagnosis and picks.
    pub fn plan(&self) -> plan::Plan {
        plan::for_findings(&self.kb, &self.diagnosis, &self.snapshot, &self.choices)
    }

    /// The remedy the plan uses for a finding (picked, else the cheapest at warning or above).
    pub(crate) fn plan_choice(&self, f: &Finding) -> Option<String> {
        plan::choice_for(f, &self.choices).map(|(r, _)| r.id.clone())
    }

    /// The combined fix as text to paste into a shell (`c` copies it), if there is one.
    pub fn fix_text(&self) -> Option<String> {
        self.preview.as_ref().and_then(Preview::fix_text)
    }

    /// How the footer names what `w` writes.
    pub(crate) fn write_label(&self) -> &'static str {
        match self.preview.as_ref().and_then(|p| p.writable()) {
            Some(w) if w.what == FileWhat::PatchScript => "write script",
            Some(_) => "write fix",
            None if !self.launch_is_empty() => "write command",
            None => "write",
        }
    }

    pub fn current_walk(&self) -> Option<&Walk> {
        self.diagnosis.walks.get(self.walk_idx)
    }

    /// The finding the current walk concluded with, if it concluded.
    pub(crate) fn finding_of(&self, walk: &Walk) -> Option<&Finding> {
        match &walk.outcome {
            Outcome::Concluded { conclusion } => self
                .diagnosis
                .findings
                .iter()
                .find(|f| f.class == walk.class && f.id == *conclusion),
            Outcome::NeedsAnswer { .. } => None,
        }
    }

    pub fn current_finding(&self) -> Option<&Finding> {
        self.current_walk().and_then(|w| self.finding_of(w))
    }

    pub fn current_remedies(&self) -> &[RemedyView] {
        self.current_finding()
            .map(|f| f.remedies.as_slice())
            .unwrap_or(&[])
    }

    pub(crate) fn picked_remedy(&self) -> Option<&RemedyView> {
        let id = self.picked.as_deref()?;
        self.diagnosis
            .findings
            .iter()
            .flat_map(|f| f.remedies.iter())
            .find(|r| r.id == id)
    }

    /// The findings as the Summary ranks them (most severe first), each with its walk.
    pub(crate) fn summary_findings(&self) -> Vec<Ranked> {
        self.diagnosis
            .findings
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let walk = self.diagnosis.walks.iter().position(|w| {
                    w.class == f.class
                        && matches!(&w.outcome, Outcome::Concluded { conclusion } if *conclusion == f.id)
                })?;
                Some(Ranked { finding: i, walk })
            })
            .collect()
    }

    /// Questions answered by the user in the current walks, and questions still open (each
    /// once): "4 of 9 answered".
    pub(crate) fn question_counts(&self) -> (usize, usize) {
        let mut answered: Vec<&str> = self
            .diagnosis
            .walks
            .iter()
            .flat_map(|w| &w.steps)
            .filter(|s| matches!(s.by, engine::AnsweredBy::User))
            .map(|s| s.node.as_str())
            .collect();
        answered.sort_unstable();
        answered.dedup();
        (answered.len(), self.diagnosis.open_questions().count())
    }

    pub fn pasted_text(&self) -> String {
        self.pasted.lines().join("\n")
    }

    pub fn pasted_is_empty(&self) -> bool {
        self.pasted.lines().iter().all(|l| l.is_empty())
    }

    pub fn launch_text(&self) -> String {
        let mut t = self.launch_editor.lines().join("\n");
        t.push('\n');
        t
    }

    pub(super) fn launch_is_empty(&self) -> bool {
        self.launch_editor
            .lines()
            .iter()
            .all(|l| l.trim().is_empty())
    }

    /// Every log the engine sees: the files, then the pasted text.
    pub fn logs(&self) -> &[LogText] {
        &self.logs_cache
    }
}
