//! The TUI's state: [`App`] (plain data; its field types live in [`crate::tui::state`]) and
//! [`App::update`], which turns an [`Action`] into a state change and a list of [`Effect`]s for
//! the loop to perform. Nothing here touches the terminal, the file system or a thread, so every
//! state change is testable by sending actions. Scrolling and mouse clicks need the screen's
//! size: the loop sends it ([`Action::Resize`]) and [`crate::tui::view::layout`] derives the same regions
//! the renderer draws.

use crate::engine::classify::LogText;
use crate::engine::plan::{self, Choices};
use crate::engine::{self, Answer, Answers, Diagnosis, Finding, Mode, Outcome, RemedyView, Walk};
use crate::input::{self, InputArgs};
use crate::kb::KnowledgeBase;
use crate::kb::schema::Severity;
use crate::snapshot::{HostSnapshot, Probed};
use crate::tui::state::action::{Action, Effect};
use crate::tui::state::logindex::{LogIndex, RowRef};
use crate::tui::state::preview::{self, Preview};
use crate::tui::state::probe;
use crate::tui::state::status::Status;
use crate::tui::state::words;
use crate::tui::state::{
    Collecting, EditTarget, ExportFormat, FileWhat, LiveInfo, Overlay, Pane, Prompt, PromptPurpose,
    Screen, Scroll, Search, Unsaved,
};
use ratatui::widgets::{Block, Borders};
use ratatui_textarea::{CursorMove, TextArea};
use std::path::PathBuf;

/// Name of the log the user pastes or types into the log pane (sources say "pasted in the TUI").
pub const PASTED: &str = engine::PASTED_LOG;

/// How facts name a launch typed or edited in the launch editor.
pub const TYPED_LAUNCH: &str = "typed in the TUI";

/// What a part of the live host shows until it has been read.
pub const COLLECTING: &str = "collecting…";

const COLLECTING_STATUS: &str =
    "collecting this host: NVML, the engine's environment, the Python stack…";

const ONBOARDING_OFFER: &str =
    "no failure found: press O to walk the onboarding checklist for a new workstation";

/// Screen size assumed until the loop reports the real one (tests draw at their own sizes).
pub const DEFAULT_SIZE: (u16, u16) = (120, 40);

pub struct App {
    pub kb: KnowledgeBase,
    pub snapshot: HostSnapshot,
    /// Logs given as files (command line or `o`).
    pub file_logs: Vec<LogText>,
    /// The pasted/typed log.
    pub pasted: TextArea<'static>,
    /// Every log the engine sees (the files, then the pasted text), rebuilt when one changes.
    logs_cache: Vec<LogText>,
    /// Where each line of `logs_cache` is and which matched (rebuilt with it).
    pub log_index: LogIndex,
    /// The log row jumped to last (search hit or matched line), marked in the pane.
    pub log_focus: Option<usize>,
    /// The log search, once run.
    pub search: Option<Search>,
    pub launch_editor: TextArea<'static>,
    /// The launch editor's lines when `i` opened it: Esc or Ctrl-C puts them back.
    launch_before_edit: Option<Vec<String>>,
    pub answers: Answers,
    /// Nodes answered in this session, oldest first (for undo).
    pub answer_order: Vec<String>,
    pub mode: Mode,
    pub diagnosis: Diagnosis,
    pub screen: Screen,
    /// Why there is no host (shown on the no-host screen).
    pub no_host_reason: String,
    pub pane: Pane,
    pub overlay: Option<Overlay>,
    pub editing: Option<EditTarget>,
    pub walk_idx: usize,
    pub remedy_idx: usize,
    /// The finding selected in the Summary (index into [`App::summary_findings`]).
    pub summary_idx: usize,
    /// The remedy picked last (in focus in the Remedy pane), by id.
    pub picked: Option<String>,
    /// The remedy picked for each finding; the others get their cheapest (warning and above).
    pub choices: Choices,
    /// Why the launch editor's text could not be read, when it could not.
    pub launch_error: Option<String>,
    /// Answers dropped because an input now decides their question (node, what the input
    /// says), shown in the walk until the inputs change again.
    pub dropped: Vec<(String, String)>,
    /// Scroll offset of each pane.
    pub scroll: Scroll,
    pub status: Status,
    pub live: LiveInfo,
    pub export_format: ExportFormat,
    /// The fix plan over the launch (recomputed when the diagnosis, a pick or the launch
    /// changes, never while drawing).
    pub preview: Option<Preview>,
    /// The allocator/IPC probe is running in the background.
    pub probe_running: bool,
    /// `snapshot.probe` as display lines (recomputed when it changes).
    pub probe_lines: Vec<String>,
    /// The functional P2P probe is running in the background.
    pub p2p_running: bool,
    /// `snapshot.p2p_probe` as display lines (recomputed when it changes).
    pub p2p_lines: Vec<String>,
    /// Parts of the live host still being read.
    pub collecting: Collecting,
    /// Node and signature ids shown (`D`).
    pub details: bool,
    /// The help's scroll offset (rows).
    pub help_scroll: usize,
    /// Work that quitting would lose (since the last export).
    pub unsaved: Unsaved,
    /// The pasted log `x` cleared last, for `u` to put back.
    pub cleared_paste: Option<String>,
    /// The terminal's size (columns, rows), for scrolling by a page and for mouse clicks.
    pub size: (u16, u16),
    /// Draw with colours (false under NO_COLOR).
    pub color: bool,
    pub quit: bool,
}

fn editor(title: &str, text: &str, placeholder: &str) -> TextArea<'static> {
    let lines: Vec<String> = if text.is_empty() {
        vec![String::new()]
    } else {
        text.lines().map(str::to_string).collect()
    };
    editor_of(title, lines, placeholder)
}

fn editor_of(title: &str, lines: Vec<String>, placeholder: &str) -> TextArea<'static> {
    let mut ta = TextArea::new(lines);
    ta.set_block(
        Block::default()
            .borders(Borders::ALL)
            .title(title.to_string()),
    );
    ta.set_placeholder_text(placeholder);
    ta
}

/// The launch editor's title when it is not being edited, and while it is.
pub const LAUNCH_TITLE: &str = " Your launch command, as given · i edits it ";
pub const LAUNCH_TITLE_EDITING: &str =
    " Editing your launch command · Enter applies · Esc cancels ";
const LAUNCH_PLACEHOLDER: &str = "type or paste your vllm serve command (i to edit)";

fn launch_editor(snapshot: &HostSnapshot) -> TextArea<'static> {
    let text = snapshot
        .launch
        .value()
        .map(|l| l.raw.trim_end().to_string())
        .unwrap_or_default();
    editor(LAUNCH_TITLE, &text, LAUNCH_PLACEHOLDER)
}

/// Does a paste read as a launch rather than a log? Its first command is `vllm`, `python`,
/// `docker`/`podman`, `uv`, an `export` or a `NAME=value` prefix, or it is a compose file,
/// manifest, Helm values or systemd unit; and the launch parser takes it. A log's first line
/// (a timestamp, a level, a process tag) is none of these, so a log never reads as a launch.
pub fn reads_as_launch(text: &str) -> bool {
    use crate::launch::{compose, k8s, systemd};
    let t = text.trim();
    if t.is_empty() || t.lines().count() > 200 {
        return false;
    }
    let structured = compose::looks_like_compose(t)
        || k8s::looks_like_manifest(t)
        || k8s::looks_like_helm_values(t)
        || systemd::looks_like_unit(t);
    let first_word = t
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default();
    let assignment = first_word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    });
    let shell = assignment
        || matches!(
            first_word,
            "vllm" | "python" | "python3" | "docker" | "podman" | "uv" | "export" | "exec"
        );
    (structured || shell) && crate::launch::parse_launch(t).is_ok()
}

/// How a checklist item stands (see [`App::item_state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemState {
    Done,
    Failed,
    Open,
}

/// A finding's place in the Summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranked {
    /// Index into `diagnosis.findings` (most severe first).
    pub finding: usize,
    /// The walk that reached it.
    pub walk: usize,
}

impl App {
    pub fn new(
        kb: KnowledgeBase,
        snapshot: HostSnapshot,
        logs: Vec<LogText>,
        answers: Answers,
        mode: Mode,
        screen: Screen,
    ) -> App {
        let diagnosis = engine::diagnose(&kb, &snapshot, &answers, &logs, mode);
        let launch_editor = launch_editor(&snapshot);
        let mut app = App {
            kb,
            snapshot,
            file_logs: logs,
            pasted: editor(
                " Pasted log · Esc when done ",
                "",
                "paste a log here (bracketed paste), Esc when done",
            ),
            logs_cache: Vec::new(),
            log_index: LogIndex::default(),
            log_focus: None,
            search: None,
            launch_editor,
            launch_before_edit: None,
            cleared_paste: None,
            answers,
            answer_order: Vec::new(),
            mode,
            diagnosis,
            screen,
            no_host_reason: String::new(),
            pane: Pane::Walk,
            overlay: None,
            editing: None,
            walk_idx: 0,
            remedy_idx: 0,
            summary_idx: 0,
            picked: None,
            choices: Choices::default(),
            launch_error: None,
            dropped: Vec::new(),
            scroll: Scroll::default(),
            status: Status::default(),
            live: LiveInfo::default(),
            export_format: ExportFormat::Markdown,
            preview: None,
            probe_running: false,
            probe_lines: Vec::new(),
            p2p_running: false,
            p2p_lines: Vec::new(),
            collecting: Collecting::default(),
            details: false,
            help_scroll: 0,
            unsaved: Unsaved::default(),
            size: DEFAULT_SIZE,
            color: true,
            quit: false,
        };
        app.refresh_logs();
        app.reindex_logs(None);
        app.probe_lines = probe::lines(&app.snapshot.probe, app.is_live());
        app.p2p_lines = probe::p2p_lines(&app.snapshot.p2p_probe, app.is_live());
        app.refresh_preview();
        app.jump_to_matched_class();
        app.pane = app.first_pane();
        if app.mode != Mode::Failures
            && let Some(i) = app.diagnosis.walks.iter().position(|w| app.is_checklist(w))
        {
            // `--onboard` asked for the checklist: open on its item 1, not 13 `→` away.
            app.set_walk(i);
            app.pane = Pane::Walk;
        }
        if app.offers_onboarding() {
            app.status = ONBOARDING_OFFER.into();
        }
        app
    }

    /// How one checklist item stands: done (passed, info, does not apply), failed (a finding
    /// at warning or above), or open (a question waits, or an input is missing).
    pub fn item_state(&self, walk: &Walk) -> ItemState {
        match self.finding_of(walk) {
            None => ItemState::Open,
            Some(f) if f.severity >= Severity::Warning => ItemState::Failed,
            Some(f) if f.state == crate::engine::CheckState::NotChecked => ItemState::Open,
            Some(_) => ItemState::Done,
        }
    }

    /// (done, failed, open) over the checklist's items; all zero without the checklist.
    pub fn checklist_counts(&self) -> (usize, usize, usize) {
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
    pub fn next_open_item(&self) -> Option<usize> {
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

    /// The live host, before it is read: the screen says "collecting…" and fills as
    /// [`Action::HostCollected`] and [`Action::PythonCollected`] arrive. `launch` is the user's.
    pub fn collecting(
        kb: KnowledgeBase,
        launch: Option<crate::snapshot::Launch>,
        logs: Vec<LogText>,
        answers: Answers,
        mode: Mode,
    ) -> App {
        let mut snapshot = HostSnapshot::empty("live", COLLECTING);
        crate::input::apply_launch(&mut snapshot, launch);
        let mut app = App::new(kb, snapshot, logs, answers, mode, Screen::Collecting);
        app.collecting = Collecting::ALL;
        app.status = COLLECTING_STATUS.into();
        app
    }

    /// The Summary when there is a finding to rank, else the Walk (where the questions are).
    fn first_pane(&self) -> Pane {
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
    pub fn is_checklist(&self, walk: &Walk) -> bool {
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

    /// Recompute the plan's preview (the combined command, its diff, the script in focus).
    pub(in crate::tui) fn refresh_preview(&mut self) {
        let plan = self.plan();
        self.preview = Some(preview::compute(
            &self.kb,
            &plan,
            self.picked.as_deref(),
            self.launch_error.as_deref(),
        ));
    }

    /// The remedy the plan uses for a finding (picked, else the cheapest at warning or above).
    pub fn plan_choice(&self, f: &Finding) -> Option<String> {
        plan::choice_for(f, &self.choices).map(|(r, _)| r.id.clone())
    }

    /// The combined fix as text to paste into a shell (`c` copies it), if there is one.
    pub fn fix_text(&self) -> Option<String> {
        self.preview.as_ref().and_then(Preview::fix_text)
    }

    /// How the footer names what `w` writes.
    pub fn write_label(&self) -> &'static str {
        match self.preview.as_ref().and_then(|p| p.writable()) {
            Some(w) if w.what == FileWhat::PatchScript => "write script",
            Some(_) => "write fix",
            None if !self.launch_is_empty() => "write command",
            None => "write",
        }
    }

    /// The embedded demo scenario (the #47266 reporter's host, launch and crash log).
    pub fn demo() -> App {
        let inputs = input::resolve(&InputArgs {
            demo: true,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("embedded demo is invalid (a build defect): {}", e.0));
        App::new(
            inputs.kb,
            inputs.snapshot,
            inputs.logs,
            inputs.answers,
            Mode::Failures,
            Screen::Main,
        )
    }

    pub fn current_walk(&self) -> Option<&Walk> {
        self.diagnosis.walks.get(self.walk_idx)
    }

    /// The finding the current walk concluded with, if it concluded.
    pub fn finding_of(&self, walk: &Walk) -> Option<&Finding> {
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

    pub fn picked_remedy(&self) -> Option<&RemedyView> {
        let id = self.picked.as_deref()?;
        self.diagnosis
            .findings
            .iter()
            .flat_map(|f| f.remedies.iter())
            .find(|r| r.id == id)
    }

    /// The findings as the Summary ranks them (most severe first), each with its walk.
    pub fn summary_findings(&self) -> Vec<Ranked> {
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
    pub fn question_counts(&self) -> (usize, usize) {
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

    fn launch_is_empty(&self) -> bool {
        self.launch_editor
            .lines()
            .iter()
            .all(|l| l.trim().is_empty())
    }

    /// Every log the engine sees: the files, then the pasted text.
    pub fn logs(&self) -> &[LogText] {
        &self.logs_cache
    }

    fn refresh_logs(&mut self) {
        let mut logs = self.file_logs.clone();
        if !self.pasted_is_empty() {
            logs.push(LogText {
                name: PASTED.into(),
                text: self.pasted_text(),
            });
        }
        self.logs_cache = logs;
    }

    /// Index the logs again; the log pane opens at the first matched line of `prefer` (the
    /// log just given), else of any log.
    fn reindex_logs(&mut self, prefer: Option<&str>) {
        self.log_index = LogIndex::build(&self.logs_cache, &self.diagnosis.classification);
        self.search = None;
        let first_of = |name: &str| {
            let c = &self.diagnosis.classification;
            self.log_index.matched.iter().copied().find(|&r| {
                c.matches
                    .iter()
                    .any(|m| m.file == name && self.row_is_line(r, name, m.line))
            })
        };
        let focus = prefer
            .and_then(first_of)
            .or_else(|| self.log_index.matched.first().copied());
        self.log_focus = focus;
        self.scroll
            .set(Pane::Log, focus.map_or(0, |r| r.saturating_sub(2)));
    }

    fn row_is_line(&self, row: usize, name: &str, line: usize) -> bool {
        match self.log_index.rows.get(row) {
            Some(RowRef::Line(i, n)) => {
                *n + 1 == line && self.logs_cache.get(*i).is_some_and(|l| l.name == name)
            }
            _ => false,
        }
    }

    /// Re-run the engine (pure and fast) after answers, logs or the launch changed. Answers to
    /// questions an input now decides are dropped (the input wins) and listed in `dropped`.
    fn rediagnose(&mut self) {
        let keep = self
            .current_walk()
            .map(|w| (w.class.clone(), w.start.clone()));
        self.diagnosis = engine::diagnose(
            &self.kb,
            &self.snapshot,
            &self.answers,
            &self.logs_cache,
            self.mode,
        );
        let decided: Vec<(String, String)> = self
            .diagnosis
            .answers_set_aside()
            .map(|(node, t)| {
                let note = if t.contradicted {
                    t.note.clone()
                } else {
                    format!(
                        "you answered {}; an input now says the same",
                        format!("{:?}", t.answer).to_lowercase()
                    )
                };
                (node.to_string(), note)
            })
            .collect();
        if !decided.is_empty() {
            for (node, _) in &decided {
                self.answers.remove(node);
                self.answer_order.retain(|n| n != node);
                self.unsaved.answers.remove(node);
            }
            self.dropped = decided;
            self.diagnosis = engine::diagnose(
                &self.kb,
                &self.snapshot,
                &self.answers,
                &self.logs_cache,
                self.mode,
            );
        }
        // Picks for findings that are gone no longer apply.
        let findings: Vec<String> = self
            .diagnosis
            .findings
            .iter()
            .map(|f| f.id.clone())
            .collect();
        self.choices.per_finding.retain(|f, _| findings.contains(f));
        self.refresh_preview();
        let idx = keep
            .and_then(|(c, s)| {
                self.diagnosis
                    .walks
                    .iter()
                    .position(|w| w.class == c && w.start == s)
            })
            .unwrap_or(0);
        if idx != self.walk_idx {
            self.scroll.set(Pane::Walk, 0);
        }
        self.walk_idx = idx;
        self.clamp_remedy();
        let n = self.summary_findings().len();
        if self.summary_idx >= n {
            self.summary_idx = n.saturating_sub(1);
        }
    }

    fn clamp_remedy(&mut self) {
        let n = self.current_remedies().len();
        if self.remedy_idx >= n {
            self.remedy_idx = n.saturating_sub(1);
        }
    }

    /// Select the walk of the class the logs point at first.
    fn jump_to_matched_class(&mut self) -> Option<String> {
        let class = self.diagnosis.classification.classes.first()?.clone();
        let idx = self.diagnosis.walks.iter().position(|w| w.class == class)?;
        if idx != self.walk_idx {
            self.set_walk(idx);
        }
        Some(class)
    }

    /// An input changed (launch, log, host, probe): re-run the engine; the returned text names
    /// the answers dropped because the input now decides their question ("" when none).
    fn input_changed(&mut self) -> String {
        self.dropped.clear();
        self.rediagnose();
        self.dropped_status()
    }

    /// `; dropped your answer to “Does the launch use …?” (you answered no; …)`.
    fn dropped_status(&self) -> String {
        self.dropped
            .iter()
            .map(|(node, note)| {
                format!(
                    "; dropped your answer to “{}” ({note})",
                    words::question_of(&self.kb, node)
                )
            })
            .collect()
    }

    fn class_title(&self, class: &str) -> String {
        if self.details {
            return class.to_string();
        }
        self.kb
            .class(class)
            .map_or(class.to_string(), |c| c.def.title.clone())
    }

    fn after_log_change(&mut self, what: &str, prefer: Option<&str>) {
        self.refresh_logs();
        let dropped = self.input_changed();
        self.reindex_logs(prefer);
        let n = self.diagnosis.classification.matches.len();
        let log = Pane::Log.key();
        self.status = match self.jump_to_matched_class() {
            Some(class) => {
                self.pane = Pane::Walk;
                let confidence = self
                    .diagnosis
                    .classification
                    .confidence
                    .get(&class)
                    .map_or("", |c| c.as_str());
                format!(
                    "{what}: {n} matching line(s); the walk jumped to {} ({confidence}; {log}: the log opens at the first match){dropped}",
                    self.class_title(&class)
                )
            }
            None => {
                let run = &self.diagnosis.classification.run;
                match crate::engine::run_facts::first_error(run) {
                    Some(e) => format!(
                        "{what}: no known failure signature matched, but the log shows a failure (first error at line {}){dropped}",
                        e.line
                    ),
                    None if run.hang.is_some() => format!(
                        "{what}: no known failure signature matched, but the log shows a hang{dropped}"
                    ),
                    None => format!("{what}: no known failure signature matched{dropped}"),
                }
            }
        }
        .into();
    }

    fn set_walk(&mut self, idx: usize) {
        self.walk_idx = idx;
        self.remedy_idx = 0;
        self.scroll.set(Pane::Walk, 0);
    }

    /// Quit, or ask first when quitting would lose work. An edit in progress is kept (as Esc
    /// would) and counts as work.
    fn quit_or_ask(&mut self) {
        if matches!(self.overlay, Some(Overlay::ConfirmQuit { .. })) {
            self.quit = true;
            return;
        }
        if self.editing.is_some() {
            self.update(Action::Close);
        }
        if !self.unsaved.any() {
            self.quit = true;
            return;
        }
        self.overlay = Some(Overlay::ConfirmQuit {
            unsaved: self.unsaved.describe(),
        });
    }
}

impl App {
    /// Apply one action; return the side effects for the loop.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Quit | Action::Interrupt => self.quit_or_ask(),
            Action::QuitNow => self.quit = true,
            Action::ToggleHelp => {
                self.help_scroll = 0;
                self.overlay = match self.overlay {
                    Some(Overlay::Help) => None,
                    _ => Some(Overlay::Help),
                }
            }
            Action::HelpScroll(by) => self.scroll_help(by),
            Action::ToggleDetails => {
                self.details = !self.details;
                self.status = if self.details {
                    "details on: node, signature and remedy ids are shown (D hides them)".into()
                } else {
                    "details off".into()
                };
            }
            Action::Close => {
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
            Action::ApplyEdit => match self.editing {
                Some(EditTarget::Launch) => self.apply_launch_edit(),
                Some(EditTarget::Log) => return self.update(Action::Close),
                None => {}
            },
            Action::ShowPane(p) => self.pane = p,
            Action::NextPane | Action::PrevPane => {
                let n = Pane::ALL.len();
                let i = self.pane.index();
                let j = if action == Action::NextPane {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                self.pane = Pane::ALL[j];
            }
            Action::NextClass => {
                let n = self.diagnosis.walks.len();
                if n > 0 {
                    self.set_walk((self.walk_idx + 1) % n);
                }
            }
            Action::PrevClass => {
                let n = self.diagnosis.walks.len();
                if n > 0 {
                    self.set_walk((self.walk_idx + n - 1) % n);
                }
            }
            Action::ShowClass(i) => {
                if i < self.diagnosis.walks.len() {
                    self.set_walk(i);
                }
            }
            Action::OpenWalk(i) => {
                if i < self.diagnosis.walks.len() {
                    self.set_walk(i);
                    self.pane = Pane::Walk;
                    if let Some(k) = self.summary_findings().iter().position(|r| r.walk == i) {
                        self.summary_idx = k;
                    }
                }
            }
            Action::OpenSelected => {
                if let Some(r) = self.summary_findings().get(self.summary_idx).copied() {
                    return self.update(Action::OpenWalk(r.walk));
                }
            }
            Action::Answer(a) => {
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
                self.status =
                    format!("answered “{}”: {word}", words::question_of(&self.kb, &node)).into();
            }
            Action::StartOnboarding => {
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
            }
            Action::Undo => {
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
            Action::SelectNext | Action::SelectPrev => {
                let n = self.current_remedies().len();
                if n > 0 {
                    self.remedy_idx = if action == Action::SelectNext {
                        (self.remedy_idx + 1) % n
                    } else {
                        (self.remedy_idx + n - 1) % n
                    };
                }
            }
            Action::NextFinding | Action::PrevFinding => {
                let n = self.summary_findings().len();
                if n > 0 {
                    self.summary_idx = if action == Action::NextFinding {
                        (self.summary_idx + 1) % n
                    } else {
                        (self.summary_idx + n - 1) % n
                    };
                }
            }
            Action::PickRemedyAt(i) => {
                if i < self.current_remedies().len() {
                    self.remedy_idx = i;
                    return self.update(Action::PickRemedy);
                }
            }
            Action::ChooseRemedy => {
                if !self.current_remedies().is_empty() {
                    self.pane = Pane::Remedy;
                    self.scroll.set(Pane::Remedy, 0);
                    self.status =
                        "choose a remedy for this finding: ↑/↓, Enter uses it in the plan".into();
                }
            }
            Action::PickRemedy => {
                let Some(f) = self.current_finding() else {
                    return Vec::new();
                };
                if let Some(r) = f.remedies.get(self.remedy_idx) {
                    let (finding, id, title) = (f.id.clone(), r.id.clone(), r.title.clone());
                    let finding_title = f.title.clone();
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
            }
            Action::Scroll(by) => self.scroll_by(by),
            Action::NextMatch => self.jump_match(true),
            Action::PrevMatch => self.jump_match(false),
            Action::OpenSearch => {
                let input = self
                    .search
                    .as_ref()
                    .map(|s| s.query.clone())
                    .unwrap_or_default();
                self.overlay = Some(Overlay::Search { input });
            }
            Action::SearchChar(c) => {
                if let Some(Overlay::Search { input }) = &mut self.overlay {
                    input.push(c);
                }
            }
            Action::SearchBackspace => {
                if let Some(Overlay::Search { input }) = &mut self.overlay {
                    input.pop();
                }
            }
            Action::SearchSubmit => {
                if let Some(Overlay::Search { input }) = self.overlay.take() {
                    self.run_search(input);
                }
            }
            Action::SearchNext => self.search_step(true),
            Action::SearchPrev => self.search_step(false),
            Action::Copy => match self.fix_text() {
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
            },
            Action::OpenExport => {
                self.overlay = Some(Overlay::Prompt(Prompt {
                    purpose: PromptPurpose::Export,
                    input: self.export_format.default_path().into(),
                    format: self.export_format,
                    suggested: true,
                }))
            }
            Action::OpenWriteLaunch => {
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
                }))
            }
            Action::OpenLoadLog => {
                self.overlay = Some(Overlay::Prompt(Prompt {
                    purpose: PromptPurpose::LoadLog,
                    input: String::new(),
                    format: self.export_format,
                    suggested: false,
                }))
            }
            Action::ToggleFormat => {
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
            Action::PromptChar(c) => {
                if let Some(Overlay::Prompt(p)) = &mut self.overlay {
                    if p.suggested {
                        p.input.clear();
                        p.suggested = false;
                    }
                    p.input.push(c);
                }
            }
            Action::PromptBackspace => {
                if let Some(Overlay::Prompt(p)) = &mut self.overlay {
                    if p.suggested {
                        p.input.clear();
                        p.suggested = false;
                    } else {
                        p.input.pop();
                    }
                }
            }
            Action::PromptClear => {
                if let Some(Overlay::Prompt(p)) = &mut self.overlay {
                    p.input.clear();
                    p.suggested = false;
                }
            }
            Action::PromptSubmit => return self.submit_prompt(),
            Action::ConfirmYes => {
                if let Some(Overlay::Confirm { pending, .. }) = self.overlay.take() {
                    return vec![Effect::overwrite(pending)];
                }
            }
            Action::ConfirmNo => {
                if let Some(Overlay::Confirm { .. }) = self.overlay.take() {
                    self.status = "kept the existing file; nothing was written".into();
                }
            }
            Action::StartEdit => {
                self.editing = match self.pane {
                    Pane::Log => Some(EditTarget::Log),
                    Pane::Remedy => {
                        self.launch_editor.set_block(
                            Block::default()
                                .borders(Borders::ALL)
                                .title(LAUNCH_TITLE_EDITING),
                        );
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
            Action::EditKey(key) => match self.editing {
                Some(EditTarget::Log) => {
                    self.pasted.input(key);
                }
                Some(EditTarget::Launch) => {
                    self.launch_editor.input(key);
                }
                None => {}
            },
            Action::ClearPasted => {
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
            Action::RestorePasted => {
                if let Some(text) = self.cleared_paste.take() {
                    let lines: Vec<String> = text.lines().map(str::to_string).collect();
                    self.pasted.select_all();
                    self.pasted.cut();
                    self.pasted.insert_str(lines.join("\n"));
                    self.unsaved.pasted = !self.pasted_is_empty();
                    self.after_log_change("pasted log put back", Some(PASTED));
                }
            }
            Action::Explain(why) => self.status = why.into(),
            Action::Paste(text) => self.paste(text),
            Action::LoadDemo => {
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
                return vec![Effect::StartRefresher];
            }
            Action::Start => {
                if self.collecting.any() {
                    return vec![Effect::CollectHost];
                }
                if self.screen == Screen::Main && crate::tui::io::live::refreshes(&self.snapshot) {
                    return vec![Effect::StartRefresher];
                }
            }
            Action::HostCollected(snap) => return self.host_collected(*snap),
            Action::PythonCollected(python) => {
                if !self.collecting.python {
                    // Another host was opened meanwhile (the demo): not this one's.
                    return Vec::new();
                }
                self.collecting.python = false;
                self.snapshot.python = *python;
                let dropped = self.input_changed();
                self.jump_to_matched_class();
                self.status = format!("{}{dropped}", self.collected_status()).into();
            }
            Action::Gpu(update) => match update.gpus {
                Probed::Value(gpus) => {
                    let identity = |g: &[crate::snapshot::Gpu]| -> Vec<(u32, Option<String>)> {
                        g.iter()
                            .map(|x| (x.index, x.name.value().cloned()))
                            .collect()
                    };
                    let changed = self
                        .snapshot
                        .gpus
                        .value()
                        .is_none_or(|old| identity(old) != identity(&gpus));
                    self.snapshot.gpus = Probed::Value(gpus);
                    self.live.updates += 1;
                    self.live.last_error = None;
                    if changed {
                        self.rediagnose();
                    }
                }
                other => {
                    self.live.last_error = other.missing_reason().map(ToString::to_string);
                }
            },
            Action::Resize(w, h) => self.size = (w, h),
            Action::Mouse(m) => return self.mouse(m),
            Action::Done(msg) => self.status = msg.into(),
            Action::Copied(msg) => self.status = Status::done(msg),
            Action::Exported(msg) => {
                self.unsaved = Unsaved::default();
                self.status = msg.into();
            }
            Action::Failed(msg) => self.status = Status::error(msg),
            Action::AskOverwrite(effect) => {
                if let Some(pending) = effect.pending_write() {
                    self.overlay = Some(Overlay::Confirm {
                        question: format!("{} exists. Overwrite it?", pending.path().display()),
                        pending,
                    });
                }
            }
            Action::LiveSource(label) => self.live.source = label,
            Action::RunProbe => {
                if !self.can_probe() {
                    return Vec::new();
                }
                self.probe_running = true;
                self.probe_lines = vec![
                    "running: native path (≤ 1 s), then torch (about 5 s with the torch import)…"
                        .into(),
                ];
                self.status = "allocator/IPC probe running in the background…".into();
                let (conf, source) = probe::engine_conf(&self.snapshot);
                return vec![Effect::RunProbe { conf, source }];
            }
            Action::ProbeDone(result) => {
                if !self.snapshot.origin.is_live() {
                    // It measured this machine, but the user switched to another host meanwhile.
                    self.status = "the allocator/IPC probe finished for the live host; not applied to this one".into();
                    return Vec::new();
                }
                self.probe_running = false;
                let summary = probe::summary(&result);
                self.snapshot.probe = Probed::Value(*result);
                self.probe_lines = probe::lines(&self.snapshot.probe, self.is_live());
                let dropped = self.input_changed();
                self.status = format!("{summary}{dropped}").into();
            }
            Action::RunP2pProbe => {
                if !self.can_probe_p2p() {
                    return Vec::new();
                }
                let tp = self
                    .snapshot
                    .launch
                    .value()
                    .and_then(|l| l.tensor_parallel_size);
                self.p2p_running = true;
                self.p2p_lines = vec![probe::p2p_running_line(tp)];
                self.status = "P2P probe running in the background…".into();
                return vec![Effect::RunP2pProbe { tp }];
            }
            Action::P2pProbeDone(result) => {
                if !self.snapshot.origin.is_live() {
                    self.status =
                        "the P2P probe finished for the live host; not applied to this one".into();
                    return Vec::new();
                }
                self.p2p_running = false;
                let summary = probe::p2p_summary(&result);
                self.snapshot.p2p_probe = Probed::Value(*result);
                self.p2p_lines = probe::p2p_lines(&self.snapshot.p2p_probe, self.is_live());
                let dropped = self.input_changed();
                self.status = format!("{summary}{dropped}").into();
            }
            Action::LogLoaded(log) => {
                let name = log.name.clone();
                self.file_logs.push(log);
                self.after_log_change(&format!("loaded {name}"), Some(&name));
            }
        }
        Vec::new()
    }

    /// A paste (bracketed, or a burst the input thread read as one): into the editor being edited, into an open prompt (as one line of
    /// text), else a log — on the main screen, and on the no-host screen too, which then opens
    /// the main screen with the log read on no host.
    fn paste(&mut self, text: String) {
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
                self.launch_editor = editor_of(LAUNCH_TITLE_EDITING, lines, LAUNCH_PLACEHOLDER);
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
                        crate::tui::view::text::thousands(lines)
                    )
                } else {
                    format!(
                        "pasted {} line(s)",
                        crate::tui::view::text::thousands(lines)
                    )
                };
                self.after_log_change(&what, Some(PASTED));
            }
        }
    }

    /// The live host arrived (without its Python stack, unless that came first): decide the
    /// screen, re-run the walk, start the refresher when there are GPUs to show.
    fn host_collected(&mut self, mut snap: HostSnapshot) -> Vec<Effect> {
        if !self.collecting.host {
            return Vec::new();
        }
        self.collecting.host = false;
        // The user's launch and whatever Python stack is known (or still "collecting…").
        snap.launch = std::mem::replace(&mut self.snapshot.launch, Probed::skipped(COLLECTING));
        snap.python = std::mem::replace(&mut self.snapshot.python, Probed::skipped(COLLECTING));
        self.snapshot = snap;
        let why = crate::tui::io::live::no_gpu_reason(&self.snapshot);
        // A log given on the command line is read even without a host.
        self.screen = if why.is_some() && self.logs_cache.is_empty() {
            Screen::NoHost
        } else {
            Screen::Main
        };
        let has_gpus = why.is_none();
        self.no_host_reason = why.unwrap_or_default();
        let dropped = self.input_changed();
        self.jump_to_matched_class();
        self.pane = self.first_pane();
        self.status = format!("{}{dropped}", self.collected_status()).into();
        if self.screen == Screen::Main && has_gpus {
            vec![Effect::StartRefresher]
        } else {
            Vec::new()
        }
    }

    /// The status line while and after the live host is read.
    fn collected_status(&self) -> String {
        if self.collecting.host {
            COLLECTING_STATUS.into()
        } else if self.collecting.python {
            "read this host; collecting the Python stack… (the walk re-runs when it arrives)".into()
        } else if self.offers_onboarding() {
            ONBOARDING_OFFER.into()
        } else {
            "read this host (GPUs, environment, Python stack); the walk was re-run".into()
        }
    }

    /// Enter in the launch editor: read the text as the launch, unless a flag stands where a
    /// command belongs (then the editor stays open and the status says why).
    fn apply_launch_edit(&mut self) {
        let text = self.launch_text();
        if let Some((line, flag)) = crate::launch::flag_as_command(&text) {
            self.status = Status::error(format_args!(
                "not applied: line {line} starts with the flag {flag}, where a command belongs (bash would try to run it); flags go after `vllm serve MODEL` — fix it, or Esc to cancel"
            ));
            return;
        }
        self.editing = None;
        self.launch_before_edit = None;
        self.launch_editor
            .set_block(Block::default().borders(Borders::ALL).title(LAUNCH_TITLE));
        self.launch_editor.move_cursor(CursorMove::Top);
        self.launch_editor.move_cursor(CursorMove::Head);
        self.launch_edited();
    }

    /// Esc or Ctrl-C in the launch editor: the text as it was before `i`; nothing re-run.
    fn cancel_launch_edit(&mut self) {
        self.editing = None;
        if let Some(lines) = self.launch_before_edit.take() {
            self.launch_editor = editor_of(LAUNCH_TITLE, lines, LAUNCH_PLACEHOLDER);
        }
        self.status = "edit cancelled: the launch command is unchanged".into();
    }

    fn launch_edited(&mut self) {
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

    fn submit_prompt(&mut self) -> Vec<Effect> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Answer;

    #[test]
    fn demo_opens_on_the_class_the_log_points_at() {
        let app = App::demo();
        let w = app.current_walk().expect("a walk");
        assert_eq!(w.class, "allocator_ipc");
        let f = app.current_finding().expect("concluded");
        assert_eq!(f.remedies[0].id, "drop_expandable_segments");
    }

    #[test]
    fn checklist_walks_are_told_by_the_class_kind() {
        let mut app = App::demo();
        app.update(Action::StartOnboarding);
        let kinds: Vec<(String, bool)> = app
            .diagnosis
            .walks
            .iter()
            .map(|w| (w.class.clone(), app.is_checklist(w)))
            .collect();
        assert!(
            kinds.iter().any(|(c, k)| c == "onboarding" && *k),
            "{kinds:?}"
        );
        assert!(
            kinds.iter().any(|(c, k)| c == "allocator_ipc" && !*k),
            "{kinds:?}"
        );
        assert!(app.current_walk().is_some_and(|w| app.is_checklist(w)));
    }

    /// Issue 27: `--onboard` opens on item 1; `O` walks the open items; the counts add up.
    #[test]
    fn onboard_opens_on_item_one_and_o_moves_to_the_next_open_item() {
        let inputs = input::resolve(&InputArgs {
            demo: true,
            ..Default::default()
        })
        .expect("demo");
        let mut app = App::new(
            inputs.kb,
            inputs.snapshot,
            inputs.logs,
            inputs.answers,
            Mode::All,
            Screen::Main,
        );
        assert_eq!(app.pane, Pane::Walk);
        let w = app.current_walk().expect("a walk");
        assert!(
            words::item_label(&app.kb, &app.diagnosis.walks, w).starts_with("item 1 of 9"),
            "{w:?}"
        );
        let (done, failed, open) = app.checklist_counts();
        assert_eq!(done + failed + open, 9);
        assert!(open > 0);
        app.update(Action::StartOnboarding);
        let w = app.current_walk().expect("a walk");
        assert!(app.is_checklist(w));
        assert_eq!(app.item_state(w), ItemState::Open);
        assert!(
            app.status.to_string().contains("O: next open item"),
            "{}",
            app.status
        );
        // From any pane, O is bound.
        app.update(Action::ShowPane(Pane::Log));
        use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let key = KeyEvent::new(KeyCode::Char('O'), KeyModifiers::SHIFT);
        assert_eq!(
            crate::tui::state::keymap::map_key(&app, key),
            Some(Action::StartOnboarding)
        );
    }

    /// Issue 27: what a paste on the launch's pane is taken as.
    #[test]
    fn a_launch_reads_as_a_launch_and_a_log_does_not() {
        for launch in [
            "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2",
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nvllm serve m -tp 2\n",
            "CUDA_VISIBLE_DEVICES=0,1 vllm serve m",
            "docker run --gpus all vllm/vllm-openai:v0.24.0 --model m",
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.24.0\n    command: --model m --tensor-parallel-size 2\n",
        ] {
            assert!(reads_as_launch(launch), "{launch}");
        }
        assert!(!reads_as_launch(crate::import::demo::LOG));
        assert!(!reads_as_launch(""));
        assert!(!reads_as_launch("INFO vllm serve started"));
    }

    #[test]
    fn a_launch_pasted_on_the_remedy_pane_opens_the_editor_with_it() {
        let mut app = App::demo();
        let before = app.launch_text();
        app.update(Action::ShowPane(Pane::Remedy));
        app.update(Action::Paste("vllm serve Qwen/Qwen3-8B\n".into()));
        assert_eq!(app.editing, Some(EditTarget::Launch));
        assert!(app.pasted_is_empty(), "not taken as a log");
        assert!(
            app.status.to_string().contains("reads as a launch"),
            "{}",
            app.status
        );
        // Esc keeps the launch there was.
        app.update(Action::Close);
        assert_eq!(app.launch_text(), before);
        // Enter takes it.
        app.update(Action::Paste("vllm serve Qwen/Qwen3-8B\n".into()));
        app.update(Action::ApplyEdit);
        assert_eq!(app.editing, None);
        assert_eq!(app.launch_text(), "vllm serve Qwen/Qwen3-8B\n");
        // A log pasted there is still a log.
        app.update(Action::Paste(crate::import::demo::LOG.into()));
        assert_eq!(app.editing, None);
        assert!(!app.pasted_is_empty());
    }

    fn collecting_app() -> App {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let launch = crate::launch::parse_launch("vllm serve m -tp 2").expect("launch");
        App::collecting(kb, Some(launch), Vec::new(), Answers::new(), Mode::Failures)
    }

    fn fake_host(gpus: usize) -> HostSnapshot {
        let mut s = HostSnapshot::empty("live", "fake source");
        s.gpus = Probed::Value(
            (0..gpus as u32)
                .map(|i| crate::snapshot::Gpu::named(i, "FAKE GPU", "fake"))
                .collect(),
        );
        s
    }

    #[test]
    fn the_live_host_is_collected_after_start_and_fills_in_as_it_arrives() {
        let mut app = collecting_app();
        assert_eq!(app.screen, Screen::Collecting);
        assert!(app.status.contains("collecting"), "{}", app.status);
        assert!(!app.can_probe(), "no probe before the environment is known");
        assert!(!app.offers_onboarding());
        assert_eq!(app.update(Action::Start), vec![Effect::CollectHost]);

        // The host without Python: the screen is decided, the refresher starts, the launch kept.
        let effects = app.update(Action::HostCollected(Box::new(fake_host(2))));
        assert_eq!(effects, vec![Effect::StartRefresher]);
        assert_eq!(app.screen, Screen::Main);
        assert_eq!(app.snapshot.gpus.value().map(Vec::len), Some(2));
        assert_eq!(
            app.snapshot
                .launch
                .value()
                .and_then(|l| l.tensor_parallel_size),
            Some(2)
        );
        assert_eq!(app.snapshot.python.why_or(""), COLLECTING);
        assert!(app.collecting.python && !app.collecting.host);
        assert!(app.status.contains("Python stack"), "{}", app.status);
        assert!(app.can_probe());

        // The Python stack: the walk re-runs with it; a second copy is ignored.
        let py = Probed::skipped("fake: no Python");
        app.update(Action::PythonCollected(Box::new(py.clone())));
        assert_eq!(app.snapshot.python, py);
        assert!(!app.collecting.any());
        assert!(!app.status.contains("collecting"), "{}", app.status);
        assert!(
            app.update(Action::HostCollected(Box::new(fake_host(1))))
                .is_empty()
        );
        assert_eq!(app.snapshot.gpus.value().map(Vec::len), Some(2));
    }

    #[test]
    fn python_may_arrive_first_and_a_host_without_gpus_shows_why() {
        let mut app = collecting_app();
        let py = Probed::skipped("fake: no Python");
        app.update(Action::PythonCollected(Box::new(py.clone())));
        assert_eq!(app.screen, Screen::Collecting, "still waiting for the host");
        let effects = app.update(Action::HostCollected(Box::new(HostSnapshot::empty(
            "live",
            "libnvidia-ml.so.1 not found",
        ))));
        assert!(effects.is_empty(), "no refresher without GPUs");
        assert_eq!(app.screen, Screen::NoHost);
        assert!(
            app.no_host_reason.contains("libnvidia-ml.so.1 not found"),
            "{}",
            app.no_host_reason
        );
        assert_eq!(app.snapshot.python, py, "the early Python stack is kept");
    }

    #[test]
    fn results_for_the_live_host_are_dropped_after_opening_the_demo() {
        let mut app = collecting_app();
        app.update(Action::HostCollected(Box::new(HostSnapshot::empty(
            "live",
            "no driver",
        ))));
        assert_eq!(app.screen, Screen::NoHost);
        app.update(Action::LoadDemo);
        app.update(Action::PythonCollected(Box::new(Probed::skipped("late"))));
        assert!(app.snapshot.origin.is_demo(), "{}", app.snapshot.origin);
        assert!(
            app.snapshot.python.value().is_some(),
            "the demo's own stack"
        );
    }

    #[test]
    fn class_navigation_wraps() {
        let mut app = App::demo();
        let n = app.diagnosis.walks.len();
        assert!(n > 1);
        let start = app.walk_idx;
        app.update(Action::PrevClass);
        assert_eq!(app.walk_idx, (start + n - 1) % n);
        app.update(Action::NextClass);
        assert_eq!(app.walk_idx, start);
    }

    #[test]
    fn confirm_yes_turns_on_overwrite_and_no_writes_nothing() {
        let mut app = App::demo();
        let e = Effect::Export {
            format: ExportFormat::Text,
            path: "x.txt".into(),
            overwrite: false,
        };
        app.update(Action::AskOverwrite(e.clone()));
        assert!(matches!(app.overlay, Some(Overlay::Confirm { .. })));
        assert!(app.update(Action::ConfirmNo).is_empty());
        assert!(app.overlay.is_none());
        app.update(Action::AskOverwrite(e));
        let effects = app.update(Action::ConfirmYes);
        assert_eq!(
            effects,
            vec![Effect::Export {
                format: ExportFormat::Text,
                path: "x.txt".into(),
                overwrite: true
            }]
        );
    }

    #[test]
    fn answer_is_ignored_when_nothing_is_asked() {
        let mut app = App::demo();
        assert!(matches!(
            app.current_walk().map(|w| &w.outcome),
            Some(Outcome::Concluded { .. })
        ));
        app.update(Action::Answer(Answer::Yes));
        assert!(app.answers.is_empty());
        assert!(app.answer_order.is_empty());
    }
}
