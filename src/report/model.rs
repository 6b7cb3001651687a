//! The report model: one versioned, serialisable value that every report format renders.
//!
//! It mirrors the engine's [`Diagnosis`] in types of its own so the JSON contract does not move
//! when engine internals do, and so a written report can be read back (`Deserialize`).

use super::command::{self, RemedyAction};
use crate::engine::classify::{ClassEvidence, LogMatch, LogText};
use crate::engine::plan::{self, Choices, ChosenBy, Plan};
use crate::engine::versions::VersionCheck;
use crate::engine::{
    Answer, AnsweredBy, Answers, Basis, Diagnosis, Finding, Mode, Outcome, RemedyView, SetAside,
};
use crate::facts::Facts;
use crate::kb::KnowledgeBase;
use crate::kb::schema::{CheckState, Confidence, Edit, MissingInput, Severity};
use crate::snapshot::HostSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON report format. Bump on an incompatible change (and regenerate
/// `schema/report.schema.json` from these types: `UPDATE_SCHEMA=1 cargo test --test report_schema`).
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(
    feature = "schema",
    schemars(
        title = "sm120-doctor diagnostic report",
        description = "Output of `sm120-doctor report --format json` (src/report/model.rs). Replayable: `sm120-doctor check --snapshot report.json`."
    )
)]
pub struct Report {
    #[cfg_attr(feature = "schema", schemars(extend("const" = REPORT_SCHEMA_VERSION)))]
    pub schema_version: u32,
    pub tool: Tool,
    /// `failures` (failure classes) or `all` (failure classes and the onboarding checklist).
    #[cfg_attr(feature = "schema", schemars(schema_with = "mode_schema"))]
    pub mode: String,
    /// False only when the user asked for `--no-redact`.
    pub redacted: bool,
    /// What redaction replaced, by kind (never the values).
    pub redactions: Vec<Redaction>,
    pub snapshot: HostSnapshot,
    /// The user's answers to manual questions, by node id.
    pub answers: BTreeMap<String, Answer>,
    /// The logs given (names only; matched lines are in `log_matches`).
    pub logs: Vec<LogRef>,
    /// The fix plan: every finding's chosen remedy composed into one launch command, with the
    /// steps and scripts it needs and what was left out (see `engine::plan`).
    pub plan: Plan,
    /// Every finding, most severe first (passed checks have severity `ok`).
    pub findings: Vec<ReportFinding>,
    /// Questions the tool could not decide and nobody answered yet.
    pub pending: Vec<Pending>,
    pub walks: Vec<ReportWalk>,
    /// Classes the log signatures point at, most likely first.
    pub classes_in_logs: Vec<String>,
    /// Per class in `classes_in_logs` (same order): how sure the classifier is, and why.
    #[serde(default)]
    pub log_classes: Vec<ReportLogClass>,
    pub log_matches: Vec<ReportLogMatch>,
    /// Classes that only have log signatures so far (no tree).
    pub signature_only_classes: Vec<String>,
    /// How many environment variables a redacted report leaves out of `snapshot.env`: it lists
    /// only those vLLM's collect-env reports, the search paths and the ones a knowledge-base
    /// check reads (`report::host::env_listed`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub env_not_listed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Redaction {
    /// `secret`, `credentials_in_url`, `hostname`, `user`, `home_path`, `gpu_uuid`.
    // The names `redact::Kind::as_str` gives (tests/report_schema.rs checks the list).
    #[cfg_attr(feature = "schema", schemars(extend("enum" = [
        "secret",
        "credentials_in_url",
        "hostname",
        "user",
        "home_path",
        "gpu_uuid"
    ])))]
    pub kind: String,
    /// How many values or spans of this kind were replaced.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub count: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LogRef {
    pub name: String,
}

/// The classifier's verdict on one class the logs point at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportLogClass {
    pub class: String,
    /// `CONFIRMED`, `SUSPECTED` or `LOW`.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::engine::classify::MatchConfidence")
    )]
    pub confidence: String,
    /// Total weight of the signatures that matched.
    pub score: u32,
    /// What the knowledge base says when the evidence does not confirm the class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The signatures that matched, strongest first.
    pub signatures: Vec<String>,
}

impl From<&ClassEvidence> for ReportLogClass {
    fn from(e: &ClassEvidence) -> Self {
        ReportLogClass {
            class: e.class.clone(),
            confidence: e.confidence.as_str().to_string(),
            score: e.score,
            note: e.note.clone(),
            signatures: e.signatures.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportLogMatch {
    pub class: String,
    pub signature: String,
    pub file: String,
    /// 1-based line number.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub line: usize,
    pub text: String,
}

impl From<&LogMatch> for ReportLogMatch {
    fn from(m: &LogMatch) -> Self {
        ReportLogMatch {
            class: m.class.clone(),
            signature: m.signature.clone(),
            file: m.file.clone(),
            line: m.line,
            text: m.text.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportRemedy {
    pub id: String,
    pub title: String,
    pub cost: String,
    pub cost_rank: u32,
    pub confidence: Confidence,
    pub verified: String,
    pub sources: Vec<String>,
    pub limits: Vec<String>,
    pub edits: Vec<Edit>,
}

impl From<&RemedyView> for ReportRemedy {
    fn from(r: &RemedyView) -> Self {
        ReportRemedy {
            id: r.id.clone(),
            title: r.title.clone(),
            cost: r.cost.clone(),
            cost_rank: r.cost_rank,
            confidence: r.confidence,
            verified: r.verified.clone(),
            sources: r.sources.clone(),
            limits: r.limits.clone(),
            edits: r.edits.clone(),
        }
    }
}

/// A report written before findings carried a state: `not_checked` claims least (it is never
/// shown as a pass).
fn state_unknown() -> CheckState {
    CheckState::NotChecked
}

/// The remedy picked for a finding (`--remedy ID`, else the cheapest) and what to run for it
/// alone; the plan combines the findings' remedies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ChosenRemedy {
    pub id: String,
    /// `user` when picked with `--remedy` or in the TUI, `cheapest` otherwise.
    #[cfg_attr(feature = "schema", schemars(with = "String", extend("enum" = ["user", "cheapest"])))]
    pub chosen_by: ChosenBy,
    /// The plan applies it (false: below warning and not picked, or left out: see
    /// `plan.left_out`).
    pub in_plan: bool,
    pub action: RemedyAction,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportFinding {
    pub id: String,
    pub class: String,
    #[cfg_attr(feature = "schema", schemars(with = "kb_schema::Severity"))]
    pub severity: Severity,
    /// `problem`, `passed` (checked and fine), `not_checked` (an input is missing: see
    /// `missing`) or `not_applicable`. Reports written before it read as from the severity.
    #[cfg_attr(feature = "schema", schemars(with = "kb_schema::CheckState"))]
    #[serde(default = "state_unknown")]
    pub state: CheckState,
    /// For `not_checked`: the inputs not given (`log`, `launch`, `probe`, `p2p_probe`,
    /// `snapshot`).
    #[cfg_attr(feature = "schema", schemars(with = "Vec<kb_schema::MissingInput>"))]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingInput>,
    /// The claim: confirmed upstream or suspected.
    pub confidence: Confidence,
    /// The match: does it apply to this host (`measured`, `answered`, `assumed`).
    #[serde(rename = "match")]
    pub matched: Basis,
    /// Nodes of the walk decided by a typed answer.
    pub answered: Vec<String>,
    /// Nodes decided by an assumption, and what was assumed.
    pub assumed: Vec<String>,
    pub assumptions: Vec<String>,
    /// Typed answers an input contradicted on the way (the input won).
    pub contradicted: Vec<String>,
    pub title: String,
    pub evidence: Vec<String>,
    pub sources: Vec<String>,
    /// Cheapest first.
    pub remedies: Vec<ReportRemedy>,
    pub chosen_remedy: Option<ChosenRemedy>,
    pub does_not_fix: Vec<String>,
    pub contradictions: Vec<String>,
    pub facts_used: Vec<String>,
    pub log_lines: Vec<ReportLogMatch>,
    /// The matched lines in their context (the traceback they belong to, or a few lines
    /// around), nearby matches together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_excerpts: Vec<super::excerpt::LogExcerpt>,
    /// What the version ranges (`holds:`) of the conclusion and its remedies said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<ReportVersionCheck>,
    /// A given log got past the point this finding predicts a failure at (the conclusion's
    /// `refuted_by:`), so the finding is at most a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refuted: Option<ReportRefutation>,
    /// Where the log this finding rests on shows a run that differs from this host (another
    /// torch, another GPU): the log's value decided the finding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_differs: Vec<ReportRunDiffers>,
}

/// A fact the log states about its run that differs from the host snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportRunDiffers {
    pub what: crate::engine::log_env::RunFact,
    /// The log's value.
    pub in_log: String,
    /// This host's value.
    pub on_host: String,
    pub file: String,
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub line: usize,
}

/// The milestone line that contradicts a prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportRefutation {
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::engine::classify::run_signs::Milestone")
    )]
    pub milestone: String,
    pub file: String,
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub line: usize,
    pub text: String,
    /// What was compared between the log and the launch and found the same (`model`, `tp`).
    pub same: Vec<String>,
}

/// One `holds:` range checked against the installed version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportVersionCheck {
    /// The conclusion or remedy id.
    pub subject: String,
    /// `vllm`, `torch`, `flashinfer` or `deep_gemm`.
    #[cfg_attr(feature = "schema", schemars(schema_with = "package_schema"))]
    pub package: String,
    pub range: String,
    /// The installed version as read (null: not known).
    pub installed: Option<String>,
    /// `inside`, `outside` or `unknown`.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "crate::engine::versions::Verdict")
    )]
    pub verdict: String,
    /// The change that puts it outside, or the one a question is about.
    pub change: Option<ReportChange>,
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportChange {
    pub id: String,
    #[cfg_attr(feature = "schema", schemars(schema_with = "package_schema"))]
    pub package: String,
    pub version: String,
    /// `fixed`, `introduced`, `changed` or `regressed`.
    #[cfg_attr(feature = "schema", schemars(with = "kb_schema::ChangeKind"))]
    pub kind: String,
    pub by: String,
    pub text: String,
    pub sources: Vec<String>,
    /// `fixed in vLLM 0.25.0 by PR #47164`.
    pub said: String,
}

/// The snake_case word serde gives a unit enum value.
fn word(v: &impl Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|j| j.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl From<&VersionCheck> for ReportVersionCheck {
    fn from(c: &VersionCheck) -> Self {
        ReportVersionCheck {
            subject: c.subject.clone(),
            package: c.package.clone(),
            range: c.range.clone(),
            installed: c.installed.clone(),
            verdict: word(&c.verdict),
            change: c.change.as_ref().map(|ch| ReportChange {
                id: ch.id.clone(),
                package: ch.package.clone(),
                version: ch.version.clone(),
                kind: word(&ch.kind),
                by: ch.by.clone(),
                text: ch.text.clone(),
                sources: ch.sources.clone(),
                said: ch.said.clone(),
            }),
            note: c.note.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Pending {
    /// The first walk that waits at this question.
    pub class: String,
    pub node: String,
    pub question: String,
    pub hint: String,
    pub reason: String,
    /// Every waiting node one answer decides (the same check in several walks), `node` first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// The classes of those walks, `class` first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UsedFact {
    pub name: String,
    pub value: String,
    pub source: String,
    /// The value stands for an input not given (no log, the probe not run).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub assumed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportStep {
    pub node: String,
    pub question: String,
    pub answer: Answer,
    /// `auto` (decided from facts) or `user`.
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["auto", "user"])))]
    pub by: String,
    /// The facts an automatic answer used.
    pub facts: Vec<UsedFact>,
    pub why: String,
    /// What decided it: `measured`, `answered` or `assumed`.
    pub basis: Basis,
    /// The user's answer to this node, set aside because an input decides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_answer: Option<SetAside>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum ReportOutcome {
    Concluded { conclusion: String },
    NeedsAnswer { node: String, question: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReportWalk {
    pub class: String,
    pub start: String,
    pub steps: Vec<ReportStep>,
    pub outcome: ReportOutcome,
}

/// The schema of `Report::mode`: the names [`mode_name`] gives.
#[cfg(feature = "schema")]
fn mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    // A new `Mode` stops this match compiling until it is listed below.
    let _every_mode_listed = |m: Mode| match m {
        Mode::Failures | Mode::Onboarding | Mode::All => (),
    };
    let names = [Mode::Failures, Mode::Onboarding, Mode::All].map(mode_name);
    schemars::json_schema!({ "type": "string", "enum": names })
}

/// The schema of a package name: the keys of every [`Package`](crate::vllm::version::Package).
#[cfg(feature = "schema")]
fn package_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    use crate::vllm::version::Package;
    let names = Package::ALL.map(Package::key);
    schemars::json_schema!({ "type": "string", "enum": names })
}

/// Schema-only mirrors of four knowledge-base types the report embeds (`Severity`, `CheckState`,
/// `MissingInput`, `ChangeKind`). `Edit` and `Confidence` derive their schema in the kb crate
/// (its feature `schema`); these four stay mirrored because the kb types document their
/// variants, and schemars turns documented variants into a `oneOf` of `const`s where the
/// committed schema has a plain string `enum`. Each `From` is an exhaustive match that names
/// every variant, so a change to the KB type stops this compiling until the mirror follows;
/// `tests::kb_mirrors_serialise_like_the_kb_types` checks that both serialise to the same JSON.
#[cfg(feature = "schema")]
mod kb_schema {
    use crate::kb::schema as kb;
    use serde::Serialize;

    #[derive(Debug, PartialEq, Serialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(rename_all = "snake_case")]
    pub(super) enum Severity {
        Ok,
        Info,
        Warning,
        Error,
    }

    impl From<kb::Severity> for Severity {
        fn from(s: kb::Severity) -> Self {
            match s {
                kb::Severity::Ok => Severity::Ok,
                kb::Severity::Info => Severity::Info,
                kb::Severity::Warning => Severity::Warning,
                kb::Severity::Error => Severity::Error,
            }
        }
    }

    /// What a check says (`kb::schema::CheckState`).
    #[derive(Debug, PartialEq, Serialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(rename_all = "snake_case")]
    pub(super) enum CheckState {
        Problem,
        Passed,
        NotChecked,
        NotApplicable,
    }

    impl From<kb::CheckState> for CheckState {
        fn from(s: kb::CheckState) -> Self {
            match s {
                kb::CheckState::Problem => CheckState::Problem,
                kb::CheckState::Passed => CheckState::Passed,
                kb::CheckState::NotChecked => CheckState::NotChecked,
                kb::CheckState::NotApplicable => CheckState::NotApplicable,
            }
        }
    }

    /// An input not given (`kb::schema::MissingInput`).
    #[derive(Debug, PartialEq, Serialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(rename_all = "snake_case")]
    pub(super) enum MissingInput {
        Log,
        Launch,
        Probe,
        P2pProbe,
        Snapshot,
        RunOutcome,
    }

    impl From<kb::MissingInput> for MissingInput {
        fn from(m: kb::MissingInput) -> Self {
            match m {
                kb::MissingInput::Log => MissingInput::Log,
                kb::MissingInput::Launch => MissingInput::Launch,
                kb::MissingInput::Probe => MissingInput::Probe,
                kb::MissingInput::P2pProbe => MissingInput::P2pProbe,
                kb::MissingInput::Snapshot => MissingInput::Snapshot,
                kb::MissingInput::RunOutcome => MissingInput::RunOutcome,
            }
        }
    }

    #[derive(Debug, PartialEq, Serialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(rename_all = "snake_case")]
    pub(super) enum ChangeKind {
        Fixed,
        Introduced,
        Changed,
        Regressed,
    }

    impl From<kb::ChangeKind> for ChangeKind {
        fn from(k: kb::ChangeKind) -> Self {
            match k {
                kb::ChangeKind::Fixed => ChangeKind::Fixed,
                kb::ChangeKind::Introduced => ChangeKind::Introduced,
                kb::ChangeKind::Changed => ChangeKind::Changed,
                kb::ChangeKind::Regressed => ChangeKind::Regressed,
            }
        }
    }
}

/// What the report is built from.
pub struct ReportInput<'a> {
    pub kb: &'a KnowledgeBase,
    pub snapshot: &'a HostSnapshot,
    pub answers: &'a Answers,
    pub logs: &'a [LogText],
    pub mode: Mode,
    pub diagnosis: &'a Diagnosis,
    /// The remedies the user picked: per finding (the TUI) or by id (`--remedy`, each applying
    /// to the findings that offer it).
    pub choices: &'a Choices,
    /// The launch's files as given (`--launch-with`), so the plan edits each where its setting
    /// lives; `None`: the snapshot's launch text.
    pub launch_source: Option<&'a crate::launch::LaunchSource>,
}

/// `--remedy` named an id no finding offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRemedy {
    pub id: String,
    pub offered: Vec<String>,
}

impl std::fmt::Display for UnknownRemedy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.offered.is_empty() {
            write!(f, "--remedy {}: no finding offers a remedy", self.id)
        } else {
            write!(
                f,
                "--remedy {}: no finding offers it (offered: {})",
                self.id,
                self.offered.join(", ")
            )
        }
    }
}

pub(crate) fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Failures => "failures",
        Mode::Onboarding => "onboarding",
        Mode::All => "all",
    }
}

/// Pick the remedy shown for one finding: the user's choice (see [`plan::choice_for`]), else
/// the default ([`plan::default_remedy`]: cheapest confirmed), also below warning (where the
/// plan applies it only when picked).
pub fn choose<'r>(f: &'r Finding, choices: &Choices) -> Option<(&'r RemedyView, ChosenBy)> {
    if let Some(choice) = plan::choice_for(f, choices) {
        return Some(choice);
    }
    plan::default_remedy(f).map(|r| (r, ChosenBy::Cheapest))
}

fn finding(f: &Finding, input: &ReportInput<'_>, facts: &Facts, plan: &Plan) -> ReportFinding {
    let snap = input.snapshot;
    let chosen = if f.severity > Severity::Ok {
        choose(f, input.choices).map(|(r, by)| ChosenRemedy {
            id: r.id.clone(),
            chosen_by: by,
            in_plan: plan.remedies.contains(&r.id)
                && plan::choice_for(f, input.choices).is_some_and(|(c, _)| c.id == r.id),
            action: command::action(&r.id, &r.edits, snap, facts, input.kb),
        })
    } else {
        None
    };
    ReportFinding {
        id: f.id.clone(),
        class: f.class.clone(),
        severity: f.severity,
        state: f.state,
        missing: f.missing.clone(),
        confidence: f.confidence,
        matched: f.matched,
        answered: f.answered.clone(),
        assumed: f.assumed.clone(),
        assumptions: f.assumptions.clone(),
        contradicted: f.contradicted.clone(),
        title: f.title.to_string(),
        evidence: f.evidence.iter().map(ToString::to_string).collect(),
        sources: f.sources.clone(),
        remedies: f.remedies.iter().map(ReportRemedy::from).collect(),
        chosen_remedy: chosen,
        does_not_fix: f.does_not_fix.clone(),
        contradictions: f.contradictions.clone(),
        facts_used: f.facts_used.clone(),
        log_lines: f.log_lines.iter().map(ReportLogMatch::from).collect(),
        log_excerpts: super::excerpt::excerpts(
            input.logs,
            &f.log_lines
                .iter()
                .map(|m| (m.file.clone(), m.line))
                .collect::<Vec<_>>(),
        ),
        versions: f.versions.iter().map(ReportVersionCheck::from).collect(),
        refuted: f.refuted.as_ref().map(|r| ReportRefutation {
            milestone: word(&r.milestone),
            file: r.file.clone(),
            line: r.line,
            text: r.text.clone(),
            same: r.same.iter().map(|s| s.to_string()).collect(),
        }),
        run_differs: f
            .run_differs
            .iter()
            .map(|d| ReportRunDiffers {
                what: d.what,
                in_log: d.in_log.clone(),
                on_host: d.on_host.clone(),
                file: d.file.clone(),
                line: d.line,
            })
            .collect(),
    }
}

/// Build the (unredacted) report. Redact it with [`super::redact::redact`] before rendering.
pub fn build(input: &ReportInput<'_>) -> Result<Report, UnknownRemedy> {
    let d = input.diagnosis;
    let offered: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for f in d.findings.iter().filter(|f| f.severity > Severity::Ok) {
            for r in &f.remedies {
                if !v.contains(&r.id) {
                    v.push(r.id.clone());
                }
            }
        }
        v
    };
    for c in input
        .choices
        .preferred
        .iter()
        .chain(input.choices.per_finding.values())
    {
        if !offered.contains(c) {
            return Err(UnknownRemedy {
                id: c.clone(),
                offered,
            });
        }
    }
    let plan = plan::for_findings_over(
        input.kb,
        d,
        input.snapshot,
        input.choices,
        input.launch_source,
    );
    let findings = d
        .findings
        .iter()
        .map(|f| finding(f, input, &d.facts, &plan))
        .collect();
    // One entry per question: a check several walks wait at is asked once.
    let pending = d
        .open_questions()
        .filter_map(|w| match &w.outcome {
            Outcome::NeedsAnswer {
                node,
                question,
                hint,
                reason,
                ..
            } => {
                let shared = super::check::shared_with(d, w);
                let (nodes, classes) = if shared.is_empty() {
                    (Vec::new(), Vec::new())
                } else {
                    let mut nodes = vec![node.clone()];
                    nodes.extend(shared.iter().map(|(n, _)| n.to_string()));
                    let classes = super::check::asked_by(d, w)
                        .into_iter()
                        .map(str::to_string)
                        .collect();
                    (nodes, classes)
                };
                Some(Pending {
                    class: w.class.clone(),
                    node: node.clone(),
                    question: question.clone(),
                    hint: hint.to_string(),
                    reason: reason.to_string(),
                    nodes,
                    classes,
                })
            }
            Outcome::Concluded { .. } => None,
        })
        .collect();
    let walks = d
        .walks
        .iter()
        .map(|w| ReportWalk {
            class: w.class.clone(),
            start: w.start.clone(),
            steps: w
                .steps
                .iter()
                .map(|s| {
                    let (by, facts) = match &s.by {
                        AnsweredBy::Auto { facts } => (
                            "auto",
                            facts
                                .iter()
                                .map(|f| UsedFact {
                                    name: f.name.clone(),
                                    value: f.value.to_string(),
                                    source: f.source.clone(),
                                    assumed: f.assumed,
                                })
                                .collect(),
                        ),
                        AnsweredBy::User => ("user", Vec::new()),
                    };
                    ReportStep {
                        node: s.node.clone(),
                        question: s.question.clone(),
                        answer: s.answer,
                        by: by.into(),
                        facts,
                        why: s.why.clone(),
                        basis: s.basis,
                        typed_answer: s.typed_answer.clone(),
                    }
                })
                .collect(),
            outcome: match &w.outcome {
                Outcome::Concluded { conclusion } => ReportOutcome::Concluded {
                    conclusion: conclusion.clone(),
                },
                Outcome::NeedsAnswer { node, question, .. } => ReportOutcome::NeedsAnswer {
                    node: node.clone(),
                    question: question.clone(),
                },
            },
        })
        .collect();
    Ok(Report {
        schema_version: REPORT_SCHEMA_VERSION,
        tool: Tool {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        mode: mode_name(input.mode).into(),
        redacted: false,
        redactions: Vec::new(),
        snapshot: input.snapshot.clone(),
        answers: input.answers.clone(),
        logs: input
            .logs
            .iter()
            .map(|l| LogRef {
                name: l.name.clone(),
            })
            .collect(),
        plan,
        findings,
        pending,
        walks,
        classes_in_logs: d.classification.classes.clone(),
        log_classes: d
            .classification
            .evidence
            .iter()
            .map(ReportLogClass::from)
            .collect(),
        log_matches: d
            .classification
            .matches
            .iter()
            .map(ReportLogMatch::from)
            .collect(),
        signature_only_classes: input
            .kb
            .classes
            .iter()
            .filter(|c| c.def.stub)
            .map(|c| c.id().to_string())
            .collect(),
        env_not_listed: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remedy(id: &str, rank: u32) -> RemedyView {
        RemedyView {
            id: id.into(),
            title: id.into(),
            cost: String::new(),
            cost_rank: rank,
            confidence: Confidence::Confirmed,
            verified: String::new(),
            sources: vec![],
            limits: vec![],
            edits: vec![],
        }
    }

    fn finding(severity: Severity, remedies: Vec<RemedyView>) -> Finding {
        Finding {
            id: "f".into(),
            class: "c".into(),
            severity,
            state: if severity == Severity::Ok {
                CheckState::Passed
            } else {
                CheckState::Problem
            },
            missing: vec![],
            confidence: Confidence::Confirmed,
            matched: Basis::Measured,
            answered: vec![],
            assumed: vec![],
            assumptions: vec![],
            contradicted: vec![],
            title: Default::default(),
            evidence: vec![],
            sources: vec![],
            remedies,
            versions: vec![],
            does_not_fix: vec![],
            contradictions: vec![],
            facts_used: vec![],
            log_lines: vec![],
            refuted: None,
            run_differs: vec![],
            explains: vec![],
        }
    }

    #[cfg(feature = "schema")]
    #[test]
    fn kb_mirrors_serialise_like_the_kb_types() {
        fn same<K: serde::Serialize + Clone, M: serde::Serialize + From<K>>(k: K) {
            let want = serde_json::to_value(k.clone()).expect("kb type");
            let got = serde_json::to_value(M::from(k)).expect("mirror");
            assert_eq!(got, want);
        }
        for s in [
            Severity::Ok,
            Severity::Info,
            Severity::Warning,
            Severity::Error,
        ] {
            same::<_, kb_schema::Severity>(s);
        }
        for s in CheckState::ALL {
            same::<_, kb_schema::CheckState>(s);
        }
        use crate::kb::schema::MissingInput as M;
        for m in [M::Log, M::Launch, M::Probe, M::P2pProbe, M::Snapshot] {
            same::<_, kb_schema::MissingInput>(m);
        }
        use crate::kb::schema::ChangeKind;
        for k in [
            ChangeKind::Fixed,
            ChangeKind::Introduced,
            ChangeKind::Changed,
            ChangeKind::Regressed,
        ] {
            same::<_, kb_schema::ChangeKind>(k);
        }
    }

    #[test]
    fn choose_prefers_the_users_pick_then_the_cheapest() {
        let rs = vec![remedy("b", 2), remedy("a", 1), remedy("c", 3)];
        let f = finding(Severity::Error, rs.clone());
        assert_eq!(
            choose(&f, &Choices::default()).map(|(r, by)| (r.id.as_str(), by)),
            Some(("a", ChosenBy::Cheapest))
        );
        assert_eq!(
            choose(&f, &Choices::preferred(&["x".into(), "c".into()]))
                .map(|(r, by)| (r.id.as_str(), by)),
            Some(("c", ChosenBy::User))
        );
        let mut per = Choices::default();
        per.per_finding.insert("f".into(), "b".into());
        assert_eq!(
            choose(&f, &per).map(|(r, by)| (r.id.as_str(), by)),
            Some(("b", ChosenBy::User))
        );
        // Below warning the plan takes nothing unpicked, but the detail still shows the cheapest.
        let info = finding(Severity::Info, rs);
        assert!(plan::choice_for(&info, &Choices::default()).is_none());
        assert_eq!(
            choose(&info, &Choices::default()).map(|(r, _)| r.id.as_str()),
            Some("a")
        );
        assert!(
            choose(
                &finding(Severity::Error, vec![]),
                &Choices::preferred(&["c".into()])
            )
            .is_none()
        );
    }

    #[test]
    fn the_default_is_the_cheapest_confirmed_not_a_cheaper_guess() {
        let mut guess = remedy("guess", 1);
        guess.confidence = Confidence::Suspected;
        let f = finding(Severity::Warning, vec![guess.clone(), remedy("known", 2)]);
        assert_eq!(
            plan::choice_for(&f, &Choices::default()).map(|(r, _)| r.id.as_str()),
            Some("known")
        );
        // With nothing confirmed the cheapest guess is still better than no fix.
        let only = finding(Severity::Warning, vec![guess]);
        assert_eq!(
            choose(&only, &Choices::default()).map(|(r, _)| r.confidence),
            Some(Confidence::Suspected)
        );
    }
}
