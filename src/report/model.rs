//! The report model: one versioned, serialisable value that every report format renders.
//!
//! It mirrors the engine's [`Diagnosis`] in types of its own so the JSON contract does not move
//! when engine internals do, and so a written report can be read back (`Deserialize`).

use super::command::{self, RemedyAction};
use crate::engine::classify::{ClassEvidence, LogMatch, LogText};
use crate::engine::{Answer, AnsweredBy, Answers, Diagnosis, Finding, Mode, Outcome, RemedyView};
use crate::facts::Facts;
use crate::kb::KnowledgeBase;
use crate::kb::schema::{Confidence, Edit, Severity};
use crate::snapshot::HostSnapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON report format. Bump on an incompatible change (and update
/// `schema/report.schema.json`).
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    /// `failures` (failure classes) or `all` (failure classes and the onboarding checklist).
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Redaction {
    /// `secret`, `credentials_in_url`, `hostname`, `user`, `home_path`, `gpu_uuid`.
    pub kind: String,
    /// How many values or spans of this kind were replaced.
    pub count: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRef {
    pub name: String,
}

/// The classifier's verdict on one class the logs point at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportLogClass {
    pub class: String,
    /// `CONFIRMED`, `SUSPECTED` or `LOW`.
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
#[serde(deny_unknown_fields)]
pub struct ReportLogMatch {
    pub class: String,
    pub signature: String,
    pub file: String,
    /// 1-based line number.
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

/// The remedy picked for a finding (`--remedy ID`, else the cheapest) and what to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChosenRemedy {
    pub id: String,
    /// `user` when picked with `--remedy`, `cheapest` otherwise.
    pub chosen_by: String,
    pub action: RemedyAction,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportFinding {
    pub id: String,
    pub class: String,
    pub severity: Severity,
    pub confidence: Confidence,
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    pub class: String,
    pub node: String,
    pub question: String,
    pub hint: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsedFact {
    pub name: String,
    pub value: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportStep {
    pub node: String,
    pub question: String,
    pub answer: Answer,
    /// `auto` (decided from facts) or `user`.
    pub by: String,
    /// The facts an automatic answer used.
    pub facts: Vec<UsedFact>,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum ReportOutcome {
    Concluded { conclusion: String },
    NeedsAnswer { node: String, question: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportWalk {
    pub class: String,
    pub start: String,
    pub steps: Vec<ReportStep>,
    pub outcome: ReportOutcome,
}

/// What the report is built from.
pub struct ReportInput<'a> {
    pub kb: &'a KnowledgeBase,
    pub snapshot: &'a HostSnapshot,
    pub answers: &'a Answers,
    pub logs: &'a [LogText],
    pub mode: Mode,
    pub diagnosis: &'a Diagnosis,
    /// Remedy ids the user picked (`--remedy`); each applies to the findings that offer it.
    pub remedy_choices: &'a [String],
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

pub fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Failures => "failures",
        Mode::Onboarding => "onboarding",
        Mode::All => "all",
    }
}

/// Pick the remedy for one finding: the first user choice it offers, else the cheapest.
pub fn choose<'r>(
    remedies: &'r [RemedyView],
    choices: &[String],
) -> Option<(&'r RemedyView, &'static str)> {
    for c in choices {
        if let Some(r) = remedies.iter().find(|r| &r.id == c) {
            return Some((r, "user"));
        }
    }
    remedies
        .iter()
        .min_by_key(|r| r.cost_rank)
        .map(|r| (r, "cheapest"))
}

fn finding(
    f: &Finding,
    input: &ReportInput<'_>,
    facts: &Facts,
    choices: &[String],
) -> ReportFinding {
    let snap = input.snapshot;
    let chosen = if f.severity > Severity::Ok {
        choose(&f.remedies, choices).map(|(r, by)| ChosenRemedy {
            id: r.id.clone(),
            chosen_by: by.into(),
            action: command::action(&r.id, &r.edits, snap, facts, input.kb),
        })
    } else {
        None
    };
    ReportFinding {
        id: f.id.clone(),
        class: f.class.clone(),
        severity: f.severity,
        confidence: f.confidence,
        title: f.title.clone(),
        evidence: f.evidence.clone(),
        sources: f.sources.clone(),
        remedies: f.remedies.iter().map(ReportRemedy::from).collect(),
        chosen_remedy: chosen,
        does_not_fix: f.does_not_fix.clone(),
        contradictions: f.contradictions.clone(),
        facts_used: f.facts_used.clone(),
        log_lines: f.log_lines.iter().map(ReportLogMatch::from).collect(),
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
    for c in input.remedy_choices {
        if !offered.contains(c) {
            return Err(UnknownRemedy {
                id: c.clone(),
                offered,
            });
        }
    }
    let findings = d
        .findings
        .iter()
        .map(|f| finding(f, input, &d.facts, input.remedy_choices))
        .collect();
    let pending = d
        .walks
        .iter()
        .filter_map(|w| match &w.outcome {
            Outcome::NeedsAnswer {
                node,
                question,
                hint,
                reason,
                ..
            } => Some(Pending {
                class: w.class.clone(),
                node: node.clone(),
                question: question.clone(),
                hint: hint.clone(),
                reason: reason.clone(),
            }),
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
                                    value: f.value.clone(),
                                    source: f.source.clone(),
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

    #[test]
    fn choose_prefers_the_users_pick_then_the_cheapest() {
        let rs = vec![remedy("b", 2), remedy("a", 1), remedy("c", 3)];
        assert_eq!(
            choose(&rs, &[]).map(|(r, by)| (r.id.as_str(), by)),
            Some(("a", "cheapest"))
        );
        assert_eq!(
            choose(&rs, &["x".into(), "c".into()]).map(|(r, by)| (r.id.as_str(), by)),
            Some(("c", "user"))
        );
        assert!(choose(&[], &["c".into()]).is_none());
    }
}
