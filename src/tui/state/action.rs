//! Actions (what the user or a background source asks for) and effects (what the loop must do
//! outside the state). Keys become actions in [`crate::tui::state::keymap`]; [`crate::tui::state::app::App::update`]
//! turns an action into a state change and effects; [`crate::tui::io::effects::perform`] carries them out.

use crate::collect::refresh::GpuUpdate;
use crate::engine::Answer;
use crate::engine::classify::LogText;
use crate::snapshot::{HostSnapshot, IpcProbe, P2pProbe, Probed, PythonStack};
use crate::tui::state::{ExportFormat, FileWhat, Pane, PendingWrite, ScrollBy};
use ratatui::crossterm::event::{KeyEvent, MouseEvent};
use std::path::PathBuf;

/// Everything that can change the app's state.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `q`: quit, asking first when there is unsaved work.
    Quit,
    /// Ctrl-C: like `q`, also while editing the log; a second Ctrl-C quits. (In the launch
    /// editor Ctrl-C cancels the edit, as Esc does.)
    Interrupt,
    /// Quit without asking (the answer to "quit anyway?").
    QuitNow,
    ToggleHelp,
    /// Scroll the help (on a short screen it does not fit).
    HelpScroll(ScrollBy),
    /// `D`: node and signature ids on or off.
    ToggleDetails,
    /// Esc: close the overlay, end editing the log, or cancel editing the launch (its text
    /// as before `i`).
    Close,
    /// Enter in the launch editor: apply the text as the launch (refused, with the reason,
    /// when a flag stands where a command belongs).
    ApplyEdit,
    ShowPane(Pane),
    NextPane,
    PrevPane,
    NextClass,
    /// A class picked by index (a click on its mark).
    ShowClass(usize),
    PrevClass,
    Answer(Answer),
    Undo,
    /// The next / previous remedy of the current finding (↓/↑ in the Remedy pane).
    SelectNext,
    SelectPrev,
    /// The next / previous finding in the Summary (↓/↑ there).
    NextFinding,
    PrevFinding,
    /// Use the selected remedy of the current finding in the plan.
    PickRemedy,
    /// Enter in the walk: open the Remedy pane to choose the finding's remedy.
    ChooseRemedy,
    /// Use this remedy of the current finding (a click on it).
    PickRemedyAt(usize),
    /// Open the walk of this finding (by walk index), from the Summary.
    OpenWalk(usize),
    /// Enter in the Summary: open the selected finding's walk.
    OpenSelected,
    /// Scroll the pane in view.
    Scroll(ScrollBy),
    /// `]` / `[`: the next / previous matched log line.
    NextMatch,
    PrevMatch,
    /// `/`: type a search; Enter runs it.
    OpenSearch,
    SearchChar(char),
    SearchBackspace,
    SearchSubmit,
    /// `n` / `N`: the next / previous hit of the search.
    SearchNext,
    SearchPrev,
    /// `c`: copy the combined fix to the clipboard (OSC 52).
    Copy,
    OpenExport,
    OpenWriteLaunch,
    OpenLoadLog,
    ToggleFormat,
    PromptChar(char),
    PromptBackspace,
    PromptClear,
    PromptSubmit,
    ConfirmYes,
    ConfirmNo,
    StartEdit,
    EditKey(KeyEvent),
    ClearPasted,
    /// `u` on the log pane after `x`: put the cleared pasted log back.
    RestorePasted,
    /// A key that does nothing here, with why (`p`/`P` on a recording).
    Explain(&'static str),
    /// Text from a bracketed paste, or a paste the terminal did not bracket (a burst of keys
    /// faster than a person types, read as one by `event::next_burst`).
    Paste(String),
    LoadDemo,
    /// The loop is up and the first frame drawn: start reading the live host, or the refresher.
    Start,
    /// The live host without its Python stack arrived (from the collector's thread).
    HostCollected(Box<HostSnapshot>),
    /// The live host's Python stack arrived.
    PythonCollected(Box<Probed<PythonStack>>),
    Gpu(GpuUpdate),
    /// The terminal's new size (columns, rows).
    Resize(u16, u16),
    Mouse(MouseEvent),
    /// Results of effects.
    Done(String),
    /// Copied to the clipboard (the status line shows it as done).
    Copied(String),
    Failed(String),
    /// The report was written: the session's work is saved.
    Exported(String),
    /// The file exists: ask before replacing it.
    AskOverwrite(Effect),
    LogLoaded(LogText),
    /// The refresher started; how the GPU panel should name its source.
    LiveSource(String),
    /// `c`: add the onboarding checklist to the walk (offered when no failure was found).
    StartOnboarding,
    /// `p`: run the allocator/IPC probe on this host (in the background).
    RunProbe,
    /// The probe finished (from the background thread, or a fake in tests).
    ProbeDone(Box<IpcProbe>),
    /// `P`: run the functional peer-to-peer probe on this host (in the background).
    RunP2pProbe,
    /// The P2P probe finished (from the background thread, or a fake in tests).
    P2pProbeDone(Box<P2pProbe>),
}

/// Side effects, performed by `effects::perform`, never by `App::update`.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Write the report. `overwrite` is set only after the user said yes.
    Export {
        format: ExportFormat,
        path: PathBuf,
        overwrite: bool,
    },
    /// Write the patched launch command (or the editor's text, or the PR script).
    WriteLaunch {
        path: PathBuf,
        text: String,
        what: FileWhat,
        overwrite: bool,
    },
    /// Read a log file into the log pane.
    LoadLog { path: PathBuf },
    /// Read the live host off the UI thread; its parts arrive as events.
    CollectHost,
    /// Start the background GPU refresher for the current host.
    StartRefresher,
    /// Run the allocator/IPC probe on a background thread under this allocator config.
    RunProbe {
        conf: Option<String>,
        source: String,
    },
    /// Run the functional P2P probe on a background thread, over the launch's tensor-parallel
    /// group (`tp`), else every GPU.
    RunP2pProbe { tp: Option<u32> },
    /// Put `text` on the terminal's clipboard (OSC 52); `what` names it in the notice.
    Copy { text: String, what: String },
}

impl Effect {
    /// A write effect as the question "overwrite?" keeps it (`None` for other effects).
    pub fn pending_write(&self) -> Option<PendingWrite> {
        match self {
            Effect::Export { format, path, .. } => Some(PendingWrite::Export {
                format: *format,
                path: path.clone(),
            }),
            Effect::WriteLaunch {
                path, text, what, ..
            } => Some(PendingWrite::Launch {
                path: path.clone(),
                text: text.clone(),
                what: *what,
            }),
            _ => None,
        }
    }

    /// The write the user said yes to: the same, now allowed to replace the file.
    pub fn overwrite(pending: PendingWrite) -> Effect {
        match pending {
            PendingWrite::Export { format, path } => Effect::Export {
                format,
                path,
                overwrite: true,
            },
            PendingWrite::Launch { path, text, what } => Effect::WriteLaunch {
                path,
                text,
                what,
                overwrite: true,
            },
        }
    }
}
