//! What a log shows about how the run went, independent of any failure class: lines that
//! show a failure (a traceback's final exception, `ERROR`/`CRITICAL` lines, CUDA/NCCL error
//! codes, assertions, aborts), a hang (the log stops inside start-up, or stall warnings repeat
//! after the last progress line), and the milestones the run reached (weights loaded, graph
//! capture finished, start-up complete, requests served).
//!
//! The classifier fills this in while it scans; the engine reads it to say "the log shows a
//! failure this tool does not recognise" instead of an all-clear, and to weigh a "will crash"
//! prediction against a log that shows the same launch got past that point. Front ends render
//! these types in their own words: nothing here is a sentence another layer matches on.

use serde::Serialize;

/// The start-up phases of a vLLM engine, in the order it goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The engine starting: its version banner, arguments and resolved configuration.
    Start,
    /// Process-group and NCCL communicator set-up: every rank waits for its peers here.
    CommInit,
    /// Reading the config, loading weights.
    Load,
    /// torch.compile / Inductor / a JIT build.
    Compile,
    /// The memory profiling run and KV-cache sizing.
    Profile,
    /// CUDA graph capture.
    GraphCapture,
    /// Kernel warmup (DeepGEMM, FlashInfer autotuning, sampler warmup).
    Warmup,
    /// The API server is up and answering requests.
    Serving,
}

/// What kind of line shows the failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The final exception line of a Python traceback (`RuntimeError: …`).
    Exception,
    /// An assertion (`AssertionError`, a C++ `Assertion … failed`, a device-side assert).
    Assertion,
    /// A CUDA error code or CUDA driver/runtime error text.
    CudaError,
    /// An NCCL error (`ncclInternalError`, `NCCL WARN`, a rendezvous failure).
    NcclError,
    /// The process died: SIGABRT, `core dumped`, `Killed`, a non-zero exit code, a worker that died.
    Abort,
    /// A log line at `ERROR` or `CRITICAL` level that is none of the above.
    ErrorLine,
    /// A traceback whose exception line never came: the log (or the paste) stops in its
    /// frames. The line is the last frame; what was raised is not in the log.
    TracebackCut,
}

/// One line that shows a failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FailureLine {
    pub kind: FailureKind,
    /// The log, as sources name it.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// The line after normalisation, shortened.
    pub text: String,
    /// The phase the log was in at this line, when the log shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// For an exception: the last traceback frames before it (`File "…", line N, in f`), last
    /// frame last, at most a few.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<String>,
    /// The named class (SUSPECTED or CONFIRMED) whose matched lines cover this failure: the
    /// same line, or a line of the same traceback. `None`: no class explains it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained_by: Option<String>,
    /// For an exception: the line of its `Traceback (most recent call last):` (or of its first
    /// frame), so a class matched on any line of the traceback explains it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceback_from: Option<usize>,
    /// The line follows from another failure (a wrapper's "see root cause above", a worker
    /// that died after the error); it is explained by what explains that failure.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub consequence: bool,
}

/// How a log shows a hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum HangKind {
    /// Stall or timeout warnings repeat after the last progress line (NCCL watchdog, "No
    /// available shared memory broadcast block found", a heartbeat missed).
    StallWarnings,
    /// The log ends inside start-up: no failure line, no "start-up complete" (or it ends inside
    /// communicator set-up, where every rank waits for its peers).
    EndsInStartup,
    /// The run was interrupted (SIGINT / Ctrl-C / SIGTERM) before start-up completed, with no
    /// failure since the last progress line: the user gave up on a run that stood still.
    Interrupted,
}

/// A hang the log shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Hang {
    pub kind: HangKind,
    pub file: String,
    /// The last line that showed progress (1-based), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_progress_line: Option<usize>,
    /// That line's text, shortened.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub last_progress_text: String,
    /// The first stall warning's line (1-based), for `StallWarnings`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_line: Option<usize>,
    /// How many stall warnings followed the last progress line.
    pub stall_count: usize,
    /// For `Interrupted`: the line that shows the interrupt (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupt_line: Option<usize>,
    /// The phase the log was in when it stopped making progress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
}

/// A point a run got past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Milestone {
    WeightsLoaded,
    GraphCaptureDone,
    WarmupDone,
    StartupComplete,
    RequestServed,
}

/// One milestone line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MilestoneLine {
    pub milestone: Milestone,
    pub file: String,
    pub line: usize,
    pub text: String,
}

/// Everything a log shows about how the run went.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunSigns {
    /// Failure lines in log order (capped; the first of a burst of the same text is kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang: Option<Hang>,
    /// Milestones in log order, each milestone once (its first line).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub milestones: Vec<MilestoneLine>,
    /// The last phase the log shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_phase: Option<Phase>,
}

impl RunSigns {
    pub fn is_empty(&self) -> bool {
        self.failures.is_empty()
            && self.hang.is_none()
            && self.milestones.is_empty()
            && self.last_phase.is_none()
    }
    /// The log shows the run failing or hanging.
    pub fn shows_failure(&self) -> bool {
        !self.failures.is_empty() || self.hang.is_some()
    }
    /// Failure lines no named class explains.
    pub fn unexplained(&self) -> impl Iterator<Item = &FailureLine> {
        self.failures.iter().filter(|f| f.explained_by.is_none())
    }
    /// The first line of a milestone, if the log shows it.
    pub fn reached(&self, m: Milestone) -> Option<&MilestoneLine> {
        self.milestones.iter().find(|l| l.milestone == m)
    }
}
