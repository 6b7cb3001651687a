//! The diagnosis engine: a pure function of (snapshot, answers, logs) → walks and findings.
//!
//! It collects nothing and draws nothing. Where a check cannot be decided from what is known
//! it stops at that node and asks the node's question instead of guessing.

pub mod classify;

use crate::facts::{self, Facts};
use crate::kb::expr;
use crate::kb::schema::{ClassKind, Confidence, Edit, Severity};
use crate::kb::{Class, KnowledgeBase};
use crate::snapshot::HostSnapshot;
use crate::value::{Context, Value};
use classify::{Classification, LogText};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A user's answer to a manual question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Yes,
    No,
    Unsure,
}

/// Answers by node id.
pub type Answers = BTreeMap<String, Answer>;

/// How a step's answer was obtained.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum AnsweredBy {
    /// Decided from facts; each used fact with its value and source.
    Auto { facts: Vec<UsedFact> },
    /// The user answered.
    User,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsedFact {
    pub name: String,
    pub value: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub node: String,
    pub question: String,
    pub answer: Answer,
    #[serde(flatten)]
    pub by: AnsweredBy,
    pub why: String,
}

/// Where a walk stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Outcome {
    Concluded {
        conclusion: String,
    },
    /// Waiting for the user: the check could not be decided.
    NeedsAnswer {
        node: String,
        question: String,
        hint: String,
        reason: String,
        yes_label: String,
        no_label: String,
        can_be_unsure: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Walk {
    pub class: String,
    pub start: String,
    pub steps: Vec<Step>,
    pub outcome: Outcome,
}

/// A remedy as offered for a finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemedyView {
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

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The conclusion's stable id.
    pub id: String,
    pub class: String,
    pub severity: Severity,
    pub confidence: Confidence,
    pub title: String,
    pub evidence: Vec<String>,
    pub sources: Vec<String>,
    pub remedies: Vec<RemedyView>,
    pub does_not_fix: Vec<String>,
    pub contradictions: Vec<String>,
    /// Facts the walk used to reach this finding (names), for highlighting.
    pub facts_used: Vec<String>,
    /// The log lines of this class.
    pub log_lines: Vec<classify::LogMatch>,
}

/// The whole model every front end renders.
#[derive(Debug, Clone)]
pub struct Diagnosis {
    pub facts: Facts,
    pub walks: Vec<Walk>,
    pub findings: Vec<Finding>,
    pub classification: Classification,
}

impl Diagnosis {
    /// Highest severity among findings.
    pub fn worst(&self) -> Severity {
        self.findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::Ok)
    }
    pub fn pending(&self) -> impl Iterator<Item = &Walk> {
        self.walks
            .iter()
            .filter(|w| matches!(w.outcome, Outcome::NeedsAnswer { .. }))
    }
}

/// Which trees to walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Failure classes only.
    #[default]
    Failures,
    /// The onboarding checklist only.
    Onboarding,
    /// Everything.
    All,
}

struct EvalContext<'a> {
    facts: &'a Facts,
    classification: &'a Classification,
    logs_given: bool,
    answers: &'a Answers,
}

impl Context for EvalContext<'_> {
    fn fact(&self, path: &str) -> Value {
        self.facts.get(path).value
    }
    fn log(&self, signature: &str) -> Value {
        if !self.logs_given {
            return Value::Unknown("no log given (--log FILE)".into());
        }
        Value::Bool(self.classification.matched(signature))
    }
    fn answer(&self, node: &str) -> Value {
        match self.answers.get(node) {
            Some(Answer::Yes) => Value::Bool(true),
            Some(Answer::No) => Value::Bool(false),
            Some(Answer::Unsure) | None => Value::Unknown(format!("question {node} not answered")),
        }
    }
}

/// Run the engine.
pub fn diagnose(
    kb: &KnowledgeBase,
    snapshot: &HostSnapshot,
    answers: &Answers,
    logs: &[LogText],
    mode: Mode,
) -> Diagnosis {
    let facts = facts::derive(snapshot, !logs.is_empty(), &kb.hardware);
    // The host's facts count as context for the log (expandable segments set, an SM12x GPU).
    let classification = classify::classify_on_host(kb, logs, Some(&facts));
    let ctx = EvalContext {
        facts: &facts,
        classification: &classification,
        logs_given: !logs.is_empty(),
        answers,
    };
    let mut walks = Vec::new();
    for class in &kb.classes {
        let wanted = match (mode, class.def.kind) {
            (Mode::All, _) => true,
            (Mode::Failures, k) => k == ClassKind::Failure,
            (Mode::Onboarding, k) => k == ClassKind::Checklist,
        };
        if !wanted || class.def.stub {
            continue;
        }
        for start in &class.def.start {
            walks.push(walk(class, &start.value, &ctx));
        }
    }
    let mut findings: Vec<Finding> = walks
        .iter()
        .filter_map(|w| match &w.outcome {
            Outcome::Concluded { conclusion } => kb
                .class(&w.class)
                .map(|c| finding(kb, c, conclusion, w, &ctx)),
            Outcome::NeedsAnswer { .. } => None,
        })
        .collect();
    // Most severe first; within a severity, classes the logs point at first, then KB order.
    let rank = |f: &Finding| {
        classification
            .classes
            .iter()
            .position(|c| *c == f.class)
            .unwrap_or(usize::MAX)
    };
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(rank(a).cmp(&rank(b))));
    Diagnosis {
        facts,
        walks,
        findings,
        classification,
    }
}

fn walk(class: &Class, start: &str, ctx: &EvalContext<'_>) -> Walk {
    let mut steps = Vec::new();
    let mut current = start.to_string();
    // The validator rejects cycles; the bound only guards a KB built without it.
    for _ in 0..=class.def.nodes.len() {
        if class.conclusion(&current).is_some() {
            return Walk {
                class: class.id().into(),
                start: start.into(),
                steps,
                outcome: Outcome::Concluded {
                    conclusion: current,
                },
            };
        }
        let Some(node) = class.node(&current) else {
            break;
        };
        let (answer, by, reason) = match ctx.answers.get(&node.id.value) {
            Some(a) => (Some(*a), AnsweredBy::User, String::new()),
            None => match class.checks.get(&node.id.value) {
                Some(check) => {
                    let refs = expr::references(check);
                    let used: Vec<UsedFact> = refs
                        .facts
                        .iter()
                        .map(|name| {
                            let f = ctx.facts.get(name);
                            UsedFact {
                                name: name.clone(),
                                value: f.value.to_string(),
                                source: f.source,
                            }
                        })
                        .chain(refs.signatures.iter().map(|s| UsedFact {
                            name: format!("log({s})"),
                            value: ctx.log(s).to_string(),
                            source: "given logs".into(),
                        }))
                        .collect();
                    match expr::eval(check, ctx) {
                        Value::Bool(b) => (
                            Some(if b { Answer::Yes } else { Answer::No }),
                            AnsweredBy::Auto { facts: used },
                            String::new(),
                        ),
                        Value::Unknown(why) => (None, AnsweredBy::User, why),
                        other => (
                            None,
                            AnsweredBy::User,
                            format!("check gave {other}, not yes/no"),
                        ),
                    }
                }
                None => (None, AnsweredBy::User, "needs a person to answer".into()),
            },
        };
        let next = match answer {
            Some(Answer::Yes) => Some(&node.yes.value),
            Some(Answer::No) => Some(&node.no.value),
            Some(Answer::Unsure) => node.unsure.as_ref().map(|u| &u.value),
            None => None,
        };
        let Some(next) = next else {
            let ask = node.ask.as_ref();
            return Walk {
                class: class.id().into(),
                start: start.into(),
                steps,
                outcome: Outcome::NeedsAnswer {
                    node: node.id.value.clone(),
                    question: node.question.clone(),
                    hint: ask.map(|a| a.hint.clone()).unwrap_or_default(),
                    reason,
                    yes_label: ask.map_or("yes".into(), |a| a.yes_label.clone()),
                    no_label: ask.map_or("no".into(), |a| a.no_label.clone()),
                    can_be_unsure: node.unsure.is_some(),
                },
            };
        };
        steps.push(Step {
            node: node.id.value.clone(),
            question: node.question.clone(),
            answer: answer.unwrap_or(Answer::Unsure),
            by,
            why: node.why.clone(),
        });
        current = next.clone();
    }
    Walk {
        class: class.id().into(),
        start: start.into(),
        steps,
        outcome: Outcome::NeedsAnswer {
            node: current.clone(),
            question: format!("internal: walk did not end at {current}"),
            hint: String::new(),
            reason: "tree has a cycle or a dangling reference; run `sm120-doctor kb lint`".into(),
            yes_label: "yes".into(),
            no_label: "no".into(),
            can_be_unsure: false,
        },
    }
}

/// Fill `{fact}` placeholders.
pub fn fill(template: &str, facts: &Facts) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                out.push_str(&facts.get(&after[..end]).value.to_string());
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

fn finding(
    kb: &KnowledgeBase,
    class: &Class,
    conclusion_id: &str,
    walk: &Walk,
    ctx: &EvalContext<'_>,
) -> Finding {
    let Some(c) = class.conclusion(conclusion_id) else {
        unreachable!("walk concluded at a conclusion the class has")
    };
    let mut remedies: Vec<RemedyView> = c
        .remedies
        .iter()
        .filter_map(|r| kb.remedy(&r.value))
        .map(|r| RemedyView {
            id: r.id.value.clone(),
            title: r.title.clone(),
            cost: r.cost.text.clone(),
            cost_rank: r.cost.rank,
            confidence: r.confidence,
            verified: r.verified.clone(),
            sources: r.sources.clone(),
            limits: r.limits.clone(),
            edits: r.edits.clone(),
        })
        .collect();
    remedies.sort_by_key(|r| r.cost_rank);
    let mut facts_used: Vec<String> = Vec::new();
    for s in &walk.steps {
        if let AnsweredBy::Auto { facts } = &s.by {
            for f in facts {
                if !facts_used.contains(&f.name) {
                    facts_used.push(f.name.clone());
                }
            }
        }
    }
    let log_lines = ctx
        .classification
        .matches
        .iter()
        .filter(|m| m.class == class.id())
        .cloned()
        .collect();
    Finding {
        id: c.id.value.clone(),
        class: class.id().into(),
        severity: c.severity,
        confidence: c.confidence,
        title: c.title.clone(),
        evidence: c
            .evidence
            .iter()
            .map(|e| fill(&e.value, ctx.facts))
            .collect(),
        sources: c.sources.clone(),
        remedies,
        does_not_fix: c.does_not_fix.clone(),
        contradictions: c.contradictions.clone(),
        facts_used,
        log_lines,
    }
}
