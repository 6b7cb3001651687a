//! Plain state types the TUI's other files share: which screen, pane, overlay and editor is
//! active, what a prompt is for, and what a write is about to do. No behaviour beyond small
//! lookups; nothing here imports another TUI file, so every other file can import it.

use crate::report::ReportFormat;
use crate::write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    /// The live host is being read (off the UI thread); the panels fill as results arrive.
    Collecting,
    /// No host to show: no live collector or no NVIDIA driver. Offers the demo.
    NoHost,
    Main,
}

/// The right-hand pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// Every finding ranked, the questions left, the combined fix.
    Summary,
    Walk,
    Log,
    Remedy,
}

impl Pane {
    pub const ALL: [Pane; 4] = [Pane::Summary, Pane::Walk, Pane::Log, Pane::Remedy];
    pub fn title(self) -> &'static str {
        match self {
            Pane::Summary => "1 Summary",
            Pane::Walk => "2 Walk",
            Pane::Log => "3 Log",
            Pane::Remedy => "4 Remedy",
        }
    }
    /// The digit that shows it.
    pub fn key(self) -> char {
        match self {
            Pane::Summary => '1',
            Pane::Walk => '2',
            Pane::Log => '3',
            Pane::Remedy => '4',
        }
    }
    pub fn index(self) -> usize {
        match self {
            Pane::Summary => 0,
            Pane::Walk => 1,
            Pane::Log => 2,
            Pane::Remedy => 3,
        }
    }
}

/// What a mouse click on a region or row means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Tab(Pane),
    /// A walk (class tab) by index.
    Class(usize),
    /// A remedy of the current finding by index.
    Remedy(usize),
    /// A finding in the summary, by its walk's index.
    Finding(usize),
}

/// Scrolling offsets, one per pane (rows; for the log pane, the top logical line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scroll([usize; 4]);

impl Scroll {
    pub fn get(&self, p: Pane) -> usize {
        self.0[p.index()]
    }
    pub fn set(&mut self, p: Pane, v: usize) {
        self.0[p.index()] = v;
    }
}

/// A scrolling request, applied against the pane's size and content by `App::update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollBy {
    Lines(isize),
    Pages(isize),
    Top,
    Bottom,
}

/// The log search: the query, the matching display rows and the one in focus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    pub query: String,
    pub hits: Vec<usize>,
    pub current: usize,
}

/// Work that quitting would lose (since the last export).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unsaved {
    /// Questions answered (by node).
    pub answers: std::collections::BTreeSet<String>,
    pub pasted: bool,
    pub launch: bool,
    pub picks: bool,
}

impl Unsaved {
    /// Work worth a "quit anyway?" prompt: answers, a pasted log, an edited command. A remedy
    /// pick alone is one key to make again (and the fix it gives is on screen to copy), so it
    /// does not stop `q`; it is still named when there is other work to lose.
    pub fn any(&self) -> bool {
        !self.answers.is_empty() || self.pasted || self.launch
    }
    /// "2 answers, a pasted log and a remedy pick".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match self.answers.len() {
            0 => {}
            1 => parts.push("1 answer".to_string()),
            n => parts.push(format!("{n} answers")),
        }
        if self.pasted {
            parts.push("a pasted log".into());
        }
        if self.launch {
            parts.push("an edited launch command".into());
        }
        if self.picks {
            parts.push("remedy picks".into());
        }
        match parts.len() {
            0 => "nothing".into(),
            1 => parts.remove(0),
            _ => {
                let last = parts.pop().unwrap_or_default();
                format!("{} and {last}", parts.join(", "))
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditTarget {
    Log,
    Launch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptPurpose {
    Export,
    WriteLaunch,
    LoadLog,
}

/// Report formats the export dialog offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Json,
    Text,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 3] = [
        ExportFormat::Markdown,
        ExportFormat::Json,
        ExportFormat::Text,
    ];
    pub fn label(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Json => "json",
            ExportFormat::Text => "text",
        }
    }
    /// How a status message names the written document.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "Markdown",
            ExportFormat::Json => "JSON",
            ExportFormat::Text => "text",
        }
    }
    pub(crate) fn default_path(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "sm120-doctor-report.md",
            ExportFormat::Json => "sm120-doctor-report.json",
            ExportFormat::Text => "sm120-doctor-report.txt",
        }
    }
    /// The next format in the dialog's cycle (md → json → text → md).
    pub fn next(self) -> ExportFormat {
        let i = Self::ALL.iter().position(|f| *f == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }
    pub(crate) fn report_format(self) -> ReportFormat {
        match self {
            ExportFormat::Markdown => ReportFormat::Markdown,
            ExportFormat::Json => ReportFormat::Json,
            ExportFormat::Text => ReportFormat::Text,
        }
    }
}

/// What `w` writes: a launch (a script unless it is a compose file) or the PR apply script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileWhat {
    Launch(write::Kind),
    PatchScript,
}

impl FileWhat {
    /// A launch text: a script for a command line or `docker run`, data for a compose file.
    pub fn launch(text: &str) -> FileWhat {
        FileWhat::Launch(crate::remedy::launch_file_kind(text))
    }
    pub fn kind(self) -> write::Kind {
        match self {
            FileWhat::Launch(k) => k,
            FileWhat::PatchScript => write::Kind::Script,
        }
    }
    /// How a status message names the written file.
    pub fn label(self) -> &'static str {
        match self {
            FileWhat::Launch(_) => "the launch command",
            FileWhat::PatchScript => "the patch script",
        }
    }
}

/// A write waiting for the user's answer to "overwrite?".
#[derive(Debug, Clone, PartialEq)]
pub enum PendingWrite {
    Export {
        format: ExportFormat,
        path: PathBuf,
    },
    Launch {
        path: PathBuf,
        text: String,
        what: FileWhat,
    },
}

impl PendingWrite {
    pub fn path(&self) -> &std::path::Path {
        match self {
            PendingWrite::Export { path, .. } | PendingWrite::Launch { path, .. } => path,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub purpose: PromptPurpose,
    pub input: String,
    pub format: ExportFormat,
    /// The input is still the suggested default: typing or pasting replaces it.
    pub suggested: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help,
    Prompt(Prompt),
    /// A yes/no question before a write that would replace a file.
    Confirm {
        question: String,
        pending: PendingWrite,
    },
    /// Quit asked with unsaved work: what would be lost.
    ConfirmQuit {
        unsaved: String,
    },
    /// `/` in the log pane: the query being typed.
    Search {
        input: String,
    },
}

/// What the live panel knows about the background refresher.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveInfo {
    /// Where GPU updates come from, as shown to the user.
    pub source: String,
    pub updates: u64,
    pub last_error: Option<String>,
}

/// Parts of the live host still being read (off the UI thread).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Collecting {
    /// NVML (GPUs, driver), the engine's environment, OS, processes.
    pub host: bool,
    /// The Python stack (package metadata, under its own time limit).
    pub python: bool,
}

impl Collecting {
    /// Nothing read yet.
    pub const ALL: Collecting = Collecting {
        host: true,
        python: true,
    };
    pub fn any(self) -> bool {
        self.host || self.python
    }
}

/// Label the export dialog shows for what it will write.
pub const EXPORT_LABEL: &str =
    "the diagnostic report (as `sm120-doctor report`), secrets and host names redacted";
