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

pub mod flat;

/// Everything that can change the app's state, grouped by what it is about: one variant per
/// group, and [`App::update`](crate::tui::state::app::App::update) hands each group to one
/// handler. [`flat`] keeps the old one-level spellings (`Action::Quit`, `Action::ShowPane(p)`)
/// as constructors of the grouped values.
///
/// Three actions stay at the top level, ungrouped: [`Action::Failed`], [`Action::Explain`] and
/// [`Action::EditKey`]. The integration tests (tests/tui/app.rs) match on them as patterns,
/// which a constructor cannot stand in for; they belong to [`Outcome`], [`Control`] and
/// [`Edit`] once those tests build the grouped values.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Quitting, help, details, the screen's size, the mouse, the demo.
    Control(Control),
    /// Moving between panes, classes, findings, remedies and log lines; scrolling.
    Nav(Nav),
    /// Answering the walk and choosing remedies.
    Choice(Choice),
    /// The log search.
    Search(Search),
    /// The file prompts (export, write, load) and their confirmations; copying the fix.
    Prompt(Prompt),
    /// Editing the pasted log and the launch.
    Edit(Edit),
    /// Starting the probes, and their results.
    Probe(Probe),
    /// The live host and its refresher, arriving from the collector's threads.
    Arrival(Arrival),
    /// Results of effects (the status line reports them).
    Outcome(Outcome),
    /// An effect failed (its message goes to the status line as an error).
    Failed(String),
    /// A key that does nothing here, with why (`p`/`P` on a recording).
    Explain(&'static str),
    /// A key for the editor in use (the log or the launch).
    EditKey(KeyEvent),
}

/// Quitting, help, details, the screen's size, the mouse, the demo.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
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
    /// The terminal's new size (columns, rows).
    Resize(u16, u16),
    Mouse(MouseEvent),
    LoadDemo,
}

/// Moving between panes, classes, findings, remedies and log lines; scrolling.
#[derive(Debug, Clone, PartialEq)]
pub enum Nav {
    ShowPane(Pane),
    NextPane,
    PrevPane,
    NextClass,
    PrevClass,
    /// A class picked by index (a click on its mark).
    ShowClass(usize),
    /// Open the walk of this finding (by walk index), from the Summary.
    OpenWalk(usize),
    /// Enter in the Summary: open the selected finding's walk.
    OpenSelected,
    /// The next / previous finding in the Summary (↓/↑ there).
    NextFinding,
    PrevFinding,
    /// The next / previous remedy of the current finding (↓/↑ in the Remedy pane).
    SelectNext,
    SelectPrev,
    /// Scroll the pane in view.
    Scroll(ScrollBy),
    /// `]` / `[`: the next / previous matched log line.
    NextMatch,
    PrevMatch,
}

/// Answering the walk and choosing remedies.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Answer(Answer),
    Undo,
    /// `c`: add the onboarding checklist to the walk (offered when no failure was found).
    StartOnboarding,
    /// Enter in the walk: open the Remedy pane to choose the finding's remedy.
    ChooseRemedy,
    /// Use the selected remedy of the current finding in the plan.
    PickRemedy,
    /// Use this remedy of the current finding (a click on it).
    PickRemedyAt(usize),
}

/// The log search.
#[derive(Debug, Clone, PartialEq)]
pub enum Search {
    /// `/`: type a search; Enter runs it.
    Open,
    Char(char),
    Backspace,
    Submit,
    /// `n` / `N`: the next / previous hit of the search.
    Next,
    Prev,
}

/// The file prompts (export, write, load) and their confirmations; copying the fix.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// `c`: copy the combined fix to the clipboard (OSC 52).
    Copy,
    OpenExport,
    OpenWriteLaunch,
    OpenLoadLog,
    ToggleFormat,
    Char(char),
    Backspace,
    Clear,
    Submit,
    ConfirmYes,
    ConfirmNo,
}

/// Editing the pasted log and the launch.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Enter in the launch editor: apply the text as the launch (refused, with the reason,
    /// when a flag stands where a command belongs).
    Apply,
    Start,
    ClearPasted,
    /// `u` on the log pane after `x`: put the cleared pasted log back.
    RestorePasted,
    /// Text from a bracketed paste, or a paste the terminal did not bracket (a burst of keys
    /// faster than a person types, read as one by `event::next_burst`).
    Paste(String),
}

/// Starting the probes, and their results.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// `p`: run the allocator/IPC probe on this host (in the background).
    RunIpc,
    /// The probe finished (from the background thread, or a fake in tests).
    IpcDone(Box<IpcProbe>),
    /// `P`: run the functional peer-to-peer probe on this host (in the background).
    RunP2p,
    /// The P2P probe finished (from the background thread, or a fake in tests).
    P2pDone(Box<P2pProbe>),
}

/// The live host and its refresher, arriving from the collector's threads.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrival {
    /// The loop is up and the first frame drawn: start reading the live host, or the refresher.
    Start,
    /// The live host without its Python stack arrived (from the collector's thread).
    Host(Box<HostSnapshot>),
    /// The live host's Python stack arrived.
    Python(Box<Probed<PythonStack>>),
    Gpu(GpuUpdate),
    /// The refresher started; how the GPU panel should name its source.
    LiveSource(String),
}

/// Results of effects (the status line reports them; [`Action::Failed`] for failures).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Done(String),
    /// Copied to the clipboard (the status line shows it as done).
    Copied(String),
    /// The report was written: the session's work is saved.
    Exported(String),
    /// The file exists: ask before replacing it.
    AskOverwrite(Effect),
    LogLoaded(LogText),
}

macro_rules! into_action {
    ($($group:ident),*) => {$(
        impl From<$group> for Action {
            fn from(a: $group) -> Action {
                Action::$group(a)
            }
        }
    )*};
}
into_action!(
    Control, Nav, Choice, Search, Prompt, Edit, Probe, Arrival, Outcome
);

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
    pub(crate) fn pending_write(&self) -> Option<PendingWrite> {
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
