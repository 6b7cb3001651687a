//! The TUI's state: [`App`] (plain data; its field types live in [`crate::tui::state`]) and
//! [`App::update`], which turns an [`Action`] into a state change and a list of [`Effect`]s for
//! the loop to perform. Nothing here touches the terminal, the file system or a thread, so every
//! state change is testable by sending actions. Scrolling and mouse clicks need the screen's
//! size: the loop sends it ([`act::Control::Resize`]) and [`crate::tui::view::measure`] derives the
//! same regions the renderer draws.
//!
//! `update` (update.rs) only dispatches; the handlers are grouped by concern beside it:
//! session.rs, prompt.rs, editing.rs, arrivals.rs, and the read-only queries.rs.

mod arrivals;
mod editing;
mod prompt;
mod queries;
mod session;
mod update;

pub use arrivals::no_gpu_reason;

use crate::engine::classify::LogText;
use crate::engine::plan::{self, Choices};
use crate::engine::{self, Answer, Answers, Diagnosis, Finding, Mode, Outcome, RemedyView, Walk};
use crate::input::{self, InputArgs};
use crate::kb::KnowledgeBase;
use crate::kb::schema::Severity;
use crate::snapshot::{HostSnapshot, Probed};
use crate::tui::state::action::{self as act, Action, Effect};
use crate::tui::state::logindex::{LogIndex, RowRef};
use crate::tui::state::preview::{self, Preview};
use crate::tui::state::probe;
use crate::tui::state::status::Status;
use crate::tui::state::words;
use crate::tui::state::{
    Collecting, EditTarget, ExportFormat, FileWhat, LiveInfo, Overlay, Pane, Prompt, PromptPurpose,
    Screen, Scroll, Search, Unsaved,
};
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

/// An editor holding `text`. Its frame and title are the view's (they follow `App::editing`).
fn editor(text: &str, placeholder: &str) -> TextArea<'static> {
    let lines: Vec<String> = if text.is_empty() {
        vec![String::new()]
    } else {
        text.lines().map(str::to_string).collect()
    };
    editor_of(lines, placeholder)
}

fn editor_of(lines: Vec<String>, placeholder: &str) -> TextArea<'static> {
    let mut ta = TextArea::new(lines);
    ta.set_placeholder_text(placeholder);
    ta
}

const LAUNCH_PLACEHOLDER: &str = "type or paste your vllm serve command (i to edit)";

fn launch_editor(snapshot: &HostSnapshot) -> TextArea<'static> {
    let text = snapshot
        .launch
        .value()
        .map(|l| l.raw.trim_end().to_string())
        .unwrap_or_default();
    editor(&text, LAUNCH_PLACEHOLDER)
}

/// Does a paste read as a launch rather than a log? Its first command is `vllm`, `python`,
/// `docker`/`podman`, `uv`, an `export` or a `NAME=value` prefix, or it is a compose file,
/// manifest, Helm values or systemd unit; and the launch parser takes it. A log's first line
/// (a timestamp, a level, a process tag) is none of these, so a log never reads as a launch.
pub(crate) fn reads_as_launch(text: &str) -> bool {
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
            pasted: editor("", "paste a log here (bracketed paste), Esc when done"),
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

    /// The live host, before it is read: the screen says "collecting…" and fills as
    /// [`act::Arrival::Host`] and [`act::Arrival::Python`] arrive. `launch` is the user's.
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
}

/// For io::live's tests.
#[cfg(test)]
pub(crate) use arrivals::refreshes;

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
