//! The diagnosis engine: a pure function of (snapshot, answers, logs) → walks and findings.
//!
//! It collects nothing and draws nothing. Where a check cannot be decided from what is known
//! it stops at that node and asks the node's question instead of guessing.

pub mod classify;
mod finding;
pub mod log_env;
pub mod log_scope;
pub mod plan;
pub mod run_facts;
pub mod versions;
mod walk;

use crate::facts::{self, Facts};
use crate::kb::KnowledgeBase;
use crate::kb::expr;
pub use crate::kb::schema::{CheckState, MissingInput};
use crate::kb::schema::{ClassKind, Confidence, Edit, Severity};
use crate::snapshot::HostSnapshot;
use crate::value::{Context, Input, Prose, Reason, Value};
use classify::{Classification, LogText};
use finding::{finding, seen_but_open};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
#[cfg(test)]
use walk::bool_answer;
use walk::walk;

/// A user's answer to a manual question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The value as read: typed, so each front end words an unknown one's reason its own way.
    #[serde(serialize_with = "crate::value::serialize_words")]
    pub value: Value,
    pub source: String,
    /// The value stands for an input that was not given (no log, the probe not run).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub assumed: bool,
}

/// What decided a step, weakest last. A fact measured or read from an input (snapshot,
/// collect-env, launch, log, probe) beats a typed answer; a typed answer beats an assumption (a
/// value that stands for an input not given: no log, the probe not run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Measured,
    Answered,
    Assumed,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Measured => "measured",
            Basis::Answered => "answered",
            Basis::Assumed => "assumed",
        }
    }
}

/// A typed answer to a node that an input decides: set aside, with what the input says when
/// the two disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SetAside {
    pub answer: Answer,
    /// The input says otherwise.
    pub contradicted: bool,
    /// "you answered no; launch command (--launch) says launch.tp = 2" when contradicted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub node: String,
    pub question: String,
    pub answer: Answer,
    #[serde(flatten)]
    pub by: AnsweredBy,
    pub why: String,
    pub basis: Basis,
    /// The user's answer to this node, set aside because an input decides it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typed_answer: Option<SetAside>,
}

impl Step {
    /// The note of a typed answer the inputs contradicted.
    pub(crate) fn contradiction(&self) -> Option<&str> {
        self.typed_answer
            .as_ref()
            .filter(|t| t.contradicted)
            .map(|t| t.note.as_str())
    }
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
        /// How to answer it; `{input:NAME}` placeholders are each front end's to fill.
        hint: Prose,
        /// Why the inputs did not decide it (typed: a missing input is named by its kind, and
        /// each front end says how to give it).
        #[serde(serialize_with = "crate::value::serialize_words")]
        reason: Reason,
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

/// Does a finding apply to this host? Every step of its walk decided by an input (`measured`;
/// a log not given counts as "nothing seen there"); some by the user's answers (`answered`,
/// whatever else was assumed); some by an assumption that stands in for a measurement of the
/// host not made, such as the probe, and none by an answer (`assumed`).
pub type Match = Basis;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The conclusion's stable id.
    pub id: String,
    pub class: String,
    pub severity: Severity,
    /// Problem, passed, not checked or does not apply (see [`state_of`]).
    pub state: CheckState,
    /// For `not_checked`: the inputs that were not given, each once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingInput>,
    /// The claim: is the mechanism confirmed upstream (CONFIRMED) or suspected.
    pub confidence: Confidence,
    /// The match: does it apply to this host (see [`Match`]).
    #[serde(rename = "match")]
    pub matched: Match,
    /// Nodes of the walk decided by a typed answer.
    pub answered: Vec<String>,
    /// Nodes of the walk decided by an assumption that stands in for a measurement of the host
    /// (the probe not run), and what was assumed. A log not given is not counted: it only means
    /// nothing was seen there.
    pub assumed: Vec<String>,
    pub assumptions: Vec<String>,
    /// Typed answers the inputs contradicted on the way (the inputs won).
    pub contradicted: Vec<String>,
    /// The conclusion's title, or its `title_unmeasured` ("would crash if …") when the match
    /// is not `measured`. Prose: an `{input:NAME}` in it is each front end's to say.
    pub title: Prose,
    pub evidence: Vec<Prose>,
    pub sources: Vec<String>,
    pub remedies: Vec<RemedyView>,
    pub does_not_fix: Vec<String>,
    pub contradictions: Vec<String>,
    /// Facts the walk used to reach this finding (names), for highlighting.
    pub facts_used: Vec<String>,
    /// The log lines of this class.
    pub log_lines: Vec<classify::LogMatch>,
    /// What the `holds:` ranges of the conclusion and its remedies said (see `versions`).
    pub versions: Vec<versions::VersionCheck>,
    /// A given log shows the run got past the point this finding predicts a failure at (see
    /// the conclusion's `refuted_by:`): the finding is then at most a warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refuted: Option<Refutation>,
    /// Where the log this finding rests on shows a run that differs from this host (another
    /// torch, another GPU): the log's value decided it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub run_differs: Vec<log_env::HostDifference>,
    /// The run signs of the logs this finding explains (its walk decided on them): the
    /// unrecognized-failure finding is then not raised beside it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explains: Vec<Explained>,
}

/// A run sign of the logs that a finding explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Explained {
    /// The hang the log shows.
    Hang,
    /// The failure lines no class's signatures cover.
    Failure,
}

/// The milestone line of a given log that contradicts a prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refutation {
    pub milestone: classify::run_signs::Milestone,
    pub file: String,
    pub line: usize,
    pub text: String,
    /// What was compared between the log and the launch and found the same (`model`, `tp`);
    /// empty: the log or the launch does not show them.
    pub same: Vec<&'static str>,
}

/// The whole model every front end renders.
#[derive(Debug, Clone)]
pub struct Diagnosis {
    pub facts: Facts,
    pub walks: Vec<Walk>,
    pub findings: Vec<Finding>,
    pub classification: Classification,
    /// Nodes that ask the same question (see [`same_questions`]): node id → the other nodes.
    pub same_question: BTreeMap<String, Vec<String>>,
    /// Nodes whose check reads another node's answer (`answer('X')`): node id → those nodes
    /// (see [`answers_read`]).
    pub reads_answer_of: BTreeMap<String, Vec<String>>,
    /// Where what the logs state about their run differs from the host snapshot.
    pub run_differs: Vec<log_env::HostDifference>,
}

impl Diagnosis {
    /// How many findings are in `state`.
    pub fn count(&self, state: CheckState) -> usize {
        self.findings.iter().filter(|f| f.state == state).count()
    }
    /// Nothing needs attention, but a given log shows neither a failure nor the run coming up:
    /// the outcome is not known, which is not an all-clear (`check` exits 3).
    pub(crate) fn undetermined(&self) -> bool {
        !self.needs_attention()
            && self.findings.iter().any(|f| {
                f.state == CheckState::NotChecked && f.missing.contains(&MissingInput::RunOutcome)
            })
    }
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
    /// Walks still waiting for an answer whose class the logs point at (SUSPECTED or
    /// CONFIRMED): the log shows the failure, only its cause is open, so this is no all-clear.
    pub(crate) fn pending_but_seen_in_logs(&self) -> impl Iterator<Item = &Walk> {
        self.pending().filter(|w| {
            self.classification
                .confidence
                .get(&w.class)
                .is_some_and(|c| *c >= classify::MatchConfidence::Suspected)
        })
    }
    /// Nothing a script may read as an all-clear: a finding at warning or above, or a failure
    /// the logs show whose walk still waits for an answer.
    pub(crate) fn needs_attention(&self) -> bool {
        self.worst() >= Severity::Warning || self.pending_but_seen_in_logs().next().is_some()
    }
    /// The open questions, each once: a walk waiting at a node that asks the same question as
    /// a node an earlier walk waits at (the same check) is left out, since one answer decides
    /// both.
    ///
    /// A walk waiting at a node whose check reads the answer to a question another walk waits
    /// at is left out too: that answer decides it (or, if it does not, it is asked next), so
    /// asking both at once asks one thing twice.
    pub fn open_questions(&self) -> impl Iterator<Item = &Walk> {
        self.pending()
            .enumerate()
            .filter(|(i, w)| self.same_as_earlier(*i, w).is_none())
            .filter(|(_, w)| self.follows_open_question(w).is_none())
            .map(|(_, w)| w)
    }
    /// The open question whose answer a pending walk's node reads (`answer('X')` in its check),
    /// as (class, node) of the walk that waits at it; `None` when no such walk waits, or when
    /// that node reads this one's answer in turn (neither would be asked).
    pub(crate) fn follows_open_question(&self, w: &Walk) -> Option<(&str, &str)> {
        let Outcome::NeedsAnswer { node, .. } = &w.outcome else {
            return None;
        };
        let read = self.reads_answer_of.get(node)?;
        self.pending().find_map(|e| match &e.outcome {
            Outcome::NeedsAnswer { node: x, .. }
                if x != node
                    && read.contains(x)
                    && !self
                        .reads_answer_of
                        .get(x)
                        .is_some_and(|back| back.contains(node)) =>
            {
                Some((e.class.as_str(), x.as_str()))
            }
            _ => None,
        })
    }
    /// Where a pending walk's question was already asked by an earlier pending walk: that
    /// walk's class and node. `None` for a walk that is not waiting, or asks first.
    pub(crate) fn asked_before(&self, walk: &Walk) -> Option<(&str, &str)> {
        let i = self.pending().position(|w| std::ptr::eq(w, walk))?;
        self.same_as_earlier(i, walk)
    }
    fn same_as_earlier(&self, i: usize, w: &Walk) -> Option<(&str, &str)> {
        let Outcome::NeedsAnswer { node, .. } = &w.outcome else {
            return None;
        };
        let peers = self.same_question.get(node)?;
        self.pending().take(i).find_map(|e| match &e.outcome {
            Outcome::NeedsAnswer { node: n, .. } if peers.contains(n) => {
                Some((e.class.as_str(), n.as_str()))
            }
            _ => None,
        })
    }
    /// Typed answers to nodes an input decides (node, what was set aside), in walk order. A
    /// front end that keeps answers across input changes drops these and says so.
    pub(crate) fn answers_set_aside(&self) -> impl Iterator<Item = (&str, &SetAside)> {
        self.walks.iter().flat_map(|w| {
            w.steps
                .iter()
                .filter_map(|s| s.typed_answer.as_ref().map(|t| (s.node.as_str(), t)))
        })
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
    /// Each given log as sources name it; empty: no log given.
    logs: &'a [String],
    answers: &'a Answers,
    same_question: &'a BTreeMap<String, Vec<String>>,
}

/// What a check may read in one evaluation: inputs only, inputs and typed answers, or also
/// the assumptions that stand for inputs not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Inputs,
    Answers,
    Everything,
}

struct View<'a, 'b> {
    ctx: &'b EvalContext<'a>,
    reading: Reading,
}

impl Context for View<'_, '_> {
    fn fact(&self, path: &str) -> Value {
        let f = self.ctx.facts.get(path);
        if f.assumed && self.reading != Reading::Everything {
            return Value::unknown(format!("{} (assumed: {})", f.value, f.source));
        }
        f.value
    }
    fn log(&self, signature: &str) -> Value {
        self.ctx.log(signature)
    }
    fn answer(&self, node: &str) -> Value {
        if self.reading == Reading::Inputs {
            return Value::unknown(format!("question {node} is answered by a person"));
        }
        match self.ctx.answers.get(node) {
            Some(Answer::Yes) => Value::Bool(true),
            Some(Answer::No) => Value::Bool(false),
            Some(Answer::Unsure) | None => Value::unknown(format!("question {node} not answered")),
        }
    }
}

impl EvalContext<'_> {
    /// The user's answer to a node that asks the same question as `node` (see
    /// [`same_questions`]), with that node.
    fn peer_answer(&self, node: &str) -> Option<Answer> {
        self.same_question
            .get(node)?
            .iter()
            .find_map(|p| self.answers.get(p).copied())
    }

    fn log(&self, signature: &str) -> Value {
        if self.logs.is_empty() {
            return Value::Unknown(Reason::missing(Input::Log));
        }
        Value::Bool(self.classification.matched(signature))
    }

    /// Where a signature's verdict comes from: the matching line, else the logs searched.
    fn log_source(&self, signature: &str) -> String {
        match self
            .classification
            .matches
            .iter()
            .find(|m| m.signature == signature)
        {
            Some(m) => format!("{}:{}", m.file, m.line),
            None if self.logs.is_empty() => "no log given".into(),
            None => self.logs.join(", "),
        }
    }

    fn eval(&self, check: &expr::Expr, reading: Reading) -> Value {
        expr::eval(check, &View { ctx: self, reading })
    }
}

/// How a log is named in sources: pasted in the TUI, the demo's, or a file.
pub(crate) fn log_label(name: &str) -> String {
    if name == PASTED_LOG {
        "log pasted in the TUI".into()
    } else if name.starts_with("demo:") {
        format!("the demo's log ({name})")
    } else {
        format!("log file {name}")
    }
}

/// The name of the log a user pastes or types into the TUI.
pub const PASTED_LOG: &str = "pasted";

/// Run the engine.
pub fn diagnose(
    kb: &KnowledgeBase,
    snapshot: &HostSnapshot,
    answers: &Answers,
    logs: &[LogText],
    mode: Mode,
) -> Diagnosis {
    diagnose_classified(kb, snapshot, answers, logs, mode, |_| {})
}

/// [`diagnose`], with a look at the classification before the walks read it (unit tests hand
/// the engine run signs this way).
fn diagnose_classified(
    kb: &KnowledgeBase,
    snapshot: &HostSnapshot,
    answers: &Answers,
    logs: &[LogText],
    mode: Mode,
    adjust: impl FnOnce(&mut Classification),
) -> Diagnosis {
    let log_names: Vec<String> = logs.iter().map(|l| log_label(&l.name)).collect();
    let mut facts = facts::derive_with_logs(snapshot, &log_names, &kb.hardware);
    // The host's facts count as context for the log (expandable segments set, an SM12x GPU).
    let scanner = classify::Scanner::new(kb);
    let mut raw = Vec::new();
    for log in logs {
        scanner.scan(log, &mut raw);
    }
    let mut classification = scanner.rank_on_host(raw.clone(), Some(&facts));
    // What a log that shows trouble states about its own run (its torch, vLLM, GPU) decides
    // that log's diagnosis over the snapshot; the log is ranked again on those facts. A log
    // of a run that went fine leaves this host's predictions to this host's facts.
    let stated = log_env::read(logs, &log_names);
    let mut run_differs = Vec::new();
    if !stated.is_empty() && log_shows_trouble(&classification.run, &raw) {
        run_differs = log_env::apply(&mut facts, &stated);
        classification = classify::rank_with_run(kb, raw, classification.run, Some(&facts));
    }
    adjust(&mut classification);
    // What the logs show about the run whatever the class, as `log.run.*` facts.
    run_facts::apply(&mut facts, kb, &classification, &log_names);
    let same_question = same_questions(kb);
    let mut walks = walk_all(
        kb,
        mode,
        &facts,
        &classification,
        &log_names,
        answers,
        &same_question,
    );
    // A class whose finding explains the hang or the failure the run signs show: the
    // unrecognized-failure walks read "explained" and are walked again.
    let explained = explained_run_signs(kb, &walks);
    if !explained.is_empty() {
        for (sign, class) in &explained {
            let fact = match sign {
                Explained::Hang => "log.run.unrecognized_hang",
                Explained::Failure => "log.run.unrecognized_failure",
            };
            facts.set(
                fact,
                facts::Fact::new(Value::Bool(false), format!("explained by {class}")),
            );
        }
        let rewalked = walk_all(
            kb,
            mode,
            &facts,
            &classification,
            &log_names,
            answers,
            &same_question,
        );
        for (w, again) in walks.iter_mut().zip(rewalked) {
            if walk_used_unrecognized(w) {
                *w = again;
            }
        }
    }
    let ctx = EvalContext {
        facts: &facts,
        classification: &classification,
        logs: &log_names,
        answers,
        same_question: &same_question,
    };
    let texts: Vec<&str> = logs.iter().map(|l| l.text.as_str()).collect();
    let (model, tp) = run_facts::log_launch(&texts);
    let seen = LogLaunch { model, tp };
    let mut findings: Vec<Finding> = walks
        .iter()
        .filter_map(|w| match &w.outcome {
            Outcome::Concluded { conclusion } => kb.class(&w.class).map(|c| {
                let mut f = finding(kb, c, conclusion, w, &ctx);
                versions::apply(kb, c, &mut f, &facts, answers);
                if let Some(k) = c.conclusion(conclusion) {
                    refute(&mut f, k, &classification.run, &seen, &facts);
                }
                f
            }),
            Outcome::NeedsAnswer { .. } => None,
        })
        .collect();
    // A class the logs name whose walk waits for an answer: the failure is seen, only its
    // cause is open, so it is a finding too (SUSPECTED), not only a question.
    for w in walks.iter().filter(|w| {
        matches!(w.outcome, Outcome::NeedsAnswer { .. })
            && (classification
                .confidence
                .get(&w.class)
                .is_some_and(|c| *c >= classify::MatchConfidence::Suspected)
                || explained.iter().any(|(_, c)| *c == w.class))
    }) {
        let has_problem = findings
            .iter()
            .any(|f| f.class == w.class && f.severity >= Severity::Warning);
        if let Some(c) = kb.class(&w.class)
            && !has_problem
        {
            findings.push(seen_but_open(c, w, &classification));
        }
    }
    // Most severe first; within a severity, classes the logs point at first, then KB order.
    let rank = |f: &Finding| {
        classification
            .classes
            .iter()
            .position(|c| *c == f.class)
            .unwrap_or(usize::MAX)
    };
    // Below a problem: passed, then not checked, then does not apply.
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.state.cmp(&b.state))
            .then(rank(a).cmp(&rank(b)))
    });
    for f in &mut findings {
        let quoted: Vec<&str> = f.log_lines.iter().map(|m| m.file.as_str()).collect();
        f.run_differs = log_env::differences_for(&run_differs, &f.facts_used, &quoted)
            .into_iter()
            .cloned()
            .collect();
        f.explains = explained
            .iter()
            .filter(|(_, c)| *c == f.class && f.state == CheckState::Problem)
            .map(|(s, _)| *s)
            .collect();
    }
    Diagnosis {
        facts,
        walks,
        findings,
        classification,
        same_question,
        reads_answer_of: answers_read(kb),
        run_differs,
    }
}

/// The log shows a failure or a hang, or a line a failure signature calls an error (before
/// the host's context sets any aside): a run whose own environment is worth reading.
fn log_shows_trouble(run: &classify::run_signs::RunSigns, raw: &[classify::LogMatch]) -> bool {
    run.shows_failure()
        || raw
            .iter()
            .any(|m| m.kind == crate::kb::schema::SignatureKind::Error)
}

/// Walk every wanted class from each of its starts, version ranges checked after.
fn walk_all(
    kb: &KnowledgeBase,
    mode: Mode,
    facts: &Facts,
    classification: &Classification,
    log_names: &[String],
    answers: &Answers,
    same_question: &BTreeMap<String, Vec<String>>,
) -> Vec<Walk> {
    let ctx = EvalContext {
        facts,
        classification,
        logs: log_names,
        answers,
        same_question,
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
            let w = walk(class, &start.value, &ctx);
            // Version ranges (`holds:`) are checked after the walk: versions.rs.
            walks.push(versions::gate(kb, class, w, facts, answers));
        }
    }
    walks
}

/// The facts that say the logs show a hang or a failure, and the run sign each stands for.
const RUN_SIGN_FACTS: [(&str, Explained); 2] = [
    ("log.run.hang", Explained::Hang),
    ("log.run.failure", Explained::Failure),
];

/// Which run signs a concluded walk's problem explains: a step that went on a `log.run.hang` or
/// `log.run.failure` fact that is true, in a walk that ends at a problem (warning or above).
/// The unrecognized-failure class's own walks, which read the `log.run.unrecognized_*` facts,
/// explain nothing.
fn explained_run_signs(kb: &KnowledgeBase, walks: &[Walk]) -> Vec<(Explained, String)> {
    let mut out: Vec<(Explained, String)> = Vec::new();
    for w in walks.iter().filter(|w| !walk_used_unrecognized(w)) {
        // A walk still waiting for an answer went on the run sign so far: the failure is
        // seen there, only its cause is open.
        if let Outcome::Concluded { conclusion } = &w.outcome {
            let Some(c) = kb.class(&w.class).and_then(|c| c.conclusion(conclusion)) else {
                continue;
            };
            if c.severity < Severity::Warning || c.state() != CheckState::Problem {
                continue;
            }
        }
        for (fact, sign) in RUN_SIGN_FACTS {
            let used = w.steps.iter().any(|s| match &s.by {
                AnsweredBy::Auto { facts } => facts
                    .iter()
                    .any(|f| f.name == fact && f.value == Value::Bool(true)),
                AnsweredBy::User => false,
            });
            if used && !out.iter().any(|(s, _)| *s == sign) {
                out.push((sign, w.class.clone()));
            }
        }
    }
    out
}

/// A walk that read a `log.run.unrecognized_*` fact (the unrecognized-failure class's).
fn walk_used_unrecognized(w: &Walk) -> bool {
    w.steps.iter().any(|s| match &s.by {
        AnsweredBy::Auto { facts } => facts
            .iter()
            .any(|f| f.name.starts_with("log.run.unrecognized_")),
        AnsweredBy::User => false,
    })
}

/// Nodes whose check reads other nodes' answers (`answer('X')`): node id → those node ids.
pub(crate) fn answers_read(kb: &KnowledgeBase) -> BTreeMap<String, Vec<String>> {
    kb.classes
        .iter()
        .flat_map(|c| &c.checks)
        .filter_map(|(node, check)| {
            let read = crate::kb::expr::references(check).answers;
            (!read.is_empty()).then(|| (node.clone(), read))
        })
        .collect()
}

/// Nodes that ask the same question: their checks are the same expression (whitespace aside),
/// so what decides one from the inputs decides the other, and a typed answer to one is an
/// answer to both ("Is the model FP8 block-quantised?" in the DeepGEMM and the FP8 tuning
/// walks). Node id → the other nodes, in knowledge-base order; nodes without a check ask
/// their own question.
pub(crate) fn same_questions(kb: &KnowledgeBase) -> BTreeMap<String, Vec<String>> {
    let mut by_check: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in kb.classes.iter().flat_map(|c| &c.def.nodes) {
        if let Some(check) = &n.check {
            let key: Vec<&str> = check.value.split_whitespace().collect();
            by_check
                .entry(key.join(" "))
                .or_default()
                .push(n.id.value.clone());
        }
    }
    let mut out = BTreeMap::new();
    for group in by_check.into_values().filter(|g| g.len() > 1) {
        for n in &group {
            let others: Vec<String> = group.iter().filter(|o| *o != n).cloned().collect();
            out.insert(n.clone(), others);
        }
    }
    out
}

/// A fact's value in a sentence: an empty text is said in words ("is set (the empty string)"
/// rather than "is set ()").
fn shown(v: &Value) -> String {
    match v {
        Value::Str(s) if s.is_empty() => "the empty string".into(),
        other => other.to_string(),
    }
}

/// Fill `{fact}` placeholders. `{input:NAME}` ones stay: each front end says how to give an
/// input in its own words ([`Prose`]).
pub(crate) fn fill(template: &str, facts: &Facts) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if rest[start..].starts_with(crate::value::INPUT_PLACEHOLDER) => {
                out.push_str(&rest[start..start + end + 2]);
                rest = &after[end + 1..];
            }
            Some(end) => {
                out.push_str(&shown(&facts.get(&after[..end]).value));
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

/// A step of the walk was decided by a `log.run.*` fact that is true (the log shows a
/// failure, a hang, a milestone).
fn walk_saw_run_sign(walk: &Walk) -> bool {
    walk.steps.iter().any(|s| match &s.by {
        AnsweredBy::Auto { facts } => facts
            .iter()
            .any(|f| f.name.starts_with("log.run.") && f.value == Value::Bool(true)),
        AnsweredBy::User => false,
    })
}

/// Which input a fact stands for when its value is assumed (no log, no launch, a probe not
/// run), by the fact's family.
pub(crate) fn missing_input_of(fact: &str) -> MissingInput {
    if fact.starts_with("logs.") || fact.starts_with("log.") || fact.starts_with("log(") {
        MissingInput::Log
    } else if fact.starts_with("launch.") {
        MissingInput::Launch
    } else if fact.starts_with("p2p.") {
        MissingInput::P2pProbe
    } else if fact.starts_with("probe.") {
        MissingInput::Probe
    } else {
        MissingInput::Snapshot
    }
}

/// A finding's state: the conclusion's, except that a pass the inputs did not check is
/// `not_checked`: every step of its walk rested on an input not given ("no allocator-config
/// error in the given logs" with no log), or a step rested on an assumption about the host
/// (the probe not run, no launch). A log not given beside steps the host decides is only
/// "nothing seen there" and leaves the pass a pass.
pub(crate) fn state_of(
    declared: CheckState,
    declared_missing: &[MissingInput],
    walk: &Walk,
    facts: &Facts,
) -> (CheckState, Vec<MissingInput>) {
    if declared != CheckState::Passed {
        return (declared, declared_missing.to_vec());
    }
    let assumed_facts = |s: &Step| -> Vec<String> {
        match &s.by {
            AnsweredBy::Auto { facts } => facts
                .iter()
                .filter(|f| f.assumed)
                .map(|f| f.name.clone())
                .collect(),
            AnsweredBy::User => Vec::new(),
        }
    };
    let all_assumed =
        !walk.steps.is_empty() && walk.steps.iter().all(|s| s.basis == Basis::Assumed);
    let mut missing: Vec<MissingInput> = Vec::new();
    for s in walk.steps.iter().filter(|s| s.basis == Basis::Assumed) {
        for name in assumed_facts(s) {
            if !all_assumed && !facts.get(&name).about_host {
                continue;
            }
            let m = missing_input_of(&name);
            if !missing.contains(&m) {
                missing.push(m);
            }
        }
    }
    if missing.is_empty() {
        (CheckState::Passed, missing)
    } else {
        (CheckState::NotChecked, missing)
    }
}

/// The model and TP the given logs show, to compare with the launch before a milestone of the
/// log counts against a prediction for the launch.
struct LogLaunch {
    model: Option<String>,
    tp: Option<u32>,
}

/// Weigh a prediction against a given log that got past the point it predicts a failure at:
/// the log's milestone (same model and TP as the launch where both show them) makes the finding
/// at most a warning, and says so first in its evidence.
fn refute(
    f: &mut Finding,
    c: &crate::kb::schema::Conclusion,
    run: &classify::run_signs::RunSigns,
    seen: &LogLaunch,
    facts: &Facts,
) {
    if f.state != CheckState::Problem {
        return;
    }
    let Some(hit) = c
        .refuted_by
        .iter()
        .find_map(|m| run.reached(classify::run_reader::milestone_of(*m)))
    else {
        return;
    };
    let mut same = Vec::new();
    if let (Some(m), Value::Str(l)) = (&seen.model, facts.get("launch.model").value) {
        if *m != l {
            return;
        }
        same.push("model");
    }
    if let (Some(t), Value::Num(l)) = (seen.tp, facts.get("launch.tp").value) {
        if f64::from(t) != l {
            return;
        }
        same.push("tp");
    }
    if f.severity > Severity::Warning {
        f.severity = Severity::Warning;
    }
    let compared = if same.is_empty() {
        "the log and the launch were not compared: one of them does not show the model or TP"
            .to_string()
    } else {
        format!("same {} as the launch", same.join(" and "))
    };
    f.evidence.insert(
        0,
        Prose(format!(
            "The given log shows this launch got past {} at {}:{} ({}; {compared}), so this is a warning, not a certain crash.",
            run_facts::milestone_words(hit.milestone),
            hit.file,
            hit.line,
            hit.text
        )),
    );
    f.refuted = Some(Refutation {
        milestone: hit.milestone,
        file: hit.file.clone(),
        line: hit.line,
        text: hit.text.clone(),
        same,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{Environment, Probed};

    fn kb() -> KnowledgeBase {
        crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb")
    }

    /// An expandable_segments host, with or without a launch.
    fn host(launch: Option<&str>) -> HostSnapshot {
        let mut s = HostSnapshot::empty("test", "test");
        s.env = Probed::Value(Environment {
            whose: None,
            source: "test env".into(),
            vars: [(
                "PYTORCH_CUDA_ALLOC_CONF".to_string(),
                "expandable_segments:True".to_string(),
            )]
            .into(),
            covers: None,
        });
        if let Some(l) = launch {
            s.launch = Probed::Value(crate::launch::parse_launch(l).expect("launch"));
        }
        s
    }

    #[test]
    fn an_empty_value_is_said_in_words() {
        let mut s = host(None);
        s.env = Probed::Value(Environment {
            whose: None,
            source: "test env".into(),
            vars: [("PYTORCH_CUDA_ALLOC_CONF".to_string(), String::new())].into(),
            covers: None,
        });
        let f = facts::derive_with_logs(&s, &[], &kb().hardware);
        assert_eq!(
            fill("is set ({env.PYTORCH_CUDA_ALLOC_CONF}).", &f),
            "is set (the empty string)."
        );
    }

    fn tp_step(d: &Diagnosis) -> &Step {
        d.walks
            .iter()
            .flat_map(|w| &w.steps)
            .find(|s| s.node == "aipc_tp")
            .expect("aipc_tp decided")
    }

    fn answers(a: Answer) -> Answers {
        [("aipc_tp".to_string(), a)].into()
    }

    #[test]
    fn an_input_beats_a_typed_answer_and_says_so() {
        let d = diagnose(
            &kb(),
            &host(Some("vllm serve m -tp 2")),
            &answers(Answer::No),
            &[],
            Mode::Failures,
        );
        let s = tp_step(&d);
        assert_eq!((s.answer, s.basis), (Answer::Yes, Basis::Measured));
        let t = s.typed_answer.as_ref().expect("set aside");
        assert!(t.contradicted);
        assert_eq!(t.note, "you answered no; launch command says launch.tp = 2");
        assert_eq!(d.answers_set_aside().count(), 1);
    }

    #[test]
    fn an_agreeing_or_unsure_answer_is_set_aside_without_a_contradiction() {
        for a in [Answer::Yes, Answer::Unsure] {
            let d = diagnose(
                &kb(),
                &host(Some("vllm serve m -tp 2")),
                &answers(a),
                &[],
                Mode::Failures,
            );
            let s = tp_step(&d);
            assert_eq!(s.basis, Basis::Measured);
            assert_eq!(s.contradiction(), None, "{a:?}");
            assert!(s.typed_answer.is_some());
        }
    }

    #[test]
    fn an_answer_decides_where_no_input_does_and_the_finding_says_so() {
        let d = diagnose(
            &kb(),
            &host(None),
            &answers(Answer::No),
            &[],
            Mode::Failures,
        );
        let s = tp_step(&d);
        assert_eq!((s.answer, s.basis), (Answer::No, Basis::Answered));
        assert!(matches!(s.by, AnsweredBy::User));
        let f = d
            .findings
            .iter()
            .find(|f| f.class == "allocator_ipc")
            .expect("finding");
        assert_eq!(f.id, "allocator_ipc_tp1");
        assert_eq!(f.matched, Basis::Answered);
        assert_eq!(f.answered, vec!["aipc_tp".to_string()]);
    }

    #[test]
    fn a_missing_probe_is_an_assumption_and_the_title_says_would() {
        let d = diagnose(
            &kb(),
            &host(Some("vllm serve m -tp 2")),
            &Answers::new(),
            &[],
            Mode::Failures,
        );
        // No GPU pairs known in this snapshot: P2P is asked, so no verdict yet.
        assert!(
            d.pending().any(|w| w.class == "allocator_ipc"),
            "{:?}",
            d.findings.iter().map(|f| &f.id).collect::<Vec<_>>()
        );
        let mut snap = host(Some("vllm serve m -tp 2"));
        snap.gpu_pairs = Probed::Value(vec![crate::snapshot::GpuPair {
            a: 0,
            b: 1,
            topology: Probed::Value("NV4".into()),
            p2p: Probed::Value(true),
            nvlink: Probed::Value(true),
        }]);
        let d = diagnose(&kb(), &snap, &Answers::new(), &[], Mode::Failures);
        let f = d
            .findings
            .iter()
            .find(|f| f.id == "allocator_ipc_will_crash")
            .expect("predicted");
        assert_eq!(f.matched, Basis::Assumed);
        assert_eq!(f.assumed, vec!["aipc_probe_confirms".to_string()]);
        assert_eq!(
            f.assumptions,
            vec!["the allocator/IPC probe did not run".to_string()]
        );
        assert!(f.title.0.contains("would crash"), "{}", f.title);
    }

    /// The demo's host without its launch: the model is unknown, so the DeepGEMM and FP8
    /// tuning walks both wait at "Is the model FP8 block-quantised?" (the same check), and the
    /// two DeepSeek sparse-attention walks likewise.
    fn no_launch_demo() -> HostSnapshot {
        let mut s = crate::import::demo_snapshot();
        s.launch = Probed::skipped("no launch command given");
        s
    }

    #[test]
    fn the_same_check_is_one_question_asked_once_and_one_answer_decides_both() {
        let kb = kb();
        let same = same_questions(&kb);
        assert!(
            same["dg_fp8_model"].contains(&"fp8_model".to_string()),
            "{same:?}"
        );
        assert!(
            same["bc_dsa"].contains(&"ct_dsa_model".to_string()),
            "{same:?}"
        );
        let d = diagnose(&kb, &no_launch_demo(), &Answers::new(), &[], Mode::Failures);
        let waiting = |d: &Diagnosis| -> Vec<String> {
            d.pending()
                .filter_map(|w| match &w.outcome {
                    Outcome::NeedsAnswer { node, .. } => Some(node.clone()),
                    _ => None,
                })
                .collect()
        };
        let all = waiting(&d);
        for n in ["dg_fp8_model", "fp8_model", "ct_dsa_model", "bc_dsa"] {
            assert!(all.contains(&n.to_string()), "{all:?}");
        }
        let open: Vec<&str> = d
            .open_questions()
            .filter_map(|w| match &w.outcome {
                Outcome::NeedsAnswer { node, .. } => Some(node.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(open.len(), all.len() - 2, "{open:?}");
        let later = d
            .pending()
            .find(
                |w| matches!(&w.outcome, Outcome::NeedsAnswer { node, .. } if node == "fp8_model"),
            )
            .expect("fp8 tuning waits");
        assert_eq!(
            d.asked_before(later),
            Some(("deepgemm_warmup", "dg_fp8_model"))
        );
        // One answer, to either node, decides both walks.
        let answers: Answers = [("fp8_model".to_string(), Answer::No)].into();
        let d = diagnose(&kb, &no_launch_demo(), &answers, &[], Mode::Failures);
        let left = waiting(&d);
        assert!(!left.contains(&"dg_fp8_model".to_string()), "{left:?}");
        assert!(!left.contains(&"fp8_model".to_string()), "{left:?}");
        let step = d
            .walks
            .iter()
            .flat_map(|w| &w.steps)
            .find(|s| s.node == "dg_fp8_model")
            .expect("decided by the shared answer");
        assert_eq!((step.answer, step.basis), (Answer::No, Basis::Answered));
        assert_eq!(d.answers_set_aside().count(), 0);
    }

    #[test]
    fn a_question_that_follows_another_open_one_is_asked_after_it() {
        let kb = kb();
        let read = answers_read(&kb);
        assert!(
            read["p2p_applies"].contains(&"aipc_tp".to_string()),
            "{read:?}"
        );
        // A one-GPU collect-env paste with no launch: the allocator walk asks "TP > 1?" and
        // p2p_applies reads that answer, so only the first is open.
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/tui/h200-torch-collect-env-expandable.txt"),
        )
        .expect("fixture");
        let snap = crate::import::collect_env::parse("h200.txt", &text).expect("collect-env");
        let answers: Answers = [("aipc_expandable".to_string(), Answer::Yes)].into();
        let d = diagnose(&kb, &snap, &answers, &[], Mode::Failures);
        let waits_at = |d: &Diagnosis, n: &str| {
            d.pending()
                .find(|w| matches!(&w.outcome, Outcome::NeedsAnswer { node, .. } if node == n))
                .cloned()
        };
        let p2p = waits_at(&d, "p2p_applies").expect("p2p_fabric waits at p2p_applies");
        assert!(waits_at(&d, "aipc_tp").is_some());
        assert_eq!(
            d.follows_open_question(&p2p),
            Some(("allocator_ipc", "aipc_tp"))
        );
        let open: Vec<&str> = d
            .open_questions()
            .filter_map(|w| match &w.outcome {
                Outcome::NeedsAnswer { node, .. } => Some(node.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            open.contains(&"aipc_tp") && !open.contains(&"p2p_applies"),
            "{open:?}"
        );
        // The one answer decides the follower too.
        let answers: Answers = [
            ("aipc_expandable".to_string(), Answer::Yes),
            ("aipc_tp".to_string(), Answer::Yes),
        ]
        .into();
        let d = diagnose(&kb, &snap, &answers, &[], Mode::Failures);
        assert!(waits_at(&d, "p2p_applies").is_none());
    }

    use classify::run_signs::{
        FailureKind, FailureLine, Hang, HangKind, Milestone, MilestoneLine, Phase, RunSigns,
    };

    fn a_log(text: &str) -> Vec<LogText> {
        vec![LogText {
            name: "run.log".into(),
            text: text.into(),
        }]
    }

    fn failing_run() -> RunSigns {
        RunSigns {
            failures: vec![FailureLine {
                kind: FailureKind::Exception,
                file: "run.log".into(),
                line: 42,
                text: "RuntimeError: something nobody has seen".into(),
                phase: Some(Phase::Profile),
                frames: vec![
                    "File \"x.py\", line 3, in load".into(),
                    "File \"y.py\", line 9, in run".into(),
                ],
                explained_by: None,
                traceback_from: Some(39),
                consequence: false,
            }],
            last_phase: Some(Phase::Profile),
            ..RunSigns::default()
        }
    }

    #[test]
    fn a_failure_no_class_explains_is_an_error_finding_with_its_lines() {
        let kb = kb();
        let d = diagnose_classified(
            &kb,
            &host(None),
            &Answers::new(),
            &a_log("nothing a signature knows\n"),
            Mode::Failures,
            |c| c.run = failing_run(),
        );
        let f = d
            .findings
            .iter()
            .find(|f| f.severity == Severity::Error && f.state == CheckState::Problem)
            .expect("an error finding");
        assert!(f.title.0.contains("does not recognise"), "{}", f.title);
        let ev = joined_evidence(f);
        assert!(
            ev.contains("line 42: RuntimeError: something nobody has seen"),
            "{ev}"
        );
        assert!(ev.contains("in load → File"), "{ev}");
        assert!(ev.contains("memory profiling"), "{ev}");
        assert_eq!(f.log_lines.len(), 1);
        assert_eq!(f.log_lines[0].line, 42);
        // `check` exits 1 on it.
        assert!(d.needs_attention());
    }

    /// A finding's evidence lines as one string, for `contains` checks.
    fn joined_evidence(f: &Finding) -> String {
        f.evidence
            .iter()
            .map(|e| e.0.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    }

    #[test]
    fn a_hang_is_worded_as_a_hang() {
        let kb = kb();
        let d = diagnose_classified(
            &kb,
            &host(None),
            &Answers::new(),
            &a_log("x\n"),
            Mode::Failures,
            |c| {
                c.run = RunSigns {
                    hang: Some(Hang {
                        kind: HangKind::StallWarnings,
                        file: "run.log".into(),
                        last_progress_line: Some(17),
                        last_progress_text: "Capturing CUDA graphs (decode, FULL): 40%".into(),
                        stall_line: Some(18),
                        stall_count: 12,
                        interrupt_line: None,
                        phase: Some(Phase::GraphCapture),
                    }),
                    ..RunSigns::default()
                }
            },
        );
        let f = d
            .findings
            .iter()
            .find(|f| f.severity == Severity::Error)
            .expect("the hang is an error");
        let ev = joined_evidence(f);
        assert!(
            ev.contains("stops during graph capture after line 17 (Capturing CUDA graphs"),
            "{ev}"
        );
        assert!(ev.contains("12 stall warning(s) follow"), "{ev}");
        assert_eq!(f.log_lines.first().map(|l| l.line), Some(17));
    }

    #[test]
    fn no_failure_in_the_run_signs_is_no_error_and_no_log_is_not_checked() {
        let kb = kb();
        let unrecognized = |log: &str| {
            let d = diagnose(
                &kb,
                &host(None),
                &Answers::new(),
                &a_log(log),
                Mode::Failures,
            );
            let f = d
                .findings
                .iter()
                .find(|f| f.class == "unrecognized_failure")
                .expect("walked")
                .clone();
            (f, d.undetermined())
        };
        // A log that shows the run came up passes.
        let (came_up, undetermined) = unrecognized("INFO:     Application startup complete.\n");
        assert_eq!(came_up.state, CheckState::Passed);
        assert!(!undetermined);
        // A log with no failure that does not show the run coming up is not an all-clear: the
        // outcome is not known (check exits 3).
        let (unknown, undetermined) = unrecognized("fine\n");
        assert_eq!(unknown.state, CheckState::NotChecked);
        assert_eq!(unknown.missing, [MissingInput::RunOutcome]);
        assert!(undetermined);
        let d = diagnose(&kb, &host(None), &Answers::new(), &[], Mode::Failures);
        let none = d
            .findings
            .iter()
            .find(|f| f.class == "unrecognized_failure")
            .expect("walked");
        assert_eq!(none.state, CheckState::NotChecked);
        assert_eq!(none.missing, vec![MissingInput::Log]);
    }

    #[test]
    fn a_failure_a_named_class_explains_is_not_unrecognised() {
        let log = crate::import::demo::LOG;
        let d = diagnose_classified(
            &kb(),
            &crate::import::demo_snapshot(),
            &Answers::new(),
            &a_log(log),
            Mode::Failures,
            |c| c.run = failing_run(),
        );
        assert!(
            !d.findings
                .iter()
                .any(|f| f.title.0.contains("does not recognise")),
            "{:?}",
            d.findings.iter().map(|f| &f.id).collect::<Vec<_>>()
        );
    }

    #[test]
    fn milestones_are_facts_a_walk_can_read() {
        let kb = kb();
        let d = diagnose_classified(
            &kb,
            &host(None),
            &Answers::new(),
            &a_log("x\n"),
            Mode::Failures,
            |c| {
                c.run.milestones = vec![MilestoneLine {
                    milestone: Milestone::GraphCaptureDone,
                    file: "run.log".into(),
                    line: 9,
                    text: "Graph capturing finished".into(),
                }]
            },
        );
        let f = d.facts.get("log.run.reached.graph_capture_done");
        assert_eq!(f.value, Value::Bool(true));
        assert_eq!(f.source, "run.log:9");
        assert_eq!(
            d.facts.get("log.run.reached.startup_complete").value,
            Value::Bool(false)
        );
    }

    /// The allocator/IPC crash prediction (TP=2, expandable_segments, P2P measured, probe
    /// not run) against a log that shows `milestone`.
    fn walk_on(class: &str, fact: &str, value: bool, outcome: Outcome) -> Walk {
        Walk {
            class: class.into(),
            start: "s".into(),
            steps: vec![Step {
                node: "n".into(),
                question: "q".into(),
                answer: bool_answer(value),
                by: AnsweredBy::Auto {
                    facts: vec![UsedFact {
                        name: fact.into(),
                        value: Value::Bool(value),
                        source: "run.log".into(),
                        assumed: false,
                    }],
                },
                why: String::new(),
                basis: Basis::Measured,
                typed_answer: None,
            }],
            outcome,
        }
    }

    #[test]
    fn a_walk_that_went_on_the_hang_explains_it_and_the_unrecognized_walk_does_not() {
        let kb = kb();
        let waiting = Outcome::NeedsAnswer {
            node: "p2p_hang_fabric".into(),
            question: "q".into(),
            hint: Prose::default(),
            reason: "r".into(),
            yes_label: "yes".into(),
            no_label: "no".into(),
            can_be_unsure: false,
        };
        let concluded = |c: &str| Outcome::Concluded {
            conclusion: c.into(),
        };
        // Waiting for its cause, or at a problem: the hang is explained by the class.
        for outcome in [waiting.clone(), concluded("p2p_hang_unconfirmed")] {
            let w = walk_on("p2p_fabric", "log.run.hang", true, outcome);
            assert_eq!(
                explained_run_signs(&kb, &[w]),
                [(Explained::Hang, "p2p_fabric".to_string())]
            );
        }
        // A pass, a false fact, or the unrecognized class's own walk explain nothing.
        let none: [Walk; 3] = [
            walk_on(
                "p2p_fabric",
                "log.run.hang",
                true,
                concluded("p2p_not_applicable"),
            ),
            walk_on("p2p_fabric", "log.run.hang", false, waiting),
            walk_on(
                "unrecognized_failure",
                "log.run.unrecognized_hang",
                true,
                concluded("unrecognized_hang"),
            ),
        ];
        for w in none {
            assert!(
                explained_run_signs(&kb, std::slice::from_ref(&w)).is_empty(),
                "{w:?}"
            );
        }
    }

    fn prediction_against(log: &str, milestone: Option<Milestone>) -> Diagnosis {
        let mut snap = host(Some("vllm serve Qwen/Qwen3.6-27B-FP8 -tp 2"));
        snap.gpu_pairs = Probed::Value(vec![crate::snapshot::GpuPair {
            a: 0,
            b: 1,
            topology: Probed::Value("NV4".into()),
            p2p: Probed::Value(true),
            nvlink: Probed::Value(true),
        }]);
        diagnose_classified(
            &kb(),
            &snap,
            &Answers::new(),
            &a_log(log),
            Mode::Failures,
            |c| {
                if let Some(m) = milestone {
                    c.run.milestones = vec![MilestoneLine {
                        milestone: m,
                        file: "run.log".into(),
                        line: 12,
                        text: "Graph capturing finished in 22 secs".into(),
                    }];
                }
            },
        )
    }

    const ENGINE_LINE: &str = "INFO [core.py:93] Initializing a V1 LLM engine (v0.24.0) with config: model='Qwen/Qwen3.6-27B-FP8', tensor_parallel_size=2\n";

    fn crash_prediction(d: &Diagnosis) -> &Finding {
        d.findings
            .iter()
            .find(|f| f.id == "allocator_ipc_will_crash")
            .expect("predicted")
    }

    #[test]
    fn a_log_past_graph_capture_makes_the_crash_prediction_a_warning() {
        let d = prediction_against(ENGINE_LINE, None);
        assert_eq!(crash_prediction(&d).severity, Severity::Error);
        assert!(crash_prediction(&d).refuted.is_none());
        let d = prediction_against(ENGINE_LINE, Some(Milestone::GraphCaptureDone));
        let f = crash_prediction(&d);
        assert_eq!(f.severity, Severity::Warning);
        let r = f.refuted.as_ref().expect("refuted");
        assert_eq!((r.line, r.same.clone()), (12, vec!["model", "tp"]));
        assert!(
            f.evidence[0]
                .0
                .contains("got past graph capture at run.log:12"),
            "{}",
            f.evidence[0]
        );
        // A milestone the conclusion does not name leaves it as it is.
        let d = prediction_against(ENGINE_LINE, Some(Milestone::WeightsLoaded));
        assert_eq!(crash_prediction(&d).severity, Severity::Error);
    }

    #[test]
    fn a_log_of_another_model_or_tp_does_not_refute() {
        let other = ENGINE_LINE.replace("tensor_parallel_size=2", "tensor_parallel_size=1");
        let d = prediction_against(&other, Some(Milestone::GraphCaptureDone));
        assert_eq!(crash_prediction(&d).severity, Severity::Error);
        let other = ENGINE_LINE.replace("Qwen3.6-27B-FP8", "Other-Model");
        let d = prediction_against(&other, Some(Milestone::GraphCaptureDone));
        assert_eq!(crash_prediction(&d).severity, Severity::Error);
    }

    #[test]
    fn a_named_failure_whose_walk_waits_is_still_a_finding() {
        // No launch: the FP8 tuning walk waits at "Is the model FP8 block-quantised?"; the
        // classifier is made to name its class from a line of the log.
        let d = diagnose_classified(
            &kb(),
            &no_launch_demo(),
            &Answers::new(),
            &a_log("a line\n"),
            Mode::Failures,
            |c| {
                c.confidence
                    .insert("fp8_tuning".into(), classify::MatchConfidence::Suspected);
                c.classes.push("fp8_tuning".into());
                c.matches.push(classify::LogMatch {
                    class: "fp8_tuning".into(),
                    signature: "s".into(),
                    kind: crate::kb::schema::SignatureKind::Error,
                    file: "run.log".into(),
                    line: 1,
                    text: "a line".into(),
                    repeats_left_out: 0,
                });
            },
        );
        assert!(
            d.pending_but_seen_in_logs()
                .any(|w| w.class == "fp8_tuning")
        );
        let f = d
            .findings
            .iter()
            .find(|f| f.class == "fp8_tuning" && f.confidence == Confidence::Suspected)
            .expect("the waiting class is a finding");
        assert_eq!(
            (f.severity, f.state),
            (Severity::Error, CheckState::Problem)
        );
        assert_eq!(f.log_lines.len(), 1);
        assert!(
            f.evidence[0].0.contains("waits for an answer"),
            "{}",
            f.evidence[0]
        );
    }

    #[test]
    fn a_one_gpu_paste_does_not_decide_tp_against_the_answer() {
        // The demo's host seen through one GPU (a paste need not be the whole host), no launch.
        let mut snap = no_launch_demo();
        if let Probed::Value(g) = &mut snap.gpus {
            g.truncate(1);
        }
        let applies = |d: &Diagnosis| {
            d.walks
                .iter()
                .flat_map(|w| &w.steps)
                .find(|s| s.node == "p2p_applies")
                .map(|s| s.answer)
        };
        let d = diagnose(&kb(), &snap, &answers(Answer::Yes), &[], Mode::Failures);
        assert_eq!(applies(&d), Some(Answer::Yes), "TP > 1 answered yes");
        let d = diagnose(&kb(), &snap, &answers(Answer::No), &[], Mode::Failures);
        assert_eq!(applies(&d), Some(Answer::No));
    }

    #[test]
    fn logs_are_named_by_how_they_came() {
        assert_eq!(log_label(PASTED_LOG), "log pasted in the TUI");
        assert_eq!(
            log_label("demo:seed_crash.log"),
            "the demo's log (demo:seed_crash.log)"
        );
        assert_eq!(log_label("/tmp/x.log"), "log file /tmp/x.log");
    }
}
