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
    Walk,
    Log,
    Remedy,
}

impl Pane {
    pub const ALL: [Pane; 3] = [Pane::Walk, Pane::Log, Pane::Remedy];
    pub fn title(self) -> &'static str {
        match self {
            Pane::Walk => "1 Walk",
            Pane::Log => "2 Log",
            Pane::Remedy => "3 Remedy",
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
    pub fn default_path(self) -> &'static str {
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
    pub fn report_format(self) -> ReportFormat {
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
