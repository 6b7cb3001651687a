//! A walk's conclusion as a finding: the conclusion's words filled from the facts, its state
//! (passed or not checked, from what the walk rested on), remedies, log lines and the facts
//! used; and the finding for a class the logs point at whose walk waits for an answer.

use super::{
    AnsweredBy, Basis, CheckState, EvalContext, Finding, Outcome, RemedyView, Walk, classify,
    classify::Classification, fill, run_facts, state_of, walk_saw_run_sign,
};
use crate::kb::schema::{Confidence, Severity};
use crate::kb::{Class, KnowledgeBase};
use crate::value::Prose;

pub(super) fn finding(
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
    let mut log_lines: Vec<classify::LogMatch> = ctx
        .classification
        .matches
        .iter()
        .filter(|m| m.class == class.id())
        .cloned()
        .collect();
    // A finding the run signs decided (a failure or hang the log shows) quotes their lines.
    if log_lines.is_empty() && walk_saw_run_sign(walk) {
        log_lines = run_facts::quoted_lines(class.id(), &ctx.classification.run);
    }
    let answered: Vec<String> = walk
        .steps
        .iter()
        .filter(|s| s.basis == Basis::Answered)
        .map(|s| s.node.clone())
        .collect();
    // Assumptions that stand in for a measurement of the host (the probe not run) weaken the
    // match; a log not given only means nothing was seen there.
    let mut assumed: Vec<String> = Vec::new();
    let mut assumptions: Vec<String> = Vec::new();
    for s in walk.steps.iter().filter(|s| s.basis == Basis::Assumed) {
        if let AnsweredBy::Auto { facts } = &s.by {
            for f in facts.iter().filter(|f| f.assumed) {
                if !ctx.facts.get(&f.name).about_host {
                    continue;
                }
                if !assumed.contains(&s.node) {
                    assumed.push(s.node.clone());
                }
                if !assumptions.contains(&f.source) {
                    assumptions.push(f.source.clone());
                }
            }
        }
    }
    // The user's own answers carry a finding before the assumptions that stand for missing
    // measurements do: "answered by you" is what the user has to check first.
    let matched = if !answered.is_empty() {
        Basis::Answered
    } else if !assumed.is_empty() {
        Basis::Assumed
    } else {
        Basis::Measured
    };
    let title = match (&c.title_unmeasured, matched) {
        (Some(t), Basis::Answered | Basis::Assumed) => t.clone(),
        _ => c.title.clone(),
    };
    let (state, missing) = state_of(c.state(), &c.missing, walk, ctx.facts);
    Finding {
        id: c.id.value.clone(),
        class: class.id().into(),
        severity: c.severity,
        state,
        missing,
        confidence: c.confidence,
        matched,
        answered,
        assumed,
        assumptions,
        contradicted: walk
            .steps
            .iter()
            .filter_map(|s| s.contradiction().map(str::to_string))
            .collect(),
        title: Prose(title),
        evidence: c
            .evidence
            .iter()
            .map(|e| Prose(fill(&e.value, ctx.facts)))
            .collect(),
        sources: c.sources.clone(),
        remedies,
        does_not_fix: c.does_not_fix.clone(),
        contradictions: c.contradictions.clone(),
        facts_used,
        log_lines,
        versions: Vec::new(),
        refuted: None,
        run_differs: Vec::new(),
        explains: Vec::new(),
    }
}

/// The finding for a class the logs name while its walk waits at `walk`'s question: the
/// class's own title, the matched lines, and the open question as the thing to settle. Its id
/// is the class and the node it waits at.
pub(super) fn seen_but_open(class: &Class, walk: &Walk, c: &Classification) -> Finding {
    let (node, question) = match &walk.outcome {
        Outcome::NeedsAnswer { node, question, .. } => (node.as_str(), question.as_str()),
        Outcome::Concluded { conclusion } => (conclusion.as_str(), ""),
    };
    let mut log_lines: Vec<classify::LogMatch> = c
        .matches
        .iter()
        .filter(|m| m.class == class.id())
        .cloned()
        .collect();
    // Seen through the run signs (a hang, a failure line), not a signature: quote those.
    if log_lines.is_empty() && walk_saw_run_sign(walk) {
        log_lines = run_facts::quoted_lines(class.id(), &c.run);
    }
    Finding {
        id: format!("{}:{node}", class.id()),
        class: class.id().into(),
        severity: Severity::Error,
        state: CheckState::Problem,
        missing: Vec::new(),
        confidence: Confidence::Suspected,
        matched: Basis::Measured,
        answered: Vec::new(),
        assumed: Vec::new(),
        assumptions: Vec::new(),
        contradicted: Vec::new(),
        title: Prose(class.def.title.clone()),
        evidence: vec![
            Prose(format!(
                "The given logs show this failure ({} matching line(s)); its cause waits for an answer: {question}",
                log_lines.len()
            )),
            Prose(class.def.summary.clone()),
        ],
        sources: class
            .def
            .signatures
            .iter()
            .flat_map(|s| s.sources.iter().cloned())
            .take(3)
            .collect(),
        remedies: Vec::new(),
        does_not_fix: Vec::new(),
        contradictions: Vec::new(),
        facts_used: Vec::new(),
        log_lines,
        versions: Vec::new(),
        refuted: None,
        run_differs: Vec::new(),
        explains: Vec::new(),
    }
}
