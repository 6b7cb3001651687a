//! The knowledge-base file format (knowledge/*.yaml).
//!
//! One file per failure class (or checklist), plus four table files: `remedies.yaml`
//! (remedies and the PRs they apply), `hardware.yaml` (SKUs that share a chip, model families),
//! `allocator.yaml` (what the tool says about PyTorch's allocator variables) and
//! `run_signs.yaml` (the lines that show how a run went, whatever the class). Identifiers
//! that other parts refer to are [`Spanned`] so the validator can point at the exact line and
//! column.

pub use super::spanned::{Location, Spanned};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A YAML string with its position in the file.
pub type SpannedStr = Spanned<String>;

/// A class file: the tree for one failure class (or the onboarding checklist).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassFile {
    /// Stable class id, e.g. `allocator_ipc`.
    pub class: SpannedStr,
    pub title: String,
    /// `failure` (the default) or `checklist` (onboarding: every start is one item).
    #[serde(default)]
    pub kind: ClassKind,
    /// What this class is, in a sentence or two, for the user.
    #[serde(default)]
    pub summary: String,
    /// Set when the tree is not written yet; `kb lint` reports it.
    #[serde(default)]
    pub stub: bool,
    /// A live probe that measures this class's cause on the host; the TUI offers it with the
    /// class's walk.
    #[serde(default)]
    pub probe: Option<ProbeKind>,
    /// `classify` names this class only when no other class has error evidence in the log
    /// (the "none of the known classes" outcome), and at most as SUSPECTED.
    #[serde(default)]
    pub fallback: bool,
    #[serde(default)]
    pub signatures: Vec<Signature>,
    /// Decided from the host and the launch alone, so `kb lint` expects no log signature.
    #[serde(default)]
    pub no_log_signature: bool,
    /// Where the walk begins. A checklist has one start per item.
    #[serde(default)]
    pub start: Vec<SpannedStr>,
    #[serde(default)]
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub conclusions: Vec<Conclusion>,
    /// Releases where something this class claims changed; `holds:` ranges name them.
    #[serde(default)]
    pub changes: Vec<Change>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassKind {
    #[default]
    Failure,
    Checklist,
    /// Context signatures only (GPU names, versions): no tree, never named by `classify`.
    Context,
}

/// The live probes a class can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// The allocator/IPC probe (`sm120-doctor probe ipc`).
    Ipc,
    /// The functional peer-to-peer probe (`sm120-doctor probe p2p`).
    P2p,
}

/// A piece of log evidence for a class: a line, a traceback frame or a context line.
///
/// Logs are normalised before matching (ANSI colours, markdown, `\r` progress redraws, Windows
/// path separators; wrapped lines are also tried joined), so a pattern is written for the clean
/// line. Line numbers in sources vary by version, so patterns use `\d+` for them. Patterns are
/// plain regexes that POSIX `grep -E` also understands (the speed benchmark compares with it):
/// no look-around, no `(?i)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    pub id: SpannedStr,
    /// What the evidence is; decides its default weight and the confidence it can give.
    /// Without `kind`, `strength: strong` reads as `error` and `strength: supporting` as
    /// `supporting` (the format before kinds).
    #[serde(default)]
    pub kind: Option<SignatureKind>,
    /// The regular expression for a line. Required, except for a `frame` given by `file` and/or
    /// `function`.
    #[serde(default)]
    pub pattern: Option<SpannedStr>,
    /// `frame` only: a regex for the end of the frame's file path (`deep_gemm_warmup\.py`).
    #[serde(default)]
    pub file: Option<SpannedStr>,
    /// `frame` only: a regex for the frame's function name.
    #[serde(default)]
    pub function: Option<SpannedStr>,
    /// How much this evidence counts when classes are ranked. Defaults: error 10, warning 4,
    /// frame 3, supporting 1, context 0. A class is named from a total of 3.
    #[serde(default)]
    pub weight: Option<u32>,
    /// Legacy form of `kind`: `strong` = error, `supporting` = supporting.
    #[serde(default)]
    pub strength: Option<Strength>,
    /// The same line also matching one of these means it is not this signature.
    #[serde(default)]
    pub unless: Vec<SpannedStr>,
    /// Log-wide context (issue 19): the line counts only when a line of one of these signatures
    /// (ids) came before it in the same log ("Init COMPLETE, then a stall").
    #[serde(default)]
    pub after: Vec<SpannedStr>,
    /// Log-wide context (issue 19): the line does not count when any line of the same log
    /// matches one of these (an error, or the start having finished): a stall next to an error
    /// is a symptom of that error.
    #[serde(default)]
    pub unless_log: Vec<SpannedStr>,
    /// Signature ids of which at least one must also be in the log for this match to count
    /// (e.g. an SM12x GPU named somewhere).
    #[serde(default)]
    pub requires: Vec<SpannedStr>,
    /// Signature ids that, when one is in the log, make this match not count, unless a
    /// `confirm_with` signature is in the log too (e.g. a non-SM12x GPU named, none SM12x).
    #[serde(default)]
    pub excluded_by: Vec<SpannedStr>,
    /// Signature ids that confirm this evidence: with one of them in the log an `error` gives
    /// CONFIRMED, without them SUSPECTED. Empty: an `error` confirms on its own.
    #[serde(default)]
    pub confirm_with: Vec<SpannedStr>,
    /// Conditions on what the log shows about the run, whatever the class (run_signs.yaml):
    /// every one must hold for this match to count ("the run aborted", "a failure in graph
    /// capture").
    #[serde(default)]
    pub requires_run: Vec<RunCondition>,
    /// `context` only: an expression over facts (`alloc.expandable_segments`); when it is true
    /// on the host being diagnosed, this context counts as present even with no line in the log.
    #[serde(default)]
    pub when: Option<SpannedStr>,
    /// What to tell the user when this is the class's best evidence and it does not confirm the
    /// class (an unconfirmed error, a frame or a warning alone).
    #[serde(default)]
    pub unconfirmed: String,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub sources: Vec<String>,
}

impl Signature {
    /// The kind, from `kind` or the legacy `strength`.
    pub(crate) fn effective_kind(&self) -> SignatureKind {
        match (self.kind, self.strength) {
            (Some(k), _) => k,
            (None, Some(Strength::Supporting)) => SignatureKind::Supporting,
            (None, _) => SignatureKind::Error,
        }
    }
    pub(crate) fn effective_weight(&self) -> u32 {
        self.weight
            .unwrap_or_else(|| self.effective_kind().default_weight())
    }
}

/// What a signature's line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureKind {
    /// The failure itself: an exception, an error or assertion line. Names the class and can
    /// confirm it.
    Error,
    /// A line that is the finding without being a crash (a speed warning). Names the class at
    /// low confidence.
    Warning,
    /// A traceback frame (by file and function): names the class at most as suspected.
    Frame,
    /// A line that follows many failures; adds weight, does not name a class on its own.
    Supporting,
    /// Which GPU, versions, environment: never names a class; other signatures refer to it
    /// (`requires`, `excluded_by`, `confirm_with`).
    Context,
}

impl SignatureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureKind::Error => "error",
            SignatureKind::Warning => "warning",
            SignatureKind::Frame => "frame",
            SignatureKind::Supporting => "supporting",
            SignatureKind::Context => "context",
        }
    }
    pub(crate) fn default_weight(self) -> u32 {
        match self {
            SignatureKind::Error => 10,
            SignatureKind::Warning => 4,
            SignatureKind::Frame => 3,
            SignatureKind::Supporting => 1,
            SignatureKind::Context => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    #[default]
    Strong,
    Supporting,
}

/// One step of a walk: an automatic check, a manual question, or both (the question is asked
/// when the check cannot be decided from what is known).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub id: SpannedStr,
    /// A short name for the item a checklist start node begins ("CUDA driver version"), shown
    /// where the checklist lists its items.
    #[serde(default)]
    pub title: Option<String>,
    /// The question, as the user reads it.
    pub question: String,
    /// Expression over facts, log matches and answers; see `kb::expr`.
    #[serde(default)]
    pub check: Option<SpannedStr>,
    /// Asked when `check` is absent or unknown. Defaults to yes/no.
    #[serde(default)]
    pub ask: Option<Ask>,
    /// Why this question matters, with its source.
    #[serde(default)]
    pub why: String,
    pub yes: SpannedStr,
    pub no: SpannedStr,
    /// Where "I don't know" leads; without it the walk waits for an answer.
    #[serde(default)]
    pub unsure: Option<SpannedStr>,
    /// Where what `why` says about a release was read (`kb lint` asks for it).
    #[serde(default)]
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ask {
    /// Extra help shown with the manual question (how to find the answer).
    #[serde(default)]
    pub hint: String,
    #[serde(default = "default_yes_label")]
    pub yes_label: String,
    #[serde(default = "default_no_label")]
    pub no_label: String,
}

fn default_yes_label() -> String {
    "yes".into()
}
fn default_no_label() -> String {
    "no".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The check passed or the class does not apply.
    Ok,
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Confidence {
    #[serde(rename = "CONFIRMED")]
    Confirmed,
    #[serde(rename = "SUSPECTED")]
    Suspected,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Confirmed => "CONFIRMED",
            Confidence::Suspected => "SUSPECTED",
        }
    }
}

/// A leaf of the tree: what the tool concludes, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conclusion {
    pub id: SpannedStr,
    pub severity: Severity,
    pub confidence: Confidence,
    pub title: String,
    /// The title while the finding is not measured on this host (a trigger condition rests on
    /// a typed answer or an assumption): "would crash if …" where `title` says "will crash".
    #[serde(default)]
    pub title_unmeasured: Option<String>,
    /// Evidence lines; `{fact.name}` is replaced by the fact's value.
    #[serde(default)]
    pub evidence: Vec<SpannedStr>,
    #[serde(default)]
    pub sources: Vec<String>,
    /// Remedy ids, in the order to try them (cheapest first).
    #[serde(default)]
    pub remedies: Vec<SpannedStr>,
    /// What this finding does not explain or fix.
    #[serde(default)]
    pub does_not_fix: Vec<String>,
    /// Where sources disagree, shown to the user as is.
    #[serde(default)]
    pub contradictions: Vec<String>,
    /// The package versions this conclusion is true for; outside them the tool says what
    /// changed instead. Only for conclusions that report a problem.
    #[serde(default)]
    pub holds: Holds,
    /// What the conclusion says about the check: a problem, passed, not checked (an input is
    /// missing) or does not apply. Unset: from the severity (see [`Conclusion::state`]).
    #[serde(default)]
    pub state: Option<CheckState>,
    /// For `state: not_checked`: the inputs whose absence left it unchecked.
    #[serde(default)]
    pub missing: Vec<MissingInput>,
    /// Milestones a given log can show that contradict this conclusion's prediction ("will
    /// crash at graph capture" against a log that got past graph capture).
    #[serde(default)]
    pub refuted_by: Vec<RunMilestone>,
}

impl Conclusion {
    /// The declared state, else `passed` for `severity: ok` and `problem` above it.
    pub fn state(&self) -> CheckState {
        self.state.unwrap_or(if self.severity == Severity::Ok {
            CheckState::Passed
        } else {
            CheckState::Problem
        })
    }
}

/// The four things a check can say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    /// The check found something (any severity above ok).
    Problem,
    /// Checked and fine.
    Passed,
    /// Not decided from the inputs: one is missing (see [`MissingInput`]).
    NotChecked,
    /// The check is about something this host or launch does not have (not SM12x, one GPU).
    NotApplicable,
}

impl CheckState {
    pub const ALL: [CheckState; 4] = [
        CheckState::Problem,
        CheckState::Passed,
        CheckState::NotChecked,
        CheckState::NotApplicable,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            CheckState::Problem => "problem",
            CheckState::Passed => "passed",
            CheckState::NotChecked => "not_checked",
            CheckState::NotApplicable => "not_applicable",
        }
    }
}

/// An input the user can give whose absence leaves a check undecided. Front ends say how to
/// give it in their own words (a CLI option, a TUI key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingInput {
    /// A log of the failing run.
    Log,
    /// The vLLM launch (command, compose file, unit …).
    Launch,
    /// The allocator/IPC probe.
    Probe,
    /// The peer-to-peer probe.
    P2pProbe,
    /// Host facts a snapshot or collect-env would carry.
    Snapshot,
    /// A log that shows how the run ended: the given one shows neither a failure nor the run
    /// coming up (cut, or another program's output).
    RunOutcome,
}

impl MissingInput {
    pub fn as_str(self) -> &'static str {
        match self {
            MissingInput::Log => "log",
            MissingInput::Launch => "launch",
            MissingInput::Probe => "probe",
            MissingInput::P2pProbe => "p2p_probe",
            MissingInput::Snapshot => "snapshot",
            MissingInput::RunOutcome => "run_outcome",
        }
    }
}

/// A point a run got past, as a log shows it (the engine's `run_signs::Milestone`, which the
/// knowledge base cannot import; the engine maps one onto the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMilestone {
    WeightsLoaded,
    GraphCaptureDone,
    WarmupDone,
    StartupComplete,
    RequestServed,
}

/// `holds:`: per package (`vllm`, `torch`, `flashinfer`, `deep_gemm`), the versions a claim
/// is true for.
pub type Holds = BTreeMap<String, HoldsRange>;

/// One package's range, and the change at each of its edges.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldsRange {
    /// Half-open PEP 440 intervals: `>=0.24.0,<0.25.0`, alternatives joined with `||`
    /// (see `vllm::version`).
    pub range: SpannedStr,
    /// The ids of the changes at the range's edges, one per edge.
    pub changes: Vec<SpannedStr>,
}

/// A release where something the knowledge base claims changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    /// Unique across the knowledge base.
    pub id: SpannedStr,
    /// `vllm`, `torch`, `flashinfer` or `deep_gemm`.
    pub package: SpannedStr,
    /// The first release with the change.
    pub version: SpannedStr,
    pub kind: ChangeKind,
    /// The PR or commit that made it, when known (`PR #47164`).
    #[serde(default)]
    pub by: String,
    /// What changed, as the user reads it.
    pub text: String,
    /// How to tell whether a build between releases (a nightly, an rc) has it.
    #[serde(default)]
    pub check: String,
    /// Where this is established (PR, file at a release, the release's wheel).
    #[serde(default)]
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The problem ends here.
    Fixed,
    /// The problem (or the code path) begins here.
    Introduced,
    /// The behaviour differs from here on.
    Changed,
    /// A fixed problem comes back here.
    Regressed,
}

impl ChangeKind {
    /// How the tool says it: "fixed in vLLM 0.25.0".
    pub fn words(self) -> &'static str {
        match self {
            ChangeKind::Fixed => "fixed in",
            ChangeKind::Introduced => "introduced in",
            ChangeKind::Changed => "changed in",
            ChangeKind::Regressed => "back in",
        }
    }
}

/// `remedies.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemedyFile {
    pub remedies: Vec<Remedy>,
    /// What is known about the base of each PR a `patch_script` edit applies.
    #[serde(default)]
    pub prs: Vec<PrBase>,
    /// Releases where something a remedy relies on changed; remedies' `holds:` name them.
    #[serde(default)]
    pub changes: Vec<Change>,
}

/// The vLLM version line a PR was written for, which the apply script checks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrBase {
    pub pr: Spanned<u32>,
    /// A version prefix: `0.24` accepts `0.24.0`, `0.24.1`, `0.24.1.dev3+g…`.
    pub expected_version: SpannedStr,
    /// Why this version, with the reports it comes from.
    pub why: String,
    #[serde(default)]
    pub sources: Vec<String>,
    /// The PR's head commit the remedy was reviewed at (40 hex digits); the apply script
    /// refuses another head.
    #[serde(default)]
    pub head_commit: Option<SpannedStr>,
    /// sha256 of the reviewed diff without its `index` lines (64 hex digits); the apply script
    /// refuses another diff.
    #[serde(default)]
    pub diff_sha256: Option<SpannedStr>,
}

/// `hardware.yaml`: tables of names the facts use.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareFile {
    #[serde(default)]
    pub same_chip: Vec<SameChipGroup>,
    #[serde(default)]
    pub model_families: Vec<ModelFamilyDef>,
    #[serde(default)]
    pub fp8_formats: Vec<SpannedStr>,
    #[serde(default)]
    pub other_formats: Vec<SpannedStr>,
}

/// SKUs that are one chip, by vLLM device name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SameChipGroup {
    pub chip: SpannedStr,
    pub devices: Vec<SpannedStr>,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub sources: Vec<String>,
}

/// A model family recognised from a model name (first match wins).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFamilyDef {
    pub id: SpannedStr,
    /// Lower-case name fragments, `_` written as `-`.
    pub names: Vec<SpannedStr>,
    #[serde(default)]
    pub block_fp8: bool,
    #[serde(default)]
    pub sparse_attention: bool,
    #[serde(default)]
    pub sources: Vec<String>,
}

/// `allocator.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocatorFile {
    pub allocator: AllocatorText,
}

/// What the tool says about PyTorch's allocator variables. Each text may hold only the
/// `{placeholders}` its field lists ([`AllocFixNotes::PLACEHOLDERS`], [`AllocPanel::PLACEHOLDERS`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocatorText {
    /// The precedence rule the texts describe (a name from `vllm::alloc_conf::Precedence`); the
    /// loader checks it is the rule the tool applies.
    pub precedence: SpannedStr,
    #[serde(default)]
    pub sources: Vec<String>,
    pub fix_notes: AllocFixNotes,
    pub panel: AllocPanel,
}

/// Notes `fix` adds when it edits a launch's allocator config.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocFixNotes {
    pub not_in_launch: SpannedStr,
    pub passed_through: SpannedStr,
    pub dynamic: SpannedStr,
    pub cuda_in_effect: SpannedStr,
    pub generic_in_effect: SpannedStr,
    pub nothing_to_drop: SpannedStr,
    pub dropped: SpannedStr,
    pub dropped_invalid: SpannedStr,
    pub kept: SpannedStr,
    pub left_empty: SpannedStr,
    pub masked_also_on: SpannedStr,
    pub from_host: SpannedStr,
    pub no_launch: SpannedStr,
}

impl AllocFixNotes {
    /// (field, text, the placeholders it may use).
    pub const PLACEHOLDERS: &[(&str, &[&str])] = &[
        ("not_in_launch", &["option", "value"]),
        ("passed_through", &["line", "name", "value"]),
        ("dynamic", &["line", "name", "option"]),
        ("cuda_in_effect", &[]),
        ("generic_in_effect", &[]),
        (
            "nothing_to_drop",
            &["line", "name", "current", "option", "why"],
        ),
        ("dropped", &["line", "option", "name", "why"]),
        (
            "dropped_invalid",
            &["line", "option", "value", "name", "why"],
        ),
        ("kept", &["kept"]),
        ("left_empty", &[]),
        ("masked_also_on", &["line", "option"]),
        ("from_host", &["name", "source", "option", "value"]),
        ("no_launch", &["option"]),
    ];

    /// Every text by field name, in [`Self::PLACEHOLDERS`] order.
    pub fn texts(&self) -> [(&'static str, &SpannedStr); 13] {
        [
            ("not_in_launch", &self.not_in_launch),
            ("passed_through", &self.passed_through),
            ("dynamic", &self.dynamic),
            ("cuda_in_effect", &self.cuda_in_effect),
            ("generic_in_effect", &self.generic_in_effect),
            ("nothing_to_drop", &self.nothing_to_drop),
            ("dropped", &self.dropped),
            ("dropped_invalid", &self.dropped_invalid),
            ("kept", &self.kept),
            ("left_empty", &self.left_empty),
            ("masked_also_on", &self.masked_also_on),
            ("from_host", &self.from_host),
            ("no_launch", &self.no_launch),
        ]
    }
}

/// The TUI environment panel's reading of the allocator variables.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocPanel {
    pub in_effect: SpannedStr,
    pub ignored: SpannedStr,
    pub option_on: SpannedStr,
    pub option_off: SpannedStr,
    pub option_absent: SpannedStr,
    pub option_invalid: SpannedStr,
    /// The environment sets an allocator variable but none reaches the engine (a container).
    pub none_reaches: SpannedStr,
    /// Which allocator config the engine gets is not known (an env file not given, ...).
    pub not_known: SpannedStr,
}

impl AllocPanel {
    pub const PLACEHOLDERS: &[(&str, &[&str])] = &[
        ("in_effect", &["var"]),
        ("ignored", &["var", "other"]),
        ("option_on", &["option"]),
        ("option_off", &["option"]),
        ("option_absent", &["option"]),
        ("option_invalid", &["option", "value"]),
        ("none_reaches", &["source"]),
        ("not_known", &["reason"]),
    ];

    pub fn texts(&self) -> [(&'static str, &SpannedStr); 8] {
        [
            ("in_effect", &self.in_effect),
            ("ignored", &self.ignored),
            ("option_on", &self.option_on),
            ("option_off", &self.option_off),
            ("option_absent", &self.option_absent),
            ("option_invalid", &self.option_invalid),
            ("none_reaches", &self.none_reaches),
            ("not_known", &self.not_known),
        ]
    }
}

/// Fill `{name}` placeholders of a table text from `vars`; an unlisted name stays as written
/// (the loader has already rejected names a text may not use).
pub fn fill_text(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                let name = &after[..end];
                match vars.iter().find(|(n, _)| *n == name) {
                    Some((_, v)) => out.push_str(v),
                    None => out.push_str(&rest[start..start + end + 2]),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remedy {
    pub id: SpannedStr,
    pub title: String,
    pub cost: Cost,
    pub confidence: Confidence,
    /// What it was verified on (hardware, version, report).
    pub verified: String,
    #[serde(default)]
    pub sources: Vec<String>,
    #[serde(default)]
    pub edits: Vec<Edit>,
    /// Known limits of this remedy.
    #[serde(default)]
    pub limits: Vec<String>,
    /// Remedies this one makes unnecessary: a plan that has both leaves those out, with the
    /// reason (`--enforce-eager` captures no graph, so a graph-capture remedy is moot).
    #[serde(default)]
    pub moots: Vec<Relation>,
    /// Remedies that cannot go into one plan with this one (either side may declare it): a plan
    /// keeps the one of the more severe finding and refuses the other, with the reason.
    #[serde(default)]
    pub conflicts: Vec<Relation>,
    /// The package versions this remedy applies to; outside them it is not offered.
    #[serde(default)]
    pub holds: Holds,
}

/// A relation from one remedy to another, with why it holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Relation {
    pub remedy: SpannedStr,
    pub why: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// Lower is cheaper; remedies are offered in this order.
    pub rank: u32,
    pub text: String,
}

/// A change to the user's launch or host that a remedy makes (knowledge/remedies.yaml).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    SetEnv {
        name: String,
        value: String,
    },
    UnsetEnv {
        name: String,
    },
    /// Remove one option (e.g. `expandable_segments`) from the allocator config in effect.
    DropAllocOption {
        option: String,
    },
    AddFlag {
        flag: String,
        #[serde(default)]
        value: Option<String>,
    },
    RemoveFlag {
        flag: String,
    },
    SetCompilationConfig {
        key: String,
        value: String,
    },
    PatchScript {
        pr: u32,
    },
    /// A step the tool cannot make for the user (upgrade, downgrade, file copy).
    Manual {
        text: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_texts_are_filled_by_name() {
        assert_eq!(
            fill_text(
                "line {line}: {name} ({other})",
                &[("line", "3"), ("name", "X")]
            ),
            "line 3: X ({other})"
        );
        assert_eq!(fill_text("no braces", &[]), "no braces");
        assert_eq!(fill_text("open {brace", &[("brace", "b")]), "open {brace");
    }

    #[test]
    fn every_text_field_has_its_placeholder_list() {
        // The loader checks each text against its list: a field listed in `texts()` without a
        // placeholder list (or the other way round) would go unchecked.
        let kb = crate::kb::load_embedded_yaml(|_| true).expect("kb");
        let names: Vec<&str> = AllocFixNotes::PLACEHOLDERS.iter().map(|p| p.0).collect();
        let texts: Vec<&str> = kb.allocator.fix_notes.texts().iter().map(|t| t.0).collect();
        assert_eq!(names, texts);
        assert_eq!(names.len(), 13);
        let panel: Vec<&str> = AllocPanel::PLACEHOLDERS.iter().map(|p| p.0).collect();
        let texts: Vec<&str> = kb.allocator.panel.texts().iter().map(|t| t.0).collect();
        assert_eq!(panel, texts);
        assert_eq!(panel.len(), 8);
    }
}

/// `run_signs.yaml`: the lines that show how a run went, whatever the failure class (a
/// traceback, an error or abort line, a start-up phase, a milestone, a stall). The engine's log
/// reader (engine/classify/run_reader.rs) recognises them; the patterns are data, here.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSignsFile {
    pub run_signs: Vec<RunSignDef>,
}

/// One pattern of `run_signs.yaml`. The pattern is matched against a line's message, after the
/// prefixes logging stacks add (`(EngineCore_DP0 pid=…)`, `[rank0]:`, timestamps) are taken
/// off; `level` patterns match the level prefix that starts a message and the rest of the line
/// is then read as the message.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSignDef {
    pub id: SpannedStr,
    pub sign: RunSignKind,
    pub pattern: SpannedStr,
    /// `failure` only: what kind of failure the line shows.
    #[serde(default)]
    pub failure: Option<RunFailureKind>,
    /// `failure` only: the line follows from an earlier failure (a wrapper's "see root cause
    /// above", a worker that died after the error): whatever explains that failure explains it.
    #[serde(default)]
    pub consequence: bool,
    /// `progress`: the phase the line shows the run in (required); `failure`: the phase it
    /// shows the failure in (a warmup's own error), when it says.
    #[serde(default)]
    pub phase: Option<RunPhase>,
    /// `progress` only: the point the line shows the run got past.
    #[serde(default)]
    pub milestone: Option<RunMilestone>,
    /// `stall` only: how many such lines after the last progress line show a hang (default 2:
    /// one warning in a pasted excerpt is not a hang).
    #[serde(default)]
    pub min_count: Option<u32>,
    /// Literals one of which every matching line holds, for the one prefilter search over a
    /// block; derived from the pattern when left out (the loader refuses a pattern with none).
    #[serde(default)]
    pub needles: Vec<SpannedStr>,
    /// The line also matching one of these means it is not this sign.
    #[serde(default)]
    pub unless: Vec<SpannedStr>,
    /// Lines as the upstream code prints them; the loader checks that the pattern and the
    /// prefilter find each one.
    pub examples: Vec<SpannedStr>,
    #[serde(default)]
    pub note: String,
    /// The upstream file and release that prints the line.
    pub sources: Vec<String>,
}

/// What a run-sign line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunSignKind {
    /// The level prefix of an error record (`ERROR 05-12 10:00:01 [core.py:123] `): the line
    /// is a failure unless it is part of a traceback; the message after it is read on.
    Level,
    /// `Traceback (most recent call last):`.
    Traceback,
    /// A traceback frame (`File "…", line N, in f`).
    Frame,
    /// A line that shows a failure.
    Failure,
    /// A start-up or serving line that shows progress (and the phase the run is in).
    Progress,
    /// A warning that the run is waiting (a stall, a timeout).
    Stall,
    /// The run was stopped from outside (SIGINT / Ctrl-C, SIGTERM): after a stall, the user gave
    /// up on a hang.
    Interrupt,
}

/// Mirrors the engine's `FailureKind` (the knowledge base does not import the engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunFailureKind {
    Exception,
    Assertion,
    CudaError,
    NcclError,
    Abort,
    ErrorLine,
}

/// Mirrors the engine's `Phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunPhase {
    /// The engine starting: version banner, arguments, resolved configuration.
    Start,
    /// Process-group and NCCL communicator set-up (every rank waits for its peers).
    CommInit,
    Load,
    Compile,
    Profile,
    GraphCapture,
    Warmup,
    Serving,
}

/// A condition on what the log shows about the run, for a signature's `requires_run` (every
/// one must hold for the signature's match to count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunCondition {
    /// Any failure line.
    Failure,
    /// A failure line of this kind (`failure_kind: abort`: the run aborted).
    FailureKind(RunFailureKind),
    /// A failure line in this phase (`failure_in: graph_capture`).
    FailureIn(RunPhase),
    /// The log shows a hang.
    Hang,
    /// The log shows the run got past this point.
    Reached(RunMilestone),
    /// The log does not show the run getting past this point.
    NotReached(RunMilestone),
}
